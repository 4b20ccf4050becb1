package server_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyhive/keyhive/internal/difftest"
)

// BLESS (Redis 8.12), as https://redis.io/docs/latest/commands/bless/ and
// its subcommands' pages (bless-set, bless-clear, bless-get, bless-scan)
// document it. No 8.12 server runs here: every expected reply is a page's
// example or follows from what the pages state. Where they are silent
// Keyhive chose, and the test says so: an unknown flag is a syntax error
// (checked before the key); an event is raised, and the command
// propagated, only when the flag changed; the events are of the generic
// class; RENAME and MOVE carry the flag, COPY and a RESTORE into a new
// key do not.

// blessScanKeys runs a whole BLESS SCAN iteration (COUNT count when
// positive) and returns the keys, sorted, and how many calls it took.
func blessScanKeys(t *testing.T, c *difftest.Conn, count int) ([]string, int) {
	t.Helper()
	var keys []string
	cursor, calls := "0", 0
	for {
		args := []any{"BLESS", "SCAN", cursor, "NO-EVICT"}
		if count > 0 {
			args = append(args, "COUNT", count)
		}
		r := do(t, c, args...)
		if len(r.Elems) != 2 {
			t.Fatalf("BLESS SCAN: %q", r.Raw)
		}
		calls++
		for _, k := range r.Elems[1].Elems {
			keys = append(keys, k.Str)
		}
		if cursor = r.Elems[0].Str; cursor == "0" {
			break
		}
	}
	sort.Strings(keys)
	return keys, calls
}

// TestBlessCommands: the pages' examples and stated rules, RESP2 and RESP3.
func TestBlessCommands(t *testing.T) {
	skipOnRedisTarget(t)
	for _, proto := range []int{2, 3} {
		c, _ := setTTLConn(t, proto)
		// BLESS SET's example, and BLESS GET's.
		wantRaw(t, c, "+OK\r\n", "SET", "session:42", "some value")
		wantRaw(t, c, "*0\r\n", "BLESS", "GET", "session:42")
		wantRaw(t, c, ":1\r\n", "BLESS", "SET", "session:42", "NO-EVICT")
		wantRaw(t, c, ":0\r\n", "BLESS", "SET", "session:42", "NO-EVICT")
		wantRaw(t, c, "*1\r\n$8\r\nNO-EVICT\r\n", "BLESS", "GET", "session:42")
		wantRaw(t, c, "-ERR no such key\r\n", "BLESS", "SET", "missing-key", "NO-EVICT")
		wantRaw(t, c, "-ERR no such key\r\n", "BLESS", "GET", "missing-key")
		// BLESS SCAN's example: cache:100 and session:42 in one call (the
		// order is the hash table's: compared as a set).
		wantRaw(t, c, "+OK\r\n", "SET", "cache:100", "some value")
		wantRaw(t, c, ":1\r\n", "BLESS", "SET", "cache:100", "NO-EVICT")
		r := do(t, c, "BLESS", "SCAN", "0", "NO-EVICT")
		if len(r.Elems) != 2 || r.Elems[0].Str != "0" || len(r.Elems[1].Elems) != 2 {
			t.Fatalf("BLESS SCAN 0 NO-EVICT: %q", r.Raw)
		}
		if got, _ := blessScanKeys(t, c, 0); strings.Join(got, " ") != "cache:100 session:42" {
			t.Errorf("BLESS SCAN: %v", got)
		}
		// BLESS CLEAR's example.
		wantRaw(t, c, ":1\r\n", "BLESS", "CLEAR", "session:42", "NO-EVICT")
		wantRaw(t, c, ":0\r\n", "BLESS", "CLEAR", "session:42", "NO-EVICT")
		wantRaw(t, c, "-ERR no such key\r\n", "BLESS", "CLEAR", "missing-key", "NO-EVICT")
		wantRaw(t, c, "*0\r\n", "BLESS", "GET", "session:42")
		wantRaw(t, c, "*2\r\n$1\r\n0\r\n*1\r\n$9\r\ncache:100\r\n", "BLESS", "SCAN", "0", "NO-EVICT")
		// The flag is case-insensitive like any token; NO-EVICT is the only
		// one, and BLESS SCAN requires it.
		wantRaw(t, c, ":1\r\n", "bless", "set", "session:42", "no-evict")
		wantRaw(t, c, "-ERR syntax error\r\n", "BLESS", "SET", "session:42", "NO-EXPIRE")
		wantRaw(t, c, "-ERR syntax error\r\n", "BLESS", "SET", "missing-key", "NO-EXPIRE")
		wantRaw(t, c, "-ERR syntax error\r\n", "BLESS", "CLEAR", "session:42", "X")
		wantRaw(t, c, "-ERR syntax error\r\n", "BLESS", "SCAN", "0", "X")
		wantRaw(t, c, "-ERR syntax error\r\n", "BLESS", "SCAN", "0", "NO-EVICT", "COUNT")
		wantRaw(t, c, "-ERR syntax error\r\n", "BLESS", "SCAN", "0", "NO-EVICT", "COUNT", "0")
		wantRaw(t, c, "-ERR syntax error\r\n", "BLESS", "SCAN", "0", "NO-EVICT", "MATCH", "*")
		wantRaw(t, c, "-ERR value is not an integer or out of range\r\n", "BLESS", "SCAN", "0", "NO-EVICT", "COUNT", "x")
		wantRaw(t, c, "-ERR invalid cursor\r\n", "BLESS", "SCAN", "x", "NO-EVICT")
		wantRaw(t, c, "-ERR wrong number of arguments for 'bless|set' command\r\n", "BLESS", "SET", "session:42")
		wantRaw(t, c, "-ERR wrong number of arguments for 'bless|get' command\r\n", "BLESS", "GET", "a", "b")
		wantRaw(t, c, "-ERR wrong number of arguments for 'bless|scan' command\r\n", "BLESS", "SCAN", "0")
		// Any type of key may be blessed.
		wantRaw(t, c, ":1\r\n", "RPUSH", "list", "a")
		wantRaw(t, c, ":1\r\n", "BLESS", "SET", "list", "NO-EVICT")
		wantRaw(t, c, "*1\r\n$8\r\nNO-EVICT\r\n", "BLESS", "GET", "list")
	}
}

