package benchstat

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestSummarize(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want Spread
	}{
		{nil, Spread{}},
		{[]float64{math.NaN()}, Spread{}},
		{[]float64{3, 1, 2}, Spread{Median: 2, Min: 1, Max: 3, N: 3}},
		{[]float64{4, 1, math.NaN(), 2, 3}, Spread{Median: 2.5, Min: 1, Max: 4, N: 4}},
	} {
		if got := Summarize(c.in); got != c.want {
			t.Errorf("Summarize(%v) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

// The ratio is the median of the per-round ratios, not the ratio of the
// medians: here the medians (300 and 200, from different rounds) would give
// 1.50 where every round but one says about 1.04.
func TestRatioIsPerRound(t *testing.T) {
	tb := New([]string{"test"}, []string{"ops/s"})
	redis := []float64{100, 200, 300}
	keyhive := []float64{300, 210, 310}
	redis2 := []float64{110, 190, 300}
	for i := range redis {
		tb.Add([]string{"SET"}, i+1, Redis, redis[i])
		tb.Add([]string{"SET"}, i+1, Keyhive, keyhive[i])
		tb.Add([]string{"SET"}, i+1, Redis2, redis2[i])
	}
	c := tb.Rows()[0].Cells[0]
	if !near(c.Ratio.Median, 1.05) || !near(c.Ratio.Min, 310.0/300) || !near(c.Ratio.Max, 3) || c.Ratio.N != 3 {
		t.Errorf("ratio %+v, want median 1.05 over 1.033-3", c.Ratio)
	}
	if !near(c.Floor.Median, 1) || !near(c.Floor.Min, 0.95) || !near(c.Floor.Max, 1.1) {
		t.Errorf("floor %+v, want median 1 over 0.95-1.1", c.Floor)
	}
	if c.Redis.Median != 200 || c.Keyhive.Median != 300 {
		t.Errorf("server medians %v and %v, want 200 and 300", c.Redis.Median, c.Keyhive.Median)
	}
}

// A round where one server failed (NaN) gives no ratio; the other rounds
// still do.
func TestMissingValues(t *testing.T) {
	tb := New([]string{"test"}, []string{"ops/s", "us/req"})
	tb.Add([]string{"GET"}, 1, Redis, 100, 2)
	tb.Add([]string{"GET"}, 1, Keyhive, math.NaN(), 1)
	tb.Add([]string{"GET"}, 2, Redis, 100, 2)
	tb.Add([]string{"GET"}, 2, Keyhive, 120, 3)
	c := tb.Rows()[0].Cells
	if c[0].Ratio.N != 1 || !near(c[0].Ratio.Median, 1.2) {
		t.Errorf("ops/s ratio %+v, want 1.2 from round 2 only", c[0].Ratio)
	}
	if c[1].Ratio.N != 2 || !near(c[1].Ratio.Median, 1) {
		t.Errorf("us/req ratio %+v, want median 1 of 0.5 and 1.5", c[1].Ratio)
	}
	if c[0].Floor.N != 0 || FormatRatio(c[0].Floor) != "n/a" {
		t.Errorf("floor without redis2 %+v", c[0].Floor)
	}
}

// The geometric mean is taken per round, then the median over the rounds;
// a row missing a round is left out of every round's mean.
func TestGeomeanPerRound(t *testing.T) {
	tb := New([]string{"test"}, []string{"ops/s"})
	perRound := map[string][]float64{"A": {2, 0.5, 1}, "B": {2, 2, 1}}
	for _, name := range []string{"A", "B"} {
		for i, q := range perRound[name] {
			tb.Add([]string{name}, i+1, Redis, 100)
			tb.Add([]string{name}, i+1, Keyhive, 100*q)
			tb.Add([]string{name}, i+1, Redis2, 100)
		}
	}
	tb.Add([]string{"C"}, 1, Redis, 100)
	tb.Add([]string{"C"}, 1, Keyhive, 1000)
	g := tb.Geomean(0)
	// Per round: 2, 1, 1 -> median 1; the geometric mean of the rows'
	// medians (1 and 2) would say 1.41.
	if g.Rows != 2 || !near(g.Ratio.Median, 1) || !near(g.Ratio.Min, 1) || !near(g.Ratio.Max, 2) {
		t.Errorf("geomean %+v, want median 1 over 1-2 from 2 rows", g)
	}
	if !near(g.Floor.Median, 1) || g.Floor.N != 3 {
		t.Errorf("floor geomean %+v", g.Floor)
	}
}

func TestOrderAlternates(t *testing.T) {
	for round := 1; round <= 4; round++ {
		o := Order(round)
		if o[1] != Redis || !slices.Contains(o, Keyhive) || !slices.Contains(o, Redis2) {
			t.Fatalf("round %d: %v, want redis in the middle of all three", round, o)
		}
		if slices.Equal(o, Order(round+1)) {
			t.Errorf("rounds %d and %d run in the same order %v", round, round+1, o)
		}
	}
}

func TestReadAndMarkdown(t *testing.T) {
	in := "test\tpipeline\tround\tserver\tops/s\n" +
		"SET\t16\t1\tkeyhive\t1200\n" +
		"SET\t16\t1\tredis\t1000\n" +
		"SET\t16\t1\tredis2\t1000\n" +
		"SET\t16\t2\tredis2\t900\n" +
		"SET\t16\t2\tredis\t1000\n" +
		"SET\t16\t2\tkeyhive\t1400\n" +
		"GET\t16\t1\tredis\t1000\n" +
		"GET\t16\t1\tkeyhive\tNA\n"
	tb, err := Read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	tb.Markdown(&b, Options{Values: true, Geomean: true})
	want := "| test | pipeline | redis ops/s | keyhive ops/s | keyhive/redis | noise floor redis/redis |\n" +
		"|---|---|---:|---:|---:|---:|\n" +
		"| SET | 16 | 1000 | 1300 | 1.30 (1.20-1.40) | 0.95 (0.90-1.00) |\n" +
		"| GET | 16 | 1000 | FAILED | n/a | n/a |\n" +
		"| geometric mean |  |  |  | 1.30 (1.20-1.40) over 1 row | 0.95 (0.90-1.00) |\n"
	if b.String() != want {
		t.Errorf("Markdown:\n%s\nwant:\n%s", b.String(), want)
	}
	for _, bad := range []string{"", "test\tserver\tops\n", "round\tserver\tv\n1\tredis\n", "round\tserver\tv\nx\tredis\t1\n"} {
		if _, err := Read(strings.NewReader(bad)); err == nil {
			t.Errorf("Read(%q): no error", bad)
		}
	}
}

func TestFormatValue(t *testing.T) {
	for v, want := range map[float64]string{1: "1", 2.5: "2.500", 12.34: "12.3", 123456.7: "123457"} {
		if got := FormatValue(Spread{Median: v, N: 1}); got != want {
			t.Errorf("FormatValue(%v) = %q, want %q", v, got, want)
		}
	}
	if got := FormatValue(Spread{}); got != "FAILED" {
		t.Errorf("FormatValue of nothing = %q", got)
	}
}
