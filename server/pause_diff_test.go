package server_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestClientPauseArgs: CLIENT PAUSE's and UNPAUSE's argument errors, and
// that a refused command is answered at once during a pause.
func TestClientPauseArgs(t *testing.T) {
	p := difftest.StartIsolated(t)
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		p.Do("CLIENT", "PAUSE")
		p.Do("CLIENT", "PAUSE", "abc")
		p.Do("CLIENT", "PAUSE", "1.5")
		p.Do("CLIENT", "PAUSE", "-1")
		p.Do("CLIENT", "PAUSE", "10", "maybe")
		p.Do("CLIENT", "PAUSE", "10", "write", "extra")
		p.Do("CLIENT", "UNPAUSE", "extra")
		p.Do("CLIENT", "PAUSE", "0")
		p.Do("SET", "k", "v") // a pause of 0 ms is over at once
		p.Do("CLIENT", "PAUSE", "100000", "WRITE")
		p.Do("SET", "k") // arity: refused at once
		p.Do("NOSUCH")   // unknown: refused at once
		p.Do("GET", "k") // reads go on
		p.Do("EVAL_RO", "return 1", 0)
		p.Do("CLIENT", "UNPAUSE")
		p.Do("CLIENT", "UNPAUSE")
	}
	p.Do("MULTI")
	p.Do("CLIENT", "PAUSE", "10")
	p.Do("EXEC")
	p.Do("COMMAND", "INFO", "client|pause", "client|unpause")
}

// TestClientPauseWrite: under WRITE, writes, may-replicate commands
// (PFCOUNT, PUBLISH), scripts that may write and EXECs of transactions
// with a write wait; reads, read-only scripts and read-only transactions
// do not. When the pause ends the waiting commands run in the order they
// came.
func TestClientPauseWrite(t *testing.T) {
	p := difftest.StartIsolated(t)
	for _, proto := range []int{2, 3} {
		p.Do("FLUSHALL")
		p.Do("PFADD", "hll", "a")
		p.Do("SET", "x", "y")
		p.Do("FUNCTION", "LOAD", "REPLACE", "#!lua name=lib\nredis.register_function{function_name='ro', callback=function() return 'hello' end, flags={'no-writes'}}\nredis.register_function('rw', function() return 'rw' end)")
		a, b, c, d, e := p.NewConn(), p.NewConn(), p.NewConn(), p.NewConn(), p.NewConn()
		for _, x := range []*difftest.Pair{a, b, c, d, e} {
			x.Proto(proto)
		}
		e.Do("MULTI")
		e.Do("SET", "m", "1")
		p.Do("CLIENT", "PAUSE", "100000", "WRITE")
		a.Send("RPUSH", "l", "first")
		waitBlockedCount(t, p, "1")
		b.Send("PFCOUNT", "hll")
		waitBlockedCount(t, p, "2")
		c.Send("PUBLISH", "ch", "m")
		waitBlockedCount(t, p, "3")
		d.Send("EVAL", "return redis.call('rpush', 'l', 'second')", 0)
		waitBlockedCount(t, p, "4")
		e.Send("EXEC")
		waitBlockedCount(t, p, "5")

		r := p.NewConn()
		r.Proto(proto)
		r.Do("GET", "x")
		r.Do("PING")
		r.Do("EVAL", "#!lua flags=no-writes\nreturn redis.call('get', 'x')", 0)
		r.Do("EVAL_RO", "return redis.call('get', KEYS[1])", 1, "x")
		r.Do("FCALL", "ro", 0)
		r.Do("MULTI")
		r.Do("GET", "x")
		r.Do("EVAL", "#!lua flags=no-writes\nreturn 12", 0)
		r.Do("EXEC")
		r.Do("LRANGE", "l", 0, -1)
		r.Send("FCALL", "rw", 0)
		waitBlockedCount(t, p, "6")
		r.Redis().Conn().Close()
		r.Keyhive().Conn().Close()
		waitBlockedCount(t, p, "5") // a client that goes is dropped

		p.Do("CLIENT", "UNPAUSE")
		a.Read()
		b.Read()
		c.Read()
		d.Read()
		e.Read()
		p.Do("LRANGE", "l", 0, -1)
		p.Do("GET", "m")
		waitBlockedCount(t, p, "0")
	}
}

// TestClientPauseOrder: clients paused one after the other run their
// commands in that order when the pause ends.
func TestClientPauseOrder(t *testing.T) {
	p := difftest.StartIsolated(t)
	p.Do("CLIENT", "PAUSE", "100000", "WRITE")
	var conns []*difftest.Pair
	for i := range 6 {
		c := p.NewConn()
		c.Send("RPUSH", "l", i)
		waitBlockedCount(t, p, string(rune('1'+i)))
		conns = append(conns, c)
	}
	p.Do("CLIENT", "UNPAUSE")
	for _, c := range conns {
		c.Read()
	}
	p.Do("LRANGE", "l", 0, -1)
}

