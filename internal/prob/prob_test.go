package prob

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

func newBloom(capacity uint64, errorRate float64, expansion uint32, nonScaling bool) Bloom {
	return InitBloom(make([]byte, BloomSize(capacity, errorRate, nonScaling)), capacity, errorRate, expansion, nonScaling)
}

// addBloom adds item, growing f as a caller does.
func addBloom(t testing.TB, f Bloom, item []byte) (Bloom, bool) {
	added, grow, err := f.Add(item)
	if err != nil {
		t.Fatal(err)
	}
	if grow > 0 {
		f = append(f, make([]byte, grow)...)
		f.Grown()
		added, grow, err = f.Add(item)
		if err != nil || grow > 0 {
			t.Fatal("no room after growing", err)
		}
	}
	return f, added
}

// TestBloomFalsePositives is issue 39's acceptance: a filter for 1M items
// at 0.01 measures at most 0.012 false positives on 1M absent items, with
// no false negatives, in at most 1.1x the theoretical bits (n·ln(1/p)/ln²2).
func TestBloomFalsePositives(t *testing.T) {
	const n = 1_000_000
	theory := n * math.Log(1/0.01) / (math.Ln2 * math.Ln2)
	for _, nonScaling := range []bool{true, false} {
		f := newBloom(n, 0.01, 2, nonScaling)
		item := make([]byte, 0, 16)
		for i := range n {
			f, _ = addBloom(t, f, strconv.AppendInt(append(item[:0], "in:"...), int64(i), 10))
		}
		// An item that tests present as it is added is not counted, as in Redis.
		if f.Filters() != 1 || f.Items() > n || f.Items() < n*0.98 {
			t.Fatalf("nonscaling=%v: %d filters, %d items", nonScaling, f.Filters(), f.Items())
		}
		for i := range n {
			if !f.Exists(strconv.AppendInt(append(item[:0], "in:"...), int64(i), 10)) {
				t.Fatalf("false negative for in:%d", i)
			}
		}
		fp := 0
		for i := range n {
			if f.Exists(strconv.AppendInt(append(item[:0], "out:"...), int64(i), 10)) {
				fp++
			}
		}
		rate := float64(fp) / n
		bits := float64(f.BitBytes() * 8)
		t.Logf("nonscaling=%v: false positives %.5f, %.0f bits (%.3fx the theory at 0.01)", nonScaling, rate, bits, bits/theory)
		if nonScaling {
			// The filter is sized at the rate reserved.
			if rate > 0.012 {
				t.Errorf("false-positive rate %.5f > 0.012", rate)
			}
			if bits > 1.1*theory {
				t.Errorf("%.0f bits > 1.1 x %.0f", bits, theory)
			}
		} else {
			// A scaling chain's first filter takes half the rate (the
			// chain's sum stays under it), as Redis's does: its bits are
			// the theory at 0.005.
			if rate > 0.006 {
				t.Errorf("false-positive rate %.5f > 0.006", rate)
			}
			if at := n * math.Log(1/0.005) / (math.Ln2 * math.Ln2); bits > 1.1*at {
				t.Errorf("%.0f bits > 1.1 x %.0f", bits, at)
			}
		}
	}
}

// TestBloomScales: past its capacity a scaling filter adds sub-filters of
// EXPANSION times the capacity, keeps every item, and its rate stays
// under the one reserved; a NONSCALING one refuses.
func TestBloomScales(t *testing.T) {
	f := newBloom(100, 0.01, 2, false)
	for i := range 1500 {
		f, _ = addBloom(t, f, []byte(fmt.Sprint("k", i)))
	}
	if f.Filters() != 4 || f.Capacity() != 100+200+400+800 || f.Items() > 1500 || f.Items() < 1480 {
		t.Fatalf("%d filters, capacity %d, %d items", f.Filters(), f.Capacity(), f.Items())
	}
	for i := range 1500 {
		if !f.Exists([]byte(fmt.Sprint("k", i))) {
			t.Fatalf("lost k%d", i)
		}
	}
	fp := 0
	for i := range 100000 {
		if f.Exists([]byte(fmt.Sprint("absent", i))) {
			fp++
		}
	}
	if rate := float64(fp) / 100000; rate > 0.01 {
		t.Errorf("false positives %.4f > 0.01", rate)
	}
	ns := newBloom(10, 0.01, 2, true)
	for i := range 10 {
		ns, _ = addBloom(t, ns, []byte(fmt.Sprint(i)))
	}
	if _, _, err := ns.Add([]byte("more")); err != ErrBloomFull {
		t.Fatalf("nonscaling past capacity: %v", err)
	}
	// BF.INFO's Size as Redis reports it (go-redis's spec: 0.001, 2000).
	if got := newBloom(2000, 0.001, 2, false).RedisSize(); got != 4056 {
		t.Errorf("Size %d, want 4056", got)
	}
	if got := newBloom(100, 0.01, 2, false).RedisSize(); got != 240 {
		t.Errorf("Size %d, want 240 (the BF.INFO page's example)", got)
	}
}

