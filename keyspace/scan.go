package keyspace

// A SCAN cursor is shard<<tagBits | position, where position is a prefix of the
// key hash. Keys are visited in (shard, hash) order one home bucket at a time,
// and a bucket of a table of 2^b slots is a range of hash prefixes, so the
// cursor means "every key whose hash is below position was returned" however
// the table has grown or shrunk in between. That gives Redis's guarantee: a key
// present for the whole iteration is returned at least once.

// Scan continues an iteration at cursor, calling fn for the live keys that
// match accepts (nil accepts all) until about count keys were visited, and
// returns the cursor to continue from (0 when done). As in Redis, an expired key
// is removed only when match accepts it. The key bytes are valid only during
// the calls.
func (db *DB) Scan(cursor uint64, count int, now int64, match func(key []byte) bool, fn func(key []byte, t Type)) uint64 {
	return db.scan(cursor, count, now, false, match, fn)
}

// scan is Scan, over the blessed keys only when blessed is set.
func (db *DB) scan(cursor uint64, count int, now int64, blessed bool, match func(key []byte) bool, fn func(key []byte, t Type)) uint64 {
	si := cursor >> tagBits
	pos := cursor & tagMask
	returned, budget := 0, max(count, 1)*10
	for ; si < Shards; si, pos = si+1, 0 {
		db.withShard(int(si), func(sh *shard) {
			if blessed && sh.blessed == 0 {
				pos = tagMask + 1
				return
			}
			for pos <= tagMask && returned < count && budget > 0 && sh.count > 0 {
				returned += db.scanBucket(sh, pos, now, blessed, match, fn)
				pos = sh.nextBucket(pos)
				budget--
			}
			if sh.count == 0 {
				pos = tagMask + 1
			}
		})
		if pos <= tagMask {
			return si<<tagBits | pos // stopped inside this shard
		}
		if returned >= count || budget <= 0 {
			if si+1 == Shards {
				return 0
			}
			return (si + 1) << tagBits
		}
	}
	return 0
}

// scanBucket reports the live keys whose home is the bucket holding position
// pos, and returns how many keys it visited. They sit in the probe run starting
// at the bucket.
func (db *DB) scanBucket(sh *shard, pos uint64, now int64, blessed bool, match func(key []byte) bool, fn func(key []byte, t Type)) int {
	n := 0
	var expired []int
	sh.eachInBucket(pos, func(i int) {
		n++
		e := entryAt(sh, i)
		if blessed && !e.Blessed() || match != nil && !match(e.h.key) {
			return
		}
		if e.h.expire != 0 && e.h.expire <= now {
			expired = append(expired, i)
			return
		}
		fn(e.h.key, e.Type())
	})
	// Remove expired keys last-first: a backward shift only moves slots after the
	// removed one, so earlier indexes stay valid.
	for j := len(expired) - 1; j >= 0; j-- {
		e := entryAt(sh, expired[j])
		db.expire(&e)
	}
	return n
}

// eachInBucket calls fn with the slot of every key whose home is the bucket
// holding hash position pos; they sit in the probe run starting at the
// bucket. fn must not move slots.
func (sh *shard) eachInBucket(pos uint64, fn func(i int)) {
	bucket := sh.home(pos)
	for i := bucket; sh.slots[i] != 0; i = (i + 1) & sh.mask() {
		if sh.home(slotTag(sh.slots[i])) == bucket {
			fn(i)
		}
	}
}

// nextBucket is the first hash position of the bucket after pos's.
func (sh *shard) nextBucket(pos uint64) uint64 {
	shift := tagBits - uint64(sh.tableLog)
	return (pos>>shift + 1) << shift
}

// walk calls fn with the entry bytes and slot of the keys of the buckets
// from hash position pos on, until at least limit were visited, and returns
// the position to continue from (past tagMask when done). As with Scan, a key
// present throughout is visited however the table grows or shrinks between
// walks (a shrink may bring some back). fn must not move slots.
func (sh *shard) walk(pos uint64, limit int, fn func(ent []byte, i int)) uint64 {
	for n := 0; pos <= tagMask && n < limit; pos = sh.nextBucket(pos) {
		if sh.count == 0 {
			return tagMask + 1
		}
		sh.eachInBucket(pos, func(i int) {
			fn(sh.arena.entry(sh.slots[i]&refMask), i)
			n++
		})
	}
	return pos
}
