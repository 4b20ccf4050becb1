package server_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// monitorPrefix is a MONITOR line's time and client address, which differ
// between the servers; the database and "lua" are kept.
var monitorPrefix = regexp.MustCompile(`^\d+\.\d{6} \[(\d+) ([^\]]*)\]`)

func normalizeMonitor(line string) string {
	m := monitorPrefix.FindStringSubmatch(line)
	if m == nil {
		return "unexpected line: " + line
	}
	who := "client"
	if m[2] == "lua" {
		who = "lua"
	}
	return "[" + m[1] + " " + who + "]" + line[len(m[0]):]
}

// monitorLines reads n replies from a monitoring connection, normalized.
func monitorLines(t *testing.T, c *difftest.Client, n int) []string {
	t.Helper()
	var lines []string
	for range n {
		r, err := c.Conn().Read()
		if err != nil {
			t.Fatalf("%s: reading MONITOR line %d: %v (so far %q)", c.Name(), len(lines), err, lines)
		}
		if r.Kind != '+' {
			t.Fatalf("%s: MONITOR sent %q, not a simple string", c.Name(), r.Raw)
		}
		lines = append(lines, normalizeMonitor(r.Str))
	}
	return lines
}

// TestMonitor: the lines MONITOR shows for commands run by clients, EXEC,
// scripts and functions, in Redis's format and order, with credentials
// redacted and administrative or refused commands left out.
func TestMonitor(t *testing.T) {
	for _, proto := range []int{2, 3} {
		p := difftest.StartIsolated(t)
		mon := p.NewConn()
		mon.Proto(proto)
		mon.Do("MONITOR")
		mon.Send("MONITOR") // again: no reply, as Redis
		mon.NoReply(50 * time.Millisecond)
		p.Do("SET", "a", "1")
		p.Do("SET", "bin", "a\x01\n\"b\\\xff")
		p.Do("EVAL", "redis.call('set','b',ARGV[1]); return redis.call('get','b')", "0", "x y")
		p.Do("EVALSHA", "0123456789012345678901234567890123456789", "0") // shown, though it fails
		p.Do("MULTI")
		p.Do("SET", "c", "1")
		p.Do("INCR", "c")
		p.Do("EVAL", "return redis.call('incr','c')", "0")
		p.Do("EXEC")
		p.Do("AUTH", "nobody", "secret")
		p.Do("HELLO", "2", "AUTH", "nobody", "wrong")
		p.Do("CONFIG", "GET", "hz") // admin: not shown
		p.Do("NOSUCHCOMMAND", "x")  // refused: not shown
		p.Do("GET")                 // wrong arity: not shown
		p.Do("FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('f', function(k, a) return redis.call('incr', k[1]) end)")
		p.Do("FCALL", "f", "1", "cnt")
		p.Do("SELECT", "3")
		p.Do("SET", "d", "x")
		p.Do("BLPOP", "nolist", "0.01")
		p.Do("SELECT", "0")
		p.Do("PING")
		const want = 22
		r := monitorLines(t, mon.Redis(), want)
		k := monitorLines(t, mon.Keyhive(), want)
		if strings.Join(r, "\n") != strings.Join(k, "\n") {
			t.Errorf("RESP%d MONITOR lines differ:\nredis:\n%s\nkeyhive:\n%s", proto, strings.Join(r, "\n"), strings.Join(k, "\n"))
		}
		// The monitoring client itself: no keyspace access, its own commands
		// shown after their replies, RESET ends it.
		mon.Do("GET", "a")
		mon.Do("PING")
		r = monitorLines(t, mon.Redis(), 1)
		k = monitorLines(t, mon.Keyhive(), 1)
		if r[0] != k[0] {
			t.Errorf("RESP%d own command: redis %q, keyhive %q", proto, r[0], k[0])
		}
		mon.Do("RESET")
		p.Do("SET", "after", "reset")
		mon.NoReply(50 * time.Millisecond)
	}
}

// TestMonitorInExec: MONITOR queued in MULTI fails at EXEC, as Redis refuses
// a client that expects one reply per command.
func TestMonitorInExec(t *testing.T) {
	p := difftest.StartIsolated(t)
	p.Do("MULTI")
	p.Do("MONITOR")
	p.Do("EXEC")
	p.Do("PING")
}

// TestCommandstatsEveryPath: a command counts the same whether a client,
// EXEC, a script or a function runs it, as every path goes through dispatch.
func TestCommandstatsEveryPath(t *testing.T) {
	p := difftest.StartIsolated(t)
	p.Do("CONFIG", "RESETSTAT")
	p.Do("SET", "k", "1")
	p.Do("MULTI")
	p.Do("SET", "k", "2")
	p.Do("EXEC")
	p.Do("EVAL", "return redis.call('set', KEYS[1], '3')", "1", "k")
	p.Do("FUNCTION", "LOAD", "REPLACE", "#!lua name=statlib\nredis.register_function('setk', function(k, a) return redis.call('set', k[1], '4') end)")
	p.Do("FCALL", "setk", "1", "k")
	p.Do("EVAL", "return redis.pcall('set')", "0") // refused: rejected_calls
	stat := func(c *difftest.Client) string {
		for _, line := range strings.Split(c.Do("INFO", "commandstats").Str, "\r\n") {
			if strings.HasPrefix(line, "cmdstat_set:") {
				i := strings.Index(line, "calls=")
				j := strings.Index(line, ",usec=")
				k := strings.Index(line, ",rejected_calls=")
				return line[i:j] + line[k:]
			}
		}
		return ""
	}
	if r, k := stat(p.Redis()), stat(p.Keyhive()); r != k || !strings.HasPrefix(r, "calls=4,") {
		t.Errorf("cmdstat_set: redis %q, keyhive %q", r, k)
	}
}

// TestMonitorAfterBlockedClientLeaves: a client that disconnects while
// blocked (BLPOP, BZPOPMIN, XREAD BLOCK) leaves MONITOR feeding its lines,
// as Redis does (issue 40: MONITOR fell silent for good).
func TestMonitorAfterBlockedClientLeaves(t *testing.T) {
	p := difftest.StartIsolated(t)
	mon := p.NewConn()
	mon.Do("MONITOR")
	for _, cmd := range []string{"BLPOP list 0", "BZPOPMIN zset 0", "XREAD BLOCK 0 STREAMS stream $"} {
		b := p.NewConn()
		// The reply of a command pipelined before the blocking one is
		// written at once, as Redis does, and so is the MONITOR line.
		b.SendRaw([]byte("PING\r\n" + cmd + "\r\n"))
		b.Read()
		b.NoReply(50 * time.Millisecond)
		b.Redis().Conn().Close()
		b.Keyhive().Conn().Close()
		time.Sleep(50 * time.Millisecond) // the servers see the close
		p.Do("SET", "after", cmd)
		r := monitorLines(t, mon.Redis(), 3)
		k := monitorLines(t, mon.Keyhive(), 3)
		if strings.Join(r, "\n") != strings.Join(k, "\n") {
			t.Errorf("after a blocked %q left, MONITOR lines differ:\nredis:\n%s\nkeyhive:\n%s", cmd, strings.Join(r, "\n"), strings.Join(k, "\n"))
		}
	}
}