// TestClientPauseAll: under ALL every command waits, CLIENT UNPAUSE from
// another client included; the pause ends at its timeout. A WRITE pause
// made ALL keeps the later end.
func TestClientPauseAll(t *testing.T) {
	p := difftest.StartIsolated(t)
	for _, proto := range []int{2, 3} {
		a, b := p.NewConn(), p.NewConn()
		a.Proto(proto)
		b.Proto(proto)
		p.Do("SET", "k", "v")
		p.Do("CLIENT", "PAUSE", "300", "ALL")
		start := time.Now()
		a.Send("GET", "k")
		b.Send("CLIENT", "UNPAUSE")
		a.NoReply(100 * time.Millisecond)
		a.Read()
		b.Read()
		if d := time.Since(start); d < 250*time.Millisecond {
			t.Errorf("ALL pause ended after %v", d)
		}
		p.Do("CLIENT", "PAUSE", "300", "WRITE")
		p.Do("CLIENT", "PAUSE", "10", "ALL")
		a.Send("PING")
		a.NoReply(100 * time.Millisecond)
		a.Read()
	}
}

// TestClientPauseClientList: a paused client shows as blocked ('b') on the
// command it waits to run.
func TestClientPauseClientList(t *testing.T) {
	p := difftest.StartIsolated(t)
	a := p.NewConn()
	id := a.Keyhive().Do("CLIENT", "ID").Int
	p.Do("CLIENT", "PAUSE", "100000", "WRITE")
	a.Send("SET", "k", "v")
	waitBlockedCount(t, p, "1")
	// Redis 7.0 crashes on CLIENT UNBLOCK of a paused client (it has no
	// timeout reply for it); Keyhive says it is not blocked on a command.
	if k := p.Keyhive(); k.Name() == "keyhive" && k.Do("CLIENT", "UNBLOCK", id).Int != 0 {
		t.Error("CLIENT UNBLOCK of a paused client unblocked it")
	}
	for _, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
		for _, line := range strings.Split(strings.TrimSpace(c.Do("CLIENT", "LIST").Str), "\n") {
			f := infoFields(line)
			if f["cmd"] == "set" && f["flags"] != "b" {
				t.Errorf("%s: paused client: %s", c.Name(), line)
			}
		}
	}
	p.Do("CLIENT", "UNPAUSE")
	a.Read()
}

// TestClientPauseExpiry: during a pause keys are not expired, neither by
// lookups (they read as missing) nor by the cycle; after it they are.
func TestClientPauseExpiry(t *testing.T) {
	p := difftest.StartIsolated(t)
	expired := func() [2]string {
		return [2]string{infoField(p.Redis().Do("INFO", "stats").Str, "expired_keys"), infoField(p.Keyhive().Do("INFO", "stats").Str, "expired_keys")}
	}
	before := expired()
	p.Do("MULTI")
	p.Do("SET", "foo{t}", "bar", "PX", 10)
	p.Do("SET", "bar{t}", "foo", "PX", 10)
	p.Do("CLIENT", "PAUSE", "50000", "WRITE") // starts when the EXEC ends
	p.Do("SET", "later{t}", "x")
	p.Do("EXEC")
	time.Sleep(300 * time.Millisecond) // past the TTL and a few expiry cycles
	p.Do("GET", "foo{t}")
	p.Do("EXISTS", "bar{t}")
	p.Do("GET", "later{t}")
	p.Do("DBSIZE")
	if got := expired(); got != before {
		t.Errorf("expired_keys changed during the pause: %v, was %v", got, before)
	}
	p.Do("CLIENT", "UNPAUSE")
	p.Do("GET", "foo{t}")
	p.Do("GET", "bar{t}")
	p.Do("DBSIZE")
}

// TestClientPauseNoEviction: nothing is evicted during a pause, even under
// a lowered maxmemory; the first command after it evicts.
func TestClientPauseNoEviction(t *testing.T) {
	p := difftest.StartIsolated(t, "--maxmemory-policy", "allkeys-lru")
	for i := range 2000 {
		p.Do("SET", "key:"+strconv.Itoa(i), strings.Repeat("v", 1000))
	}
	p.Do("CLIENT", "PAUSE", "100000", "WRITE")
	for _, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
		used, _ := strconv.ParseInt(infoField(c.Do("INFO", "memory").Str, "used_memory"), 10, 64)
		c.Do("CONFIG", "SET", "maxmemory", used-1<<20)
	}
	time.Sleep(200 * time.Millisecond)
	p.Do("DBSIZE")
	p.Do("GET", "key:1")
	p.Do("CLIENT", "UNPAUSE")
	p.Do("PING")
	for _, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
		if n := c.Do("DBSIZE").Int; n >= 2000 {
			t.Errorf("%s: nothing evicted after the pause", c.Name())
		}
	}
}
