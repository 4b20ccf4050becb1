package server_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// The scripting package has its own differential tests of the Lua
// environment; these check the commands around it: EVAL/EVALSHA/FCALL
// arguments and errors, the script cache, functions, the checks redis.call
// makes, atomicity with other clients, and what scripts wake and touch.

func TestEvalCommands(t *testing.T) {
	p := difftest.Start(t)
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		p.Do("EVAL", "return {1, 'two', 3.9, true, false, {ok='fine'}, redis.call('ping')}", 0)
		p.Do("EVAL", "return {KEYS[1], KEYS[2], ARGV[1], #KEYS, #ARGV}", 2, "k1", "k2", "a1")
		p.Do("EVAL", "redis.setresp(3); return redis.call('hgetall', KEYS[1])", 1, "h")
		p.Do("HSET", "h", "f", "v")
		p.Do("EVAL", "redis.setresp(3); return redis.call('hgetall', KEYS[1])", 1, "h")
		p.Do("EVAL", "return redis.call('zscore', 'nosuch', 'm')", 0)
		p.Do("FLUSHALL")
	}
	p.Do("EVAL", "return 1", "x")
	p.Do("EVAL", "return 1", -1)
	p.Do("EVAL", "return 1", 2, "a")
	p.Do("EVAL", "return 1")
	r, k := p.DoDifferent("gopher-lua words parse errors differently from Lua 5.1", "EVAL", "syntax error here", 0)
	for _, reply := range []difftest.Reply{r, k} {
		if !strings.HasPrefix(reply.Str, "ERR Error compiling script (new function): user_script:1: ") {
			t.Errorf("compile error: %q", reply.Str)
		}
	}
	p.Do("EVAL", "return redis.call('nosuch')", 0)
	p.Do("EVAL", "return redis.call('get')", 0)
	// BLPOP in a script: TestBlockingInScripts (7.2+ runs it without blocking).
	p.Do("EVAL", "return redis.call('multi')", 0)
	p.Do("EVAL", "return redis.call('eval', 'return 1', 0)", 0)
	p.Do("EVAL", "return redis.pcall('incr', KEYS[1])", 1, "h")
	p.Do("SET", "s", "x")
	p.Do("EVAL", "return redis.call('incr', KEYS[1])", 1, "s")
	p.Do("EVAL", "return redis.pcall('incr', KEYS[1])", 1, "s")
	p.Do("EVAL", "return redis.call('blmpop', 0.01, 1, 'empty', 'left')", 0) // non-blocking in scripts
	p.Do("EVAL", "return redis.call('lpush', 'l', 1, 2)", 0)
	p.Do("EVAL", "redis.call('select', 5); redis.call('set', 'in5', 1); return redis.call('dbsize')", 0)
	p.Do("EXISTS", "in5") // the script's SELECT does not move the caller
	p.Do("SELECT", 5)
	p.Do("GET", "in5")
	p.Do("SELECT", 0)
}

func TestEvalReadOnly(t *testing.T) {
	p := difftest.Start(t)
	p.Do("EVAL_RO", "return redis.call('set', 'a', 1)", 0)
	p.Do("EVAL_RO", "return redis.call('get', 'a')", 0)
	p.Do("EVAL_RO", "#!lua\nreturn 1", 0)
	p.Do("EVAL_RO", "#!lua flags=no-writes\nreturn redis.call('get', 'a')", 0)
	p.Do("EVAL", "#!lua flags=no-writes\nreturn redis.call('set', 'a', 1)", 0)
	p.Do("EVAL", "#!lua flags=bogus\nreturn 1", 0)
	p.Do("EVAL", "#!python\nreturn 1", 0)
	p.Do("EVAL", "#!lua\nreturn redis.call('set', 'a', 2)", 0)
	p.Do("GET", "a")
}

