package server

import (
	"bytes"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/keyhive/keyhive/cmdspec"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/resp"
	"github.com/keyhive/keyhive/scripting"
)

// Scripts and functions (EVAL, FCALL and friends) run on the scripting
// package's engine. A script may reach keys it does not declare (seed 002
// does), so it runs under the exclusive lock: atomic as in Redis, and one at
// a time, which the engine requires. Commands that change the script cache
// or the libraries take it too, so that readers (SCRIPT EXISTS, FUNCTION
// LIST) under the shared lock never see a change halfway. Its redis.call
// commands run through scriptHost as commands of the server's script client.

func init() {
	bind("eval", func(x *Ctx) { evalCommand(x, false, false) })
	bind("evalsha", func(x *Ctx) { evalCommand(x, true, false) })
	bind("eval_ro", func(x *Ctx) { evalCommand(x, false, true) })
	bind("evalsha_ro", func(x *Ctx) { evalCommand(x, true, true) })
	bind("fcall", func(x *Ctx) { fcallCommand(x, false) })
	bind("fcall_ro", func(x *Ctx) { fcallCommand(x, true) })
	bindSub("script", "load", scriptLoad)
	bindSub("script", "exists", scriptExists)
	bindSub("script", "flush", scriptFlush)
	bindSub("script", "kill", scriptKill)
	bindSub("script", "help", scriptHelp)
	bindSub("script", "debug", scriptDebug)
	bindSub("function", "load", functionLoad)
	bindSub("function", "delete", functionDelete)
	bindSub("function", "flush", functionFlush)
	bindSub("function", "list", functionList)
	bindSub("function", "dump", functionDump)
	bindSub("function", "restore", functionRestore)
	bindSub("function", "stats", functionStats)
	bindSub("function", "kill", functionKill)
	bindSub("function", "help", functionHelp)
}

// scriptArgs splits KEYS and ARGV, replying Redis's errors for a bad
// numkeys (notInt when it is no integer: EVAL's and FCALL's differ).
func (x *Ctx) scriptArgs(notInt string) (keys, argv [][]byte, ok bool) {
	n, ok := strnum.ParseInt(x.Args[2])
	switch {
	case !ok:
		x.W.Error(notInt)
	case n > int64(len(x.Args)-3):
		x.W.Error("ERR Number of keys can't be greater than number of args")
	case n < 0:
		x.W.Error("ERR Number of keys can't be negative")
	default:
		return x.Args[3 : 3+n], x.Args[3+n:], true
	}
	return nil, nil, false
}

// scriptDeniesOOM reports whether a script command is refused when used
// memory is over maxmemory, before it runs. Redis derives EVAL's and
// FCALL's flags from the script's: one that declares flags (a shebang; a
// function always does) denies OOM unless it has allow-oom or no-writes.
// A script without a shebang runs, its commands checked as it goes
// (scriptHost.Call).
func (s *Server) scriptDeniesOOM(cmd *Command, args [][]byte) bool {
	flags, declared := s.declaredFlags(cmd, args)
	return declared && flags&(scripting.FlagAllowOOM|scripting.FlagNoWrites) == 0
}

// declaredFlags are the flags the script or function an EVAL or FCALL runs
// declares, and whether it declares any (a shebang; a function always does).
func (s *Server) declaredFlags(cmd *Command, args [][]byte) (scripting.Flags, bool) {
	switch cmd.spec.Runs {
	case cmdspec.RunsScript:
		return s.scripts.DeclaredScriptFlags(args[1], false)
	case cmdspec.RunsScriptBySHA:
		return s.scripts.DeclaredScriptFlags(args[1], true)
	case cmdspec.RunsFunction:
		return s.scripts.DeclaredFunctionFlags(args[1])
	}
	return 0, false
}

const errROWithWriteFlag = "ERR Can not execute a script with write flag using *_ro command."

