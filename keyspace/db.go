package keyspace

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math/rand/v2"
	"sync/atomic"
)

// DB is one numbered database. Its methods expect the caller to hold the locks of
// the keys they touch (Keyspace.Lock); Scan, Keys, RandomKey and the expiry
// cycle lock shard by shard themselves under the shared lock.
type DB struct {
	ks       *Keyspace
	id       int
	shards   *[Shards]shard
	marks    *garbageMarks // of shards
	keys     atomic.Int64
	expires  atomic.Int64
	cycle    int          // next shard for the active expiry cycle
	subkeys  atomic.Int64 // keys in the shards' sub maps
	blessed  atomic.Int64 // keys protected from eviction (bless.go)
	subCycle int          // next shard for the subexpiry cycle
	// avgTTL is the keys' average time to live in ms, estimated as Redis
	// does from the TTLs the active expiry cycle samples (INFO's avg_ttl).
	avgTTL atomic.Int64
}

// ID returns the database number.
func (db *DB) ID() int { return db.id }

// Len returns the number of keys (DBSIZE), counting keys that have expired but
// were not removed yet, as Redis does.
func (db *DB) Len() int64 { return db.keys.Load() }

// Volatile returns the number of keys with an expire time.
func (db *DB) Volatile() int64 { return db.expires.Load() }

// AvgTTL returns the estimated average time to live of the keys with one,
// in milliseconds (0 until the active expiry cycle has sampled some).
func (db *DB) AvgTTL() int64 { return db.avgTTL.Load() }

// Entry is a view of a stored key. It is valid until the keys' locks are
// released or its shard is changed. A lookup that misses returns a vacancy:
// an Entry that remembers the key's shard and hash, so that Put can insert the
// key without hashing and probing again.
type Entry struct {
	sh   *shard
	slot int // -1 for a vacancy
	ref  uint64
	hash uint64
	h    header
}

// Key returns the entry's key.
func (e *Entry) Key() []byte { return e.h.key }

// Value returns the stored value bytes.
func (e *Entry) Value() []byte { return e.h.value }

// Type returns the value's type.
func (e *Entry) Type() Type { return Type(e.h.meta >> 4) }

// Encoding returns the value's encoding.
func (e *Entry) Encoding() Encoding { return Encoding(e.h.meta & 0xf) }

// ExpireAt returns the expire time in Unix ms, or 0 when the key persists.
func (e *Entry) ExpireAt() int64 { return e.h.expire }

// Access returns the 24-bit access clock (LRU seconds or LFU state).
func (e *Entry) Access() uint32 { return getAccess(e.sh.arena.entry(e.ref)) }

// LRUClock is the 24-bit, one-second resolution clock stored per key.
func LRUClock(nowMs int64) uint32 { return uint32(nowMs/1000) & (1<<24 - 1) }

func (db *DB) shardOf(key []byte) *shard { return &db.shards[ShardOf(key)] }

func (db *DB) hash(key []byte) uint64 { return maphash.Bytes(db.ks.seed, key) }

// hashOf returns e's key's hash: the one its lookup kept, else computed.
func (db *DB) hashOf(e *Entry) uint64 {
	if e.hash == 0 {
		e.hash = db.hash(e.h.key)
	}
	return e.hash
}

// Lookup finds key. An expired key is removed (and reported to the Expired hook)
// and reported missing. With touch, the key's access clock is updated.
func (db *DB) Lookup(key []byte, now int64, touch bool) (Entry, bool) {
	return db.LookupIn(nil, key, now, touch)
}

// LookupIn is Lookup by a command holding set, which knows the shards of
// the keys it added (nil: none).
func (db *DB) LookupIn(set *LockSet, key []byte, now int64, touch bool) (Entry, bool) {
	sh := &db.shards[set.ShardOf(key)]
	h := db.hash(key)
	i := sh.find(key, h)
	if i < 0 {
		if db.ks.lrfu.on.Load() {
			db.ks.lrfu.ghosts.wanted(h)
		}
		return Entry{sh: sh, slot: -1, hash: h}, false
	}
	e := entryAt(sh, i)
	e.hash = h
	if sh.pending { // the caller may change the entry or its object in place
		db.ks.snap.keep(&e)
	}
	if e.h.expire != 0 && e.h.expire <= now {
		switch {
		case db.ks.Loading.Load():
			// Found, as in the file's history: loading expires nothing.
		case db.ks.replica.Load() && db.ks.ownedByMaster(sh):
			// Still there on the master, which sends its DEL when it
			// expires it.
		case db.ks.Still.Load() || db.ks.replica.Load():
			// Kept: a write admitted before the data set was stilled
			// (or a writable replica's) overwrites it where it is.
			return e, false
		default:
			db.expire(&e)
			return Entry{sh: sh, slot: -1, hash: h}, false
		}
	}
	if touch {
		a := sh.arena.entry(e.ref)
		putAccess(a, db.ks.touchedAccess(getAccess(a), now))
	}
	return e, true
}

