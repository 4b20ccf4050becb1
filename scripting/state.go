package scripting

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

const (
	errReadonly  = "Attempt to modify a readonly table"
	errKilled    = "ERR Script killed by user with SCRIPT KILL..."
	evalChunk    = "user_script"
	libraryChunk = "user_function"

	// Recursion depth. Lua 5.1 stops at LUAI_MAXCALLS (20000 frames); we
	// stop at 8000, where gopher-lua used to build a traceback walking the
	// stack once per frame (quadratic; now off, see IncludeGoStackTrace).
	// The frame stack grows on demand.
	maxCallDepth = 8000
	// The value stack grows in steps up to 256K slots (4 MB), enough for
	// any script Redis runs (C functions there get at most 8000 slots), and
	// fails with an error beyond.
	maxRegistry      = 1 << 18
	registryGrowStep = 4096
)

// luaState is one Lua interpreter with Redis 7.0's sandbox: read-only
// globals and library tables (through proxies, since gopher-lua has no
// read-only tables), Lua 5.1 number formatting, and the redis, cjson,
// cmsgpack, bit and struct libraries.
type luaState struct {
	L      *lua.LState
	engine *Engine

	// realOf maps every read-only proxy to the table it fronts. A proxy is
	// empty; its metatable sends reads to the real table and writes to an
	// error, and the raw accessors (rawset, next, table.insert...) look
	// through it here.
	realOf      map[*lua.LTable]*lua.LTable
	proxies     []*lua.LTable // the keys of realOf, for a fast intact check
	globals     *lua.LTable   // the proxy scripts see as _G
	globalsMeta *lua.LTable   // its metatable; functions switch __index at load
	realGlobals *lua.LTable
	loadGlobals *lua.LTable // FUNCTION LOAD's restricted globals; nil for EVAL
	stringMeta  *lua.LTable // proxy of the string metatable, for getmetatable("")
	// metaProxies are read-only proxies of the metatables of protected
	// tables (the globals' error metatable), for getmetatable.
	metaProxies map[*lua.LTable]*lua.LTable
	// gcPause and gcStepMul are collectgarbage's settings, which Lua
	// returns when they change (gopher-lua has no collector of its own).
	gcPause, gcStepMul int64
	lastError          raisedError
	callSite           string // "chunk:line" of a recent function call, see tick
	// keepError is the message handler of every protected call: it returns
	// the error unchanged, and its presence spares gopher-lua building a
	// traceback for each error (it still does when the call stack is full,
	// since the handler then cannot run: that traceback costs time
	// quadratic in the depth, hence maxCallDepth).
	keepError *lua.LFunction

	// keys and argv are EVAL's KEYS and ARGV tables, refilled by each run.
	keys, argv *lua.LTable
	numbers    numberBoxes
	strings    stringBoxes

	run     *runContext // the script being run, nil between runs
	runCtx  runContext  // reused by every run, with its buffers
	loading *Library    // the library whose code FUNCTION LOAD is running
}

// runContext is what the redis library needs while a script runs.
type runContext struct {
	host     Host
	resp3    bool // the protocol chosen with redis.setresp
	funcName string
	scratch  []byte
	args     [][]byte
	ends     []int
	reply    []byte // the last redis.call's raw reply
}

