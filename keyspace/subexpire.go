package keyspace

// Subexpiry: a value may hold elements with expire times of their own (a
// hash's fields, Redis 7.4). The keyspace knows nothing of the elements;
// it keeps, per shard, the keys of such values with a time at or before
// their earliest element expiry, so that the active cycle visits only the
// values due and hands them to a callback that removes what expired.
// Deleting a key forgets it; RENAME, MOVE and COPY carry it (SetFrom).

// LowerSubexpiry is SetSubexpiry keeping an earlier time already recorded
// (still at or before the earliest expiry: the cycle then visits early and
// records the exact one), so a write that does not bring the earliest
// expiry forward costs a lookup and no allocation.
func (db *DB) LowerSubexpiry(key []byte, at int64) {
	if at != 0 {
		if old, ok := db.shardOf(key).sub[string(key)]; ok && old <= at {
			return
		}
	}
	db.SetSubexpiry(key, at)
}

// SetSubexpiry records that key's value (stored, under the caller's lock)
// has elements expiring on their own, the earliest at at (Unix ms); at == 0
// forgets the key.
func (db *DB) SetSubexpiry(key []byte, at int64) {
	sh := db.shardOf(key)
	if at == 0 {
		if sh.sub != nil {
			db.dropSub(sh, key)
		}
		return
	}
	if sh.sub == nil {
		sh.sub = make(map[string]int64)
	}
	if _, ok := sh.sub[string(key)]; !ok {
		db.subkeys.Add(1)
	}
	sh.sub[string(key)] = at
}

func (db *DB) dropSub(sh *shard, key []byte) {
	if _, ok := sh.sub[string(key)]; ok {
		delete(sh.sub, string(key))
		db.subkeys.Add(-1)
		if len(sh.sub) == 0 {
			sh.sub = nil
		}
	}
}

// Subexpiry returns the number of keys whose values have elements with
// expire times (INFO keyspace's subexpiry).
func (db *DB) Subexpiry() int64 { return db.subkeys.Load() }

// ActiveSubexpire calls expire, under the key's shard lock, for every key
// whose recorded element expiry is at or before now, shard by shard, until
// stop reports the time budget spent (it runs between shards with no lock
// held). expire removes the expired elements and records the key's exact
// next earliest expiry (SetSubexpiry), or deletes the key when it emptied
// it. A
// key whose whole value expired is removed as a lookup would.
func (ks *Keyspace) ActiveSubexpire(now int64, stop func() bool, expire func(db *DB, e *Entry)) {
	for i := range ks.dbs {
		ks.all.RLock()
		db := ks.DB(i)
		ks.all.RUnlock()
		for n := 0; n < Shards && db.subkeys.Load() > 0; n++ {
			if stop() {
				return
			}
			ks.all.RLock()
			if db = ks.DB(i); db.subkeys.Load() > 0 {
				db.withShard(db.subCycle, func(sh *shard) { db.subexpireShard(sh, now, expire) })
				db.subCycle = (db.subCycle + 1) % Shards
			}
			ks.all.RUnlock()
		}
	}
}

func (db *DB) subexpireShard(sh *shard, now int64, expire func(db *DB, e *Entry)) {
	for k, at := range sh.sub {
		if at > now {
			continue
		}
		key := []byte(k)
		i := sh.find(key, db.hash(key))
		if i < 0 {
			db.dropSub(sh, key)
			continue
		}
		e := entryAt(sh, i)
		if e.h.expire != 0 && e.h.expire <= now {
			db.expire(&e)
			continue
		}
		expire(db, &e)
	}
}
