package keyspace

import (
	"math"
	"sync/atomic"
)

// The LRFU policy (least recently and frequently used): a sampled key goes
// sooner the longer it has been idle and the fewer hits it had, by the score
// idle / (hits+1)^1.5, so a key read often survives a longer idle spell
// than one read once, and a key hot once gives way when it goes unread (the
// exponent was chosen by replaying traces, hitratio_test.go: at 1 the
// rarely read keys are kept too long under Zipf, at 2 the keys once hot
// are under shifting popularity; docs/eviction.md).
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

// newAccess is a new key's: no hits yet.
func (c *lrfuClock) newAccess() uint32 { return c.now() }

func (c *lrfuClock) touched(old uint32) uint32 {
	now := c.now()
	return min(lrfuHits(old, now)+1, lrfuMaxFreq)<<lrfuTickBits | now
}

// rewritten keeps the key's hits: a write is not a hit.
func (c *lrfuClock) rewritten(old uint32) uint32 {
	now := c.now()
	return lrfuHits(old, now)<<lrfuTickBits | now
}

// lrfuScore is how soon a key with that access clock goes.
func lrfuScore(access, now uint32) uint64 {
	return uint64(lrfuIdle(access, now)+1) << 24 / lrfuWeight[lrfuHits(access, now)]
}

// lrfuWeight[h] is 16 * (h+1)^1.5.
var lrfuWeight = func() (w [lrfuMaxFreq + 1]uint64) {
	for h := range w {
		w[h] = uint64(16 * math.Pow(float64(h+1), 1.5))
	}
	return w
}()

// advance counts one eviction out of keys.
func (c *lrfuClock) advance(keys int64) {
	if c.evicted.Add(1) >= max(keys/lrfuTicksTurn, 1) {
		c.evicted.Store(0)
		c.tick.Add(1)
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
