package scripting

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	lua "github.com/yuin/gopher-lua"

	"github.com/keyhive/keyhive/resp"
)

// Host runs one redis.call/pcall for a running script. args is the command
// as Redis would receive it; resp3 tells the protocol the script selected
// with redis.setresp (false = RESP2). It appends the command's raw RESP
// reply to dst and returns it. Command-level errors (unknown command, arity,
// write in a read-only script, OOM...) come back as RESP error replies
// ("-ERR ..."), worded as Redis words them for scripts, e.g. "-ERR Unknown
// Redis command called from script".
type Host interface {
	Call(args [][]byte, resp3 bool, dst []byte) []byte
}

// WriteTracker is implemented by a Host that knows whether the script has
// performed a write; Running reports it so SCRIPT KILL can answer
// UNKILLABLE. Wrote is called from the goroutine asking, concurrently with
// the script's calls.
type WriteTracker interface{ Wrote() bool }

// ReplicationSetter is implemented by a Host that honours redis.set_repl
// (flags are ReplNone, ReplAOF, ReplReplica, ReplAll).
type ReplicationSetter interface{ SetRepl(flags int) }

// ACLChecker is implemented by a Host that answers redis.acl_check_cmd.
// errMsg non-empty raises that error in the script (e.g. "Invalid command
// passed to redis.acl_check_cmd()"). Without it every command is allowed.
type ACLChecker interface {
	CheckACL(args [][]byte) (allowed bool, errMsg string)
}

// Flags are a script's or function's flags, from the EVAL shebang or
// redis.register_function. The server enforces them.
type Flags uint8

const (
	FlagNoWrites Flags = 1 << iota
	FlagAllowOOM
	FlagAllowStale
	FlagNoCluster
	FlagAllowCrossSlotKeys
)

var flagNames = []struct {
	flag Flags
	name string
}{
	{FlagNoWrites, "no-writes"},
	{FlagAllowOOM, "allow-oom"},
	{FlagAllowStale, "allow-stale"},
	{FlagNoCluster, "no-cluster"},
	{FlagAllowCrossSlotKeys, "allow-cross-slot-keys"},
}

func parseFlag(name string) (Flags, bool) {
	for _, f := range flagNames {
		if f.name == name {
			return f.flag, true
		}
	}
	return 0, false
}

// Names lists the flags as Redis spells them, in Redis's order.
func (f Flags) Names() []string {
	var names []string
	for _, fl := range flagNames {
		if f&fl.flag != 0 {
			names = append(names, fl.name)
		}
	}
	return names
}

// Script is a cached EVAL script. Its compiled form is kept while it is
// among the scripts run lately (memory.go); otherwise Run compiles it again
// from Body.
type Script struct {
	SHA   string // lowercase hex SHA1 of Body
	Body  []byte
	Flags Flags
	// Shebang is false for scripts without "#!lua": Redis runs those in
	// compatibility mode (writes allowed whatever the keys' flags, OOM
	// checked only on the first write).
	Shebang bool
	// readsOnly: the script assigns no global, so it can run with the
	// globals table itself as its environment rather than the read-only
	// proxy (a third of the lookups): nothing in it can write there, and
	// _G, loadstring and coroutines still hand out the proxy.
	readsOnly bool
	// used: run since the compiled cache's hand last passed it.
	used          bool
	proto         *lua.FunctionProto // nil when not kept compiled
	fn            *lua.LFunction     // proto's closure in the EVAL state, made at the first run
	compiledBytes int64              // proto's estimated size
}

// Engine holds the script cache, the function libraries and the two Lua
// states Redis has (one for EVAL, one for functions), reused across runs.
// Scripts run one at a time (the server serializes them); Kill and Running
// may be called from any goroutine.
type Engine struct {
	// Logger receives redis.log lines (level LogDebug..LogWarning).
	Logger func(level int, msg string)

	scripts   map[string]*Script
	compiled  compiledScripts
	evalState *luaState
	fnState   *luaState
	libs      libraries
	rand      rand48
	// errorCounted is ErrorCounted's answer for the last run.
	errorCounted bool

	// cacheMu guards scripts, libs and the memory figures against
	// DeclaredScriptFlags, DeclaredFunctionFlags and MemoryStats, which the
	// server calls before serializing.
	cacheMu     sync.RWMutex
	scriptBytes int64 // used_memory_scripts_eval
	evalVMBytes int64 // used_memory_vm_eval
	fnStateLive bool

	mu       sync.Mutex
	running  *runContext // set while a script runs
	function bool
	// killed stops the running script at its next checkpoint; read there
	// without taking mu.
	killed atomic.Bool
	// wasKilled: the last run ended by Kill (under mu).
	wasKilled bool
}

