// Package benchstat is the statistics every benchmark tool in bench/ and
// cmd/keyhive-bench reports: per row, the median of the per-round ratios
// keyhive/redis with their range, and beside it the noise floor, a second
// redis-server against the first in the same rounds.
//
// A ratio is only taken between two servers measured in the same round,
// back to back: on a machine where one server varies 2x between rounds, a
// ratio of two medians can pair a good round of one with a bad round of the
// other. Summaries across rows (the geometric mean) are taken per round too,
// then their median across rounds.
package benchstat

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The servers of a round. Redis2 is a second redis-server, started like the
// first and measured in the same rounds: Redis2/Redis is what a ratio looks
// like when both sides are the same program, the noise floor.
const (
	Redis   = "redis"
	Keyhive = "keyhive"
	Redis2  = "redis2"
)

// Order is the order the servers run in during round (counted from 1):
// redis-server is always in the middle, so Keyhive and the second
// redis-server are each compared with a run next to theirs, and they swap
// sides every round, since the run after another one can be slower whichever
// server it is.
func Order(round int) []string {
	if round%2 == 1 {
		return []string{Keyhive, Redis, Redis2}
	}
	return []string{Redis2, Redis, Keyhive}
}

// Spread is the median and range of some values (ratios, or one server's
// measurements over the rounds). N is 0 when there were none.
type Spread struct {
	Median, Min, Max float64
	N                int
}

// Summarize is the Spread of xs, ignoring NaNs; the median of an even count
// is the mean of the middle two.
func Summarize(xs []float64) Spread {
	v := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return Spread{}
	}
	slices.Sort(v)
	m := v[len(v)/2]
	if len(v)%2 == 0 {
		m = (v[len(v)/2-1] + m) / 2
	}
	return Spread{Median: m, Min: v[0], Max: v[len(v)-1], N: len(v)}
}

// Table gathers measurements: rows named by label values, each measured on
// the servers in rounds, each measurement carrying one value per metric.
// NaN is a missing value (a failed run, or a metric a round did not
// measure).
type Table struct {
	Labels  []string // names of the label columns
	Metrics []string // names of the measured values
	rows    []*row
}

type row struct {
	labels []string
	// values[metric][server][round]
	values []map[string]map[int]float64
}

// New is an empty table.
func New(labels, metrics []string) *Table {
	return &Table{Labels: labels, Metrics: metrics}
}

// Add records the values (one per metric, in order) of the row with these
// labels, measured on server in round.
func (t *Table) Add(labels []string, round int, server string, values ...float64) {
	if len(labels) != len(t.Labels) || len(values) != len(t.Metrics) {
		panic(fmt.Sprintf("benchstat: Add with %d labels and %d values, table has %d and %d", len(labels), len(values), len(t.Labels), len(t.Metrics)))
	}
	r := t.find(labels)
	for m, v := range values {
		byServer := r.values[m][server]
		if byServer == nil {
			byServer = map[int]float64{}
			r.values[m][server] = byServer
		}
		byServer[round] = v
	}
}

func (t *Table) find(labels []string) *row {
	for _, r := range t.rows {
		if slices.Equal(r.labels, labels) {
			return r
		}
	}
	r := &row{labels: slices.Clone(labels), values: make([]map[string]map[int]float64, len(t.Metrics))}
	for m := range r.values {
		r.values[m] = map[string]map[int]float64{}
	}
	t.rows = append(t.rows, r)
	return r
}

// Cell is one row's figures for one metric.
type Cell struct {
	Redis, Keyhive Spread // each server's values over the rounds
	Ratio          Spread // keyhive/redis per round
	Floor          Spread // redis2/redis per round
}

// Row is one row's figures, a Cell per metric.
type Row struct {
	Labels []string
	Cells  []Cell
}

// Rows computes every row's figures, in the order rows were first added.
func (t *Table) Rows() []Row {
	out := make([]Row, len(t.rows))
	for i, r := range t.rows {
		out[i] = Row{Labels: r.labels, Cells: make([]Cell, len(t.Metrics))}
		for m, byServer := range r.values {
			out[i].Cells[m] = Cell{
				Redis:   Summarize(values(byServer[Redis])),
				Keyhive: Summarize(values(byServer[Keyhive])),
				Ratio:   Summarize(ratios(byServer[Keyhive], byServer[Redis])),
				Floor:   Summarize(ratios(byServer[Redis2], byServer[Redis])),
			}
		}
	}
	return out
}

func values(byRound map[int]float64) []float64 {
	out := make([]float64, 0, len(byRound))
	for _, v := range byRound {
		out = append(out, v)
	}
	return out
}

// ratios is num/den of every round both measured with a positive
// denominator.
func ratios(num, den map[int]float64) []float64 {
	var out []float64
	for round, d := range den {
		n, ok := num[round]
		if ok && d > 0 && !math.IsNaN(n) && !math.IsNaN(d) {
			out = append(out, n/d)
		}
	}
	return out
}

// Geomean is a metric's geometric mean over rows, taken per round: in each
// round the geometric mean of every included row's ratio, then the Spread of
// those over the rounds. Rows that lack a ratio in some round where
// another row has one are left out (Rows counts the rows included), so that
// every round's mean covers the same rows.
type Geomean struct {
	Ratio, Floor Spread
	Rows         int
}

// Geomean computes metric m's Geomean.
func (t *Table) Geomean(m int) Geomean {
	ratio, n := t.geomean(m, Keyhive)
	floor, _ := t.geomean(m, Redis2)
	return Geomean{Ratio: ratio, Floor: floor, Rows: n}
}

