package keyspace

import "sync"

// A Snapshot is a point-in-time view of every database, saved while writes
// continue (BGSAVE; Go cannot fork). The saver walks the shards in order; a
// command about to lock a shard the saver has not reached serializes that
// shard first, under the lock it takes anyway (serialize-before-modify). So
// every shard is saved as it was when the snapshot began, and the extra
// memory is the serialized form of the shards written ahead of the saver,
// never a copy of the data set.
type Snapshot struct {
	ks     *Keyspace
	encode func(db *DB, shard int) []byte
	dbs    []*DB
	// Keys and Expires are the databases' sizes when the snapshot began.
	Keys, Expires []int64
	// done and early are indexed by db*Shards+shard and guarded by that
	// shard's lock (or the exclusive lock).
	done  []bool
	early [][]byte
	mu    sync.Mutex
	extra int64 // bytes held in early
	peak  int64
}

// BeginSnapshot starts a snapshot. encode serializes one shard of a
// database; it runs with the shard locked, and must not call back into the
// keyspace's locking. atStart runs under the exclusive lock, at the snapshot
// instant, for what else must be captured then (e.g. functions). Only one
// snapshot runs at a time; End finishes it.
func (ks *Keyspace) BeginSnapshot(encode func(db *DB, shard int) []byte, atStart func()) *Snapshot {
	ks.all.Lock()
	defer ks.all.Unlock()
	n := len(ks.dbs)
	s := &Snapshot{ks: ks, encode: encode, dbs: make([]*DB, n), Keys: make([]int64, n), Expires: make([]int64, n),
		done: make([]bool, n*Shards), early: make([][]byte, n*Shards)}
	for i := range n {
		s.dbs[i] = ks.DB(i)
		s.Keys[i], s.Expires[i] = s.dbs[i].Len(), s.dbs[i].Volatile()
	}
	if atStart != nil {
		atStart()
	}
	ks.snap = s
	return s
}

// Shard returns database db's shard as it was when the snapshot began. The
// saver calls it for every shard in order; the caller must not hold locks.
func (s *Snapshot) Shard(db, shard int) []byte {
	s.ks.all.RLock()
	defer s.ks.all.RUnlock()
	d := s.dbs[db]
	sh := &d.shards[shard]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	i := db*Shards + shard
	if s.done[i] {
		b := s.early[i]
		s.early[i] = nil
		s.mu.Lock()
		s.extra -= int64(len(b))
		s.mu.Unlock()
		return b
	}
	s.done[i] = true
	return s.encode(d, shard)
}

// End stops the snapshot: writers no longer serialize ahead of it.
func (s *Snapshot) End() {
	s.ks.all.Lock()
	s.ks.snap = nil
	s.ks.all.Unlock()
}

// PeakExtra returns the most memory held at once by shards serialized ahead
// of the saver.
func (s *Snapshot) PeakExtra() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

// before saves shard of db ahead of the saver if it has not been saved yet.
// The caller holds the shard's lock (or the exclusive lock).
func (s *Snapshot) before(db *DB, shard int) {
	if db.id >= len(s.dbs) {
		return
	}
	i := db.id*Shards + shard
	if s.done[i] {
		return
	}
	s.done[i] = true
	b := s.encode(s.dbs[db.id], shard)
	s.early[i] = b
	s.mu.Lock()
	s.extra += int64(len(b))
	s.peak = max(s.peak, s.extra)
	s.mu.Unlock()
}

// beforeAll saves every shard not saved yet: a command holding the
// exclusive lock may change any of them (FLUSHALL, SWAPDB, scripts).
func (s *Snapshot) beforeAll() {
	for _, db := range s.dbs {
		for shard := range Shards {
			s.before(db, shard)
		}
	}
}

// EachEntry calls fn for every key of one shard of db, expired or not. The
// caller holds the shard's lock or the exclusive lock; fn must not change
// the shard.
func (db *DB) EachEntry(shard int, fn func(e *Entry)) {
	sh := &db.shards[shard]
	for j := range sh.slots {
		if sh.slots[j] != 0 {
			e := db.entryAt(sh, j)
			fn(&e)
		}
	}
}

// LFUAccess is the access clock of a key with LFU counter at now (RESTORE
// FREQ, loading a file's FREQ).
func LFUAccess(counter int64, nowMs int64) uint32 { return lfuMinutes(nowMs)<<8 | uint32(counter&0xff) }
