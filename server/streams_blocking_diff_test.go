package server_test

import (
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// Blocking stream reads: a client blocks (NoReply checks it still waits on
// both servers) and another connection's write wakes it.

func TestStreamBlockingRead(t *testing.T) {
	p := difftest.Start(t)
	a, b := p.NewConn(), p.NewConn()
	p.Do("XADD", "s", "1-0", "f", "v")
	a.Send("XREAD", "BLOCK", 0, "STREAMS", "s", "$")
	a.NoReply(stillBlocked)
	b.Send("XREAD", "COUNT", 1, "BLOCK", 0, "STREAMS", "nokey", "s", "0", "1-0")
	b.NoReply(stillBlocked)
	p.Do("XADD", "other", "1-0", "f", "v")
	a.NoReply(stillBlocked)
	p.Do("XADD", "s", "2-0", "f", "v2")
	a.Read() // both readers get the entry: reading does not consume
	b.Read()
	a.Send("XREAD", "BLOCK", 0, "STREAMS", "nokey", "s", "$", "$")
	a.NoReply(stillBlocked)
	p.Do("XADD", "nokey", "5-0", "new", "key")
	a.Read()
	// A deleted key does not wake XREAD; the new stream's ID must pass the
	// one the client waits for.
	a.Send("XREAD", "BLOCK", 0, "STREAMS", "s", "$")
	a.NoReply(stillBlocked)
	p.Do("DEL", "s")
	a.NoReply(stillBlocked)
	p.Do("XADD", "s", "1-5", "f", "v")
	a.NoReply(stillBlocked)
	p.Do("XADD", "s", "3-0", "f", "v")
	a.Read()
	// Woken inside MULTI/EXEC and by a script, once they finish.
	a.Send("XREAD", "BLOCK", 0, "STREAMS", "s", "$")
	a.NoReply(stillBlocked)
	p.Do("MULTI")
	p.Do("XADD", "s", "4-0", "f", "v")
	p.Do("XADD", "s", "5-0", "f", "v")
	p.Do("EXEC")
	a.Read()
	a.Send("XREAD", "BLOCK", 0, "STREAMS", "s", "$")
	a.NoReply(stillBlocked)
	p.Do("EVAL", "redis.call('xadd', KEYS[1], '6-0', 'f', 'v') return redis.call('xadd', KEYS[1], '7-0', 'f', 'v')", 1, "s")
	a.Read()
	// A key of another type does not wake it either.
	a.Send("XREAD", "BLOCK", 0, "STREAMS", "l", "0")
	a.NoReply(stillBlocked)
	p.Do("RPUSH", "l", "x")
	a.NoReply(stillBlocked)
	p.Do("DEL", "l")
	p.Do("XADD", "l", "1-0", "f", "v")
	a.Read()
	a.Proto(3)
	a.Send("XREAD", "BLOCK", 0, "STREAMS", "s", "$")
	a.NoReply(stillBlocked)
	p.Do("XADD", "s", "8-0", "f", "v")
	a.Read()
}

func TestStreamBlockingTimeout(t *testing.T) {
	p := difftest.Start(t)
	p.Do("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		for _, cmd := range [][]any{
			{"XREAD", "BLOCK", 50, "STREAMS", "s", "$"},
			{"XREAD", "BLOCK", 50, "STREAMS", "nokey", "0"},
			{"XREADGROUP", "GROUP", "g", "c", "BLOCK", 50, "STREAMS", "s", ">"},
		} {
			start := time.Now()
			p.Do(cmd...)
			if d := time.Since(start); d < 50*time.Millisecond {
				t.Errorf("%v returned after %v", cmd, d)
			}
		}
	}
}

