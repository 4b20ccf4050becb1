package keyspace

import (
	"runtime"
	"time"
)

// A Snapshot is a point-in-time view of every database, saved while writes
// continue (BGSAVE, BGREWRITEAOF; Go cannot fork). The saver walks the
// shards in order, each under its lock. Until it has saved a shard (the
// shard is pending), a key of that shard is copied before it changes, once:
// its record, encoded as the saver would encode it, goes to the shard's
// early records and the entry is marked saved (flagSaved), as is every key
// created after the instant. The saver writes a shard's early records and
// its unmarked keys, and clears the marks. So every key is saved as it was
// at the instant; the extra memory is the records of the keys changed
// ahead of the saver, and a writer pays for its own key only.
type Snapshot struct {
	ks     *Keyspace
	encode func(b []byte, e *Entry) []byte
	// shards are each database's shards at the instant, nil for a database
	// that was empty. A database flushed since has new ones: flushed tells
	// the saver to release these as it saves them.
	shards  []*[Shards]shard
	flushed []bool
	// Keys and Expires are the databases' sizes when the snapshot began.
	Keys, Expires []int64
	// KeyDelay is a pause per key saved, taken between pieces with no lock
	// held (rdb-key-save-delay: tests slow a save down with it).
	KeyDelay time.Duration
	// Interrupt, once closed, ends KeyDelay's pauses: an abandoned save
	// need not sit out its delay.
	Interrupt <-chan struct{}
	saved     int // keys saved by the current piece
}

// BeginSnapshot starts a snapshot. encode appends one key's record to b; it
// runs with the key's shard locked and must not call back into the
// keyspace's locking. atStart runs under the exclusive lock, at the
// snapshot instant, for what else must be captured then (e.g. functions).
// One snapshot runs at a time: a second waits for End of the first.
func (ks *Keyspace) BeginSnapshot(encode func(b []byte, e *Entry) []byte, atStart func()) *Snapshot {
	ks.snapping.Lock()
	ks.all.Lock()
	defer ks.all.Unlock()
	n := len(ks.dbs)
	s := &Snapshot{ks: ks, encode: encode, shards: make([]*[Shards]shard, n), flushed: make([]bool, n),
		Keys: make([]int64, n), Expires: make([]int64, n)}
	for i := range n {
		db := ks.DB(i)
		s.Keys[i], s.Expires[i] = db.Len(), db.Volatile()
		if s.Keys[i] == 0 {
			continue
		}
		s.shards[i] = db.shards
		for j := range db.shards {
			db.shards[j].pending = true
		}
	}
	if atStart != nil {
		atStart()
	}
	var keys int64
	for _, n := range s.Keys {
		keys += n
	}
	ks.snapSaved.Store(0)
	ks.snapHeld.Store(0)
	ks.snapPeak.Store(0)
	ks.snapKeys.Store(keys)
	ks.snap = s
	return s
}

// Shard appends to b database db's shard as it was when the snapshot began.
// The saver calls it for every shard in order; the caller must not hold
// locks. It takes the shard's lock for a piece of savePiece keys at a time,
// so that commands on the shard wait for one piece, not for the whole shard.
func (s *Snapshot) Shard(b []byte, db, shard int) []byte {
	if s.shards[db] == nil {
		return b
	}
	sh := &s.shards[db][shard]
	var e Entry // one for the shard: encode's argument escapes
	// The keys not marked saved, each marked as it is saved (a table that
	// shrinks between pieces brings some back), then the early records.
	s.inPieces(sh, func(pos uint64) uint64 {
		if !sh.pending {
			return tagMask + 1
		}
		pos = sh.walk(pos, savePiece, func(ent []byte, i int) {
			if ent[1]&flagSaved == 0 {
				ent[1] |= flagSaved
				e = entryAt(sh, i)
				b = s.encode(b, &e)
				s.saved++
			}
		})
		if pos > tagMask {
			b = append(b, s.take(sh)...)
			if s.flushed[db] {
				sh.reset() // nothing left to clear
			}
		}
		return pos
	})
	// The shard no longer pending, its marks are cleared.
	s.inPieces(sh, func(pos uint64) uint64 {
		return sh.walk(pos, clearPiece, func(ent []byte, _ int) { ent[1] &^= flagSaved })
	})
	return b
}

