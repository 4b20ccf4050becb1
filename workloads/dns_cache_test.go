package workloads

import (
	"bytes"
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyhive/keyhive/keyhivetest"
)

// The resolver's cache tests (seed 000) on keyhivetest: the dns workload's
// Redis layer against an in-process Keyhive whose clock the tests move, so
// TTLs pass without sleeping. Each runs under both metadata prefixes.

// dnsCacheTest runs fn on a fresh server for the standalone and the cluster
// prefix.
func dnsCacheTest(t *testing.T, maxKeys int, fn func(t *testing.T, srv *keyhivetest.Server, c *dnsCache)) {
	for _, meta := range []string{dnsMetaStandalone, dnsMetaCluster} {
		t.Run(meta, func(t *testing.T) {
			srv := keyhivetest.Run(t)
			rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
			t.Cleanup(func() { rdb.Close() })
			fn(t, srv, newDNSCache(rdb, meta, maxKeys))
		})
	}
}

// entries counts the cache entries (dns:*), leaving the metadata out.
func entries(srv *keyhivetest.Server) int {
	n := 0
	for _, k := range srv.Keys() {
		if strings.HasPrefix(k, "dns:") {
			n++
		}
	}
	return n
}

// TestDNSCacheEntry checks the entry's key schema (a hash of msg,
// soft_expiry and created_at, an expiry-index member scored by soft
// expiry) and its Redis TTL, ttl plus a grace of min(ttl, 1h): the entry is
// served until that TTL passes, then gone from Redis.
func TestDNSCacheEntry(t *testing.T) {
	dnsCacheTest(t, 0, func(t *testing.T, srv *keyhivetest.Server, c *dnsCache) {
		ctx := context.Background()
		now := srv.Now().Unix()
		msg := dnsMessage(rand.New(rand.NewPCG(0, 0)), 1)
		short, long := dnsKey("short.example.com.", 1), dnsKey("long.example.com.", 28)
		must(t, c.set(ctx, short, msg, 60, now))
		must(t, c.set(ctx, long, msg, 7200, now))

		if got := srv.Type(short); got != "hash" {
			t.Fatalf("entry type %q", got)
		}
		if v, _ := srv.HGet(short, "msg"); v != string(msg) {
			t.Errorf("msg %q, want the wire bytes %q", v, msg)
		}
		if v, _ := srv.HGet(short, "soft_expiry"); v != strconv.FormatInt(now+60, 10) {
			t.Errorf("soft_expiry %s, want %d", v, now+60)
		}
		if v, _ := srv.HGet(short, "created_at"); v != strconv.FormatInt(now, 10) {
			t.Errorf("created_at %s, want %d", v, now)
		}
		index := c.rdb.ZRangeWithScores(ctx, c.index(), 0, -1).Val()
		if len(index) != 2 || index[0].Member != short || index[0].Score != float64(now+60) || index[1].Score != float64(now+7200) {
			t.Errorf("expiry index %v", index)
		}
		if ttl := srv.TTL(short); ttl != 120*time.Second {
			t.Errorf("TTL of a 60 s entry %v, want 120s (grace = ttl)", ttl)
		}
		if ttl := srv.TTL(long); ttl != 3*time.Hour {
			t.Errorf("TTL of a 2 h entry %v, want 3h (grace capped at 1h)", ttl)
		}

		srv.FastForward(119 * time.Second) // past soft expiry, within the grace
		e, err := c.get(ctx, short, srv.Now().Unix())
		must(t, err)
		if e == nil || !bytes.Equal(e.msg, msg) || e.softExpiry >= srv.Now().Unix() {
			t.Fatalf("stale entry in its grace period: %+v", e)
		}
		srv.FastForward(time.Second)
		if e, err := c.get(ctx, short, srv.Now().Unix()); err != nil || e != nil {
			t.Errorf("entry past its Redis TTL: %+v %v", e, err)
		}
		if !srv.Exists(long) {
			t.Error("the 3 h entry expired with the 2 min one")
		}
	})
}