func newLuaState(e *Engine, forFunctions bool) *luaState {
	L := lua.NewState(lua.Options{
		SkipOpenLibs:        true,
		CallStackSize:       maxCallDepth,
		MinimizeStackMemory: true,
		RegistrySize:        1024,
		RegistryMaxSize:     maxRegistry,
		RegistryGrowStep:    registryGrowStep,
		// No traceback when the call stack is full: gopher-lua walks the
		// whole stack once per frame to build it (seconds at maxCallDepth).
		IncludeGoStackTrace: false,
	})
	s := &luaState{L: L, engine: e, realOf: map[*lua.LTable]*lua.LTable{}, metaProxies: map[*lua.LTable]*lua.LTable{}, gcPause: 200, gcStepMul: 200}
	s.keepError = L.NewFunction(func(L *lua.LState) int { return 1 })
	self := L.NewUserData()
	self.Value = s
	L.G.Registry.RawSetString(stateKey, self)
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.CoroutineLibName, lua.OpenCoroutine},
	} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	g := L.G.Global
	s.realGlobals = g
	for _, name := range []string{"dofile", "loadfile", "print", "getfenv", "setfenv", "module", "require", "newproxy", "_printregs", "_GOPHER_LUA_VERSION"} {
		g.RawSetString(name, lua.LNil)
	}
	s.installBase(g)
	s.installString(g.RawGetString("string").(*lua.LTable))
	s.installTable(g.RawGetString("table").(*lua.LTable))
	s.installMath(g.RawGetString("math").(*lua.LTable))
	g.RawSetString("cjson", openCjson(L))
	g.RawSetString("cmsgpack", openCmsgpack(L))
	g.RawSetString("bit", openBit(L))
	g.RawSetString("struct", openStruct(L))
	g.RawSetString("redis", s.newRedisTable(forFunctions))
	g.RawSetString(concatHelper, L.NewFunction(luaConcat))
	g.RawSetString(tickHelper, L.NewFunction(s.tick))
	if !forFunctions {
		g.RawSetString("__redis__err__handler", L.NewFunction(handleError))
	}

	for _, name := range []string{"string", "table", "math", "coroutine", "redis", "cjson", "cmsgpack", "bit", "struct"} {
		g.RawSetString(name, s.protect(g.RawGetString(name).(*lua.LTable)))
	}
	// gopher-lua uses the string table as its own metatable; Lua has a
	// separate one, whose __index is the (protected) string table.
	s.realOf[g.RawGetString("string").(*lua.LTable)].RawSetString("__index", lua.LNil)
	strMeta := L.NewTable()
	strMeta.RawSetString("__index", g.RawGetString("string"))
	L.SetMetatable(lua.LString(""), strMeta)
	s.stringMeta = s.protect(strMeta)

	nonexistent := L.NewTable()
	nonexistent.RawSetString("__index", L.NewFunction(nonexistentGlobal))
	L.SetMetatable(g, nonexistent)
	s.globals = s.protect(g)
	s.globalsMeta = L.GetMetatable(s.globals).(*lua.LTable)
	g.RawSetString("_G", s.globals)
	if forFunctions {
		s.loadGlobals = s.newLoadGlobals(nonexistent)
	}
	return s
}

// protect returns a read-only proxy of real.
func (s *luaState) protect(real *lua.LTable) *lua.LTable {
	proxy := s.L.NewTable()
	mt := s.L.NewTable()
	mt.RawSetString("__index", real)
	mt.RawSetString("__newindex", s.L.NewFunction(readonlyWrite))
	s.L.SetMetatable(proxy, mt)
	s.realOf[proxy] = real
	s.proxies = append(s.proxies, proxy)
	return proxy
}

// protectedMeta returns the read-only proxy of metatable mt, one per table.
func (s *luaState) protectedMeta(mt *lua.LTable) *lua.LTable {
	proxy, ok := s.metaProxies[mt]
	if !ok {
		proxy = s.protect(mt)
		s.metaProxies[mt] = proxy
	}
	return proxy
}

// real returns the table behind a proxy, or t itself.
func (s *luaState) real(t *lua.LTable) (*lua.LTable, bool) {
	if r, ok := s.realOf[t]; ok {
		return r, true
	}
	return t, false
}

// intact reports whether no script managed to store into a proxy, so the
// state can be reused.
func (s *luaState) intact() bool {
	for _, proxy := range s.proxies {
		if k, _ := proxy.Next(lua.LNil); k != lua.LNil {
			return false
		}
	}
	return true
}

func readonlyWrite(L *lua.LState) int {
	L.RaiseError(errReadonly)
	return 0
}

// stateKey is where a state finds its luaState in the Lua registry, which
// coroutines share with their parent.
const stateKey = "\x00luaState"

func stateOf(L *lua.LState) *luaState {
	ud, _ := L.G.Registry.RawGetString(stateKey).(*lua.LUserData)
	s, _ := ud.Value.(*luaState)
	return s
}