// TestBlessScanIteration: a whole iteration returns every blessed key and
// no other, whatever COUNT, in the default of 1024 keys visited per call.
func TestBlessScanIteration(t *testing.T) {
	skipOnRedisTarget(t)
	c, _ := setTTLConn(t, 2)
	var want []string
	for i := range 3000 {
		key := fmt.Sprintf("k:%d", i)
		do(t, c, "SET", key, "v")
		if i%7 == 0 {
			wantRaw(t, c, ":1\r\n", "BLESS", "SET", key, "NO-EVICT")
			want = append(want, key)
		}
	}
	sort.Strings(want)
	for _, count := range []int{0, 1, 10, 5000} {
		got, calls := blessScanKeys(t, c, count)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("COUNT %d: %d keys, want %d", count, len(got), len(want))
		}
		if count == 5000 && calls != 1 {
			t.Errorf("COUNT 5000 took %d calls", calls)
		}
	}
	wantRaw(t, c, "+OK\r\n", "FLUSHALL")
	wantRaw(t, c, "*2\r\n$1\r\n0\r\n*0\r\n", "BLESS", "SCAN", "0", "NO-EVICT")
}

// TestBlessKeyLifecycle: the flag belongs to the key while it exists.
// Overwriting the value keeps it; RESTORE REPLACE onto a blessed key keeps
// it and DUMP does not carry it (the BLESS SET page); deleting or expiring
// the key ends it; RENAME and MOVE carry it, COPY does not (Keyhive's
// choice: the pages are silent).
func TestBlessKeyLifecycle(t *testing.T) {
	skipOnRedisTarget(t)
	c, _ := setTTLConn(t, 2)
	blessed := "*1\r\n$8\r\nNO-EVICT\r\n"
	wantRaw(t, c, "+OK\r\n", "SET", "k", "v")
	wantRaw(t, c, ":1\r\n", "BLESS", "SET", "k", "NO-EVICT")
	wantRaw(t, c, "+OK\r\n", "SET", "k", "a longer value than before")
	wantRaw(t, c, ":26\r\n", "APPEND", "k", "")
	wantRaw(t, c, ":1\r\n", "EXPIRE", "k", "100")
	wantRaw(t, c, blessed, "BLESS", "GET", "k")
	payload := do(t, c, "DUMP", "k").Str
	wantRaw(t, c, "+OK\r\n", "RESTORE", "fresh", "0", payload)
	wantRaw(t, c, "*0\r\n", "BLESS", "GET", "fresh")
	wantRaw(t, c, "+OK\r\n", "RESTORE", "k", "0", payload, "REPLACE")
	wantRaw(t, c, blessed, "BLESS", "GET", "k")
	wantRaw(t, c, ":1\r\n", "COPY", "k", "copy")
	wantRaw(t, c, "*0\r\n", "BLESS", "GET", "copy")
	wantRaw(t, c, "+OK\r\n", "RENAME", "k", "renamed")
	wantRaw(t, c, blessed, "BLESS", "GET", "renamed")
	wantRaw(t, c, "+OK\r\n", "RENAME", "copy", "renamed") // the moved key's flag: none
	wantRaw(t, c, "*0\r\n", "BLESS", "GET", "renamed")
	wantRaw(t, c, ":1\r\n", "BLESS", "SET", "renamed", "NO-EVICT")
	wantRaw(t, c, ":1\r\n", "MOVE", "renamed", "1")
	wantRaw(t, c, "+OK\r\n", "SELECT", "1")
	wantRaw(t, c, blessed, "BLESS", "GET", "renamed")
	wantRaw(t, c, "*2\r\n$1\r\n0\r\n*1\r\n$7\r\nrenamed\r\n", "BLESS", "SCAN", "0", "NO-EVICT")
	wantRaw(t, c, ":1\r\n", "DEL", "renamed")
	wantRaw(t, c, "+OK\r\n", "SET", "renamed", "v")
	wantRaw(t, c, "*0\r\n", "BLESS", "GET", "renamed")
	wantRaw(t, c, "+OK\r\n", "SET", "short", "v", "PX", "100")
	wantRaw(t, c, ":1\r\n", "BLESS", "SET", "short", "NO-EVICT")
	time.Sleep(150 * time.Millisecond)
	wantRaw(t, c, "-ERR no such key\r\n", "BLESS", "GET", "short")
	wantRaw(t, c, "*2\r\n$1\r\n0\r\n*0\r\n", "BLESS", "SCAN", "0", "NO-EVICT")
}