func evalCommand(x *Ctx, bySHA, readOnly bool) {
	x.showSelf()
	keys, argv, ok := x.scriptArgs(errNotInt)
	if !ok {
		return
	}
	e := x.s.scripts
	var s *scripting.Script
	if bySHA {
		if s, ok = e.ScriptBySHA(x.Args[1]); !ok {
			x.W.Error("NOSCRIPT No matching script. Please use EVAL.")
			return
		}
	} else if s, ok = e.Script(scripting.SHA1Hex(x.Args[1])); !ok {
		sha, err := e.LoadScript(bytes.Clone(x.Args[1])) // kept: not the read buffer
		if err != nil {
			x.W.Error(err.Error())
			return
		}
		s, _ = e.Script(sha)
	}
	if s.Shebang && x.refusedNoCluster(s.Flags) {
		return
	}
	// Scripts without a shebang run in compatibility mode: their writes are
	// checked command by command.
	if s.Shebang && x.refusedWriteScript(s.Flags, readOnly) {
		return
	}
	// A shebang without allow-oom was refused before running when over
	// maxmemory (scriptDeniesOOM); without a shebang, commands are checked.
	x.runScript(readOnly || s.Flags&scripting.FlagNoWrites != 0, !s.Shebang, s, nil, keys, argv)
}

func fcallCommand(x *Ctx, readOnly bool) {
	x.showSelf()
	// Redis looks the function up before it reads numkeys.
	f, ok := x.s.scripts.Function(string(x.Args[1]))
	if !ok {
		x.W.Error("ERR Function not found")
		return
	}
	keys, argv, ok := x.scriptArgs("ERR Bad number of keys provided")
	if !ok {
		return
	}
	if x.refusedNoCluster(f.Flags) {
		return
	}
	if x.refusedWriteScript(f.Flags, readOnly) {
		return
	}
	x.runScript(readOnly || f.Flags&scripting.FlagNoWrites != 0, false, nil, f, keys, argv)
}

// refusedWriteScript refuses, before it runs, a script or function that does
// not declare no-writes where it may not write: as a write command on a
// read-only replica or without enough good replicas (Redis counts such an
// EVAL or FCALL a write command), or run by a *_RO command.
func (x *Ctx) refusedWriteScript(flags scripting.Flags, readOnly bool) bool {
	if flags&scripting.FlagNoWrites != 0 {
		return false
	}
	refusal := ""
	if !x.c.obeys {
		refusal = x.s.repl.Refusal(true, true)
	}
	switch {
	case refusal != "":
		x.W.Error(refusal)
	case readOnly:
		x.W.Error(errROWithWriteFlag)
	default:
		return false
	}
	return true
}

// runScript runs a script, or else a function, with a host for its
// redis.call commands, which run nested in the EVAL or FCALL (call). Its
// writes propagate as the commands it ran (wrapped in MULTI/EXEC when
// several, with an EXEC's when inside one), not as the EVAL.
func (x *Ctx) runScript(readOnly, checkOOM bool, script *scripting.Script, fn *scripting.Function, keys, argv [][]byte) {
	s := x.s
	h := &s.scriptHost
	h.x, h.readOnly, h.writeCalled, h.repl = x, readOnly, false, scripting.ReplAll
	if s.cluster != nil || x.c.compatSampled() {
		h.startCluster(keys, script, fn)
	}
	// Redis checks OOM against the state when the command began (memory
	// the script itself uses cannot fail it).
	h.overMaxMemory = checkOOM && x.c.overMaxMemory
	h.wrote.Store(false)
	sc := s.scriptClient
	sc.setDB(int(x.c.db.Load()))
	sx := &sc.ctx
	sx.W, sx.Now = &h.out, x.Now
	s.scriptStart.Store(monoNow())
	s.scriptIsFunction.Store(fn != nil)
	if fn != nil {
		s.runningFunction.set(fn.Name, x.Args)
		s.scripts.Call(fn, keys, argv, h, x.W)
		s.runningFunction.set("", nil)
	} else {
		s.scripts.Run(script, keys, argv, h, x.W)
	}
	x.scriptErrorCounted = s.scripts.ErrorCounted()
	s.scriptStart.Store(0)
	x.Dirty += h.dirty
	h.dirty = 0
	x.PropagateNone()
}

// scriptHost runs a script's redis.call commands. The server has one: scripts
// run one at a time, under the exclusive lock.
type scriptHost struct {
	x        *Ctx // the EVAL or FCALL
	out      resp.Writer
	readOnly bool
	// overMaxMemory: denyoom commands fail until the script has called a
	// write command (it cannot be stopped halfway through its writes).
	overMaxMemory bool
	writeCalled   bool
	wrote         atomic.Bool // read by SCRIPT KILL from another client
	// In cluster mode, or when the cluster compatibility check samples the
	// script, the slot its keys are on so far (-1: none yet), unless it may
	// use several (allow-cross-slot-keys).
	slot           int
	crossSlotKeyOK bool
	dirty          int
	// repl is where the script's writes propagate (redis.set_repl's flags).
	repl int
}

