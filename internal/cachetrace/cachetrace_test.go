package cachetrace

import "testing"

// TestReferencesOnKnownCases: with room for every key only the first read
// of each misses; with room for a tenth, Zipf 1.0 hits more under the
// frequency-aware policies than under LRU, as their papers report.
func TestReferencesOnKnownCases(t *testing.T) {
	trace := Zipf(1.0, 1000, 20000, 1)
	distinct := Trace{Keys: trace}.Distinct()
	lru := ExactLRU(trace, 100)
	for _, r := range References {
		if got, want := r.Run(trace, 2000), 1-float64(distinct)/float64(len(trace)); got != want {
			t.Errorf("%s with room for all: %.4f, want %.4f", r.Name, got, want)
		}
		if got := r.Run(trace, 100); r.Name != "exact-lru" && got <= lru {
			t.Errorf("%s at 10%%: %.4f, not above LRU's %.4f", r.Name, got, lru)
		}
	}
}

// TestTracesReadTheirKeys checks the traces' shapes: Zipf's most read key
// is read far more than its median one, QuickLink reads cold codes once.
func TestTracesReadTheirKeys(t *testing.T) {
	for _, tr := range All(10000, 100000, 1) {
		if len(tr.Keys) != 100000 {
			t.Fatalf("%s: %d reads", tr.Name, len(tr.Keys))
		}
		if d := tr.Distinct(); d < 1000 || d > 30000 {
			t.Errorf("%s: %d different keys for 10000 asked", tr.Name, d)
		}
	}
}

func TestVersus(t *testing.T) {
	for _, c := range []struct {
		a, b []float64
		want string
	}{
		{[]float64{10.5}, []float64{10}, "+0.50"},
		{[]float64{11, 12}, []float64{10, 11.5}, "+0.75 [+0.50, +1.00]"},
		{[]float64{11, 12, 13}, []float64{10, 11.5, 12}, "+0.83 [+0.50, +1.00] above"},
		{[]float64{9, 11, 12}, []float64{10, 11.5, 13}, "-0.83 [-1.00, -0.50] below"},
		{[]float64{10.1, 11, 12}, []float64{10, 11.5, 12}, "-0.13 [-0.50, +0.10] noise"},
		{[]float64{10.01, 11, 12}, []float64{10, 11.5, 12.5}, "-0.33 [-0.50, +0.01] noise"},
	} {
		if got := Versus(c.a, c.b); got != c.want {
			t.Errorf("Versus(%v, %v) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
}
