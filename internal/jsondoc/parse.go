package jsondoc

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// MaxDepth is how deep arrays and objects may nest in a parsed text.
const MaxDepth = 128

// SyntaxError is a JSON text that does not parse; its message names the
// line and column as RedisJSON's parser reports them.
type SyntaxError struct {
	Msg          string
	Line, Column int
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s at line %d column %d", e.Msg, e.Line, e.Column)
}

type parser struct {
	text  []byte
	pos   int
	depth int
	keys  [][]byte // scratch for duplicate-key checks
}

// Parse appends the stored form of the JSON text to dst. The text is
// strict JSON (RFC 8259): one value, optional whitespace around it, no
// comments or trailing commas. Integers without fraction or exponent that
// fit an int64 stay integers; other numbers are doubles. A repeated key in
// an object keeps its last value, in its first key's place.
func Parse(dst, text []byte) ([]byte, error) {
	p := parser{text: text}
	p.skipSpace()
	dst, err := p.value(dst)
	if err != nil {
		return dst, err
	}
	p.skipSpace()
	if p.pos < len(p.text) {
		return dst, p.errAt("trailing characters", p.pos)
	}
	return dst, nil
}

// errAt reports msg at byte position pos (pointing at the byte, 1-based
// column; at the end of the text, the column of the last byte).
func (p *parser) errAt(msg string, pos int) error {
	line, col := 1, 0
	for i := 0; i < pos && i < len(p.text); i++ {
		if p.text[i] == '\n' {
			line, col = line+1, 0
		} else {
			col++
		}
	}
	if pos < len(p.text) {
		col++
	}
	return &SyntaxError{Msg: msg, Line: line, Column: col}
}

func (p *parser) eof(what string) error {
	return p.errAt("EOF while parsing "+what, len(p.text))
}