// TestDNSCacheLegacyEntry reads a legacy string entry: it is served and
// migrated to the hash form with half its remaining TTL as soft expiry.
func TestDNSCacheLegacyEntry(t *testing.T) {
	dnsCacheTest(t, 0, func(t *testing.T, srv *keyhivetest.Server, c *dnsCache) {
		ctx := context.Background()
		key := dnsKey("legacy.example.com.", 1)
		msg := dnsMessage(rand.New(rand.NewPCG(1, 0)), 2)
		must(t, c.rdb.Set(ctx, key, msg, time.Hour).Err())
		now := srv.Now().Unix()
		e, err := c.get(ctx, key, now)
		must(t, err)
		if e == nil || !bytes.Equal(e.msg, msg) || e.softExpiry != now+1800 {
			t.Fatalf("legacy read: %+v", e)
		}
		if got := srv.Type(key); got != "hash" {
			t.Errorf("not migrated: type %q", got)
		}
		if ttl := srv.TTL(key); ttl != time.Hour {
			t.Errorf("migrated TTL %v, want 1h (30 min + 30 min grace)", ttl)
		}
	})
}

// TestDNSCacheHitCounts flushes batched hits: the counters add up across
// flushes, and each flush renews the window TTL (5 min for hits, 10 min for
// sweep hits), after which the count starts again.
func TestDNSCacheHitCounts(t *testing.T) {
	dnsCacheTest(t, 0, func(t *testing.T, srv *keyhivetest.Server, c *dnsCache) {
		ctx := context.Background()
		key := dnsKey("hits.example.com.", 1)
		for range 5 {
			must(t, c.flushHits(ctx, map[string]int64{key: 1}, nil))
		}
		must(t, c.flushHits(ctx, map[string]int64{key: 3}, map[string]int64{key: 2}))
		srv.CheckGet(t, c.hitKey(key), "8")
		srv.CheckGet(t, c.sweepKey(key), "2")
		if ttl := srv.TTL(c.hitKey(key)); ttl != dnsHitWindow {
			t.Errorf("hit counter TTL %v", ttl)
		}

		srv.FastForward(4 * time.Minute)
		must(t, c.flushHits(ctx, map[string]int64{key: 1}, nil)) // renews the window
		srv.FastForward(4 * time.Minute)
		srv.CheckGet(t, c.hitKey(key), "9")
		srv.FastForward(time.Minute)
		if srv.Exists(c.hitKey(key)) {
			t.Error("the hit counter outlived its window")
		}
		srv.FastForward(time.Minute) // 10 min since the sweep hits
		if srv.Exists(c.sweepKey(key)) {
			t.Error("the sweep-hit counter outlived its window")
		}
		must(t, c.flushHits(ctx, map[string]int64{key: 1}, nil))
		srv.CheckGet(t, c.hitKey(key), "1")
	})
}

// TestDNSCacheRefreshLock checks that a refresh waits for a lock another
// resolver holds (SET NX EX 10) and takes it once its TTL passes.
func TestDNSCacheRefreshLock(t *testing.T) {
	dnsCacheTest(t, 0, func(t *testing.T, srv *keyhivetest.Server, c *dnsCache) {
		ctx := context.Background()
		key := dnsKey("locked.example.com.", 1)
		msg := dnsMessage(rand.New(rand.NewPCG(2, 0)), 3)
		must(t, c.rdb.SetNX(ctx, c.lockKey(key), "1", dnsLockTTL).Err())
		if ok, err := c.refresh(ctx, key, msg, 60, srv.Now().Unix()); err != nil || ok {
			t.Fatalf("refresh under another's lock: %v %v", ok, err)
		}
		if srv.Exists(key) {
			t.Error("refreshed without the lock")
		}
		srv.FastForward(dnsLockTTL)
		if ok, err := c.refresh(ctx, key, msg, 60, srv.Now().Unix()); err != nil || !ok {
			t.Fatalf("refresh after the lock's TTL: %v %v", ok, err)
		}
		if !srv.Exists(key) || srv.Exists(c.lockKey(key)) {
			t.Error("the refresh did not write the entry and release its lock")
		}
	})
}

