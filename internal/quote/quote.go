// Package quote writes byte strings the way Redis shows them in its
// config files, AOF manifests and MONITOR lines: in double quotes, with
// backslash escapes for quotes, backslashes and control characters and
// \xHH for any other byte outside printable ASCII, so that Redis's
// argument splitter reads back exactly the same bytes.
package quote

const hexDigits = "0123456789abcdef"

// Append appends s, quoted, to dst.
func Append(dst []byte, s []byte) []byte {
	dst = append(dst, '"')
	for _, c := range s {
		switch c {
		case '\\', '"':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\a':
			dst = append(dst, '\\', 'a')
		case '\b':
			dst = append(dst, '\\', 'b')
		default:
			if c >= 0x20 && c <= 0x7e {
				dst = append(dst, c)
			} else {
				dst = append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
			}
		}
	}
	return append(dst, '"')
}

// String is s quoted.
func String(s string) string { return string(Append(nil, []byte(s))) }
