package keyspace

import (
	"strconv"
	"testing"
)

// benchPolicies runs bench once per eviction policy on a keyspace of
// keys string keys ("key:<i>", 16-byte values) made under that policy;
// key names key i in a buffer of its own.
func benchPolicies(b *testing.B, keys int, bench func(b *testing.B, ks *Keyspace, policy EvictPolicy, key func(i int) []byte, set *LockSet, now int64)) {
	for _, p := range []struct {
		name   string
		policy EvictPolicy
	}{{"lru", EvictLRU}, {"lfu", EvictLFU}, {"lrfu", EvictLRFU}} {
		b.Run(p.name, func(b *testing.B) {
			ks := New(1, Hooks{})
			ks.SetLFU(p.policy == EvictLFU, 10, 1)
			ks.SetLRFU(p.policy == EvictLRFU)
			var set LockSet
			buf := make([]byte, 0, 24)
			key := func(i int) []byte { buf = strconv.AppendInt(append(buf[:0], "key:"...), int64(i), 10); return buf }
			now := int64(1_700_000_000_000)
			for i := range keys {
				benchPut(ks, &set, key(i), now)
			}
			bench(b, ks, p.policy, key, &set, now)
		})
	}
}

// benchPut stores a 16-byte string at key.
func benchPut(ks *Keyspace, set *LockSet, key []byte, now int64) {
	set.Reset()
	set.Add(key)
	db := ks.Lock(0, set)
	db.Set(key, TypeString, EncRaw, []byte("0123456789abcdef"), 0, now)
	ks.Unlock(db, set)
}

// BenchmarkSetEvicting is one SET of a new key and the eviction it causes
// in a full keyspace of 100,000 keys, per policy: what maxmemory eviction
// costs a write (go test -run - -bench SetEvicting ./keyspace/).
func BenchmarkSetEvicting(b *testing.B) {
	const capacity = 100000
	benchPolicies(b, capacity, func(b *testing.B, ks *Keyspace, policy EvictPolicy, key func(int) []byte, set *LockSet, now int64) {
		var ev Evictor
		onEvict := func(int, []byte) {}
		b.ResetTimer()
		for i := range b.N {
			benchPut(ks, set, key(capacity+i), now)
			ks.EvictOne(&ev, policy, false, 5, now, 1, onEvict)
		}
	})
}

// BenchmarkGetHit is a read that finds its key in a keyspace of 100,000
// keys, per policy: what updating the access clock costs a hit (go test
// -run - -bench GetHit ./keyspace/).
func BenchmarkGetHit(b *testing.B) {
	const keys = 100000
	benchPolicies(b, keys, func(b *testing.B, ks *Keyspace, _ EvictPolicy, key func(int) []byte, set *LockSet, now int64) {
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			k := key(i % (keys / 2))
			set.Reset()
			set.Add(k)
			db := ks.Lock(0, set)
			db.LookupIn(set, k, now, true)
			ks.Unlock(db, set)
		}
	})
}
