package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// Blocking pops: a client that blocks is checked with NoReply (still waiting
// on both servers), then woken by another connection's write and its reply
// compared.

func TestBlockingImmediate(t *testing.T) {
	p := difftest.Start(t)
	p.Do("RPUSH", "l", "a", "b", "c")
	p.Do("BLPOP", "none", "l", 0)
	p.Do("BRPOP", "none", "l", "none2", 1)
	p.Do("SET", "s", "x")
	p.Do("BLPOP", "none", "s", "l", 0) // WRONGTYPE before the list
	p.Do("BLPOP", "l", "s", 0)         // the list first: served
	p.Do("EXISTS", "l")
	p.Do("ZADD", "z", 1, "a", 2, "b", 3, "c")
	p.Do("BZPOPMIN", "none", "z", 0)
	p.Do("BZPOPMAX", "z", 0)
	p.Do("BZPOPMIN", "s", 0)
	p.Do("BZMPOP", 0, 1, "z", "MAX", "COUNT", 10)
	p.Do("RPUSH", "l", "a", "b", "c", "d")
	p.Do("BLMPOP", 0, 2, "none", "l", "RIGHT", "COUNT", 2)
	p.Do("BLMPOP", 0, 1, "l", "LEFT")
	p.Do("BLMOVE", "l", "l2", "LEFT", "RIGHT", 0)
	p.Do("BRPOPLPUSH", "l2", "l2", 0)
	p.Do("BLMOVE", "l2", "s", "LEFT", "RIGHT", 0)
	p.Do("BLMOVE", "s", "l2", "LEFT", "RIGHT", 0)
	p.Do("LRANGE", "l2", 0, -1)
	p.Proto(3)
	p.Do("ZADD", "z", 1.5, "a")
	p.Do("BZPOPMIN", "z", 0)
	p.Do("ZADD", "z", 1.5, "a", 2, "b")
	p.Do("BZMPOP", 0, 1, "z", "MIN")
	p.Do("BLPOP", "nothing", 0.01)
	p.Do("BLMOVE", "nothing", "x", "LEFT", "LEFT", 0.01)
	p.Do("BZPOPMIN", "nothing", 0.01)
	p.Do("BLMPOP", 0.01, 1, "nothing", "LEFT")
	p.Do("BZMPOP", 0.01, 1, "nothing", "MIN")
}

func TestBlockingArgumentErrors(t *testing.T) {
	p := difftest.Start74(t)
	for _, timeout := range []any{"x", "-1", "-0.0011", "inf", "-inf", "nan", "1e400", "9223372036854775807", "1e16", " 1", ""} {
		p.Do("BLPOP", "k", timeout)
		p.Do("BZPOPMIN", "k", timeout)
		p.Do("BLMOVE", "k", "d", "LEFT", "LEFT", timeout)
		p.Do("BLMPOP", timeout, 1, "k", "LEFT")
	}
	p.Do("BLPOP", "k")
	p.Do("RPUSH", "l", "a")
	p.Do("BLPOP", "l", "-0.001") // rounds to 0 in long double: a valid timeout
	p.Do("RPUSH", "l", "a")
	p.Do("BLPOP", "l", "0x10")
	p.Do("RPUSH", "l", "a")
	p.Do("BLPOP", "l", "9223372036854775") // no overflow check on the deadline
	p.Do("BLMOVE", "k", "d", "UP", "LEFT", 0)
	p.Do("BLMPOP", 0, 0, "k", "LEFT")
	p.Do("BLMPOP", 0, 2, "k", "LEFT")
	p.Do("BLMPOP", 0, 1, "k", "LEFT", "COUNT", 0)
	p.Do("BLMPOP", 0, 1, "k", "MIDDLE")
	p.Do("BLMPOP", "x", 0, "k", "LEFT")
	p.Do("BZMPOP", 0, 1, "k", "MIDDLE")
	p.Do("BZMPOP", 0, 1, "k", "MIN", "COUNT", -1)
	p.Do("BZMPOP", 0, -1, "k", "MIN")
	p.Do("COMMAND", "GETKEYS", "BLMPOP", 0, 2, "a", "b", "LEFT")
	p.Do("COMMAND", "GETKEYS", "BZMPOP", 0, 1, "a", "MIN")
	p.Do("COMMAND", "GETKEYS", "BLMOVE", "a", "b", "LEFT", "LEFT", 0)
	for _, c := range []string{"blpop", "brpop", "blmove", "brpoplpush", "blmpop", "bzpopmin", "bzpopmax", "bzmpop"} {
		p.DoCompare(commandInfoCompare, "COMMAND", "INFO", c)
	}
}

