package workloads

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// DNS is seed 000, the resolver cache of beyond-ads-dns: hashes holding a
// binary wire-format message, an expiry-index sorted set, SET NX EX refresh
// locks, batched INCRBY + EXPIRE hit counters, a sweeper and a max-keys cap,
// under both the standalone "dnsmeta:" and the cluster "{dnsmeta}:" prefix.
var DNS = Workload{
	Name:     "dns",
	Seed:     "000",
	Scenario: dnsScenario,
	Prepare:  func(ctx context.Context, rdb *redis.Client) error { return dnsPrepare(ctx, rdb) },
	Op: func(ctx context.Context, rdb *redis.Client, rng *rand.Rand) error {
		return dnsRequest(ctx, rdb, rng)
	},
	Background: func(ctx context.Context, rdb *redis.Client) {
		c := newDNSCache(rdb, dnsMetaCluster, dnsBenchNames)
		for ctx.Err() == nil {
			c.sweep(ctx, time.Now().Unix(), 100)
			time.Sleep(50 * time.Millisecond)
		}
	},
}

const dnsBenchNames = 10000

// dnsPrepare caches the benchmark's names under the cluster prefix.
func dnsPrepare(ctx context.Context, rdb redis.Cmdable) error {
	c := newDNSCache(rdb, dnsMetaCluster, 0)
	rng := rand.New(rand.NewPCG(0, 0))
	now := time.Now().Unix()
	for i := range dnsBenchNames {
		if err := c.set(ctx, dnsKey(dnsName(i), 1), dnsMessage(rng, i), 30+int64(rng.IntN(3600)), now); err != nil {
			return err
		}
	}
	return nil
}

// dnsRequest is one resolver request of the benchmark mix: 95% reads, 5%
// writes, and the flush of a batch of hits every 16 requests.
func dnsRequest(ctx context.Context, rdb redis.Cmdable, rng *rand.Rand) error {
	c := newDNSCache(rdb, dnsMetaCluster, 0)
	key := dnsKey(dnsName(rng.IntN(dnsBenchNames)), 1)
	now := time.Now().Unix()
	if rng.IntN(100) < 5 {
		return c.set(ctx, key, dnsMessage(rng, rng.IntN(1000)), 30+int64(rng.IntN(3600)), now)
	}
	e, err := c.get(ctx, key, now)
	if err != nil || e == nil {
		return err
	}
	// The hit batcher flushes every 16 hits per client; one in 16
	// requests pays for the flush of the batch.
	if rng.IntN(16) == 0 {
		hits := map[string]int64{key: 16}
		return c.flushHits(ctx, hits, nil)
	}
	return nil
}

const (
	dnsMetaStandalone = "dnsmeta:"
	dnsMetaCluster    = "{dnsmeta}:" // one slot for every metadata key
	dnsMaxGrace       = 3600
	dnsLockTTL        = 10 * time.Second
	dnsHitWindow      = 5 * time.Minute
	dnsSweepHitWindow = 10 * time.Minute
	dnsMinSweepHits   = 2  // sweep hits that earn an entry a refresh
	dnsMinAge         = 30 // seconds: younger entries are "warm", never swept
)

// dnsCache is the resolver's Redis layer (internal/cache/redis.go).
type dnsCache struct {
	rdb     redis.Cmdable // a *redis.Client, or a *redis.ClusterClient in cluster mode
	meta    string        // metadata prefix
	maxKeys int           // 0: no cap
}

func newDNSCache(rdb redis.Cmdable, meta string, maxKeys int) *dnsCache {
	return &dnsCache{rdb: rdb, meta: meta, maxKeys: maxKeys}
}

func dnsName(i int) string { return fmt.Sprintf("host%d.example%d.com.", i, i%7) }

// dnsKey is the resolver's cacheKey: dns:<qname>:<qtype>:<qclass>.
func dnsKey(qname string, qtype int) string { return fmt.Sprintf("dns:%s:%d:1", qname, qtype) }

