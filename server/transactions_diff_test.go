package server_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

func TestMultiExec(t *testing.T) {
	p := difftest.Start(t)
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		p.Do("MULTI")
		p.Do("SET", "a", 1)
		p.Do("INCR", "a")
		p.Do("LPUSH", "a", "x") // a run-time error: no rollback
		p.Do("GET", "a")
		p.Do("HSET", "h", "f", 1.5)
		p.Do("HGETALL", "h")
		p.Do("BLPOP", "empty", 0) // blocking commands do not block in MULTI
		p.Do("BLMOVE", "empty", "x", "LEFT", "LEFT", 0)
		p.Do("BZPOPMIN", "empty", 0)
		p.Do("EXEC")
		p.Do("MULTI")
		p.Do("EXEC") // empty
		p.Do("FLUSHALL")
	}
	p.Do("EXEC")
	p.Do("DISCARD")
	p.Do("MULTI")
	p.Do("MULTI") // nested: an error, the transaction goes on
	p.Do("WATCH", "a")
	p.Do("SET", "a", 2)
	p.Do("EXEC")
	p.Do("MULTI")
	p.Do("SET", "a", 3)
	p.Do("DISCARD")
	p.Do("GET", "a")
}

func TestMultiQueueErrors(t *testing.T) {
	p := difftest.Start(t)
	for _, bad := range [][]any{
		{"NOSUCHCOMMAND", "x"},
		{"SET", "a"},
		{"GET"},
		{"CONFIG", "NOSUCH"},
		{"SHUTDOWN", "NOSAVE"}, // no-multi
	} {
		p.Do("MULTI")
		p.Do("SET", "a", 1)
		p.Do(bad...)
		p.Do("SET", "b", 1)
		p.Do("EXEC")
		p.Do("EXISTS", "a", "b")
	}
	// DISCARD after a queue error is fine.
	p.Do("MULTI")
	p.Do("GET")
	p.Do("DISCARD")
	p.Do("PING")
}

func TestMultiSelect(t *testing.T) {
	p := difftest.Start(t)
	p.Do("MULTI")
	p.Do("SET", "k", "db0")
	p.Do("SELECT", 1)
	p.Do("SET", "k", "db1")
	p.Do("SWAPDB", 0, 2)
	p.Do("EXEC")
	p.Do("GET", "k")
	p.Do("SELECT", 0)
	p.Do("GET", "k")
	p.Do("SELECT", 2)
	p.Do("GET", "k")
}

func TestWatch(t *testing.T) {
	p := difftest.Start(t)
	other := p.NewConn()
	exec := func(setup func()) {
		t.Helper()
		setup()
		p.Do("MULTI")
		p.Do("INCR", "counter")
		p.Do("EXEC")
	}
	p.Do("SET", "w", 1)
	// Unchanged: EXEC runs.
	exec(func() { p.Do("WATCH", "w") })
	// Changed by another client, or by the watcher itself.
	exec(func() { p.Do("WATCH", "w"); other.Do("SET", "w", 2) })
	exec(func() { p.Do("WATCH", "w"); p.Do("APPEND", "w", "x") })
	// A write that changes nothing is no change.
	exec(func() { p.Do("WATCH", "w"); other.Do("SET", "w", 3, "NX") })
	// Deleting, expiring, persisting, renaming away and onto.
	exec(func() { p.Do("WATCH", "w"); other.Do("DEL", "w") })
	exec(func() { p.Do("WATCH", "w"); other.Do("SET", "w", 1); other.Do("EXPIRE", "w", 100) })
	exec(func() { p.Do("WATCH", "w"); other.Do("PERSIST", "w") })
	exec(func() { p.Do("WATCH", "w"); other.Do("PERSIST", "w") }) // no TTL: no change
	exec(func() { p.Do("WATCH", "w"); other.Do("RENAME", "w", "w2") })
	exec(func() { p.Do("WATCH", "w"); other.Do("RENAME", "w2", "w") })
	// The same name in another database is another key.
	exec(func() {
		p.Do("WATCH", "w")
		other.Do("SELECT", 1)
		other.Do("SET", "w", 1)
		other.Do("SELECT", 0)
	})
	// Collections, small and large, changed in place.
	p.Do("RPUSH", "list", "a")
	exec(func() { p.Do("WATCH", "list"); other.Do("RPUSH", "list", "b") })
	exec(func() { p.Do("WATCH", "list"); other.Do("LREM", "list", 0, "nothing") })
	for i := range 200 {
		p.Do("HSET", "bighash", i, i)
	}
	exec(func() { p.Do("WATCH", "bighash"); other.Do("HSET", "bighash", "new", 1) })
	exec(func() { p.Do("WATCH", "bighash"); other.Do("HGET", "bighash", "new") })
	// UNWATCH, DISCARD and EXEC forget the watched keys.
	exec(func() { p.Do("WATCH", "w"); p.Do("UNWATCH"); other.Do("SET", "w", 5) })
	p.Do("WATCH", "w")
	p.Do("MULTI")
	p.Do("DISCARD")
	exec(func() { other.Do("SET", "w", 6) })
	// Several keys, one of them changed; a key that does not exist yet.
	exec(func() { p.Do("WATCH", "w", "list", "missing"); other.Do("SET", "missing", 1) })
	p.Do("GET", "counter")
}

