package server_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/internal/version"
)

// sameHistogramShape compares LATENCY HISTOGRAM replies by shape: the same
// commands with the same calls, and for each a map of microsecond buckets
// (powers of two as Redis labels them) to growing cumulative counts ending
// at the calls.
func sameHistogramShape(r, k difftest.Reply) error {
	if r.IsError() || k.IsError() || r.Kind != k.Kind {
		return difftest.Exact(r, k)
	}
	commands := func(m difftest.Reply) (map[string]int64, error) {
		out := map[string]int64{}
		for i := 0; i+1 < len(m.Elems); i += 2 {
			h := m.Elems[i+1]
			if len(h.Elems) != 4 || h.Elems[0].Str != "calls" || h.Elems[2].Str != "histogram_usec" {
				return nil, fmt.Errorf("%s: not calls and histogram_usec: %s", m.Elems[i].Str, h.Raw)
			}
			calls, rows := h.Elems[1].Int, h.Elems[3].Elems
			var last int64
			for j := 0; j+1 < len(rows); j += 2 {
				if rows[j+1].Int <= last {
					return nil, fmt.Errorf("%s: counts do not grow: %s", m.Elems[i].Str, h.Raw)
				}
				last = rows[j+1].Int
			}
			if last != calls {
				return nil, fmt.Errorf("%s: histogram ends at %d of %d calls", m.Elems[i].Str, last, calls)
			}
			out[m.Elems[i].Str] = calls
		}
		return out, nil
	}
	rc, err := commands(r)
	if err != nil {
		return fmt.Errorf("redis: %v", err)
	}
	kc, err := commands(k)
	if err != nil {
		return fmt.Errorf("keyhive: %v", err)
	}
	if fmt.Sprint(rc) != fmt.Sprint(kc) {
		return fmt.Errorf("commands and calls %v, redis %v", kc, rc)
	}
	return nil
}

// TestLatencyHistogram: LATENCY HISTOGRAM for all commands, named ones
// (unknown names skipped, a container bringing its subcommands, full
// subcommand names), off under latency-tracking no, cleared by RESETSTAT.
func TestLatencyHistogram(t *testing.T) {
	p := difftest.StartIsolated(t)
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		p.Do("CONFIG", "RESETSTAT")
		for range 5 {
			p.Do("SET", "k", "v")
		}
		p.Do("GET", "k")
		p.Do("CONFIG", "GET", "maxmemory")
		p.DoCompare(sameHistogramShape, "LATENCY", "HISTOGRAM", "set", "GET", "nosuch")
		p.DoCompare(sameHistogramShape, "LATENCY", "HISTOGRAM", "config")
		p.DoCompare(sameHistogramShape, "LATENCY", "HISTOGRAM", "config|get")
		p.Do("BLPOP", "nolist", "0.05") // timed out: counted at its timeout
		p.Do("RPUSH", "list", "a")
		p.Do("BLPOP", "list", "1") // served at once
		b := p.NewConn()
		b.Send("BLPOP", "later", 0) // served when a push comes
		time.Sleep(50 * time.Millisecond)
		p.Do("RPUSH", "later", "a")
		b.Read()
		p.DoCompare(sameHistogramShape, "LATENCY", "HISTOGRAM", "blpop", "rpush")
		p.Do("LATENCY", "HISTOGRAM", "nosuch")
		p.Do("CONFIG", "RESETSTAT")
		p.Do("PING")
		p.DoCompare(sameHistogramShape, "LATENCY", "HISTOGRAM")
		p.Do("CONFIG", "SET", "latency-tracking", "no")
		p.Do("GET", "k")
		p.DoCompare(sameHistogramShape, "LATENCY", "HISTOGRAM", "get")
		p.Do("CONFIG", "SET", "latency-tracking", "yes")
	}
}