// raisePlain raises a string error without position, as errors raised
// inside Redis's C functions are, recording the position for the reply.
func raisePlain(L *lua.LState, msg string) {
	stateOf(L).record(L, lua.LString(msg))
	L.Error(lua.LString(msg), 0)
}

func nonexistentGlobal(L *lua.LState) int {
	// A script can call it through getmetatable(_G).__index.
	if L.GetTop() != 2 {
		L.RaiseError("Wrong number of arguments to luaProtectedTableError")
	}
	name, ok := toStringArg(L.Get(2))
	if !ok {
		L.RaiseError("Second argument to luaProtectedTableError must be a string or number")
	}
	L.RaiseError("Script attempted to access nonexistent global variable '%s'", name)
	return 0
}

func raiseReadonly(L *lua.LState) { raisePlain(L, errReadonly) }

// checkpointBudget is how many checkpoints a script passes between two
// ticks; boxed once, as pushing a number allocates.
var checkpointBudget lua.LValue = lua.LNumber(100)

// tick is the checkpoints' call into Go: it stops a killed script, or
// grants the next budget. A script that catches the error with pcall meets
// it again at its next checkpoint. A function's entry checkpoint passes an
// argument; the tick then notes where the call was made, which is where a
// runaway recursion overflows the stack (see errorObject).
func (s *luaState) tick(L *lua.LState) int {
	if s.engine.killed.Load() {
		L.RaiseError(errKilled) // errorMessage words it as Redis does
	}
	if L.GetTop() > 0 {
		if source, line, ok := positionFrom(L, 2); ok {
			s.callSite = fmt.Sprintf("%s:%d", strings.TrimPrefix(source, "@"), line)
		}
	}
	L.Push(checkpointBudget)
	return 1
}

// setContext arms FUNCTION LOAD's deadline.
func (s *luaState) setContext(ctx context.Context) {
	if ctx == nil {
		s.L.RemoveContext()
		return
	}
	s.L.SetContext(ctx)
}

// Redis runs scripts under an error handler that records where an error
// happened. A handler needs a call frame, which a Lua stack overflow leaves
// none of in gopher-lua, so positions are recorded when errors are raised
// instead: error objects raised from Go get source and line fields, error()
// remembers its caller, and runtime errors carry "chunk:line:" in their text.

// callerPosition returns the source and current line of the innermost Lua
// function on the stack.
func callerPosition(L *lua.LState) (string, int, bool) { return positionFrom(L, 0) }

// positionFrom is callerPosition from the given stack level outwards.
func positionFrom(L *lua.LState, level int) (string, int, bool) {
	for ; ; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			return "", 0, false
		}
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err != nil || dbg.What == "G" || dbg.CurrentLine <= 0 {
			continue
		}
		return "@" + dbg.Source, dbg.CurrentLine, true
	}
}

// setPosition stamps an error table with where it was raised, as Redis's
// handler does.
func setPosition(L *lua.LState, t *lua.LTable) {
	if source, line, ok := callerPosition(L); ok {
		t.RawSetString("source", lua.LString(source))
		t.RawSetString("line", lua.LNumber(line))
	}
}

// raisedError is a non-table value error() raised, with its caller's line.
type raisedError struct {
	value  lua.LValue
	source string
	line   int
}

// luaError is error(): Lua 5.1's, plus the position bookkeeping above.
func (s *luaState) luaError(L *lua.LState) int {
	v := L.Get(1)
	level := int(optInt(L, 2, "error", 1))
	switch val := v.(type) {
	case *lua.LTable:
		setPosition(L, val)
		L.Error(val, 0)
	case lua.LString, lua.LNumber:
		// Lua adds the position to numbers too, and none when the level
		// points past the script (its caller is C).
		msg, _ := toStringArg(val)
		if _, ok := L.GetStack(level); ok && level > 0 {
			msg = L.Where(level) + " " + msg
		}
		v = lua.LString(msg)
	}
	s.record(L, v)
	L.Error(v, 0)
	return 0
}

func (s *luaState) record(L *lua.LState, v lua.LValue) {
	source, line, _ := callerPosition(L)
	s.lastError = raisedError{value: v, source: source, line: line}
}