func TestWatchFlushAndSwap(t *testing.T) {
	p := difftest.Start(t)
	other := p.NewConn()
	run := func() {
		t.Helper()
		p.Do("MULTI")
		p.Do("PING")
		p.Do("EXEC")
	}
	p.Do("SET", "k", 1)
	p.Do("WATCH", "k")
	other.Do("FLUSHDB")
	run()
	p.Do("WATCH", "k") // does not exist: a flush changes nothing for it
	other.Do("FLUSHALL")
	run()
	other.Do("SELECT", 1)
	other.Do("SET", "k", 1)
	p.Do("WATCH", "k")
	other.Do("SWAPDB", 0, 1) // k arrives in db 0
	run()
	p.Do("WATCH", "k")
	other.Do("SWAPDB", 0, 1) // k leaves db 0
	run()
	p.Do("WATCH", "nothing")
	other.Do("SWAPDB", 0, 1)
	run()
}

// TestWatchExpiry: a watched key that expires before EXEC fails it (Redis 7),
// one already expired when watched does not.
func TestWatchExpiry(t *testing.T) {
	p := difftest.Start(t)
	p.Do("SET", "k", 1, "PX", 100)
	p.Do("WATCH", "k")
	time.Sleep(200 * time.Millisecond)
	p.Do("MULTI")
	p.Do("PING")
	p.Do("EXEC")
	p.Do("SET", "k", 1, "PX", 10)
	time.Sleep(50 * time.Millisecond)
	p.Do("WATCH", "k")
	p.Do("MULTI")
	p.Do("PING")
	p.Do("EXEC")
}

// TestExecWakesBlocked: pushes inside EXEC serve a blocked client after the
// transaction, from the state EXEC left.
func TestExecWakesBlocked(t *testing.T) {
	p := difftest.Start(t)
	w := p.NewConn()
	w.Send("BLPOP", "q", 0)
	w.NoReply(stillBlocked)
	p.Do("MULTI")
	p.Do("RPUSH", "q", "a")
	p.Do("RPUSH", "q", "b")
	p.Do("LPOP", "q")
	p.Do("EXEC")
	w.Read()
	p.Do("LRANGE", "q", 0, -1)
}

