package keyspace

import (
	"encoding/binary"

	"github.com/keyhive/keyhive/internal/sample"
)

// Schema is what the keyspace reports each key's changes to: the declared
// namespaces, which count keys, volatile keys, bytes and writes per
// namespace and protect some from eviction (package namespace implements
// it; the server wires the two). Its methods run with the key's shard
// locked, on the hot path of every write: they must not allocate nor call
// back into the keyspace.
type Schema interface {
	// Changed reports a change to key in db: keys and volatile are +1, 0
	// or -1, bytes the change of its size (schemaBytes). hash is the key's
	// hash, the same at every change while the keyspace lives (prefix
	// discovery samples keys by it rather than hashing them again).
	// expireAt is the key's expire time after the change (0: none), or -1
	// when it did not change. was and is are the key's KeySize before and
	// after (NoKey where it did not exist): a collection changed in place
	// reports only these.
	Changed(db int, key []byte, hash uint64, keys, volatile, bytes, expireAt int64, was, is KeySize)
	// Wrote reports a write to key in db; draw is the key's shard's
	// sampler, for prefix discovery's sample of writes.
	Wrote(db int, key []byte, draw *sample.Sampler)
	// FlushDB reports that database db lost all its keys.
	FlushDB(db int)
	// SwapDB reports that databases a and b exchanged their keys.
	SwapDB(a, b int)
	// AnyProtected reports whether some keys must not be evicted, and
	// Protects whether key is one of them.
	AnyProtected() bool
	Protects(key []byte) bool
}

// KeySize is a key's type and length as Redis's INFO keysizes counts it:
// a string's bytes, a collection's elements (Hooks.Len).
type KeySize struct {
	Type Type
	Len  int64 // -1: no key
}

// NoKey is the KeySize of a key that is not there.
var NoKey = KeySize{Len: -1}

// keySize measures e, a stored entry. An object's length is the one last
// recorded (remeasure).
func (ks *Keyspace) keySize(e *Entry) KeySize {
	t := e.Type()
	switch {
	case t == TypeString:
		return KeySize{t, int64(len(e.h.value))}
	case e.h.flags&flagObject != 0:
		return KeySize{t, e.sh.objectLens[binary.LittleEndian.Uint32(e.h.value)]}
	case ks.hooks.Len != nil:
		return KeySize{t, ks.hooks.Len(t, e.Encoding(), e.h.value, nil)}
	}
	return KeySize{Type: t}
}

// remeasure is keySize after a change, recording an object's new length.
func (ks *Keyspace) remeasure(e *Entry) KeySize {
	if e.h.flags&flagObject == 0 || ks.hooks.Len == nil {
		return ks.keySize(e)
	}
	id := binary.LittleEndian.Uint32(e.h.value)
	n := ks.hooks.Len(e.Type(), e.Encoding(), nil, e.sh.objects[id])
	e.sh.objectLens[id] = n
	return KeySize{e.Type(), n}
}

// schemaRef holds the Schema in an atomic pointer: no schema costs one
// atomic load and a nil test.
type schemaRef struct{ Schema }

// SetSchema makes s the schema the keyspace reports to (nil: none), first
// telling it of every key present: a definition costs one pass over the
// keys, after which they are reported as they change. Needs the exclusive
// lock (or no other user of the keyspace, at start).
func (ks *Keyspace) SetSchema(s Schema) {
	if s == nil {
		ks.schema.Store(nil)
		return
	}
	for i := range ks.dbs {
		db := ks.DB(i)
		for j := range db.shards {
			sh := &db.shards[j]
			for _, v := range sh.slots {
				if v != 0 {
					e := Entry{sh: sh, h: decode(sh.arena.entry(v & refMask))}
					s.Changed(i, e.h.key, db.hash(e.h.key), 1, boolInt(e.h.expire != 0), schemaBytes(&e.h), e.h.expire, NoKey, ks.remeasure(&e))
				}
			}
		}
	}
	ks.schema.Store(&schemaRef{s})
}

// reportTo returns the schema changes are reported to, nil when none is set.
func (ks *Keyspace) reportTo() Schema {
	if r := ks.schema.Load(); r != nil {
		return r.Schema
	}
	return nil
}

// EvictFrom removes key from db if it is still there, as EvictOne removes
// the key it chooses (onEvict runs under the key's lock), and returns the
// bytes it held: a namespace's quota eviction, whose victim the namespace's
// own index chose. A blessed key is found but spared (BLESS SET NO-EVICT).
func (ks *Keyspace) EvictFrom(db int, key []byte, onEvict func(db int, key []byte)) (freed int64, found, spared bool) {
	ks.all.RLock()
	defer ks.all.RUnlock()
	freed, _, _, found, spared = ks.DB(db).evictKey(nil, key, onEvict)
	return freed, found, spared
}

// schemaBytes is what a key counts in its namespace's bytes: its entry as
// its contents size it, and its index slot. An entry may be a few bytes
// longer where it fills a hole (a padded length), which depends on the
// arena's history: not counted, so that a replica, a restart or a recount
// of the same keys reports the same bytes.
func schemaBytes(h *header) int64 {
	return int64(allocSize(len(h.key), len(h.value), h.expire != 0)) + 8
}
