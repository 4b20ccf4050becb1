package scripting

import (
	"encoding/binary"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// maxStringLen bounds strings built by string.rep, string.format and
// table.concat: Redis could not return or store anything longer
// (proto-max-bulk-len), and an unbounded request would exhaust memory.
const maxStringLen = 512 << 20

const errNoMemory = "not enough memory"

func (s *luaState) installBase(g *lua.LTable) {
	L := s.L
	next := L.NewFunction(s.next)
	set := func(name string, fn lua.LGFunction) { g.RawSetString(name, L.NewFunction(fn)) }
	g.RawSetString("next", next)
	g.RawSetString("pairs", L.NewFunction(func(L *lua.LState) int {
		checkTable(L, 1, "pairs")
		L.Push(next)
		L.Push(L.Get(1))
		L.Push(lua.LNil)
		return 3
	}))
	set("tostring", func(L *lua.LState) int {
		if L.GetTop() == 0 {
			argError(L, 1, "tostring", "value expected")
		}
		L.Push(lua.LString(tostringValue(L, L.Get(1))))
		return 1
	})
	set("tonumber", s.luaToNumber)
	set("rawget", func(L *lua.LState) int {
		t, _ := s.real(checkTable(L, 1, "rawget"))
		L.Push(t.RawGet(L.Get(2)))
		return 1
	})
	set("rawset", func(L *lua.LState) int {
		t := checkTable(L, 1, "rawset")
		if _, isProxy := s.realOf[t]; isProxy {
			raiseReadonly(L)
		}
		if L.Get(2) == lua.LNil {
			L.RaiseError("table index is nil")
		}
		t.RawSet(L.Get(2), L.Get(3))
		L.Push(t)
		return 1
	})
	set("getmetatable", func(L *lua.LState) int {
		v := L.Get(1)
		if t, ok := v.(*lua.LTable); ok {
			if real, isProxy := s.realOf[t]; isProxy {
				// The globals' error metatable, read-only as in Redis.
				if mt, ok := L.GetMetatable(real).(*lua.LTable); ok {
					L.Push(s.protectedMeta(mt))
					return 1
				}
				L.Push(lua.LNil)
				return 1
			}
		}
		if _, ok := v.(lua.LString); ok {
			L.Push(s.stringMeta)
			return 1
		}
		mt := L.GetMetatable(v)
		if mtt, ok := mt.(*lua.LTable); ok {
			if protected := mtt.RawGetString("__metatable"); protected != lua.LNil {
				mt = protected
			}
		}
		L.Push(mt)
		return 1
	})
	set("setmetatable", func(L *lua.LState) int {
		t := checkTable(L, 1, "setmetatable")
		if _, isProxy := s.realOf[t]; isProxy {
			raiseReadonly(L)
		}
		mt := L.Get(2)
		if mt.Type() != lua.LTNil && mt.Type() != lua.LTTable {
			typeError(L, 2, "setmetatable", "nil or table")
		}
		if old, ok := L.GetMetatable(t).(*lua.LTable); ok && old.RawGetString("__metatable") != lua.LNil {
			L.RaiseError("cannot change a protected metatable")
		}
		L.SetMetatable(t, mt)
		L.Push(t)
		return 1
	})
	set("loadstring", func(L *lua.LState) int {
		src := checkString(L, 1, "loadstring")
		return s.load(L, src, optString(L, 2, "loadstring", src))
	})
	set("load", func(L *lua.LState) int {
		fn := L.CheckFunction(1)
		var sb strings.Builder
		for {
			L.Push(fn)
			L.Call(0, 1)
			piece := L.Get(-1)
			L.Pop(1)
			str, ok := piece.(lua.LString)
			if piece == lua.LNil || ok && str == "" {
				break
			}
			if !ok {
				L.Push(lua.LNil)
				L.Push(lua.LString("reader function must return a string"))
				return 2
			}
			if sb.Len()+len(str) > maxStringLen {
				L.RaiseError(errNoMemory)
			}
			sb.WriteString(string(str))
		}
		return s.load(L, sb.String(), optString(L, 2, "load", "=(load)"))
	})
	// Redis's pcall turns a caught error object {err=...} into its message.
	set("pcall", func(L *lua.LState) int {
		if L.GetTop() == 0 {
			argError(L, 1, "pcall", "value expected")
		}
		n := L.GetTop() - 1
		if err := L.PCall(n, lua.MultRet, s.keepError); err != nil {
			obj := s.errorObject(err)
			if t, ok := obj.(*lua.LTable); ok {
				if msg, ok := t.RawGetString("err").(lua.LString); ok {
					obj = msg
				}
			}
			L.SetTop(0)
			L.Push(lua.LFalse)
			L.Push(obj)
			return 2
		}
		L.Insert(lua.LTrue, 1)
		return L.GetTop()
	})
	g.RawSetString("error", L.NewFunction(s.luaError))
	set("collectgarbage", s.collectGarbage)
	set("select", func(L *lua.LState) int {
		top := int64(L.GetTop())
		if n, ok := L.Get(1).(lua.LString); ok && n == "#" {
			L.Push(lua.LNumber(top - 1))
			return 1
		}
		n := checkInt(L, 1, "select")
		if n < 0 {
			n += top
		} else if n > top {
			n = top
		}
		if n < 1 {
			argError(L, 1, "select", "index out of range")
		}
		return int(top - n)
	})
	set("assert", func(L *lua.LState) int {
		if L.GetTop() == 0 {
			argError(L, 1, "assert", "value expected")
		}
		if !lua.LVAsBool(L.Get(1)) {
			L.RaiseError("%s", optString(L, 2, "assert", "assertion failed!"))
		}
		return L.GetTop()
	})
	// unpack and string.byte push their results on the C stack in Lua 5.1,
	// which holds LUAI_MAXCSTACK (8000) values.
	set("unpack", func(L *lua.LState) int {
		t, _ := s.real(checkTable(L, 1, "unpack"))
		i := optInt(L, 2, "unpack", 1)
		e := optInt(L, 3, "unpack", int64(t.Len()))
		if i > e {
			return 0
		}
		n := e - i + 1
		if n <= 0 || n+int64(L.GetTop()) > luaStackLimit {
			L.RaiseError("too many results to unpack")
		}
		for k := i; k <= e; k++ {
			L.Push(t.RawGetInt(int(k)))
		}
		return int(n)
	})
	set("gcinfo", func(L *lua.LState) int {
		L.Push(lua.LNumber(0)) // gopher-lua's memory lives in Go's heap, not counted per state
		return 1
	})
}

// next is Lua's next, looking through read-only proxies and hiding the
// concatenation helper's global.
func (s *luaState) next(L *lua.LState) int {
	t, _ := s.real(checkTable(L, 1, "next"))
	k, v := t.Next(L.Get(2))
	for {
		if ks, ok := k.(lua.LString); !ok || len(ks) == 0 || ks[0] != 0 {
			break
		}
		k, v = t.Next(k)
	}
	if k == lua.LNil {
		L.Push(lua.LNil)
		return 1
	}
	L.Push(k)
	L.Push(v)
	return 2
}

// load compiles a chunk given to loadstring/load with the same rewriting as
// scripts, so numbers concatenate as in Lua 5.1 there too.
func (s *luaState) load(L *lua.LState, src, chunkName string) int {
	proto, err := compileChunk([]byte(src), chunkID(chunkName))
	if err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(err.Error()))
		return 2
	}
	fn := L.NewFunctionFromProto(proto)
	fn.Env = s.globals
	L.Push(fn)
	return 1
}

