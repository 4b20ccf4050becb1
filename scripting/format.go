package scripting

import (
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// luaFormat is Lua 5.1's string.format: C printf conversions, which Go's fmt
// (used by gopher-lua) does not reproduce for %g, %s of numbers, %q, ...
func luaFormat(L *lua.LState) int {
	format := checkString(L, 1, "format")
	arg := 1
	var out []byte
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			out = append(out, c)
			continue
		}
		i++
		if i < len(format) && format[i] == '%' {
			out = append(out, '%')
			continue
		}
		arg++
		if arg > L.GetTop() { // before the conversion is read, as in Lua
			argError(L, arg, "format", "no value")
		}
		spec, next := scanSpec(L, format, i)
		i = next
		out = appendFormatted(L, out, spec, arg)
		if len(out) > maxStringLen {
			L.RaiseError(errNoMemory)
		}
	}
	L.Push(lua.LString(out))
	return 1
}

type formatSpec struct {
	flags     string
	width     int
	precision int // -1 when absent
	verb      byte
}

// scanSpec reads flags, width and precision as Lua 5.1's scanformat does
// (at most two digits each) and the conversion letter.
func scanSpec(L *lua.LState, f string, i int) (formatSpec, int) {
	spec := formatSpec{precision: -1}
	start := i
	for i < len(f) && strings.IndexByte("-+ #0", f[i]) >= 0 {
		i++
	}
	if i-start > 5 {
		L.RaiseError("invalid format (repeated flags)")
	}
	spec.flags = f[start:i]
	digits := func() int {
		n, d := 0, 0
		for i < len(f) && f[i] >= '0' && f[i] <= '9' {
			n = n*10 + int(f[i]-'0')
			i++
			d++
		}
		if d > 2 {
			L.RaiseError("invalid format (width or precision too long)")
		}
		return n
	}
	spec.width = digits()
	if i < len(f) && f[i] == '.' {
		i++
		spec.precision = digits()
	}
	if i >= len(f) {
		L.RaiseError("invalid option '%s' to 'format'", "%")
	}
	spec.verb = f[i]
	return spec, i
}

func appendFormatted(L *lua.LState, out []byte, spec formatSpec, arg int) []byte {
	switch spec.verb {
	case 'c':
		// C's sprintf result is read as a C string: it ends at a NUL.
		padded := pad(nil, string([]byte{byte(checkInt(L, arg, "format"))}), spec, false)
		if nul := strings.IndexByte(string(padded), 0); nul >= 0 {
			padded = padded[:nul]
		}
		return append(out, padded...)
	case 'd', 'i':
		n := checkInt(L, arg, "format")
		digits := strconv.FormatInt(n, 10)
		sign := ""
		if n < 0 {
			sign, digits = "-", digits[1:]
		} else if strings.Contains(spec.flags, "+") {
			sign = "+"
		} else if strings.Contains(spec.flags, " ") {
			sign = " "
		}
		return padNumber(out, sign, intPrecision(digits, spec.precision), spec)
	case 'o', 'u', 'x', 'X':
		n := uint64(checkInt(L, arg, "format"))
		base := map[byte]int{'o': 8, 'u': 10, 'x': 16, 'X': 16}[spec.verb]
		digits := strconv.FormatUint(n, base)
		if spec.verb == 'X' {
			digits = strings.ToUpper(digits)
		}
		digits = intPrecision(digits, spec.precision)
		prefix := ""
		if strings.Contains(spec.flags, "#") && n != 0 {
			switch spec.verb {
			case 'x':
				prefix = "0x"
			case 'X':
				prefix = "0X"
			case 'o':
				if digits[0] != '0' {
					digits = "0" + digits
				}
			}
		}
		return padNumber(out, prefix, digits, spec)
	case 'e', 'E', 'f', 'g', 'G':
		return padFloat(out, checkNumber(L, arg, "format"), spec)
	case 'q':
		return appendQuoted(out, checkString(L, arg, "format"))
	case 's':
		s := checkString(L, arg, "format")
		if spec.precision >= 0 && spec.precision < len(s) {
			s = s[:spec.precision]
		}
		return pad(out, s, spec, false)
	}
	L.RaiseError("invalid option '%%%c' to 'format'", spec.verb)
	return out
}

