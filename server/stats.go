package server

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// counter is written only by its client's goroutine and read by others (INFO),
// so the owner increments with a plain load and store: no locked instruction on
// the per-command path.
type counter struct{ v atomic.Int64 }

func (c *counter) add(n int64) { c.v.Store(c.v.Load() + n) }

// trafficStats are a client's counters that INFO totals over all clients.
type trafficStats struct {
	commands, netIn, netOut, hits, misses counter
	reads, writes                         counter // socket reads and writes
	replyShrinks                          counter // big reply buffers dropped once written
}

func (t *trafficStats) read(n int64) {
	t.netIn.add(n)
	t.reads.add(1)
}

func (t *trafficStats) wrote(n int64) {
	t.netOut.add(n)
	t.writes.add(1)
}

type trafficTotals struct {
	commands, netIn, netOut, hits, misses, reads, writes, replyShrinks int64
}

func (t *trafficStats) totals() trafficTotals {
	return trafficTotals{t.commands.v.Load(), t.netIn.v.Load(), t.netOut.v.Load(),
		t.hits.v.Load(), t.misses.v.Load(), t.reads.v.Load(), t.writes.v.Load(), t.replyShrinks.v.Load()}
}

func (a trafficTotals) plus(b trafficTotals) trafficTotals {
	return trafficTotals{a.commands + b.commands, a.netIn + b.netIn, a.netOut + b.netOut,
		a.hits + b.hits, a.misses + b.misses, a.reads + b.reads, a.writes + b.writes, a.replyShrinks + b.replyShrinks}
}

func (a trafficTotals) minus(b trafficTotals) trafficTotals {
	return a.plus(trafficTotals{-b.commands, -b.netIn, -b.netOut, -b.hits, -b.misses, -b.reads, -b.writes, -b.replyShrinks})
}

// traffic returns the totals since start or the last CONFIG RESETSTAT: live
// clients' counters plus those of closed clients, less the reset baseline.
func (s *Server) traffic() trafficTotals {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.closedTraffic
	for _, c := range s.clients {
		t = t.plus(c.traffic.totals())
	}
	return t.minus(s.trafficBase)
}

// resetTraffic makes the current totals the new zero.
func (s *Server) resetTraffic() {
	t := s.traffic()
	_, threads := s.threadTraffic()
	s.mu.Lock()
	s.trafficBase = s.trafficBase.plus(t)
	for i := range threads {
		s.ioBase = addAt(s.ioBase, i, threads[i])
	}
	s.mu.Unlock()
}

// ioThread returns the I/O thread serving c: its event loop's index, or
// 0, the first, for a client its own goroutine serves (TLS, the portable
// path), as Redis's main thread serves its clients. The caller holds mu.
func (s *Server) ioThread(c *Client) int {
	if c.lc != nil {
		for i, l := range s.loops {
			if l == c.lc.loop {
				return i
			}
		}
	}
	return 0
}

// threadTraffic returns, per I/O thread (INFO threads), its clients and
// its traffic since start or the last CONFIG RESETSTAT.
func (s *Server) threadTraffic() ([]int, []trafficTotals) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := max(1, len(s.loops))
	clients, t := make([]int, n), make([]trafficTotals, n)
	copy(t, s.closedIO)
	for _, c := range s.clients {
		i := s.ioThread(c)
		clients[i]++
		t[i] = t[i].plus(c.traffic.totals())
	}
	for i := range min(n, len(s.ioBase)) {
		t[i] = t[i].minus(s.ioBase[i])
	}
	return clients, t
}

// addAt adds t to totals[i], growing totals as needed.
func addAt(totals []trafficTotals, i int, t trafficTotals) []trafficTotals {
	for len(totals) <= i {
		totals = append(totals, trafficTotals{})
	}
	totals[i] = totals[i].plus(t)
	return totals
}

// errorStats counts error replies by their code, the reply's first word
// (INFO errorstats and total_error_replies). Every writer that replies to a
// client reports to it (resp.Writer.Errors), so each error is counted where
// it is replied, whatever wrote it: a handler, a refusal, a script.
type errorStats struct {
	mu     sync.Mutex
	byCode map[string]*int64
	total  atomic.Int64
	// unexpected counts the errors a command replayed from the AOF got
	// (Redis's unexpected_error_replies; a replica's master link later).
	unexpected atomic.Int64
}

// CountError counts msg under its code: the text before the first space
// when that comes within Redis's 31 characters, else ERR.
func (e *errorStats) CountError(msg string) {
	e.total.Add(1)
	code := "ERR"
	if i := strings.IndexByte(msg[:min(len(msg), 31)], ' '); i >= 0 {
		code = msg[:i]
	}
	e.mu.Lock()
	if n := e.byCode[code]; n != nil {
		*n++
	} else {
		if e.byCode == nil {
			e.byCode = map[string]*int64{}
		}
		one := int64(1)
		e.byCode[strings.Clone(code)] = &one // msg may be a read buffer
	}
	e.mu.Unlock()
}

// uncount takes back the count of msg: a script's error that relays the
// error reply of a command it ran, which Redis counts once, at the command.
func (e *errorStats) uncount(msg string) {
	e.total.Add(-1)
	code := "ERR"
	if i := strings.IndexByte(msg[:min(len(msg), 31)], ' '); i >= 0 {
		code = msg[:i]
	}
	e.mu.Lock()
	if n := e.byCode[code]; n != nil {
		if *n--; *n == 0 {
			delete(e.byCode, code)
		}
	}
	e.mu.Unlock()
}