// TestBlessEvents: BLESS SET raises bless, BLESS CLEAR unbless (the pages);
// Keyhive raises them in the generic class, only when the flag changed.
func TestBlessEvents(t *testing.T) {
	skipOnRedisTarget(t)
	c, addr := setTTLConn(t, 2, "--notify-keyspace-events", "KEA")
	expect := keyEvents(t, c, addr)
	expect("set k", "SET", "k", "v")
	expect("bless k", "BLESS", "SET", "k", "NO-EVICT")
	expect("", "BLESS", "SET", "k", "NO-EVICT")
	expect("", "BLESS", "GET", "k")
	expect("unbless k", "BLESS", "CLEAR", "k", "NO-EVICT")
	expect("", "BLESS", "CLEAR", "k", "NO-EVICT")
	expect("", "BLESS", "GET", "nokey")
	// Only the generic class: with "K$" nothing comes.
	do(t, c, "CONFIG", "SET", "notify-keyspace-events", "KE$")
	expect("", "BLESS", "SET", "k", "NO-EVICT")
	do(t, c, "CONFIG", "SET", "notify-keyspace-events", "KEg")
	expect("unbless k", "BLESS", "CLEAR", "k", "NO-EVICT")
}

// TestBlessPropagation: a change propagates as the command itself ("replicates
// like any other write"); no change, nothing.
func TestBlessPropagation(t *testing.T) {
	skipOnRedisTarget(t)
	checkPropagationWith(t, []propStep{
		w("SET k v", "SET k v"),
		w("BLESS SET k NO-EVICT", "BLESS SET k NO-EVICT"),
		w("BLESS SET k no-evict"),
		w("BLESS GET k"),
		w("BLESS SCAN 0 NO-EVICT"),
		w("BLESS CLEAR k NO-EVICT", "BLESS CLEAR k NO-EVICT"),
		w("BLESS CLEAR k NO-EVICT"),
		w("BLESS SET nokey NO-EVICT"),
		w("MULTI"), w("BLESS SET k NO-EVICT"), w("SET k w"),
		w("EXEC", "MULTI", "BLESS SET k NO-EVICT", "SET k w", "EXEC"),
	}, nil)
}

