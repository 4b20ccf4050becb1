package scripting

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/keyhive/keyhive/glob"
	"github.com/keyhive/keyhive/resp"
)

// loadTimeout bounds a library's top-level code, as Redis does (500 ms).
const loadTimeout = 500 * time.Millisecond

// Library is a loaded FUNCTION library.
type Library struct {
	Name      string
	Code      []byte // the whole FUNCTION LOAD payload, shebang included
	Functions map[string]*Function
	vmBytes   int64 // the compiled code's estimated size
}

// Function is one function registered by a library.
type Function struct {
	Name        string
	Description *string // nil when none was given
	Flags       Flags
	Library     *Library
	callback    *lua.LFunction
}

// libraries indexes the loaded libraries by name and their functions by
// name in lower case: function names are case-insensitive, as in Redis
// (FCALL myfunc calls MyFunc, and the two clash), library names are not.
type libraries struct {
	byName    map[string]*Library
	functions map[string]*Function
}

// functionKey is a function's key in libraries.functions.
func functionKey(name string) string { return strings.ToLower(name) }

func newLibraries() libraries {
	return libraries{byName: map[string]*Library{}, functions: map[string]*Function{}}
}

func (ls *libraries) link(lib *Library) {
	ls.byName[lib.Name] = lib
	for name, f := range lib.Functions {
		ls.functions[functionKey(name)] = f
	}
}

func (ls *libraries) unlink(lib *Library) {
	delete(ls.byName, lib.Name)
	for name := range lib.Functions {
		delete(ls.functions, functionKey(name))
	}
}

