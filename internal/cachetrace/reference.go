package cachetrace

import "container/list"

// References are exact implementations of published policies, with their
// own queues and per-key nodes, replaying a trace at a capacity in keys:
// what the sampled policies of the keyspace (which keep 24 bits per key
// and no queue) are compared with when choosing one (docs/eviction.md).
var References = []struct {
	Name string
	Run  func(trace []uint32, capacity int) float64
}{
	{"exact-lru", ExactLRU},
	{"sieve", SIEVE},
	{"s3-fifo", S3FIFO},
	{"w-tinylfu", WTinyLFU},
}

// ExactLRU evicts the least recently read key.
func ExactLRU(trace []uint32, capacity int) float64 {
	order := list.New()
	at := map[uint32]*list.Element{}
	hits := 0
	for _, k := range trace {
		if e, ok := at[k]; ok {
			hits++
			order.MoveToFront(e)
			continue
		}
		if order.Len() >= capacity {
			delete(at, order.Remove(order.Back()).(uint32))
		}
		at[k] = order.PushFront(k)
	}
	return float64(hits) / float64(len(trace))
}

// SIEVE (Zhang et al., NSDI 2024): a FIFO queue with a visited bit per
// key; a hand moves from the oldest towards the newest, clearing visited
// bits, and evicts the first key not visited.
func SIEVE(trace []uint32, capacity int) float64 {
	type node struct {
		key     uint32
		visited bool
	}
	queue := list.New() // front: newest
	at := map[uint32]*list.Element{}
	var hand *list.Element
	hits := 0
	for _, k := range trace {
		if e, ok := at[k]; ok {
			hits++
			e.Value.(*node).visited = true
			continue
		}
		if queue.Len() >= capacity {
			if hand == nil {
				hand = queue.Back()
			}
			for hand.Value.(*node).visited {
				hand.Value.(*node).visited = false
				if hand = hand.Prev(); hand == nil {
					hand = queue.Back()
				}
			}
			victim := hand
			hand = hand.Prev()
			delete(at, queue.Remove(victim).(*node).key)
		}
		at[k] = queue.PushFront(&node{key: k})
	}
	return float64(hits) / float64(len(trace))
}

// S3FIFO (Yang et al., SOSP 2023): a small FIFO (10%) that new keys enter,
// a main FIFO, and a ghost FIFO of keys evicted from the small one; a key
// read again while in the small queue moves to the main one, as does a
// key that comes back while in the ghost; the main queue reinserts keys
// read since they last passed (frequency 0-3).
func S3FIFO(trace []uint32, capacity int) float64 {
	type node struct {
		key  uint32
		freq int
		main bool
	}
	smallCap := max(capacity/10, 1)
	mainCap := capacity - smallCap
	small, main, ghost := list.New(), list.New(), list.New()
	at := map[uint32]*list.Element{}
	ghostAt := map[uint32]*list.Element{}
	hits := 0
	evictMain := func() {
		for {
			e := main.Back()
			n := e.Value.(*node)
			if n.freq > 0 {
				n.freq--
				main.MoveToFront(e)
				continue
			}
			main.Remove(e)
			delete(at, n.key)
			return
		}
	}
	toGhost := func(k uint32) {
		if ghost.Len() >= max(mainCap, 1) {
			delete(ghostAt, ghost.Remove(ghost.Back()).(uint32))
		}
		ghostAt[k] = ghost.PushFront(k)
	}
	evict := func() {
		if small.Len() >= smallCap || main.Len() == 0 {
			for small.Len() > 0 {
				e := small.Back()
				n := small.Remove(e).(*node)
				if n.freq > 0 {
					if main.Len() >= mainCap {
						evictMain()
					}
					n.freq, n.main = 0, true
					at[n.key] = main.PushFront(n)
					continue
				}
				delete(at, n.key)
				toGhost(n.key)
				return
			}
		}
		evictMain()
	}
	for _, k := range trace {
		if e, ok := at[k]; ok {
			hits++
			n := e.Value.(*node)
			n.freq = min(n.freq+1, 3)
			continue
		}
		for small.Len()+main.Len() >= capacity {
			evict()
		}
		if g, ok := ghostAt[k]; ok {
			ghost.Remove(g)
			delete(ghostAt, k)
			if main.Len() >= mainCap {
				evictMain()
			}
			at[k] = main.PushFront(&node{key: k, main: true})
			continue
		}
		at[k] = small.PushFront(&node{key: k})
	}
	return float64(hits) / float64(len(trace))
}

