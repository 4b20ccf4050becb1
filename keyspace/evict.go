package keyspace

import (
	"bytes"
	"math/rand/v2"
)

// Eviction as Redis approximates it: sample a few keys of each database,
// keep the best candidates seen so far in a small pool that lives across
// calls, and remove the best one. The random policies skip the pool.

// EvictPolicy is how keys are chosen for eviction (maxmemory-policy without
// its allkeys-/volatile- scope).
type EvictPolicy uint8

// Eviction policies.
const (
	EvictNone   EvictPolicy = iota // noeviction
	EvictLRU                       // the longest idle first
	EvictLFU                       // the least frequently used first
	EvictRandom                    // any
	EvictTTL                       // the nearest expire time first
	EvictLRFU                      // by idle time and hits (lrfu.go)
)

const (
	poolSize   = 16  // candidates kept, as Redis's EVPOOL_SIZE
	poolKeyCap = 255 // pool key buffers up to this size are reused
)

type candidate struct {
	score uint64 // the higher, the sooner evicted
	db    int
	key   []byte
}

// Evictor is the state eviction keeps between calls: the candidate pool
// (ascending by score, the best last) and the database the random policies
// take from next. It is not safe for concurrent use.
type Evictor struct {
	pool    [poolSize]candidate
	n       int
	nextDB  int
	picked  []uint64 // a shard's sampled entry refs
	touched byte     // keeps the loads that pull sampled entries into cache
	// protect is the schema whose protected namespaces this eviction
	// skips (nil: none is protected).
	protect Schema
}

// spares reports whether eviction must pass over the encoded entry e: its
// key is blessed (BLESS SET NO-EVICT) or in a protected namespace (none for
// a nil ev: a namespace's own quota eviction).
func (ev *Evictor) spares(e []byte) bool {
	return e[1]&flagBlessed != 0 || ev != nil && ev.protect != nil && ev.protect.Protects(entryKey(e))
}

// EvictOne removes one key chosen by policy among all databases (among keys
// with a TTL when volatile), sampling samples keys per database. onEvict runs
// under the key's lock just after the key went. It returns the bytes the
// entry and its index slot held, and false when no key qualifies.
func (ks *Keyspace) EvictOne(ev *Evictor, policy EvictPolicy, volatile bool, samples int, now int64, decayTime int, onEvict func(db int, key []byte)) (int64, bool) {
	ks.all.RLock()
	defer ks.all.RUnlock()
	ev.protect = ks.reportTo()
	if ev.protect != nil && !ev.protect.AnyProtected() {
		ev.protect = nil
	}
	if policy == EvictRandom {
		for i := range ks.dbs {
			db := ks.DB((ev.nextDB + i) % len(ks.dbs))
			if db.candidates(volatile) == 0 {
				continue
			}
			ev.nextDB = db.id + 1
			if freed, ok := db.evictRandom(ev, volatile, onEvict); ok {
				return freed, true
			}
		}
		return 0, false
	}
	// Every key the pool held may be gone by now: sample again a few times.
	for range 4 {
		found := false
		for i := range ks.dbs {
			if db := ks.DB(i); db.candidates(volatile) > 0 {
				found = true
				db.sample(ev, policy, volatile, samples, now, decayTime)
			}
		}
		if !found {
			return 0, false
		}
		for ev.n > 0 {
			ev.n--
			c := &ev.pool[ev.n]
			// A pooled key may have been blessed since it was sampled.
			if freed, hash, access, found, spared := ks.DB(c.db).evictKey(ev, c.key, onEvict); found && !spared {
				if policy == EvictLRFU {
					ks.lrfu.advance(ks.keys(), hash, access)
				}
				return freed, true
			}
		}
	}
	return 0, false
}

// candidates returns how many keys a policy of that scope may evict (at
// most: some of the volatile ones may be spared).
func (db *DB) candidates(volatile bool) int64 {
	if volatile {
		return db.Volatile()
	}
	return db.Len() - db.Blessed()
}

// score is how soon the entry e (its encoded bytes) should go; an LRU, LFU
// or LRFU score reads only the header's access clock (lrfuNow: the LRFU
// clock's tick, lrfuWeight: its weights of hits).
func score(e []byte, policy EvictPolicy, now int64, decayTime int, lrfuNow uint32, lrfuWeight *[lrfuMaxFreq + 1]uint64) uint64 {
	access := getAccess(e)
	switch policy {
	case EvictLFU:
		return 255 - uint64(LFUCounter(access, now, decayTime))
	case EvictTTL:
		return ^uint64(0) - uint64(decode(e).expire)
	case EvictLRFU:
		return lrfuScore(access, lrfuNow, lrfuWeight)
	}
	return uint64(idleSeconds(access, now))
}

// idleSeconds is how long ago an LRU access clock was set, allowing for the
// 24-bit clock's wrap (194 days).
func idleSeconds(access uint32, now int64) uint32 {
	return (LRUClock(now) - access) & (1<<24 - 1)
}

// rejects reports whether a candidate of that score would not enter the pool:
// it is full and the candidate is no better than its worst.
func (ev *Evictor) rejects(score uint64) bool {
	return ev.n == poolSize && score <= ev.pool[0].score
}

