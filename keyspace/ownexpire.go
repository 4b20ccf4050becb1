package keyspace

import "sync"

// A writable replica's own clients may give keys a TTL; its master never
// sends a DEL for those, so the replica expires them itself, as Redis does.
// It remembers them here (few: writes on a replica are the exception, so a
// plain map) and ExpireOwnKeys removes those whose time has passed. The
// master's keys are left to the master's DELs.
type ownKeys struct {
	mu   sync.Mutex
	keys map[ownKey]struct{}
}

type ownKey struct {
	db  int
	key string
}

// noteOwnExpire remembers key when a writable replica's own client gave it
// a TTL (sh is locked by the writing command).
func (db *DB) noteOwnExpire(sh *shard, key []byte) {
	if !db.ks.replica.Load() || db.ks.ownedByMaster(sh) {
		return
	}
	o := &db.ks.own
	o.mu.Lock()
	if o.keys == nil {
		o.keys = map[ownKey]struct{}{}
	}
	o.keys[ownKey{db.id, string(key)}] = struct{}{}
	o.mu.Unlock()
}

func (o *ownKeys) forgetAll() {
	o.mu.Lock()
	o.keys = nil
	o.mu.Unlock()
}

// OwnKeys is how many keys a writable replica's clients gave a TTL and it
// still watches.
func (ks *Keyspace) OwnKeys() int {
	ks.own.mu.Lock()
	defer ks.own.mu.Unlock()
	return len(ks.own.keys)
}

// ExpireOwnKeys removes the keys of a writable replica's own clients whose
// TTL passed, and forgets those gone or without a TTL now. It returns how
// many it removed.
func (ks *Keyspace) ExpireOwnKeys(now int64) (removed int) {
	o := &ks.own
	o.mu.Lock()
	keys := make([]ownKey, 0, len(o.keys))
	for k := range o.keys {
		keys = append(keys, k)
	}
	o.mu.Unlock()
	if len(keys) == 0 || ks.Still.Load() {
		return 0
	}
	ks.all.RLock()
	defer ks.all.RUnlock()
	for _, k := range keys {
		db := ks.DB(k.db)
		key := []byte(k.key)
		db.withShard(ShardOf(key), func(sh *shard) {
			forget := true
			if i := sh.find(key, db.hash(key)); i >= 0 {
				e := entryAt(sh, i)
				switch {
				case e.h.expire != 0 && e.h.expire <= now:
					db.removeExpired(&e)
					removed++
				case e.h.expire != 0:
					forget = false
				}
			}
			if forget { // under the shard's lock: a new TTL cannot be noted in between
				o.mu.Lock()
				delete(o.keys, k)
				o.mu.Unlock()
			}
		})
	}
	return removed
}
