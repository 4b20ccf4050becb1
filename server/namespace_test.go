package server_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Tests of the key schema (NAMESPACE, Keyhive's own: there is no
// redis-server behaviour to compare with), one per seed application's
// rule that Keyhive now enforces, and the statistics' exactness.

func nsClient(t *testing.T, directives ...string) *redis.Client {
	t.Helper()
	srv := startKeyhive(t, directives...)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: 2})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

func nsDo(t *testing.T, rdb *redis.Client, args ...any) any {
	t.Helper()
	v, err := rdb.Do(context.Background(), args...).Result()
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return v
}

// nsStats returns NAMESPACE STATS as name -> field -> value.
func nsStats(t *testing.T, rdb *redis.Client) map[string]map[string]int64 {
	t.Helper()
	out := map[string]map[string]int64{}
	flat := nsDo(t, rdb, "NAMESPACE", "STATS").([]any)
	for i := 0; i+1 < len(flat); i += 2 {
		fields := flat[i+1].([]any)
		m := map[string]int64{}
		for j := 0; j+1 < len(fields); j += 2 {
			m[fields[j].(string)] = fields[j+1].(int64)
		}
		out[flat[i].(string)] = m
	}
	return out
}

// Seed 000: the resolver caps dns:* at max_keys and evicts the lowest
// cache hits first, then the oldest. Keyhive does it by itself.
func TestNamespaceSeed000Cap(t *testing.T) {
	ctx := context.Background()
	rdb := nsClient(t)
	nsDo(t, rdb, "NAMESPACE", "DEFINE", "dns", "PREFIX", "dns:", "MAX-KEYS", 10000, "EVICT", "lowest-hits-then-oldest")
	nsDo(t, rdb, "NAMESPACE", "DEFINE", "dnsmeta", "PREFIX", "dnsmeta:")
	key := func(i int) string { return fmt.Sprintf("dns:host%d.example.:1:1", i) }
	write := func(from, to int) {
		p := rdb.Pipeline()
		for i := from; i < to; i++ {
			p.HSet(ctx, key(i), "msg", "wire-bytes", "soft_expiry", 1700000000+i, "created_at", i)
			p.Expire(ctx, key(i), time.Hour)
			p.ZAdd(ctx, "dnsmeta:expiry:index", redis.Z{Score: float64(i), Member: key(i)})
			if (i+1)%1000 == 0 {
				if _, err := p.Exec(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := p.Exec(ctx); err != nil && err != redis.Nil {
			t.Fatal(err)
		}
	}
	write(0, 1000)
	// Hits set up on purpose: among the 1000 oldest entries, every fourth
	// is read 1 to 3 times. These must outlive every entry never read.
	hit := map[int]bool{}
	for i := 0; i < 1000; i += 4 {
		hit[i] = true
		for range 1 + i%3 {
			if err := rdb.HGet(ctx, key(i), "msg").Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(1000, 50000)

	if n := rdb.DBSize(ctx).Val(); n != 10001 { // the entries and the expiry index
		t.Fatalf("DBSIZE %d, want 10001", n)
	}
	// Survivors: every entry with hits, then the newest never-read ones.
	newest := 50000 - (10000 - len(hit))
	for i := 0; i < 50000; i++ {
		want := hit[i] || i >= newest
		if got := rdb.Exists(ctx, key(i)).Val() == 1; got != want {
			t.Fatalf("entry %d exists=%v, want %v (hit=%v)", i, got, want, hit[i])
		}
	}
	st := nsStats(t, rdb)
	if st["dns"]["keys"] != 10000 || st["dns"]["evictions"] != 40000 {
		t.Fatalf("dns stats %v, want 10000 keys and 40000 evictions", st["dns"])
	}
	if st["dnsmeta"]["keys"] != 1 {
		t.Fatalf("dnsmeta stats %v", st["dnsmeta"])
	}
}

// fillUntilEvicting writes keys of prefix until maxmemory has evicted at
// least want keys.
func fillUntilEvicting(t *testing.T, rdb *redis.Client, prefix string, ttl time.Duration, want int64) int {
	ctx := context.Background()
	value := strings.Repeat("v", 200)
	n := 0
	for evicted(t, rdb) < want {
		p := rdb.Pipeline()
		for range 500 {
			p.Set(ctx, fmt.Sprintf("%s%d", prefix, n), value, ttl)
			n++
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if n > 2_000_000 {
			t.Fatal("no eviction after 2M keys")
		}
	}
	return n
}

func evicted(t *testing.T, rdb *redis.Client) int64 {
	info := rdb.Info(context.Background(), "stats").Val()
	i := strings.Index(info, "evicted_keys:")
	var n int64
	fmt.Sscanf(info[i+len("evicted_keys:"):], "%d", &n)
	return n
}

// Seed 001: volatile-lru only because allkeys-lru "would evict system
// keys". With ql:v1:meta: protected, allkeys-lru never evicts them, and the
// 404 cache's size is a counter, not a SCAN.
func TestNamespaceSeed001Protected(t *testing.T) {
	ctx := context.Background()
	srv := startKeyhive(t, "--maxmemory", "16mb", "--maxmemory-policy", "allkeys-lru")
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: 2})
	defer rdb.Close()
	nsDo(t, rdb, "NAMESPACE", "DEFINE", "meta", "PREFIX", "ql:v1:meta:", "PROTECTED")
	nsDo(t, rdb, "NAMESPACE", "DEFINE", "notfound", "PREFIX", "ql:v1:404:")
	nsDo(t, rdb, "NAMESPACE", "DEFINE", "link", "PREFIX", "ql:v1:link:")
	for i := range 2000 {
		rdb.HSet(ctx, fmt.Sprintf("ql:v1:meta:c%d", i), "owner", "u", "clicks", i)
	}
	for i := range 3000 {
		rdb.Set(ctx, fmt.Sprintf("ql:v1:404:x%d", i), "1", 5*time.Minute)
	}
	fillUntilEvicting(t, rdb, "ql:v1:link:", time.Hour, 5000)
	for i := range 2000 {
		if rdb.Exists(ctx, fmt.Sprintf("ql:v1:meta:c%d", i)).Val() != 1 {
			t.Fatalf("protected key ql:v1:meta:c%d was evicted", i)
		}
	}
	var scanned int64
	iter := rdb.Scan(ctx, 0, "ql:v1:404:*", 1000).Iterator()
	for iter.Next(ctx) {
		scanned++
	}
	st := nsStats(t, rdb)
	if st["notfound"]["keys"] != scanned || st["meta"]["keys"] != 2000 || st["meta"]["evictions"] != 0 {
		t.Fatalf("stats %v; SCAN counted %d 404 keys", st, scanned)
	}
	if st["link"]["evictions"]+st["notfound"]["evictions"] < 5000 {
		t.Fatalf("evictions not attributed: %v", st)
	}
	// The same figure on the metrics endpoint, as a label.
	rec := httptest.NewRecorder()
	srv.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if want := fmt.Sprintf("keyhive_namespace_keys{namespace=\"notfound\"} %d\n", scanned); !strings.Contains(rec.Body.String(), want) {
		t.Fatalf("metrics lack %q", want)
	}
}

// Seed 003: "every key has a TTL". REQUIRE-TTL refuses a write that would
// leave one without; with DEFAULT-TTL such a key gets one, also when a
// script creates it and sets its own TTL after (the rate limiter's shape).
func TestNamespaceSeed003RequireTTL(t *testing.T) {
	ctx := context.Background()
	rdb := nsClient(t)
	nsDo(t, rdb, "NAMESPACE", "DEFINE", "cache", "PREFIX", "cache:", "REQUIRE-TTL")
	nsDo(t, rdb, "NAMESPACE", "DEFINE", "ratelimit", "PREFIX", "ratelimit:", "REQUIRE-TTL", "DEFAULT-TTL", 60)

	err := rdb.Set(ctx, "cache:project:id:1", "{}", 0).Err()
	if err == nil || !strings.HasPrefix(err.Error(), "ERR namespace 'cache' requires a TTL") {
		t.Fatalf("SET without TTL: %v", err)
	}
	if err := rdb.Set(ctx, "cache:project:id:1", "{}", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.SetNX(ctx, "cache:project:id:1", "{}", 0).Err(); err == nil {
		t.Fatal("SETNX dropping the TTL was accepted")
	}
	if err := rdb.Persist(ctx, "cache:project:id:1").Err(); err == nil {
		t.Fatal("PERSIST was accepted")
	}
	if err := rdb.Append(ctx, "cache:project:id:1", "x").Err(); err != nil {
		t.Fatalf("APPEND to a key with a TTL: %v", err)
	}
	if err := rdb.Incr(ctx, "cache:counter").Err(); err == nil {
		t.Fatal("INCR creating a key without TTL was accepted")
	}
	if rdb.Exists(ctx, "cache:counter").Val() != 0 {
		t.Fatal("refused INCR created its key")
	}

	if err := rdb.Set(ctx, "ratelimit:ipx:minute:pk", "0", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.TTL(ctx, "ratelimit:ipx:minute:pk").Val(); ttl <= 0 || ttl > time.Minute {
		t.Fatalf("DEFAULT-TTL gave %v", ttl)
	}
	script := `local c = redis.call("INCRBY", KEYS[1], 1) if c == 1 then redis.call("PEXPIRE", KEYS[1], 86400000) end return c`
	if err := rdb.Eval(ctx, script, []string{"ratelimit:ipx:day:pk"}).Err(); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.TTL(ctx, "ratelimit:ipx:day:pk").Val(); ttl < 23*time.Hour {
		t.Fatalf("the script's own TTL was overridden: %v", ttl)
	}
	rdb.Set(ctx, "tmp", "v", time.Minute)
	if err := rdb.Rename(ctx, "tmp", "cache:moved").Err(); err != nil {
		t.Fatalf("RENAME of a key with a TTL: %v", err)
	}
	rdb.Set(ctx, "tmp", "v", 0)
	if err := rdb.Rename(ctx, "tmp", "cache:moved2").Err(); err == nil {
		t.Fatal("RENAME of a key without TTL was accepted")
	}
	nsDo(t, rdb, "NAMESPACE", "DEFINE", "short", "PREFIX", "short:", "MAX-TTL", 10)
	rdb.Set(ctx, "short:a", "v", time.Hour)
	rdb.Set(ctx, "short:b", "v", 0)
	for _, k := range []string{"short:a", "short:b"} {
		if ttl := rdb.TTL(ctx, k).Val(); ttl <= 0 || ttl > 10*time.Second {
			t.Fatalf("MAX-TTL left %s with %v", k, ttl)
		}
	}
	if st := nsStats(t, rdb); st["cache"]["refused"] != 5 {
		t.Fatalf("refusals %v", st["cache"])
	}
}

// TestNamespaceRequireTTLReadsOptions: a command's expiration options are
// found where its argument grammar puts them, so SET's value is never
// taken for one (SET k EX sets the value "EX", with no TTL), nor a
// condition's value (IFEQ EX), nor MSETEX's (where its options begin
// depends on numkeys). RESTORE's ttl argument and the TTL a
// destination takes from its source count too.
func TestNamespaceRequireTTLReadsOptions(t *testing.T) {
	ctx := context.Background()
	rdb := nsClient(t)
	nsDo(t, rdb, "NAMESPACE", "DEFINE", "cache", "PREFIX", "cache:", "REQUIRE-TTL")
	rdb.Set(ctx, "src:ttl", "v", time.Minute)
	rdb.Set(ctx, "src:none", "v", 0)
	dump := rdb.Dump(ctx, "src:none").Val()
	refused := 0
	for _, c := range []struct {
		args []any
		ok   bool
	}{
		{[]any{"SET", "cache:k", "EX"}, false},
		{[]any{"SET", "cache:k", "PX"}, false},
		{[]any{"SET", "cache:k", "v", "IFEQ", "EX"}, false},
		{[]any{"SET", "cache:k", "v"}, false},
		{[]any{"SET", "cache:k", "EX", "EX", "10"}, true},
		{[]any{"set", "cache:k", "v", "get", "pxat", "99999999999999"}, true},
		{[]any{"SET", "cache:k", "v", "KEEPTTL"}, true},
		{[]any{"SET", "cache:k", "v", "NX", "KEEPTTL"}, true},
		{[]any{"MSETEX", "2", "cache:m", "v", "cache:n", "EX"}, false},
		{[]any{"MSETEX", "1", "cache:m", "EX", "EX", "10"}, true},
		{[]any{"GETEX", "cache:k"}, true},
		{[]any{"GETEX", "cache:k", "PERSIST"}, false},
		{[]any{"GETEX", "cache:new", "EX", "10"}, true},
		{[]any{"RESTORE", "cache:r", "0", dump}, false},
		{[]any{"RESTORE", "cache:r", "10000", dump}, true},
		{[]any{"COPY", "src:none", "cache:c"}, false},
		{[]any{"COPY", "src:ttl", "cache:c"}, true},
	} {
		err := rdb.Do(ctx, c.args...).Err()
		if err == redis.Nil {
			err = nil
		}
		switch {
		case c.ok && err != nil:
			t.Errorf("%v refused: %v", c.args, err)
		case !c.ok && (err == nil || !strings.HasPrefix(err.Error(), "ERR namespace 'cache' requires a TTL")):
			t.Errorf("%v: %v, want the TTL refusal", c.args, err)
		case !c.ok:
			refused++
		}
	}
	if ttl := rdb.PTTL(ctx, "cache:k").Val(); ttl <= 0 {
		t.Fatalf("cache:k is left with TTL %v", ttl)
	}
	if st := nsStats(t, rdb); st["cache"]["refused"] != int64(refused) {
		t.Fatalf("refusals %v, want %d", st["cache"], refused)
	}
}

// TestNamespaceTypesByCommand: a namespace's TYPES refuses the writes of
// the other types' commands, sorted sets and geo included, and lets the
// generic ones through.
func TestNamespaceTypesByCommand(t *testing.T) {
	ctx := context.Background()
	rdb := nsClient(t)
	nsDo(t, rdb, "NAMESPACE", "DEFINE", "words", "PREFIX", "words:", "TYPES", "set")
	for _, c := range []struct {
		args []any
		ok   bool
	}{
		{[]any{"SADD", "words:a", "x"}, true},
		{[]any{"ZADD", "words:z", "1", "x"}, false},
		{[]any{"GEOADD", "words:g", "13.36", "38.11", "x"}, false},
		{[]any{"SET", "words:s", "v"}, false},
		{[]any{"SETBIT", "words:b", "1", "1"}, false},
		{[]any{"PFADD", "words:h", "x"}, false},
		{[]any{"RPUSH", "words:l", "x"}, false},
		{[]any{"HSET", "words:h", "f", "v"}, false},
		{[]any{"XADD", "words:x", "*", "f", "v"}, false},
		{[]any{"RENAME", "words:a", "words:b"}, true},
		{[]any{"DEL", "words:b"}, true},
	} {
		err := rdb.Do(ctx, c.args...).Err()
		switch {
		case c.ok && err != nil:
			t.Errorf("%v refused: %v", c.args, err)
		case !c.ok && (err == nil || err.Error() != "WRONGTYPE namespace 'words' holds only set values"):
			t.Errorf("%v: %v, want the TYPES refusal", c.args, err)
		}
	}
}

// Seed 004: structure keys without TTL are protected; page caches with a
// TTL are evictable. A maxmemory squeeze takes only the caches.
func TestNamespaceSeed004Squeeze(t *testing.T) {
	ctx := context.Background()
	rdb := nsClient(t, "--maxmemory-policy", "allkeys-lru")
	for _, d := range [][]any{
		{"entity", "PREFIX", "ucg:entity:", "PROTECTED", "TYPES", "hash"},
		{"words", "PREFIX", "search:word:", "PROTECTED", "TYPES", "set"},
		{"children", "PATTERN", "ucg:*:children", "PROTECTED"},
		{"pagecache", "PREFIX", "cache:page:", "REQUIRE-TTL"},
	} {
		nsDo(t, rdb, append([]any{"NAMESPACE", "DEFINE"}, d...)...)
	}
	for i := range 3000 {
		rdb.HSet(ctx, fmt.Sprintf("ucg:entity:%d", i), "title", "t", "body", strings.Repeat("b", 100))
		rdb.SAdd(ctx, fmt.Sprintf("search:word:w%d", i%500), i)
		rdb.SAdd(ctx, fmt.Sprintf("ucg:%d:children", i%300), i)
	}
	if err := rdb.Set(ctx, "ucg:entity:x", "s", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE namespace 'entity'") {
		t.Fatalf("a string in a hash namespace: %v", err)
	}
	nsDo(t, rdb, "CONFIG", "SET", "maxmemory", "24mb")
	fillUntilEvicting(t, rdb, "cache:page:", 5*time.Minute, 3000)
	st := nsStats(t, rdb)
	if st["entity"]["keys"] != 3000 || st["words"]["keys"] != 500 || st["children"]["keys"] != 300 {
		t.Fatalf("protected keys lost: %v", st)
	}
	if st["pagecache"]["evictions"] < 3000 {
		t.Fatalf("page caches not evicted: %v", st["pagecache"])
	}
}

// The statistics equal a SCAN-based count after a random workload, after
// a recount (a new declaration refills them from the keys), and after a
// restart from the RDB file and from the AOF.
func TestNamespaceStatsProperty(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	srv := startKeyhive(t, "--dir", dir, "--appendonly", "yes", "--enable-debug-command", "yes")
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: 2})
	defer rdb.Close()
	prefixes := []string{"a:", "a:b:", "c:", "q:1:waiting:", "other:"}
	nsDo(t, rdb, "NAMESPACE", "DEFINE", "a", "PREFIX", "a:")
	nsDo(t, rdb, "NAMESPACE", "DEFINE", "ab", "PREFIX", "a:b:", "MAX-KEYS", 300, "EVICT", "lru")
	nsDo(t, rdb, "NAMESPACE", "DEFINE", "c", "PREFIX", "c:", "DEFAULT-TTL", 1000)
	nsDo(t, rdb, "NAMESPACE", "DEFINE", "waiting", "PATTERN", "q:*:waiting:*")
	r := rand.New(rand.NewPCG(1, 2))
	key := func() string { return fmt.Sprintf("%s%d", prefixes[r.IntN(len(prefixes))], r.IntN(400)) }
	p := rdb.Pipeline()
	for i := range 20000 {
		k := key()
		switch r.IntN(10) {
		case 0:
			p.Del(ctx, k)
		case 1:
			p.Expire(ctx, k, time.Duration(1+r.IntN(3600))*time.Second)
		case 2:
			p.Persist(ctx, k)
		case 3:
			p.HSet(ctx, k, fmt.Sprint(r.IntN(50)), strings.Repeat("x", r.IntN(300)))
		case 4:
			p.Append(ctx, k, strings.Repeat("y", r.IntN(100)))
		case 5:
			p.Rename(ctx, k, key())
		case 6:
			p.SAdd(ctx, k, r.IntN(1000))
		case 7:
			p.Do(ctx, "COPY", k, key(), "REPLACE")
		default:
			p.Set(ctx, k, strings.Repeat("z", r.IntN(2000)), time.Duration(r.IntN(2))*time.Hour)
		}
		if i%500 == 499 {
			p.Exec(ctx) // WRONGTYPE and missing-key errors are part of the workload
		}
	}
	p.Exec(ctx)

	check := func(when string) map[string]map[string]int64 {
		t.Helper()
		st := nsStats(t, rdb)
		want := map[string][2]int64{}
		iter := rdb.Scan(ctx, 0, "*", 1000).Iterator()
		for iter.Next(ctx) {
			k := iter.Val()
			ns := "default"
			switch {
			case strings.HasPrefix(k, "a:b:"):
				ns = "ab"
			case strings.HasPrefix(k, "a:"):
				ns = "a"
			case strings.HasPrefix(k, "c:"):
				ns = "c"
			case strings.HasPrefix(k, "q:") && strings.Contains(k, ":waiting:"):
				ns = "waiting"
			}
			w := want[ns]
			w[0]++
			if rdb.TTL(ctx, k).Val() > 0 {
				w[1]++
			}
			want[ns] = w
		}
		for ns, w := range want {
			if st[ns]["keys"] != w[0] || st[ns]["volatile"] != w[1] {
				t.Fatalf("%s: %s has keys=%d volatile=%d, SCAN counts %d and %d", when, ns, st[ns]["keys"], st[ns]["volatile"], w[0], w[1])
			}
		}
		if st["ab"]["keys"] > 300 {
			t.Fatalf("%s: ab over its quota: %v", when, st["ab"])
		}
		return st
	}
	before := check("after the workload")
	nsDo(t, rdb, "NAMESPACE", "DEFINE", "zzz", "PREFIX", "zzz:")
	after := check("after a recount")
	for ns, f := range before {
		if f["bytes"] != after[ns]["bytes"] {
			t.Fatalf("%s: bytes kept %d, recounted %d", ns, f["bytes"], after[ns]["bytes"])
		}
	}
	nsDo(t, rdb, "BGREWRITEAOF")
	waitAOFRewrite(t, rdb)
	nsDo(t, rdb, "DEBUG", "LOADAOF")
	check("after an AOF rewrite and reload")
	nsDo(t, rdb, "DEBUG", "RELOAD")
	st := check("after DEBUG RELOAD")
	if st["zzz"] == nil || len(nsDo(t, rdb, "NAMESPACE", "LIST").([]any)) != 5 {
		t.Fatalf("declarations not kept with the data: %v", nsDo(t, rdb, "NAMESPACE", "LIST"))
	}
	// A restart: a new server on the same directory loads the AOF.
	rdb.Close()
	srv.Close()
	srv = startKeyhive(t, "--dir", dir, "--appendonly", "yes", "--enable-debug-command", "yes")
	rdb = redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: 2})
	defer rdb.Close()
	if st := check("after a restart"); st["zzz"] == nil {
		t.Fatal("declarations lost by the restart")
	}
}

func waitAOFRewrite(t *testing.T, rdb *redis.Client) {
	t.Helper()
	waitUntil(t, "the AOF rewrite to finish", func() bool {
		info := rdb.Info(context.Background(), "persistence").Val()
		return strings.Contains(info, "aof_rewrite_in_progress:0") && !strings.Contains(info, "aof_rewrite_scheduled:1")
	})
}

// TestNamespaceCommands: the family's replies and errors.
func TestNamespaceCommands(t *testing.T) {
	ctx := context.Background()
	rdb := nsClient(t)
	nsDo(t, rdb, "NAMESPACE", "DEFINE", "a", "PREFIX", "a:")
	if err := rdb.Do(ctx, "NAMESPACE", "DEFINE", "b", "PREFIX", "a:").Err(); err == nil || err.Error() != "ERR namespace 'a' already declares prefix 'a:'" {
		t.Fatalf("duplicate prefix: %v", err)
	}
	if err := rdb.Do(ctx, "NAMESPACE", "DROP", "nosuch").Err(); err == nil || err.Error() != "ERR no such namespace 'nosuch'" {
		t.Fatalf("DROP nosuch: %v", err)
	}
	if err := rdb.Do(ctx, "NAMESPACE", "INFO", "nosuch").Err(); err == nil {
		t.Fatal("INFO nosuch accepted")
	}
	rdb.Set(ctx, "a:1", "v", 0)
	rdb.Get(ctx, "a:1")
	rdb.Get(ctx, "a:2")
	info := nsDo(t, rdb, "NAMESPACE", "INFO", "a").([]any)
	if fmt.Sprint(info[:6]) != "[name a prefix a: policy ]" {
		t.Fatalf("INFO %v", info)
	}
	nsDo(t, rdb, "NAMESPACE", "RESET", "a")
	if st := nsStats(t, rdb)["a"]; st["hits"] != 0 || st["misses"] != 0 || st["keys"] != 1 {
		t.Fatalf("after RESET a: %v", st)
	}
	// Redefining keeps the counters; dropping hands the keys to default.
	rdb.Get(ctx, "a:1")
	nsDo(t, rdb, "NAMESPACE", "DEFINE", "a", "PREFIX", "a:", "MAX-KEYS", 5)
	if st := nsStats(t, rdb)["a"]; st["hits"] != 1 || st["keys"] != 1 {
		t.Fatalf("after redefining a: %v", st)
	}
	nsDo(t, rdb, "NAMESPACE", "DROP", "a")
	if st := nsStats(t, rdb); len(st) != 0 {
		t.Fatalf("STATS with no namespace: %v", st)
	}
	nsDo(t, rdb, "NAMESPACE", "DEFINE", "b", "PATTERN", "x:*:y")
	if st := nsStats(t, rdb); st["default"]["keys"] != 1 || st["b"]["keys"] != 0 {
		t.Fatalf("after DROP: %v", st)
	}
	if err := rdb.Do(ctx, "NAMESPACE", "DEFINE", "c", "PREFIX", "c:", "EVICT", "lru").Err(); err == nil || err.Error() != "ERR EVICT needs MAX-KEYS or MAX-MEMORY" {
		t.Fatalf("EVICT without a quota: %v", err)
	}
	if err := rdb.Do(ctx, "NAMESPACE", "DEFINE", "c", "PREFIX", "c:", "MAX-KEYS", 1).Err(); err != nil {
		t.Fatal(err)
	}
	rdb.Set(ctx, "c:1", "v", 0)
	if err := rdb.Set(ctx, "c:2", "v", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "NSQUOTA namespace 'c' is at its MAX-KEYS quota of 1 keys") {
		t.Fatalf("over a REJECT quota: %v", err)
	}
	if err := rdb.Set(ctx, "c:1", "w", 0).Err(); err != nil {
		t.Fatalf("overwriting at the quota: %v", err)
	}
}