// TestReadOnlyScriptsRefuseMayReplicate: a read-only script (EVAL_RO,
// FCALL_RO, a no-writes shebang) refuses the commands that may propagate
// without being writes (PUBLISH, SPUBLISH, PFCOUNT), as Redis does; a
// script without flags may run them.
func TestReadOnlyScriptsRefuseMayReplicate(t *testing.T) {
	p := difftest.StartIsolated(t)
	p.Do("PFADD", "hll", "a", "b")
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		for _, call := range []string{"redis.pcall('publish', 'ch', 'm')", "redis.pcall('spublish', 'ch', 'm')", "redis.pcall('pfcount', 'hll')"} {
			p.Do("EVAL_RO", "return "+call, 0)
			p.Do("EVAL", "#!lua flags=no-writes\nreturn "+call, 0)
			p.Do("EVAL", "return "+call, 0)
		}
		p.Do("FUNCTION", "LOAD", "REPLACE", "#!lua name=pub\nredis.register_function{function_name='pub', callback=function(k, a) return redis.pcall('publish', 'ch', 'm') end, flags={'no-writes'}}")
		p.Do("FCALL_RO", "pub", 0)
		p.Do("FCALL", "pub", 0)
	}
}

func TestScriptCache(t *testing.T) {
	p := difftest.Start(t)
	sha := p.Do("SCRIPT", "LOAD", "return 'cached ' .. ARGV[1]").Str
	p.Do("EVALSHA", sha, 0, "x")
	p.Do("EVALSHA_RO", sha, 0, "y")
	p.Do("EVALSHA", sha, 1)
	p.Do("EVALSHA", "0000000000000000000000000000000000000000", 0)
	p.Do("EVALSHA", "short", 0)
	p.Do("SCRIPT", "EXISTS", sha, "nosuch", sha)
	p.Do("EVAL", "return 'cached ' .. ARGV[1]", 0, "z")
	p.Do("SCRIPT", "FLUSH", "BOGUS")
	p.Do("SCRIPT", "FLUSH", "ASYNC")
	p.Do("SCRIPT", "EXISTS", sha)
	p.Do("EVALSHA", sha, 0)
	p.Do("SCRIPT", "LOAD", "not lua at all (")
	p.Do("SCRIPT", "KILL")
	p.Do("SCRIPT", "NOSUCH")
	p.Do("SCRIPT", "FLUSH")
}

func TestFunctions(t *testing.T) {
	p := difftest.Start(t)
	lib := "#!lua name=counters\n" +
		"redis.register_function('incr_by', function(keys, args) return redis.call('incrby', keys[1], args[1]) end)\n" +
		"redis.register_function{function_name='peek', callback=function(keys) return redis.call('get', keys[1]) end, flags={'no-writes'}, description='read it'}\n"
	p.Do("FUNCTION", "LOAD", lib)
	p.Do("FUNCTION", "LOAD", lib)
	p.Do("FUNCTION", "LOAD", "BOGUS", lib)
	p.Do("FCALL", "incr_by", 1, "c", 5)
	p.Do("FCALL", "peek", 1, "c")
	p.Do("FCALL_RO", "peek", 1, "c")
	p.Do("FCALL_RO", "incr_by", 1, "c", 5)
	p.Do("FCALL", "nosuch", 0)
	p.Do("FCALL", "peek", -1)
	// Redis lists functions in hash order: compare a one-function library.
	p.Do("FUNCTION", "LOAD", "#!lua name=single\nredis.register_function('one', function() return 1 end)")
	p.Do("FUNCTION", "LIST", "LIBRARYNAME", "sing*")
	p.Do("FUNCTION", "LIST", "WITHCODE", "LIBRARYNAME", "sing*")
	p.Do("FUNCTION", "LIST", "LIBRARYNAME", "nomatch*")
	p.Do("FUNCTION", "DELETE", "single")
	p.Do("FUNCTION", "LIST", "BOGUS")
	p.Do("FUNCTION", "STATS")
	p.Do("FUNCTION", "KILL")
	dump := p.Do("FUNCTION", "DUMP")
	p.Do("FUNCTION", "RESTORE", dump.Str)
	p.Do("FUNCTION", "RESTORE", dump.Str, "REPLACE")
	p.Do("FUNCTION", "RESTORE", dump.Str, "BOGUS")
	p.Do("FUNCTION", "RESTORE", "garbage")
	p.Do("FUNCTION", "DELETE", "counters")
	p.Do("FUNCTION", "DELETE", "counters")
	p.Do("FCALL", "peek", 1, "c")
	p.Do("FUNCTION", "RESTORE", dump.Str, "FLUSH")
	p.Do("FCALL", "peek", 1, "c")
	p.Do("FUNCTION", "FLUSH", "BOGUS")
	p.Do("FUNCTION", "FLUSH")
	p.Do("FUNCTION", "LIST")
	p.Proto(3)
	p.Do("FUNCTION", "STATS")
}