func (c *dnsCache) index() string             { return c.meta + "expiry:index" }
func (c *dnsCache) lockKey(key string) string { return c.meta + "refresh:" + key }
func (c *dnsCache) hitKey(key string) string  { return c.meta + "hit:" + key }
func (c *dnsCache) sweepKey(key string) string {
	return c.meta + "hit:sweep:" + key
}

// dnsMessage packs a DNS response in wire format: header, question and one
// answer whose rdata is random bytes (any byte value, NULs included).
func dnsMessage(rng *rand.Rand, id int) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(id))
	b = append(b, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0) // response, 1 question, 1 answer
	b = append(b, 4, 'h', 'o', 's', 't', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0, 0, 1, 0, 1)
	b = append(b, 0xc0, 0x0c, 0, 1, 0, 1)
	b = binary.BigEndian.AppendUint32(b, uint32(rng.IntN(86400)))
	rdata := make([]byte, 4+rng.IntN(64))
	for i := range rdata {
		rdata[i] = byte(rng.IntN(256))
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(rdata)))
	return append(b, rdata...)
}

// set is SetWithIndex: the hash, its expiry-index entry and the Redis TTL
// (ttl plus a grace period) in one pipeline.
func (c *dnsCache) set(ctx context.Context, key string, msg []byte, ttl, now int64) error {
	grace := min(ttl, dnsMaxGrace)
	soft := now + ttl
	_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, key, "msg", msg, "soft_expiry", soft, "created_at", now)
		p.ZAdd(ctx, c.index(), redis.Z{Score: float64(soft), Member: key})
		p.Expire(ctx, key, time.Duration(ttl+grace)*time.Second)
		return nil
	})
	return err
}

type dnsEntry struct {
	msg        []byte
	softExpiry int64
}

// get reads an entry; a legacy string entry (raw message) is read with GET
// after the hash read fails with WRONGTYPE and migrated to the hash form.
func (c *dnsCache) get(ctx context.Context, key string, now int64) (*dnsEntry, error) {
	var msg, soft *redis.StringCmd
	_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		msg = p.HGet(ctx, key, "msg")
		soft = p.HGet(ctx, key, "soft_expiry")
		return nil
	})
	switch {
	case errors.Is(err, redis.Nil):
		return nil, nil
	case err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE"):
		return c.getLegacy(ctx, key, now)
	case err != nil:
		return nil, err
	}
	b, _ := msg.Bytes()
	s, err := soft.Int64()
	if err != nil {
		return nil, err
	}
	return &dnsEntry{msg: b, softExpiry: s}, nil
}

func (c *dnsCache) getLegacy(ctx context.Context, key string, now int64) (*dnsEntry, error) {
	b, err := c.rdb.Get(ctx, key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ttl, err := c.rdb.TTL(ctx, key).Result()
	if err != nil {
		return nil, err
	}
	if err := c.rdb.Del(ctx, key).Err(); err != nil {
		return nil, err
	}
	// Half the remaining TTL, to the minute (a TTL read is itself a moment late).
	secs := max(int64(ttl.Round(time.Minute)/time.Second)/2, 1)
	return &dnsEntry{msg: b, softExpiry: now + secs}, c.set(ctx, key, b, secs, now)
}

// flushHits is the hit batcher's flush: INCRBY + EXPIRE per counter, for
// window hits and sweep hits, in one pipeline.
func (c *dnsCache) flushHits(ctx context.Context, hits, sweepHits map[string]int64) error {
	_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, key := range sortedKeys(hits) {
			p.IncrBy(ctx, c.hitKey(key), hits[key])
			p.Expire(ctx, c.hitKey(key), dnsHitWindow)
		}
		for _, key := range sortedKeys(sweepHits) {
			p.IncrBy(ctx, c.sweepKey(key), sweepHits[key])
			p.Expire(ctx, c.sweepKey(key), dnsSweepHitWindow)
		}
		return nil
	})
	return err
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// refresh takes the refresh lock, rewrites the entry and releases the lock;
// it reports whether it held the lock.
func (c *dnsCache) refresh(ctx context.Context, key string, msg []byte, ttl, now int64) (bool, error) {
	ok, err := c.rdb.SetNX(ctx, c.lockKey(key), "1", dnsLockTTL).Result()
	if err != nil || !ok {
		return false, err
	}
	if err := c.set(ctx, key, msg, ttl, now); err != nil {
		return true, err
	}
	return true, c.rdb.Del(ctx, c.lockKey(key)).Err()
}