// NewEngine returns an engine with no scripts or libraries.
func NewEngine() *Engine {
	return &Engine{scripts: map[string]*Script{}, libs: newLibraries(), rand: rand48{x: rand48Initial}}
}

// SHA1Hex is the script cache key for body.
func SHA1Hex(body []byte) string {
	sum := sha1.Sum(body)
	return hex.EncodeToString(sum[:])
}

// LoadScript compiles body and caches it (EVAL, SCRIPT LOAD). Errors carry
// Redis's text without the leading '-', e.g. "ERR Error compiling script
// (new function): user_script:1: ...".
func (e *Engine) LoadScript(body []byte) (string, error) {
	sha := SHA1Hex(body)
	if _, ok := e.scripts[sha]; ok {
		return sha, nil
	}
	flags, shebang, err := parseShebang(body)
	if err != nil {
		return "", err
	}
	proto, err := compileScript(body, shebang)
	if err != nil {
		return "", err
	}
	s := &Script{SHA: sha, Body: body, Flags: flags, Shebang: shebang, readsOnly: !setsGlobals(proto)}
	e.cacheMu.Lock()
	e.scripts[sha] = s
	e.scriptBytes += scriptBytes(s)
	e.cacheMu.Unlock()
	e.keepCompiled(s, proto)
	return sha, nil
}

// compileScript compiles an EVAL script's body.
func compileScript(body []byte, shebang bool) (*lua.FunctionProto, error) {
	src := body
	if shebang {
		// Keep line numbers: the shebang line becomes a comment.
		src = append([]byte("--"), body[2:]...)
	}
	proto, err := compileChunk(src, evalChunk)
	if err != nil {
		return nil, errors.New("ERR Error compiling script (new function): " + err.Error())
	}
	return proto, nil
}

// keepCompiled keeps s's compiled form, within the budget.
func (e *Engine) keepCompiled(s *Script, proto *lua.FunctionProto) {
	e.compiled.keep(s, proto)
	e.updateEvalVM()
}

func (e *Engine) updateEvalVM() {
	n := e.compiled.bytes
	if e.evalState != nil {
		n += luaStateBytes
	}
	e.cacheMu.Lock()
	e.evalVMBytes = n
	e.cacheMu.Unlock()
}

// parseShebang reads "#!lua flags=a,b" as Redis 7.0 does.
func parseShebang(body []byte) (Flags, bool, error) {
	if len(body) < 2 || body[0] != '#' || body[1] != '!' {
		return 0, false, nil
	}
	nl := strings.IndexByte(string(body), '\n')
	if nl < 0 {
		return 0, false, errors.New("ERR Invalid script shebang")
	}
	parts := strings.Fields(string(body[:nl]))
	if len(parts) == 0 || parts[0] != "#!lua" {
		engine := "#!"
		if len(parts) > 0 {
			engine = parts[0]
		}
		return 0, false, fmt.Errorf("ERR Unexpected engine in script shebang: %s", engine)
	}
	var flags Flags
	for _, part := range parts[1:] {
		if !strings.HasPrefix(part, "flags=") {
			return 0, false, fmt.Errorf("ERR Unknown lua shebang option: %s", part)
		}
		if part[6:] == "" {
			continue
		}
		for _, name := range strings.Split(part[6:], ",") {
			f, ok := parseFlag(name)
			if !ok {
				return 0, false, fmt.Errorf("ERR Unexpected flag in script shebang: %s", name)
			}
			flags |= f
		}
	}
	return flags, true, nil
}

// Script looks a cached script up by SHA1, in either case as Redis accepts.
func (e *Engine) Script(sha string) (*Script, bool) { return lookupScript(e.scripts, sha) }

// ScriptBySHA is Script for EVALSHA's argument, without converting it.
func (e *Engine) ScriptBySHA(sha []byte) (*Script, bool) { return lookupScript(e.scripts, sha) }

