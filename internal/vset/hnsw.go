package vset

import (
	"math"
	"slices"
	"sync"
)

// The graph: a hierarchical navigable small world (Malkov and Yashunin).
// Every node is on level 0 and, with probability falling by a factor of M
// per level, on the levels above; a node links to at most 2M neighbours on
// level 0 and M above. A search descends greedily from the entry point
// (the node on the highest level) to level 1, then explores level 0 best
// first, keeping the ef closest nodes seen.
//
// Links are flat uint32 slices: level 0 has a fixed record of 2M+1 words
// per node (a count, then the links); the levels above of a node with
// levels are one record of level*(M+1) words in upper, placed at upperAt
// and reused through a free list per size when the node goes.

const (
	maxLevels = 16 // levels a node can have above level 0, at most
	noNode    = math.MaxUint32
)

// item is a node and its distance from the query at hand.
type item struct {
	dist float32
	id   uint32
}

// query is a vector in the set's stored form, as distances need it.
type query struct {
	f []float32
	q []int8
	r float32
	b []uint64
}

// vecOf is node id's stored vector.
func (s *Set) vecOf(id uint32) query {
	switch s.quant {
	case NoQuant:
		return query{f: s.f32[int(id)*s.dim:][:s.dim]}
	case Bin:
		return query{b: s.bin[int(id)*s.words:][:s.words]}
	}
	return query{q: s.q8[int(id)*s.dim:][:s.dim], r: s.ranges[id]}
}

// dist is the distance from q to node id.
func (s *Set) dist(q query, id uint32) float32 {
	switch s.quant {
	case NoQuant:
		return cosineDistance(dotF32(q.f, s.f32[int(id)*s.dim:][:s.dim]))
	case Bin:
		return 2 * float32(hamming(q.b, s.bin[int(id)*s.words:][:s.words])) / float32(s.dim)
	}
	d := dotQ8(q.q, s.q8[int(id)*s.dim:][:s.dim])
	return cosineDistance(float32(d) * q.r * s.ranges[id] / (127 * 127))
}

// linksAt is node id's link record on level l: its count, then room for
// the most links the level allows.
func (s *Set) linksAt(id uint32, l int) []uint32 {
	if l == 0 {
		w := 2*s.m + 1
		return s.links0[int(id)*w:][:w]
	}
	w := s.m + 1
	return s.upper[int(s.upperAt[id])+(l-1)*w:][:w]
}

func links(rec []uint32) []uint32 { return rec[1 : 1+rec[0]] }

func (s *Set) maxLinks(l int) int {
	if l == 0 {
		return 2 * s.m
	}
	return s.m
}

// randomLevel draws a new node's highest level from the set's own
// generator, so that a replica replaying the same commands builds the
// same graph.
func (s *Set) randomLevel() int {
	u := float64(s.next()>>11) / (1 << 53)
	l := int(-math.Log(1-u) / math.Log(float64(s.m)))
	return min(l, maxLevels)
}

