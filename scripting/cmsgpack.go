package scripting

import (
	"encoding/binary"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// cmsgpack is lua-cmsgpack 0.4.0 as Redis ships it.

// msgpackMaxNesting is where pack encodes deeper tables as nil.
const msgpackMaxNesting = 16

// msgpackMaxResults and msgpackMaxDepth approximate the Lua stack room
// unpack can fill before luaL_checkstack fails in Redis: one slot per
// result, two per nesting level.
const (
	msgpackMaxResults = luaStackLimit - 10
	msgpackMaxDepth   = msgpackMaxResults / 2
)

func openCmsgpack(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("pack", L.NewFunction(msgpackPack))
	t.RawSetString("unpack", L.NewFunction(func(L *lua.LState) int { return msgpackUnpack(L, 0, 0) }))
	t.RawSetString("unpack_one", L.NewFunction(func(L *lua.LState) int {
		offset := optInt(L, 2, "unpack_one", 0)
		L.SetTop(1)
		return msgpackUnpack(L, 1, offset)
	}))
	t.RawSetString("unpack_limit", L.NewFunction(func(L *lua.LState) int {
		limit := checkInt(L, 2, "unpack_limit")
		offset := optInt(L, 3, "unpack_limit", 0)
		L.SetTop(1)
		return msgpackUnpack(L, limit, offset)
	}))
	t.RawSetString("_NAME", lua.LString("cmsgpack"))
	t.RawSetString("_VERSION", lua.LString("lua-cmsgpack 0.4.0"))
	t.RawSetString("_COPYRIGHT", lua.LString("Copyright (C) 2012, Salvatore Sanfilippo"))
	t.RawSetString("_DESCRIPTION", lua.LString("MessagePack C implementation for Lua"))
	return t
}

func msgpackPack(L *lua.LState) int {
	n := L.GetTop()
	if n == 0 {
		argError(L, 0, "pack", "MessagePack pack needs input.")
	}
	var b []byte
	for i := 1; i <= n; i++ {
		b = msgpackEncode(L, b, L.Get(i), 0)
	}
	L.Push(lua.LString(b))
	return 1
}

func msgpackEncode(L *lua.LState, b []byte, v lua.LValue, level int) []byte {
	if len(b) > maxStringLen {
		L.RaiseError(errNoMemory)
	}
	switch v := v.(type) {
	case lua.LBool:
		if v {
			return append(b, 0xc3)
		}
		return append(b, 0xc2)
	case lua.LNumber:
		f := float64(v)
		if !math.IsInf(f, 0) && f >= -9223372036854775808.0 && f < 9223372036854775808.0 && float64(int64(f)) == f {
			return msgpackInt(b, int64(f))
		}
		if float64(float32(f)) == f {
			return binary.BigEndian.AppendUint32(append(b, 0xca), math.Float32bits(float32(f)))
		}
		return binary.BigEndian.AppendUint64(append(b, 0xcb), math.Float64bits(f))
	case lua.LString:
		return append(msgpackHeader(b, len(v), 0xa0, 31, 0xd9, 0xda, 0xdb), v...)
	case *lua.LTable:
		if level == msgpackMaxNesting {
			return append(b, 0xc0)
		}
		if n, ok := msgpackArrayLen(v); ok {
			b = msgpackHeader(b, n, 0x90, 15, 0, 0xdc, 0xdd)
			for i := 1; i <= n; i++ {
				b = msgpackEncode(L, b, v.RawGetInt(i), level+1)
			}
			return b
		}
		count := 0
		v.ForEach(func(lua.LValue, lua.LValue) { count++ })
		b = msgpackHeader(b, count, 0x80, 15, 0, 0xde, 0xdf)
		for k, val := v.Next(lua.LNil); k != lua.LNil; k, val = v.Next(k) {
			b = msgpackEncode(L, b, k, level+1)
			b = msgpackEncode(L, b, val, level+1)
		}
		return b
	}
	return append(b, 0xc0)
}

// msgpackHeader writes a length header: the fix form up to fixMax, then the
// 8-bit form (when the type has one), 16-bit and 32-bit forms. For strings
// the payload follows the header, so callers pass it along.
func msgpackHeader(b []byte, n int, fix byte, fixMax int, op8, op16, op32 byte) []byte {
	switch {
	case n <= fixMax:
		b = append(b, fix|byte(n))
	case op8 != 0 && n <= 0xff:
		b = append(b, op8, byte(n))
	case n <= 0xffff:
		b = binary.BigEndian.AppendUint16(append(b, op16), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, op32), uint32(n))
	}
	return b
}

// msgpackArrayLen is table_is_an_array: every key a positive integer and
// the largest equal to their count. The length is then lua_objlen's.
func msgpackArrayLen(t *lua.LTable) (int, bool) {
	count, maxKey := 0, 0.0
	for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
		n, ok := k.(lua.LNumber)
		if !ok || n <= 0 || math.Floor(float64(n)) != float64(n) {
			return 0, false
		}
		maxKey = math.Max(maxKey, float64(n))
		count++
	}
	return t.Len(), maxKey == float64(count)
}

func msgpackInt(b []byte, n int64) []byte {
	switch {
	case n >= 0 && n <= 127:
		return append(b, byte(n))
	case n >= 0 && n <= 0xff:
		return append(b, 0xcc, byte(n))
	case n >= 0 && n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(n))
	case n >= 0 && n <= 0xffffffff:
		return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(n))
	case n >= 0:
		return binary.BigEndian.AppendUint64(append(b, 0xcf), uint64(n))
	case n >= -32:
		return append(b, byte(n))
	case n >= -128:
		return append(b, 0xd0, byte(n))
	case n >= -32768:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(n))
	case n >= -2147483648:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(n))
}