// chunkID is Lua 5.1's luaO_chunkid for the names of loaded strings.
func chunkID(name string) string {
	switch {
	case strings.HasPrefix(name, "="):
		return name[1:min(len(name), 60)]
	case strings.HasPrefix(name, "@"):
		return name[1:]
	}
	l := len(name)
	const room = 60 - len(` [string "..."] `)
	truncated := false
	if i := strings.IndexByte(name, '\n'); i >= 0 {
		l, truncated = i, true
	}
	if l > room {
		l, truncated = room, true
	}
	if truncated {
		return `[string "` + name[:l] + `..."]`
	}
	return `[string "` + name + `"]`
}

func (s *luaState) luaToNumber(L *lua.LState) int {
	base := optInt(L, 2, "tonumber", 10)
	v := L.Get(1)
	if base == 10 {
		if _, ok := v.(lua.LNumber); ok {
			L.Push(v) // already boxed
			return 1
		} else if f, ok := toNumberArg(v); ok {
			L.Push(s.numbers.box(f))
			return 1
		}
		if L.GetTop() == 0 {
			argError(L, 1, "tonumber", "value expected")
		}
		L.Push(lua.LNil)
		return 1
	}
	str := checkString(L, 1, "tonumber")
	if base < 2 || base > 36 {
		argError(L, 2, "tonumber", "base out of range")
	}
	str = strings.Trim(str, " \t\n\r\f\v")
	neg := strings.HasPrefix(str, "-")
	n, err := strconv.ParseUint(strings.TrimPrefix(str, "-"), int(base), 64)
	if err != nil || str == "" {
		L.Push(lua.LNil)
		return 1
	}
	f := float64(n)
	if neg {
		f = -f
	}
	L.Push(lua.LNumber(f))
	return 1
}