// next steps the set's splitmix64 generator.
func (s *Set) next() uint64 {
	s.rng += 0x9e3779b97f4a7c15
	z := s.rng
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// scratch is one search's working memory, pooled: visit marks by node and
// the two heaps.
type scratch struct {
	marks []uint32
	epoch uint32
	cand  []item // min-heap: nodes to expand
	res   []item // max-heap: the best found
	out   []item
	sel   []item // neighbours picked
	rest  []item // neighbours passed over
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func (s *Set) getScratch() *scratch {
	sc := scratchPool.Get().(*scratch)
	if n := len(s.levels); len(sc.marks) < n {
		sc.marks = make([]uint32, n+n/4)
		sc.epoch = 0
	}
	return sc
}

// begin starts a traversal: every node unvisited.
func (sc *scratch) begin() {
	sc.epoch++
	if sc.epoch == 0 {
		clear(sc.marks)
		sc.epoch = 1
	}
	sc.cand, sc.res = sc.cand[:0], sc.res[:0]
}

// visit marks id and reports whether it was unvisited.
func (sc *scratch) visit(id uint32) bool {
	if sc.marks[id] == sc.epoch {
		return false
	}
	sc.marks[id] = sc.epoch
	return true
}

func pushMin(h []item, it item) []item {
	h = append(h, it)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p].dist <= h[i].dist {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	return h
}

func popMin(h []item) (item, []item) {
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h[c+1].dist < h[c].dist {
			c++
		}
		if h[i].dist <= h[c].dist {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	return top, h
}

func pushMax(h []item, it item) []item {
	h = append(h, it)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p].dist >= h[i].dist {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	return h
}

func popMax(h []item) []item {
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h[c+1].dist > h[c].dist {
			c++
		}
		if h[i].dist >= h[c].dist {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	return h
}

// greedy walks level l from ep to the closest node it can reach.
func (s *Set) greedy(q query, ep item, l int) item {
	for moved := true; moved; {
		moved = false
		for _, n := range links(s.linksAt(ep.id, l)) {
			if d := s.dist(q, n); d < ep.dist {
				ep, moved = item{d, n}, true
			}
		}
	}
	return ep
}

// descend walks from the entry point down to level l+1's closest node.
func (s *Set) descend(q query, l int) item {
	ep := item{s.dist(q, s.entry), s.entry}
	for lv := s.top; lv > l; lv-- {
		ep = s.greedy(q, ep, lv)
	}
	return ep
}

// searchLayer explores level l best first from eps and leaves the ef
// closest nodes it found in sc.out, closest first. With accept, only
// accepted nodes are results (the others are still walked through), and
// at most budget nodes are weighed (budget 0: no limit).
func (s *Set) searchLayer(q query, eps []item, ef, l int, sc *scratch, accept func(uint32) bool, budget int) {
	sc.begin()
	for _, ep := range eps {
		if !sc.visit(ep.id) {
			continue
		}
		sc.cand = pushMin(sc.cand, ep)
		if accept == nil || accept(ep.id) {
			sc.res = pushMax(sc.res, ep)
		}
	}
	weighed := len(eps)
	for len(sc.cand) > 0 {
		var c item
		c, sc.cand = popMin(sc.cand)
		if len(sc.res) >= ef && c.dist > sc.res[0].dist {
			break
		}
		if budget > 0 && weighed >= budget {
			break
		}
		for _, n := range links(s.linksAt(c.id, l)) {
			if !sc.visit(n) {
				continue
			}
			d := s.dist(q, n)
			weighed++
			if len(sc.res) < ef || d < sc.res[0].dist {
				sc.cand = pushMin(sc.cand, item{d, n})
				if accept == nil || accept(n) {
					sc.res = pushMax(sc.res, item{d, n})
					if len(sc.res) > ef {
						sc.res = popMax(sc.res)
					}
				}
			}
		}
	}
	sc.out = append(sc.out[:0], sc.res...)
	slices.SortFunc(sc.out, byDistance)
}

func byDistance(a, b item) int {
	if a.dist != b.dist {
		if a.dist < b.dist {
			return -1
		}
		return 1
	}
	return int(int64(a.id) - int64(b.id))
}

// link places node id, whose vector is stored, into the graph at level
// (its levels' records are allocated and empty).
func (s *Set) link(id uint32, level, ef int) {
	if s.top < 0 {
		s.entry, s.top = id, level
		return
	}
	q := s.vecOf(id)
	sc := s.getScratch()
	defer scratchPool.Put(sc)
	eps := []item{s.descend(q, level)}
	for l := min(level, s.top); l >= 0; l-- {
		s.searchLayer(q, eps, ef, l, sc, nil, 0)
		eps = append(eps[:0], sc.out...)
		sel := s.selectNeighbors(eps, s.maxLinks(l), sc)
		rec := s.linksAt(id, l)
		rec[0] = uint32(len(sel))
		for i, n := range sel {
			rec[1+i] = n.id
		}
		for _, n := range sel {
			s.inDegree[n.id]++
			s.addLink(n.id, l, id, n.dist)
		}
	}
	if level > s.top {
		s.entry, s.top = id, level
	}
}

// selectNeighbors picks at most n of cands (closest first) to link to:
// first those closer to the new node than to every one picked before (so
// links spread in all directions), then the closest of the rest.
func (s *Set) selectNeighbors(cands []item, n int, sc *scratch) []item {
	sel, rest := sc.sel[:0], sc.rest[:0]
	for _, c := range cands {
		if len(sel) >= n {
			break
		}
		cv := s.vecOf(c.id)
		good := true
		for _, r := range sel {
			if s.dist(cv, r.id) < c.dist {
				good = false
				break
			}
		}
		if good {
			sel = append(sel, c)
		} else {
			rest = append(rest, c)
		}
	}
	for _, c := range rest {
		if len(sel) >= n {
			break
		}
		sel = append(sel, c)
	}
	sc.sel, sc.rest = sel, rest
	return sel
}

// addLink links node n to id on level l at distance d; a full record
// gives up its farthest link if id is closer.
func (s *Set) addLink(n uint32, l int, id uint32, d float32) {
	rec := s.linksAt(n, l)
	if k := int(rec[0]); k < s.maxLinks(l) {
		rec[1+k] = id
		rec[0]++
		s.inDegree[id]++
		return
	}
	nv := s.vecOf(n)
	worst, at := float32(-1), -1
	for i, x := range links(rec) {
		if dx := s.dist(nv, x); dx > worst {
			worst, at = dx, i
		}
	}
	if d < worst {
		s.inDegree[rec[1+at]]--
		rec[1+at] = id
		s.inDegree[id]++
	}
}

// unlink takes node id out of the graph: every link to it is dropped and
// the node that lost it is offered id's own neighbours on that level in
// its place, closest first. The links to id are looked for among its
// neighbours and theirs, where they nearly all are, and in the whole graph
// only when its in-degree says some are elsewhere.
func (s *Set) unlink(id uint32) {
	level := int(s.levels[id])
	sc := s.getScratch()
	var near []uint32
	for l := 0; l <= level && s.inDegree[id] > 0; l++ {
		sc.begin()
		sc.visit(id)
		near = near[:0]
		for _, n := range links(s.linksAt(id, l)) {
			if sc.visit(n) {
				near = append(near, n)
			}
		}
		for _, n := range near[:len(near):len(near)] {
			for _, m := range links(s.linksAt(n, l)) {
				if sc.visit(m) {
					near = append(near, m)
				}
			}
		}
		for _, x := range near {
			s.dropLink(x, l, id)
		}
		if s.inDegree[id] == 0 {
			break
		}
		// Then the nodes nearest id on the level, which had it as a
		// candidate when they were linked.
		s.searchLayer(s.vecOf(id), []item{{0, id}}, 8*s.maxLinks(l), l, sc, nil, 0)
		for _, it := range sc.out {
			s.dropLink(it.id, l, id)
		}
	}
	scratchPool.Put(sc)
	for x := 0; x < len(s.levels) && s.inDegree[id] > 0; x++ {
		for l := 0; l <= min(level, int(s.levels[x])); l++ {
			s.dropLink(uint32(x), l, id)
		}
	}
	if s.entry == id {
		s.entry, s.top = noNode, -1
		for x, xl := range s.levels {
			if uint32(x) != id && int(xl) > s.top {
				s.entry, s.top = uint32(x), int(xl)
			}
		}
	}
}

// dropLink removes node x's link to id on level l, if it has one, and
// repairs x.
func (s *Set) dropLink(x uint32, l int, id uint32) {
	if x == id {
		return
	}
	rec := s.linksAt(x, l)
	at := slices.Index(links(rec), id)
	if at < 0 {
		return
	}
	rec[1+at] = rec[rec[0]]
	rec[0]--
	s.inDegree[id]--
	s.repair(x, l, id)
}

// clearLinks drops node id's own links on every level.
func (s *Set) clearLinks(id uint32) {
	for l := 0; l <= int(s.levels[id]); l++ {
		rec := s.linksAt(id, l)
		for _, t := range links(rec) {
			s.inDegree[t]--
		}
		rec[0] = 0
	}
}

// repair offers node x, which lost its link to gone on level l, gone's
// neighbours there, closest to x first, while x has room.
func (s *Set) repair(x uint32, l int, gone uint32) {
	rec := s.linksAt(x, l)
	xv := s.vecOf(x)
	var cands []item
	for _, c := range links(s.linksAt(gone, l)) {
		if c != x && !slices.Contains(links(rec), c) {
			cands = append(cands, item{s.dist(xv, c), c})
		}
	}
	slices.SortFunc(cands, byDistance)
	for _, c := range cands {
		if int(rec[0]) >= s.maxLinks(l) {
			break
		}
		rec[1+rec[0]] = c.id
		rec[0]++
		s.inDegree[c.id]++
	}
}

// search finds the ef nodes closest to q (ef at most the set's size), or
// those of them accept takes when accept is given, weighing at most budget
// nodes then; closest first, in sc.out.
func (s *Set) search(q query, ef int, sc *scratch, accept func(uint32) bool, budget int) []item {
	if s.top < 0 {
		return nil
	}
	ep := s.descend(q, 0)
	s.searchLayer(q, []item{ep}, ef, 0, sc, accept, budget)
	return sc.out
}

// scan weighs every node (TRUTH): the ef closest to q that accept takes.
func (s *Set) scan(q query, ef int, sc *scratch, accept func(uint32) bool) []item {
	sc.res = sc.res[:0]
	for _, id := range s.live {
		if accept != nil && !accept(id) {
			continue
		}
		d := s.dist(q, id)
		if len(sc.res) < ef {
			sc.res = pushMax(sc.res, item{d, id})
		} else if d < sc.res[0].dist {
			sc.res = pushMax(popMax(sc.res), item{d, id})
		}
	}
	sc.out = append(sc.out[:0], sc.res...)
	slices.SortFunc(sc.out, byDistance)
	return sc.out
}
