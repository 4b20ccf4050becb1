package discover

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/keyhive/keyhive/internal/sample"
)

// seedKey returns a key of the five seed applications' schemas
// (../shared/seeds, workloads/schema.conf), in roughly the proportions
// their workloads write them, with a value size and whether it has a TTL.
func seedKey(r *rand.Rand) (key string, size int64, ttl bool) {
	switch n := r.IntN(100); {
	case n < 18: // 000: DNS cache, one key per name and type
		return fmt.Sprintf("dns:host%d.example%d.com.:%d:1", r.IntN(20000), r.IntN(50), []int{1, 28, 5}[r.IntN(3)]), 200 + r.Int64N(300), true
	case n < 22:
		return fmt.Sprintf("dnsmeta:hits:host%d.example.com.", r.IntN(20000)), 16, true
	case n < 23:
		return fmt.Sprintf("dnsmeta:lock:host%d", r.IntN(5000)), 8, true
	case n < 43: // 001: QuickLink
		return fmt.Sprintf("ql:v1:link:%x", r.Uint64()), 120 + r.Int64N(200), true
	case n < 50:
		return fmt.Sprintf("ql:v1:404:%x", r.Uint64()), 4, true
	case n < 56:
		return fmt.Sprintf("ql:v1:meta:%x", r.Uint64()), 300, false
	case n < 57:
		return fmt.Sprintf("ql:system:%d", r.IntN(100)), 64, false
	case n < 62: // 002: waiting room
		return fmt.Sprintf("session:%x", r.Uint64()), 150, true
	case n < 65:
		return fmt.Sprintf("queue:event%d:waiting:%d", r.IntN(20), r.IntN(1000)), 64, false
	case n < 68:
		return fmt.Sprintf("heartbeat:%x", r.Uint64()), 8, true
	case n < 70:
		return fmt.Sprintf("admission:%x", r.Uint64()), 32, true
	case n < 71:
		return fmt.Sprintf("rate:%d.%d.%d.%d", r.IntN(256), r.IntN(256), r.IntN(256), r.IntN(256)), 8, true
	case n < 78: // 003: image proxy
		return fmt.Sprintf("cache:project:%d", r.IntN(1e6)), 500, true
	case n < 80:
		return fmt.Sprintf("cache:apikey:%x", r.Uint64()), 100, true
	case n < 84:
		return fmt.Sprintf("ratelimit:ipx:%d.%d.%d.%d", r.IntN(256), r.IntN(256), r.IntN(256), r.IntN(256)), 40, true
	case n < 85:
		return fmt.Sprintf("usage:project%d:2026-12-%02d", r.IntN(1000), 1+r.IntN(28)), 16, true
	case n < 93: // 004: CMS
		return fmt.Sprintf("reed:entity:%d", r.IntN(1e7)), 400, false
	case n < 96:
		return fmt.Sprintf("reed:word:w%d", r.IntN(1e6)), 60, false
	case n < 98:
		return fmt.Sprintf("reed:page:cache:/p/%d", r.IntN(1e6)), 2000, true
	default:
		return fmt.Sprintf("counter%d", r.IntN(100)), 8, false // no delimiter
	}
}

// exactPrefix is the definition the sketch implements, written plainly.
func exactPrefix(key string, depth int, delim byte) string {
	end := 0
	for d := 0; d < depth; d++ {
		for i := end; i < len(key); i++ {
			if key[i] == delim {
				end = i + 1
				break
			}
		}
	}
	return key[:min(end, MaxPrefix)]
}

var keysFlag = flag.Int("discover.keys", 0, "keys of the seed-mix property test (default 1000000, 200000 with -short)")

// TestTopMatchesExactCounts loads a seed-shaped key mix (and deletes part
// of it again), then checks that at every depth the top prefixes by keys,
// bytes and writes are the exact top ones, each figure within its stated
// error of the exact count.
func TestTopMatchesExactCounts(t *testing.T) {
	n := *keysFlag
	if n == 0 {
		n = 1_000_000
		if testing.Short() {
			n = 200_000
		}
	}
	for _, seed := range []uint64{1, 2} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { checkSeedMix(t, n, seed) })
	}
}

