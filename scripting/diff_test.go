package scripting_test

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/internal/version"
	"github.com/keyhive/keyhive/resp"
	"github.com/keyhive/keyhive/scripting"
)

// The differential tests run every script twice: through EVAL/FCALL on
// redis-server (the "redis" side of a difftest pair) and through the Engine,
// whose redis.call goes to a second redis-server (the pair's other side,
// holding the same data). The raw replies must be identical.
func TestMain(m *testing.M) {
	os.Setenv(difftest.TargetEnv, "redis")
	os.Exit(difftest.Main(m))
}

// forwardHost runs redis.call on a redis-server over a raw connection, with
// the script-specific error texts the server gives scripts.
type forwardHost struct {
	tb    testing.TB
	conn  *difftest.Conn
	resp3 bool
}

func (h *forwardHost) Call(args [][]byte, resp3 bool, dst []byte) []byte {
	if resp3 != h.resp3 {
		proto := "2"
		if resp3 {
			proto = "3"
		}
		if _, err := h.conn.Do("HELLO", proto); err != nil {
			h.tb.Fatal(err)
		}
		h.resp3 = resp3
	}
	anyArgs := make([]any, len(args))
	for i, a := range args {
		anyArgs[i] = a
	}
	r, err := h.conn.Do(anyArgs...)
	if err != nil {
		h.tb.Fatal(err)
	}
	switch {
	case bytes.HasPrefix(r.Raw, []byte("-ERR unknown command")):
		return append(dst, "-ERR Unknown Redis command called from script\r\n"...)
	case bytes.HasPrefix(r.Raw, []byte("-ERR wrong number of arguments")):
		return append(dst, "-ERR Wrong number of args calling Redis command from script\r\n"...)
	}
	return append(dst, r.Raw...)
}

type harness struct {
	t     *testing.T
	p     *difftest.Pair
	eng   *scripting.Engine
	host  *forwardHost
	proto int
}

func newHarness(t *testing.T) *harness { return harnessOn(t, difftest.Start(t)) }

func newIsolatedHarness(t *testing.T) *harness { return harnessOn(t, difftest.StartIsolated(t)) }

func harnessOn(t *testing.T, p *difftest.Pair) *harness {
	p.Redis().Do("SCRIPT", "FLUSH")
	p.Redis().Do("FUNCTION", "FLUSH")
	conn, err := difftest.Dial(p.Keyhive().Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &harness{t: t, p: p, eng: scripting.NewEngine(), host: &forwardHost{tb: t, conn: conn}, proto: 2}
}

// setProto switches the client protocol of both sides.
func (h *harness) setProto(v int) {
	h.p.Proto(v)
	h.proto = v
}

func cmdArgs(name string, body string, keys []string, args []string) []any {
	a := []any{name, body, strconv.Itoa(len(keys))}
	for _, k := range keys {
		a = append(a, k)
	}
	for _, v := range args {
		a = append(a, v)
	}
	return a
}

func toBytes(ss []string) [][]byte {
	b := make([][]byte, len(ss))
	for i, s := range ss {
		b[i] = []byte(s)
	}
	return b
}

// engineEval is what the server will do for EVAL.
func (h *harness) engineEval(body string, keys, args []string) []byte {
	w := &resp.Writer{Proto: h.proto}
	sha, err := h.eng.LoadScript([]byte(body))
	if err != nil {
		w.Error(err.Error())
		return w.B
	}
	s, _ := h.eng.Script(sha)
	h.eng.Run(s, toBytes(keys), toBytes(args), h.host, w)
	return w.B
}

// eval compares EVAL body with the given keys and args on both sides.
func (h *harness) eval(body string, keys []string, args ...string) []byte {
	h.t.Helper()
	want := h.p.Redis().Do(cmdArgs("EVAL", body, keys, args)...).Raw
	got := h.engineEval(body, keys, args)
	if !bytes.Equal(want, got) {
		h.t.Errorf("EVAL %q\n redis:  %q\n engine: %q", body, trunc(want), trunc(got))
	}
	return want
}

func trunc(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "..."
	}
	return string(b)
}

func (h *harness) evalAll(bodies ...string) {
	h.t.Helper()
	for _, b := range bodies {
		h.eval(b, nil)
	}
}