// blessData writes keys of several types, some blessed, in two databases.
func blessData(t *testing.T, c *difftest.Conn) {
	t.Helper()
	for i := range 50 {
		do(t, c, "SET", fmt.Sprintf("s:%d", i), "v")
		do(t, c, "HSET", fmt.Sprintf("h:%d", i), "f", "v")
		if i%5 == 0 {
			wantRaw(t, c, ":1\r\n", "BLESS", "SET", fmt.Sprintf("s:%d", i), "NO-EVICT")
			wantRaw(t, c, ":1\r\n", "BLESS", "SET", fmt.Sprintf("h:%d", i), "NO-EVICT")
		}
	}
	do(t, c, "SET", "ttl", "v", "EX", "1000")
	wantRaw(t, c, ":1\r\n", "BLESS", "SET", "ttl", "NO-EVICT")
	do(t, c, "SELECT", "3")
	do(t, c, "RPUSH", "l", "a", "b")
	wantRaw(t, c, ":1\r\n", "BLESS", "SET", "l", "NO-EVICT")
	do(t, c, "SELECT", "0")
}

// blessState is every database's blessed keys, as BLESS SCAN lists them.
func blessState(t *testing.T, c *difftest.Conn) string {
	t.Helper()
	var b strings.Builder
	for _, db := range []string{"0", "3"} {
		do(t, c, "SELECT", db)
		keys, _ := blessScanKeys(t, c, 0)
		fmt.Fprintf(&b, "db%s: %s; ", db, strings.Join(keys, " "))
	}
	do(t, c, "SELECT", "0")
	return b.String()
}

const wantBlessState = "db0: h:0 h:10 h:15 h:20 h:25 h:30 h:35 h:40 h:45 h:5 s:0 s:10 s:15 s:20 s:25 s:30 s:35 s:40 s:45 s:5 ttl; db3: l; "

// TestBlessPersistence: "the flag persists across restarts": DEBUG RELOAD,
// a restart from the RDB file, from a rewritten AOF with and without the
// RDB preamble, and from an AOF of commands. Redis publishes no RDB form
// for the flag: Keyhive writes an aux field after the key's record
// (values.BlessAux), which a Redis server skips.
func TestBlessPersistence(t *testing.T) {
	skipOnRedisTarget(t)
	dir := t.TempDir()
	srv := startKeyhive(t, "--dir", dir, "--enable-debug-command", "yes")
	c := dial(t, srv.Addr())
	blessData(t, c)
	digest := do(t, c, "DEBUG", "DIGEST").Str
	wantRaw(t, c, "+OK\r\n", "DEBUG", "RELOAD")
	if got := blessState(t, c); got != wantBlessState {
		t.Errorf("DEBUG RELOAD: %s", got)
	}
	wantRaw(t, c, "+OK\r\n", "SAVE")
	srv.Close()
	srv = startKeyhive(t, "--dir", dir, "--enable-debug-command", "yes")
	c = dial(t, srv.Addr())
	if got := blessState(t, c); got != wantBlessState {
		t.Errorf("restart from the RDB file: %s", got)
	}
	if d := do(t, c, "DEBUG", "DIGEST").Str; d != digest {
		t.Errorf("restart from the RDB file: digest %s, was %s", d, digest)
	}
	srv.Close()

	for _, preamble := range []string{"no", "yes"} {
		aofDir := t.TempDir()
		srv = startKeyhive(t, "--dir", aofDir, "--appendonly", "yes", "--aof-use-rdb-preamble", preamble)
		c = dial(t, srv.Addr())
		blessData(t, c)
		do(t, c, "BGREWRITEAOF")
		waitUntil(t, "AOF rewritten", func() bool {
			return strings.Contains(do(t, c, "INFO", "persistence").Str, "aof_rewrite_in_progress:0") &&
				strings.Contains(do(t, c, "INFO", "persistence").Str, "aof_last_bgrewrite_status:ok")
		})
		// After the rewrite, in the AOF's commands.
		wantRaw(t, c, ":1\r\n", "BLESS", "CLEAR", "s:0", "NO-EVICT")
		wantRaw(t, c, ":1\r\n", "BLESS", "SET", "s:1", "NO-EVICT")
		srv.Close()
		srv = startKeyhive(t, "--dir", aofDir, "--appendonly", "yes")
		c = dial(t, srv.Addr())
		want := strings.Replace(strings.Replace(wantBlessState, "s:0 ", "", 1), "s:10 ", "s:1 s:10 ", 1)
		if got := blessState(t, c); got != want {
			t.Errorf("restart from the AOF (preamble %s): %s", preamble, got)
		}
		srv.Close()
	}
}