// keyHash stands in for the keyspace's hash of key, by which Changed
// samples keys: seeded with the sketch's seed, so that a test samples the
// same keys at each run.
func keyHash(s *Sketch, key []byte) uint64 { return hash(s.cfg.Seed, key) }

type exact struct{ keys, volatile, bytes, writes int64 }

func checkSeedMix(t *testing.T, n int, seed uint64) {
	s := New(Config{Delimiter: ':', Depth: 3, Width: 1024, DBs: 2, Seed: seed})
	var draw sample.Sampler
	r := rand.New(rand.NewPCG(seed, 7))
	type kv struct {
		size int64
		ttl  bool
		db   int
	}
	live := map[string]kv{}
	truth := make([]map[string]*exact, MaxDepth+1)
	for d := 1; d <= MaxDepth; d++ {
		truth[d] = map[string]*exact{}
	}
	apply := func(key string, keys, volatile, bytes int64, writes int64) {
		for d := 1; d <= MaxDepth; d++ {
			p := exactPrefix(key, d, ':')
			e := truth[d][p]
			if e == nil {
				e = &exact{}
				truth[d][p] = e
			}
			e.keys += keys
			e.volatile += volatile
			e.bytes += bytes
			e.writes += writes
		}
	}
	b2i := func(b bool) int64 {
		if b {
			return 1
		}
		return 0
	}
	for len(live) < n {
		key, size, ttl := seedKey(r)
		if _, ok := live[key]; ok {
			continue
		}
		db := 0
		if r.IntN(20) == 0 {
			db = 1
		}
		live[key] = kv{size, ttl, db}
		s.Changed(db, []byte(key), keyHash(s, []byte(key)), 1, b2i(ttl), size)
		s.Wrote([]byte(key), &draw)
		apply(key, 1, b2i(ttl), size, 1)
	}
	// Delete a tenth, grow another tenth: the sketch must follow both.
	i := 0
	for key, v := range live {
		switch i % 10 {
		case 0:
			s.Changed(v.db, []byte(key), keyHash(s, []byte(key)), -1, -b2i(v.ttl), -v.size)
			s.Wrote([]byte(key), &draw)
			apply(key, -1, -b2i(v.ttl), -v.size, 1)
			delete(live, key)
		case 1:
			s.Changed(v.db, []byte(key), keyHash(s, []byte(key)), 0, 0, 100)
			s.Wrote([]byte(key), &draw)
			apply(key, 0, 0, 100, 1)
		}
		i++
	}
	for d := 1; d <= MaxDepth; d++ {
		for _, by := range []Figure{Keys, Bytes, Writes} {
			top := s.Top(d, by, 10)
			if len(top) == 0 {
				t.Fatalf("depth %d: nothing discovered", d)
			}
			for _, p := range top {
				e := truth[d][p.Name]
				if e == nil {
					t.Errorf("depth %d by %s: %q is no prefix of the keys", d, by, p.Name)
					continue
				}
				for f, want := range map[Figure]int64{Keys: e.keys, Volatile: e.volatile, Bytes: e.bytes, Writes: e.writes} {
					if diff := p.Figures[f] - want; diff > p.Error[f] || -diff > p.Error[f] {
						t.Errorf("depth %d by %s: %q %s = %d, exact %d, beyond the error bound %d", d, by, p.Name, f, p.Figures[f], want, p.Error[f])
					}
				}
			}
			// Every prefix the exact count ranks above the last reported one,
			// by more than the two bounds, must be reported.
			last := top[len(top)-1]
			reported := map[string]bool{}
			for _, p := range top {
				reported[p.Name] = true
			}
			for name, e := range truth[d] {
				v := map[Figure]int64{Keys: e.keys, Bytes: e.bytes, Writes: e.writes}[by]
				if !reported[name] && v > last.Figures[by]+2*last.Error[by] {
					t.Errorf("depth %d by %s: %q (%d) missing from the top %d (last %q %d±%d)", d, by, name, v, len(top), last.Name, last.Figures[by], last.Error[by])
				}
			}
			if testing.Verbose() && by == Keys {
				for _, p := range top[:min(5, len(top))] {
					t.Logf("depth %d %-24q keys %8d ±%-6d exact %8d", d, p.Name, p.Figures[Keys], p.Error[Keys], truth[d][p.Name].keys)
				}
			}
		}
	}
}

