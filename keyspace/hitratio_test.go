package keyspace

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/keyhive/keyhive/internal/cachetrace"
)

// replayHitRatio replays trace cache-aside against a keyspace holding at
// most capacity keys under policy (5 samples, as maxmemory-samples), the
// clock advancing 20 us per read (50,000 reads a second), and returns the
// fraction of reads that hit.
func replayHitRatio(trace []uint32, capacity int, policy EvictPolicy) float64 {
	ks := New(1, Hooks{})
	ks.SetLFU(policy == EvictLFU, 10, 1)
	ks.SetLRFU(policy == EvictLRFU)
	var ev Evictor
	var set LockSet
	value := make([]byte, 32)
	key := make([]byte, 0, 16)
	hits := 0
	now := int64(1_700_000_000_000_000) // us
	for _, k := range trace {
		now += 20
		key = strconv.AppendUint(append(key[:0], "key:"...), uint64(k), 10)
		set.Reset()
		set.Add(key)
		db := ks.Lock(0, &set)
		if _, ok := db.LookupIn(&set, key, now/1000, true); ok {
			hits++
		} else {
			db.Set(key, TypeString, EncRaw, value, 0, now/1000)
		}
		ks.Unlock(db, &set)
		for db.Len() > int64(capacity) {
			ks.EvictOne(&ev, policy, false, 5, now/1000, 1, func(int, []byte) {})
		}
	}
	return float64(hits) / float64(len(trace))
}

// TestHitRatioReport prints the hit ratios of LRU, LFU and LRFU on every
// trace, in about two minutes (KEYHIVE_HITRATIO=1 go test -run
// HitRatioReport -v ./keyspace/).
func TestHitRatioReport(t *testing.T) {
	if os.Getenv("KEYHIVE_HITRATIO") == "" {
		t.Skip("a report, not a check: set KEYHIVE_HITRATIO=1")
	}
	const keys, length = 20000, 400000
	t.Log("trace         size    lru    lfu   lrfu (sampled, this keyspace);  exact-lru  sieve  s3-fifo  w-tinylfu (exact, cachetrace)")
	for _, tr := range cachetrace.All(keys, length, 1) {
		w := tr.Distinct()
		for _, frac := range []float64{0.10, 0.25, 0.50} {
			c := int(float64(w) * frac)
			line := fmt.Sprintf("%-12s %3.0f%%", tr.Name, frac*100)
			for _, p := range []EvictPolicy{EvictLRU, EvictLFU, EvictLRFU} {
				line += fmt.Sprintf(" %6.2f", 100*replayHitRatio(tr.Keys, c, p))
			}
			for _, r := range cachetrace.References {
				line += fmt.Sprintf(" %6.2f", 100*r.Run(tr.Keys, c))
			}
			t.Log(line)
		}
	}
}
