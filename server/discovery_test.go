//go:build unix

package server_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Tests of the discovered prefixes (NAMESPACE DISCOVER, Keyhive's own):
// the figures against a full SCAN, the commands, the directives.

// discoverKey returns a key in the shape of the seeds' schemas
// (workloads/schema.conf), with whether it gets a TTL.
func discoverKey(r *rand.Rand) (string, bool) {
	switch n := r.IntN(20); {
	case n < 4:
		return fmt.Sprintf("dns:host%d.example.com.:%d:1", r.IntN(5000), []int{1, 28}[r.IntN(2)]), true
	case n < 9:
		return fmt.Sprintf("ql:v1:link:%x", r.Uint32()), true
	case n < 11:
		return fmt.Sprintf("ql:v1:404:%x", r.Uint32()), true
	case n < 12:
		return fmt.Sprintf("session:%x", r.Uint32()), true
	case n < 14:
		return fmt.Sprintf("cache:project:%d", r.IntN(1e6)), true
	case n < 15:
		return fmt.Sprintf("ratelimit:ipx:%d", r.IntN(1e6)), true
	case n < 19:
		return fmt.Sprintf("reed:entity:%d", r.IntN(1e7)), false
	default:
		return fmt.Sprintf("counter%d", r.IntN(1000)), false
	}
}

// discovered parses NAMESPACE DISCOVER's reply (RESP2).
func discovered(t *testing.T, rdb *redis.Client, args ...any) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, e := range nsDo(t, rdb, append([]any{"NAMESPACE", "DISCOVER"}, args...)...).([]any) {
		fields := e.([]any)
		m := map[string]any{}
		for i := 0; i+1 < len(fields); i += 2 {
			if sub, ok := fields[i+1].([]any); ok {
				for j := 0; j+1 < len(sub); j += 2 {
					m[fields[i].(string)+"."+sub[j].(string)] = sub[j+1]
				}
				continue
			}
			m[fields[i].(string)] = fields[i+1]
		}
		out = append(out, m)
	}
	return out
}

// scanPrefix is a key's prefix at depth as the docs define it.
func scanPrefix(key string, depth int) string {
	end := 0
	for range depth {
		if i := strings.IndexByte(key[end:], ':'); i >= 0 {
			end += i + 1
		}
	}
	return key[:end]
}