func TestBlockingTimeout(t *testing.T) {
	p := difftest.Start(t)
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		for _, cmd := range [][]any{
			{"BLPOP", "a", "b", 0.05},
			{"BRPOP", "a", 0.05},
			{"BLMOVE", "a", "b", "LEFT", "LEFT", 0.05},
			{"BRPOPLPUSH", "a", "b", 0.05},
			{"BLMPOP", 0.05, 1, "a", "LEFT"},
			{"BZPOPMIN", "a", 0.05},
			{"BZPOPMAX", "a", 0.05},
			{"BZMPOP", 0.05, 1, "a", "MAX"},
		} {
			start := time.Now()
			p.Do(cmd...)
			if d := time.Since(start); d < 50*time.Millisecond {
				t.Errorf("%v returned after %v", cmd, d)
			}
		}
	}
}

// TestBlockingFairness: waiters are served in the order they blocked, each
// push serving as many as it has elements.
func TestBlockingFairness(t *testing.T) {
	p := difftest.Start(t)
	a, b, c := p.NewConn(), p.NewConn(), p.NewConn()
	a.Send("BLPOP", "q", 0)
	a.NoReply(stillBlocked)
	b.Send("BRPOP", "other", "q", 0)
	b.NoReply(stillBlocked)
	c.Send("BLPOP", "q", 0)
	c.NoReply(stillBlocked)
	p.Do("RPUSH", "q", "x")
	a.Read()
	b.NoReply(stillBlocked)
	c.NoReply(stillBlocked)
	p.Do("LPUSH", "q", "1", "2", "3") // list 3 2 1: b pops 1 (tail), c pops 3
	b.Read()
	c.Read()
	p.Do("LRANGE", "q", 0, -1)
	p.DoCompare(func(r, k difftest.Reply) error { return nil }, "CLIENT", "LIST")
}

// TestBlockingOtherKeys: a client blocked on several keys is served by the
// first that gets an element, once.
func TestBlockingOtherKeys(t *testing.T) {
	p := difftest.Start(t)
	a, b := p.NewConn(), p.NewConn()
	a.Send("BLPOP", "k1", "k2", "k3", 0)
	a.NoReply(stillBlocked)
	b.Send("BLPOP", "k2", 0)
	b.NoReply(stillBlocked)
	p.Do("RPUSH", "k2", "x", "y")
	a.Read()
	b.Read()
	p.Do("RPUSH", "k1", "z")
	a.NoReply(stillBlocked)
	p.Do("LRANGE", "k1", 0, -1)
}

// TestBlockingTypes: a waiter is only served by its own type; a key that
// changes type or is deleted leaves it waiting.
func TestBlockingTypes(t *testing.T) {
	p := difftest.Start(t)
	l, z := p.NewConn(), p.NewConn()
	l.Send("BLPOP", "k", 0)
	l.NoReply(stillBlocked)
	z.Send("BZPOPMIN", "k", 0)
	z.NoReply(stillBlocked)
	p.Do("SET", "k", "string")
	l.NoReply(stillBlocked)
	z.NoReply(stillBlocked)
	p.Do("DEL", "k")
	p.Do("ZADD", "k", 1, "m")
	z.Read()
	l.NoReply(stillBlocked)
	p.Do("EXISTS", "k")
	p.Do("RPUSH", "k", "e")
	l.Read()
	p.Do("EXISTS", "k")
}