func TestNumberFormatting(t *testing.T) {
	h := newHarness(t)
	h.evalAll(
		"return tostring(0.1+0.2)",
		"return tostring(1e15)",
		"return tostring(-0.0)",
		"return tostring(1/0) .. ' ' .. tostring(-1/0)",
		"return tostring(2^53)",
		"return tostring(123456789012345)",
		"return tostring(1e-5) .. ',' .. tostring(0.0001)",
		"return 'x' .. 1.5 .. 'y' .. 3",
		"local a = 0.1 return a .. a",
		"return tonumber('2e2')",
		"return tostring(tonumber('0x10'))",
		"return tostring(tonumber(' 12 '))",
		"return tostring(tonumber('12a'))",
		"return {tostring(tonumber('inf')), tostring(tonumber('-Infinity')), tostring(tonumber('nan')), tostring(tonumber('0x1F')), tostring(tonumber('-0x10')), tostring(tonumber('1e500')), tostring(tonumber('.5')), tostring(tonumber('5.')), tostring(tonumber('')), tostring(tonumber(' ')), tostring(tonumber('1 2'))}",
		"return tostring(tonumber('ff', 16))",
		"return tostring(tonumber('zz', 36))",
		"return tostring(tonumber('8', 8))",
		"return string.format('%s %d %5.2f %g %g %g', 0.1, 3, 2.5, 1e20, 0.0001, 100000)",
		"return string.format('%x %X %o %c %q', 255, 255, 8, 65, 'a\"b\\n')",
		"return string.format('%-5s|%5s|%.2s', 'ab', 'ab', 'abc')",
		"return string.format('%e %E %.3e', 12345.678, 0.00012, 1)",
		"return string.format('%+d % d %05d %-5d|', 5, 5, 42, 42)",
		"return string.format('%10.4f|%-10.2e|', 3.14159265, 314.159)",
		"return string.format('%g %g %g %g', 1e15, 123456, 1234567, 0.1)",
		"return string.format('%5.1s|', 'xyz')",
		"return string.format('%%')",
		"return string.format('%y', 1)",
		"return string.format('%d')",
		"return table.concat({1.5, 2, 1e100, 'x'}, ',')",
		"return table.concat({1, 2, 3}, ', ', 2, 3)",
		"return string.len(1.5) .. string.rep(0.5, 2)",
		"return string.upper(1e100)",
		"return {1.5, 2.9, -3.7, 1e20, -0.0}",
		"return 3.99",
	)
}

func TestRedisCallConversions(t *testing.T) {
	h := newHarness(t)
	h.p.Do("SET", "str", "hello")
	h.p.Do("RPUSH", "list", "a", "b", "c")
	h.p.Do("HSET", "hash", "f1", "v1")
	h.p.Do("SADD", "set", "m1")
	h.p.Do("ZADD", "zset", "1.5", "m")
	scripts := []string{
		"return redis.call('get', 'str')",
		"return redis.call('get', 'nokey')",
		"return redis.call('lrange', 'list', 0, -1)",
		"return redis.call('set', 'x', 'y')",
		"return redis.call('incr', 'counter')",
		"return redis.call('hgetall', 'hash')",
		"return redis.call('smembers', 'set')",
		"return redis.call('zscore', 'zset', 'm')",
		"return redis.call('zrange', 'zset', 0, -1, 'withscores')",
		"return redis.call('ping')",
		"return type(redis.call('ping'))",
		"return redis.call('ping').ok",
		"return {type(redis.call('get', 'nokey')), tostring(redis.call('get', 'nokey'))}",
		"return redis.call('set', 'k', 3.14159265358979) and redis.call('get', 'k')",
		"redis.call('set', 'k', 0.1) return redis.call('get', 'k')",
		"redis.call('set', 'k', 1e100) return redis.call('get', 'k')",
		"redis.call('set', 'k', -0.0) return redis.call('get', 'k')",
		"redis.call('set', 'k', 123456789012345678) return redis.call('get', 'k')",
		"return redis.call('get', 1.5)",
		"return {1, 2, 3, 'x', true, false, nil, 'after'}",
		"return {{1, {2, {3}}}, {}}",
		"return true",
		"return false",
		"return nil",
		"return {ok='fine'}",
		"return {ok='a\\r\\nb'}",
		"return {err='My Error'}",
		"return {err='-ERR x'}",
		"return {err='a\\nb'}",
		"return {err=3}",
		"return {ok=3}",
		"return {double=3.5}",
		"return {double=1/0}",
		"return {big_number='12345678901234567890'}",
		"return {map={a=1}}",
		"return {set={a=true}}",
		"return {verbatim_string={format='txt', string='hello'}}",
		"return redis.pcall('incr', 'str')",
		"return redis.pcall('nosuchcommand')",
		"local r = redis.pcall('incr', 'str') return {type(r), r.err}",
	}
	for _, proto := range []int{2, 3} {
		h.setProto(proto)
		h.evalAll(scripts...)
		for _, setresp := range []string{"redis.setresp(3) ", "redis.setresp(2) "} {
			for _, s := range scripts {
				h.eval(setresp+s, nil)
			}
		}
		h.evalAll(
			"redis.setresp(3) return redis.call('hgetall', 'hash')",
			"redis.setresp(3) local r = redis.call('hgetall', 'hash') return r.map.f1",
			"redis.setresp(3) local r = redis.call('smembers', 'set') return tostring(r.set.m1)",
			"redis.setresp(3) return redis.call('zscore', 'zset', 'm')",
			"redis.setresp(3) return redis.call('zscore', 'zset', 'm').double",
			"redis.setresp(3) return {redis.call('get', 'nokey') == nil}",
			"redis.setresp(3) return redis.call('info', 'server').verbatim_string.format",
			"return type(redis.call('info', 'server'))",
		)
	}
	h.eval("return {KEYS[1], KEYS[2], ARGV[1], ARGV[2], #KEYS, #ARGV}", []string{"k1", "k2"}, "a1", "a2")
}

