package server

import (
	"fmt"
	"math/bits"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/keyhive/keyhive/cmdspec"
)

// Latency: the latency monitor (LATENCY LATEST, HISTORY, GRAPH, DOCTOR,
// RESET), which keeps the recent spikes of named events over
// latency-monitor-threshold milliseconds, and the per-command latency
// histograms (LATENCY HISTOGRAM, INFO latencystats) kept under
// latency-tracking.

func init() {
	bindSub("latency", "latest", latencyLatest)
	bindSub("latency", "history", latencyHistory)
	bindSub("latency", "reset", latencyReset)
	bindSub("latency", "doctor", latencyDoctor)
	bindSub("latency", "graph", latencyGraph)
	bindSub("latency", "histogram", latencyHistogramCommand)
	bindSub("latency", "help", latencyHelp)
}

// latencyHistoryLen is how many spikes an event keeps (Redis's 160).
const latencyHistoryLen = 160

// The events the server records, named as Redis names them.
const (
	eventCommand       = "command"        // a command slower than the threshold
	eventFastCommand   = "fast-command"   // the same, for a command flagged fast
	eventExpireCycle   = "expire-cycle"   // one active expiry cycle
	eventEvictionCycle = "eviction-cycle" // one call that evicts keys
	eventEvictionDel   = "eviction-del"   // finding and deleting one key
	eventFork          = "fork"           // a background save's snapshot instant
)

// latencyMonitor holds the events' recent spikes.
type latencyMonitor struct {
	mu     sync.Mutex
	events map[string]*latencySeries
}

// latencySeries is one event's spikes, one per second at most (the highest
// of that second), in a ring.
type latencySeries struct {
	samples [latencyHistoryLen]latencySample
	next    int   // where the next sample goes
	max     int64 // the highest spike since the event was first seen
}

type latencySample struct {
	unix, ms int64 // the second it happened, and how long it took
}

// noteLatency records that event took ms milliseconds, when that reaches
// latency-monitor-threshold (0 turns the monitor off).
func (s *Server) noteLatency(event string, ms int64) {
	if th := s.cfg.LatencyMonitorThreshold(); th == 0 || ms < th {
		return
	}
	now := time.Now().Unix()
	l := &s.latency
	l.mu.Lock()
	defer l.mu.Unlock()
	ts := l.events[event]
	if ts == nil {
		if l.events == nil {
			l.events = map[string]*latencySeries{}
		}
		ts = &latencySeries{}
		l.events[event] = ts
	}
	ts.max = max(ts.max, ms)
	if prev := &ts.samples[(ts.next+latencyHistoryLen-1)%latencyHistoryLen]; prev.unix == now {
		prev.ms = max(prev.ms, ms)
		return
	}
	ts.samples[ts.next] = latencySample{now, ms}
	ts.next = (ts.next + 1) % latencyHistoryLen
}

// commandRan feeds a command that ran for elapsed ns to the monitor and,
// unless it blocked (counted when served), to its latency histogram.
func (s *Server) commandRan(cmd *Command, elapsed int64, blocked bool) {
	if !blocked && s.cfg.LatencyTracking() {
		s.cmdStats[cmd.id].latencyHistogram().record(elapsed)
	}
	if s.cfg.LatencyMonitorThreshold() > 0 {
		event := eventCommand
		if cmd.Flags&cmdspec.FlagFast != 0 {
			event = eventFastCommand
		}
		s.noteLatency(event, elapsed/int64(time.Millisecond))
	}
}

// samples returns the series' spikes, oldest first.
func (ts *latencySeries) ordered() []latencySample {
	var out []latencySample
	for j := range latencyHistoryLen {
		if smp := ts.samples[(ts.next+j)%latencyHistoryLen]; smp.unix != 0 {
			out = append(out, smp)
		}
	}
	return out
}

func latencyLatest(x *Ctx) {
	l := &x.s.latency
	l.mu.Lock()
	defer l.mu.Unlock()
	x.W.Array(len(l.events))
	for name, ts := range l.events {
		last := ts.samples[(ts.next+latencyHistoryLen-1)%latencyHistoryLen]
		x.W.Array(4)
		x.W.BulkString(name)
		x.W.Int(last.unix)
		x.W.Int(last.ms)
		x.W.Int(ts.max)
	}
}