var errorPosition = regexp.MustCompile(`^([^\n]*?):(\d+): `)

// errorMessage turns what a failed run raised into Redis's error text:
// "<err> script: <name>, on <source>:<line>." or, with no position known,
// just the message.
func (s *luaState) errorMessage(obj lua.LValue, funcName string) string {
	var msg, source string
	line := 0
	if t, ok := obj.(*lua.LTable); ok {
		msg, _ = toStringArg(t.RawGetString("err"))
		src, sok := t.RawGetString("source").(lua.LString)
		ln, lok := t.RawGetString("line").(lua.LNumber)
		if sok && lok {
			source, line = string(src), int(ln)
		}
	} else {
		text := "nil"
		if obj != lua.LNil {
			text = lua51RuntimeError(tostringValue(s.L, obj))
		}
		msg = "ERR " + text
		if last := s.lastError; last.value == obj && last.line > 0 {
			source, line = last.source, last.line
		} else if m := errorPosition.FindStringSubmatch(text); m != nil {
			source = "@" + m[1]
			line, _ = strconv.Atoi(m[2])
		}
	}
	if s.engine.killRequested() {
		msg = errKilled
	}
	if line > 0 {
		return fmt.Sprintf("%s script: %s, on %s:%d.", msg, funcName, source, line)
	}
	return msg
}

// handleError is the global __redis__err__handler scripts can see: it turns
// a value into an error table positioned at the caller.
func handleError(L *lua.LState) int {
	t, ok := L.Get(1).(*lua.LTable)
	if !ok {
		msg := "nil"
		if v := L.Get(1); v != lua.LNil {
			msg = tostringValue(L, v)
		}
		t = L.NewTable()
		t.RawSetString("err", lua.LString("ERR "+msg))
	}
	setPosition(L, t)
	L.Push(t)
	return 1
}

var (
	arithError   = regexp.MustCompile(`cannot perform \w+ operation between (\w+) and (\w+)$`)
	compareError = regexp.MustCompile(`attempt to compare (\w+) with (\w+)$`)
	indexError   = regexp.MustCompile(`attempt to index a non-table object\((\w+)\) with key '.*'$`)
)

// lua51RuntimeError rewords gopher-lua's runtime errors as Lua 5.1 does
// where the message has what Lua's needs. Lua also names the variable
// involved ("local 'x'") when it can; gopher-lua gives no way to know it.
func lua51RuntimeError(msg string) string {
	if m := arithError.FindStringSubmatchIndex(msg); m != nil {
		bad := msg[m[2]:m[3]] // the first operand that is not a number
		if bad == "number" {
			bad = msg[m[4]:m[5]]
		}
		return msg[:m[0]] + "attempt to perform arithmetic on a " + bad + " value"
	}
	if m := compareError.FindStringSubmatchIndex(msg); m != nil && msg[m[2]:m[3]] == msg[m[4]:m[5]] {
		return msg[:m[0]] + "attempt to compare two " + msg[m[2]:m[3]] + " values"
	}
	if m := indexError.FindStringSubmatchIndex(msg); m != nil {
		return msg[:m[0]] + "attempt to index a " + msg[m[2]:m[3]] + " value"
	}
	return msg
}

// tostringValue is Lua 5.1's tostring: __tostring, %.14g numbers, and
// "type: address" for reference types.
func tostringValue(L *lua.LState, v lua.LValue) string {
	switch v := v.(type) {
	case lua.LNumber:
		return luaNumberString(float64(v))
	case lua.LString:
		return string(v)
	case *lua.LUserData:
		if v == jsonNull {
			return "userdata: (nil)" // glibc's %p of the NULL light userdata
		}
	}
	if mm := L.GetMetaField(v, "__tostring"); mm != lua.LNil {
		L.Push(mm)
		L.Push(v)
		L.Call(1, 1)
		r := L.Get(-1)
		L.Pop(1)
		if s, ok := toStringArg(r); ok {
			return s
		}
		L.RaiseError("'__tostring' must return a string")
	}
	return v.String() // "table: 0x...", as Lua prints with %p
}