// join adds src's libraries to ls, replacing same-named ones when replace
// is set, and fails without changes on any name collision (libraryJoin).
func (ls *libraries) join(src libraries, replace bool) error {
	var replaced []*Library
	restore := func() {
		for _, old := range replaced {
			ls.link(old)
		}
	}
	for _, name := range sortedNames(src.byName) {
		if old, ok := ls.byName[name]; ok {
			if !replace {
				restore()
				return fmt.Errorf("ERR Library %s already exists", name)
			}
			ls.unlink(old)
			replaced = append(replaced, old)
		}
	}
	for _, name := range sortedNames(src.functions) {
		if _, ok := ls.functions[name]; ok {
			restore()
			return fmt.Errorf("ERR Function %s already exists", src.functions[name].Name)
		}
	}
	for _, lib := range src.byName {
		ls.link(lib)
	}
	return nil
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// validName is Redis's functionsVerifyName: letters, digits, underscores.
func validName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// libraryMetadata parses the "#!lua name=<lib>" first line.
func libraryMetadata(code []byte) (name string, rest []byte, err error) {
	if !strings.HasPrefix(string(code), "#!") {
		return "", nil, errors.New("ERR Missing library metadata")
	}
	nl := strings.IndexByte(string(code), '\n')
	if nl < 0 {
		return "", nil, errors.New("ERR Invalid library metadata")
	}
	// Split as Redis splits it (sdssplitargs): quotes group and are removed.
	words, ok := resp.SplitArgs(code[:nl], nil)
	if !ok || len(words) == 0 {
		return "", nil, errors.New("ERR Invalid library metadata")
	}
	parts := make([]string, len(words))
	for i, w := range words {
		parts[i] = string(w)
	}
	engine := strings.TrimPrefix(parts[0], "#!")
	haveName := false
	for _, part := range parts[1:] {
		if len(part) >= 5 && strings.EqualFold(part[:5], "name=") {
			if haveName {
				return "", nil, errors.New("ERR Invalid metadata value, name argument was given multiple times")
			}
			name, haveName = part[5:], true
			continue
		}
		return "", nil, fmt.Errorf("ERR Invalid metadata value given: %s", part)
	}
	if !haveName {
		return "", nil, errors.New("ERR Library name was not given")
	}
	if !validName(name) {
		return "", nil, errors.New("ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long")
	}
	if !strings.EqualFold(engine, "lua") {
		return "", nil, fmt.Errorf("ERR Engine '%s' not found", engine)
	}
	// The code keeps the shebang's newline so line numbers stay right.
	return name, code[nl:], nil
}

// LoadLibrary is FUNCTION LOAD [REPLACE]: it runs the library's code and
// registers its functions, returning the library name. Errors carry Redis's
// text without the leading '-'.
func (e *Engine) LoadLibrary(code []byte, replace bool) (string, error) {
	name, _, err := libraryMetadata(code)
	if err != nil {
		return "", err
	}
	old := e.libs.byName[name]
	if old != nil && !replace {
		return "", fmt.Errorf("ERR Library '%s' already exists", name)
	}
	lib, err := e.createLibrary(code)
	if err != nil {
		return "", err
	}
	e.cacheMu.Lock()
	defer e.cacheMu.Unlock()
	if old != nil {
		e.libs.unlink(old)
	}
	for _, fname := range sortedNames(lib.Functions) {
		if _, clash := e.libs.functions[functionKey(fname)]; clash {
			if old != nil {
				e.libs.link(old)
			}
			return "", fmt.Errorf("ERR Function %s already exists", fname)
		}
	}
	e.libs.link(lib)
	return name, nil
}

// createLibrary compiles and runs a library's code in the functions state
// with the load-time globals (only redis.register_function, redis.log and
// the constants), collecting the functions it registers.
func (e *Engine) createLibrary(code []byte) (*Library, error) {
	name, body, err := libraryMetadata(code)
	if err != nil {
		return nil, err
	}
	proto, err := compileChunk(body, libraryChunk)
	if err != nil {
		return nil, errors.New("ERR Error compiling function: " + err.Error())
	}
	st := e.functionsState()
	lib := &Library{Name: name, Code: code, Functions: map[string]*Function{}, vmBytes: protoBytes(proto)}
	L := st.L
	fn := L.NewFunctionFromProto(proto)
	fn.Env = st.globals
	ctx, cancel := context.WithTimeout(context.Background(), loadTimeout)
	defer cancel()
	st.loading = lib
	st.globalsMeta.RawSetString("__index", st.loadGlobals)
	st.setContext(ctx)
	defer func() {
		st.setContext(nil)
		st.globalsMeta.RawSetString("__index", st.realGlobals)
		st.loading = nil
		L.SetTop(0)
	}()
	L.Push(fn)
	if err := L.PCall(0, 0, st.keepError); err != nil {
		obj := st.errorObject(err)
		// The VM raises the deadline as an error at the instruction it
		// stopped; other errors keep their text even if the deadline has
		// passed since (a stack overflow's traceback takes a while).
		msg := "ERR FUNCTION LOAD timeout"
		if str, ok := obj.(lua.LString); !ok || !strings.HasSuffix(string(str), context.DeadlineExceeded.Error()) {
			// Redis reports the error object's message, without position.
			msg = st.errorMessage(obj, "")
			if i := strings.Index(msg, " script: , on "); i >= 0 {
				msg = msg[:i]
			}
		}
		return nil, errors.New("ERR Error registering functions: " + msg)
	}
	if len(lib.Functions) == 0 {
		return nil, errors.New("ERR No functions registered")
	}
	return lib, nil
}

func (e *Engine) functionsState() *luaState {
	if e.fnState == nil {
		e.fnState = newLuaState(e, true)
		e.setFnStateLive(true)
	}
	return e.fnState
}

// newLoadGlobals builds the globals a library's code sees while loading.
func (s *luaState) newLoadGlobals(nonexistent *lua.LTable) *lua.LTable {
	L := s.L
	redis := L.NewTable()
	redis.RawSetString("register_function", L.NewFunction(s.registerFunction))
	redis.RawSetString("log", L.NewFunction(s.redisLog))
	setVersionAndLevels(redis)
	L.SetMetatable(redis, nonexistent) // redis.call at load time: a nonexistent global, as Redis says
	g := L.NewTable()
	g.RawSetString("redis", s.protect(redis))
	g.RawSetString(concatHelper, s.realGlobals.RawGetString(concatHelper))
	g.RawSetString(tickHelper, s.realGlobals.RawGetString(tickHelper))
	L.SetMetatable(g, nonexistent)
	return g
}

// registerFunction is redis.register_function, positional (name, callback)
// or named ({function_name=, callback=, flags=, description=}).
func (s *luaState) registerFunction(L *lua.LState) int {
	lib := s.loading
	if lib == nil {
		raise(L, "redis.register_function can only be called on FUNCTION LOAD command")
	}
	f, errMsg := readRegisterArgs(L)
	if errMsg != "" {
		raise(L, errMsg)
	}
	if !validName(f.Name) { // Redis's text says library for functions too
		raise(L, "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long")
	}
	if _, dup := lib.Functions[f.Name]; dup {
		raise(L, "Function already exists in the library")
	}
	f.Library = lib
	lib.Functions[f.Name] = f
	return 0
}

func readRegisterArgs(L *lua.LState) (*Function, string) {
	switch L.GetTop() {
	case 1:
		return readNamedRegisterArgs(L)
	case 2:
		name, ok := toStringArg(L.Get(1))
		if !ok {
			return nil, "first argument to redis.register_function must be a string"
		}
		cb, ok := L.Get(2).(*lua.LFunction)
		if !ok {
			return nil, "second argument to redis.register_function must be a function"
		}
		return &Function{Name: name, callback: cb}, ""
	}
	return nil, "wrong number of arguments to redis.register_function"
}

func readNamedRegisterArgs(L *lua.LState) (*Function, string) {
	t, ok := L.Get(1).(*lua.LTable)
	if !ok {
		return nil, "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments)."
	}
	f := &Function{}
	haveName := false
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		key, ok := toStringArg(k)
		if !ok {
			return nil, "named argument key given to redis.register_function is not a string"
		}
		switch strings.ToLower(key) {
		case "function_name":
			if f.Name, ok = toStringArg(v); !ok {
				return nil, "function_name argument given to redis.register_function must be a string"
			}
			haveName = true
		case "description":
			desc, ok := toStringArg(v)
			if !ok {
				return nil, "description argument given to redis.register_function must be a string"
			}
			f.Description = &desc
		case "callback":
			if f.callback, ok = v.(*lua.LFunction); !ok {
				return nil, "callback argument given to redis.register_function must be a function"
			}
		case "flags":
			ft, ok := v.(*lua.LTable)
			if !ok {
				return nil, "flags argument to redis.register_function must be a table representing function flags"
			}
			if f.Flags, ok = readFunctionFlags(ft); !ok {
				return nil, "unknown flag given"
			}
		default:
			return nil, "unknown argument given to redis.register_function"
		}
	}
	if !haveName {
		return nil, "redis.register_function must get a function name argument"
	}
	if f.callback == nil {
		return nil, "redis.register_function must get a callback argument"
	}
	return f, ""
}