// luaConcat implements "..": its first argument names the operands for
// error messages (NUL-separated, "" for temporaries), the others are
// concatenated right to left as the VM does, numbers formatted with %.14g,
// __concat consulted for other types.
func luaConcat(L *lua.LState) int {
	names := strings.Split(L.CheckString(1), "\x00")
	n := L.GetTop()
	acc := L.Get(n)
	for i := n - 1; i >= 2; i-- {
		acc = concat2(L, L.Get(i), acc, func(left bool) string {
			if k := i - 2; left && k < len(names) {
				return names[k]
			} else if !left && i == n-1 && n-2 < len(names) {
				return names[n-2] // the right operand is the last one only at first
			}
			return ""
		})
	}
	L.Push(acc)
	return 1
}

func concat2(L *lua.LState, a, b lua.LValue, name func(left bool) string) lua.LValue {
	as, aok := toStringArg(a)
	bs, bok := toStringArg(b)
	if aok && bok {
		if len(as)+len(bs) > maxStringLen {
			L.RaiseError(errNoMemory)
		}
		return lua.LString(as + bs)
	}
	mm := L.GetMetaField(a, "__concat")
	if mm == lua.LNil {
		mm = L.GetMetaField(b, "__concat")
	}
	if mm == lua.LNil {
		bad, desc := a, name(true)
		if aok {
			bad, desc = b, name(false)
		}
		if desc != "" {
			L.RaiseError("attempt to concatenate %s (a %s value)", desc, bad.Type().String())
		}
		L.RaiseError("attempt to concatenate a %s value", bad.Type().String())
	}
	L.Push(mm)
	L.Push(a)
	L.Push(b)
	L.Call(2, 1)
	r := L.Get(-1)
	L.Pop(1)
	return r
}

func (s *luaState) installString(str *lua.LTable) {
	L := s.L
	// Lua 5.1 library functions accept numbers where strings are expected
	// and format them with %.14g; gopher-lua uses Go's formatting.
	coerce := func(name string, positions ...int) {
		origFn := str.RawGetString(name).(*lua.LFunction)
		orig := origFn.GFunction
		wrapped := L.NewFunction(func(L *lua.LState) int {
			for _, p := range positions {
				if n, ok := L.Get(p).(lua.LNumber); ok {
					L.Replace(p, lua.LString(luaNumberString(float64(n))))
				}
			}
			return orig(L)
		})
		wrapped.Upvalues = origFn.Upvalues // gmatch keeps its iterator there
		str.RawSetString(name, wrapped)
	}
	for _, name := range []string{"byte", "len", "lower", "reverse", "sub", "upper"} { // byte is wrapped again below
		coerce(name, 1)
	}
	coerce("find", 1, 2)
	coerce("match", 1, 2)
	coerce("gmatch", 1, 2)
	coerce("gsub", 1, 2, 3)
	str.RawSetString("gfind", str.RawGetString("gmatch"))
	// gsub's table and function replacements must give strings or numbers
	// (numbers formatted %.14g), or false/nil to keep the match.
	gsub := str.RawGetString("gsub").(*lua.LFunction).GFunction
	str.RawSetString("gsub", L.NewFunction(func(L *lua.LState) int {
		var lookup func(L *lua.LState) lua.LValue
		switch repl := L.Get(3).(type) {
		case *lua.LTable:
			lookup = func(L *lua.LState) lua.LValue { return L.GetTable(repl, L.Get(1)) }
		case *lua.LFunction:
			lookup = func(L *lua.LState) lua.LValue {
				L.Insert(repl, 1)
				L.Call(L.GetTop()-1, 1)
				return L.Get(-1)
			}
		default:
			return gsub(L)
		}
		L.Replace(3, L.NewFunction(func(L *lua.LState) int {
			v := lookup(L)
			switch v := v.(type) {
			case *lua.LNilType, lua.LBool:
				if v == lua.LTrue {
					L.RaiseError("invalid replacement value (a boolean)")
				}
				L.Push(lua.LFalse)
			case lua.LString:
				L.Push(v)
			case lua.LNumber:
				L.Push(lua.LString(luaNumberString(float64(v))))
			default:
				L.RaiseError("invalid replacement value (a %s)", v.Type().String())
			}
			return 1
		}))
		return gsub(L)
	}))
	strByte := str.RawGetString("byte").(*lua.LFunction).GFunction
	str.RawSetString("byte", L.NewFunction(func(L *lua.LState) int {
		s := checkString(L, 1, "byte")
		i := optInt(L, 2, "byte", 1)
		j := optInt(L, 3, "byte", i)
		l := int64(len(s))
		if i < 0 {
			i += l + 1
		}
		if j < 0 {
			j += l + 1
		}
		if i < 1 {
			i = 1
		}
		if j > l {
			j = l
		}
		if n := j - i + 1; n > 0 && n+int64(L.GetTop()) > luaStackLimit {
			L.RaiseError("stack overflow (string slice too long)")
		}
		return strByte(L)
	}))
	str.RawSetString("rep", L.NewFunction(func(L *lua.LState) int {
		s := checkString(L, 1, "rep")
		n := int64(int32(checkInt(L, 2, "rep"))) // luaL_checkint: 2^31 wraps negative, as in Redis
		if n <= 0 || s == "" {
			L.Push(lua.LString(""))
			return 1
		}
		if n > maxStringLen/int64(len(s)) {
			L.RaiseError(errNoMemory)
		}
		L.Push(lua.LString(strings.Repeat(s, int(n))))
		return 1
	}))
	str.RawSetString("format", L.NewFunction(luaFormat))
	str.RawSetString("char", L.NewFunction(func(L *lua.LState) int {
		b := make([]byte, L.GetTop())
		for i := range b {
			c := checkInt(L, i+1, "char")
			if c < 0 || c > 255 {
				argError(L, i+1, "char", "invalid value")
			}
			b[i] = byte(c)
		}
		L.Push(lua.LString(b))
		return 1
	}))
	str.RawSetString("dump", L.NewFunction(func(L *lua.LState) int {
		fn, ok := L.Get(1).(*lua.LFunction)
		if !ok {
			typeError(L, 1, "dump", "function")
		}
		if fn.IsG {
			L.RaiseError("unable to dump given function")
		}
		L.Push(lua.LString(dumpHeader(fn.Proto)))
		return 1
	}))
}

