package keyspace

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func withAll(ks *Keyspace, fn func()) {
	var all LockSet
	all.All()
	db := ks.DB(0)
	ks.Lock(db, &all)
	fn()
	ks.Unlock(db, &all)
}

// TestAgainstMap drives random sets, overwrites, expires and deletes through one
// database and a Go map, checking that both agree, also across chunk evacuation.
func TestAgainstMap(t *testing.T) {
	ks := New(1, Hooks{})
	db := ks.DB(0)
	model := map[string]string{}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 20 {
		withAll(ks, func() {
			for range 5000 {
				k := fmt.Sprintf("key:%d", rng.IntN(20000))
				switch rng.IntN(4) {
				case 0, 1:
					v := fmt.Sprintf("%0*d", rng.IntN(40), round)
					db.Set([]byte(k), TypeString, EncRaw, []byte(v), 0, 1)
					model[k] = v
				case 2:
					if db.Delete([]byte(k)) != (model[k] != "" || hasKey(model, k)) {
						t.Fatalf("delete %s disagrees", k)
					}
					delete(model, k)
				case 3:
					e, ok := db.Lookup([]byte(k), 1, true)
					want, wok := model[k]
					if ok != wok || ok && string(e.Value()) != want {
						t.Fatalf("lookup %s = %q %v, want %q %v", k, e.Value(), ok, want, wok)
					}
				}
			}
		})
	}
	if int(db.Len()) != len(model) {
		t.Fatalf("len %d, model %d", db.Len(), len(model))
	}
	seen := map[string]int{}
	for cur := uint64(0); ; {
		cur = db.Scan(cur, 10, 1, func(k []byte, _ Type) { seen[string(k)]++ })
		if cur == 0 {
			break
		}
	}
	for k := range model {
		if seen[k] == 0 {
			t.Fatalf("scan missed %s", k)
		}
	}
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }

// TestScanAcrossResize checks the SCAN guarantee while the tables grow and then
// shrink between calls.
func TestScanAcrossResize(t *testing.T) {
	ks := New(1, Hooks{})
	db := ks.DB(0)
	for i := range 5000 {
		db.Set(fmt.Appendf(nil, "stable:%d", i), TypeString, EncRaw, []byte("v"), 0, 1)
	}
	seen := map[string]bool{}
	cur, step := uint64(0), 0
	for {
		cur = db.Scan(cur, 50, 1, func(k []byte, _ Type) { seen[string(k)] = true })
		step++
		for i := range 200 { // grow, then shrink
			k := fmt.Appendf(nil, "churn:%d", i+step*200)
			if step < 40 {
				db.Set(k, TypeString, EncRaw, []byte("v"), 0, 1)
			} else {
				for j := range 200 {
					db.Delete(fmt.Appendf(nil, "churn:%d", j+(step-40)*200))
				}
				break
			}
		}
		if cur == 0 {
			break
		}
	}
	for i := range 5000 {
		if !seen[fmt.Sprintf("stable:%d", i)] {
			t.Fatalf("scan missed stable:%d", i)
		}
	}
}

func TestExpiry(t *testing.T) {
	var expired []string
	ks := New(1, Hooks{Expired: func(db int, key []byte) { expired = append(expired, string(key)) }})
	db := ks.DB(0)
	rng := rand.New(rand.NewPCG(3, 4))
	stale := 0
	for i := range 1000 {
		at := int64(1100)
		if i == 0 || rng.IntN(2) == 0 {
			at, stale = 100, stale+1
		}
		db.Set(fmt.Appendf(nil, "k%d", i), TypeString, EncRaw, []byte("v"), at, 1)
	}
	if _, ok := db.Lookup([]byte("k0"), 150, false); ok {
		t.Fatal("k0 should have expired lazily")
	}
	// The cron runs the cycle repeatedly; each run resumes where the last stopped.
	for range 20 {
		ks.ActiveExpire(150, func() bool { return false })
	}
	if int(db.Len()) != 1000-stale || int(db.Volatile()) != 1000-stale || len(expired) != stale {
		t.Fatalf("left %d keys (%d volatile), hook saw %d; want %d left", db.Len(), db.Volatile(), len(expired), 1000-stale)
	}
}

func TestEvacuationReleasesChunks(t *testing.T) {
	ks := New(1, Hooks{})
	db := ks.DB(0)
	value := make([]byte, 100)
	withAll(ks, func() {
		for i := range 200000 { // one shard, so that it spans many chunks
			db.Set(fmt.Appendf(nil, "{k}%d", i), TypeString, EncRaw, value, 0, 1)
		}
	})
	before := ks.MemoryBytes()
	withAll(ks, func() {
		for i := range 200000 {
			if i%10 != 0 {
				db.Delete(fmt.Appendf(nil, "{k}%d", i))
			}
		}
	})
	after := ks.MemoryBytes()
	if after*3 > before {
		t.Fatalf("mapped %d bytes after deleting 90%%, %d before", after, before)
	}
	for i := 0; i < 200000; i += 10 {
		if e, ok := db.Lookup(fmt.Appendf(nil, "{k}%d", i), 1, false); !ok || len(e.Value()) != 100 {
			t.Fatalf("k%d lost after evacuation", i)
		}
	}
}
