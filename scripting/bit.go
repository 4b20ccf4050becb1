package scripting

import (
	"math"
	"math/bits"

	lua "github.com/yuin/gopher-lua"
)

// openBit builds the LuaBitOp "bit" library: 32-bit operations on numbers.
func openBit(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	unary := func(name string, op func(uint32) uint32) {
		t.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			L.Push(bitResult(op(bitArg(L, 1, name))))
			return 1
		}))
	}
	unary("tobit", func(b uint32) uint32 { return b })
	unary("bnot", func(b uint32) uint32 { return ^b })
	unary("bswap", bits.ReverseBytes32)
	fold := func(name string, op func(a, b uint32) uint32) {
		t.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			b := bitArg(L, 1, name)
			for i := L.GetTop(); i > 1; i-- {
				b = op(b, bitArg(L, i, name))
			}
			L.Push(bitResult(b))
			return 1
		}))
	}
	fold("band", func(a, b uint32) uint32 { return a & b })
	fold("bor", func(a, b uint32) uint32 { return a | b })
	fold("bxor", func(a, b uint32) uint32 { return a ^ b })
	shift := func(name string, op func(b uint32, n uint) uint32) {
		t.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			b := bitArg(L, 1, name)
			n := uint(bitArg(L, 2, name) & 31)
			L.Push(bitResult(op(b, n)))
			return 1
		}))
	}
	shift("lshift", func(b uint32, n uint) uint32 { return b << n })
	shift("rshift", func(b uint32, n uint) uint32 { return b >> n })
	shift("arshift", func(b uint32, n uint) uint32 { return uint32(int32(b) >> n) })
	shift("rol", func(b uint32, n uint) uint32 { return bits.RotateLeft32(b, int(n)) })
	shift("ror", func(b uint32, n uint) uint32 { return bits.RotateLeft32(b, -int(n)) })
	t.RawSetString("tohex", L.NewFunction(func(L *lua.LState) int {
		b := bitArg(L, 1, "tohex")
		n := int64(8)
		if L.GetTop() >= 2 {
			n = int64(int32(bitArg(L, 2, "tohex")))
		}
		digits := "0123456789abcdef"
		if n < 0 {
			n, digits = -n, "0123456789ABCDEF"
		}
		n = min(n, 8)
		buf := make([]byte, n)
		for i := n - 1; i >= 0; i-- {
			buf[i] = digits[b&15]
			b >>= 4
		}
		L.Push(lua.LString(buf))
		return 1
	}))
	return t
}

// bitArg converts an argument as LuaBitOp does: adding 2^52+2^51 rounds the
// number to an integer in the low 32 bits of the double's representation.
func bitArg(L *lua.LState, n int, fname string) uint32 {
	f, ok := toNumberArg(L.Get(n))
	b := uint32(math.Float64bits(f + 6755399441055744.0))
	if b == 0 && !ok {
		typeError(L, n, fname, "number")
	}
	return b
}

func bitResult(b uint32) lua.LNumber { return lua.LNumber(int32(b)) }