var manyFlag = flag.Int("discover.many", 0, "keys of random prefixes for the memory test (default 300000; 10000000 for the issue's check)")

// TestMemoryBoundedUnderRandomPrefixes writes keys whose prefixes are all
// different: the sketch's memory is its fixed size, whatever their number,
// and the heap does not grow with them.
func TestMemoryBoundedUnderRandomPrefixes(t *testing.T) {
	n := *manyFlag
	if n == 0 {
		n = 300_000
	}
	cfg := Config{Delimiter: ':', Depth: 3, Width: 1024, DBs: 16, Seed: 3}
	s := New(cfg)
	before := s.MemoryBytes()
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	r := rand.New(rand.NewPCG(3, 3))
	key := make([]byte, 0, 64)
	var draw sample.Sampler
	for i := range n {
		key = fmt.Appendf(key[:0], "%x:%x:%x:%d", r.Uint64(), r.Uint32(), r.Uint32(), i)
		s.Changed(0, key, keyHash(s, key), 1, 0, 50)
		s.Read(key, &draw)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	if got := s.MemoryBytes(); got != before || got != MemoryFor(cfg, 1) {
		t.Fatalf("sketch memory %d after %d keys, %d before (bound %d)", got, n, before, MemoryFor(cfg, 1))
	}
	if grown := int64(m1.HeapAlloc) - int64(m0.HeapAlloc); grown > 1<<20 {
		t.Fatalf("heap grew %d bytes over %d random prefixes", grown, n)
	}
	t.Logf("%d keys of random prefixes: sketch %d bytes (depth 3, width 1024, one database)", n, s.MemoryBytes())
	if top := s.Top(1, Keys, 5); len(top) == 0 {
		t.Fatal("nothing discovered")
	}
}

// TestEventsDoNotAllocate pins the hot path: no allocation per event once
// a database's first sampled key has been seen.
func TestEventsDoNotAllocate(t *testing.T) {
	s := New(Config{Delimiter: ':', Depth: 3, Width: 1024, DBs: 2, Seed: 1})
	keys := make([][]byte, 256)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "ql:v1:link:%d", i)
		s.Changed(1, keys[i], keyHash(s, keys[i]), 1, 1, 100) // allocates database 1's figures
	}
	var draw sample.Sampler
	i := 0
	if n := testing.AllocsPerRun(1000, func() {
		k := keys[i%len(keys)]
		i++
		s.Changed(0, k, keyHash(s, k), 1, 0, 80)
		s.Changed(1, k, keyHash(s, k), 0, 0, 8)
		s.Read(k, &draw)
		s.Wrote(k, &draw)
		s.Expired(k)
		s.Changed(0, k, keyHash(s, k), -1, 0, -80)
	}); n != 0 {
		t.Fatalf("%.1f allocations per round of events", n)
	}
}

func TestPrefixes(t *testing.T) {
	s := New(Config{Delimiter: ':', Depth: 3, Width: 64})
	long := "x" + string(make([]byte, 100)) + ":y"
	edge := string(make([]byte, MaxPrefix-1)) + ":" // its delimiter is the last byte kept
	for key, want := range map[string][3]string{
		"dns:example.com.:1:1": {"dns:", "dns:example.com.:", "dns:example.com.:1:"},
		"dnsmeta:hits":         {"dnsmeta:", "dnsmeta:", "dnsmeta:"},
		"counter":              {"", "", ""},
		"":                     {"", "", ""},
		"a::b":                 {"a:", "a::", "a::"},
		long:                   {long[:MaxPrefix], long[:MaxPrefix], long[:MaxPrefix]},
		"a:" + long:            {"a:", ("a:" + long)[:MaxPrefix], ("a:" + long)[:MaxPrefix]},
		edge:                   {edge, edge, edge},
		edge + "b:c":           {edge, edge, edge},
	} {
		prefixes, fps := s.prefixes([]byte(key))
		for d := range 3 {
			p := prefixes[d]
			if fps[d] != s.fingerprint(p) {
				t.Errorf("%q at depth %d: fingerprint not %q's", key, d+1, p)
			}
			if string(p) != want[d] || string(p) != exactPrefix(key, d+1, ':') {
				t.Errorf("%q at depth %d: %q, want %q", key, d+1, p, want[d])
			}
		}
	}
}