func (t *Table) geomean(m int, server string) (Spread, int) {
	perRow := make([]map[int]float64, 0, len(t.rows))
	rounds := map[int]bool{}
	for _, r := range t.rows {
		q := map[int]float64{}
		num, den := r.values[m][server], r.values[m][Redis]
		for round, d := range den {
			if n, ok := num[round]; ok && d > 0 && n > 0 {
				q[round] = n / d
				rounds[round] = true
			}
		}
		perRow = append(perRow, q)
	}
	var included []map[int]float64
	for _, q := range perRow {
		if len(q) == len(rounds) && len(q) > 0 {
			included = append(included, q)
		}
	}
	if len(included) == 0 {
		return Spread{}, 0
	}
	var means []float64
	for round := range rounds {
		sum := 0.0
		for _, q := range included {
			sum += math.Log(q[round])
		}
		means = append(means, math.Exp(sum/float64(len(included))))
	}
	return Summarize(means), len(included)
}

// Options shapes Markdown's table.
type Options struct {
	Values  bool // each server's median beside the ratios
	Geomean bool // a last row with every metric's geometric mean
}

// Markdown writes the table: label columns, then per metric (with
// Options.Values) redis-server's and Keyhive's medians over the rounds,
// keyhive/redis as "median (min-max)" of the per-round ratios, and the noise
// floor redis2/redis the same way.
func (t *Table) Markdown(w io.Writer, opt Options) {
	var b strings.Builder
	header := slices.Clone(t.Labels)
	for _, m := range t.Metrics {
		if opt.Values {
			header = append(header, strings.TrimSpace("redis "+m), strings.TrimSpace("keyhive "+m))
		}
		header = append(header, prefix(m, len(t.Metrics))+"keyhive/redis", prefix(m, len(t.Metrics))+"noise floor redis/redis")
	}
	b.WriteString("| " + strings.Join(header, " | ") + " |\n|")
	for i := range header {
		if i < len(t.Labels) {
			b.WriteString("---|")
		} else {
			b.WriteString("---:|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.Rows() {
		cells := slices.Clone(r.Labels)
		for _, c := range r.Cells {
			if opt.Values {
				cells = append(cells, FormatValue(c.Redis), FormatValue(c.Keyhive))
			}
			cells = append(cells, FormatRatio(c.Ratio), FormatRatio(c.Floor))
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	if opt.Geomean && len(t.Labels) > 0 {
		cells := make([]string, len(t.Labels))
		cells[0] = "geometric mean"
		for m := range t.Metrics {
			g := t.Geomean(m)
			if opt.Values {
				cells = append(cells, "", "")
			}
			rows := "rows"
			if g.Rows == 1 {
				rows = "row"
			}
			cells = append(cells, fmt.Sprintf("%s over %d %s", FormatRatio(g.Ratio), g.Rows, rows), FormatRatio(g.Floor))
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	io.WriteString(w, b.String())
}

// prefix names the metric in a ratio column's header when there are several.
func prefix(metric string, metrics int) string {
	if metrics == 1 {
		return ""
	}
	return metric + " "
}

// FormatRatio is "median (min-max)", or "median" when the range rounds to
// one value, or
// "n/a" when there were none.
func FormatRatio(s Spread) string {
	if s.N == 0 {
		return "n/a"
	}
	lo, hi := fmt.Sprintf("%.2f", s.Min), fmt.Sprintf("%.2f", s.Max)
	if lo == hi {
		return fmt.Sprintf("%.2f", s.Median)
	}
	return fmt.Sprintf("%.2f (%s-%s)", s.Median, lo, hi)
}

// FormatValue is a server's median with as many digits as its size needs
// (none for whole numbers, such as counts), or "FAILED" when no round
// measured it.
func FormatValue(s Spread) string {
	if s.N == 0 {
		return "FAILED"
	}
	v := s.Median
	switch a := math.Abs(v); {
	case a >= 1000 || v == math.Trunc(v):
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// Read parses the tab-separated form the shell scripts write: a header line
// naming the label columns, then "round", "server", then the metrics; then
// one line per row, round and server. A value that does not parse as a
// number ("NA", "") is missing.
func Read(r io.Reader) (*Table, error) {
	sc := bufio.NewScanner(r)
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("benchstat: no header line")
	}
	header := strings.Split(sc.Text(), "\t")
	roundCol := slices.Index(header, "round")
	if roundCol < 0 || roundCol+2 >= len(header) || header[roundCol+1] != "server" {
		return nil, fmt.Errorf("benchstat: header %q: want label columns, round, server, then at least one metric", sc.Text())
	}
	t := New(header[:roundCol], header[roundCol+2:])
	for line := 2; sc.Scan(); line++ {
		if sc.Text() == "" {
			continue
		}
		f := strings.Split(sc.Text(), "\t")
		if len(f) != len(header) {
			return nil, fmt.Errorf("benchstat: line %d has %d fields, the header %d", line, len(f), len(header))
		}
		round, err := strconv.Atoi(f[roundCol])
		if err != nil {
			return nil, fmt.Errorf("benchstat: line %d: round %q", line, f[roundCol])
		}
		vals := make([]float64, len(t.Metrics))
		for i, s := range f[roundCol+2:] {
			if vals[i], err = strconv.ParseFloat(s, 64); err != nil {
				vals[i] = math.NaN()
			}
		}
		t.Add(f[:roundCol], round, f[roundCol+1], vals...)
	}
	return t, sc.Err()
}