// TestMultiClientInfo: CLIENT INFO shows MULTI (flag x, multi=N) and a
// watched key that changed (flag d). Only those fields are compared: the
// rest (addresses, ids, ages) differ between the servers.
func TestMultiClientInfo(t *testing.T) {
	p := difftest.Start(t)
	fields := func(r, k difftest.Reply) error {
		pick := func(s string) string {
			var out []string
			for _, f := range strings.Fields(s) {
				if strings.HasPrefix(f, "flags=") || strings.HasPrefix(f, "multi=") {
					out = append(out, f)
				}
			}
			return strings.Join(out, " ")
		}
		if pick(r.Str) != pick(k.Str) {
			return fmt.Errorf("redis %q, keyhive %q", pick(r.Str), pick(k.Str))
		}
		return nil
	}
	other := p.NewConn()
	p.DoCompare(fields, "CLIENT", "INFO")
	p.Do("WATCH", "k")
	other.Do("SET", "k", 1)
	p.DoCompare(fields, "CLIENT", "INFO")
	p.Do("MULTI")
	p.Do("GET", "k")
	p.Do("CLIENT", "INFO")
	p.Do("EXEC")
	p.Do("MULTI")
	p.Do("PING")
	other.DoCompare(fields, "CLIENT", "INFO")
	p.Do("DISCARD")
	p.DoCompare(fields, "CLIENT", "INFO")
}

// TestClientInfoWatch: CLIENT INFO's watch= (Redis 7.2) counts the distinct
// keys a client watches, and is 0 in the EXEC that unwatched them.
func TestClientInfoWatch(t *testing.T) {
	p := difftest.Start74(t)
	pick := func(s string) string {
		var out []string
		for _, f := range strings.Fields(s) {
			if strings.HasPrefix(f, "watch=") {
				out = append(out, f)
			}
		}
		return strings.Join(out, " ")
	}
	watch := func(r, k difftest.Reply) error {
		if len(r.Elems) == 1 && len(k.Elems) == 1 { // the reply of EXEC
			r, k = r.Elems[0], k.Elems[0]
		}
		if pick(r.Str) != pick(k.Str) {
			return fmt.Errorf("redis %q, keyhive %q", pick(r.Str), pick(k.Str))
		}
		return nil
	}
	p.DoCompare(watch, "CLIENT", "INFO")
	p.Do("WATCH", "a", "b", "a")
	p.Do("SELECT", 1)
	p.Do("WATCH", "a")
	p.DoCompare(watch, "CLIENT", "INFO")
	p.Do("MULTI")
	p.Do("CLIENT", "INFO")
	p.DoCompare(watch, "EXEC")
	p.DoCompare(watch, "CLIENT", "INFO")
	p.Do("WATCH", "c")
	p.Do("UNWATCH")
	p.DoCompare(watch, "CLIENT", "INFO")
	p.Do("SELECT", 0)
}

// TestExecRefused: an EXEC refused before it runs (wrong arity, the ACL,
// BUSY) discards the transaction with EXECABORT and the reason, as Redis's
// execCommandAbort does, inside MULTI and outside.
func TestExecRefused(t *testing.T) {
	p := difftest.StartIsolated74(t, "--busy-reply-threshold", "100")
	p.Do("EXEC", "x")
	p.Do("MULTI")
	p.Do("SET", "a", "1")
	p.Do("EXEC", "x")
	p.Do("EXEC")
	p.Do("GET", "a")

	p.Do("ACL", "SETUSER", "noexec", "on", "nopass", "+@all", "-exec", "~*")
	u := p.NewConn()
	u.Do("AUTH", "noexec", "x")
	u.Do("MULTI")
	u.Do("SET", "a", "2")
	u.Do("EXEC")
	u.Do("DISCARD")
	u.Do("GET", "a")

	a, b := p.NewConn(), p.NewConn()
	b.Do("MULTI")
	b.Do("SET", "a", "3")
	a.Send("EVAL", "while true do end", 0)
	time.Sleep(300 * time.Millisecond)
	b.Do("EXEC")
	b.Do("DISCARD")
	b.Do("SCRIPT", "KILL")
	a.Read()
	b.Do("GET", "a")
}
