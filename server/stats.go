package server

import "sync/atomic"

// counter is written only by its client's goroutine and read by others (INFO),
// so the owner increments with a plain load and store: no locked instruction on
// the per-command path.
type counter struct{ v atomic.Int64 }

func (c *counter) add(n int64) { c.v.Store(c.v.Load() + n) }

// trafficStats are a client's counters that INFO totals over all clients.
type trafficStats struct {
	commands, netIn, netOut, hits, misses, errors counter
}

type trafficTotals struct {
	commands, netIn, netOut, hits, misses, errors int64
}

func (t *trafficStats) totals() trafficTotals {
	return trafficTotals{t.commands.v.Load(), t.netIn.v.Load(), t.netOut.v.Load(),
		t.hits.v.Load(), t.misses.v.Load(), t.errors.v.Load()}
}

func (a trafficTotals) plus(b trafficTotals) trafficTotals {
	return trafficTotals{a.commands + b.commands, a.netIn + b.netIn, a.netOut + b.netOut,
		a.hits + b.hits, a.misses + b.misses, a.errors + b.errors}
}

func (a trafficTotals) minus(b trafficTotals) trafficTotals {
	return a.plus(trafficTotals{-b.commands, -b.netIn, -b.netOut, -b.hits, -b.misses, -b.errors})
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
	s.mu.Lock()
	s.trafficBase = s.trafficBase.plus(t)
	s.mu.Unlock()
}
