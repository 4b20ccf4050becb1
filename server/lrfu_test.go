package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestLRFUEviction: allkeys-lrfu, set by CONFIG SET, evicts under maxmemory
// (INFO evicted_keys counts it) and keeps the keys that are read over those
// written once.
func TestLRFUEviction(t *testing.T) {
	ctx := context.Background()
	rdb := nsClient(t)
	nsDo(t, rdb, "CONFIG", "SET", "maxmemory-policy", "allkeys-lrfu")
	if got := rdb.ConfigGet(ctx, "maxmemory-policy").Val()["maxmemory-policy"]; got != "allkeys-lrfu" {
		t.Fatalf("maxmemory-policy %q", got)
	}
	if err := rdb.ConfigSet(ctx, "maxmemory-policy", "allkeys-lrfux").Err(); err == nil {
		t.Fatal("an unknown policy was accepted")
	}
	value := strings.Repeat("v", 200)
	hot := make([]string, 500)
	for i := range hot {
		hot[i] = fmt.Sprintf("hot:%d", i)
		rdb.Set(ctx, hot[i], value, 0)
	}
	readHot := func() {
		p := rdb.Pipeline()
		for _, k := range hot {
			p.Get(ctx, k)
		}
		if _, err := p.Exec(ctx); err != nil && err != redis.Nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		readHot()
	}
	if f := nsDo(t, rdb, "OBJECT", "FREQ", hot[0]).(int64); f != 3 {
		t.Fatalf("OBJECT FREQ %d after 3 reads, want 3", f)
	}
	used := rdb.Info(ctx, "memory").Val()
	var usedMemory int64
	fmt.Sscanf(used[strings.Index(used, "used_memory:")+len("used_memory:"):], "%d", &usedMemory)
	nsDo(t, rdb, "CONFIG", "SET", "maxmemory", usedMemory+16<<20)
	// Cold keys, each written once, while the hot ones go on being read.
	for n := 0; evicted(t, rdb) < 20000; {
		p := rdb.Pipeline()
		for range 500 {
			p.Set(ctx, fmt.Sprintf("cold:%d", n), value, 0)
			n++
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		readHot()
		if n > 1_000_000 {
			t.Fatal("no eviction after 1M keys")
		}
	}
	kept := 0
	for _, k := range hot {
		if rdb.Exists(ctx, k).Val() == 1 {
			kept++
		}
	}
	if kept < len(hot)*95/100 {
		t.Fatalf("%d of %d hot keys kept after 20000 evictions", kept, len(hot))
	}
	if _, err := rdb.Do(ctx, "OBJECT", "IDLETIME", hot[0]).Result(); err == nil || !strings.Contains(err.Error(), "LRFU") {
		t.Fatalf("OBJECT IDLETIME under allkeys-lrfu: %v", err)
	}
}

// TestVolatileLRFU evicts only keys with a TTL.
func TestVolatileLRFU(t *testing.T) {
	ctx := context.Background()
	srv := startKeyhive(t, "--maxmemory-policy", "volatile-lrfu")
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: 2})
	t.Cleanup(func() { rdb.Close() })
	value := strings.Repeat("v", 200)
	for i := range 1000 {
		rdb.Set(ctx, fmt.Sprintf("keep:%d", i), value, 0)
	}
	info := rdb.Info(ctx, "memory").Val()
	var usedMemory int64
	fmt.Sscanf(info[strings.Index(info, "used_memory:")+len("used_memory:"):], "%d", &usedMemory)
	nsDo(t, rdb, "CONFIG", "SET", "maxmemory", usedMemory+4<<20)
	fillUntilEvicting(t, rdb, "ttl:", time.Hour, 5000)
	for i := range 1000 {
		if rdb.Exists(ctx, fmt.Sprintf("keep:%d", i)).Val() != 1 {
			t.Fatalf("keep:%d, without a TTL, was evicted", i)
		}
	}
}

// TestNamespaceLRFU: a namespace over its key quota evicts by LRFU: keys
// read often stay, keys written once go.
func TestNamespaceLRFU(t *testing.T) {
	ctx := context.Background()
	rdb := nsClient(t)
	if _, err := rdb.Do(ctx, "NAMESPACE", "DEFINE", "x", "PREFIX", "x:", "EVICT", "lrfu").Result(); err == nil {
		t.Fatal("EVICT lrfu without a quota was accepted")
	}
	nsDo(t, rdb, "NAMESPACE", "DEFINE", "page", "PREFIX", "page:", "MAX-KEYS", 100, "EVICT", "lrfu")
	for i := range 50 {
		rdb.Set(ctx, fmt.Sprintf("page:hot:%d", i), "v", 0)
	}
	for i := range 1000 {
		rdb.Set(ctx, fmt.Sprintf("page:cold:%d", i), "v", 0)
		rdb.Get(ctx, fmt.Sprintf("page:hot:%d", i%50))
	}
	if n := nsStats(t, rdb)["page"]["keys"]; n != 100 {
		t.Fatalf("page holds %d keys, want its quota 100", n)
	}
	for i := range 50 {
		if rdb.Exists(ctx, fmt.Sprintf("page:hot:%d", i)).Val() != 1 {
			t.Fatalf("page:hot:%d, read every 50 writes, was evicted", i)
		}
	}
	if got := fmt.Sprint(nsDo(t, rdb, "NAMESPACE", "LIST")); !strings.Contains(got, "EVICT lrfu") {
		t.Fatalf("NAMESPACE LIST: %s", got)
	}
}