// SetRepl is redis.set_repl: the script's writes from now on propagate to
// the AOF, to replicas, to both or to neither, as flags says.
func (h *scriptHost) SetRepl(flags int) { h.repl = flags }

// Call runs one command for the script, with Redis's checks and error texts
// for scripts, and appends its reply.
func (h *scriptHost) Call(args [][]byte, resp3 bool, dst []byte) []byte {
	if len(args) == 0 {
		return append(append(dst, "-ERR Please specify at least one argument for this redis lib call"...), "\r\n"...)
	}
	sc := h.x.s.scriptClient
	if sc.ctx.Propagating() {
		// Kept until the script ends; the engine reuses args.
		args = cloneArgs(args)
	}
	h.out.B = dst // the reply goes straight into the engine's buffer
	h.out.Proto = 2
	if resp3 {
		h.out.Proto = 3
	}
	sc.dispatch(args, fromScript)
	reply := h.out.B
	h.out.B = nil
	return reply
}

// admit applies Redis's checks for a script's command, replying the
// refusal.
func (h *scriptHost) admit(cmd *Command, args [][]byte) bool {
	s := h.x.s
	var denied string
	switch {
	case cmd.Flags&cmdspec.FlagNoScript != 0 && !(s.debug.scriptsCallDenied.Load() && cmd.spec.ScriptMayCall(args)):
		return h.reject(cmd, "ERR This Redis command is not allowed from script")
	case h.scriptDenied(cmd, args, &denied):
		return h.reject(cmd, denied)
	case cmd.Flags&(cmdspec.FlagWrite|cmdspec.FlagMayReplicate) != 0 && h.readOnly:
		return h.reject(cmd, "ERR Write commands are not allowed from read-only scripts.")
	case cmd.Flags&cmdspec.FlagWrite != 0 && s.diskError() != "":
		return h.reject(cmd, s.diskError())
	case cmd.Flags&cmdspec.FlagWrite != 0 && !h.writeCalled && h.replicationRefusal() != "":
		// Once the script wrote, its writes go on: it cannot stop halfway.
		return h.reject(cmd, h.replicationRefusal())
	case cmd.Flags&cmdspec.FlagDenyOOM != 0 && h.overMaxMemory && !h.writeCalled && s.evict.limit.Load() != 0:
		return h.reject(cmd, errOOM)
	}
	if s.cluster != nil && !h.scriptRouted(cmd, args) {
		return false
	}
	if s.cluster == nil && h.x.c.compatSampled() {
		h.checkCompat(cmd, args)
	}
	if cmd.Flags&cmdspec.FlagWrite != 0 {
		h.writeCalled = true
	}
	return true
}

// replicationRefusal is why replication refuses a write of the script now
// (a read-only replica, min-replicas-to-write), or "". What a master sends
// is never refused.
func (h *scriptHost) replicationRefusal() string {
	if h.x.c.obeys {
		return ""
	}
	return h.x.s.repl.Refusal(true, true)
}

// reject refuses a script's command, counted as Redis counts it.
func (h *scriptHost) reject(cmd *Command, msg string) bool {
	s := h.x.s
	s.cmdStats[cmd.id].rejected.Add(1)
	h.out.Error(msg)
	return false
}

// Wrote tells SCRIPT KILL whether the script has written (then it is
// unkillable, as in Redis).
func (h *scriptHost) Wrote() bool { return h.wrote.Load() }

// scriptBusy reports whether a script has run longer than
// busy-reply-threshold, and whether it is a function: other clients then get
// BUSY.
func (s *Server) scriptBusy() (busy, function bool) {
	start := s.scriptStart.Load()
	if start == 0 {
		return false, false
	}
	limit := s.cfg.BusyReplyThreshold()
	return limit > 0 && monoNow()-start > limit*int64(time.Millisecond), s.scriptIsFunction.Load()
}

func errBusy(function bool) string {
	if function {
		return "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
	}
	return "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
}

// scriptState is the server's scripting state.
type scriptState struct {
	scripts          *scripting.Engine
	scriptHost       scriptHost
	scriptClient     *Client
	scriptStart      atomic.Int64 // monotonic ns when the running script began; 0: none
	scriptIsFunction atomic.Bool
	runningFunction  runningFunction
}

