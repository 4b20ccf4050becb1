package keyspace

import (
	"strconv"
	"testing"
)

// TestBlessedInPoolSpared: a key that entered the eviction pool and was
// blessed before the next eviction stays; the pool lives across evictions.
func TestBlessedInPoolSpared(t *testing.T) {
	ks := New(1, Hooks{})
	db := ks.DB(0)
	for i := range 1000 {
		db.Set([]byte("k:"+strconv.Itoa(i)), TypeString, EncRaw, []byte("v"), 0, int64(i))
	}
	var ev Evictor
	if _, ok := ks.EvictOne(&ev, EvictLRU, false, 64, 1000, 1, func(int, []byte) {}); !ok || ev.n == 0 {
		t.Fatalf("the first eviction left %d candidates in the pool", ev.n)
	}
	pooled := map[string]bool{}
	for _, c := range ev.pool[:ev.n] {
		e, ok := db.Lookup(c.key, 1000, false)
		if !ok {
			t.Fatalf("pooled key %s missing", c.key)
		}
		db.SetBlessed(&e, true)
		pooled[string(c.key)] = true
	}
	for range len(pooled) {
		ks.EvictOne(&ev, EvictLRU, false, 5, 1000, 1, func(_ int, key []byte) {
			if pooled[string(key)] {
				t.Errorf("blessed %s evicted from the pool", key)
			}
		})
	}
}