func TestErrors(t *testing.T) {
	h := newHarness(t)
	h.p.Do("SET", "s", "x")
	h.evalAll(
		"return redis.call('nosuch')",
		"return redis.call('get')",
		"return redis.call('incr', 's')",
		"\n\nreturn redis.call('incr', 's')",
		"local function f() return redis.call('incr', 's') end\nreturn f()",
		"return redis.call()",
		"return redis.pcall()",
		"return redis.call({})",
		"return redis.pcall('get', {})",
		"return redis.call('get', nil)",
		"error('boom')",
		"error({err='tbl'})",
		"error({err='a\\nb'})",
		"error(3)",
		"error(nil)",
		"error(true)",
		"error('x', 0)",
		"error('x', 2)",
		"return redis.error_reply('oops')",
		"return redis.error_reply('-X oops')",
		"return redis.error_reply('a b\\nc')",
		"return redis.error_reply(3)",
		"return redis.error_reply()",
		"return redis.status_reply('fine')",
		"return redis.status_reply(3)",
		"return redis.status_reply('a\\nb')",
		"return redis.setresp(4)",
		"return redis.setresp()",
		"return redis.sha1hex()",
		"return redis.sha1hex('abc')",
		"return redis.sha1hex(1.5)",
		"return redis.log(redis.LOG_WARNING)",
		"return redis.log(99, 'x')",
		"return redis.log('x', 'x')",
		"return redis.log(redis.LOG_DEBUG, 'x', 1.5, {})",
		"return redis.set_repl(redis.REPL_ALL)",
		"return redis.set_repl(99)",
		"return redis.set_repl()",
		"return redis.replicate_commands()",
		"return redis.breakpoint()",
		"return redis.debug('x')",
		"return pcall(error, 'x')",
		"return {pcall(error, {err='x'})}",
		"local ok, e = pcall(redis.call, 'nosuch') return e",
		"local ok, e = pcall(redis.call, 'incr', 's') return {ok, e.err, e.ignore_error_stats_update}",
		"return select('#', pcall(error))",
		"return ''..nil",
		"local x return 'a' .. x",
		"return 'a' .. undefinedglobal",
		"return 'a' .. ARGV[1]",
		"return 'a' .. redis.nosuch",
		"local t = {} return t.field .. 'a'",
		"local x = 1 local function f() return x .. {} end return f()",
		"local y local function f() return 'a' .. y end return f()",
		"return 'a' .. 1 .. {}",
		"return {} .. 'a' .. 1",
		"local a, b = 'x', nil return a .. b .. 'c'",
		"return 'a' .. redis.call('get', 'nokey')",
		"for i, v in ipairs({1}) do return v .. nil end",
		"local t = {x = {}} return 'p' .. t.x",
		"return 1 + {}",
		"local x = 'a' + 1",
		"return {} < {}",
		"return 1 < nil",
		"return redis.call('get', 'nokey').field",
		"return (nil).x",
		"assert(false)",
		"assert(false, 'msg')",
		"assert(nil, 3)",
		"return string.rep()",
		"return math.random(0)",
		"return math.random(3, 1)",
		"return math.random(1, 2, 3)",
		"return select('#', unpack({}, 1, 1e8))",
		"return select('#', unpack({}, 1, 7990))",
		"return #{string.byte(string.rep('x', 9000), 1, -1)}",
		"return #{string.byte(string.rep('x', 7000), 1, -1)}",
		"local function f() return 1 + f() end return f()",
	)
}

