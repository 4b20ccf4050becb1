package keyspace

import (
	"bytes"
	"testing"
)

// withKey runs fn holding key's shard under the shared lock, as a command does.
func withKey(ks *Keyspace, key string, fn func(db *DB)) {
	var set LockSet
	set.Add([]byte(key))
	db := ks.Lock(0, &set)
	fn(db)
	ks.Unlock(db, &set)
}

// TestLargeEntryMemory: a large entry counts its whole pages in MemoryBytes
// while it lives; a dead one stays mapped (readable) until the unlock of the
// command that killed it, then counts nothing; growing it keeps its bytes.
func TestLargeEntryMemory(t *testing.T) {
	ks := New(1, Hooks{})
	const size = 3 << 20
	value := bytes.Repeat([]byte("ab"), size/2)
	withKey(ks, "big", func(db *DB) {
		db.Set([]byte("big"), TypeString, EncRaw, value, 0, 1)
	})
	if got := ks.MemoryBytes(); got < size || got > size+2*pageSize {
		t.Fatalf("MemoryBytes %d with a %d-byte value", got, size)
	}
	withKey(ks, "big", func(db *DB) {
		e, _ := db.Lookup([]byte("big"), 1, false)
		old := e.Value()
		db.DeleteEntry(&e)
		if !bytes.Equal(old, value) {
			t.Fatal("a deleted large value changed before the unlock")
		}
	})
	if got := ks.MemoryBytes(); got != 0 {
		t.Fatalf("MemoryBytes %d after the large value was deleted", got)
	}

	// Grown in place past its pages, from a small value across the large
	// size, with an expire time: contents kept, the rest zeros.
	var want []byte
	withKey(ks, "g", func(db *DB) {
		e, _ := db.Lookup([]byte("g"), 1, false)
		v := db.PutSized(&e, []byte("g"), TypeString, EncRaw, 10, 5e12, 1)
		copy(v, "0123456789")
		want = append(want, "0123456789"...)
	})
	for _, n := range []int{100, largeEntry + 1, 5 << 20, 5<<20 + 1, 9 << 20} {
		withKey(ks, "g", func(db *DB) {
			e, ok := db.Lookup([]byte("g"), 1, false)
			if !ok {
				t.Fatal("g missing")
			}
			v := db.Resize(&e, EncRaw, n, 1)
			want = append(want, make([]byte, n-len(want))...)
			v[n-1] = 'z'
			want[n-1] = 'z'
		})
		withKey(ks, "g", func(db *DB) {
			e, _ := db.Lookup([]byte("g"), 1, false)
			if !bytes.Equal(e.Value(), want) || e.ExpireAt() != 5e12 || e.Encoding() != EncRaw {
				t.Fatalf("after growing to %d: %d bytes, equal %v, expire %d", n, len(e.Value()), bytes.Equal(e.Value(), want), e.ExpireAt())
			}
		})
		if n > largeEntry {
			if got := ks.MemoryBytes(); got < int64(n) || got > int64(n)+2*pageSize {
				t.Fatalf("MemoryBytes %d with a %d-byte value", got, n)
			}
		}
	}

	// PutSized over a found key leaves the old value readable until the
	// unlock (BITOP computes the new value from it); a hole's old bytes
	// come back zeroed.
	withKey(ks, "g", func(db *DB) {
		e, _ := db.Lookup([]byte("g"), 1, false)
		old := e.Value()
		v := db.PutSized(&e, []byte("g"), TypeString, EncRaw, len(old), 0, 1)
		for i := range v {
			v[i] = ^old[i]
		}
	})
	withKey(ks, "g", func(db *DB) {
		e, _ := db.Lookup([]byte("g"), 1, false)
		if v := e.Value(); v[0] != ^byte('0') || v[len(v)-1] != ^byte('z') || v[20] != 0xff || e.ExpireAt() != 0 {
			t.Fatal("PutSized over the key did not see its old value")
		}
	})
	withKey(ks, "s", func(db *DB) {
		db.Set([]byte("s"), TypeString, EncRaw, bytes.Repeat([]byte{0xee}, 200), 0, 1)
		db.Delete([]byte("s"))
	})
	withKey(ks, "s", func(db *DB) {
		e, _ := db.Lookup([]byte("s"), 1, false)
		if v := db.PutSized(&e, []byte("s"), TypeString, EncRaw, 200, 0, 1); !bytes.Equal(v, make([]byte, 200)) {
			t.Fatal("PutSized in a hole is not zeros")
		}
	})
	withAll(ks, func() { ks.DB(0).Flush() })
	if got := ks.MemoryBytes(); got != 0 {
		t.Fatalf("MemoryBytes %d after FLUSHDB", got)
	}
}
