package keyspace

import (
	"math"
	"math/bits"
	"sync/atomic"
)

// The LRFU policy (least recently and frequently used): a sampled key goes
// sooner the longer it has been idle and the fewer hits it had, by the score
// idle / (hits+1)^e, so a key read often survives a longer idle spell
// than one read once, and a key hot once gives way when it goes unread. No
// fixed e suits every workload (replayed traces, hitratio_test.go: under
// Zipf a higher one keeps more hits, where keys are hot for a while and
// then dead a lower one; docs/eviction.md): the ghosts adapt it
// (lrfuGhosts).
//
// An entry's 24-bit access clock holds its hits (lrfuFreqBits, saturating)
// and the tick of its last access on a logical clock that advances with
// evictions, so its time is the cache's turnover (lrfuTicksTurn ticks),
// not the wall clock: a fast cache and a slow one age their keys alike. A
// key's hits halve for every lrfuAgingTicks it goes unread.
const (
	lrfuFreqBits   = 6
	lrfuTickBits   = 24 - lrfuFreqBits
	lrfuTickMask   = 1<<lrfuTickBits - 1
	lrfuMaxFreq    = 1<<lrfuFreqBits - 1
	lrfuTicksTurn  = 256 // ticks per turnover of the keys: the wrap is 1024 turnovers
	lrfuAgingTicks = 4 * lrfuTicksTurn
)

// lrfuClock is the logical clock: tick advances once per
// keys/lrfuTicksTurn evictions.
type lrfuClock struct {
	on      atomic.Bool
	tick    atomic.Uint32
	evicted atomic.Int64 // evictions since tick advanced
	ghosts  lrfuGhosts
}

// SetLRFU switches the access clocks of keys touched or created from now on
// to the LRFU policy's (on) or back to the LRU/LFU ones. Existing keys keep
// their bits, reinterpreted, as with SetLFU.
func (ks *Keyspace) SetLRFU(on bool) { ks.lrfu.on.Store(on) }

func (c *lrfuClock) now() uint32 { return c.tick.Load() & lrfuTickMask }

// lrfuIdle is how many ticks ago access was set.
func lrfuIdle(access, now uint32) uint32 { return (now - access) & lrfuTickMask }

// lrfuHits is access's hit counter after the aging due by now.
func lrfuHits(access, now uint32) uint32 {
	halvings := lrfuIdle(access, now) / lrfuAgingTicks
	return access >> lrfuTickBits >> min(halvings, lrfuFreqBits)
}

// newAccess is a new key's (hash its key's): no hits yet.
func (c *lrfuClock) newAccess(hash uint64) uint32 {
	c.ghosts.wanted(hash)
	return c.now()
}

func (c *lrfuClock) touched(old uint32) uint32 {
	now := c.now()
	return min(lrfuHits(old, now)+1, lrfuMaxFreq)<<lrfuTickBits | now
}

// rewritten keeps the key's hits: a write is not a hit.
func (c *lrfuClock) rewritten(old uint32) uint32 {
	now := c.now()
	return lrfuHits(old, now)<<lrfuTickBits | now
}

// lrfuScore is how soon a key with that access clock goes, hits weighing
// by weight (a row of lrfuWeights). Of keys scoring alike the one with
// fewer hits goes first: at the exponent 0 (LRU), keys last read in the
// same tick tie, and every key created or read before the first eviction
// is in tick 0, so that without it the first turnover's victims would be
// drawn at random, keys with hits among them.
func lrfuScore(access, now uint32, weight *[lrfuMaxFreq + 1]uint64) uint64 {
	hits := lrfuHits(access, now)
	return uint64(lrfuIdle(access, now)+1)<<24/weight[hits]<<lrfuFreqBits | uint64(lrfuMaxFreq-hits)
}

// lrfuWeights[b][h] is 16 * (h+1)^(b/4): the exponent on hits, from 0
// (LRU) to 2.5, is the one the ghosts adapt (lrfuGhosts). It starts at 0:
// a cache starting as LRU and learning the worth of hits lost less in
// replays than one starting at 1.5 (docs/eviction.md).
const lrfuExponents = 11

var lrfuWeights = func() (w [lrfuExponents][lrfuMaxFreq + 1]uint64) {
	for b := range w {
		for h := range w[b] {
			w[b][h] = uint64(16 * math.Pow(float64(h+1), float64(b)/4))
		}
	}
	return w
}()

