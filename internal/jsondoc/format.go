package jsondoc

import (
	"strconv"
)

// Format is JSON.GET's INDENT, NEWLINE and SPACE: the text put before each
// nesting level, after each element, and after a member's colon. The zero
// Format is compact JSON.
type Format struct {
	Indent, Newline, Space []byte
}

func (f *Format) compact() bool {
	return f == nil || len(f.Indent) == 0 && len(f.Newline) == 0 && len(f.Space) == 0
}

// AppendJSON appends the JSON text of the value at off.
func AppendJSON(dst, doc []byte, off int, f *Format) []byte {
	if f.compact() {
		return appendCompact(dst, doc, off)
	}
	return appendPretty(dst, doc, off, f, 0)
}

func appendCompact(dst, doc []byte, off int) []byte {
	switch KindAt(doc, off) {
	case Array:
		dst = append(dst, '[')
		end := End(doc, off)
		for p := First(doc, off); p < end; p += Size(doc, p) {
			if p != First(doc, off) {
				dst = append(dst, ',')
			}
			dst = appendCompact(dst, doc, p)
		}
		return append(dst, ']')
	case Object:
		dst = append(dst, '{')
		end := End(doc, off)
		for p := First(doc, off); p < end; {
			if p != First(doc, off) {
				dst = append(dst, ',')
			}
			k, v := Member(doc, p)
			dst = append(AppendQuoted(dst, k), ':')
			dst = appendCompact(dst, doc, v)
			p = v + Size(doc, v)
		}
		return append(dst, '}')
	}
	return AppendScalar(dst, doc, off)
}

func appendPretty(dst, doc []byte, off int, f *Format, level int) []byte {
	kind := KindAt(doc, off)
	if kind != Array && kind != Object {
		return AppendScalar(dst, doc, off)
	}
	open, close := byte('['), byte(']')
	if kind == Object {
		open, close = '{', '}'
	}
	dst = append(dst, open)
	end := End(doc, off)
	first := First(doc, off)
	if first == end {
		return append(dst, close)
	}
	for p := first; p < end; {
		if p != first {
			dst = append(dst, ',')
		}
		dst = append(dst, f.Newline...)
		for range level + 1 {
			dst = append(dst, f.Indent...)
		}
		v := p
		if kind == Object {
			var k []byte
			k, v = Member(doc, p)
			dst = append(AppendQuoted(dst, k), ':')
			dst = append(dst, f.Space...)
		}
		dst = appendPretty(dst, doc, v, f, level+1)
		p = v + Size(doc, v)
	}
	dst = append(dst, f.Newline...)
	for range level {
		dst = append(dst, f.Indent...)
	}
	return append(dst, close)
}

// AppendScalar appends the JSON text of the scalar at off.
func AppendScalar(dst, doc []byte, off int) []byte {
	switch KindAt(doc, off) {
	case Null:
		return append(dst, "null"...)
	case Bool:
		return strconv.AppendBool(dst, BoolAt(doc, off))
	case Integer:
		return strconv.AppendInt(dst, Int(doc, off), 10)
	case Number:
		return AppendNumber(dst, Float(doc, off))
	case String:
		return AppendQuoted(dst, Str(doc, off))
	}
	return dst
}

// AppendNumber appends a double as RedisJSON prints one: the shortest
// digits that read back to it, always with a fraction or an exponent
// ("3.0", "0.001", "1e-7", "1.5e300"), so it reads back as a double.
func AppendNumber(dst []byte, f float64) []byte {
	var buf [32]byte
	s := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	if s[0] == '-' {
		dst = append(dst, '-')
		s = s[1:]
	}
	if f == 0 {
		return append(dst, "0.0"...)
	}
	// s is d[.ddd]e±xx: the digits, and the exponent of the first one.
	e := 0
	for i := range s {
		if s[i] == 'e' {
			exp, _ := strconv.Atoi(string(s[i+1:]))
			e = exp
			s = s[:i]
			break
		}
	}
	var digitBuf [24]byte
	digits := digitBuf[:0]
	for _, c := range s {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	point := e + 1 // digits before the decimal point
	n := len(digits)
	switch {
	case point >= n && point <= 16:
		dst = append(dst, digits...)
		for range point - n {
			dst = append(dst, '0')
		}
		return append(dst, ".0"...)
	case point > 0 && point <= 16:
		dst = append(dst, digits[:point]...)
		dst = append(dst, '.')
		return append(dst, digits[point:]...)
	case point > -5 && point <= 0:
		dst = append(dst, "0."...)
		for range -point {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	dst = append(dst, digits[0])
	if n > 1 {
		dst = append(dst, '.')
		dst = append(dst, digits[1:]...)
	}
	dst = append(dst, 'e')
	return strconv.AppendInt(dst, int64(e), 10)
}

const hexDigits = "0123456789abcdef"

// AppendQuoted appends s as a JSON string literal: quotes, backslashes and
// control characters escaped, everything else (UTF-8 included) as it is.
func AppendQuoted(dst, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i, c := range s {
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		start = i + 1
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