// WTinyLFU (Einziger et al., 2017, as Caffeine does it): a window LRU (1%)
// in front of a segmented LRU (20% probation, 80% protected); a key leaving
// the window enters the main cache only if a count-min sketch of recent
// reads (4-bit counters, halved every 10 x capacity reads) says it is read
// more often than the probation segment's victim.
func WTinyLFU(trace []uint32, capacity int) float64 {
	type node struct {
		key     uint32
		segment int // 0 window, 1 probation, 2 protected
	}
	windowCap := max(capacity/100, 1)
	mainCap := capacity - windowCap
	protectedCap := mainCap * 8 / 10
	window, probation, protected := list.New(), list.New(), list.New()
	segments := []*list.List{window, probation, protected}
	at := map[uint32]*list.Element{}
	sketch := newSketch(capacity)
	hits := 0
	for _, k := range trace {
		sketch.add(k)
		if e, ok := at[k]; ok {
			hits++
			n := e.Value.(*node)
			switch n.segment {
			case 0, 2:
				segments[n.segment].MoveToFront(e)
			case 1: // promoted; the protected segment's oldest goes back
				probation.Remove(e)
				n.segment = 2
				at[k] = protected.PushFront(n)
				if protected.Len() > protectedCap {
					old := protected.Remove(protected.Back()).(*node)
					old.segment = 1
					at[old.key] = probation.PushFront(old)
				}
			}
			continue
		}
		at[k] = window.PushFront(&node{key: k})
		if window.Len() <= windowCap {
			continue
		}
		candidate := window.Remove(window.Back()).(*node)
		if probation.Len()+protected.Len() < mainCap {
			candidate.segment = 1
			at[candidate.key] = probation.PushFront(candidate)
			continue
		}
		victimList := probation
		if victimList.Len() == 0 {
			victimList = protected
		}
		victim := victimList.Back().Value.(*node)
		if sketch.estimate(candidate.key) > sketch.estimate(victim.key) {
			victimList.Remove(victimList.Back())
			delete(at, victim.key)
			candidate.segment = 1
			at[candidate.key] = probation.PushFront(candidate)
		} else {
			delete(at, candidate.key)
		}
	}
	return float64(hits) / float64(len(trace))
}

// sketch is a count-min sketch of 4 rows of 4-bit counters (one byte
// each here, capped at 15), halved every 10 x capacity additions.
type sketch struct {
	rows        [4][]uint8
	mask        uint32
	added, each int
}

func newSketch(capacity int) *sketch {
	size := 1
	for size < capacity {
		size <<= 1
	}
	s := &sketch{mask: uint32(size - 1), each: 10 * capacity}
	for i := range s.rows {
		s.rows[i] = make([]uint8, size)
	}
	return s
}

func (s *sketch) index(k uint32, row int) uint32 {
	h := (k + uint32(row)*0x9e3779b9) * 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h & s.mask
}

func (s *sketch) add(k uint32) {
	for r := range s.rows {
		if c := &s.rows[r][s.index(k, r)]; *c < 15 {
			*c++
		}
	}
	if s.added++; s.added >= s.each {
		s.added = 0
		for r := range s.rows {
			for i := range s.rows[r] {
				s.rows[r][i] >>= 1
			}
		}
	}
}

func (s *sketch) estimate(k uint32) uint8 {
	m := uint8(15)
	for r := range s.rows {
		m = min(m, s.rows[r][s.index(k, r)])
	}
	return m
}
