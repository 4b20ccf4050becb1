package keyspace

// Blessing (Redis 8.12's BLESS SET key NO-EVICT): eviction never chooses a
// blessed key, under any policy. The mark is a bit of the entry's header
// (flagBlessed): no memory per key, nothing for the collector. Rewriting the
// key's value keeps it, deleting the key ends it, RENAME and MOVE carry it
// (SetFrom), COPY does not. Each shard counts its blessed keys, so that
// BlessScan passes over the shards holding none and eviction knows when
// every key of a database is spared.

// Blessed reports whether the entry's key is protected from eviction.
func (e *Entry) Blessed() bool { return e.h.flags&flagBlessed != 0 }

// SetBlessed protects the found entry e from eviction, or ends its
// protection, and reports whether that changed it.
func (db *DB) SetBlessed(e *Entry, on bool) bool {
	if e.Blessed() == on {
		return false
	}
	sh := e.sh
	db.modified(sh, e.h.key)
	if sh.pending {
		db.ks.snap.keep(e) // the snapshot saves the key as it was
	}
	ent := sh.arena.entry(e.ref)
	if on {
		ent[1] |= flagBlessed
		sh.blessed++
		db.blessed.Add(1)
	} else {
		ent[1] &^= flagBlessed
		sh.blessed--
		db.blessed.Add(-1)
	}
	e.h.flags = ent[1]
	return true
}

// Blessed returns how many of the database's keys are protected from
// eviction.
func (db *DB) Blessed() int64 { return db.blessed.Load() }

// BlessScan is Scan over the blessed keys only, with the same cursor and
// guarantees: shards without one are passed over at no cost, and count
// bounds the keys visited in the others.
func (db *DB) BlessScan(cursor uint64, count int, now int64, fn func(key []byte)) uint64 {
	return db.scan(cursor, count, now, true, nil, func(key []byte, _ Type) { fn(key) })
}