// TestBlessReplication: a replica holds the master's blessings by full
// sync and by the command stream, with equal data by DEBUG DIGEST.
func TestBlessReplication(t *testing.T) {
	skipOnRedisTarget(t)
	master := startReplNode(t, false)
	replica := startReplNode(t, false)
	blessData(t, master.conn)
	replicate(t, master, replica) // full sync
	master.ok(t, "BLESS", "CLEAR", "s:5", "NO-EVICT")
	master.ok(t, "BLESS", "SET", "s:6", "NO-EVICT")
	sameData(t, master, replica)
	if m, r := blessState(t, master.conn), blessState(t, replica.conn); m != r || !strings.Contains(m, "s:6") || strings.Contains(m, "s:5 ") {
		t.Errorf("master %s; replica %s", m, r)
	}
}

// TestBlessEviction: "a blessed key is skipped as an eviction candidate
// under every maxmemory-policy value". The blessed keys are the first
// written, never read, and expire first: every policy's best candidates.
func TestBlessEviction(t *testing.T) {
	skipOnRedisTarget(t)
	ctx := context.Background()
	// A process of its own: an embedded server's used memory counts the
	// test binary's heap, which a FLUSHALL between policies does not free.
	addr, _ := startKeyhiveBinary(t, "--maxmemory", "16mb")
	rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	defer rdb.Close()
	for _, policy := range []string{"allkeys-lru", "allkeys-lfu", "allkeys-random", "allkeys-lrfu",
		"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"} {
		if err := rdb.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if err := rdb.ConfigSet(ctx, "maxmemory-policy", policy).Err(); err != nil {
			t.Fatalf("%s: %v", policy, err)
		}
		for i := range 1000 {
			key := fmt.Sprintf("blessed:%d", i)
			rdb.Set(ctx, key, strings.Repeat("b", 200), 30*time.Minute)
			if n, err := rdb.Do(ctx, "BLESS", "SET", key, "NO-EVICT").Int(); n != 1 {
				t.Fatalf("%s: BLESS SET: %d %v", policy, n, err)
			}
		}
		before := evicted(t, rdb)
		fillUntilEvicting(t, rdb, "fill:", time.Hour, before+5000)
		for i := range 1000 {
			if rdb.Exists(ctx, fmt.Sprintf("blessed:%d", i)).Val() != 1 {
				t.Fatalf("%s: blessed:%d was evicted", policy, i)
			}
		}
	}

	// With every key blessed, nothing can be evicted: a write that needs
	// memory is refused, BLESS SET too (denyoom), BLESS CLEAR is not, and
	// the key it clears goes at the next write.
	rdb.FlushAll(ctx)
	rdb.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru")
	for i := range 1000 {
		key := fmt.Sprintf("blessed:%d", i)
		rdb.Set(ctx, key, strings.Repeat("b", 200), 0)
		rdb.Do(ctx, "BLESS", "SET", key, "NO-EVICT")
	}
	rdb.ConfigSet(ctx, "maxmemory", "1")
	oom := "OOM command not allowed when used memory > 'maxmemory'."
	if err := rdb.Set(ctx, "new", "v", 0).Err(); err == nil || err.Error() != oom {
		t.Fatalf("SET with every key blessed: %v", err)
	}
	if err := rdb.Do(ctx, "BLESS", "SET", "blessed:0", "NO-EVICT").Err(); err == nil || err.Error() != oom {
		t.Fatalf("BLESS SET over maxmemory: %v", err)
	}
	if n, err := rdb.Do(ctx, "BLESS", "CLEAR", "blessed:0", "NO-EVICT").Int(); n != 1 || err != nil {
		t.Fatalf("BLESS CLEAR over maxmemory: %d %v", n, err)
	}
	rdb.Set(ctx, "new", "v", 0) // evicts blessed:0, still refused
	if n := rdb.DBSize(ctx).Val(); n != 999 || rdb.Exists(ctx, "blessed:0").Val() != 0 {
		t.Fatalf("after BLESS CLEAR: %d keys, blessed:0 exists %d", n, rdb.Exists(ctx, "blessed:0").Val())
	}
}