func (s *luaState) installTable(tbl *lua.LTable) {
	L := s.L
	// Functions that write into their table argument must refuse proxies;
	// the others read the real table behind one.
	guard := func(name string, writes bool) {
		orig := tbl.RawGetString(name).(*lua.LFunction).GFunction
		tbl.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			if t, ok := L.Get(1).(*lua.LTable); ok {
				if real, isProxy := s.realOf[t]; isProxy {
					if writes {
						raiseReadonly(L)
					}
					L.Replace(1, real)
				}
			}
			return orig(L)
		}))
	}
	guard("insert", true)
	guard("remove", true)
	guard("sort", true)
	guard("getn", false)
	guard("maxn", false)
	tbl.RawSetString("setn", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("'setn' is obsolete")
		return 0
	}))
	tbl.RawSetString("concat", L.NewFunction(func(L *lua.LState) int {
		t, _ := s.real(checkTable(L, 1, "concat"))
		sep := optString(L, 2, "concat", "")
		i := optInt(L, 3, "concat", 1)
		j := optInt(L, 4, "concat", int64(t.Len()))
		var b []byte
		for k := i; k <= j; k++ {
			v, ok := toStringArg(t.RawGetInt(int(k)))
			if !ok {
				L.RaiseError("invalid value (%s) at index %d in table for 'concat'", t.RawGetInt(int(k)).Type().String(), k)
			}
			if len(b)+len(v)+len(sep) > maxStringLen {
				L.RaiseError(errNoMemory)
			}
			b = append(b, v...)
			if k < j {
				b = append(b, sep...)
			}
		}
		L.Push(lua.LString(b))
		return 1
	}))
	iterate := func(name string, array bool) {
		tbl.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			t, _ := s.real(checkTable(L, 1, name))
			fn := L.CheckFunction(2)
			call := func(k, v lua.LValue) bool {
				L.Push(fn)
				L.Push(k)
				L.Push(v)
				L.Call(2, 1)
				r := L.Get(-1)
				L.Pop(1)
				if r != lua.LNil {
					L.Push(r)
					return true
				}
				return false
			}
			if array {
				for i := 1; i <= t.Len(); i++ {
					if call(lua.LNumber(i), t.RawGetInt(i)) {
						return 1
					}
				}
				return 0
			}
			for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
				if call(k, v) {
					return 1
				}
			}
			return 0
		}))
	}
	iterate("foreach", false)
	iterate("foreachi", true)
}

