package keyspace

import (
	"strconv"
	"testing"
)

// BenchmarkSetEvicting is one SET of a new key and the eviction it causes
// in a full keyspace of 100,000 keys, per policy: what maxmemory eviction
// costs a write (go test -run - -bench SetEvicting ./keyspace/).
func BenchmarkSetEvicting(b *testing.B) {
	for _, p := range []struct {
		name   string
		policy EvictPolicy
	}{{"lru", EvictLRU}, {"lfu", EvictLFU}, {"lrfu", EvictLRFU}} {
		b.Run(p.name, func(b *testing.B) {
			ks := New(1, Hooks{})
			ks.SetLFU(p.policy == EvictLFU, 10, 1)
			ks.SetLRFU(p.policy == EvictLRFU)
			var ev Evictor
			var set LockSet
			value := make([]byte, 16)
			key := make([]byte, 0, 24)
			const capacity = 100000
			now := int64(1_700_000_000_000)
			onEvict := func(int, []byte) {}
			put := func(i int) {
				key = strconv.AppendInt(append(key[:0], "key:"...), int64(i), 10)
				set.Reset()
				set.Add(key)
				db := ks.Lock(0, &set)
				db.Set(key, TypeString, EncRaw, value, 0, now)
				ks.Unlock(db, &set)
			}
			for i := range capacity {
				put(i)
			}
			b.ResetTimer()
			for i := range b.N {
				put(capacity + i)
				ks.EvictOne(&ev, p.policy, false, 5, now, 1, onEvict)
			}
		})
	}
}

// BenchmarkGetHit is a read that finds its key in a keyspace of 100,000
// keys, per policy: what updating the access clock costs a hit (go test
// -run - -bench GetHit ./keyspace/).
func BenchmarkGetHit(b *testing.B) {
	for _, p := range []struct {
		name   string
		policy EvictPolicy
	}{{"lru", EvictLRU}, {"lfu", EvictLFU}, {"lrfu", EvictLRFU}} {
		b.Run(p.name, func(b *testing.B) {
			ks := New(1, Hooks{})
			ks.SetLFU(p.policy == EvictLFU, 10, 1)
			ks.SetLRFU(p.policy == EvictLRFU)
			var set LockSet
			key := make([]byte, 0, 24)
			const keys = 100000
			now := int64(1_700_000_000_000)
			named := func(i int) []byte { return strconv.AppendInt(append(key[:0], "key:"...), int64(i), 10) }
			for i := range keys {
				k := named(i)
				set.Reset()
				set.Add(k)
				db := ks.Lock(0, &set)
				db.Set(k, TypeString, EncRaw, []byte("0123456789abcdef"), 0, now)
				ks.Unlock(db, &set)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				k := named(i % (keys / 2))
				set.Reset()
				set.Add(k)
				db := ks.Lock(0, &set)
				db.LookupIn(&set, k, now, true)
				ks.Unlock(db, &set)
			}
		})
	}
}