// TestDNSCacheSweep runs the sweeper over entries past soft expiry: index
// members whose key Redis expired are reconciled away, an entry with enough
// sweep hits is refreshed, a cold one deleted, a young one kept.
func TestDNSCacheSweep(t *testing.T) {
	dnsCacheTest(t, 0, func(t *testing.T, srv *keyhivetest.Server, c *dnsCache) {
		ctx := context.Background()
		msg := dnsMessage(rand.New(rand.NewPCG(3, 0)), 4)
		name := func(s string) string { return dnsKey(s+".example.com.", 1) }
		expired, hot, cold, young := name("expired"), name("hot"), name("cold"), name("young")
		must(t, c.set(ctx, expired, msg, 1, srv.Now().Unix()))
		must(t, c.set(ctx, hot, msg, 40, srv.Now().Unix()))
		must(t, c.set(ctx, cold, msg, 40, srv.Now().Unix()))
		for _, stale := range []string{"stale-a", "stale-b"} { // keys that never existed
			must(t, c.rdb.ZAdd(ctx, c.index(), redis.Z{Score: float64(srv.Now().Unix()), Member: name(stale)}).Err())
		}
		srv.FastForward(41 * time.Second)
		must(t, c.set(ctx, young, msg, 5, srv.Now().Unix()))
		must(t, c.flushHits(ctx, nil, map[string]int64{hot: dnsMinSweepHits}))
		srv.FastForward(6 * time.Second)

		now := srv.Now().Unix()
		must(t, c.sweep(ctx, now, 100))
		index := c.rdb.ZRangeWithScores(ctx, c.index(), 0, -1).Val()
		want := []redis.Z{{Score: float64(now - 1), Member: young}, {Score: float64(now + 300), Member: hot}}
		if len(index) != 2 || index[0] != want[0] || index[1] != want[1] {
			t.Errorf("index after the sweep %v, want %v", index, want)
		}
		if !srv.Exists(hot) || srv.Exists(cold) || !srv.Exists(young) {
			t.Errorf("after the sweep: hot %v, cold %v, young %v", srv.Exists(hot), srv.Exists(cold), srv.Exists(young))
		}
		if v, _ := srv.HGet(hot, "soft_expiry"); v != strconv.FormatInt(now+300, 10) {
			t.Errorf("refreshed soft_expiry %s, want %d", v, now+300)
		}
	})
}

// TestDNSCacheCap checks the max-keys cap: over it, entries are evicted
// lowest hit count first, then oldest; at or under it, and with no cap,
// nothing is.
func TestDNSCacheCap(t *testing.T) {
	dnsCacheTest(t, 3, func(t *testing.T, srv *keyhivetest.Server, c *dnsCache) {
		ctx := context.Background()
		msg := dnsMessage(rand.New(rand.NewPCG(4, 0)), 5)
		var keys []string
		for _, n := range []string{"a", "b", "c", "d", "e"} {
			key := dnsKey(n+".example.com.", 1)
			keys = append(keys, key)
			must(t, c.set(ctx, key, msg, 600, srv.Now().Unix()))
			srv.FastForward(time.Second) // a is the oldest
			if len(keys) == 3 {
				must(t, c.enforceCap(ctx))
				if got := entries(srv); got != 3 {
					t.Fatalf("at the cap: %d keys", got)
				}
			}
		}
		noCap := newDNSCache(c.rdb, c.meta, 0)
		must(t, noCap.enforceCap(ctx))
		if got := entries(srv); got != 5 {
			t.Fatalf("with no cap: %d keys", got)
		}

		must(t, c.flushHits(ctx, map[string]int64{keys[1]: 1, keys[2]: 2}, nil))
		must(t, c.enforceCap(ctx))
		for i, key := range keys {
			if kept := i == 1 || i == 2 || i == 4; srv.Exists(key) != kept {
				t.Errorf("%s: exists %v, want %v (evict lowest hits, then oldest)", key, !kept, kept)
			}
		}
		if n := c.rdb.ZCard(ctx, c.index()).Val(); n != 3 {
			t.Errorf("index holds %d entries after eviction", n)
		}

		must(t, c.clear(ctx, nil))
		if keys := srv.Keys(); len(keys) != 0 {
			t.Errorf("after clear: %q", keys)
		}
	})
}
