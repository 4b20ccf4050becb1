package scripting

import (
	"fmt"

	lua "github.com/yuin/gopher-lua"
)

// Argument checks with Lua 5.1's error texts ("bad argument #1 to 'rep'
// (string expected, got no value)"), which gopher-lua words differently.

func argError(L *lua.LState, n int, fname, msg string) {
	L.RaiseError("bad argument #%d to '%s' (%s)", n, fname, msg)
}

func typeName(L *lua.LState, n int) string {
	if n > L.GetTop() {
		return "no value"
	}
	return L.Get(n).Type().String()
}

func typeError(L *lua.LState, n int, fname, expected string) {
	argError(L, n, fname, fmt.Sprintf("%s expected, got %s", expected, typeName(L, n)))
}

func checkString(L *lua.LState, n int, fname string) string {
	s, ok := toStringArg(L.Get(n))
	if !ok {
		typeError(L, n, fname, "string")
	}
	return s
}

func optString(L *lua.LState, n int, fname, def string) string {
	if L.Get(n) == lua.LNil {
		return def
	}
	return checkString(L, n, fname)
}

func toNumberArg(v lua.LValue) (float64, bool) {
	switch v := v.(type) {
	case lua.LNumber:
		return float64(v), true
	case lua.LString:
		return parseLuaNumber(string(v))
	}
	return 0, false
}

func checkNumber(L *lua.LState, n int, fname string) float64 {
	f, ok := toNumberArg(L.Get(n))
	if !ok {
		typeError(L, n, fname, "number")
	}
	return f
}

// checkInt is luaL_checkint: a number truncated toward zero.
func checkInt(L *lua.LState, n int, fname string) int64 {
	return toInt64(checkNumber(L, n, fname))
}

func optInt(L *lua.LState, n int, fname string, def int64) int64 {
	if L.Get(n) == lua.LNil {
		return def
	}
	return checkInt(L, n, fname)
}

// toInt64 converts as a C cast on x86-64 does: out of range and NaN give
// the "integer indefinite" value.
func toInt64(f float64) int64 {
	if f != f || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
		return -1 << 63
	}
	return int64(f)
}

func checkTable(L *lua.LState, n int, fname string) *lua.LTable {
	t, ok := L.Get(n).(*lua.LTable)
	if !ok {
		typeError(L, n, fname, "table")
	}
	return t
}