func entryAt(sh *shard, i int) Entry {
	ref := sh.slots[i] & refMask
	return Entry{sh: sh, slot: i, ref: ref, h: decode(sh.arena.entry(ref))}
}

func (db *DB) expire(e *Entry) {
	if db.ks.Still.Load() || db.ks.replica.Load() {
		return
	}
	db.removeExpired(e)
}

// removeExpired removes an expired entry, telling the Expired hook.
func (db *DB) removeExpired(e *Entry) {
	if db.ks.hooks.Expired != nil {
		db.ks.hooks.Expired(db.id, e.h.key)
	}
	db.ks.ExpiredKeys.Add(1)
	db.DeleteEntry(e)
}

// Set stores key with a value, replacing any previous value and expire time.
// expireAt is Unix ms, 0 for none.
func (db *DB) Set(key []byte, t Type, enc Encoding, value []byte, expireAt int64, now int64) {
	sh := db.shardOf(key)
	h := db.hash(key)
	e := Entry{sh: sh, slot: sh.find(key, h), hash: h}
	if e.slot >= 0 {
		e = entryAt(sh, e.slot)
	}
	db.Put(&e, key, t, enc, value, expireAt, now)
}

// Put stores key's value where a Lookup of key left e: it rewrites a found
// entry (whatever its old type) or fills a vacancy. Nothing else in the shard
// may have changed since the lookup. e then describes the stored entry.
func (db *DB) Put(e *Entry, key []byte, t Type, enc Encoding, value []byte, expireAt int64, now int64) {
	db.put(e, key, t, enc, value, expireAt, now, false)
}

func (db *DB) put(e *Entry, key []byte, t Type, enc Encoding, value []byte, expireAt int64, now int64, object bool) {
	if e.slot >= 0 {
		db.rewrite(e, t, enc, value, expireAt, now, object)
		return
	}
	copy(db.insert(e, key, byte(t)<<4|byte(enc), len(value), expireAt, now, object), value)
	db.reportInsert(e)
}

// PutSized is Put of a value of size zero bytes, which it returns for the
// caller to fill (valid until Unlock): a big value is written where it is
// stored, not built first on the Go heap. A found entry's value moves to new
// memory, so that its old bytes stay readable until Unlock (the new value
// may be computed from them, e.g. BITOP).
func (db *DB) PutSized(e *Entry, key []byte, t Type, enc Encoding, size int, expireAt int64, now int64) []byte {
	if e.slot < 0 {
		v := zeroValue(db.insert(e, key, byte(t)<<4|byte(enc), size, expireAt, now, false))
		db.reportInsert(e) // the value's length is known: a string's, or a type keysizes does not count
		return v
	}
	if s := db.ks.reportTo(); s != nil {
		defer db.accountRewrite(s, e, e.h.expire, len(e.h.value), db.ks.keySize(e))
	}
	access := db.beginRewrite(e, expireAt, now, false, nil)
	return zeroValue(db.move(e, byte(t)<<4|byte(enc), access, size, expireAt, false))
}

// zeroValue clears a value allocated in a chunk, which may be a hole's old
// bytes. A large entry's pages are new, zeros already: clearing them would
// only make them resident.
func zeroValue(v []byte) []byte {
	if len(v) <= largeEntry {
		clear(v)
	}
	return v
}