// runningFunction is the function being run, for FUNCTION STATS from other
// clients. Its arguments are the FCALL's, in its client's read buffer,
// which stays put until the call ends and clears them.
type runningFunction struct {
	mu   sync.Mutex
	name string
	args [][]byte
}

func (r *runningFunction) set(name string, args [][]byte) {
	r.mu.Lock()
	r.name, r.args = name, args
	r.mu.Unlock()
}

func scriptLoad(x *Ctx) {
	sha, err := x.s.scripts.LoadScript(bytes.Clone(x.Args[2]))
	if err != nil {
		x.W.Error(err.Error())
		return
	}
	x.W.BulkString(sha)
}

func scriptExists(x *Ctx) {
	x.W.Array(len(x.Args) - 2)
	for _, sha := range x.Args[2:] {
		x.W.Int(int64(boolInt(x.s.scripts.ScriptExists(string(sha)))))
	}
}

func scriptFlush(x *Ctx) {
	if x.FlushMode(2, "ERR SCRIPT FLUSH only support SYNC|ASYNC option") {
		m := x.s.scripts.MemoryStats()
		x.s.scripts.FlushScripts()
		x.s.freed(m.ScriptBytes + m.EvalVM)
		x.W.OK()
	}
}

const errNotBusy = "NOTBUSY No scripts in execution right now."

func scriptKill(x *Ctx) {
	running, function, wrote := x.s.scripts.Running()
	switch {
	case !running:
		x.W.Error(errNotBusy)
	case function: // the other kind runs: BUSY, as Redis says
		x.W.Error(errBusy(true))
	case wrote:
		x.W.Error("UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.")
	default:
		x.s.scripts.Kill()
		x.W.OK()
	}
}

func functionKill(x *Ctx) {
	running, function, _ := x.s.scripts.Running()
	switch {
	case !running:
		x.W.Error(errNotBusy)
		return
	case !function:
		x.W.Error(errBusy(false))
		return
	}
	x.s.scripts.Kill()
	x.W.OK()
}

func functionLoad(x *Ctx) {
	replace := false
	if len(x.Args) > 3 {
		if len(x.Args) > 4 || !cstr.ArgIs(x.Args[2], "replace") {
			x.W.Error("ERR Unknown option given: " + string(x.Args[2]))
			return
		}
		replace = true
	}
	name, err := x.s.scripts.LoadLibrary(bytes.Clone(x.Args[len(x.Args)-1]), replace)
	if err != nil {
		x.W.Error(err.Error())
		return
	}
	x.Dirty++
	x.W.BulkString(name)
}

func functionDelete(x *Ctx) {
	if err := x.s.scripts.DeleteLibrary(string(x.Args[2])); err != nil {
		x.W.Error(err.Error())
		return
	}
	x.Dirty++
	x.W.OK()
}

func functionFlush(x *Ctx) {
	if x.FlushMode(2, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option") {
		m := x.s.scripts.MemoryStats()
		x.s.scripts.FlushFunctions()
		x.s.freed(m.FunctionBytes + m.FunctionVM)
		x.Dirty++
		x.W.OK()
	}
}

func functionList(x *Ctx) {
	var pattern *string
	withCode := false
	for i := 2; i < len(x.Args); i++ {
		switch {
		case cstr.ArgIs(x.Args[i], "withcode") && !withCode:
			withCode = true
		case cstr.ArgIs(x.Args[i], "libraryname") && pattern == nil:
			if i+1 >= len(x.Args) {
				x.W.Error("ERR library name argument was not given")
				return
			}
			i++
			p := string(x.Args[i])
			pattern = &p
		default:
			x.W.Error("ERR Unknown argument " + string(x.Args[i]))
			return
		}
	}
	x.s.scripts.WriteFunctionList(x.W, pattern, withCode)
}

func functionDump(x *Ctx) { x.W.Bulk(x.s.scripts.DumpFunctions()) }

func functionRestore(x *Ctx) {
	policy := scripting.RestoreAppend
	if len(x.Args) > 4 {
		x.W.Error(errSyntax)
		return
	}
	if len(x.Args) == 4 {
		switch strings.ToLower(string(x.Args[3])) {
		case "append":
		case "replace":
			policy = scripting.RestoreReplace
		case "flush":
			policy = scripting.RestoreFlush
		default:
			x.W.Error("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")
			return
		}
	}
	if err := x.s.scripts.RestoreFunctions(bytes.Clone(x.Args[2]), policy); err != nil {
		x.W.Error(err.Error())
		return
	}
	x.Dirty++
	x.W.OK()
}