// insert adds a sampled key to the pool if it beats the worst one there.
func (ev *Evictor) insert(score uint64, db int, key []byte) {
	for i := range ev.n {
		if c := &ev.pool[i]; c.db == db && bytes.Equal(c.key, key) {
			return // sampled again: keep the place it has
		}
	}
	k := 0
	for k < ev.n && ev.pool[k].score < score {
		k++
	}
	switch {
	case k == 0 && ev.n == poolSize:
		return // worse than everything in a full pool
	case ev.n < poolSize:
		// Shift the better candidates right; the spare buffer at n comes along.
		spare := ev.pool[ev.n].key
		copy(ev.pool[k+1:ev.n+1], ev.pool[k:ev.n])
		ev.pool[k].key = spare
		ev.n++
	default:
		// Full: drop the worst, shifting the worse ones left.
		k--
		spare := ev.pool[0].key
		copy(ev.pool[:k], ev.pool[1:k+1])
		ev.pool[k].key = spare
	}
	c := &ev.pool[k]
	c.score, c.db = score, db
	if cap(c.key) > poolKeyCap {
		c.key = nil // let a huge key's buffer go
	}
	c.key = append(c.key[:0], key...)
}

// sample puts up to n keys (only keys with a TTL when volatile) into the
// pool, read in index order from a random place as Redis's dictGetSomeKeys
// does, locking one shard at a time. Every sampled entry is a cache (and
// often TLB) miss: a shard's picks are all touched first, so that the misses
// overlap instead of coming one after the other.
func (db *DB) sample(ev *Evictor, policy EvictPolicy, volatile bool, n int, now int64, decayTime int) {
	got := 0
	lrfuNow, lrfuWeight := db.ks.lrfu.now(), db.ks.lrfu.weight()
	start := rand.IntN(Shards)
	for i := 0; i < Shards && got < n; i++ {
		sh := db.lockShard((start + i) % Shards)
		picked := ev.picked[:0]
		for k := range sh.candidates(volatile) {
			if got+len(picked) == n {
				break
			}
			picked = append(picked, sh.slots[k]&refMask)
		}
		var touched byte
		for _, ref := range picked {
			touched += sh.arena.entry(ref)[1]
		}
		ev.touched += touched
		for _, ref := range picked {
			e := sh.arena.entry(ref)
			if volatile && e[1]&flagExpire == 0 {
				continue
			}
			if ev.spares(e) {
				continue
			}
			got++
			if sc := score(e, policy, now, decayTime, lrfuNow, lrfuWeight); !ev.rejects(sc) {
				ev.insert(sc, db.id, entryKey(e))
			}
		}
		ev.picked = picked
		db.unlockShard(sh)
	}
}

// candidates yields the occupied index slots from a random place, or none
// when the shard has no key a policy of that scope may evict.
func (sh *shard) candidates(volatile bool) func(yield func(int) bool) {
	return func(yield func(int) bool) {
		if sh.count == 0 || (volatile && sh.volatile == 0) {
			return
		}
		m := len(sh.slots) - 1
		from := rand.IntN(len(sh.slots))
		for j := 0; j <= m; j++ {
			if k := (from + j) & m; sh.slots[k] != 0 && !yield(k) {
				return
			}
		}
	}
}

// evictRandom removes a random key (with a TTL when volatile) that ev does
// not spare.
func (db *DB) evictRandom(ev *Evictor, volatile bool, onEvict func(db int, key []byte)) (int64, bool) {
	start := rand.IntN(Shards)
	for i := 0; i < Shards; i++ {
		sh := db.lockShard((start + i) % Shards)
		for k := range sh.candidates(volatile) {
			if e := entryAt(sh, k); (!volatile || e.h.expire != 0) && !ev.spares(sh.arena.entry(e.ref)) {
				freed := db.evict(&e, onEvict)
				db.unlockShard(sh)
				return freed, true
			}
		}
		db.unlockShard(sh)
	}
	return 0, false
}

// evictKey removes key if it is still there and ev does not spare it, and
// returns the key's hash and the access clock it had.
func (db *DB) evictKey(ev *Evictor, key []byte, onEvict func(db int, key []byte)) (freed int64, hash uint64, access uint32, found, spared bool) {
	sh := db.lockShard(ShardOf(key))
	defer db.unlockShard(sh)
	hash = db.hash(key)
	i := sh.find(key, hash)
	if i < 0 {
		return 0, hash, 0, false, false
	}
	e := entryAt(sh, i)
	ent := sh.arena.entry(e.ref)
	if ev.spares(ent) {
		return 0, hash, 0, true, true
	}
	access = getAccess(ent)
	return db.evict(&e, onEvict), hash, access, true, false
}

func (db *DB) evict(e *Entry, onEvict func(db int, key []byte)) int64 {
	freed, key := EntryBytes(e), e.h.key
	db.DeleteEntry(e)
	onEvict(db.id, key) // the dead entry's bytes stay until the shard unlocks
	return freed
}

// EntryBytes is the memory an entry holds in the keyspace: its bytes in the
// arena and its index slot (not a large collection's elements).
func EntryBytes(e *Entry) int64 { return int64(e.h.size) + 8 }