func readFunctionFlags(t *lua.LTable) (Flags, bool) {
	var flags Flags
	for i := 1; ; i++ {
		v := t.RawGetInt(i)
		if v == lua.LNil {
			return flags, true
		}
		name, ok := toStringArg(v)
		if !ok {
			return 0, false
		}
		f, ok := parseFlag(strings.ToLower(name))
		if !ok {
			return 0, false
		}
		flags |= f
	}
}

// DeclaredFunctionFlags returns the flags of FCALL's function, found
// reports whether it exists. It may run concurrently with the other
// methods.
func (e *Engine) DeclaredFunctionFlags(name []byte) (flags Flags, found bool) {
	e.cacheMu.RLock()
	defer e.cacheMu.RUnlock()
	f, ok := e.libs.functions[functionKey(string(name))]
	if !ok {
		return 0, false
	}
	return f.Flags, true
}

// Function looks a function up by name for FCALL/FCALL_RO.
func (e *Engine) Function(name string) (*Function, bool) {
	f, ok := e.libs.functions[functionKey(name)]
	return f, ok
}

// Call runs a function with its keys and arguments (FCALL) and writes its
// reply, or error reply, to w in w's protocol.
func (e *Engine) Call(f *Function, keys, argv [][]byte, host Host, w *resp.Writer) {
	st := e.functionsState()
	args := []lua.LValue{stringArray(st.L, keys), stringArray(st.L, argv)}
	if !e.execute(st, f.callback, args, f.Name, host, w, true) {
		// A library's closures belong to this state: rebuild it and reload all.
		e.fnState.L.Close()
		e.fnState = nil
		e.setFnStateLive(false)
		e.reloadLibraries()
	}
}

