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

// ManifestError is a manifest that Redis 7 refuses to start with: Reason
// is Redis's message; Line (from 1) and Text (trimmed) are the line it
// names, Line 0 when it names none.
type ManifestError struct {
	Line   int
	Text   string
	Reason string
}

func (e *ManifestError) Error() string {
	if e.Line == 0 {
		return e.Reason
	}
	return fmt.Sprintf("%s at line %d: '%s'", e.Reason, e.Line, e.Text)
}

// manifestMaxLine is the longest manifest line Redis reads, its newline
// excluded.
const manifestMaxLine = 1024

// ParseManifest reads a manifest as Redis 7 does: one file per line as
// key/value pairs (file, seq, type, keys in any case, unknown ones
// ignored, at least those three), lines starting with '#' skipped, every
// line ended by a newline and at most manifestMaxLine long, no blank line,
// at most one base, incremental sequence numbers ascending. A manifest
// with no line is an error; one with comments only lists no file. Errors
// are *ManifestError.
func ParseManifest(r io.Reader) (*Manifest, error) {
	m := &Manifest{}
	br := bufio.NewReader(r)
	var maxSeq int64
	for line := 1; ; line++ {
		chunk, err := readManifestLine(br)
		if err != nil && err != io.EOF {
			return nil, &ManifestError{Reason: "Read AOF manifest failed"}
		}
		if len(chunk) == 0 {
			if line == 1 {
				return nil, &ManifestError{Reason: "Found an empty AOF manifest"}
			}
			return m, nil
		}
		if chunk[0] == '#' {
			continue
		}
		if chunk[len(chunk)-1] != '\n' {
			return nil, &ManifestError{Reason: "The AOF manifest file contains too long line"}
		}
		text := strings.Trim(chunk, " \t\r\n")
		bad := func(reason string) error { return &ManifestError{Line: line, Text: text, Reason: reason} }
		const invalid = "Invalid AOF manifest file format"
		fields, err := splitManifestLine(text)
		if text == "" || err != nil || len(fields) < 6 || len(fields)%2 != 0 {
			return nil, bad(invalid)
		}
		var f AOFFile
		for i := 0; i < len(fields); i += 2 {
			switch v := fields[i+1]; strings.ToLower(fields[i]) {
			case "file":
				if strings.ContainsAny(v, "/\\") {
					return nil, bad("File can't be a path, just a filename")
				}
				f.Name = v
			case "seq":
				f.Seq = leadingInt(v)
			case "type":
				if v != "" {
					f.Type = v[0]
				}
			}
		}
		if f.Name == "" || f.Seq == 0 || f.Type == 0 {
			return nil, bad(invalid)
		}
		switch f.Type {
		case AOFBase:
			if m.Base != nil {
				return nil, bad("Found duplicate base file information")
			}
			m.Base = &f
		case AOFHistory:
			m.History = append(m.History, f)
		case AOFIncremental:
			if f.Seq <= maxSeq {
				return nil, bad("Found a non-monotonic sequence number")
			}
			maxSeq = f.Seq
			m.Incremental = append(m.Incremental, f)
		default:
			return nil, bad("Unknown AOF file type")
		}
	}
}

// readManifestLine reads up to and including the next newline, or
// manifestMaxLine bytes if none comes first, as Redis's fgets does.
func readManifestLine(br *bufio.Reader) (string, error) {
	var b []byte
	for len(b) < manifestMaxLine {
		c, err := br.ReadByte()
		if err != nil {
			return string(b), err
		}
		b = append(b, c)
		if c == '\n' {
			break
		}
	}
	return string(b), nil
}

// leadingInt reads a number as C's atoll: leading blanks, a sign, digits up
// to the first other byte; 0 when there are none.
func leadingInt(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var n int64
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + int64(s[i]-'0')
	}
	if neg {
		return -n
	}
	return n
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
				if i < len(s) && s[i] != ' ' && s[i] != '\t' {
					return nil, errors.New("closing quote not followed by a space")
				}
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

// ReadCommands reads the commands of an AOF file (RESP multibulk arrays;
// lines starting with '#' between them are annotations, skipped) and calls
// fn with each one; args are valid only during the call. It returns the
// offset after the last whole command: with ErrTruncated when the file ends
// inside a command, with a *CorruptError for malformed bytes, or the error
// fn returned.
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
		first, err := br.Peek(1)
		if err == io.EOF {
			return good, nil
		}
		if err == nil && first[0] == '#' {
			// An annotation (aof-timestamp-enabled), skipped as Redis does.
			for {
				line, err := br.ReadSlice('\n')
				off += int64(len(line))
				if err != bufio.ErrBufferFull {
					break
				}
			}
			continue
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
