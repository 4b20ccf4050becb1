package config

import (
	"errors"
	"strconv"
	"strings"

	"github.com/keyhive/keyhive/internal/quote"
)

var errUnbalanced = errors.New("Unbalanced quotes in configuration line")

// splitArgs splits one configuration line into arguments with the rules of
// Redis's sdssplitargs: whitespace separates, "double quotes" understand
// \n \r \t \b \a \xHH and \<any>, 'single quotes' understand only \', and a
// closing quote must be followed by whitespace or the end of the line.
func splitArgs(line string) ([]string, error) {
	var args []string
	p := 0
	n := len(line)
	for {
		for p < n && isSpace(line[p]) {
			p++
		}
		if p >= n {
			return args, nil
		}
		var cur []byte
		inDQ, inSQ, done := false, false, false
		for !done {
			switch {
			case inDQ:
				if p >= n {
					return nil, errUnbalanced
				}
				c := line[p]
				switch {
				case c == '\\' && p+3 < n && line[p+1] == 'x' && isHex(line[p+2]) && isHex(line[p+3]):
					cur = append(cur, unhex(line[p+2])<<4|unhex(line[p+3]))
					p += 3
				case c == '\\' && p+1 < n:
					p++
					switch e := line[p]; e {
					case 'n':
						cur = append(cur, '\n')
					case 'r':
						cur = append(cur, '\r')
					case 't':
						cur = append(cur, '\t')
					case 'b':
						cur = append(cur, '\b')
					case 'a':
						cur = append(cur, '\a')
					default:
						cur = append(cur, e)
					}
				case c == '"':
					// The closing quote must end the argument.
					if p+1 < n && !isSpace(line[p+1]) {
						return nil, errUnbalanced
					}
					done = true
				default:
					cur = append(cur, c)
				}
			case inSQ:
				if p >= n {
					return nil, errUnbalanced
				}
				c := line[p]
				switch {
				case c == '\\' && p+1 < n && line[p+1] == '\'':
					p++
					cur = append(cur, '\'')
				case c == '\'':
					if p+1 < n && !isSpace(line[p+1]) {
						return nil, errUnbalanced
					}
					done = true
				default:
					cur = append(cur, c)
				}
			default:
				if p >= n {
					done = true
					break
				}
				switch c := line[p]; c {
				case ' ', '\n', '\r', '\t':
					done = true
				case '"':
					inDQ = true
				case '\'':
					inSQ = true
				default:
					cur = append(cur, c)
				}
			}
			if p < n {
				p++
			}
		}
		args = append(args, string(cur))
	}
}

// isSpace is C's isspace in the "C" locale.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// repr quotes s the way Redis writes strings back into a config file, so that
// splitArgs reads back exactly s.
func repr(s string) string { return quote.String(s) }

// quoteIfNeeded leaves plain words alone and quotes anything splitArgs would
// not read back as the same single argument.
func quoteIfNeeded(s string) string {
	if s == "" {
		return `""`
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= 0x20 || c >= 0x7f || c == '"' || c == '\'' || c == '\\' {
			return repr(s)
		}
	}
	return s
}

// parseInt accepts exactly the canonical decimal integers Redis's string2ll
// accepts: no sign other than a leading '-', no leading zeros, no "-0", no
// spaces, and the value must fit in an int64.
func parseInt(s string) (int64, bool) {
	if s == "" || len(s) > 20 {
		return 0, false
	}
	neg := s[0] == '-'
	d := s
	if neg {
		d = s[1:]
	}
	if d == "" || (d[0] == '0' && (len(d) > 1 || neg)) {
		return 0, false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// humanMemory is how CONFIG REWRITE writes byte counts: the largest of gb, mb
// or kb that divides the value exactly, else plain bytes.
func humanMemory(v uint64) string {
	const kb, mb, gb = 1024, 1024 * 1024, 1024 * 1024 * 1024
	switch {
	case v == 0:
		return "0"
	case v%gb == 0:
		return strconv.FormatUint(v/gb, 10) + "gb"
	case v%mb == 0:
		return strconv.FormatUint(v/mb, 10) + "mb"
	case v%kb == 0:
		return strconv.FormatUint(v/kb, 10) + "kb"
	}
	return strconv.FormatUint(v, 10)
}

// splitSpaces splits a CONFIG SET value of a multi-argument directive the way
// Redis does: on every single space, so "" gives no arguments and "a  b" gives
// an empty middle argument.
func splitSpaces(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, " ")
}