// functionStats runs without a lock (allow_busy). Redis serves it during
// a script only once the script is busy (before, the client waits for the
// end and sees none), and then refuses it during an EVAL.
func functionStats(x *Ctx) {
	s := x.s
	busy, function := s.scriptBusy()
	if busy && !function {
		x.W.Error(errBusy(false))
		return
	}
	libs, fns := s.scripts.Counts()
	x.W.Map(2)
	x.W.BulkString("running_script")
	r := &s.runningFunction
	r.mu.Lock()
	if busy && r.args != nil {
		x.W.Map(3)
		x.W.BulkString("name")
		x.W.BulkString(r.name)
		x.W.BulkString("command")
		x.W.Array(len(r.args))
		for _, a := range r.args {
			x.W.Bulk(a)
		}
		x.W.BulkString("duration_ms")
		x.W.Int((monoNow() - s.scriptStart.Load()) / int64(time.Millisecond))
	} else {
		x.W.Null()
	}
	r.mu.Unlock()
	x.W.BulkString("engines")
	x.W.Map(1)
	x.W.BulkString("LUA")
	x.W.Map(2)
	x.W.BulkString("libraries_count")
	x.W.Int(int64(libs))
	x.W.BulkString("functions_count")
	x.W.Int(int64(fns))
}

// scriptDebug is SCRIPT DEBUG. Keyhive has no Lua debugger, so NO (the
// debugger off, as it always is) succeeds and YES and SYNC are refused
// rather than accepted and then ignored by the next EVAL. Like Redis it
// refuses to start with replies still pending (a pipeline, EXEC).
func scriptDebug(x *Ctx) {
	if len(x.W.B) > 0 {
		x.W.Error("ERR SCRIPT DEBUG must be called outside a pipeline")
		return
	}
	switch strings.ToLower(string(x.Args[2])) {
	case "no":
		x.W.OK()
	case "yes", "sync":
		x.W.Error("ERR SCRIPT DEBUG YES and SYNC are not supported: Keyhive has no Lua debugger")
	default:
		x.W.Error("ERR Use SCRIPT DEBUG YES/SYNC/NO")
	}
}

func scriptHelp(x *Ctx) {
	writeHelp(x, "SCRIPT", []string{
		"DEBUG (YES|SYNC|NO)",
		"    Set the debug mode for subsequent scripts executed.",
		"EXISTS <sha1> [<sha1> ...]",
		"    Return information about the existence of the scripts in the script cache.",
		"FLUSH [ASYNC|SYNC]",
		"    Flush the Lua scripts cache. Very dangerous on replicas.",
		"    When called without the optional mode argument, the behavior is determined by the",
		"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
		"    * ASYNC: Asynchronously flush the scripts cache.",
		"    * SYNC: Synchronously flush the scripts cache.",
		"KILL",
		"    Kill the currently executing Lua script.",
		"LOAD <script>",
		"    Load a script into the scripts cache without executing it.",
	})
}

func functionHelp(x *Ctx) {
	writeHelp(x, "FUNCTION", []string{
		"LOAD [REPLACE] <FUNCTION CODE>",
		"    Create a new library with the given library name and code.",
		"DELETE <LIBRARY NAME>",
		"    Delete the given library.",
		"LIST [LIBRARYNAME PATTERN] [WITHCODE]",
		"    Return general information on all the libraries:",
		"    * Library name",
		"    * The engine used to run the Library",
		"    * Functions list",
		"    * Library code (if WITHCODE is given)",
		"    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
		"STATS",
		"    Return information about the current function running:",
		"    * Function name",
		"    * Command used to run the function",
		"    * Duration in MS that the function is running",
		"    If no function is running, return nil",
		"    In addition, returns a list of available engines.",
		"KILL",
		"    Kill the current running function.",
		"FLUSH [ASYNC|SYNC]",
		"    Delete all the libraries.",
		"    When called without the optional mode argument, the behavior is determined by the",
		"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
		"    * ASYNC: Asynchronously flush the libraries.",
		"    * SYNC: Synchronously flush the libraries.",
		"DUMP",
		"    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
		"RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
		"    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
		"    control how to handle existing libraries (default APPEND):",
		"    * FLUSH: delete all existing libraries.",
		"    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
		"    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
		"      libraries with the new libraries (notice that even on this option there is a chance of failure",
		"      in case of functions name collision with another library).",
	})
}