func TestFlushAndSwap(t *testing.T) {
	s := New(Config{Delimiter: ':', Depth: 1, Width: 64, DBs: 2})
	for i := range 4000 {
		a, b := fmt.Appendf(nil, "a:%d", i), fmt.Appendf(nil, "b:%d", i)
		s.Changed(0, a, keyHash(s, a), 1, 0, 10)
		s.Changed(1, b, keyHash(s, b), 1, 0, 10)
	}
	keysOf := func(name string) int64 {
		for _, p := range s.Top(1, Keys, 10) {
			if p.Name == name {
				return p.Figures[Keys]
			}
		}
		return 0
	}
	a, b := keysOf("a:"), keysOf("b:")
	if a == 0 || b == 0 {
		t.Fatalf("a: %d, b: %d", a, b)
	}
	s.SwapDB(0, 1)
	s.FlushDB(0) // b's keys now
	if keysOf("b:") != 0 || keysOf("a:") != a {
		t.Fatalf("after SWAPDB and FLUSHDB: a: %d (was %d), b: %d", keysOf("a:"), a, keysOf("b:"))
	}
	s.Reset()
	if keysOf("a:") != 0 {
		t.Fatal("Reset kept keys")
	}
}

func BenchmarkChanged(b *testing.B) {
	s := New(Config{Delimiter: ':', Depth: 3, Width: 1024, Seed: 1})
	keys := make([][]byte, 4096)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "key:%012d", i)
	}
	i := 0
	for b.Loop() {
		s.Changed(0, keys[i&4095], keyHash(s, keys[i&4095]), 1, 0, 40)
		i++
	}
}

func BenchmarkRead(b *testing.B) {
	s := New(Config{Delimiter: ':', Depth: 3, Width: 1024, Seed: 1})
	key := []byte("key:000000000001")
	var draw sample.Sampler
	for b.Loop() {
		s.Read(key, &draw)
	}
}

// BenchmarkChangedRandomPrefixes is the worst case for the named buckets:
// every sampled key brings a new prefix that challenges a bucket's holder.
func BenchmarkChangedRandomPrefixes(b *testing.B) {
	s := New(Config{Delimiter: ':', Depth: 3, Width: 1024, Seed: 1})
	r := rand.New(rand.NewPCG(1, 1))
	keys := make([][]byte, 1<<16)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "%x:%x:%x:1", r.Uint32(), r.Uint32(), r.Uint32())
	}
	i := 0
	for b.Loop() {
		s.Changed(0, keys[i&(1<<16-1)], keyHash(s, keys[i&(1<<16-1)]), 1, 0, 40)
		i++
	}
}

// TestConcurrentEvents runs events from several goroutines while Top reads:
// the sketch's atomics and claim lock keep it consistent (run with -race).
func TestConcurrentEvents(t *testing.T) {
	s := New(Config{Delimiter: ':', Depth: 2, Width: 64, DBs: 2, Seed: 9})
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			var draw sample.Sampler
			for i := range 20000 {
				k := fmt.Appendf(nil, "p%d:q%d:%d", i%7, g, i)
				s.Changed(g%2, k, keyHash(s, k), 1, 1, 10)
				s.Read(k, &draw)
				s.Wrote(k, &draw)
				if i%50 == 0 {
					s.Top(1+i%2, Keys, 5)
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
	var sum int64
	for _, p := range s.Top(1, Keys, 100) {
		sum += p.Figures[Keys]
	}
	if total := s.Totals()[Keys]; sum < total || total == 0 {
		t.Fatalf("the prefixes' keys add up to %d, the total is %d", sum, total)
	}
}