func intPrecision(digits string, precision int) string {
	if precision == 0 && digits == "0" {
		return ""
	}
	if len(digits) < precision {
		return strings.Repeat("0", precision-len(digits)) + digits
	}
	return digits
}

// pad applies width and the '-' flag; zeros pad numbers after their sign.
func pad(out []byte, s string, spec formatSpec, zeroOK bool) []byte {
	n := spec.width - len(s)
	switch {
	case n <= 0:
		return append(out, s...)
	case strings.Contains(spec.flags, "-"):
		out = append(out, s...)
		return append(out, strings.Repeat(" ", n)...)
	case zeroOK && strings.Contains(spec.flags, "0"):
		return append(out, strings.Repeat("0", n)+s...)
	}
	return append(append(out, strings.Repeat(" ", n)...), s...)
}

func padNumber(out []byte, sign, digits string, spec formatSpec) []byte {
	if strings.Contains(spec.flags, "0") && !strings.Contains(spec.flags, "-") && spec.precision < 0 && len(sign)+len(digits) < spec.width {
		digits = strings.Repeat("0", spec.width-len(sign)-len(digits)) + digits
	}
	return pad(out, sign+digits, spec, false)
}

func padFloat(out []byte, f float64, spec formatSpec) []byte {
	sign := ""
	if math.Signbit(f) && !math.IsNaN(f) {
		sign, f = "-", -f
	} else if strings.Contains(spec.flags, "+") {
		sign = "+"
	} else if strings.Contains(spec.flags, " ") {
		sign = " "
	}
	upper := spec.verb == 'E' || spec.verb == 'G'
	var body string
	switch {
	case math.IsInf(f, 0):
		body = "inf"
	case math.IsNaN(f):
		body = "nan"
		if math.Signbit(f) {
			sign = "-"
		}
	default:
		body = cFloat(f, spec)
	}
	if upper {
		body = strings.ToUpper(body)
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return pad(out, sign+body, spec, false)
	}
	if strings.Contains(spec.flags, "0") && !strings.Contains(spec.flags, "-") && len(sign)+len(body) < spec.width {
		body = strings.Repeat("0", spec.width-len(sign)-len(body)) + body
	}
	return pad(out, sign+body, spec, false)
}

// cFloat formats a non-negative finite f as C's %e, %f or %g.
func cFloat(f float64, spec formatSpec) string {
	prec := spec.precision
	if prec < 0 {
		prec = 6
	}
	alt := strings.Contains(spec.flags, "#")
	switch spec.verb {
	case 'e', 'E':
		return strconv.FormatFloat(f, 'e', prec, 64)
	case 'f':
		s := strconv.FormatFloat(f, 'f', prec, 64)
		if alt && prec == 0 {
			s += "."
		}
		return s
	}
	if prec == 0 {
		prec = 1
	}
	exp := 0
	if f != 0 {
		// The exponent after rounding to prec significant digits decides the style.
		e := strconv.FormatFloat(f, 'e', prec-1, 64)
		exp, _ = strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	}
	var s string
	if exp < -4 || exp >= prec {
		s = strconv.FormatFloat(f, 'e', prec-1, 64)
		if !alt {
			mant, e, _ := strings.Cut(s, "e")
			s = trimZeros(mant) + "e" + e
		}
	} else {
		s = strconv.FormatFloat(f, 'f', prec-1-exp, 64)
		if !alt {
			s = trimZeros(s)
		}
	}
	return s
}

func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// appendQuoted is %q: a Lua string literal that reads back as s.
func appendQuoted(out []byte, s string) []byte {
	out = append(out, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			out = append(out, '\\', c)
		case '\n':
			out = append(out, '\\', '\n')
		case '\r':
			out = append(out, '\\', 'r')
		case 0:
			out = append(out, '\\', '0', '0', '0')
		default:
			out = append(out, c)
		}
	}
	return append(out, '"')
}
