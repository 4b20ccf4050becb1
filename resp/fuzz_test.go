package resp

import (
	"bytes"
	"testing"
)

// FuzzParser feeds arbitrary bytes to the parser, whole and split in two at
// a point the fuzzer picks: it must never panic and must read the same
// commands (and the same error, or the same unconsumed tail) both ways.
func FuzzParser(f *testing.F) {
	for _, seed := range []string{
		"*1\r\n$4\r\nPING\r\n",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\nGET k\r\n",
		"ECHO \"a b\" 'c\\'d' e\"f g\" \"\\x41\"\r\n\r\n",
		"*0\r\n*-1\r\n*2\r\n$4\r\nECHO\r\n$0\r\n\r\n",
		"*1\r\nx\r\n",
		"*abc\r\n",
		"*1\r\n$-1\r\n",
		"*2\r\n$1\r\na\r\n",
		"*1\rX$4\rYPING\r\n",
		"*11\r\n",
		"*1\r\n$16385\r\n",
		"ECHO \"abc\r\n",
	} {
		f.Add([]byte(seed), uint16(3), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, split uint16, unauth bool) {
		at := int(split) % (len(data) + 1)
		mk := func() *Parser { return &Parser{MaxBulk: 1 << 20, Unauthenticated: unauth} }
		whole := feed(mk(), data)
		parts := feed(mk(), data[:at], data[at:])
		if !equalOutcome(whole, parts) {
			t.Fatalf("split at %d of %q:\n\tsplit: %v\n\twhole: %v", at, data, parts, whole)
		}
		// Three pieces, the middle one a single byte, and byte by byte for
		// short inputs.
		if at < len(data) {
			if three := feed(mk(), data[:at], data[at:at+1], data[at+1:]); !equalOutcome(whole, three) {
				t.Fatalf("three pieces around %d of %q:\n\tgot:   %v\n\twhole: %v", at, data, three, whole)
			}
		}
		if len(data) <= 512 {
			chunks := make([][]byte, len(data))
			for i := range data {
				chunks[i] = data[i : i+1]
			}
			if bytewise := feed(mk(), chunks...); !equalOutcome(whole, bytewise) {
				t.Fatalf("byte by byte %q:\n\tgot:   %v\n\twhole: %v", data, bytewise, whole)
			}
		}
	})
}

// FuzzInline checks that SplitArgs never panics on any line, that the inline
// path of the parser agrees with it, and that arguments quoted the way
// redis-cli prints them read back unchanged.
func FuzzInline(f *testing.F) {
	for _, seed := range []string{
		`SET k "a b"`, `ECHO 'it\'s' "\x41\n" a"b c"`, `"unbalanced`, `a"b`, "\v\f a\vb", `"\"'\\"`, "",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		args, ok := SplitArgs(line, nil)
		if ok {
			for _, a := range args {
				if len(a) > len(line) {
					t.Fatalf("argument %q longer than the line %q", a, line)
				}
			}
		}
		// The parser reads the same arguments from the line plus "\r\n",
		// when the line is one line.
		// (A line starting with '*' is a multibulk header instead.)
		if !bytes.ContainsAny(line, "\n") && len(line) < InlineMax-2 && !bytes.HasPrefix(line, []byte("*")) {
			p := &Parser{MaxBulk: 1 << 20}
			in := append(bytes.Clone(line), '\r', '\n')
			n, err := p.Parse(in)
			switch {
			case !ok:
				if err == nil {
					t.Fatalf("Parse(%q) accepted a line SplitArgs rejects", in)
				}
			case err != nil || n != len(in):
				t.Fatalf("Parse(%q) = %d, %v", in, n, err)
			default:
				if len(p.Args) != len(args) {
					t.Fatalf("Parse(%q) args %q, SplitArgs %q", in, p.Args, args)
				}
				for i := range args {
					if !bytes.Equal(p.Args[i], args[i]) {
						t.Fatalf("Parse(%q) args %q, SplitArgs %q", in, p.Args, args)
					}
				}
			}
		}
		// Round trip: the line's bytes, cut into arguments at spaces and
		// quoted, read back unchanged.
		want := bytes.Split(line, []byte(" "))
		var quotedLine []byte
		for i, a := range want {
			if i > 0 {
				quotedLine = append(quotedLine, ' ')
			}
			quotedLine = append(quotedLine, quoteArg(a)...)
		}
		got, ok := SplitArgs(quotedLine, nil)
		if !ok || len(got) != len(want) {
			t.Fatalf("round trip of %q via %q: %q, %v", want, quotedLine, got, ok)
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("round trip of %q via %q: %q", want, quotedLine, got)
			}
		}
	})
}