// TestDiscoverMatchesScan loads a seed-shaped key mix, deletes part of it,
// then checks each depth's top prefixes by keys against the counts a full
// SCAN gives, within the error bound DISCOVER states.
func TestDiscoverMatchesScan(t *testing.T) {
	ctx := context.Background()
	rdb := nsClient(t)
	r := rand.New(rand.NewPCG(41, 1))
	const n = 100_000
	pipe := rdb.Pipeline()
	for i := range n {
		key, ttl := discoverKey(r)
		if ttl {
			pipe.Set(ctx, key, "0123456789abcdef", time.Hour)
		} else {
			pipe.Set(ctx, key, "0123456789abcdef", 0)
		}
		if i%10 == 9 {
			pipe.Del(ctx, key)
		}
		if i%1000 == 999 {
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	counts := make([]map[string]int64, 4)
	volatile := make([]map[string]int64, 4)
	for d := 1; d <= 3; d++ {
		counts[d], volatile[d] = map[string]int64{}, map[string]int64{}
	}
	iter := rdb.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		key := iter.Val()
		ttl := !strings.HasPrefix(key, "reed:") && !strings.HasPrefix(key, "counter")
		for d := 1; d <= 3; d++ {
			counts[d][scanPrefix(key, d)]++
			if ttl {
				volatile[d][scanPrefix(key, d)]++
			}
		}
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	for d := 1; d <= 3; d++ {
		top := discovered(t, rdb, "DEPTH", d, "COUNT", 5, "BY", "keys")
		if len(top) < 3 {
			t.Fatalf("depth %d: %v", d, top)
		}
		for _, p := range top {
			name := p["prefix"].(string)
			if p["depth"].(int64) != int64(d) {
				t.Errorf("depth %d: %q reported at depth %v", d, name, p["depth"])
			}
			for field, want := range map[string]int64{"keys": counts[d][name], "volatile": volatile[d][name]} {
				got, bound := p[field].(int64), p["error."+field].(int64)
				if got-want > bound || want-got > bound {
					t.Errorf("depth %d %q: %s %d, SCAN counts %d, beyond the bound %d", d, name, field, got, want, bound)
				}
			}
			t.Logf("depth %d %-16q keys %6d ±%-5d SCAN %6d", d, name, p["keys"], p["error.keys"], counts[d][name])
		}
	}
}

func TestDiscoverCommands(t *testing.T) {
	ctx := context.Background()
	rdb := nsClient(t)
	for i := range 2000 {
		rdb.Set(ctx, fmt.Sprintf("ql:v1:link:%d", i), "v", 0)
		rdb.Get(ctx, fmt.Sprintf("ql:v1:link:%d", i))
	}
	for i := range 200 {
		rdb.Set(ctx, fmt.Sprintf("lock:%d", i), "v", time.Minute)
	}
	for _, c := range []struct {
		args []any
		err  string
	}{
		{[]any{"DEPTH", 4}, "ERR DEPTH must be between 1 and 3 (namespace-discovery-depth)"},
		{[]any{"DEPTH", 0}, "ERR DEPTH must be between 1 and 3 (namespace-discovery-depth)"},
		{[]any{"COUNT", 0}, "ERR COUNT must be a positive integer"},
		{[]any{"BY", "size"}, "ERR BY takes keys, volatile, bytes, reads, writes, evictions or expirations"},
		{[]any{"DEPTH"}, "ERR syntax error"},
		{[]any{"ORDER", "keys"}, "ERR syntax error"},
	} {
		if err := rdb.Do(ctx, append([]any{"NAMESPACE", "DISCOVER"}, c.args...)...).Err(); err == nil || err.Error() != c.err {
			t.Errorf("DISCOVER %v: %v, want %s", c.args, err, c.err)
		}
	}
	top := discovered(t, rdb, "DEPTH", 3, "ORDER", "BY", "reads", "COUNT", 1)
	if len(top) != 1 || top[0]["prefix"] != "ql:v1:link:" || top[0]["reads"].(int64) == 0 {
		t.Fatalf("DEPTH 3 ORDER BY reads COUNT 1: %v", top)
	}
	if top := discovered(t, rdb); len(top) != 2 || top[0]["prefix"] != "ql:" || top[1]["prefix"] != "lock:" {
		t.Fatalf("DISCOVER: %v", top)
	}

	// PROMOTE declares it, named after the prefix; the namespace's counts
	// are exact.
	if err := rdb.Do(ctx, "NAMESPACE", "PROMOTE", "nosuch:").Err(); err == nil || !strings.Contains(err.Error(), "is not a discovered prefix") {
		t.Fatalf("PROMOTE of an unknown prefix: %v", err)
	}
	if name := nsDo(t, rdb, "NAMESPACE", "PROMOTE", "ql:v1:link:", "MAX-KEYS", 100000); name != "ql-v1-link" {
		t.Fatalf("PROMOTE: %v", name)
	}
	nsDo(t, rdb, "NAMESPACE", "DEFINE", "lock", "PREFIX", "lock:x:")
	if err := rdb.Do(ctx, "NAMESPACE", "PROMOTE", "lock:").Err(); err == nil || err.Error() != "ERR namespace 'lock' already exists: give PROMOTE a NAME" {
		t.Fatalf("PROMOTE onto a taken name: %v", err)
	}
	nsDo(t, rdb, "NAMESPACE", "DROP", "lock")
	if name := nsDo(t, rdb, "NAMESPACE", "PROMOTE", "lock:", "NAME", "locks", "REQUIRE-TTL"); name != "locks" {
		t.Fatalf("PROMOTE NAME: %v", name)
	}
	if list := fmt.Sprint(nsDo(t, rdb, "NAMESPACE", "LIST")); list != "[[ql-v1-link PREFIX ql:v1:link: MAX-KEYS 100000 REJECT] [locks PREFIX lock: REQUIRE-TTL]]" {
		t.Fatalf("LIST after PROMOTE: %s", list)
	}
	if st := nsStats(t, rdb); st["ql-v1-link"]["keys"] != 2000 || st["locks"]["volatile"] != 200 {
		t.Fatalf("STATS after PROMOTE: %v", st)
	}
	// Discovery goes on beside the declarations.
	if top := discovered(t, rdb, "BY", "keys"); len(top) != 2 || top[0]["prefix"] != "ql:" {
		t.Fatalf("DISCOVER with namespaces declared: %v", top)
	}

	info := rdb.Info(ctx, "namespaces").Val()
	for _, want := range []string{"ns_ql-v1-link:keys=2000,", "discovery_depth:3\r\n", "discovered_d1_1:prefix=ql:,keys=", "discovered_d3_1:prefix=ql:v1:link:,"} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO namespaces lacks %q:\n%s", want, info)
		}
	}

	// CONFIG SET recounts into a new sketch, just after it replies.
	nsDo(t, rdb, "CONFIG", "SET", "namespace-discovery-depth", 1)
	waitUntil(t, "depth 1 to apply", func() bool { return rdb.Do(ctx, "NAMESPACE", "DISCOVER", "DEPTH", 2).Err() != nil })
	if top := discovered(t, rdb, "BY", "keys"); len(top) != 2 || top[0]["prefix"] != "ql:" {
		t.Fatalf("DISCOVER after the recount: %v", top)
	}
	nsDo(t, rdb, "CONFIG", "SET", "namespace-discovery-delimiter", "/")
	waitUntil(t, "the recount", func() bool {
		top := discovered(t, rdb, "BY", "keys")
		return len(top) == 1 && top[0]["prefix"] == ""
	})
	if err := rdb.Do(ctx, "CONFIG", "SET", "namespace-discovery-delimiter", "::").Err(); err == nil {
		t.Error("a two-byte delimiter accepted")
	}
	if err := rdb.Do(ctx, "CONFIG", "SET", "namespace-discovery-capacity", 1000).Err(); err == nil {
		t.Error("a capacity that is no power of two accepted")
	}
	nsDo(t, rdb, "CONFIG", "SET", "namespace-discovery", "no")
	waitUntil(t, "discovery off to apply", func() bool { return rdb.Do(ctx, "NAMESPACE", "DISCOVER").Err() != nil })
	if err := rdb.Do(ctx, "NAMESPACE", "DISCOVER").Err(); err == nil || err.Error() != "ERR prefix discovery is off (CONFIG SET namespace-discovery yes)" {
		t.Fatalf("DISCOVER while off: %v", err)
	}
	if st := nsStats(t, rdb); st["ql-v1-link"]["keys"] != 2000 {
		t.Fatalf("STATS after discovery went off: %v", st)
	}
}