// TestBlessFileLoadsInRedis: a Keyhive RDB file with blessed keys loads
// into redis-server 7.0.15 and 7.4.1, which skip the flags' aux fields,
// with every key and value.
func TestBlessFileLoadsInRedis(t *testing.T) {
	for _, start := range []func(testing.TB, ...string) *difftest.Pair{difftest.StartIsolated, difftest.StartIsolated74} {
		p := start(t)
		for _, c := range []*difftest.Client{p.Keyhive(), p.Redis()} {
			c.Do("SET", "plain", "v")
			c.Do("HSET", "h", "f", "v")
			c.Do("SET", "ttl", "v", "EX", "1000")
		}
		for _, key := range []string{"h", "ttl"} {
			if r := p.Keyhive().Do("BLESS", "SET", key, "NO-EVICT"); r.Int != 1 {
				t.Fatalf("BLESS SET %s: %v", key, r)
			}
		}
		want := p.Redis().Do("DEBUG", "DIGEST").Str
		reloadFrom(t, p.Keyhive(), p.Redis())
		if got := p.Redis().Do("DEBUG", "DIGEST").Str; got != want {
			t.Errorf("%s loaded Keyhive's file: digest %s, want %s", p.Redis().Name(), got, want)
		}
	}
}

// TestBlessNamespaceQuota: a namespace's quota eviction (EVICT lru) never
// takes a blessed key: when its victim is one, it stops, over its quota,
// until a BLESS CLEAR (which, a write, makes the key the most recent) lets
// the next write bring the namespace back within it (Keyhive's rule; a
// quota is Keyhive's own).
func TestBlessNamespaceQuota(t *testing.T) {
	skipOnRedisTarget(t)
	ctx := context.Background()
	rdb := nsClient(t)
	nsDo(t, rdb, "NAMESPACE", "DEFINE", "q", "PREFIX", "q:", "MAX-KEYS", 3, "EVICT", "lru")
	rdb.Set(ctx, "q:0", "v", 0)
	nsDo(t, rdb, "BLESS", "SET", "q:0", "NO-EVICT")
	for i := 1; i <= 5; i++ {
		time.Sleep(1100 * time.Millisecond / 4)
		rdb.Set(ctx, fmt.Sprintf("q:%d", i), "v", 0)
	}
	if rdb.Exists(ctx, "q:0").Val() != 1 {
		t.Fatal("the blessed key was evicted by the quota")
	}
	if n := len(rdb.Keys(ctx, "q:*").Val()); n != 6 {
		t.Fatalf("%d keys in the namespace, want all 6 (its victim is blessed)", n)
	}
	nsDo(t, rdb, "BLESS", "CLEAR", "q:0", "NO-EVICT")
	rdb.Set(ctx, "q:6", "v", 0)
	if keys := rdb.Keys(ctx, "q:*").Val(); len(keys) != 3 || rdb.Exists(ctx, "q:0", "q:6").Val() != 2 {
		t.Fatalf("after BLESS CLEAR: %v", keys)
	}
}