// TestBlockingKeyArrives: keys filled by RENAME, MOVE, COPY, SWAPDB, SORT
// STORE, SMOVE-free paths (LMOVE) and the STORE forms wake waiters.
func TestBlockingKeyArrives(t *testing.T) {
	p := difftest.Start(t)
	w := p.NewConn()

	w.Send("BLPOP", "dst", 0)
	w.NoReply(stillBlocked)
	p.Do("RPUSH", "src", "a", "b")
	p.Do("RENAME", "src", "dst")
	w.Read()
	p.Do("LRANGE", "dst", 0, -1)

	w.Send("BLPOP", "cp", 0)
	w.NoReply(stillBlocked)
	p.Do("COPY", "dst", "cp")
	w.Read()

	w.Send("BLPOP", "mv", 0)
	w.NoReply(stillBlocked)
	p.Do("LMOVE", "dst", "mv", "LEFT", "LEFT")
	w.Read()

	w.Send("BZPOPMAX", "zs", 0)
	w.NoReply(stillBlocked)
	p.Do("ZADD", "z1", 1, "a", 2, "b")
	p.Do("ZUNIONSTORE", "zs", 1, "z1")
	w.Read()

	w.Send("BLPOP", "sorted", 0)
	w.NoReply(stillBlocked)
	p.Do("RPUSH", "nums", 3, 1, 2)
	p.Do("SORT", "nums", "STORE", "sorted")
	w.Read()

	// MOVE into the waiter's database, and SWAPDB bringing a list in.
	w.Do("SELECT", 1)
	w.Send("BLPOP", "moved", 0)
	w.NoReply(stillBlocked)
	p.Do("RPUSH", "moved", "m")
	p.Do("MOVE", "moved", 1)
	w.Read()
	w.Send("BLPOP", "swapped", 0)
	w.NoReply(stillBlocked)
	p.Do("RPUSH", "swapped", "s")
	p.Do("SWAPDB", 0, 1)
	w.Read()
	p.Do("SWAPDB", 0, 1)
}

// TestBlockingMoveChain: BLMOVE pushes to a key another client waits on,
// which is served in the same round; a destination of the wrong type gives
// the waiter WRONGTYPE and leaves the element where it was.
func TestBlockingMoveChain(t *testing.T) {
	p := difftest.Start(t)
	a, b := p.NewConn(), p.NewConn()
	a.Send("BLMOVE", "s1", "s2", "RIGHT", "LEFT", 0)
	a.NoReply(stillBlocked)
	b.Send("BRPOPLPUSH", "s2", "s3", 0)
	b.NoReply(stillBlocked)
	p.Do("RPUSH", "s1", "x")
	a.Read()
	b.Read()
	p.Do("LRANGE", "s3", 0, -1)
	p.Do("EXISTS", "s1", "s2")

	p.Do("SET", "str", "v")
	a.Send("BLMOVE", "s4", "str", "LEFT", "LEFT", 0)
	a.NoReply(stillBlocked)
	p.Do("RPUSH", "s4", "y")
	a.Read()
	p.Do("LRANGE", "s4", 0, -1)

	a.Send("BLMOVE", "s5", "s5", "LEFT", "RIGHT", 0)
	a.NoReply(stillBlocked)
	p.Do("RPUSH", "s5", "1")
	a.Read()
	p.Do("LRANGE", "s5", 0, -1)
}

// TestBlockingCounts: BLMPOP and BZMPOP waiters take up to their count.
func TestBlockingCounts(t *testing.T) {
	p := difftest.Start(t)
	a, b := p.NewConn(), p.NewConn()
	a.Send("BLMPOP", 0, 2, "x", "y", "RIGHT", "COUNT", 2)
	a.NoReply(stillBlocked)
	b.Send("BLMPOP", 0, 1, "y", "LEFT", "COUNT", 10)
	b.NoReply(stillBlocked)
	p.Do("RPUSH", "y", 1, 2, 3, 4, 5)
	a.Read()
	b.Read()
	p.Do("EXISTS", "y")

	a.Proto(3)
	a.Send("BZMPOP", 0, 1, "z", "MAX", "COUNT", 2)
	a.NoReply(stillBlocked)
	b.Send("BZPOPMIN", "z", 0)
	b.NoReply(stillBlocked)
	p.Do("ZADD", "z", 1, "a", 2, "b", 3, "c")
	a.Read()
	b.Read()
	p.Do("EXISTS", "z")
}

// TestBlockingPipeline: commands pipelined after a blocking one wait for it
// and run after it, in order.
func TestBlockingPipeline(t *testing.T) {
	p := difftest.Start(t)
	a := p.NewConn()
	a.SendRaw([]byte("BLPOP q 0\r\nPING\r\nRPUSH q2 after\r\n"))
	a.NoReply(stillBlocked)
	p.Do("EXISTS", "q2")
	p.Do("RPUSH", "q", "v")
	a.Read()
	a.Read()
	a.Read()
	p.Do("LRANGE", "q2", 0, -1)
}