// TestDiscoveryOffByConfig starts with discovery off and nothing declared:
// no Table at all, INFO namespaces empty.
func TestDiscoveryOffByConfig(t *testing.T) {
	ctx := context.Background()
	rdb := nsClient(t, "--namespace-discovery", "no")
	for i := range 1000 { // enough for the 1-in-16 sample to hold some
		rdb.Set(ctx, fmt.Sprintf("a:%d", i), "v", 0)
	}
	if err := rdb.Do(ctx, "NAMESPACE", "DISCOVER").Err(); err == nil {
		t.Fatal("DISCOVER answered with discovery off")
	}
	if info := rdb.Info(ctx, "namespaces").Val(); strings.Contains(info, "discover") {
		t.Fatalf("INFO namespaces: %s", info)
	}
	nsDo(t, rdb, "CONFIG", "SET", "namespace-discovery", "yes")
	waitUntil(t, "the recount", func() bool {
		v, err := rdb.Do(ctx, "NAMESPACE", "DISCOVER").Result()
		return err == nil && len(v.([]any)) == 1
	})
}

// TestPromotePropagatesDefine checks that PROMOTE reaches the AOF as the
// NAMESPACE DEFINE it amounts to: a reload's sketch need not hold the
// prefix.
func TestPromotePropagatesDefine(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	rdb := nsClient(t, "--dir", dir, "--appendonly", "yes", "--appendfsync", "always")
	for i := range 2000 {
		rdb.Set(ctx, fmt.Sprintf("cache:project:%d", i), "v", 0)
	}
	nsDo(t, rdb, "NAMESPACE", "PROMOTE", "cache:project:", "PROTECTED")
	files, err := filepath.Glob(filepath.Join(dir, "appendonlydir", "*.incr.aof"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no incremental AOF in %s: %v", dir, err)
	}
	var aof []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		aof = append(aof, b...)
	}
	want := "$9\r\nNAMESPACE\r\n$6\r\nDEFINE\r\n$13\r\ncache-project\r\n$6\r\nPREFIX\r\n$14\r\ncache:project:\r\n$9\r\nPROTECTED\r\n"
	if !strings.Contains(string(aof), want) || strings.Contains(strings.ToUpper(string(aof)), "PROMOTE") {
		t.Fatalf("AOF lacks PROMOTE's DEFINE:\n%q", aof[max(0, len(aof)-400):])
	}
}

// TestDiscoveryMetrics scrapes the top prefixes from the metrics endpoint.
func TestDiscoveryMetrics(t *testing.T) {
	ctx := context.Background()
	srv := startKeyhive(t, "--metrics-port", freePort(t), "--metrics-bind", "127.0.0.1")
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	for i := range 1000 {
		rdb.Set(ctx, fmt.Sprintf("ql:v1:link:%d", i), "v", 0)
		rdb.Set(ctx, fmt.Sprintf("bin\xff:%d", i), "v", 0)
	}
	text := httpGet(t, "http://"+srv.MetricsAddr()+"/metrics")
	for _, want := range []string{
		"# TYPE keyhive_discovered_prefix_keys gauge\n",
		`keyhive_discovered_prefix_keys{depth="3",prefix="ql:v1:link:"} `,
		`keyhive_discovered_prefix_keys_error{depth="1",prefix="ql:"} `,
		`keyhive_discovered_prefix_bytes{depth="1",prefix="bin` + "\uFFFD" + `:"} `,
		"# TYPE keyhive_discovered_prefix_writes_total counter\n",
		"keyhive_discovery_memory_bytes 1.2288e+06\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
}
