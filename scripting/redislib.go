package scripting

import (
	"strings"

	"github.com/keyhive/keyhive/internal/version"
	lua "github.com/yuin/gopher-lua"
)

// Log levels of redis.log, as Redis numbers them.
const (
	LogDebug = iota
	LogVerbose
	LogNotice
	LogWarning
)

// Replication flags of redis.set_repl.
const (
	ReplNone    = 0
	ReplAOF     = 1
	ReplReplica = 2
	ReplAll     = ReplAOF | ReplReplica
)

func (s *luaState) newRedisTable(forFunctions bool) *lua.LTable {
	L := s.L
	t := L.NewTable()
	fns := map[string]lua.LGFunction{
		"call":          func(L *lua.LState) int { return s.redisCall(L, true) },
		"pcall":         func(L *lua.LState) int { return s.redisCall(L, false) },
		"error_reply":   redisErrorReply,
		"status_reply":  redisStatusReply,
		"sha1hex":       redisSha1hex,
		"log":           s.redisLog,
		"setresp":       s.redisSetresp,
		"set_repl":      s.redisSetRepl,
		"acl_check_cmd": s.redisACLCheck,
	}
	if !forFunctions {
		fns["replicate_commands"] = func(L *lua.LState) int { L.Push(lua.LTrue); return 1 }
		fns["breakpoint"] = func(L *lua.LState) int { L.Push(lua.LFalse); return 1 } // no debugger session is ever active
		fns["debug"] = func(L *lua.LState) int { return 0 }
	}
	for name, fn := range fns {
		t.RawSetString(name, L.NewFunction(fn))
	}
	setVersionAndLevels(t)
	for name, v := range map[string]int{"REPL_NONE": ReplNone, "REPL_AOF": ReplAOF, "REPL_SLAVE": ReplReplica, "REPL_REPLICA": ReplReplica, "REPL_ALL": ReplAll} {
		t.RawSetString(name, lua.LNumber(v))
	}
	return t
}

func setVersionAndLevels(t *lua.LTable) {
	t.RawSetString("REDIS_VERSION", lua.LString(version.Redis))
	t.RawSetString("REDIS_VERSION_NUM", lua.LNumber(version.RedisNum))
	for name, v := range map[string]int{"LOG_DEBUG": LogDebug, "LOG_VERBOSE": LogVerbose, "LOG_NOTICE": LogNotice, "LOG_WARNING": LogWarning} {
		t.RawSetString(name, lua.LNumber(v))
	}
}

// errorTable builds Redis's error object {err="CODE message"} from an error
// in either of Redis's forms: "-CODE message" or a bare message, which
// gets the code ERR (luaPushErrorBuff).
func errorTable(L *lua.LState, msg string) *lua.LTable {
	code := "ERR"
	if strings.HasPrefix(msg, "-") {
		if sp := strings.IndexByte(msg, ' '); sp >= 0 {
			code, msg = msg[1:sp], msg[sp+1:]
		} else {
			msg = msg[1:]
		}
	}
	msg = strings.Trim(msg, "\r\n")
	t := L.NewTable()
	t.RawSetString("err", lua.LString(code+" "+msg))
	return t
}

// raise throws a Redis error object, as luaError does.
func raise(L *lua.LState, msg string) {
	raiseTable(L, errorTable(L, msg))
}

func raiseTable(L *lua.LState, t *lua.LTable) {
	setPosition(L, t)
	L.Error(t, 0)
}