func lookupScript[T string | []byte](scripts map[string]*Script, sha T) (*Script, bool) {
	var lower [40]byte
	if len(sha) != len(lower) {
		return nil, false
	}
	for i := range lower {
		c := sha[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	s, ok := scripts[string(lower[:])]
	return s, ok
}

// DeclaredScriptFlags returns the flags the script of an EVAL (arg is the
// body) or EVALSHA (arg is the SHA1) declares, as Redis reads them to decide
// whether the command may write or run out of memory: the cached script's,
// or for an EVAL of a script not cached yet its shebang's. declared is
// false without a shebang (compatibility mode), an invalid one or an
// unknown SHA1. It may run concurrently with the other methods.
func (e *Engine) DeclaredScriptFlags(arg []byte, bySHA bool) (flags Flags, declared bool) {
	sha := arg
	if !bySHA {
		sha = []byte(SHA1Hex(arg))
	}
	e.cacheMu.RLock()
	s, ok := lookupScript(e.scripts, sha)
	e.cacheMu.RUnlock()
	switch {
	case ok:
		return s.Flags, s.Shebang
	case bySHA:
		return 0, false
	}
	flags, shebang, err := parseShebang(arg)
	return flags, shebang && err == nil
}

// ScriptExists reports whether sha is cached (SCRIPT EXISTS).
func (e *Engine) ScriptExists(sha string) bool {
	_, ok := e.Script(sha)
	return ok
}

// FlushScripts empties the script cache and starts a fresh EVAL state
// (SCRIPT FLUSH), as Redis recreates its Lua interpreter.
func (e *Engine) FlushScripts() {
	e.cacheMu.Lock()
	e.scripts = map[string]*Script{}
	e.scriptBytes = 0
	e.cacheMu.Unlock()
	e.compiled.reset()
	if e.evalState != nil {
		e.evalState.L.Close()
		e.evalState = nil
	}
	e.updateEvalVM()
}

// Run executes a cached script with KEYS and ARGV and writes its reply, or
// its error reply, to w in w's protocol.
func (e *Engine) Run(s *Script, keys, argv [][]byte, host Host, w *resp.Writer) {
	if e.evalState == nil {
		e.evalState = newLuaState(e, false)
		e.updateEvalVM()
	}
	st := e.evalState
	// A script run again stays compiled (memory.go); its first run does not
	// count, or every one-off EVAL would look hot.
	s.used = s.fn != nil
	if s.fn == nil {
		if s.proto == nil {
			proto, err := compileScript(s.Body, s.Shebang)
			if err != nil { // it compiled when it was cached
				w.Error(err.Error())
				return
			}
			e.keepCompiled(s, proto)
		}
		s.fn = st.L.NewFunctionFromProto(s.proto)
		s.fn.Env = st.globals
		if s.readsOnly {
			s.fn.Env = st.realGlobals
		}
	}
	st.setArray("KEYS", &st.keys, keys)
	st.setArray("ARGV", &st.argv, argv)
	ok := e.execute(st, s.fn, nil, s.SHA, host, w, false)
	if !ok {
		st.L.Close()
		e.evalState = nil
		e.compiled.dropClosures() // bound to the closed state
		e.updateEvalVM()
		return
	}
	if argBytes(keys)+argBytes(argv) > keepArgsMax {
		// Large arguments are not kept alive until the next run.
		st.keys, st.argv = nil, nil
		st.realGlobals.RawSetString("KEYS", lua.LNil)
		st.realGlobals.RawSetString("ARGV", lua.LNil)
	}
}

// setsGlobals reports whether p, or a function in it, assigns a global.
func setsGlobals(p *lua.FunctionProto) bool {
	for _, inst := range p.Code {
		if int(inst>>26) == lua.OP_SETGLOBAL { // the opcode's bits
			return true
		}
	}
	for _, child := range p.FunctionPrototypes {
		if setsGlobals(child) {
			return true
		}
	}
	return false
}

// keepArgsMax is the size of arguments up to which KEYS and ARGV stay in
// the state between runs, for the next run to refill.
const keepArgsMax = 64 << 10

func argBytes(items [][]byte) int {
	n := 0
	for _, it := range items {
		n += len(it)
	}
	return n
}

// setArray makes the global name (KEYS or ARGV) the array of items,
// refilling *t, the table it held after the last run. Scripts cannot
// assign the global itself (the globals are read-only), so it is set again
// only when the table is new.
func (s *luaState) setArray(name string, t **lua.LTable, items [][]byte) {
	if refilled := refillArray(s.L, *t, items); refilled != *t {
		*t = refilled
		s.realGlobals.RawSetString(name, refilled)
	}
}

// refillArray returns t holding exactly items as strings, reusing t and
// the strings it holds that are equal (scripts are often run with the same
// arguments), or a new table when the last run left t with more than an
// array (a metatable, other keys) that refilling would not undo.
func refillArray(L *lua.LState, t *lua.LTable, items [][]byte) *lua.LTable {
	if t == nil || !plainArray(t) {
		t = L.CreateTable(len(items), 0)
	}
	old := t.Len()
	// The items that changed share one allocation for their bytes.
	var small [16]int
	changed, size := small[:0], 0
	for i, it := range items {
		if s, ok := t.RawGetInt(i + 1).(lua.LString); !ok || string(s) != string(it) {
			changed = append(changed, i)
			size += len(it)
		}
	}
	buf := make([]byte, 0, size)
	for _, i := range changed {
		buf = append(buf, items[i]...)
	}
	all := unsafe.String(unsafe.SliceData(buf), len(buf)) // buf is never written again
	for _, i := range changed {
		n := len(items[i])
		t.RawSetInt(i+1, lua.LString(all[:n]))
		all = all[n:]
	}
	for i := len(items) + 1; i <= old; i++ {
		t.RawSetInt(i, lua.LNil)
	}
	return t
}

// plainArray reports whether t has no metatable and no keys beyond its
// array part 1..#t.
func plainArray(t *lua.LTable) bool {
	if t.Metatable != lua.LNil {
		return false
	}
	var after lua.LValue = lua.LNil
	if n := t.Len(); n > 0 {
		after = numberValue(float64(n)) // Next goes on after the key n
	}
	k, _ := t.Next(after)
	return k == lua.LNil
}

func stringArray(L *lua.LState, items [][]byte) *lua.LTable {
	t := L.CreateTable(len(items), 0)
	for _, it := range items {
		t.Append(lua.LString(it))
	}
	return t
}

// execute calls fn with args under the error handler and kill switch and
// writes the reply. It returns false when the state must not be reused: a
// script wrote through the sandbox, or the engine recovered from a panic.
func (e *Engine) execute(st *luaState, fn *lua.LFunction, args []lua.LValue, funcName string, host Host, w *resp.Writer, isFunction bool) (reusable bool) {
	run := &st.runCtx
	run.host, run.funcName, run.resp3 = host, funcName, false
	e.mu.Lock()
	e.running, e.function = run, isFunction
	e.killed.Store(false)
	e.mu.Unlock()
	st.run = run
	L := st.L
	start := len(w.B)
	defer func() {
		if r := recover(); r != nil {
			w.B = w.B[:start]
			w.Error(fmt.Sprintf("ERR Error running script %s, %.100v", funcName, r))
			reusable = false
		}
		L.SetTop(0)
		e.mu.Lock()
		st.run, run.host = nil, nil // under mu: Running reads the host
		e.running = nil
		e.wasKilled = e.killed.Load()
		e.killed.Store(false)
		e.mu.Unlock()
	}()
	L.Push(fn)
	for _, a := range args {
		L.Push(a)
	}
	st.lastError, st.callSite = raisedError{}, ""
	var result lua.LValue
	if err := L.PCall(len(args), 1, st.keepError); err != nil {
		result = st.errorObject(err)
		w.Error(st.errorMessage(result, funcName))
	} else {
		result = L.Get(-1)
		(&replyWriter{w: w, scriptResp3: run.resp3}).write(result, 2)
	}
	e.errorCounted = false
	if t, ok := result.(*lua.LTable); ok {
		_, isErr := t.RawGetString("err").(lua.LString)
		e.errorCounted = isErr && lua.LVAsBool(t.RawGetString("ignore_error_stats_update"))
	}
	return st.intact()
}

// errorObject is the value a failed PCall raised. gopher-lua reports a
// full call stack as a panic without position; it becomes Lua's "stack
// overflow" error at the call a tick saw last (a runaway recursion makes
// the same call over and over).
func (s *luaState) errorObject(err error) lua.LValue {
	var apiErr *lua.ApiError
	if !errors.As(err, &apiErr) || apiErr.Object == nil {
		return lua.LString(err.Error())
	}
	if apiErr.Object == lua.LString("lua callstack overflow") {
		if s.callSite == "" {
			return lua.LString("stack overflow")
		}
		return lua.LString(s.callSite + ": stack overflow")
	}
	return apiErr.Object
}

// ErrorCounted reports whether the error reply of the last Run or Call
// relays an error reply of a command the script ran, which the server
// counted already: Redis then leaves its error statistics alone
// (ignore_error_stats_update).
func (e *Engine) ErrorCounted() bool { return e.errorCounted }

// Kill stops the running script at its next checkpoint (SCRIPT KILL,
// FUNCTION KILL); the script's reply becomes Redis's "Script killed by
// user" error. It returns false when nothing is running. Whether a kill is
// allowed (UNKILLABLE after a write, SCRIPT vs FUNCTION KILL) is the
// server's decision, informed by Running.
func (e *Engine) Kill() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.running == nil {
		return false
	}
	e.killed.Store(true)
	return true
}

// Running reports whether a script runs, whether it is a function (FCALL)
// rather than EVAL, and whether it has written (when its Host implements
// WriteTracker).
func (e *Engine) Running() (running, isFunction, wrote bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.running == nil {
		return false, false, false
	}
	if t, ok := e.running.host.(WriteTracker); ok {
		wrote = t.Wrote()
	}
	return true, e.function, wrote
}

func (e *Engine) killRequested() bool { return e.killed.Load() }

// WasKilled reports whether Kill stopped the last Run or Call.
func (e *Engine) WasKilled() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.wasKilled
}
