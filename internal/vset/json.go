package vset

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// A FILTER selector's field read straight from the attributes' JSON text:
// the top-level object is walked key by key, the values of other keys
// skipped (checked as they are), and the field's value converted to an
// expression value. The walk allocates only when a string has escapes.

const maxJSONDepth = 256

// field returns the value of top-level field name in doc.
func (f *Filter) field(doc []byte, name []byte) (value, bool) {
	i := skipSpace(doc, 0)
	if i == len(doc) || doc[i] != '{' {
		return value{}, false
	}
	i = skipSpace(doc, i+1)
	if i < len(doc) && doc[i] == '}' {
		return value{}, false
	}
	for {
		if i == len(doc) || doc[i] != '"' {
			return value{}, false
		}
		key, escaped, end := scanString(doc, i)
		if end < 0 {
			return value{}, false
		}
		if escaped {
			key = f.unescapeJSON(key)
		}
		i = skipSpace(doc, end)
		if i == len(doc) || doc[i] != ':' {
			return value{}, false
		}
		i = skipSpace(doc, i+1)
		if bytes.Equal(key, name) {
			v, _, ok := f.convert(doc, i)
			return v, ok
		}
		if i = skipValue(doc, i, 0); i < 0 {
			return value{}, false
		}
		i = skipSpace(doc, i)
		if i == len(doc) || doc[i] != ',' {
			return value{}, false
		}
		i = skipSpace(doc, i+1)
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanString reads the JSON string at b[i] (a quote): its raw content,
// whether it has escapes, and the index after it (-1: malformed).
func scanString(b []byte, i int) ([]byte, bool, int) {
	escaped := false
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return b[i+1 : j], escaped, j + 1
		}
	}
	return nil, false, -1
}

// unescapeJSON decodes a string's escapes into the filter's buffer.
func (f *Filter) unescapeJSON(raw []byte) []byte {
	start := len(f.buf)
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' || i+1 == len(raw) {
			f.buf = append(f.buf, c)
			continue
		}
		i++
		switch raw[i] {
		case 'u':
			if i+4 < len(raw) {
				if r, err := strconv.ParseUint(string(raw[i+1:i+5]), 16, 32); err == nil {
					f.buf = utf8.AppendRune(f.buf, rune(r))
					i += 4
					continue
				}
			}
			f.buf = append(f.buf, 'u')
		default:
			f.buf = append(f.buf, unescape(raw[i]))
		}
	}
	return f.buf[start:len(f.buf):len(f.buf)]
}

// convert reads the JSON value at b[i] as an expression value; ok false
// for objects, arrays holding anything but numbers and strings, and
// malformed text.
func (f *Filter) convert(b []byte, i int) (value, int, bool) {
	if i == len(b) {
		return value{}, -1, false
	}
	switch c := b[i]; {
	case c == '"':
		s, escaped, end := scanString(b, i)
		if end < 0 {
			return value{}, -1, false
		}
		if escaped {
			s = f.unescapeJSON(s)
		}
		return value{kind: kStr, str: s}, end, true
	case c == '-' || isDigit(c):
		end := numberEnd(b, i)
		n, err := strconv.ParseFloat(string(b[i:end]), 64)
		if err != nil && !isRange(err) {
			return value{}, -1, false
		}
		return value{kind: kNum, num: n}, end, true
	case bytes.HasPrefix(b[i:], []byte("true")):
		return value{kind: kNum, num: 1}, i + 4, true
	case bytes.HasPrefix(b[i:], []byte("false")):
		return value{kind: kNum}, i + 5, true
	case bytes.HasPrefix(b[i:], []byte("null")):
		return value{kind: kNull}, i + 4, true
	case c == '[':
		start := len(f.elems)
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return value{kind: kTuple, tuple: f.elems[start:start]}, i + 1, true
		}
		for {
			if i < len(b) && (b[i] == '[' || b[i] == '{') {
				return value{}, -1, false // only numbers and strings make a tuple
			}
			e, end, ok := f.convert(b, i)
			if !ok || e.kind != kNum && e.kind != kStr {
				return value{}, -1, false
			}
			f.elems = append(f.elems, e)
			i = skipSpace(b, end)
			if i < len(b) && b[i] == ']' {
				return value{kind: kTuple, tuple: f.elems[start:len(f.elems):len(f.elems)]}, i + 1, true
			}
			if i == len(b) || b[i] != ',' {
				return value{}, -1, false
			}
			i = skipSpace(b, i+1)
		}
	}
	return value{}, -1, false
}

func numberEnd(b []byte, i int) int {
	for i < len(b) && (isDigit(b[i]) || b[i] == '-' || b[i] == '+' || b[i] == '.' || b[i]|0x20 == 'e') {
		i++
	}
	return i
}

// skipValue returns the index after the JSON value at b[i], -1 when it is
// malformed or nested deeper than maxJSONDepth.
func skipValue(b []byte, i, depth int) int {
	if i == len(b) || depth > maxJSONDepth {
		return -1
	}
	switch c := b[i]; {
	case c == '"':
		_, _, end := scanString(b, i)
		return end
	case c == '-' || isDigit(c):
		return numberEnd(b, i)
	case bytes.HasPrefix(b[i:], []byte("true")) || bytes.HasPrefix(b[i:], []byte("null")):
		return i + 4
	case bytes.HasPrefix(b[i:], []byte("false")):
		return i + 5
	case c == '[' || c == '{':
		closer := byte(']')
		if c == '{' {
			closer = '}'
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == closer {
			return i + 1
		}
		for {
			if c == '{' {
				if i == len(b) || b[i] != '"' {
					return -1
				}
				if _, _, i = scanString(b, i); i < 0 {
					return -1
				}
				if i = skipSpace(b, i); i == len(b) || b[i] != ':' {
					return -1
				}
				i = skipSpace(b, i+1)
			}
			if i = skipValue(b, i, depth+1); i < 0 {
				return -1
			}
			i = skipSpace(b, i)
			if i < len(b) && b[i] == closer {
				return i + 1
			}
			if i == len(b) || b[i] != ',' {
				return -1
			}
			i = skipSpace(b, i+1)
		}
	}
	return -1
}