// TestLatencyMonitor: with latency-monitor-threshold 0 nothing is recorded
// and DOCTOR says so in Redis's words; with a threshold a command that
// takes longer (DEBUG SLEEP) is recorded as "command", LATEST and HISTORY
// report it, GRAPH draws it (its chart is our own), RESET forgets it.
//
// On a loaded machine other events pass a threshold too, on either side
// (an 18 ms expire-cycle at a load of 30): the threshold is 100 ms, above
// what a stall makes of a quick command, and the comparisons keep to the
// DEBUG SLEEP's event.
func TestLatencyMonitor(t *testing.T) {
	p := difftest.StartIsolated(t)
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		p.Do("CONFIG", "SET", "latency-monitor-threshold", "0")
		p.Do("LATENCY", "RESET")
		p.Do("CONFIG", "GET", "latency-monitor-threshold")
		p.Do("DEBUG", "SLEEP", "0.15")
		p.Do("LATENCY", "LATEST")
		p.Do("LATENCY", "HISTORY", "command")
		p.Do("LATENCY", "GRAPH", "command")
		p.Do("LATENCY", "DOCTOR")
		p.Do("CONFIG", "SET", "latency-monitor-threshold", "100")
		p.DoDifferent("DOCTOR says in our own words that nothing was recorded", "LATENCY", "DOCTOR")
		p.Do("DEBUG", "SLEEP", "0.15")
		p.DoCompare(sameLatencyEvents, "LATENCY", "LATEST")
		p.DoCompare(sameLatencyEvents, "LATENCY", "HISTORY", "command")
		p.Do("LATENCY", "HISTORY", "nosuch")
		p.Do("LATENCY", "GRAPH", "nosuch")
		r, k := p.DoDifferent("the chart under GRAPH's title is our own drawing", "LATENCY", "GRAPH", "command")
		for _, g := range []difftest.Reply{r, k} {
			if !strings.HasPrefix(g.Str, "command - high ") || !strings.Contains(g.Str, "\n"+strings.Repeat("-", 80)+"\n") {
				t.Fatalf("GRAPH: %q", g.Str)
			}
		}
		p.DoDifferent("DOCTOR describes the events in our own words", "LATENCY", "DOCTOR")
		p.Do("LATENCY", "RESET", "nosuch")
		p.Do("LATENCY", "RESET", "COMMAND", "command")
		p.DoCompare(sameLatencyEvents, "LATENCY", "LATEST")
		p.Do("CONFIG", "SET", "latency-monitor-threshold", "0")
		// What the load recorded, if anything, goes; then nothing is left.
		p.DoCompare(bothIntegers, "LATENCY", "RESET")
		p.Do("LATENCY", "LATEST")
	}
}

func bothIntegers(r, k difftest.Reply) error {
	if r.Kind != difftest.KindInt || k.Kind != difftest.KindInt {
		return difftest.Exact(r, k)
	}
	return nil
}

// sameLatencyEvents compares LATEST and HISTORY by shape: the same events
// and number of samples, times within 5 s, latencies at least the
// threshold the test set (100 ms).
func sameLatencyEvents(r, k difftest.Reply) error {
	// Only the DEBUG SLEEP's event is compared: on a loaded machine any
	// other command may pass the threshold too, on either side.
	r, k = sleepEvents(r), sleepEvents(k)
	if r.IsError() || k.IsError() || len(r.Elems) != len(k.Elems) {
		return difftest.Exact(r, k)
	}
	for i := range r.Elems {
		re, ke := r.Elems[i].Elems, k.Elems[i].Elems
		if len(re) != len(ke) {
			return fmt.Errorf("sample %d: %s, redis %s", i, k.Elems[i].Raw, r.Elems[i].Raw)
		}
		off := 0
		if len(re) == 4 { // LATEST: name, time, latency, max
			if re[0].Str != ke[0].Str {
				return fmt.Errorf("event %q, redis %q", ke[0].Str, re[0].Str)
			}
			off = 1
		}
		if d := ke[off].Int - re[off].Int; d < -5 || d > 5 {
			return fmt.Errorf("sample %d: time %d, redis %d", i, ke[off].Int, re[off].Int)
		}
		for _, v := range ke[off+1:] {
			if v.Int < 100 {
				return fmt.Errorf("sample %d: latency %d under the threshold", i, v.Int)
			}
		}
	}
	return nil
}