// inPieces calls piece from hash position 0 until it returns a position
// past tagMask, each call under the shard's lock.
func (s *Snapshot) inPieces(sh *shard, piece func(pos uint64) uint64) {
	for pos := uint64(0); pos <= tagMask; {
		s.ks.all.RLock()
		sh.mu.Lock()
		pos = piece(pos)
		sh.mu.Unlock()
		s.ks.all.RUnlock()
		s.ks.snapSaved.Add(int64(s.saved))
		if s.saved > 0 && s.KeyDelay > 0 {
			pause := time.NewTimer(time.Duration(s.saved) * s.KeyDelay)
			select {
			case <-pause.C:
			case <-s.Interrupt:
				pause.Stop()
			}
		}
		s.saved = 0
		// Commands that waited for the lock are runnable now: on one
		// execution thread (io-threads 1) they run before the next piece
		// rather than after a time slice.
		runtime.Gosched()
	}
}

// Keys saved, and marks cleared, per hold of a shard's lock.
const (
	savePiece  = 128
	clearPiece = 1024
)

// take ends a shard's pending state and returns its early records.
func (s *Snapshot) take(sh *shard) []byte {
	early := sh.early
	sh.pending, sh.early = false, nil
	s.ks.snapHeld.Add(-int64(len(early)))
	// The keys copied ahead count as saved once their records are written.
	s.ks.snapSaved.Add(int64(sh.earlyKeys))
	sh.earlyKeys = 0
	return early
}

// keep copies e's record ahead of the saver before its key changes, once.
// The caller holds the shard's lock and has checked e.sh.pending.
func (s *Snapshot) keep(e *Entry) {
	sh := e.sh
	if e.h.flags&flagSaved != 0 {
		return
	}
	n := len(sh.early)
	kept := *e // encode's argument escapes: copied, so that callers' entries stay on their stacks
	sh.early = s.encode(sh.early, &kept)
	sh.earlyKeys++
	held := s.ks.snapHeld.Add(int64(len(sh.early) - n))
	for peak := s.ks.snapPeak.Load(); held > peak && !s.ks.snapPeak.CompareAndSwap(peak, held); peak = s.ks.snapPeak.Load() {
	}
	markSaved(sh, e.ref)
	e.h.flags |= flagSaved
}

// markSaved marks the entry at ref as one the saver must skip: created after
// the instant, or already copied.
func markSaved(sh *shard, ref uint64) { sh.arena.entry(ref)[1] |= flagSaved }

// flush gives the saver db's shards if they are the snapshot's and not saved
// yet, and reports whether it did: db then needs new ones. Needs the
// exclusive lock.
func (s *Snapshot) flush(db *DB) bool {
	for i, shards := range s.shards {
		if shards != db.shards || s.flushed[i] {
			continue
		}
		s.flushed[i] = true
		for j := range shards {
			if !shards[j].pending {
				shards[j].reset()
			}
		}
		return true
	}
	return false
}

// End stops the snapshot. Shards the saver did not reach (it failed) lose
// their marks and early records.
func (s *Snapshot) End() {
	ks := s.ks
	ks.all.Lock()
	for i, shards := range s.shards {
		if shards == nil {
			continue
		}
		for j := range shards {
			sh := &shards[j]
			if !sh.pending {
				continue
			}
			s.take(sh)
			for _, v := range sh.slots {
				if v != 0 {
					sh.arena.entry(v & refMask)[1] &^= flagSaved
				}
			}
			if s.flushed[i] {
				sh.reset()
			}
		}
	}
	ks.snap = nil
	ks.snapKeys.Store(0)
	ks.all.Unlock()
	ks.snapping.Unlock()
}

// PeakExtra returns the most memory held at once by early records.
func (s *Snapshot) PeakExtra() int64 { return s.ks.snapPeak.Load() }

// EachEntry calls fn for every key of one shard of db, expired or not. The
// caller holds the shard's lock or the exclusive lock; fn must not change
// the shard.
func (db *DB) EachEntry(shard int, fn func(e *Entry)) {
	sh := &db.shards[shard]
	for j := range sh.slots {
		if sh.slots[j] != 0 {
			e := entryAt(sh, j)
			fn(&e)
		}
	}
}

// LFUAccess is the access clock of a key with LFU counter at now (RESTORE
// FREQ, loading a file's FREQ).
func LFUAccess(counter int64, nowMs int64) uint32 { return lfuMinutes(nowMs)<<8 | uint32(counter&0xff) }