func newCuckoo(capacity uint64, bucketSize, maxIter, expansion int) Cuckoo {
	n := CuckooBuckets(capacity, bucketSize)
	return InitCuckoo(make([]byte, CuckooSize(n, bucketSize)), n, bucketSize, maxIter, expansion)
}

func addCuckoo(t testing.TB, f Cuckoo, item []byte) (Cuckoo, error) {
	grow, err := f.Add(item)
	if err != nil {
		return f, err
	}
	if grow > 0 {
		f = append(f, make([]byte, grow)...)
		f.Grown()
		if grow, err = f.Add(item); grow > 0 || err != nil {
			t.Fatal("no room after growing", err)
		}
	}
	return f, nil
}

func TestCuckoo(t *testing.T) {
	f := newCuckoo(1000, 2, 20, 1)
	if f.Buckets() != 512 || f.RedisSize() != 1080 {
		t.Fatalf("%d buckets, size %d (the CF.INFO page: 512, 1080)", f.Buckets(), f.RedisSize())
	}
	var err error
	for i := range 5000 {
		if f, err = addCuckoo(t, f, []byte(fmt.Sprint("item", i))); err != nil {
			t.Fatal(err)
		}
	}
	if f.Items() != 5000 || f.Filters() < 5 {
		t.Fatalf("%d items in %d filters", f.Items(), f.Filters())
	}
	for i := range 5000 {
		if !f.Exists([]byte(fmt.Sprint("item", i))) {
			t.Fatalf("lost item%d", i)
		}
	}
	f, _ = addCuckoo(t, f, []byte("item7"))
	if c := f.Count([]byte("item7")); c < 2 {
		t.Fatalf("count %d after adding twice", c)
	}
	for i := range 5000 {
		if !f.Delete([]byte(fmt.Sprint("item", i))) {
			t.Fatalf("delete item%d", i)
		}
	}
	if !f.Exists([]byte("item7")) || f.Items() != 1 || f.Deleted() != 5000 {
		t.Fatalf("after deletes: exists %v, %d items, %d deleted", f.Exists([]byte("item7")), f.Items(), f.Deleted())
	}
	// Full: no growth left.
	small := newCuckoo(4, 2, 5, 0)
	for i := 0; ; i++ {
		if small, err = addCuckoo(t, small, []byte(fmt.Sprint(i))); err != nil {
			if err != ErrCuckooFull || small.Filters() != CuckooMaxFilters {
				t.Fatalf("after %d: %v with %d filters", i, err, small.Filters())
			}
			break
		}
	}
}

// TestCMSBound is issue 39's acceptance: Count-Min's overestimate stays
// within epsilon·N except with probability delta.
func TestCMSBound(t *testing.T) {
	const eps, delta = 0.001, 0.01
	w, d := CMSDims(eps, delta)
	if w != 2000 || d != 7 {
		t.Fatalf("dims %d x %d", w, d)
	}
	s := InitCMS(make([]byte, CMSSize(w, d)), w, d)
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rng, 1.1, 1, 100000)
	truth := map[uint64]uint64{}
	const n = 500000
	for range n {
		v := zipf.Uint64()
		truth[v]++
		s.Incr([]byte(strconv.FormatUint(v, 10)), 1)
	}
	if s.Count() != n {
		t.Fatalf("count %d", s.Count())
	}
	over := 0
	queried := 0
	for v := range uint64(100001) {
		est := s.Query([]byte(strconv.FormatUint(v, 10)))
		if est < truth[v] {
			t.Fatalf("%d: estimate %d under the true %d", v, est, truth[v])
		}
		if float64(est-truth[v]) > eps*n {
			over++
		}
		queried++
	}
	if rate := float64(over) / float64(queried); rate > delta {
		t.Errorf("%.4f of estimates over eps·N, more than delta %.2f", rate, delta)
	}
	t.Logf("%d of %d estimates beyond eps·N", over, queried)
}

