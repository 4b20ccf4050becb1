package persistence

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/keyhive/keyhive/internal/quote"
	"github.com/keyhive/keyhive/internal/strnum"
)

// Redis 7's multi-part append-only file: a directory (appenddirname) holding
// a base file (a snapshot, RDB or commands), incremental files of commands
// written since, and a manifest naming them in order:
//
//	file appendonly.aof.1.base.rdb seq 1 type b
//	file appendonly.aof.1.incr.aof seq 1 type i
//
// History files (type h) are left-overs of a rewrite, to be deleted.

// AOF file types in the manifest.
const (
	AOFBase        = 'b'
	AOFHistory     = 'h'
	AOFIncremental = 'i'
)

// AOFFile is one manifest line.
type AOFFile struct {
	Name string
	Seq  int64
	Type byte
}

// Manifest lists an AOF directory's files: the base first, then the
// incremental files in sequence order, then history files.
type Manifest struct {
	Base        *AOFFile
	Incremental []AOFFile
	History     []AOFFile
}

// Files returns the files to load, in order: the base, then the
// incremental files.
func (m *Manifest) Files() []AOFFile {
	var fs []AOFFile
	if m.Base != nil {
		fs = append(fs, *m.Base)
	}
	return append(fs, m.Incremental...)
}

// Clone returns a copy of m that shares nothing with it (an empty manifest
// for nil).
func (m *Manifest) Clone() *Manifest {
	c := &Manifest{}
	if m == nil {
		return c
	}
	if m.Base != nil {
		b := *m.Base
		c.Base = &b
	}
	c.Incremental = slices.Clone(m.Incremental)
	c.History = slices.Clone(m.History)
	return c
}

// ParseManifest reads a manifest as Redis 7.0 does: one file per line as
// key/value pairs (file, seq, type; unknown keys are ignored), '#' comments,
// at most one base, incremental sequence numbers ascending.
func ParseManifest(r io.Reader) (*Manifest, error) {
	m := &Manifest{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1024), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		fields, err := splitManifestLine(text)
		if err != nil || len(fields)%2 != 0 {
			return nil, fmt.Errorf("invalid AOF manifest line %d: %q", line, text)
		}
		f := AOFFile{Seq: -1}
		for i := 0; i < len(fields); i += 2 {
			switch v := fields[i+1]; fields[i] {
			case "file":
				f.Name = v
			case "seq":
				if f.Seq, err = strconv.ParseInt(v, 10, 64); err != nil || f.Seq < 0 {
					return nil, fmt.Errorf("invalid AOF manifest line %d: bad seq %q", line, v)
				}
			case "type":
				if len(v) != 1 {
					return nil, fmt.Errorf("invalid AOF manifest line %d: bad type %q", line, v)
				}
				f.Type = v[0]
			}
		}
		if f.Name == "" || f.Seq < 0 || strings.ContainsAny(f.Name, "/\\") {
			return nil, fmt.Errorf("invalid AOF manifest line %d: %q", line, text)
		}
		switch f.Type {
		case AOFBase:
			if m.Base != nil {
				return nil, fmt.Errorf("invalid AOF manifest line %d: a second base file", line)
			}
			m.Base = &f
		case AOFIncremental:
			if n := len(m.Incremental); n > 0 && f.Seq <= m.Incremental[n-1].Seq {
				return nil, fmt.Errorf("invalid AOF manifest line %d: incremental files out of order", line)
			}
			m.Incremental = append(m.Incremental, f)
		case AOFHistory:
			m.History = append(m.History, f)
		default:
			return nil, fmt.Errorf("invalid AOF manifest line %d: unknown type %q", line, f.Type)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if m.Base == nil && len(m.Incremental) == 0 {
		return nil, errors.New("invalid AOF manifest: no base or incremental file")
	}
	return m, nil
}

// splitManifestLine splits a line into words; a word may be double-quoted
// with backslash escapes, as Redis writes names with spaces.
func splitManifestLine(s string) ([]string, error) {
	var out []string
	for i := 0; i < len(s); {
		if s[i] == ' ' || s[i] == '\t' {
			i++
			continue
		}
		if s[i] != '"' {
			j := i
			for j < len(s) && s[j] != ' ' && s[j] != '\t' {
				j++
			}
			out = append(out, s[i:j])
			i = j
			continue
		}
		var b strings.Builder
		i++
		for {
			if i >= len(s) {
				return nil, errors.New("unterminated quote")
			}
			c := s[i]
			if c == '"' {
				i++
				break
			}
			if c == '\\' && i+1 < len(s) {
				i++
				switch c = s[i]; c {
				case 'n':
					c = '\n'
				case 'r':
					c = '\r'
				case 't':
					c = '\t'
				case 'a':
					c = '\a'
				case 'b':
					c = '\b'
				case 'x':
					if i+2 < len(s) {
						if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
							c = byte(v)
							i += 2
						}
					}
				}
			}
			b.WriteByte(c)
			i++
		}
		out = append(out, b.String())
	}
	return out, nil
}