func (e *Engine) setFnStateLive(live bool) {
	e.cacheMu.Lock()
	e.fnStateLive = live
	e.cacheMu.Unlock()
}

// reloadLibraries recreates every library in a fresh functions state.
func (e *Engine) reloadLibraries() {
	old := e.libs
	libs := newLibraries()
	for _, name := range sortedNames(old.byName) {
		if lib, err := e.createLibrary(old.byName[name].Code); err == nil {
			libs.link(lib)
		}
	}
	e.cacheMu.Lock()
	e.libs = libs
	e.cacheMu.Unlock()
}

// DeleteLibrary is FUNCTION DELETE.
func (e *Engine) DeleteLibrary(name string) error {
	lib, ok := e.libs.byName[name]
	if !ok {
		return errors.New("ERR Library not found")
	}
	e.cacheMu.Lock()
	e.libs.unlink(lib)
	e.cacheMu.Unlock()
	return nil
}

// FlushFunctions is FUNCTION FLUSH: every library goes, with the state
// their closures live in.
func (e *Engine) FlushFunctions() {
	e.cacheMu.Lock()
	e.libs = newLibraries()
	e.cacheMu.Unlock()
	if e.fnState != nil {
		e.fnState.L.Close()
		e.fnState = nil
		e.setFnStateLive(false)
	}
}

// Libraries returns the loaded libraries sorted by name.
func (e *Engine) Libraries() []*Library {
	libs := make([]*Library, 0, len(e.libs.byName))
	for _, name := range sortedNames(e.libs.byName) {
		libs = append(libs, e.libs.byName[name])
	}
	return libs
}

// Counts returns the numbers of libraries and functions (FUNCTION STATS).
func (e *Engine) Counts() (libraries, functions int) {
	e.cacheMu.RLock() // FUNCTION STATS runs without the server's lock
	defer e.cacheMu.RUnlock()
	return len(e.libs.byName), len(e.libs.functions)
}

// WriteFunctionList writes FUNCTION LIST's reply: libraries whose name
// matches pattern (all when pattern is nil, case-insensitive glob), with
// their code when withCode is set.
func (e *Engine) WriteFunctionList(w *resp.Writer, pattern *string, withCode bool) {
	var libs []*Library
	for _, lib := range e.Libraries() {
		if pattern == nil || glob.MatchString(*pattern, lib.Name, true) {
			libs = append(libs, lib)
		}
	}
	w.Array(len(libs))
	for _, lib := range libs {
		if withCode {
			w.Map(4)
		} else {
			w.Map(3)
		}
		w.BulkString("library_name")
		w.BulkString(lib.Name)
		w.BulkString("engine")
		w.BulkString("LUA")
		w.BulkString("functions")
		w.Array(len(lib.Functions))
		for _, name := range sortedNames(lib.Functions) {
			f := lib.Functions[name]
			w.Map(3)
			w.BulkString("name")
			w.BulkString(f.Name)
			w.BulkString("description")
			if f.Description != nil {
				w.BulkString(*f.Description)
			} else {
				w.Null()
			}
			w.BulkString("flags")
			names := f.Flags.Names()
			w.Set(len(names))
			for _, n := range names {
				w.Simple(n)
			}
		}
		if withCode {
			w.BulkString("library_code")
			w.Bulk(lib.Code)
		}
	}
}