// sleepEvents keeps LATENCY LATEST's "command" row (HISTORY has no names).
func sleepEvents(r difftest.Reply) difftest.Reply {
	var kept []difftest.Reply
	for _, e := range r.Elems {
		if len(e.Elems) != 4 || e.Elems[0].Str == "command" {
			kept = append(kept, e)
		}
	}
	r.Elems = kept
	return r
}

// TestLatencyHelpAndErrors: HELP and the subcommands' arity errors.
func TestLatencyHelpAndErrors(t *testing.T) {
	p := difftest.Start(t)
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		p.Do("LATENCY")
		p.Do("LATENCY", "NOSUCH")
		p.Do("LATENCY", "LATEST", "x")
		p.Do("LATENCY", "HISTORY")
		p.Do("LATENCY", "GRAPH", "a", "b")
		p.Do("LATENCY", "DOCTOR", "x")
	}
}

// oracleLolwutLine is the last line of redis-server's LOLWUT, naming its
// version (7.0.15 or 7.4.1).
var oracleLolwutLine = regexp.MustCompile(`Redis ver\. 7\.(0\.15|4\.1)\n$`)

// TestLolwut: the art is our own; every version's reply ends with a line
// naming Keyhive and Redis's version in the words clients' tests look for
// ("Redis ver."); arguments are checked as Redis checks them.
func TestLolwut(t *testing.T) {
	p := difftest.Start(t)
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		for _, args := range [][]any{{"LOLWUT"}, {"LOLWUT", "VERSION", 5}, {"LOLWUT", "VERSION", 6},
			{"LOLWUT", "VERSION", 5, 10, 2, 3}, {"LOLWUT", "VERSION", 6, 1, 1}, {"LOLWUT", "VERSION", 1}, {"LOLWUT", "x"}} {
			r, k := p.DoDifferent("LOLWUT's art and last line are Keyhive's own", args...)
			last := "Keyhive, Redis ver. " + version.Redis + " compatible\n"
			if r.Kind != k.Kind || !oracleLolwutLine.MatchString(r.Str) ||
				!strings.HasSuffix(k.Str, "\n"+last) && k.Str != last {
				t.Fatalf("%v: %q, redis %q", args, k.Str, r.Str)
			}
		}
		p.Do("LOLWUT", "VERSION", "x")
		p.Do("LOLWUT", "VERSION", 5, "x")
	}
}

// TestLatencyForkEvent: a background save's snapshot instant stands for
// Redis's fork: INFO counts it (total_forks, latest_fork_usec) and CONFIG
// RESETSTAT clears them.
func TestLatencyForkEvent(t *testing.T) {
	p := difftest.StartIsolated(t)
	p.Do("CONFIG", "RESETSTAT")
	p.Do("SET", "k", "v")
	p.Do("BGSAVE")
	forks := regexp.MustCompile(`total_forks:(\d+)`)
	for _, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
		for strings.Contains(c.Do("INFO", "persistence").Str, "rdb_bgsave_in_progress:1") {
		}
		if m := forks.FindStringSubmatch(c.Do("INFO", "stats").Str); m == nil || m[1] != "1" {
			t.Fatalf("%s: total_forks %v", c.Name(), m)
		}
	}
	p.Do("CONFIG", "RESETSTAT")
	p.DoCompare(sameInfoLines("total_forks", nil), "INFO", "stats")
	p.DoCompare(sameInfoLines("latest_fork_usec", nil), "INFO", "stats")
}