func TestCompileErrors(t *testing.T) {
	h := newHarness(t)
	h.evalAll(
		"return 1 +",
		"return 'abc",
		"x =",
		"return ]",
		"return [[abc",
		"\n\nreturn 1 +",
		" #!lua\nreturn 1",
		"if x then",
		"if true then\nreturn 1",
		"local function f()\n  return 1\n",
		"while true do\n",
		"for i = 1, 2 do return i",
		"do\nlocal x = 1",
		"repeat local x = 1",
		"return f(1, 2",
		"local t = {1, 2",
		"local t = {\n1,\n2",
		"local function f() if x then return 1 end",
		"return (1",
	)
}

func TestShebang(t *testing.T) {
	h := newHarness(t)
	h.evalAll(
		"#!lua\nreturn y",
		"#!lua flags=no-writes,allow-stale\nreturn 1",
		"#!luax\nreturn 1",
		"#!lua flags=bad\nreturn 1",
		"#!lua foo=bar\nreturn 1",
		"#!lua flags=no-writes flags=allow-oom\nreturn 1",
		"#!lua flags=\nreturn 1",
		"#!lua name=x\nreturn 1",
		"#! lua\nreturn 1",
		"#!lua   flags=no-writes,,allow-oom  \nreturn 1",
		"#!",
		"#!lua",
		"#!lua FLAGS=no-writes\nreturn 1",
		"#!lua flags=NO-WRITES\nreturn 1",
	)
	for body, want := range map[string]scripting.Flags{
		"#!lua\nreturn 1": 0,
		"#!lua flags=no-writes,allow-oom,allow-stale,no-cluster,allow-cross-slot-keys\nreturn 1": scripting.FlagNoWrites | scripting.FlagAllowOOM | scripting.FlagAllowStale | scripting.FlagNoCluster | scripting.FlagAllowCrossSlotKeys,
		"#!lua flags=no-writes flags=allow-oom\nreturn 1":                                        scripting.FlagNoWrites | scripting.FlagAllowOOM,
	} {
		sha, err := h.eng.LoadScript([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		s, _ := h.eng.Script(strings.ToUpper(sha))
		if s.Flags != want || !s.Shebang {
			t.Errorf("%q: flags %v shebang %v, want %v", body, s.Flags, s.Shebang, want)
		}
	}
}

func TestSandbox(t *testing.T) {
	h := newHarness(t)
	h.evalAll(
		"local t={} for k,v in pairs(_G) do t[#t+1]=k end table.sort(t) return t",
		"local t={} for k,v in pairs(redis) do t[#t+1]=k end table.sort(t) return t",
		"local t={} for k,v in pairs(string) do t[#t+1]=k end table.sort(t) return t",
		"local t={} for k,v in pairs(table) do t[#t+1]=k end table.sort(t) return t",
		"local t={} for k,v in pairs(math) do t[#t+1]=k end table.sort(t) return t",
		"local t={} for k,v in pairs(coroutine) do t[#t+1]=k end table.sort(t) return t",
		"local t={} for k,v in pairs(bit) do t[#t+1]=k end table.sort(t) return t",
		"x = 1",
		"return y",
		"print('x')",
		"return os",
		"return io",
		"return debug",
		"return package",
		"return require",
		"return dofile",
		"return loadfile",
		"return getfenv",
		"return setfenv",
		"return newproxy",
		"string.x = 1",
		"redis.call = nil",
		"rawset(_G, 'x', 1)",
		"_G.x = 1",
		"KEYS = 1",
		"getmetatable('').__index = nil",
		"setmetatable(_G, {})",
		"table.insert(_G, 1)",
		"table.insert(string, 1)",
		"KEYS[1] = 'x' return KEYS[1]",
		"return rawget(_G, 'foo')",
		"return rawget(_G, 'redis') ~= nil",
		"return type(getmetatable(''))",
		"return ('abc'):upper()",
		"return ('x'):rep(3, 1)",
		"return loadstring('return 1 .. 2.5')()",
		"return loadstring('x = ')",
		"return {loadstring('return 1 +')}",
		"local f = loadstring('return ...') return f(1, 2)",
		"return _VERSION",
		"return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING}",
		"return {redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL}",
		"return select('#', ...)",
		"local co = coroutine.create(function(a) local b = coroutine.yield(a + 1) return b * 2 end) local _, x = coroutine.resume(co, 1) local _, y = coroutine.resume(co, 10) return {x, y, coroutine.status(co)}",
		"local n = 0 for k in string.gmatch('a b c', '%a') do n = n + 1 end return n",
		"return {string.find('hello', 'l')}",
		"return string.gsub('hello world', 'o', '0')",
		"return {string.gsub('hello world', '(%w+)', '<%1>')}",
		"return {string.find('a.b', '.', 1, true), string.find('a.b', '%.')}",
		"return {string.match('key:123', '(%a+):(%d+)')}",
		"return {string.match('f(a(b)c)', '%b()'), string.match(' x', '()x')}",
		"return {string.gsub('abc', '%w', {a = 1, b = true})}",
		"return {string.gsub('abc', '%w', {a = 1/3, b = false})}",
		"return {string.gsub('abc', '%w', function() return {} end)}",
		"return {string.gsub('a=1, b=2', '(%w+)=(%w+)', function(k, v) return v .. k end)}",
		"return {string.gsub('abc', '%w', function(c) if c == 'b' then return 2.5 end end)}",
		"return {string.sub('hello', -3), string.sub('hello', 2, 100), string.byte('A'), string.char(72, 105)}",
		"return {string.format('%q', 1/3), string.format('%s', 1e100), string.format('%d', -0.5)}",
		"return {string.rep('ab', 3, ','), string.reverse('abc'), string.lower('ABC'), string.len('\\0a')}",
		"return table.getn({1, 2, 3})",
		"local t = {} table.foreach({a=1}, function(k, v) t[#t+1] = k .. v end) return t",
		"local t = {} table.foreachi({5, 6}, function(i, v) t[#t+1] = i .. v end) return t",
		"return table.maxn({1, 2, nil, 4})",
		"return math.mod(7, 3)",
		"return math.fmod(-7, 3)",
		"return {math.frexp(8)}",
		"return math.huge > 0",
		"return unpack({1, 2, 3})",
		"return {unpack({1, 2, 3})}",
		"return {next({})}",
		"return #KEYS",
		"local t = setmetatable({}, {__index = function(t, k) return k .. '!' end}) return t.x",
		"local t = setmetatable({}, {__concat = function(a, b) return 'cat' end}) return t .. 'x'",
		"local t = setmetatable({}, {__tostring = function() return 'T' end}) return tostring(t)",
		"return tostring(nil) .. tostring(true)",
		"return type(gcinfo())",
		"local function f(n) if n == 0 then return 0 end return 1 + f(n - 1) end return f(1000)",
	)
}

// The PRNG is process-wide and never reseeded, so both sides start fresh.
func TestRandom(t *testing.T) {
	h := newIsolatedHarness(t)
	for i := 0; i < 2; i++ {
		h.evalAll(
			"return math.random(100)",
			"return {math.random(1000), math.random(1000), math.random(5, 10)}",
			"return tostring(math.random())",
			"math.randomseed(5) return math.random(100)",
			"math.randomseed(-7) return {math.random(1000000), math.random(1000000)}",
		)
	}
}

// A self-referencing table nests until Lua's C stack limit; redis-server
// emits 7995 arrays and then the error (checked by hand: the difftest
// reader refuses replies nested that deeply).
func TestReplyDepthLimit(t *testing.T) {
	h := newHarness(t)
	got := h.engineEval("local t = {} t[1] = t return t", nil, nil)
	want := strings.Repeat("*1\r\n", 7995) + "-ERR reached lua stack limit\r\n"
	if string(got) != want {
		t.Errorf("got %d bytes ending %q", len(got), got[max(0, len(got)-60):])
	}
}

// TestRedisVersion: scripts see the version INFO reports (7.4.1, see package
// version), not the 7.0.15 of the oracle this file compares with.
func TestRedisVersion(t *testing.T) {
	h := newHarness(t)
	got := string(h.engineEval("return redis.REDIS_VERSION .. ' ' .. redis.REDIS_VERSION_NUM", nil, nil))
	want := fmt.Sprintf("$%d\r\n%s %d\r\n", len(version.Redis)+1+len(strconv.Itoa(version.RedisNum)), version.Redis, version.RedisNum)
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
