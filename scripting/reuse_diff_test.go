package scripting_test

import (
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/scripting"
)

// What the engine reuses between runs for speed must not show: KEYS and
// ARGV are refilled rather than rebuilt, globals are read into hoisted
// locals, scripts that write no global run with the globals table itself
// as environment, and numbers are boxed from a cache.
func TestReuseBetweenRuns(t *testing.T) {
	h := newHarness(t)
	// A script that changes KEYS and ARGV, then runs that read them.
	h.eval("KEYS[1] = 'changed' KEYS.extra = 1 ARGV[3] = 'x' return #ARGV", []string{"a", "b"}, "1", "2")
	h.eval("return {KEYS[1], KEYS[2], tostring(KEYS.extra), #KEYS, ARGV[1], tostring(ARGV[3]), #ARGV}", []string{"a", "b"}, "1", "2")
	h.eval("setmetatable(KEYS, {__index = function() return 'meta' end}) return KEYS[9]", []string{"a"})
	h.eval("return {tostring(KEYS[9]), tostring(getmetatable(KEYS))}", []string{"a"})
	h.eval("KEYS[3] = nil return #KEYS", []string{"a", "b", "c"})
	h.eval("return {#KEYS, KEYS[1], KEYS[2], KEYS[3], #ARGV}", []string{"a", "b", "c"})
	h.eval("return {#KEYS, #ARGV}", nil)
	h.eval("return {KEYS[1], ARGV[1], ARGV[2]}", []string{"k"}, "v", "")
	// Hoisting: shadowing, nested functions, assignments that must fail.
	h.evalAll(
		"local redis = {call = function() return 'mine' end} return redis.call('ping')",
		"local r = redis.call('ping') local redis = 5 return {r, redis}",
		"local function f() return redis.call('echo', KEYS and 'k' or 'x') end return f()",
		"return (function(...) local tonumber = tostring return tonumber(1) end)()",
		"KEYS = {} return 1",
		"tonumber = nil return 1",
		"redis.call = nil return 1",
		"function redis.call() end return 1",
		"function tostring() end return 1",
		"local t = {} function t.f() return redis.pcall('ping') end return t.f()",
		"return {type(redis), type(KEYS), type(ARGV), type(tonumber), type(tostring), type(type), type(pairs), type(ipairs), type(unpack), type(math), type(string), type(table), type(cjson)}",
		"return redis.call('nosuch')",
		"return redis.pcall('nosuch')",
		"return redis.call()",
		"return nosuchglobal",
		"return tostring(-0.0) .. ' ' .. tostring(0) .. ' ' .. tostring(1 - 1)",
	)
	// Numbers boxed from the cache keep their values, -0 its sign.
	for i := 0; i < 3; i++ {
		h.eval("return {tostring(tonumber(ARGV[1])), tostring(tonumber(ARGV[2])), tostring(tonumber(ARGV[3])), tostring(tonumber(ARGV[4])), redis.call('incrby', 'n', ARGV[5])}",
			nil, "1704067230000", "-0", "-17", "999999999999999", "1000")
	}
	// Reply strings are shared from a cache; status tables are not.
	h.evalAll(
		"redis.call('set', 's', 'v') local a, b = redis.call('get', 's'), redis.call('get', 's') return {a, b, tostring(a == b)}",
		"local r = redis.call('set', 's', 'v') r.ok = 'changed' return {redis.call('set', 's', 'v'), r}",
	)
	h.evalAll(
		"return {tostring(tonumber('007')), tostring(tonumber('-')), tostring(tonumber('+5')), tostring(tonumber('1234567890123456')), tostring(tonumber('-1234567890123456789')), tostring(tonumber('12 ')), tostring(tonumber('0x')), tostring(tonumber('INF')), tostring(tonumber('-iNfInItY'))}",
	)
}

// Every kind of endless script stops at SCRIPT KILL: loops of each form,
// recursion through tail calls, and code reached through pcall, coroutines
// and library callbacks.
func TestKillCheckpoints(t *testing.T) {
	e := scripting.NewEngine()
	for _, body := range []string{
		"repeat until false",
		"for i = 1, math.huge do end",
		"for k in function() return 1 end do end",
		"local function f() return f() end return f()",
		"local co = coroutine.wrap(function() while true do end end) co()",
		"table.sort({3, 2, 1, 5, 4}, function(a, b) while true do end end)",
		"string.gsub('abc', '%w', function(c) while true do end end)",
		"while true do pcall(error, 'x') end",
	} {
		done := runAsync(e, body, &okHost{})
		waitRunning(t, e)
		e.Kill()
		select {
		case got := <-done:
			if !strings.HasPrefix(got, "-ERR Script killed by user with SCRIPT KILL...") {
				t.Errorf("%q: killed script replied %q", body, got)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%q survived Kill", body)
		}
	}
}

// A runaway recursion stops with Lua's "stack overflow" at the line of the
// call, quickly (a tick notices the depth before gopher-lua's own overflow,
// which costs seconds), also under pcall.
func TestRecursionLimit(t *testing.T) {
	h := newHarness(t)
	h.evalAll(
		"local function f(n) return 1 + f(n + 1) end return f(1)",
		"local function f(n)\n  local x = 1\n  return 1 + f(n + 1)\nend\nreturn f(1)",
		"local function f(n) return pcall(f, n) end return f(1)",
		"local function f(n)\n if n > 0 then\n  return 1 + f(n + 1)\n end\nend\nreturn {pcall(f, 1)}",
	)
}