func (e *errorStats) reset() {
	e.mu.Lock()
	e.byCode = nil
	e.total.Store(0)
	e.unexpected.Store(0)
	e.mu.Unlock()
}

// write prints the errorstats section: one line per code in byte order,
// as Redis's radix tree lists them.
func (e *errorStats) write(b *strings.Builder) {
	e.mu.Lock()
	codes := make([]string, 0, len(e.byCode))
	for code := range e.byCode {
		codes = append(codes, code)
	}
	sort.Strings(codes)
	for _, code := range codes {
		fmt.Fprintf(b, "errorstat_%s:count=%d\r\n", infoSafe(code), *e.byCode[code])
	}
	e.mu.Unlock()
}

// loaderErrors counts the errors of commands replayed from the AOF, which
// Redis also reports as unexpected.
type loaderErrors struct{ *errorStats }

func (l loaderErrors) CountError(msg string) {
	l.unexpected.Add(1)
	l.errorStats.CountError(msg)
}

// infoSafe replaces the characters that would break INFO's name:value
// lines ('#', ':', '\r', '\n') with '_', as Redis does.
func infoSafe(s string) string {
	if !strings.ContainsAny(s, "#:\r\n") {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == '#' || r == ':' || r == '\r' || r == '\n' {
			return '_'
		}
		return r
	}, s)
}

// errorText is the message of the error reply at the start of reply,
// without its '-' and line end.
func errorText(reply []byte) string {
	end := bytes.IndexByte(reply, '\r')
	if end < 0 {
		end = len(reply)
	}
	return string(reply[1:end])
}

// expiryStats are the active expiry cycle's counters (INFO stats).
type expiryStats struct {
	mu        sync.Mutex
	stalePerc float64 // running share of sampled keys found expired
	capped    int64   // cycles stopped by their time budget
	cpuUs     int64   // time spent in cycles
}

// noteExpireCycle counts a cycle that sampled and removed keys in elapsed
// time, capped when its time budget ran out, and reports it to the latency
// monitor.
func (s *Server) noteExpireCycle(sampled, removed int, elapsed time.Duration, capped bool) {
	e := &s.expiry
	e.mu.Lock()
	perc := 0.0
	if sampled > 0 {
		perc = float64(removed) / float64(sampled)
	}
	e.stalePerc = perc*0.05 + e.stalePerc*0.95
	if capped {
		e.capped++
	}
	e.cpuUs += elapsed.Microseconds()
	e.mu.Unlock()
	s.noteLatency(eventExpireCycle, elapsed.Milliseconds())
}

// instantaneous keeps the recent rates INFO's instantaneous_* fields
// report: the cron samples the totals at each tick, and a rate is the mean
// over the last 16 samples, as Redis's trackInstantaneousMetric does.
type instantaneous struct {
	mu      sync.Mutex
	at      time.Time
	last    trafficTotals
	ops     [16]float64 // commands per second
	in, out [16]float64 // bytes per second
	next    int
}

// sampleRates is called by the cron.
func (s *Server) sampleRates() {
	t := s.traffic()
	now := time.Now()
	r := &s.rates
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.at.IsZero() {
		if secs := now.Sub(r.at).Seconds(); secs > 0 {
			d := t.minus(r.last)
			r.ops[r.next] = float64(d.commands) / secs
			r.in[r.next] = float64(d.netIn) / secs
			r.out[r.next] = float64(d.netOut) / secs
			r.next = (r.next + 1) % len(r.ops)
		}
	}
	r.at, r.last = now, t
}

// reset forgets the samples (CONFIG RESETSTAT); the next starts afresh.
func (r *instantaneous) reset() {
	r.mu.Lock()
	r.at, r.last, r.next = time.Time{}, trafficTotals{}, 0
	r.ops, r.in, r.out = [16]float64{}, [16]float64{}, [16]float64{}
	r.mu.Unlock()
}

// rates returns commands per second and input and output KB per second.
func (r *instantaneous) rates() (ops int64, inKbps, outKbps float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var o, i, w float64
	for j := range r.ops {
		o, i, w = o+r.ops[j], i+r.in[j], w+r.out[j]
	}
	n := float64(len(r.ops))
	return int64(o / n), i / n / 1024, w / n / 1024
}

// overLimitTime measures how long used memory stayed over maxmemory
// (INFO's total_ and current_eviction_exceeded_time): from an eviction
// that could not bring it under the limit to the next one that did. Every
// command checks memory under maxmemory, so the common case (within the
// limit, and it was) is one atomic load.
type overLimitTime struct {
	since atomic.Int64 // monoNow when it went over; 0 within the limit
	total atomic.Int64 // ns over the limit before since
}

func (o *overLimitTime) note(res evictResult) {
	since := o.since.Load()
	switch {
	case res != evictOK && since == 0:
		o.since.CompareAndSwap(0, monoNow())
	case res == evictOK && since != 0:
		if o.since.CompareAndSwap(since, 0) {
			o.total.Add(monoNow() - since)
		}
	}
}

// times returns the total and current time over the limit, in ms.
func (o *overLimitTime) times() (total, current int64) {
	if since := o.since.Load(); since != 0 {
		current = (monoNow() - since) / int64(time.Millisecond)
	}
	return o.total.Load()/int64(time.Millisecond) + current, current
}

// reset zeroes the total; a stretch over the limit counts from now.
func (o *overLimitTime) reset() {
	o.total.Store(0)
	if since := o.since.Load(); since != 0 {
		o.since.CompareAndSwap(since, monoNow())
	}
}
