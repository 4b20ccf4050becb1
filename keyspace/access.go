package keyspace

import "math/rand/v2"

// Every entry stores a 24-bit access clock. Under an LRU (or no) maxmemory
// policy it is the LRU clock in seconds; under an LFU policy it is, as in Redis,
// the time of the last decrement in minutes (16 bits) and a logarithmic access
// counter (8 bits) that new keys start at lfuInitVal.
const lfuInitVal = 5

// lfuParams are Redis's lfu-log-factor and lfu-decay-time.
type lfuParams struct{ logFactor, decayTime int }

// SetLFU switches the access clock of keys touched or created from now on
// between LRU (enabled false) and LFU with the given lfu-log-factor and
// lfu-decay-time (minutes). The server calls it when maxmemory-policy or the
// LFU settings change. Existing keys keep their bits, which are reinterpreted,
// as Redis does when the policy changes at run time.
func (ks *Keyspace) SetLFU(enabled bool, logFactor, decayTime int) {
	if !enabled {
		ks.lfu.Store(nil)
		return
	}
	ks.lfu.Store(&lfuParams{logFactor: logFactor, decayTime: decayTime})
}

func lfuMinutes(nowMs int64) uint32 { return uint32(nowMs/60000) & 0xffff }

// LFUCounter returns the counter of an LFU access clock after the decay due
// by now (one step per decayTime minutes), which is what OBJECT FREQ reports.
func LFUCounter(access uint32, nowMs int64, decayTime int) int64 {
	ldt, counter := access>>8, access&0xff
	if decayTime > 0 {
		now := lfuMinutes(nowMs)
		elapsed := now - ldt
		if now < ldt {
			elapsed = 0xffff - ldt + now // the minute clock wrapped
		}
		if periods := elapsed / uint32(decayTime); periods >= counter {
			counter = 0
		} else {
			counter -= periods
		}
	}
	return int64(counter)
}

// lfuIncr increments a counter with probability 1/((counter-init)*factor+1),
// so it grows logarithmically with the number of accesses.
func lfuIncr(counter int64, logFactor int) int64 {
	if counter == 255 {
		return counter
	}
	base := float64(max(counter-lfuInitVal, 0))
	if rand.Float64() < 1/(base*float64(logFactor)+1) {
		counter++
	}
	return counter
}

// newAccess is the access clock of a key (of that hash) created at now.
func (ks *Keyspace) newAccess(now int64, hash uint64) uint32 {
	if ks.lrfu.on.Load() {
		return ks.lrfu.newAccess(hash)
	}
	if ks.lfu.Load() != nil {
		return lfuMinutes(now)<<8 | lfuInitVal
	}
	return LRUClock(now)
}

// touchedAccess is the access clock of a key accessed at now.
func (ks *Keyspace) touchedAccess(old uint32, now int64) uint32 {
	if ks.lrfu.on.Load() {
		return ks.lrfu.touched(old)
	}
	if p := ks.lfu.Load(); p != nil {
		return lfuMinutes(now)<<8 | uint32(lfuIncr(LFUCounter(old, now, p.decayTime), p.logFactor))
	}
	return LRUClock(now)
}

// rewrittenAccess is the access clock of a key whose value is replaced: a new
// value gets a fresh LRU clock, while under LFU the key keeps its counter.
func (ks *Keyspace) rewrittenAccess(old uint32, now int64) uint32 {
	if ks.lrfu.on.Load() {
		return ks.lrfu.rewritten(old)
	}
	if ks.lfu.Load() != nil {
		return old
	}
	return LRUClock(now)
}