func (s *luaState) redisCall(L *lua.LState, raiseErrors bool) int {
	fail := func(msg string) int {
		if raiseErrors {
			raise(L, msg)
		}
		L.Push(errorTable(L, msg))
		return 1
	}
	run := s.run
	if run == nil {
		return fail("redis.call/pcall can only be called inside a script invocation")
	}
	n := L.GetTop()
	if n == 0 {
		return fail("Please specify at least one argument for this redis lib call")
	}
	// Arguments are appended to one buffer and sliced afterwards, so a call
	// allocates nothing once the run's buffers have grown.
	args, buf, ends := run.args[:0], run.scratch[:0], run.ends[:0]
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			buf = append(buf, v...)
		case lua.LNumber:
			buf = appendArgNumber(buf, float64(v))
		default:
			return fail("Lua redis lib command arguments must be strings or integers")
		}
		ends = append(ends, len(buf))
	}
	start := 0
	for _, end := range ends {
		args = append(args, buf[start:end:end])
		start = end
	}
	run.scratch, run.args, run.ends = buf, args, ends
	reply := run.host.Call(args, run.resp3, run.reply[:0])
	run.reply = reply
	v, isErr := parseReply(s, reply)
	if isErr && raiseErrors {
		raiseTable(L, v.(*lua.LTable))
	}
	L.Push(v)
	return 1
}

func redisErrorReply(L *lua.LState) int {
	msg, ok := L.Get(1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(errorTable(L, "wrong number or type of arguments"))
		return 1
	}
	if !strings.HasPrefix(string(msg), "-") {
		msg = "-" + msg
	}
	L.Push(errorTable(L, string(msg)))
	return 1
}

func redisStatusReply(L *lua.LState) int {
	msg, ok := L.Get(1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(errorTable(L, "wrong number or type of arguments"))
		return 1
	}
	t := L.NewTable()
	t.RawSetString("ok", msg)
	L.Push(t)
	return 1
}

func redisSha1hex(L *lua.LState) int {
	if L.GetTop() != 1 {
		raise(L, "wrong number of arguments")
	}
	str, _ := toStringArg(L.Get(1))
	L.Push(lua.LString(SHA1Hex([]byte(str))))
	return 1
}

func (s *luaState) redisLog(L *lua.LState) int {
	n := L.GetTop()
	if n < 2 {
		raise(L, "redis.log() requires two arguments or more.")
	}
	level, ok := toNumberArg(L.Get(1))
	if !ok {
		raise(L, "First argument must be a number (log level).")
	}
	if level < LogDebug || level > LogWarning {
		raise(L, "Invalid debug level.")
	}
	var sb strings.Builder
	for i := 2; i <= n; i++ {
		if str, ok := toStringArg(L.Get(i)); ok {
			if i != 2 {
				sb.WriteByte(' ')
			}
			sb.WriteString(str)
		}
	}
	if log := s.engine.Logger; log != nil {
		log(int(level), sb.String())
	}
	return 0
}

func (s *luaState) redisSetresp(L *lua.LState) int {
	if L.GetTop() != 1 {
		raise(L, "redis.setresp() requires one argument.")
	}
	v := checkInt(L, 1, "setresp")
	if v != 2 && v != 3 {
		raise(L, "RESP version must be 2 or 3.")
	}
	if s.run != nil {
		s.run.resp3 = v == 3
	}
	return 0
}

func (s *luaState) redisSetRepl(L *lua.LState) int {
	if L.GetTop() != 1 {
		raise(L, "redis.set_repl() requires two arguments.") // sic, Redis 7.0's text
	}
	flags := checkInt(L, 1, "set_repl")
	if flags&^ReplAll != 0 {
		raise(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.")
	}
	if r, ok := s.hostAs().(ReplicationSetter); ok {
		r.SetRepl(int(flags))
	}
	return 0
}

func (s *luaState) redisACLCheck(L *lua.LState) int {
	n := L.GetTop()
	if n == 0 {
		raise(L, "Please specify at least one argument for this redis lib call")
	}
	args := make([][]byte, 0, n)
	for i := 1; i <= n; i++ {
		str, ok := toStringArg(L.Get(i))
		if !ok {
			raise(L, "Lua redis lib command arguments must be strings or integers")
		}
		args = append(args, []byte(str))
	}
	allowed := true
	if c, ok := s.hostAs().(ACLChecker); ok {
		var errMsg string
		if allowed, errMsg = c.CheckACL(args); errMsg != "" {
			raise(L, errMsg)
		}
	}
	L.Push(lua.LBool(allowed))
	return 1
}

func (s *luaState) hostAs() any {
	if s.run == nil {
		return nil
	}
	return s.run.host
}