func (s *luaState) installMath(m *lua.LTable) {
	L := s.L
	r := &s.engine.rand
	m.RawSetString("random", L.NewFunction(func(L *lua.LState) int {
		f := float64(r.next()%rand48Max) / float64(rand48Max)
		switch L.GetTop() {
		case 0:
			L.Push(lua.LNumber(f))
		case 1:
			u := int32(checkInt(L, 1, "random"))
			if u < 1 {
				argError(L, 1, "random", "interval is empty")
			}
			L.Push(lua.LNumber(float64(int64(f*float64(u))) + 1))
		case 2:
			l := int32(checkInt(L, 1, "random"))
			u := int32(checkInt(L, 2, "random"))
			if l > u {
				argError(L, 2, "random", "interval is empty")
			}
			L.Push(lua.LNumber(float64(int64(f*(float64(u)-float64(l)+1))) + float64(l)))
		default:
			L.RaiseError("wrong number of arguments")
		}
		return 1
	}))
	// math.max and math.min check their numbers (at least one) with Lua's
	// texts.
	for _, name := range []string{"max", "min"} {
		orig := m.RawGetString(name).(*lua.LFunction).GFunction
		m.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			for i := 1; i <= max(L.GetTop(), 1); i++ {
				checkNumber(L, i, name)
			}
			return orig(L)
		}))
	}
	m.RawSetString("randomseed", L.NewFunction(func(L *lua.LState) int {
		r.seed(int32(checkInt(L, 1, "randomseed")))
		return 0
	}))
}

// rand48 is Redis's redisLrand48 (the drand48 recurrence) behind
// math.random. Redis 7.0 never reseeds it: one sequence runs through every
// EVAL and FCALL of the process, from drand48's default state, and only
// math.randomseed moves it.
type rand48 struct{ x uint64 }

const (
	rand48Max     = 1<<31 - 1
	rand48Initial = 0x1234ABCD330E
)

func (r *rand48) seed(s int32) { r.x = uint64(uint32(s))<<16 | 0x330E }

func (r *rand48) next() int64 {
	r.x = (0x5DEECE66D*r.x + 0xB) & (1<<48 - 1)
	return int64(r.x >> 17)
}

// collectGarbage is Lua 5.1's collectgarbage over gopher-lua, whose memory
// is Go's: "count" reports the state's estimated size in KB (as
// used_memory_vm_eval or _functions, which Redis reads the same way), the
// collector settings are remembered and returned as Lua returns them, and
// the other options answer as Lua's would after doing nothing.
func (s *luaState) collectGarbage(L *lua.LState) int {
	opt := optString(L, 1, "collectgarbage", "collect")
	arg := optInt(L, 2, "collectgarbage", 0)
	switch opt {
	case "collect", "stop", "restart":
		L.Push(lua.LNumber(0))
	case "count":
		m := s.engine.MemoryStats()
		bytes := m.EvalVM
		if s.loadGlobals != nil {
			bytes = m.FunctionVM
		}
		L.Push(lua.LNumber(float64(bytes) / 1024))
	case "step":
		L.Push(lua.LBool(arg != 0)) // a step as large as asked ends a cycle
	case "setpause":
		L.Push(lua.LNumber(s.gcPause))
		s.gcPause = arg
	case "setstepmul":
		L.Push(lua.LNumber(s.gcStepMul))
		s.gcStepMul = arg
	default:
		argError(L, 1, "collectgarbage", "invalid option '"+opt+"'")
	}
	return 1
}

// luaSignature is the header of a Lua 5.1 binary chunk on x86-64: ESC "Lua",
// version 5.1, official format, little endian, 4-byte int, 8-byte size_t,
// 4-byte instructions, 8-byte non-integral numbers.
const luaSignature = "\x1bLuaQ\x00\x01\x04\x08\x04\x08\x00"

// dumpHeader is string.dump's result: what Lua 5.1 dumps before a
// function's bytecode (the chunk header, its source name and lines), byte
// for byte, and no bytecode, as gopher-lua's is not Lua's. Redis refuses to
// load binary chunks, so a script can only look at it: loadstring gives nil.
func dumpHeader(p *lua.FunctionProto) []byte {
	source := p.SourceName
	if source == evalChunk || source == libraryChunk {
		source = "@" + source
	}
	b := append([]byte(luaSignature), 0, 0, 0, 0, 0, 0, 0, 0)
	binary.LittleEndian.PutUint64(b[len(luaSignature):], uint64(len(source)+1))
	b = append(append(b, source...), 0)
	last := p.LastLineDefined
	if p.LineDefined == 0 { // a main chunk: Lua gives no last line
		last = 0
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(p.LineDefined))
	return binary.LittleEndian.AppendUint32(b, uint32(last))
}