func msgpackUnpack(L *lua.LState, limit, offset int64) int {
	s := checkString(L, 1, "unpack")
	decodeAll := limit == 0 && offset == 0
	if offset < 0 || limit < 0 {
		L.RaiseError("Invalid request to unpack with offset of %d and limit of %d.", offset, len(s))
	}
	if offset > int64(len(s)) {
		L.RaiseError("Start offset %d greater than input length %d.", offset, len(s))
	}
	if decodeAll {
		limit = math.MaxInt32
	}
	d := msgpackDecoder{L: L, b: []byte(s[offset:])}
	base := L.GetTop()
	cnt := 0
	for ; len(d.b) > 0 && int64(cnt) < limit; cnt++ {
		if cnt >= msgpackMaxResults {
			L.RaiseError("stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)")
		}
		v := d.value(0)
		switch d.err {
		case errMsgpackEOF:
			L.RaiseError("Missing bytes in input.")
		case errMsgpackFormat:
			L.RaiseError("Bad data format in input.")
		}
		L.Push(v)
	}
	if decodeAll {
		return cnt
	}
	next := lua.LNumber(len(s) - len(d.b))
	if len(d.b) == 0 {
		next = -1
	}
	L.Insert(next, base+1)
	return cnt + 1
}

type msgpackError int

const (
	errMsgpackNone msgpackError = iota
	errMsgpackEOF
	errMsgpackFormat
)

type msgpackDecoder struct {
	L   *lua.LState
	b   []byte
	err msgpackError
}

func (d *msgpackDecoder) take(n uint64) []byte {
	if d.err != errMsgpackNone || uint64(len(d.b)) < n {
		if d.err == errMsgpackNone {
			d.err = errMsgpackEOF
		}
		return nil
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}

func (d *msgpackDecoder) uint(size int) uint64 {
	p := d.take(uint64(size))
	if p == nil {
		return 0
	}
	var v uint64
	for _, c := range p {
		v = v<<8 | uint64(c)
	}
	return v
}

func (d *msgpackDecoder) value(depth int) lua.LValue {
	if depth > msgpackMaxDepth {
		d.L.RaiseError("stack overflow (in function mp_decode_to_lua_array)")
	}
	p := d.take(1)
	if p == nil {
		return lua.LNil
	}
	c := p[0]
	switch {
	case c <= 0x7f:
		return lua.LNumber(c)
	case c >= 0xe0:
		return lua.LNumber(int8(c))
	case c&0xf0 == 0x80:
		return d.table(uint64(c&0x0f), true, depth)
	case c&0xf0 == 0x90:
		return d.table(uint64(c&0x0f), false, depth)
	case c&0xe0 == 0xa0:
		return d.str(uint64(c & 0x1f))
	}
	switch c {
	case 0xc0:
		return lua.LNil
	case 0xc2:
		return lua.LFalse
	case 0xc3:
		return lua.LTrue
	case 0xca:
		return lua.LNumber(math.Float32frombits(uint32(d.uint(4))))
	case 0xcb:
		return lua.LNumber(math.Float64frombits(d.uint(8)))
	case 0xcc:
		return lua.LNumber(d.uint(1))
	case 0xcd:
		return lua.LNumber(d.uint(2))
	case 0xce:
		return lua.LNumber(d.uint(4))
	case 0xcf:
		return lua.LNumber(float64(int64(d.uint(8)))) // pushed as a signed lua_Integer
	case 0xd0:
		return lua.LNumber(int8(d.uint(1)))
	case 0xd1:
		return lua.LNumber(int16(d.uint(2)))
	case 0xd2:
		return lua.LNumber(int32(d.uint(4)))
	case 0xd3:
		return lua.LNumber(float64(int64(d.uint(8))))
	case 0xd9:
		return d.str(d.uint(1))
	case 0xda:
		return d.str(d.uint(2))
	case 0xdb:
		return d.str(d.uint(4))
	case 0xdc:
		return d.table(d.uint(2), false, depth)
	case 0xdd:
		return d.table(d.uint(4), false, depth)
	case 0xde:
		return d.table(d.uint(2), true, depth)
	case 0xdf:
		return d.table(d.uint(4), true, depth)
	}
	d.err = errMsgpackFormat
	return lua.LNil
}

func (d *msgpackDecoder) str(n uint64) lua.LValue {
	p := d.take(n)
	if p == nil {
		return lua.LNil
	}
	return lua.LString(p)
}

// table decodes n array elements or map pairs. Every element takes at
// least one byte, so a count beyond the input is reported as missing bytes
// before anything is allocated for it.
func (d *msgpackDecoder) table(n uint64, isMap bool, depth int) lua.LValue {
	if d.err != errMsgpackNone {
		return lua.LNil
	}
	if n > uint64(len(d.b)) {
		d.err = errMsgpackEOF
		return lua.LNil
	}
	t := d.L.NewTable()
	for i := uint64(1); i <= n && d.err == errMsgpackNone; i++ {
		if !isMap {
			t.RawSetInt(int(i), d.value(depth+1))
			continue
		}
		k := d.value(depth + 1)
		v := d.value(depth + 1)
		if d.err != errMsgpackNone {
			break
		}
		// lua_settable's errors, raised from C: no position.
		switch kk := k.(type) {
		case *lua.LNilType:
			raisePlain(d.L, "table index is nil")
		case lua.LNumber:
			if math.IsNaN(float64(kk)) {
				raisePlain(d.L, "table index is NaN")
			}
		}
		t.RawSet(k, v)
	}
	return t
}
