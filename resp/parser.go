// Package resp reads client requests (RESP multibulk and inline commands) and
// writes replies in RESP2 or RESP3, with Redis's limits and error texts.
package resp

import (
	"bytes"

	"github.com/keyhive/keyhive/internal/strnum"
)

// Limits Redis applies while reading requests.
const (
	InlineMax           = 64 * 1024 // longest inline request or length line
	UnauthMultibulkMax  = 10        // arguments allowed before AUTH
	UnauthBulkMax       = 16 * 1024 // bulk length allowed before AUTH
	maxMultibulkLen     = 1<<31 - 1
	preallocatedArgsCap = 1024 // never trust a client's count beyond this up front
)

// ProtocolError is a malformed request. Redis replies with it and then closes the
// connection.
type ProtocolError string

func (e ProtocolError) Error() string { return "ERR Protocol error: " + string(e) }

// Parser reads one command at a time from the unconsumed part of a connection's
// read buffer. A multibulk command that arrives over many reads is parsed
// incrementally: argument positions are kept relative to the command's start, so
// the caller may move or grow the buffer between calls.
type Parser struct {
	// Args holds the last parsed command; the slices point into the buffer given
	// to Parse and are valid until the buffer is modified.
	Args [][]byte
	// MaxBulk is proto-max-bulk-len.
	MaxBulk int64
	// Unauthenticated applies the tight pre-AUTH limits.
	Unauthenticated bool

	pending int   // arguments still expected by the multibulk in progress (0: none)
	pos     int   // parse position relative to the command's start
	spans   []int // start, end pairs of the arguments parsed so far
	need    int   // bytes the command needs in total, when known
}

// Need reports how many buffered bytes the command in progress needs, when the
// parser knows (a bulk length was read); 0 otherwise. Callers grow their buffer
// to it so that a large value is read with few copies.
func (p *Parser) Need() int { return p.need }

// Reset drops any command in progress.
func (p *Parser) Reset() { p.pending, p.pos, p.spans, p.need = 0, 0, p.spans[:0], 0 }

// Parse parses the next command from buf, which must start where the previous
// complete command ended. It returns the number of bytes consumed; n == 0 with a
// nil error means more data is needed. n > 0 with len(Args) == 0 is an empty
// command, which callers skip.
func (p *Parser) Parse(buf []byte) (n int, err error) {
	p.Args = p.Args[:0]
	if p.pending == 0 {
		if len(buf) == 0 {
			return 0, nil
		}
		if buf[0] != '*' {
			return p.parseInline(buf)
		}
		n, err := p.startMultibulk(buf)
		if n != 0 || err != nil || p.pending == 0 {
			return n, err
		}
	}
	for p.pending > 0 {
		rest := buf[p.pos:]
		if len(rest) == 0 {
			return 0, nil
		}
		size, line, ok := shortLength(rest, '$')
		if !ok {
			// Like Redis, the line must be complete before its first byte
			// is checked: "*1\r\nx" waits for more data.
			line, ok, err = lengthLine(rest, "too big bulk count string")
			if !ok {
				return 0, err
			}
			if rest[0] != '$' {
				return 0, ProtocolError("expected '$', got '" + string(rest[0]) + "'")
			}
			size, ok = strnum.ParseInt(rest[1:line])
			if !ok || size < 0 {
				return 0, ProtocolError("invalid bulk length")
			}
		}
		if size > p.MaxBulk {
			return 0, ProtocolError("invalid bulk length")
		}
		if p.Unauthenticated && size > UnauthBulkMax {
			return 0, ProtocolError("unauthenticated bulk length")
		}
		start := p.pos + line + 2
		end := start + int(size)
		if end+2 > len(buf) {
			p.need = end + 2
			return 0, nil
		}
		p.spans = append(p.spans, start, end)
		p.pos = end + 2
		p.pending--
	}
	for i := 0; i < len(p.spans); i += 2 {
		p.Args = append(p.Args, buf[p.spans[i]:p.spans[i+1]])
	}
	n = p.pos
	p.Reset()
	return n, nil
}

// startMultibulk reads the "*<count>\r\n" line. It consumes an empty or negative
// multibulk whole.
func (p *Parser) startMultibulk(buf []byte) (int, error) {
	count, line, ok := shortLength(buf, '*')
	if !ok {
		var err error
		if line, ok, err = lengthLine(buf, "too big mbulk count string"); !ok {
			return 0, err
		}
		if count, ok = strnum.ParseInt(buf[1:line]); !ok || count > maxMultibulkLen {
			return 0, ProtocolError("invalid multibulk length")
		}
	}
	if p.Unauthenticated && count > UnauthMultibulkMax {
		return 0, ProtocolError("unauthenticated multibulk length")
	}
	if count <= 0 {
		return line + 2, nil
	}
	p.pending = int(count)
	p.pos = line + 2
	if want := 2 * min(int(count), preallocatedArgsCap); cap(p.spans) < want {
		p.spans = make([]int, 0, want)
	}
	return 0, nil
}