// TestScriptsAreAtomic: two clients' scripts and plain commands interleave
// only between scripts.
func TestScriptWakesAndTouches(t *testing.T) {
	p := difftest.Start(t)
	w := p.NewConn()
	w.Send("BLPOP", "q", 0)
	w.NoReply(stillBlocked)
	p.Do("EVAL", "redis.call('rpush', KEYS[1], 'a', 'b'); return redis.call('lpop', KEYS[1])", 1, "q")
	w.Read()
	p.Do("LRANGE", "q", 0, -1)

	other := p.NewConn()
	p.Do("WATCH", "k")
	other.Do("EVAL", "return redis.call('set', 'k', 1)", 0)
	p.Do("MULTI")
	p.Do("EVAL", "return redis.call('incr', 'k')", 0)
	p.Do("EXEC")
	p.Do("MULTI")
	p.Do("EVAL", "return redis.call('incr', 'k')", 0)
	p.Do("INCR", "k")
	p.Do("EXEC")
}

// TestSeedWaitingRoomScripts runs seed 002's four scripts, loaded with SCRIPT
// LOAD and called with EVALSHA as the application does, for many users.
func TestSeedWaitingRoomScripts(t *testing.T) {
	p := difftest.Start(t)
	sha := map[string]string{}
	for _, name := range []string{"enqueue", "dequeue", "heartbeat", "cleanup"} {
		sha[name] = p.Do("SCRIPT", "LOAD", seedScript(t, name)).Str
	}
	const q = "queue:{concert}"
	rng := rand.New(rand.NewPCG(7, 7))
	ts := int64(1704067200_000000)
	var positions []string
	for i := range 300 {
		ts += rng.Int64N(3_000000)
		switch op := rng.IntN(10); {
		case op < 5:
			pos := fmt.Sprintf("pos-%d", i)
			ip := fmt.Sprintf("iphash-%d", rng.IntN(40)) // repeats: the idempotency path
			p.Do("EVALSHA", sha["enqueue"], 5, fmt.Sprintf("%s:waiting:%d", q, rng.IntN(4)), q+":positions",
				"position:"+pos, "ipmap:{concert}:"+ip, "heartbeat:active", pos, ts, ip, 1800, `{"ua":"test"}`)
			positions = append(positions, pos)
		case op < 7:
			p.Do("EVALSHA", sha["dequeue"], 6, q+":waiting:0", q+":waiting:1", q+":waiting:2", q+":waiting:3",
				q+":positions", q+":sessions:active", fmt.Sprintf("sess-%d", i), ts)
		case op < 9 && len(positions) > 0:
			pos := positions[rng.IntN(len(positions))]
			p.Do("EVALSHA", sha["heartbeat"], 2, "position:"+pos, "heartbeat:active", pos, ts/1000000, 1800)
		default:
			p.Do("EVALSHA", sha["cleanup"], 2, "heartbeat:active", q+":positions", ts/1000000-5, 10)
		}
	}
	p.Do("ZRANGE", q+":positions", 0, -1, "WITHSCORES")
	p.Do("ZRANGE", "heartbeat:active", 0, -1, "WITHSCORES")
	p.DoUnordered("SMEMBERS", q+":sessions:active")
	for _, pos := range positions[:20] {
		p.DoUnorderedPairs("HGETALL", "position:"+pos)
	}
}

// TestScriptBusyAndKill: past busy-reply-threshold other clients get BUSY,
// SCRIPT KILL stops a script that has not written, and one that has is
// unkillable (it runs out of its loop here; SHUTDOWN NOSAVE is tested with
// go-redis in TestShutdownDuringScript).
func TestScriptBusyAndKill(t *testing.T) {
	p := difftest.StartIsolated(t, "--busy-reply-threshold", "100")
	a, b := p.NewConn(), p.NewConn()
	a.Send("EVAL", "while true do end", 0)
	waitBusy(t, b)
	b.Do("PING")
	b.Do("GET", "x")
	b.Do("FUNCTION", "KILL")
	b.Do("SCRIPT", "KILL")
	a.Read()
	b.Do("PING")

	a.Send("EVAL", "redis.call('set', 'x', 1); local t = redis.call('time')[1] + 1; while tonumber(redis.call('time')[1]) < t + 1 do end; return 'done'", 0)
	waitBusy(t, b)
	b.Do("SCRIPT", "KILL")
	p.SetTimeout(10 * time.Second)
	a.SetTimeout(10 * time.Second)
	a.Read()
	b.Do("GET", "x")
}