// insert stores key at the vacancy e, with a value of vlen bytes that it
// returns unwritten; e then describes the entry. The caller reports it to
// the schema (reportInsert) once the value is written.
func (db *DB) insert(e *Entry, key []byte, meta byte, vlen int, expireAt int64, now int64, object bool) []byte {
	if e.hash == 0 { // a vacancy whose hash was not kept
		sh := db.shardOf(key)
		*e = Entry{sh: sh, slot: -1, hash: db.hash(key)}
	}
	sh := e.sh
	size := allocSize(len(key), vlen, expireAt != 0)
	ref, dst := sh.arena.alloc(size, maxPad)
	encodeHeader(dst, meta, db.ks.newAccess(now, e.hash), key, vlen, expireAt, object)
	db.ks.noteStored(meta)
	if sh.pending {
		markSaved(sh, ref)
	}
	i := sh.insert(e.hash, ref)
	db.keys.Add(1)
	if h := db.ks.hooks.Created; h != nil {
		h(db.id, key, db.ownerOf(sh))
	}
	db.modified(sh, key)
	if expireAt != 0 {
		sh.volatile++
		db.expires.Add(1)
		db.noteOwnExpire(sh, key)
	}
	h := e.hash
	*e = entryAt(sh, i)
	e.hash = h
	return e.h.value
}

