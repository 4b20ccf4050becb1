package server

import "testing"

// TestHistogramBuckets: every value up to a second falls in the bucket
// whose range holds it (HdrHistogram's layout at 2 significant digits: the
// highest value of a bucket is below the next bucket's lowest), and the
// percentiles come out as Redis prints them for one sample.
func TestHistogramBuckets(t *testing.T) {
	for ns := int64(1); ns <= histMaxNs; ns += 1 + ns/97 {
		i := histIndex(ns)
		if i >= histBuckets || histHighest(i) < ns || (i > 0 && histHighest(i-1) >= ns) {
			t.Fatalf("%d ns: bucket %d, up to %d", ns, i, histHighest(i))
		}
	}
	if got := histHighest(histIndex(231000)); got != 231423 {
		t.Errorf("231000 ns reported as %d, Redis 231423", got)
	}
	var h latencyHistogram
	h.record(8200)
	var counts [histBuckets]int64
	total := h.snapshot(&counts)
	if p := percentile(&counts, total, 50); p != 8255 {
		t.Errorf("p50 of 8200 ns: %d, want 8255", p)
	}
	if got := trimmedPercentile(99.9) + "," + trimmedPercentile(50) + "," + trimmedPercentile(0.0000001); got != "99.9,50,0" {
		t.Errorf("percentile names %s", got)
	}
}