// TestStreamBlockingGroup: XREADGROUP waiters on one group are served
// oldest first, each entry once; a deleted key or destroyed group wakes
// them with Redis 7.2+'s errors (those of the read run anew).
func TestStreamBlockingGroup(t *testing.T) {
	p := difftest.Start74(t)
	a, b, c := p.NewConn(), p.NewConn(), p.NewConn()
	p.Do("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
	a.Send("XREADGROUP", "GROUP", "g", "alice", "BLOCK", 0, "STREAMS", "s", ">")
	a.NoReply(stillBlocked)
	b.Send("XREADGROUP", "GROUP", "g", "bob", "BLOCK", 0, "STREAMS", "s", ">")
	b.NoReply(stillBlocked)
	c.Send("XREADGROUP", "GROUP", "g", "carol", "NOACK", "COUNT", 1, "BLOCK", 0, "STREAMS", "s", ">")
	c.NoReply(stillBlocked)
	p.Do("XADD", "s", "1-0", "f", "v")
	a.Read()
	b.NoReply(stillBlocked)
	p.Do("MULTI")
	p.Do("XADD", "s", "2-0", "f", "v")
	p.Do("XADD", "s", "3-0", "f", "v")
	p.Do("EXEC")
	b.Read()
	c.NoReply(stillBlocked)
	p.Do("XADD", "s", "4-0", "f", "v")
	c.Read()
	p.DoCompare(idleTimes, "XPENDING", "s", "g", "-", "+", 10)
	p.Do("XINFO", "GROUPS", "s")
	a.Send("XREADGROUP", "GROUP", "g", "alice", "BLOCK", 0, "STREAMS", "s", ">")
	a.NoReply(stillBlocked)
	p.Do("XGROUP", "DESTROY", "s", "g")
	a.Read()
	p.Do("XGROUP", "CREATE", "s", "g", "$")
	a.Send("XREADGROUP", "GROUP", "g", "alice", "BLOCK", 0, "STREAMS", "s", ">")
	a.NoReply(stillBlocked)
	p.Do("DEL", "s")
	a.Read()
	p.Do("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
	a.Send("XREADGROUP", "GROUP", "g", "alice", "BLOCK", 0, "STREAMS", "s", ">")
	a.NoReply(stillBlocked)
	p.Do("SET", "s", "string now")
	a.Read()
	// Any removal of the key wakes it: expiry set in the past, RENAME,
	// FLUSHALL.
	for _, removal := range [][]any{{"PEXPIRE", "s", 0}, {"RENAME", "s", "s2"}, {"FLUSHALL"}} {
		p.Do("DEL", "s")
		p.Do("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
		a.Send("XREADGROUP", "GROUP", "g", "alice", "BLOCK", 0, "STREAMS", "s", ">")
		a.NoReply(stillBlocked)
		p.Do(removal...)
		a.Read()
	}
	// Blocked, a ">" reader waits for entries past the group's last ID.
	p.Do("DEL", "s")
	p.Do("XADD", "s", "5-0", "f", "v")
	p.Do("XGROUP", "CREATE", "s", "g", "0")
	a.Send("XREADGROUP", "GROUP", "g", "alice", "BLOCK", 0, "STREAMS", "s", ">")
	a.Read()
	p.Do("XGROUP", "CREATE", "other", "g", "$", "MKSTREAM")
	a.Send("XREADGROUP", "GROUP", "g", "alice", "BLOCK", 0, "STREAMS", "s", "other", ">", ">")
	a.NoReply(stillBlocked)
	p.Do("XADD", "other", "1-0", "f", "v")
	a.Read()
}

// TestStreamBlockingNeedsAnAddition: as in Redis, a blocked reader is
// served only after an entry is added, not when XSETID or XGROUP SETID
// alone put entries or IDs past what it waits for.
func TestStreamBlockingNeedsAnAddition(t *testing.T) {
	p := difftest.Start(t)
	a, b := p.NewConn(), p.NewConn()
	p.Do("XADD", "s", "1-0", "f", "v")
	p.Do("XGROUP", "CREATE", "s", "g", "$")
	a.Send("XREADGROUP", "GROUP", "g", "alice", "BLOCK", 0, "STREAMS", "s", ">")
	a.NoReply(stillBlocked)
	b.Send("XREAD", "BLOCK", 0, "STREAMS", "s", "$")
	b.NoReply(stillBlocked)
	p.Do("XGROUP", "SETID", "s", "g", "0")
	p.Do("XSETID", "s", "5-0")
	a.NoReply(stillBlocked)
	b.NoReply(stillBlocked)
	p.Do("XADD", "s", "6-0", "f", "v")
	a.Read()
	b.Read()
}
