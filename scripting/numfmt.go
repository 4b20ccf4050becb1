package scripting

import (
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// appendLuaNumber formats f as Lua 5.1 does (LUAI_NUMFFORMAT "%.14g"), which
// gopher-lua does not: tostring, "..", string coercion and table.concat all
// go through here.
func appendLuaNumber(b []byte, f float64) []byte { return appendCNumber(b, f, 14) }

func luaNumberString(f float64) string {
	var tmp [32]byte
	return string(appendLuaNumber(tmp[:0], f))
}

// appendArgNumber formats a number passed to redis.call as Redis does (%.17g).
func appendArgNumber(b []byte, f float64) []byte { return appendCNumber(b, f, 17) }

// appendCNumber is C's "%.<precision>g" as glibc prints it.
func appendCNumber(b []byte, f float64, precision int) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	case math.IsNaN(f):
		if math.Signbit(f) {
			return append(b, "-nan"...) // the sign of x86's default NaN
		}
		return append(b, "nan"...)
	}
	return strconv.AppendFloat(b, f, 'g', precision, 64)
}

// parseLuaNumber converts a string to a number as Lua 5.1's luaO_str2d
// does: C's strtod (decimal, hexadecimal, inf, nan), then only whitespace.
func parseLuaNumber(s string) (float64, bool) {
	if f, ok := parseSmallInt(s); ok {
		return f, true
	}
	f, n := strtod(s)
	if n == 0 || strings.Trim(s[n:], " \t\n\r\f\v") != "" {
		return 0, false
	}
	return f, true
}

// toStringArg returns the string value of a string or number argument, Lua
// 5.1 style, and false for other types.
func toStringArg(v lua.LValue) (string, bool) {
	switch v := v.(type) {
	case lua.LString:
		return string(v), true
	case lua.LNumber:
		return luaNumberString(float64(v)), true
	}
	return "", false
}

// parseSmallInt reads the common case of a plain decimal integer of up to
// 15 digits, optionally negative, which converts to a float64 exactly and
// so needs no strtod.
func parseSmallInt(s string) (float64, bool) {
	digits := s
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 {
		return 0, false
	}
	n := int64(0)
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if len(digits) < len(s) {
		return -float64(n), true // "-0" is -0, as strtod reads it
	}
	return float64(n), true
}