// Format writes the manifest as Redis does: base, history, incremental.
func (m *Manifest) Format() []byte {
	var b bytes.Buffer
	line := func(f AOFFile) {
		fmt.Fprintf(&b, "file %s seq %d type %c\n", quoteName(f.Name), f.Seq, f.Type)
	}
	if m.Base != nil {
		line(*m.Base)
	}
	for _, f := range m.History {
		line(f)
	}
	for _, f := range m.Incremental {
		line(f)
	}
	return b.Bytes()
}

// quoteName quotes a file name that needs it as Redis's sdscatrepr does, in
// the escapes splitManifestLine reads.
func quoteName(name string) string {
	plain := name != ""
	for i := 0; i < len(name); i++ {
		if c := name[i]; c <= ' ' || c > '~' || c == '"' || c == '\\' {
			plain = false
		}
	}
	if plain {
		return name
	}
	return quote.String(name)
}

// ErrTruncated is returned by ReadCommands for a file that ends in the
// middle of a command (a crash during a write).
var ErrTruncated = errors.New("truncated")

// CorruptError is a malformed command in an AOF file.
type CorruptError struct {
	Offset int64
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("bad file format reading the append only file at offset %d: %s", e.Offset, e.Reason)
}

// maxAOFBulk bounds one argument, as proto-max-bulk-len bounds a client's.
const maxAOFBulk = 512 << 20

// ReadCommands reads the commands of an AOF file (RESP multibulk arrays) and
// calls fn with each one; args are valid only during the call. It returns
// the offset after the last whole command: with ErrTruncated when the file
// ends inside a command, with a *CorruptError for malformed bytes, or the
// error fn returned.
func ReadCommands(r io.Reader, fn func(args [][]byte) error) (int64, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var off, good int64
	var args [][]byte
	var data []byte
	readLine := func() ([]byte, error) {
		line, err := br.ReadSlice('\n')
		off += int64(len(line))
		if err == io.EOF || err == bufio.ErrBufferFull {
			if err == bufio.ErrBufferFull {
				return nil, &CorruptError{good, "line too long"}
			}
			return nil, ErrTruncated
		}
		if err != nil {
			return nil, err
		}
		if len(line) < 2 || line[len(line)-2] != '\r' {
			return nil, &CorruptError{good, "line not ended by CRLF"}
		}
		return line[:len(line)-2], nil
	}
	for {
		if _, err := br.Peek(1); err == io.EOF {
			return good, nil
		}
		line, err := readLine()
		if err != nil {
			return good, err
		}
		if len(line) == 0 || line[0] != '*' {
			return good, &CorruptError{good, "expected '*'"}
		}
		n, ok := strnum.ParseInt(line[1:])
		if !ok || n < 1 || n > 1<<20 {
			return good, &CorruptError{good, "bad argument count"}
		}
		args, data = args[:0], data[:0]
		ends := make([]int, 0, min(n, 1024))
		for range n {
			line, err := readLine()
			if err != nil {
				return good, err
			}
			if len(line) == 0 || line[0] != '$' {
				return good, &CorruptError{good, "expected '$'"}
			}
			l, ok := strnum.ParseInt(line[1:])
			if !ok || l < 0 || l > maxAOFBulk {
				return good, &CorruptError{good, "bad bulk length"}
			}
			// Read in steps, so a length the file does not back costs nothing.
			for need := int(l) + 2; need > 0; {
				step := min(need, 64<<10)
				start := len(data)
				data = slices.Grow(data, step)[:start+step]
				k, err := io.ReadFull(br, data[start:])
				off += int64(k)
				if err != nil {
					return good, ErrTruncated
				}
				need -= step
			}
			if data[len(data)-2] != '\r' || data[len(data)-1] != '\n' {
				return good, &CorruptError{good, "bulk not ended by CRLF"}
			}
			data = data[:len(data)-2]
			ends = append(ends, len(data))
		}
		start := 0
		for _, end := range ends {
			args = append(args, data[start:end:end])
			start = end
		}
		if err := fn(args); err != nil {
			return good, err
		}
		good = off
	}
}
