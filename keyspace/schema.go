package keyspace

import "github.com/keyhive/keyhive/namespace"

// SetSchema makes t the declared namespaces (nil: none), filling its
// counters from the keys present: a definition costs one pass over the
// keys, after which they are kept as keys change. Needs the exclusive lock
// (or no other user of the keyspace, at start).
func (ks *Keyspace) SetSchema(t *namespace.Table) {
	if t != nil {
		for i := range ks.dbs {
			db := ks.DB(i)
			for s := range db.shards {
				sh := &db.shards[s]
				for _, v := range sh.slots {
					if v != 0 {
						h := decode(sh.arena.entry(v & refMask))
						t.Changed(i, h.key, 1, boolInt(h.expire != 0), schemaBytes(&h), h.expire)
					}
				}
			}
		}
	}
	ks.schema.Store(t)
}

// Schema returns the declared namespaces, nil when there are none.
func (ks *Keyspace) Schema() *namespace.Table { return ks.schema.Load() }

// EvictFrom removes key from db if it is still there, as EvictOne removes
// the key it chooses (onEvict runs under the key's lock), and returns the
// bytes it held: a namespace's quota eviction, whose victim the namespace's
// own index chose.
func (ks *Keyspace) EvictFrom(db int, key []byte, onEvict func(db int, key []byte)) (int64, bool) {
	ks.all.RLock()
	defer ks.all.RUnlock()
	return ks.DB(db).evictKey(key, onEvict)
}

// schemaBytes is what a key counts in its namespace's bytes: its entry as
// its contents size it, and its index slot. An entry may be a few bytes
// longer where it fills a hole (a padded length), which depends on the
// arena's history: not counted, so that a replica, a restart or a recount
// of the same keys reports the same bytes.
func schemaBytes(h *header) int64 {
	return int64(allocSize(len(h.key), len(h.value), h.expire != 0)) + 8
}