// waitBusy waits until both servers of p answer BUSY, their scripts past
// busy-reply-threshold: a fixed sleep was too short on a loaded machine,
// where a server had not even started its script (or had not yet passed
// its set) when SCRIPT KILL came.
func waitBusy(t *testing.T, p *difftest.Pair) {
	t.Helper()
	for _, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
		waitUntil(t, "the script to make the server busy", func() bool {
			return strings.HasPrefix(c.Do("PING").Str, "BUSY")
		})
	}
}

// TestRateLimiterScript: the sliding-window counter rate limiter that
// bench/throughput.sh measures (seed 003's pattern) replies alike.
func TestRateLimiterScript(t *testing.T) {
	p := difftest.Start(t)
	b, err := os.ReadFile(filepath.Join("testdata", "scripts", "sliding_window.lua"))
	if err != nil {
		t.Fatal(err)
	}
	sha := p.Do("SCRIPT", "LOAD", string(b)).Str
	now := int64(1704067200000)
	for i := range 200 {
		now += int64(i % 700)
		window := now / 60000
		p.Do("EVALSHA", sha, 2, fmt.Sprintf("ratelimit:pk_%d:%d", i%3, window), fmt.Sprintf("ratelimit:pk_%d:%d", i%3, window-1), 25, now, 60000, 1)
	}
}

// TestFunctionNames: function names are case-insensitive (FCALL finds
// MyFunc as myfunc, and the two clash), library names are not, and the
// shebang's words are split as Redis splits them (quotes group).
func TestFunctionNames(t *testing.T) {
	p := difftest.StartIsolated(t)
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		p.Do("FUNCTION", "FLUSH")
		p.Do("FUNCTION", "LOAD", "#!lua name=caselib\nredis.register_function('MyFunc', function(k, a) return 1 end)")
		p.Do("FCALL", "myfunc", 0)
		p.Do("FCALL", "MYFUNC", 0)
		p.Do("FCALL_RO", "myFUNC", 0)
		p.Do("FUNCTION", "LOAD", "#!lua name=other\nredis.register_function('myfunc', function(k, a) return 2 end)")
		p.Do("FUNCTION", "LOAD", "#!lua name=twice\nredis.register_function('f', function(k, a) return 2 end)\nredis.register_function('F', function(k, a) return 2 end)")
		p.Do("FUNCTION", "DELETE", "CASELIB")
		p.Do("FUNCTION", "LOAD", "#!lua name=CASELIB\nredis.register_function('zz', function(k, a) return 3 end)")
		p.Do("FUNCTION", "LOAD", "#!lua name=\"qlib\"\nredis.register_function('qf', function(k, a) return 4 end)")
		p.Do("FCALL", "qf", 0)
		p.Do("FUNCTION", "LOAD", "#!lua name='sq'\nredis.register_function('sqf', function(k, a) return 5 end)")
		p.Do("FUNCTION", "LOAD", "#!lua name=a\"b\"\nredis.register_function('abf', function(k, a) return 6 end)")
		p.Do("FUNCTION", "LOAD", "#!lua name=\"unbalanced\nredis.register_function('u', function(k, a) return 7 end)")
		p.Do("FUNCTION", "LOAD", "#!lua name=\"q\"x\nredis.register_function('u', function(k, a) return 7 end)")
		p.DoUnordered("FUNCTION", "LIST", "LIBRARYNAME", "sq")
	}
}