// weight is the row of lrfuWeights in force.
func (c *lrfuClock) weight() *[lrfuMaxFreq + 1]uint64 {
	return &lrfuWeights[c.ghosts.exponent.Load()]
}

// advance counts the eviction of a key (its hash and access clock) out of
// keys.
func (c *lrfuClock) advance(keys int64, hash uint64, access uint32) {
	c.ghosts.evicted(hash, lrfuHits(access, c.now()), keys)
	if c.evicted.Add(1) >= max(keys/lrfuTicksTurn, 1) {
		c.evicted.Store(0)
		c.tick.Add(1)
	}
}

// lrfuGhosts adapts the exponent on hits, as ARC adapts its split between
// keys seen once and keys seen again: it remembers a sample of the evicted
// keys (their hash's fingerprint, and whether they had hits) and counts
// which of them come back soon: are missed by a lookup, or created again.
// When victims without hits come back 4 times as often as victims with
// hits, new keys are evicted too soon and the exponent goes down (towards
// LRU); when less often than those, up (towards LFU).
// The sample is the keys whose hash has its low bits zero, as many as
// keys/ghostSlots, so that the slots remember about one turnover of
// evictions, and a key not in the sample costs its creation or its miss
// one test.
type lrfuGhosts struct {
	slots    [ghostSlots]atomic.Uint32 // fingerprint | hit bit; 0 empty
	sample   atomic.Uint64             // mask of the hash bits that are zero in the sample
	exponent atomic.Int32              // row of lrfuWeights in force
	// victims[c] and back[c], c 1 with hits: sampled evictions and
	// returns, halved every ghostRound sampled evictions.
	victims, back [2]atomic.Int64
	round         atomic.Int64
}

const (
	ghostSlots = 4096
	ghostRound = 128
)

func ghostSlot(hash uint64) uint64 { return hash >> 20 % ghostSlots }

func ghostPrint(hash uint64) uint32 { return uint32(hash>>32) | 2 }

func (g *lrfuGhosts) evicted(hash uint64, hits uint32, keys int64) {
	if hash&g.sample.Load() != 0 {
		return
	}
	class := min(hits, 1)
	g.slots[ghostSlot(hash)].Store(ghostPrint(hash)&^1 | class)
	g.victims[class].Add(1)
	if g.round.Add(1)%ghostRound != 0 {
		return
	}
	// Compare the rates at which each class's victims came back. Down
	// takes 4 times the rate: under a skewed popularity (Zipf) victims
	// without hits come back more often at every exponent, and a higher
	// one still keeps more hits.
	v0, v1, b0, b1 := g.victims[0].Load()+1, g.victims[1].Load()+1, g.back[0].Load(), g.back[1].Load()
	e := g.exponent.Load()
	switch {
	case b0*v1 > 4*b1*v0 && e > 0:
		g.exponent.Add(-1)
	case b0*v1 < b1*v0 && e < lrfuExponents-1:
		g.exponent.Add(1)
	}
	for i := range 2 {
		g.victims[i].Store(g.victims[i].Load() / 2)
		g.back[i].Store(g.back[i].Load() / 2)
	}
	g.sample.Store(uint64(1)<<bits.Len64(uint64(keys/ghostSlots)) - 1)
}

// wanted notes a key (of that hash) missed by a lookup or created: one
// evicted lately has come back. In a cache the miss is the event that
// matters, whether or not the key is then written again; a miss followed by
// the key's creation counts once, the ghost being cleared.
func (g *lrfuGhosts) wanted(hash uint64) {
	if hash&g.sample.Load() != 0 {
		return
	}
	slot := &g.slots[ghostSlot(hash)]
	if v := slot.Load(); v != 0 && v&^1 == ghostPrint(hash)&^1 && slot.CompareAndSwap(v, 0) {
		g.back[v&1].Add(1)
	}
}

// keys is the number of keys in all databases.
func (ks *Keyspace) keys() int64 {
	var n int64
	for i := range ks.dbs {
		n += ks.DB(i).Len()
	}
	return n
}

// LRFUHits is e's hit counter under the LRFU policy after its aging, which
// OBJECT FREQ reports under that policy.
func (db *DB) LRFUHits(e *Entry) int64 {
	return int64(lrfuHits(e.Access(), db.ks.lrfu.now()))
}