// remove deletes an entry and its index member.
func (c *dnsCache) remove(ctx context.Context, key string) error {
	_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, key)
		p.ZRem(ctx, c.index(), key)
		return nil
	})
	return err
}

// sweep processes up to batch entries past soft expiry: index members whose
// key expired are reconciled away, entries with enough sweep hits are
// refreshed, cold old ones deleted; then the max-keys cap is applied.
func (c *dnsCache) sweep(ctx context.Context, now int64, batch int64) error {
	cands, err := c.rdb.ZRangeByScore(ctx, c.index(), &redis.ZRangeBy{Min: "-inf", Max: strconv.FormatInt(now, 10), Count: batch}).Result()
	if err != nil || len(cands) == 0 {
		return err
	}
	var sweepHits, created []*redis.StringCmd
	if _, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, key := range cands {
			sweepHits = append(sweepHits, p.Get(ctx, c.sweepKey(key)))
			created = append(created, p.HGet(ctx, key, "created_at"))
		}
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	for i, key := range cands {
		createdAt, err := created[i].Int64()
		if errors.Is(err, redis.Nil) {
			if err := c.rdb.ZRem(ctx, c.index(), key).Err(); err != nil { // expired by Redis TTL
				return err
			}
			continue
		}
		if now-createdAt < dnsMinAge {
			continue
		}
		if hits, _ := sweepHits[i].Int64(); hits >= dnsMinSweepHits {
			msg, err := c.rdb.HGet(ctx, key, "msg").Bytes()
			if err != nil {
				return err
			}
			if _, err := c.refresh(ctx, key, msg, 300, now); err != nil {
				return err
			}
			continue
		}
		if err := c.remove(ctx, key); err != nil {
			return err
		}
	}
	return c.enforceCap(ctx)
}

// enforceCap evicts entries over maxKeys, lowest hit count first, then
// oldest created_at. The count comes from the expiry index.
func (c *dnsCache) enforceCap(ctx context.Context) error {
	if c.maxKeys == 0 {
		return nil
	}
	keys, err := c.rdb.ZRange(ctx, c.index(), 0, -1).Result()
	if err != nil || len(keys) <= c.maxKeys {
		return err
	}
	var hits, created []*redis.StringCmd
	if _, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, key := range keys {
			hits = append(hits, p.Get(ctx, c.hitKey(key)))
			created = append(created, p.HGet(ctx, key, "created_at"))
		}
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	type ranked struct {
		key            string
		hits, creation int64
	}
	rank := make([]ranked, len(keys))
	for i, key := range keys {
		h, _ := hits[i].Int64()
		t, _ := created[i].Int64()
		rank[i] = ranked{key, h, t}
	}
	slices.SortStableFunc(rank, func(a, b ranked) int {
		if a.hits != b.hits {
			return int(a.hits - b.hits)
		}
		return int(a.creation - b.creation)
	})
	for _, r := range rank[:len(keys)-c.maxKeys] {
		if err := c.remove(ctx, r.key); err != nil {
			return err
		}
	}
	return nil
}

// clear is the control API's "clear cache": SCAN + DEL of both prefixes.
func (c *dnsCache) clear(ctx context.Context, env *Env) error {
	for _, pattern := range []string{"dns:*", c.meta + "*"} {
		keys, err := scanAll(ctx, env, c.rdb, pattern, 100)
		if err != nil {
			return err
		}
		if err := deleteKeys(ctx, c.rdb, keys); err != nil {
			return err
		}
	}
	return nil
}