// shortLength reads the common "<kind><digits>\r\n" line of up to 9 digits
// without leading zeros in one pass: the length, the index of its '\r', and
// ok. Anything else (incomplete, longer, malformed) is left to the general
// path, which also gives the errors.
func shortLength(buf []byte, kind byte) (n int64, line int, ok bool) {
	if len(buf) < 4 || buf[0] != kind || buf[1] == '0' && buf[2] != '\r' {
		return 0, 0, false
	}
	for i := 1; i < len(buf) && i <= 10; i++ {
		c := buf[i]
		if c == '\r' {
			if i == 1 || i+1 == len(buf) {
				return 0, 0, false
			}
			return n, i, true
		}
		if c < '0' || c > '9' {
			return 0, 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return 0, 0, false
}

// lengthLine finds the '\r' ending a "*N" or "$N" line. Like Redis it needs one
// more byte after the '\r' (the '\n') before the line counts as complete.
func lengthLine(buf []byte, tooBig string) (int, bool, error) {
	limit := min(len(buf), InlineMax+2)
	i := bytes.IndexByte(buf[:limit], '\r')
	if i < 0 || i+1 >= len(buf) {
		if len(buf) > InlineMax {
			return 0, false, ProtocolError(tooBig)
		}
		return 0, false, nil
	}
	return i, true, nil
}

func (p *Parser) parseInline(buf []byte) (int, error) {
	limit := min(len(buf), InlineMax+1)
	nl := bytes.IndexByte(buf[:limit], '\n')
	if nl < 0 {
		if len(buf) > InlineMax {
			return 0, ProtocolError("too big inline request")
		}
		return 0, nil
	}
	line := buf[:nl]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	args, ok := SplitArgs(line, p.Args[:0])
	if !ok {
		return 0, ProtocolError("unbalanced quotes in request")
	}
	p.Args = args
	return nl + 1, nil
}

// SplitArgs splits a line into arguments as Redis does for inline commands
// (sdssplitargs): arguments are separated by whitespace; a "double quoted"
// part may use the escapes \n \r \t \b \a \xHH and \<any char>, a 'single
// quoted' part only \'. A quoted part may follow unquoted characters
// (a"b c" is the one argument `ab c`), and ends the argument: the closing quote
// must be followed by whitespace or the end of the line. It reports false for
// unbalanced quotes. Arguments without quotes point into line; the others are
// fresh copies. (Redis stops at a NUL byte; here it is an ordinary byte.)
func SplitArgs(line []byte, args [][]byte) ([][]byte, bool) {
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i == len(line) {
			return args, true
		}
		start := i
		for i < len(line) && !isWordEnd(line[i]) && line[i] != '"' && line[i] != '\'' {
			i++
		}
		if i == len(line) || isWordEnd(line[i]) {
			args = append(args, line[start:i])
			continue
		}
		arg := append([]byte{}, line[start:i]...)
		arg, i = quoted(line, i, arg)
		if i < 0 {
			return args, false
		}
		args = append(args, arg)
	}
}

// isWordEnd reports whether c ends an unquoted argument. Redis skips any
// isspace() character between arguments, but only these four end one.
func isWordEnd(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

// quoted reads an argument from the quote at line[i] on, appending to arg
// (which holds any unquoted characters before the quote). It returns the
// argument and the index after it, or -1 for unbalanced quotes.
func quoted(line []byte, i int, arg []byte) ([]byte, int) {
	q := line[i]
	i++
	for {
		if i >= len(line) {
			return nil, -1 // unterminated quotes
		}
		c := line[i]
		switch {
		case c == q:
			if i+1 < len(line) && !isSpace(line[i+1]) {
				return nil, -1
			}
			return arg, i + 1
		case q == '"' && c == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]):
			arg = append(arg, unhex(line[i+2])<<4|unhex(line[i+3]))
			i += 4
			continue
		case q == '"' && c == '\\' && i+1 < len(line):
			i++
			c = unescape(line[i])
		case q == '\'' && c == '\\' && i+1 < len(line) && line[i+1] == '\'':
			i++
			c = '\''
		}
		arg = append(arg, c)
		i++
	}
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}