// reportInsert tells the schema of the key just inserted at e, once its
// value is written (a collection is measured by its contents).
func (db *DB) reportInsert(e *Entry) {
	if t := db.ks.reportTo(); t != nil {
		t.Changed(db.id, e.h.key, e.hash, 1, boolInt(e.h.expire != 0), schemaBytes(&e.h), e.h.expire, NoKey, db.ks.remeasure(e))
	}
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// Object is a collection too large for the compact inline encodings, kept as a
// Go structure: one pointer per key in the shard's object table, none per
// element, so the collector's work does not grow with the elements.
type Object interface {
	// Clone returns an independent copy, for COPY.
	Clone() Object
}

// Object returns the entry's object, or nil when its value is inline bytes.
func (e *Entry) Object() Object {
	if e.h.flags&flagObject == 0 {
		return nil
	}
	return e.sh.objects[binary.LittleEndian.Uint32(e.h.value)]
}

// PutObject is Put for an object value. Storing the object the entry already
// holds (modified in place) keeps its handle.
func (db *DB) PutObject(e *Entry, key []byte, t Type, enc Encoding, obj Object, expireAt int64, now int64) {
	if e.slot >= 0 && e.Object() == obj {
		db.rewrite(e, t, enc, e.h.value, expireAt, now, true)
		return
	}
	if e.slot < 0 && e.hash == 0 {
		*e = Entry{sh: db.shardOf(key), slot: -1, hash: db.hash(key)}
	}
	var handle [4]byte
	binary.LittleEndian.PutUint32(handle[:], e.sh.addObject(obj))
	db.put(e, key, t, enc, handle[:], expireAt, now, true)
}

// SetFrom stores key in db as a copy of src, an entry of any database: type,
// encoding, value and expire time. An object value is cloned with clone
// (COPY, which leaves the copy's protection from eviction as it was);
// otherwise it is shared, for a caller that deletes src next (RENAME, MOVE),
// and key takes src's protection. It returns the stored entry.
func (db *DB) SetFrom(key []byte, src *Entry, clone bool, now int64) Entry {
	sh := db.shardOf(key)
	h := db.hash(key)
	e := Entry{sh: sh, slot: sh.find(key, h), hash: h}
	if e.slot >= 0 {
		e = entryAt(sh, e.slot)
		e.hash = h
	}
	if at, ok := src.sh.sub[string(src.h.key)]; ok {
		defer db.SetSubexpiry(key, at)
	}
	if obj := src.Object(); obj != nil {
		if clone {
			obj = obj.Clone()
		}
		db.PutObject(&e, key, src.Type(), src.Encoding(), obj, src.ExpireAt(), now)
	} else {
		db.Put(&e, key, src.Type(), src.Encoding(), src.Value(), src.ExpireAt(), now)
	}
	if !clone {
		db.SetBlessed(&e, src.Blessed()) // the key moves with its protection
	}
	return e
}

// Replace gives an existing entry a new value (same type) and expire time. The
// entry is rewritten in place when the size allows. value may alias the old
// value only if it has the same length.
func (db *DB) Replace(e *Entry, enc Encoding, value []byte, expireAt int64, now int64) {
	db.rewrite(e, e.Type(), enc, value, expireAt, now, false)
}

// rewrite gives a found entry a new value. An object the entry held is
// released unless the new value is the same handle.
func (db *DB) rewrite(e *Entry, t Type, enc Encoding, value []byte, expireAt int64, now int64, object bool) {
	sh := e.sh
	if s := db.ks.reportTo(); s != nil {
		defer db.accountRewrite(s, e, e.h.expire, len(e.h.value), db.ks.keySize(e))
	}
	access := db.beginRewrite(e, expireAt, now, object, value)
	db.ks.noteStored(byte(t)<<4 | byte(enc))
	if len(value) == len(e.h.value) && (expireAt != 0) == (e.h.expire != 0) {
		// Same layout (not merely the same size: encode writes the expire time
		// and lengths before copying the key, which lives in this entry): the
		// key and an aliased value sit where they are rewritten, and copy is a
		// memmove, so rewriting in place is safe. A value that is the stored
		// one (modified in place: SETBIT, SETRANGE) is not copied onto
		// itself, which for a big string would cost a pass over all of it.
		dst := sh.arena.entry(e.ref)[:e.h.size]
		at := encodeHeader(dst, byte(t)<<4|byte(enc), access, e.h.key, len(value), expireAt, object)
		dst[1] |= e.h.flags & flagBlessed
		if len(value) > 0 && &dst[at] != &value[0] {
			copy(dst[at:], value)
		}
		if sh.pending {
			markSaved(sh, e.ref)
		}
		*e = entryAt(sh, e.slot)
		return
	}
	copy(db.move(e, byte(t)<<4|byte(enc), access, len(value), expireAt, object), value)
}

// accountRewrite tells the schema what a rewrite of e changed: its expire
// time (was oldExpire), its size (its value was oldLen bytes) and its
// KeySize (was). A rewrite that changed none, the common overwrite, costs
// a few comparisons.
func (db *DB) accountRewrite(s Schema, e *Entry, oldExpire int64, oldLen int, was KeySize) {
	is := db.ks.remeasure(e)
	if e.h.expire == oldExpire && len(e.h.value) == oldLen && is == was {
		return
	}
	expire := int64(-1)
	if e.h.expire != oldExpire {
		expire = e.h.expire
	}
	klen := len(e.h.key)
	dBytes := int64(allocSize(klen, len(e.h.value), e.h.expire != 0) - allocSize(klen, oldLen, oldExpire != 0))
	s.Changed(db.id, e.h.key, db.hashOf(e), 0, boolInt(e.h.expire != 0)-boolInt(oldExpire != 0), dBytes, expire, was, is)
}

// beginRewrite is what every rewrite of a found entry does first: it reports
// the change, keeps the old record for a pending snapshot, releases an
// object the new value (handle) does not keep, counts the expire time and
// returns the rewritten access clock.
func (db *DB) beginRewrite(e *Entry, expireAt int64, now int64, object bool, value []byte) uint32 {
	db.modified(e.sh, e.h.key)
	sh := e.sh
	if sh.pending {
		db.ks.snap.keep(e)
	}
	if e.h.flags&flagObject != 0 && !(object && bytes.Equal(value, e.h.value)) {
		sh.releaseObject(e.h.value)
	}
	db.countExpire(sh, e.h.expire != 0, expireAt != 0)
	if expireAt != 0 {
		db.noteOwnExpire(sh, e.h.key)
	}
	return db.ks.rewrittenAccess(getAccess(sh.arena.entry(e.ref)), now)
}

// move writes a found entry anew with a value of vlen bytes, which it
// returns unwritten, and kills the old one (its bytes stay until Unlock).
func (db *DB) move(e *Entry, meta byte, access uint32, vlen int, expireAt int64, object bool) []byte {
	sh := e.sh
	ref, dst := sh.arena.alloc(allocSize(len(e.h.key), vlen, expireAt != 0), maxPad)
	encodeHeader(dst, meta, access, e.h.key, vlen, expireAt, object)
	dst[1] |= e.h.flags & flagBlessed
	if sh.pending {
		markSaved(sh, ref)
	}
	sh.arena.kill(e.ref, e.h.size)
	sh.slots[e.slot] = sh.slots[e.slot]&^refMask | ref
	*e = entryAt(sh, e.slot)
	return e.h.value
}

// Resize gives a found string entry a value of size bytes, not fewer than it
// has: its bytes followed by zeros, with encoding enc and its expire time
// kept. It returns the value for the caller to write into, valid until
// Unlock; slices of the old value are stale. A large entry grows in place,
// its mapping extended without copying, so that APPEND and SETRANGE on a big
// string neither copy it nor hold it twice.
func (db *DB) Resize(e *Entry, enc Encoding, size int, now int64) []byte {
	sh := e.sh
	if s := db.ks.reportTo(); s != nil {
		defer db.accountRewrite(s, e, e.h.expire, len(e.h.value), db.ks.keySize(e))
	}
	expire := e.h.expire
	access := db.beginRewrite(e, expire, now, false, nil)
	meta := byte(e.Type())<<4 | byte(enc)
	old, klen := len(e.h.value), len(e.h.key)
	at := e.h.size - old // where the value starts
	lenAt := headerSize + uvarintLen(uint64(klen))
	width := at - klen - lenAt // the value length's bytes
	if expire != 0 {
		width -= 8
	}
	if sh.arena.chunks[e.ref>>chunkBits].large && uvarintLen(uint64(size)) <= width {
		ent := sh.arena.growLarge(e.ref, at+size)
		ent[0] = meta
		putAccess(ent, access)
		putPaddedUvarint(ent[lenAt:], uint64(size), width-uvarintLen(uint64(size)))
		*e = entryAt(sh, e.slot)
		return e.h.value
	}
	value := e.h.value
	v := db.move(e, meta, access, size, expire, false)
	copy(v, value) // the old entry's bytes stay until Unlock
	zeroValue(v[old:])
	return v
}

// Modified reports a change to key through the Modified hook. The keyspace
// calls it for every change it makes; a caller that changes an object value in
// place calls it itself.
func (db *DB) Modified(key []byte) {
	if db.ks.hooks.Modified != nil {
		db.modified(db.shardOf(key), key)
	}
}

// ModifiedEntry is Modified for a key whose entry the caller holds: its
// shard is known, so the key is not hashed again. An object changed in
// place is measured again for the schema.
func (db *DB) ModifiedEntry(e *Entry) {
	if s := db.ks.reportTo(); s != nil && e.h.flags&flagObject != 0 {
		if was, is := db.ks.keySize(e), db.ks.remeasure(e); is != was {
			s.Changed(db.id, e.h.key, db.hashOf(e), 0, 0, 0, -1, was, is)
		}
	}
	if db.ks.hooks.Modified != nil {
		db.modified(e.sh, e.h.key)
	}
}

func (db *DB) modified(sh *shard, key []byte) {
	if t := db.ks.reportTo(); t != nil {
		t.Wrote(db.id, key, &sh.writes)
	}
	if h := db.ks.hooks.Modified; h != nil {
		h(db.id, key, db.ownerOf(sh))
	}
}

// ownerOf returns the Owner of the locks under which sh is being changed.
func (db *DB) ownerOf(sh *shard) Owner {
	if o := db.ks.allOwner; o != nil {
		return o
	}
	return sh.owner
}

// SetAccess sets an entry's access clock, e.g. a restored key's.
func (db *DB) SetAccess(e *Entry, access uint32) { putAccess(e.sh.arena.entry(e.ref), access) }

// ResetAccess gives an entry the access clock of a key created at now.
func (db *DB) ResetAccess(e *Entry, now int64) { db.SetAccess(e, db.ks.newAccess(now, e.hash)) }

// SetExpire changes an entry's expire time (0 removes it).
func (db *DB) SetExpire(e *Entry, expireAt int64, now int64) {
	if e.h.expire != expireAt {
		db.rewrite(e, e.Type(), e.Encoding(), e.h.value, expireAt, now, e.h.flags&flagObject != 0)
	}
}

func (db *DB) countExpire(sh *shard, had, has bool) {
	switch {
	case had && !has:
		sh.volatile--
		db.expires.Add(-1)
	case !had && has:
		sh.volatile++
		db.expires.Add(1)
	}
}

// Delete removes key if present (expired or not) and reports whether it was.
func (db *DB) Delete(key []byte) bool {
	sh := db.shardOf(key)
	i := sh.find(key, db.hash(key))
	if i < 0 {
		return false
	}
	e := entryAt(sh, i)
	db.DeleteEntry(&e)
	return true
}

// DeleteEntry removes the entry's key.
func (db *DB) DeleteEntry(e *Entry) {
	db.modified(e.sh, e.h.key)
	sh := e.sh
	if sh.pending {
		db.ks.snap.keep(e)
	}
	if e.h.flags&flagObject != 0 {
		sh.releaseObject(e.h.value)
	}
	db.countExpire(sh, e.h.expire != 0, false)
	if sh.sub != nil {
		db.dropSub(sh, e.h.key)
	}
	if e.h.flags&flagBlessed != 0 {
		sh.blessed--
		db.blessed.Add(-1)
	}
	if t := db.ks.reportTo(); t != nil {
		t.Changed(db.id, e.h.key, db.hashOf(e), -1, -boolInt(e.h.expire != 0), -schemaBytes(&e.h), 0, db.ks.keySize(e), NoKey)
	}
	sh.arena.kill(e.ref, e.h.size)
	sh.remove(e.slot)
	db.keys.Add(-1)
	*e = Entry{sh: sh, slot: -1, hash: e.hash} // now a vacancy for the same key
}

// Flush removes every key. Needs the exclusive lock. A running snapshot
// keeps shards it has not saved yet, and the database gets new ones.
func (db *DB) Flush() {
	if s := db.ks.snap; s != nil && s.flush(db) {
		db.marks.bits = [Shards / 64]uint64{} // the saver's now: not to be evacuated
		db.shards, db.marks = db.ks.newShards()
	} else {
		for i := range db.shards {
			db.shards[i].reset()
		}
	}
	if t := db.ks.reportTo(); t != nil {
		t.FlushDB(db.id)
	}
	db.keys.Store(0)
	db.expires.Store(0)
	db.subkeys.Store(0)
	db.blessed.Store(0)
	db.avgTTL.Store(0)
}

// withShard runs fn on shard i under its lock, compacting it afterwards.
func (db *DB) withShard(i int, fn func(sh *shard)) {
	sh := db.lockShard(i)
	fn(sh)
	db.unlockShard(sh)
}

func (db *DB) lockShard(i int) *shard {
	sh := &db.shards[i]
	sh.mu.Lock()
	return sh
}

// unlockShard compacts the shard, then releases it.
func (db *DB) unlockShard(sh *shard) {
	if sh.arena.garbage {
		sh.evacuate(db.ks.seed)
	}
	sh.mu.Unlock()
}

// Keys calls fn for every live key, shard by shard. Expired keys are skipped
// but not removed, as Redis's KEYS leaves them (DBSIZE still counts them). The
// key bytes are valid only during the call.
func (db *DB) Keys(now int64, fn func(key []byte)) {
	for i := range db.shards {
		db.withShard(i, func(sh *shard) {
			for j := 0; j < len(sh.slots); j++ {
				if sh.slots[j] == 0 {
					continue
				}
				e := entryAt(sh, j)
				if e.h.expire != 0 && e.h.expire <= now {
					continue
				}
				fn(e.h.key)
			}
		})
	}
}

// RandomKey returns a copy of a random live key, and false when the database is
// empty (the empty string is a valid key).
func (db *DB) RandomKey(now int64) ([]byte, bool) {
	for tries := 0; tries < 100 && db.keys.Load() > 0; tries++ {
		start := rand.IntN(Shards)
		for n := 0; n < Shards; n++ {
			key, found, empty := db.randomKeyIn((start+n)%Shards, now)
			if found {
				return key, true
			}
			if !empty {
				break // it held only an expired key, now removed: draw again
			}
		}
	}
	return nil, false
}

func (db *DB) randomKeyIn(i int, now int64) (key []byte, found, empty bool) {
	db.withShard(i, func(sh *shard) {
		empty = sh.count == 0
		for sh.count > 0 {
			j := rand.IntN(len(sh.slots))
			if sh.slots[j] == 0 {
				continue
			}
			e := entryAt(sh, j)
			if e.h.expire != 0 && e.h.expire <= now {
				db.expire(&e)
				return
			}
			key, found = append([]byte(nil), e.h.key...), true
			return
		}
	})
	return key, found, empty
}