// TestBlockingDisconnect: a client that disconnects while blocked is never
// served, so no element is lost.
func TestBlockingDisconnect(t *testing.T) {
	p := difftest.Start(t)
	a, b := p.NewConn(), p.NewConn()
	a.Send("BLPOP", "q", 0)
	a.NoReply(stillBlocked)
	a.Redis().Conn().Close()
	a.Keyhive().Conn().Close()
	time.Sleep(stillBlocked)
	b.Send("BLPOP", "q", 0)
	b.NoReply(stillBlocked)
	p.Do("RPUSH", "q", "1", "2")
	b.Read()
	p.Do("LRANGE", "q", 0, -1)
}

// TestClientUnblock: CLIENT UNBLOCK ends a wait as a timeout or with an error.
// Client ids differ between the servers, so each side is asked for its own.
func TestClientUnblock(t *testing.T) {
	p := difftest.Start(t)
	a := p.NewConn()
	ids := [2]difftest.Reply{a.Redis().Do("CLIENT", "ID"), a.Keyhive().Do("CLIENT", "ID")}
	for _, mode := range []string{"", "TIMEOUT", "ERROR"} {
		a.Send("BLPOP", "q", 0)
		a.NoReply(stillBlocked)
		for i, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
			args := []any{"CLIENT", "UNBLOCK", ids[i].Int}
			if mode != "" {
				args = append(args, mode)
			}
			if r := c.Do(args...); r.Int != 1 {
				t.Errorf("%s: CLIENT UNBLOCK %s: %v", c.Name(), mode, r)
			}
		}
		a.Read()
	}
	for i, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
		if r := c.Do("CLIENT", "UNBLOCK", ids[i].Int); r.Int != 0 {
			t.Errorf("%s: CLIENT UNBLOCK of a client not blocked: %v", c.Name(), r)
		}
	}
	p.Do("CLIENT", "UNBLOCK", "x")
	p.Do("CLIENT", "UNBLOCK", 1, "MAYBE")
}

// TestBlockedClientsInfo: INFO clients counts blocked clients.
func TestBlockedClientsInfo(t *testing.T) {
	p := difftest.Start(t)
	a, b := p.NewConn(), p.NewConn()
	a.Send("BLPOP", "q", 0)
	b.Send("BZPOPMIN", "z", 0)
	a.NoReply(stillBlocked)
	for _, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
		info := c.Do("INFO", "clients").String()
		if !strings.Contains(info, "blocked_clients:2") {
			t.Errorf("%s: INFO clients: %s", c.Name(), info)
		}
	}
	p.Do("RPUSH", "q", 1)
	a.Read()
	p.Do("ZADD", "z", 1, "m")
	b.Read()
}

// TestBlockingInScripts: since Redis 7.2 scripts may call the blocking
// commands (no noscript flag); they answer at once, as inside MULTI.
func TestBlockingInScripts(t *testing.T) {
	p := difftest.Start74(t)
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		p.Do("EVAL", "return redis.call('blpop', 'nolist', 0)", 0)
		p.Do("EVAL", "return redis.call('brpop', 'nolist', 1)", 0)
		p.Do("EVAL", "return redis.call('bzpopmin', 'nozset', 0)", 0)
		p.Do("EVAL", "return redis.call('bzpopmax', 'nozset', 0)", 0)
		p.Do("EVAL", "return redis.call('blmove', 'nolist', 'd', 'LEFT', 'LEFT', 0)", 0)
		p.Do("EVAL", "return redis.call('brpoplpush', 'nolist', 'd', 0)", 0)
		p.Do("EVAL", "return redis.call('blmpop', 0, 1, 'nolist', 'LEFT')", 0)
		p.Do("RPUSH", "l", "a", "b", "c")
		p.Do("ZADD", "z", 1, "m", 2, "n")
		p.Do("EVAL", "return redis.call('blpop', 'l', 0)", 0)
		p.Do("EVAL", "return redis.call('brpop', 'l', 0)", 0)
		p.Do("EVAL", "return redis.call('blmove', 'l', 'd', 'LEFT', 'RIGHT', 0)", 0)
		p.Do("EVAL", "return redis.call('bzpopmin', 'z', 0)", 0)
		p.Do("EVAL", "return redis.call('bzpopmax', 'z', 0)", 0)
		p.Do("LRANGE", "d", 0, -1)
		p.Do("EVAL_RO", "return redis.call('blpop', 'l', 0)", 0)
		p.Do("DEL", "d")
	}
}
