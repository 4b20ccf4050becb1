package server_test

import (
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// clientIDs returns a's connections' ids on each side.
func clientIDs(a *difftest.Pair) (ids [2]int64) {
	for i, c := range []*difftest.Client{a.Redis(), a.Keyhive()} {
		ids[i] = c.Do("CLIENT", "ID").Int
	}
	return ids
}

// unblockBoth sends CLIENT UNBLOCK for the connections with ids on each
// side, with the extra arguments, and requires both to reply 1.
func unblockBoth(t *testing.T, p *difftest.Pair, ids [2]int64, extra ...any) {
	t.Helper()
	for i, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
		if r := c.Do(append([]any{"CLIENT", "UNBLOCK", ids[i]}, extra...)...); r.Int != 1 {
			t.Errorf("%s: CLIENT UNBLOCK: %v", c.Name(), r)
		}
	}
}

// TestWait: with no replicas WAIT replies 0, at once when it asks for none
// or inside MULTI, else after its timeout; WAIT 1 0 waits until CLIENT
// UNBLOCK ends it (as a timeout, or with an error). Scripts may call it
// since Redis 7.2, and it answers them at once.
func TestWait(t *testing.T) {
	p := difftest.Start74(t)
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		p.Do("WAIT", 0, 0)
		p.Do("WAIT", -1, 0)
		p.Do("SET", "k", "v")
		p.Do("WAIT", 0, 100)
		start := time.Now()
		p.Do("WAIT", 1, 100)
		if d := time.Since(start); d < 100*time.Millisecond {
			t.Errorf("WAIT 1 100 returned after %v", d)
		}
		p.Do("WAIT", "x", 0)
		p.Do("WAIT", 1, "x")
		p.Do("WAIT", 1, -1)
		p.Do("WAIT", 1, "1.5")
		p.Do("WAIT", 1)
		p.Do("EVAL", "return redis.call('wait', 0, 0)", 0)
		p.Do("EVAL", "return redis.call('wait', 1, 0)", 0)
		p.Do("MULTI")
		p.Do("WAIT", 1, 0)
		p.Do("EXEC")

		a := p.NewConn()
		a.Proto(proto)
		ids := clientIDs(a)
		a.Send("WAIT", 1, 0)
		a.NoReply(stillBlocked)
		waitBlockedCount(t, p, "1")
		unblockBoth(t, p, ids)
		a.Read()
		a.Send("WAIT", 1, 0)
		a.NoReply(stillBlocked)
		unblockBoth(t, p, ids, "ERROR")
		a.Read()
	}
	p.Do("COMMAND", "INFO", "wait")
}

// proto74 switches p, whose oracle is redis-server 7.4, to RESP v (HELLO's
// version differs).
func proto74(p *difftest.Pair, v int) {
	p.DoDifferent("the oracle is redis-server 7.4.1, Keyhive says 7.0.15", "HELLO", v)
}

// TestWaitAOF: WAITAOF (Redis 7.2) against redis-server 7.4: its argument
// errors, the error when appendonly is off and numlocal is set, and [0, 0]
// at once otherwise.
func TestWaitAOF(t *testing.T) {
	p := difftest.Start74(t)
	for _, proto := range []int{2, 3} {
		proto74(p, proto)
		p.Do("WAITAOF", 1, 0, 0)
		p.Do("WAITAOF", 0, 0, 0)
		p.Do("SET", "k", "v")
		p.Do("WAITAOF", 0, 0, 0)
		p.Do("WAITAOF", 2, 0, 0)
		p.Do("WAITAOF", -1, 0, 0)
		p.Do("WAITAOF", "x", 0, 0)
		p.Do("WAITAOF", 0, -1, 0)
		p.Do("WAITAOF", 0, "x", 0)
		p.Do("WAITAOF", 0, 0, -1)
		p.Do("WAITAOF", 0, 0, "x")
		p.Do("WAITAOF", 0, 0)
		p.Do("WAITAOF", 0, 1, 50)
		p.Do("EVAL", "return redis.call('waitaof', 0, 1, 0)", 0)
		p.Do("MULTI")
		p.Do("WAITAOF", 0, 1, 0)
		p.Do("EXEC")
	}
	p.Do("COMMAND", "INFO", "waitaof")
}

// TestWaitAOFFsync: with the AOF on, WAITAOF 1 0 replies once the fsync
// covers the client's last write: at once under always, within a second
// under everysec, never under no (the timeout ends it with 0); asking for
// replicas waits for the timeout. CLIENT UNBLOCK replies as a timeout.
func TestWaitAOFFsync(t *testing.T) {
	slowTest(t, "waits out WAITAOF timeouts and everysec fsyncs")
	p := difftest.StartIsolated74(t, "--appendonly", "yes")
	for _, proto := range []int{2, 3} {
		proto74(p, proto)
		for _, policy := range []string{"always", "everysec", "no"} {
			p.Do("CONFIG", "SET", "appendfsync", policy)
			p.Do("WAITAOF", 1, 0, 0) // nothing written by this client yet
			p.Do("SET", "k", policy)
			if policy == "no" {
				p.Do("WAITAOF", 1, 0, 200)
			} else {
				p.Do("WAITAOF", 1, 0, 3000)
			}
			p.Do("WAITAOF", 0, 0, 0)
			p.SendRaw([]byte("SET k2 v\r\nWAITAOF 1 0 3000\r\n"))
			p.Read()
			if policy == "no" {
				p.Do("CONFIG", "SET", "appendfsync", "always")
				p.Do("SET", "k3", "v")
			}
			p.Read()
			start := time.Now()
			p.Do("WAITAOF", 1, 1, 100)
			if d := time.Since(start); d < 100*time.Millisecond {
				t.Errorf("WAITAOF 1 1 100 returned after %v", d)
			}
		}
		p.Do("CONFIG", "SET", "appendfsync", "everysec")
		a := p.NewConn()
		proto74(a, proto)
		ids := clientIDs(a)
		a.Send("WAITAOF", 0, 1, 0)
		a.NoReply(stillBlocked)
		unblockBoth(t, p, ids)
		a.Read()
	}
}

// TestClientKillMaxAge: CLIENT KILL MAXAGE (Redis 7.4) closes the
// connections at least that many seconds old, with 7.4's errors.
func TestClientKillMaxAge(t *testing.T) {
	p := difftest.StartIsolated74(t)
	for _, proto := range []int{2, 3} {
		proto74(p, proto)
		p.Do("CLIENT", "KILL", "MAXAGE", 100000)
		p.Do("CLIENT", "KILL", "MAXAGE", 0)
		p.Do("CLIENT", "KILL", "MAXAGE", -1)
		p.Do("CLIENT", "KILL", "MAXAGE", "x")
		p.Do("CLIENT", "KILL", "MAXAGE")
		p.Do("CLIENT", "KILL", "MAXAGE", 100000, "SKIPME", "no")
	}
	old := p.NewConn()
	time.Sleep(2100 * time.Millisecond)
	young := p.NewConn()
	young.Do("PING")
	p.Do("CLIENT", "KILL", "MAXAGE", 2)
	young.Do("PING")
	for _, c := range []*difftest.Client{old.Redis(), old.Keyhive()} {
		if err := c.Conn().WaitClosed(); err != nil {
			t.Errorf("%s: the old connection was not closed: %v", c.Name(), err)
		}
	}
}