// TestTopKZipf is issue 39's acceptance: Top-K finds the true top 10 of a
// Zipf stream.
func TestTopKZipf(t *testing.T) {
	tk := TopK(InitTopK(make([]byte, TopKSize(10, 1000, 5)), 10, 1000, 5, 0.9))
	rng := rand.New(rand.NewPCG(3, 4))
	zipf := rand.NewZipf(rng, 1.2, 1, 1_000_000)
	truth := map[string]int{}
	for range 1_000_000 {
		item := []byte("item:" + strconv.FormatUint(zipf.Uint64(), 10))
		truth[string(item)]++
		if c := tk.Add(item, 1); c.Enter {
			tk = tk.Enter(nil, item, c)
		}
	}
	keys := make([]string, 0, len(truth))
	for k := range truth {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return truth[b] - truth[a] })
	var got []string
	for _, i := range tk.Ranked() {
		got = append(got, string(tk.Item(i)))
	}
	want := keys[:10]
	for _, k := range want {
		if !slices.Contains(got, k) {
			t.Errorf("true top-10 item %s (%d) missing from %v", k, truth[k], got)
		}
	}
	if got[0] != want[0] {
		t.Errorf("first %s, want %s", got[0], want[0])
	}
}

// TestTDigestRankError is issue 39's acceptance: quantiles within 1% rank
// error at p50, p99 and p99.9 on 1M samples.
func TestTDigestRankError(t *testing.T) {
	const n = 1_000_000
	td := InitTDigest(make([]byte, TDigestSize(100)), 100)
	rng := rand.New(rand.NewPCG(5, 6))
	samples := make([]float64, n)
	var scratch []Centroid
	for i := range samples {
		samples[i] = rng.ExpFloat64() * 100 // skewed, as latencies are
		scratch = td.Add(samples[i], 1, scratch)
	}
	slices.Sort(samples)
	s := td.Summary(nil)
	if s.Total != n || s.Min != samples[0] || s.Max != samples[n-1] {
		t.Fatalf("total %v min %v max %v", s.Total, s.Min, s.Max)
	}
	for _, q := range []float64{0.5, 0.99, 0.999} {
		v := s.Quantile(q)
		rank, _ := slices.BinarySearch(samples, v)
		if e := math.Abs(float64(rank)/n - q); e > 0.01*q {
			t.Errorf("p%v: value %v has rank %.5f", q*100, v, float64(rank)/n)
		} else {
			t.Logf("p%v: rank error %.6f", q*100, e)
		}
	}
}

// TestTDigestPages: the TDIGEST pages' examples and go-redis's spec.
func TestTDigestPages(t *testing.T) {
	td := InitTDigest(make([]byte, TDigestSize(100)), 100)
	for v := 10.0; v <= 100; v += 10 {
		td.Add(v, 1, nil)
	}
	s := td.Summary(nil)
	check := func(what string, got, want float64) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	check("quantile 0.1", s.Quantile(0.1), 20)
	check("quantile 0.2", s.Quantile(0.2), 30)
	check("cdf 15", s.CDF(15), 0.1)
	check("cdf 35", s.CDF(35), 0.3)
	check("cdf 70", s.CDF(70), 0.65)
	check("rank 10", float64(s.Rank(10)), 0)
	check("rank 20", float64(s.Rank(20)), 1)
	check("revrank 10", float64(s.RevRank(10)), 9)
	check("revrank 20", float64(s.RevRank(20)), 8)
	check("byrank 2", s.ValueAt(2), 30)
	check("byrevrank 0", s.ValueAt(s.Total-1), 100)
	check("byrevrank 2", s.ValueAt(s.Total-3), 80)
	check("trimmed mean", s.TrimmedMean(0.1, 0.6), 40)
	// TDIGEST.RANK's page: 10..60, ranks -1 0 1 2 3 4 5 6.
	td = InitTDigest(make([]byte, TDigestSize(1000)), 1000)
	for v := 10.0; v <= 60; v += 10 {
		td.Add(v, 1, nil)
	}
	s = td.Summary(nil)
	for i, x := range []float64{0, 10, 20, 30, 40, 50, 60, 70} {
		check(fmt.Sprint("rank ", x), float64(s.Rank(x)), float64(i-1))
		check(fmt.Sprint("revrank ", x), float64(s.RevRank(x)), float64(6-i))
	}
	// TDIGEST.BYRANK's page: 1 2 2 3 3 3 4 4 4 4 5 5 5 5 5.
	td = InitTDigest(make([]byte, TDigestSize(1000)), 1000)
	want := []float64{1, 2, 2, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5}
	for _, v := range want {
		td.Add(v, 1, nil)
	}
	s = td.Summary(nil)
	for r, v := range want {
		check(fmt.Sprint("byrank ", r), s.ValueAt(float64(r)), v)
	}
	// TDIGEST.TRIMMED_MEAN's page: 1..10.
	td = InitTDigest(make([]byte, TDigestSize(1000)), 1000)
	for v := 1.0; v <= 10; v++ {
		td.Add(v, 1, nil)
	}
	s = td.Summary(nil)
	check("trimmed 0.1 0.6", s.TrimmedMean(0.1, 0.6), 4)
	check("trimmed 0.3 0.9", s.TrimmedMean(0.3, 0.9), 6.5)
	check("trimmed 0 1", s.TrimmedMean(0, 1), 5.5)
}
