package persistence

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/resp"
)

func TestManifestRoundTrip(t *testing.T) {
	in := "file appendonly.aof.3.base.rdb seq 3 type b\n" +
		"file appendonly.aof.1.incr.aof seq 1 type h\n" +
		"file appendonly.aof.4.incr.aof seq 4 type i\n" +
		"file appendonly.aof.5.incr.aof seq 5 type i\n"
	m, err := ParseManifest(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(m.Format()); got != in {
		t.Errorf("format:\n%s\nwant:\n%s", got, in)
	}
	if fs := m.Files(); len(fs) != 3 || fs[0].Name != "appendonly.aof.3.base.rdb" || fs[2].Seq != 5 {
		t.Errorf("files: %+v", fs)
	}
	quoted, err := ParseManifest(strings.NewReader(`file "a b.aof" seq 1 type i` + "\n# comment\n"))
	if err != nil || quoted.Incremental[0].Name != "a b.aof" {
		t.Fatalf("quoted: %+v %v", quoted, err)
	}
	for _, bad := range []string{
		"", "file x seq 1", "file x seq -1 type i", "file x seq 1 type z", "file ../x seq 1 type i",
		"file a seq 1 type b\nfile b seq 2 type b", "file a seq 2 type i\nfile b seq 1 type i", `file "x seq 1 type i`,
	} {
		if _, err := ParseManifest(strings.NewReader(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func TestReadCommands(t *testing.T) {
	var file []byte
	file = resp.AppendCommand(file, [][]byte{[]byte("SELECT"), []byte("0")})
	file = resp.AppendCommand(file, [][]byte{[]byte("SET"), []byte("k"), []byte("a\r\nb")})
	whole := len(file)
	var got []string
	off, err := ReadCommands(bytes.NewReader(file), func(args [][]byte) error {
		got = append(got, string(bytes.Join(args, []byte(" "))))
		return nil
	})
	if err != nil || off != int64(whole) || len(got) != 2 || got[1] != "SET k a\r\nb" {
		t.Fatalf("%q %d %v", got, off, err)
	}
	for cut := 1; cut < whole-len("*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n"); cut++ {
		off, err := ReadCommands(bytes.NewReader(file[:whole-cut]), func([][]byte) error { return nil })
		if !errors.Is(err, ErrTruncated) || off != int64(len("*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n")) {
			t.Errorf("cut %d: %d %v", cut, off, err)
		}
	}
	var ce *CorruptError
	if _, err := ReadCommands(strings.NewReader("*1\r\n$3\r\nfoo\r\nxyz\r\n"), func([][]byte) error { return nil }); !errors.As(err, &ce) || ce.Offset != 13 {
		t.Errorf("corrupt: %v", err)
	}
}

// FuzzReadCommands feeds arbitrary bytes as an AOF: no panic, and what it
// reads up to the returned offset re-encodes to exactly those bytes.
func FuzzReadCommands(f *testing.F) {
	f.Add([]byte("*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"))
	f.Add([]byte("*1\r\n$4\r\nMULTI\r\n*1\r\n$4\r\nEXEC\r\n*2\r\n$3"))
	f.Add([]byte("*-1\r\n"))
	f.Add([]byte("*1\r\n$99999999999\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var re []byte
		off, _ := ReadCommands(bytes.NewReader(data), func(args [][]byte) error {
			re = resp.AppendCommand(re, args)
			return nil
		})
		if off < 0 || off > int64(len(data)) {
			t.Fatalf("offset %d of %d", off, len(data))
		}
		if bytes.Contains(data[:off], []byte("#")) {
			// Annotations between the commands were skipped.
			if len(re) > int(off) {
				t.Fatalf("re-encoded %d bytes of %d read", len(re), off)
			}
			return
		}
		if !bytes.Equal(re, data[:off]) {
			t.Fatalf("re-encoded %q, read %q", re, data[:off])
		}
	})
}

// FuzzManifest: no panic, and an accepted manifest formats to one that
// parses to the same files.
func FuzzManifest(f *testing.F) {
	f.Add("file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n")
	f.Add(`file "a \"b" seq 2 type i`)
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseManifest(strings.NewReader(s))
		if err != nil {
			return
		}
		m2, err := ParseManifest(bytes.NewReader(m.Format()))
		if err != nil {
			t.Fatalf("formatted manifest does not parse: %v\n%s", err, m.Format())
		}
		if !bytes.Equal(m.Format(), m2.Format()) {
			t.Fatalf("round trip changed it:\n%s\n%s", m.Format(), m2.Format())
		}
	})
}

// TestManifestLikeRedis: the manifests Redis 7 refuses, with its reason
// and the line it names (0: none), and what it accepts that looks odd.
func TestManifestLikeRedis(t *testing.T) {
	const b, i = "file a.base seq 1 type b\n", "file a.incr seq 1 type i\n"
	for _, c := range []struct {
		in     string
		line   int
		reason string
	}{
		{"", 0, "Found an empty AOF manifest"},
		{b + "\n" + i, 2, "Invalid AOF manifest file format"},
		{b + "   \n" + i, 2, "Invalid AOF manifest file format"},
		{"file a.incr type i\n", 1, "Invalid AOF manifest file format"},
		{"filx a seq 1 type b\n", 1, "Invalid AOF manifest file format"},
		{"file a seq 1 type b x\n", 1, "Invalid AOF manifest file format"},
		{"file a seq 0 type b\n", 1, "Invalid AOF manifest file format"},
		{"file a seq x type b\n", 1, "Invalid AOF manifest file format"},
		{`file "a seq 1 type b` + "\n", 1, "Invalid AOF manifest file format"},
		{`file "a"b seq 1 type b` + "\n", 1, "Invalid AOF manifest file format"},
		{"file dir/a seq 1 type b\n", 1, "File can't be a path, just a filename"},
		{b + "file c seq 2 type b\n", 2, "Found duplicate base file information"},
		{"file c seq 2 type i\n" + i, 2, "Found a non-monotonic sequence number"},
		{i + "file c seq 1 type i\n", 2, "Found a non-monotonic sequence number"},
		{"file a seq 1 type x\n", 1, "Unknown AOF file type"},
		{b + "file a.incr seq 1 type i", 0, "The AOF manifest file contains too long line"},
		{"file " + strings.Repeat("a", 1010) + " seq 1 type b\n", 0, "The AOF manifest file contains too long line"},
	} {
		_, err := ParseManifest(strings.NewReader(c.in))
		var me *ManifestError
		if !errors.As(err, &me) || me.Line != c.line || me.Reason != c.reason {
			t.Errorf("%q: %v, want line %d %q", c.in, err, c.line, c.reason)
		}
	}
	for in, want := range map[string]string{
		"# only a comment\n":                                    "",
		"FILE a SEQ 1 TYPE b\n":                                 "file a seq 1 type b\n",
		"file a seq 1 type base extra key\n":                    "file a seq 1 type b\n",
		"file a seq 7 type i\n# note\nfile c seq 9 type i\n":    "file a seq 7 type i\nfile c seq 9 type i\n",
		"file " + strings.Repeat("a", 1000) + " seq 1 type b\n": "file " + strings.Repeat("a", 1000) + " seq 1 type b\n",
	} {
		m, err := ParseManifest(strings.NewReader(in))
		if err != nil {
			t.Errorf("%q: %v", in, err)
		} else if got := string(m.Format()); got != want {
			t.Errorf("%q formats to %q, want %q", in, got, want)
		}
	}
}
