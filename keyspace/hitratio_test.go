package keyspace

import (
	"fmt"
	"os"
	"strconv"
	"strings"
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
// HitRatioReport -v ./keyspace/). KEYHIVE_HITRATIO_SEEDS=n replays every
// trace made from n seeds, each cell then the mean and [min, max], with
// LRFU minus LRU seed by seed; KEYHIVE_HITRATIO_TRACES=ipx,cms replays only
// those.
func TestHitRatioReport(t *testing.T) {
	if os.Getenv("KEYHIVE_HITRATIO") == "" {
		t.Skip("a report, not a check: set KEYHIVE_HITRATIO=1")
	}
	const keys, length = 20000, 400000
	seeds := 1
	if v := os.Getenv("KEYHIVE_HITRATIO_SEEDS"); v != "" {
		var err error
		if seeds, err = strconv.Atoi(v); err != nil || seeds < 1 {
			t.Fatalf("KEYHIVE_HITRATIO_SEEDS=%q", v)
		}
	}
	traces := cachetrace.Names
	if v := os.Getenv("KEYHIVE_HITRATIO_TRACES"); v != "" {
		traces = strings.Split(v, ",")
	}
	policies := []EvictPolicy{EvictLRU, EvictLFU, EvictLRFU}
	t.Log("trace size: lru lfu lrfu (sampled, this keyspace); exact-lru sieve s3-fifo w-tinylfu (exact, cachetrace); lrfu-lru")
	for _, name := range traces {
		for _, frac := range []float64{0.10, 0.25, 0.50} {
			cells := make([][]float64, len(policies)+len(cachetrace.References)) // cells[column][seed]
			for seed := 1; seed <= seeds; seed++ {
				tr := trace(t, name, keys, length, uint64(seed))
				c := int(float64(tr.Distinct()) * frac)
				for i, p := range policies {
					cells[i] = append(cells[i], 100*replayHitRatio(tr.Keys, c, p))
				}
				for i, r := range cachetrace.References {
					cells[len(policies)+i] = append(cells[len(policies)+i], 100*r.Run(tr.Keys, c))
				}
			}
			line := fmt.Sprintf("%s %.0f%%:", name, frac*100)
			for _, c := range cells {
				line += " " + cachetrace.Spread(c, "%.2f")
			}
			t.Log(line + "; " + cachetrace.Versus(cells[2], cells[0]))
		}
	}
}

// trace is the trace of that name made from seed.
func trace(t *testing.T, name string, keys, length int, seed uint64) cachetrace.Trace {
	for _, tr := range cachetrace.All(keys, length, seed) {
		if tr.Name == name {
			return tr
		}
	}
	t.Fatalf("no trace %q (%v)", name, cachetrace.Names)
	return cachetrace.Trace{}
}