// TestScriptNumkeysErrors: EVAL reads numkeys first; FCALL looks the
// function up first, and words a numkeys that is no integer its own way.
func TestScriptNumkeysErrors(t *testing.T) {
	p := difftest.StartIsolated(t)
	p.Do("FUNCTION", "LOAD", "#!lua name=nk\nredis.register_function('f', function(k, a) return #k end)")
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		for _, cmd := range []string{"EVAL", "EVAL_RO", "EVALSHA", "FCALL", "FCALL_RO"} {
			target := "return 1"
			switch cmd {
			case "EVALSHA":
				target = "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"
			case "FCALL", "FCALL_RO":
				target = "f"
			}
			for _, n := range []string{"-1", "2", "abc", "1.5", "", "99999999999999999999", "0x1"} {
				p.Do(cmd, target, n, "k1")
			}
			p.Do(cmd, target, "1", "k1")
		}
		for _, n := range []string{"0", "-1", "5", "x"} {
			p.Do("FCALL", "nosuch", n)
			p.Do("FCALL_RO", "nosuch", n)
		}
		p.Do("EVAL", "return redis.call()", 0)
		p.Do("EVAL", "return redis.pcall()", 0)
		p.Do("EVAL", "return redis.call({})", 0)
		p.Do("EVAL", "return redis.call('get', {})", 0)
		p.Do("EVAL", "return redis.call('get', nil)", 0)
		p.Do("EVAL", "return redis.call('nosuch')", 0)
		p.Do("EVAL", "return redis.call('get')", 0)
		p.Do("EVAL", "return redis.pcall('get', 'a', 'b')", 0)
	}
}

// TestFunctionStatsWhileBusy: once a function is busy, FUNCTION STATS from
// another client shows it (name, the FCALL's arguments, its duration);
// during a busy EVAL it is refused with BUSY. EXEC meanwhile aborts the
// transaction with the BUSY text and leaves MULTI.
func TestFunctionStatsWhileBusy(t *testing.T) {
	p := difftest.StartIsolated(t, "--busy-reply-threshold", "100")
	p.Do("FUNCTION", "LOAD", "#!lua name=slow\nredis.register_function('slowf', function(keys, args) while true do end end)\nredis.register_function('other', function() return 1 end)")
	a, b, m := p.NewConn(), p.NewConn(), p.NewConn()
	for _, proto := range []int{2, 3} {
		b.Proto(proto)
		m.Proto(proto)
		b.Do("FUNCTION", "STATS")

		m.Do("MULTI")
		m.Do("SET", "x", "1")
		m.Do("INCR", "y")
		a.Send("FCALL", "slowf", 2, "k1", "k2", "arg")
		time.Sleep(300 * time.Millisecond)
		b.DoApprox(1000, "FUNCTION", "STATS")
		m.Do("EXEC")
		m.Do("EXEC") // MULTI was left
		m.Do("GET", "x")
		b.Do("FUNCTION", "KILL")
		a.Read()
		b.Do("FUNCTION", "STATS")
		m.Do("GET", "x")

		m.Do("MULTI")
		m.Do("GET", "x")
		a.Send("EVAL", "while true do end", 0)
		time.Sleep(300 * time.Millisecond)
		b.Do("FUNCTION", "STATS")
		m.Do("EXEC")
		m.Do("MULTI")
		m.Do("SET", "x", "1") // refused while queued: EXEC says previous errors
		b.Do("SCRIPT", "KILL")
		a.Read()
		m.Do("EXEC")
		m.Do("EXISTS", "x")
	}
}

// TestScriptDebug: SCRIPT DEBUG NO succeeds; Keyhive has no Lua debugger,
// so YES and SYNC are refused where Redis accepts them and debugs the next
// EVAL. Bad modes and a pipeline or transaction get Redis's errors.
func TestScriptDebug(t *testing.T) {
	p := difftest.Start(t)
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		p.Do("SCRIPT", "DEBUG", "NO")
		p.Do("SCRIPT", "DEBUG", "no")
		p.Do("SCRIPT", "DEBUG", "maybe")
		p.Do("SCRIPT", "DEBUG")
		p.Do("SCRIPT", "DEBUG", "NO", "extra")
		p.DoDifferent("Keyhive has no Lua debugger: YES is refused", "SCRIPT", "DEBUG", "YES")
		p.DoDifferent("Keyhive has no Lua debugger: SYNC is refused", "SCRIPT", "DEBUG", "SYNC")
		p.Do("SCRIPT", "DEBUG", "NO")
		p.SendRaw([]byte("PING\r\nSCRIPT DEBUG NO\r\n"))
		p.Read()
		p.Read()
		p.Do("MULTI")
		p.Do("SCRIPT", "DEBUG", "NO")
		p.Do("EXEC")
		p.Do("EVAL", "return redis.call('script', 'debug', 'no')", 0)
		p.Do("EVAL", "return 1", 0)
	}
}