// deleteKeys deletes keys with DELs of 50 keys; a cluster client sends one
// DEL per key instead, in one pipeline, since keys of different slots may
// not share a DEL (CROSSSLOT).
func deleteKeys(ctx context.Context, rdb redis.Cmdable, keys []string) error {
	if _, ok := rdb.(*redis.ClusterClient); ok {
		_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, key := range keys {
				p.Del(ctx, key)
			}
			return nil
		})
		return err
	}
	for batch := range slices.Chunk(keys, 50) {
		if err := rdb.Del(ctx, batch...).Err(); err != nil {
			return err
		}
	}
	return nil
}

// dnsScenario runs the resolver under both key prefixes on one server.
func dnsScenario(ctx context.Context, env *Env) error {
	return runDNSScenario(ctx, env, env.Client("resolver"), dnsMetaStandalone, dnsMetaCluster)
}

// DNSClusterScenario is seed 000's scenario in cluster mode: the resolver
// on go-redis's cluster client (env on a node of a Redis Cluster) with the
// cluster prefix "{dnsmeta}:" only, so every metadata key is on one slot
// and the cache entries spread over the cluster.
func DNSClusterScenario(ctx context.Context, env *Env) error {
	return runDNSScenario(ctx, env, env.ClusterClient("resolver"), dnsMetaCluster)
}

// runDNSScenario runs the resolver through rdb with a cache per metadata
// prefix: legacy string entries migrated on read, reads and writes over a
// logical clock with batched hit counters, entries whose Redis TTL really
// passes, sweeps with reconciliation and the cap, a count by SCAN and a
// clear of the last prefix's cache.
func runDNSScenario(ctx context.Context, env *Env, rdb redis.Cmdable, metas ...string) error {
	rng := rand.New(rand.NewPCG(0, 0))
	now := int64(1704067200)
	var caches []*dnsCache
	for _, meta := range metas {
		caches = append(caches, newDNSCache(rdb, meta, 25))
	}
	// Each prefix caches its own names.
	name := func(c *dnsCache, i int) string {
		if c.meta == dnsMetaCluster {
			i += 1000
		}
		return dnsKey(dnsName(i), []int{1, 28, 5}[i%3])
	}

	for _, c := range caches {
		for i := range 3 { // legacy entries: raw message strings
			if err := rdb.Set(ctx, name(c, i), dnsMessage(rng, i), time.Hour).Err(); err != nil {
				return err
			}
		}
		for i := 40; i < 44; i++ { // entries whose Redis TTL (1s + 1s grace) passes below
			if err := c.set(ctx, name(c, i), dnsMessage(rng, i), 1, now); err != nil {
				return err
			}
		}
	}
	time.Sleep(2100 * time.Millisecond)

	for step := range 400 {
		c := caches[step%len(caches)]
		hits, sweepHits := map[string]int64{}, map[string]int64{}
		for range 5 {
			key := name(c, rng.IntN(45))
			e, err := c.get(ctx, key, now)
			if err != nil {
				return err
			}
			switch {
			case e == nil:
				if err := c.set(ctx, key, dnsMessage(rng, step), 10+int64(rng.IntN(120)), now); err != nil {
					return err
				}
			case e.softExpiry < now:
				sweepHits[key]++
			default:
				hits[key]++
			}
		}
		if err := c.flushHits(ctx, hits, sweepHits); err != nil {
			return err
		}
		if rng.IntN(10) == 0 { // a background refresh, sometimes losing the lock to another
			key := name(c, rng.IntN(45))
			if rng.IntN(2) == 0 {
				if err := rdb.SetNX(ctx, c.lockKey(key), "1", dnsLockTTL).Err(); err != nil {
					return err
				}
			}
			if _, err := c.refresh(ctx, key, dnsMessage(rng, step), 60, now); err != nil {
				return err
			}
		}
		if step%40 == 39 {
			if err := c.sweep(ctx, now, 20); err != nil {
				return err
			}
		}
		now += int64(rng.IntN(6))
	}
	for _, c := range caches {
		if err := c.sweep(ctx, now+1000, 100); err != nil {
			return err
		}
	}
	if _, err := scanAll(ctx, env, rdb, "dns:*", 10); err != nil {
		return err
	}
	return caches[len(caches)-1].clear(ctx, env)
}