func latencyHistory(x *Ctx) {
	l := &x.s.latency
	l.mu.Lock()
	defer l.mu.Unlock()
	var samples []latencySample
	if ts := l.events[string(x.Args[2])]; ts != nil {
		samples = ts.ordered()
	}
	x.W.Array(len(samples))
	for _, smp := range samples {
		x.W.Array(2)
		x.W.Int(smp.unix)
		x.W.Int(smp.ms)
	}
}

// latencyReset forgets the named events (case-insensitively), or all of
// them, replying how many it forgot.
func latencyReset(x *Ctx) {
	l := &x.s.latency
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for name := range l.events {
		if len(x.Args) == 2 {
			delete(l.events, name)
			n++
			continue
		}
		for _, a := range x.Args[2:] {
			if strings.EqualFold(name, string(a)) {
				delete(l.events, name)
				n++
				break
			}
		}
	}
	x.W.Int(int64(n))
}

// latencyGraph draws an event's spikes: Redis's title line, then our own
// chart, a column per spike (oldest on the left) of up to 4 rows scaled
// between the lowest and highest spike, labelled with its age.
func latencyGraph(x *Ctx) {
	l := &x.s.latency
	l.mu.Lock()
	ts := l.events[string(x.Args[2])]
	var samples []latencySample
	var allTime int64
	if ts != nil {
		samples, allTime = ts.ordered(), ts.max
	}
	l.mu.Unlock()
	if ts == nil {
		x.W.Error("ERR No samples available for event '" + string(x.Args[2]) + "'")
		return
	}
	lo, hi := samples[0].ms, samples[0].ms
	for _, smp := range samples {
		lo, hi = min(lo, smp.ms), max(hi, smp.ms)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s - high %d ms, low %d ms (all time high %d ms)\n", x.Args[2], hi, lo, allTime)
	b.WriteString(strings.Repeat("-", 80) + "\n")
	if len(samples) > 80 {
		samples = samples[len(samples)-80:]
	}
	const rows = 4
	for row := rows; row >= 1; row-- {
		for _, smp := range samples {
			height := rows
			if hi > lo {
				height = 1 + int((smp.ms-lo)*(rows-1)/(hi-lo))
			}
			if height >= row {
				b.WriteByte('#')
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteByte('\n')
	}
	now := time.Now().Unix()
	labels := make([]string, len(samples))
	longest := 0
	for i, smp := range samples {
		labels[i] = latencyAge(now - smp.unix)
		longest = max(longest, len(labels[i]))
	}
	for row := range longest {
		for _, lb := range labels {
			if row < len(lb) {
				b.WriteByte(lb[row])
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteByte('\n')
	}
	x.W.Verbatim("txt", b.String())
}

// latencyAge writes how long ago a spike was, as Redis's graph labels do.
func latencyAge(secs int64) string {
	switch {
	case secs < 60:
		return strconv.FormatInt(secs, 10) + "s"
	case secs < 3600:
		return strconv.FormatInt(secs/60, 10) + "m"
	case secs < 86400:
		return strconv.FormatInt(secs/3600, 10) + "h"
	}
	return strconv.FormatInt(secs/86400, 10) + "d"
}

// latencyDoctor reports the events in words: Redis's answer when the
// monitor is off and never recorded anything, else our own summary.
func latencyDoctor(x *Ctx) {
	l := &x.s.latency
	l.mu.Lock()
	defer l.mu.Unlock()
	threshold := x.s.cfg.LatencyMonitorThreshold()
	if len(l.events) == 0 && threshold == 0 {
		x.W.Verbatim("txt", "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n")
		return
	}
	if len(l.events) == 0 {
		x.W.Verbatim("txt", fmt.Sprintf("No event has taken %d ms or more since the latency monitor was last reset.\n", threshold))
		return
	}
	names := make([]string, 0, len(l.events))
	for name := range l.events {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "Events that took %d ms or more (latency-monitor-threshold):\n\n", threshold)
	for i, name := range names {
		samples := l.events[name].ordered()
		var sum int64
		for _, smp := range samples {
			sum += smp.ms
		}
		fmt.Fprintf(&b, "%d. %s: %d spikes in the last %d seconds, average %d ms, highest %d ms (all time).\n",
			i+1, name, len(samples), time.Now().Unix()-samples[0].unix, sum/int64(len(samples)), l.events[name].max)
		b.WriteString("   " + latencyAdvice(name) + "\n")
	}
	x.W.Verbatim("txt", b.String())
}

// latencyAdvice says where to look for an event's cause.
func latencyAdvice(event string) string {
	switch event {
	case eventCommand, eventFastCommand:
		return "Slow commands: SLOWLOG GET lists them; LATENCY HISTOGRAM shows each command's distribution."
	case eventExpireCycle:
		return "Many keys expiring at once: spread their expire times."
	case eventEvictionCycle, eventEvictionDel:
		return "Eviction over maxmemory: raise maxmemory or lower the write rate."
	case eventFork:
		return "Background saves pause commands while they take their snapshot: save less often."
	}
	return "Disk writes of the append-only file: a faster disk, or appendfsync everysec."
}

func latencyHelp(x *Ctx) {
	writeHelp(x, "LATENCY", []string{
		"DOCTOR", "    Return a human readable latency analysis report.",
		"GRAPH <event>", "    Return an ASCII latency graph for the <event> class.",
		"HISTORY <event>", "    Return time-latency samples for the <event> class.",
		"LATEST", "    Return the latest latency samples for all events.",
		"RESET [<event> ...]", "    Reset latency data of one or more <event> classes.",
		"    (default: reset all data for all event classes)",
		"HISTOGRAM [COMMAND ...]", "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
		"    If no commands are specified then all histograms are replied.",
	})
}

// Per-command latency histograms. Redis keeps an HdrHistogram per command
// (1 ns to 1 s, 2 significant digits); this one has the same buckets, so
// percentiles and LATENCY HISTOGRAM's rows come out at the same values:
// below 256 ns a bucket per nanosecond, then for each power of two 128
// buckets, each 2^k ns wide.
const (
	histMaxNs   = int64(time.Second)
	histBuckets = 128*22 + 256 // index of histMaxNs, plus one
)

// latencyHistogram is recorded with one atomic add per command; its total
// is summed when read.
type latencyHistogram struct {
	counts [histBuckets]atomic.Int64
}

// histIndex is the bucket of ns (1 <= ns <= histMaxNs).
func histIndex(ns int64) int {
	shift := bits.Len64(uint64(ns)) - 8
	if shift <= 0 {
		return int(ns)
	}
	return 128*shift + int(ns>>shift)
}

// histHighest is the highest value bucket i holds.
func histHighest(i int) int64 {
	if i < 256 {
		return int64(i)
	}
	shift := i/128 - 1
	return (int64(i-128*shift)+1)<<shift - 1
}

func (h *latencyHistogram) record(ns int64) {
	h.counts[histIndex(min(max(ns, 1), histMaxNs))].Add(1)
}

// snapshot copies the counts and returns their total.
func (h *latencyHistogram) snapshot(counts *[histBuckets]int64) (total int64) {
	for i := range h.counts {
		counts[i] = h.counts[i].Load()
		total += counts[i]
	}
	return total
}

// latencyHistogram is the command's histogram, made at its first record.
func (st *commandStats) latencyHistogram() *latencyHistogram {
	if h := st.latency.Load(); h != nil {
		return h
	}
	st.latency.CompareAndSwap(nil, &latencyHistogram{})
	return st.latency.Load()
}

// percentile is the highest value of the bucket holding the p-th
// percentile of counts, in ns, found as HdrHistogram finds it.
func percentile(counts *[histBuckets]int64, total int64, p float64) int64 {
	want := max(int64(min(p, 100)/100*float64(total)+0.5), 1)
	var seen int64
	for i, n := range counts {
		if seen += n; seen >= want {
			return histHighest(i)
		}
	}
	return 0
}

// writeCDF writes a command's calls and its cumulative counts at 1, 2, 4 ...
// microseconds (Redis's log-2 steps from 1024 ns), a row where the count
// grew.
func (h *latencyHistogram) writeCDF(x *Ctx) {
	var counts [histBuckets]int64
	total := h.snapshot(&counts)
	x.W.Map(2)
	x.W.BulkString("calls")
	x.W.Int(total)
	x.W.BulkString("histogram_usec")
	type row struct{ usec, count int64 }
	var rows []row
	var cum, prev int64
	i := 0
	for level := int64(1024); cum < total && level <= 2*histMaxNs; level *= 2 {
		top := histIndex(min(level, histMaxNs))
		for ; i <= top; i++ {
			cum += counts[i]
		}
		if cum > prev {
			rows = append(rows, row{histHighest(top) / 1000, cum})
		}
		prev = cum
	}
	x.W.Map(len(rows))
	for _, r := range rows {
		x.W.Int(r.usec)
		x.W.Int(r.count)
	}
}

// latencyHistogramCommand is LATENCY HISTOGRAM [command ...]: every
// command with a histogram, or the named ones (a container brings its
// subcommands; unknown names are skipped).
func latencyHistogramCommand(x *Ctx) {
	var cmds []*Command
	if len(x.Args) == 2 {
		forEachCommand(func(c *Command) { cmds = append(cmds, c) })
	} else {
		for _, a := range x.Args[2:] {
			c := lookupFullName(a)
			if c == nil {
				continue
			}
			cmds = append(cmds, c)
			for _, sub := range sortedCommands(c.Sub) {
				cmds = append(cmds, sub)
			}
		}
	}
	n := 0
	for _, c := range cmds {
		if x.s.cmdStats[c.id].latency.Load() != nil {
			n++
		}
	}
	x.W.Map(n)
	for _, c := range cmds {
		if h := x.s.cmdStats[c.id].latency.Load(); h != nil {
			x.W.BulkString(c.Name)
			h.writeCDF(x)
		}
	}
}

// lookupFullName finds a command by its full name, "config|get" for a
// subcommand.
func lookupFullName(name []byte) *Command {
	parent, sub, isSub := strings.Cut(string(name), "|")
	c := lookupCommand(table, []byte(parent))
	if c == nil || !isSub {
		return c
	}
	return lookupCommand(c.Sub, []byte(sub))
}

// writeLatencyStats is INFO latencystats: each command's percentiles
// (latency-tracking-info-percentiles) in microseconds.
func (s *Server) writeLatencyStats(b *strings.Builder) {
	if !s.cfg.LatencyTracking() {
		return
	}
	percentiles := s.cfg.LatencyTrackingInfoPercentiles()
	var counts [histBuckets]int64
	forEachCommand(func(c *Command) {
		h := s.cmdStats[c.id].latency.Load()
		if h == nil {
			return
		}
		total := h.snapshot(&counts)
		b.WriteString("latency_percentiles_usec_" + infoSafe(c.Name) + ":")
		for i, p := range percentiles {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(b, "p%s=%.3f", trimmedPercentile(p), float64(percentile(&counts, total, p))/1000)
		}
		b.WriteString("\r\n")
	})
}

// trimmedPercentile writes p with six decimals less its trailing zeros, as
// Redis names the percentiles.
func trimmedPercentile(p float64) string {
	s := strconv.FormatFloat(p, 'f', 6, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// diskLatency receives the persistence runtime's timings: AOF writes and
// fsyncs, and the snapshot instants of background saves, which stand for
// Redis's forks in INFO (latest_fork_usec, total_forks) as the pause
// commands see.
func (s *Server) diskLatency(event string, took time.Duration) {
	if event == eventFork {
		s.forks.latestUs.Store(took.Microseconds())
		s.forks.total.Add(1)
	}
	s.noteLatency(event, took.Milliseconds())
}

// forkStats count the background saves' snapshot instants.
type forkStats struct {
	latestUs, total atomic.Int64
}