func (p *parser) skipSpace() {
	for p.pos < len(p.text) {
		switch p.text[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(dst []byte) ([]byte, error) {
	if p.pos >= len(p.text) {
		return dst, p.eof("a value")
	}
	switch c := p.text[p.pos]; {
	case c == '{':
		return p.object(dst)
	case c == '[':
		return p.array(dst)
	case c == '"':
		return p.string(dst, false)
	case c == '-' || c >= '0' && c <= '9':
		return p.number(dst)
	case c == 't':
		return p.literal(dst, "true", tagTrue)
	case c == 'f':
		return p.literal(dst, "false", tagFalse)
	case c == 'n':
		return p.literal(dst, "null", tagNull)
	}
	return dst, p.errAt("expected value", p.pos)
}

func (p *parser) literal(dst []byte, word string, tag byte) ([]byte, error) {
	for i := 0; i < len(word); i++ {
		if p.pos >= len(p.text) {
			return dst, p.eof("a value")
		}
		if p.text[p.pos] != word[i] {
			return dst, p.errAt("expected ident", p.pos)
		}
		p.pos++
	}
	return append(dst, tag), nil
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > MaxDepth {
		return p.errAt("recursion limit exceeded", p.pos)
	}
	return nil
}

func (p *parser) array(dst []byte) ([]byte, error) {
	if err := p.enter(); err != nil {
		return dst, err
	}
	p.pos++
	dst, start := BeginArray(dst)
	n := 0
	p.skipSpace()
	if p.pos < len(p.text) && p.text[p.pos] == ']' {
		p.pos++
	} else {
		for {
			var err error
			if dst, err = p.value(dst); err != nil {
				return dst, err
			}
			n++
			p.skipSpace()
			if p.pos >= len(p.text) {
				return dst, p.eof("a list")
			}
			if c := p.text[p.pos]; c == ']' {
				p.pos++
				break
			} else if c != ',' {
				return dst, p.errAt("expected `,` or `]`", p.pos)
			}
			p.pos++
			p.skipSpace()
			if p.pos < len(p.text) && p.text[p.pos] == ']' {
				return dst, p.errAt("trailing comma", p.pos)
			}
		}
	}
	p.depth--
	EndContainer(dst, start, n)
	return dst, nil
}

func (p *parser) object(dst []byte) ([]byte, error) {
	if err := p.enter(); err != nil {
		return dst, err
	}
	p.pos++
	dst, start := BeginObject(dst)
	n := 0
	p.skipSpace()
	if p.pos < len(p.text) && p.text[p.pos] == '}' {
		p.pos++
	} else {
		for {
			if p.pos >= len(p.text) {
				return dst, p.eof("an object")
			}
			if p.text[p.pos] != '"' {
				return dst, p.errAt("key must be a string", p.pos)
			}
			keyAt := len(dst)
			var err error
			if dst, err = p.string(dst, true); err != nil {
				return dst, err
			}
			p.skipSpace()
			if p.pos >= len(p.text) {
				return dst, p.eof("an object")
			}
			if p.text[p.pos] != ':' {
				return dst, p.errAt("expected `:`", p.pos)
			}
			p.pos++
			p.skipSpace()
			if dst, err = p.value(dst); err != nil {
				return dst, err
			}
			if dup := p.duplicate(dst, start, keyAt); dup >= 0 {
				dst = replaceDuplicate(dst, dup, keyAt)
			} else {
				n++
			}
			p.skipSpace()
			if p.pos >= len(p.text) {
				return dst, p.eof("an object")
			}
			if c := p.text[p.pos]; c == '}' {
				p.pos++
				break
			} else if c != ',' {
				return dst, p.errAt("expected `,` or `}`", p.pos)
			}
			p.pos++
			p.skipSpace()
			if p.pos < len(p.text) && p.text[p.pos] == '}' {
				return dst, p.errAt("trailing comma", p.pos)
			}
		}
	}
	p.depth--
	EndContainer(dst, start, n)
	return dst, nil
}

// duplicate returns the position of an earlier member of the object begun
// at start with the key of the member just parsed at keyAt, or -1.
func (p *parser) duplicate(dst []byte, start, keyAt int) int {
	key, _ := Member(dst, keyAt)
	for q := start + HeaderSize; q < keyAt; {
		k, v := Member(dst, q)
		if string(k) == string(key) {
			return q
		}
		q = v + Size(dst, v)
	}
	return -1
}

// replaceDuplicate puts the value of the last member (at keyAt) in place of
// the earlier member's value at dup, and drops the last member.
func replaceDuplicate(dst []byte, dup, keyAt int) []byte {
	_, oldV := Member(dst, dup)
	oldEnd := oldV + Size(dst, oldV)
	_, newV := Member(dst, keyAt)
	value := append([]byte(nil), dst[newV:]...)
	tail := append([]byte(nil), dst[oldEnd:keyAt]...)
	dst = append(dst[:oldV], value...)
	return append(dst, tail...)
}

// string parses a string literal, appending it as a value, or as a member
// key when key is set.
func (p *parser) string(dst []byte, key bool) ([]byte, error) {
	p.pos++
	start := p.pos
	plain := true
	for {
		if p.pos >= len(p.text) {
			return dst, p.eof("a string")
		}
		c := p.text[p.pos]
		if c == '"' {
			break
		}
		if c < 0x20 {
			return dst, p.errAt("control character (\\u0000-\\u001F) found while parsing a string", p.pos)
		}
		if c == '\\' {
			plain = false
			p.pos++
		}
		p.pos++
	}
	raw := p.text[start:p.pos]
	p.pos++
	s := raw
	if !plain {
		var err error
		if s, err = p.unescape(raw, start); err != nil {
			return dst, err
		}
	}
	if !utf8.Valid(s) {
		return dst, p.errAt("invalid unicode code point", start)
	}
	if key {
		return AppendKey(dst, s), nil
	}
	return AppendString(dst, s), nil
}

func (p *parser) unescape(raw []byte, at int) ([]byte, error) {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		switch raw[i] {
		case '"', '\\', '/':
			out = append(out, raw[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(raw, i+1)
			if !ok {
				return nil, p.errAt("invalid escape", at+i)
			}
			i += 4
			if r >= 0xD800 && r < 0xDC00 {
				lo, ok := rune(0), false
				if i+2 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
					lo, ok = hex4(raw, i+3)
				}
				if !ok || lo < 0xDC00 || lo > 0xDFFF {
					return nil, p.errAt("lone leading surrogate in hex escape", at+i)
				}
				i += 6
				r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
			} else if r >= 0xDC00 && r < 0xE000 {
				return nil, p.errAt("lone leading surrogate in hex escape", at+i)
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, p.errAt("invalid escape", at+i)
		}
	}
	return out, nil
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

func (p *parser) number(dst []byte) ([]byte, error) {
	start := p.pos
	t := p.text
	if t[p.pos] == '-' {
		p.pos++
	}
	digits := func() int {
		n := 0
		for p.pos < len(t) && t[p.pos] >= '0' && t[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.pos >= len(t) {
		return dst, p.eof("a value")
	}
	if t[p.pos] == '0' {
		p.pos++
		if p.pos < len(t) && t[p.pos] >= '0' && t[p.pos] <= '9' {
			return dst, p.errAt("invalid number", p.pos)
		}
	} else if digits() == 0 {
		return dst, p.errAt("invalid number", p.pos)
	}
	integer := true
	if p.pos < len(t) && t[p.pos] == '.' {
		integer = false
		p.pos++
		if digits() == 0 {
			if p.pos >= len(t) {
				return dst, p.eof("a value")
			}
			return dst, p.errAt("invalid number", p.pos)
		}
	}
	if p.pos < len(t) && (t[p.pos] == 'e' || t[p.pos] == 'E') {
		integer = false
		p.pos++
		if p.pos < len(t) && (t[p.pos] == '+' || t[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			if p.pos >= len(t) {
				return dst, p.eof("a value")
			}
			return dst, p.errAt("invalid number", p.pos)
		}
	}
	lit := t[start:p.pos]
	if integer {
		if v, err := strconv.ParseInt(string(lit), 10, 64); err == nil {
			return AppendInt(dst, v), nil
		}
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil || math.IsInf(f, 0) {
		return dst, p.errAt("number out of range", p.pos-1)
	}
	return AppendFloat(dst, f), nil
}
