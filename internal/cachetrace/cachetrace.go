// Package cachetrace makes the key sequences the eviction benchmarks replay
// against a cache (bench/hitratio and keyspace's hit-ratio tests): Zipf
// popularity and access patterns shaped after the five seed applications'
// key choice (package workloads). A trace is a sequence of key numbers;
// replaying it means reading each key and writing it on a miss
// (cache-aside), so the hit ratio is the fraction of reads that found their
// key.
package cachetrace

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Trace is a named key sequence.
type Trace struct {
	Name string
	Keys []uint32
}

// Distinct is the number of different keys in t: its working set.
func (t Trace) Distinct() int {
	seen := map[uint32]struct{}{}
	for _, k := range t.Keys {
		seen[k] = struct{}{}
	}
	return len(seen)
}

// Names lists the traces All makes, in order.
var Names = []string{"zipf-0.8", "zipf-1.0", "zipf-1.2", "dns", "quicklink", "waitingroom", "ipx", "cms"}

// All makes every trace with about keys different keys and length reads,
// the same for the same seed.
func All(keys, length int, seed uint64) []Trace {
	return []Trace{
		{"zipf-0.8", Zipf(0.8, keys, length, seed)},
		{"zipf-1.0", Zipf(1.0, keys, length, seed)},
		{"zipf-1.2", Zipf(1.2, keys, length, seed)},
		{"dns", DNS(keys, length, seed)},
		{"quicklink", QuickLink(keys, length, seed)},
		{"waitingroom", WaitingRoom(keys, length, seed)},
		{"ipx", IPX(keys, length, seed)},
		{"cms", CMS(keys, length, seed)},
	}
}

// Zipf reads keys 0..n-1, key i with probability proportional to
// 1/(i+1)^s, the keys' ranks shuffled so popularity does not follow the
// key number.
func Zipf(s float64, n, length int, seed uint64) []uint32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	cdf := make([]float64, n)
	sum := 0.0
	for i := range n {
		sum += 1 / math.Pow(float64(i+1), s)
		cdf[i] = sum
	}
	perm := rng.Perm(n)
	out := make([]uint32, length)
	for i := range out {
		r := rng.Float64() * sum
		out[i] = uint32(perm[sort.SearchFloat64s(cdf, r)])
	}
	return out
}

// DNS is seed 000's resolver: every cached name equally likely.
func DNS(n, length int, seed uint64) []uint32 {
	rng := rand.New(rand.NewPCG(seed, 2))
	out := make([]uint32, length)
	for i := range out {
		out[i] = uint32(rng.IntN(n))
	}
	return out
}

// QuickLink is seed 001's link lookups: 95% of them among the popular
// links (n/2), 5% a cold code read once.
func QuickLink(n, length int, seed uint64) []uint32 {
	rng := rand.New(rand.NewPCG(seed, 3))
	hot := max(n/2, 1)
	next := uint32(hot)
	out := make([]uint32, length)
	for i := range out {
		if rng.IntN(100) < 5 {
			out[i], next = next, next+1
		} else {
			out[i] = uint32(rng.IntN(hot))
		}
	}
	return out
}

// WaitingRoom is seed 002's queue: 20% of requests enqueue a new position,
// the others read (heartbeat, status) a position already there.
func WaitingRoom(n, length int, seed uint64) []uint32 {
	rng := rand.New(rand.NewPCG(seed, 4))
	positions := max(n/2, 1)
	out := make([]uint32, length)
	for i := range out {
		if rng.IntN(100) < 20 {
			out[i] = uint32(positions)
			positions++
		} else {
			out[i] = uint32(rng.IntN(positions))
		}
	}
	return out
}

// IPX is seed 003's image proxy: each request reads its API key's cached
// config and its rate-limit counter of the current window, so counters are
// hot for a window, then never read again.
func IPX(n, length int, seed uint64) []uint32 {
	rng := rand.New(rand.NewPCG(seed, 5))
	windows := 20
	perWindow := length / 2 / windows
	apiKeys := max(n/(windows+1), 1)
	out := make([]uint32, 0, length)
	for i := 0; len(out) < length; i++ {
		pk := rng.IntN(apiKeys)
		window := i / max(perWindow, 1)
		out = append(out, uint32(pk), uint32(apiKeys*(1+window)+pk))
	}
	return out[:length]
}

// CMS is seed 004's content site: 70% page views (popular pages more
// often), 20% searches (word pairs), 10% logins that create a session read
// a few times soon after.
func CMS(n, length int, seed uint64) []uint32 {
	rng := rand.New(rand.NewPCG(seed, 6))
	pages := max(n/2, 1)
	searches := max(n/4, 1)
	pageRank := Zipf(0.9, pages, length, seed)
	searchRank := Zipf(0.7, searches, length, seed+1)
	next := uint32(pages + searches)
	var recent []uint32
	out := make([]uint32, 0, length)
	for i := 0; len(out) < length; i++ {
		switch r := rng.IntN(100); {
		case r < 70:
			out = append(out, pageRank[i])
		case r < 90:
			out = append(out, uint32(pages)+searchRank[i])
		default:
			if len(recent) > 0 && rng.IntN(2) == 0 {
				out = append(out, recent[rng.IntN(len(recent))]) // the session again
				break
			}
			recent = append(recent, next)
			if len(recent) > 64 {
				recent = recent[1:]
			}
			out = append(out, next)
			next++
		}
	}
	return out
}

// Spread is the mean of vs, and with more than one their [min, max].
func Spread(vs []float64, format string) string {
	sum, lo, hi := 0.0, vs[0], vs[0]
	for _, v := range vs {
		sum, lo, hi = sum+v, min(lo, v), max(hi, v)
	}
	out := fmt.Sprintf(format, sum/float64(len(vs)))
	if len(vs) > 1 {
		out += fmt.Sprintf(" ["+format+", "+format+"]", lo, hi)
	}
	return out
}

// Versus is a minus b seed by seed (a[i] and b[i] replayed the same
// trace), as Spread shows it, judged against the run-to-run spread: above
// or below when the mean difference is more than twice its standard error
// over three seeds or more, else noise.
func Versus(a, b []float64) string {
	d := make([]float64, len(a))
	mean := 0.0
	for i := range a {
		d[i] = a[i] - b[i]
		mean += d[i] / float64(len(a))
	}
	out := Spread(d, "%+.2f")
	if len(d) < 3 {
		return out
	}
	variance := 0.0
	for _, v := range d {
		variance += (v - mean) * (v - mean) / float64(len(d)-1)
	}
	switch se := math.Sqrt(variance / float64(len(d))); {
	case mean > 2*se:
		return out + " above"
	case mean < -2*se:
		return out + " below"
	}
	return out + " noise"
}
