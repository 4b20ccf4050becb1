// Package vset is Redis 8's vector set: named elements, each with a vector
// and optional JSON attributes, searched by cosine similarity through an
// HNSW graph of its own (hnsw.go), with vectors stored as float32, as
// signed bytes (Q8, the default) or as sign bits (quant.go), an optional
// random projection to fewer dimensions (REDUCE), and FILTER expressions
// over the attributes (filter.go).
//
// A set keeps no Go object per element: vectors, links, names and
// attributes are flat slices indexed by node id, names found through an
// open-addressing table of ids. The collector sees a few dozen slices per
// set, whatever its size. A Set is not safe for concurrent use: the
// keyspace's shard lock serializes the commands on a key.
package vset

import (
	"bytes"
	"hash/maphash"
	"math"
	"slices"
	"sync/atomic"
)

// Limits and defaults, as Redis's.
const (
	DefaultM        = 16
	MinM, MaxM      = 4, 4096
	DefaultBuildEF  = 200
	DefaultSearchEF = 100
	MaxDim          = 1 << 16
	// MaxProjection bounds REDUCE's matrix, input by output dimensions
	// (256 MB of float32): Redis has no bound, and would try to allocate
	// 16 GB for 65,536 by 65,536.
	MaxProjection = 1 << 26
)

// Set is one vector set.
type Set struct {
	dim   int // stored dimensions (after projection)
	quant Quant
	m     int
	words int // Bin: uint64 words per vector

	// Vectors by node id: one of f32, q8 (with ranges) and bin is used.
	f32    []float32
	q8     []int8
	ranges []float32
	bin    []uint64
	norms  []float32 // each vector's length before normalization

	levels    []int8   // highest level per node, -1 for a free id
	inDegree  []uint32 // links to each node, on all its levels
	links0    []uint32
	upperAt   []uint32
	upper     []uint32
	freeUpper [maxLevels][]uint32
	freeIDs   []uint32
	entry     uint32
	top       int
	rng       uint64

	// Names and attributes: bytes in an arena each, by node id.
	names           []byte
	nameAt, nameLen []uint32
	attrs           []byte
	attrAt, attrLen []uint32
	garbage         int // arena bytes no node refers to
	withAttrs       int
	table           []uint32 // name hash table: node id+1, 0 empty, tombstone
	tableUsed       int      // slots not empty (tombstones too)

	live    []uint32 // node ids in use, dense
	livePos []uint32 // each node's index in live
	sorted  []uint32 // live ids by name, rebuilt after a change (VRANGE)

	proj   []float32 // REDUCE's matrix, projIn columns per stored dimension
	projIn int

	uid    uint64 // VINFO vset-uid
	lastID uint64 // VINFO hnsw-max-node-uid: nodes ever added
}

const tombstone = math.MaxUint32

var (
	hashSeed = maphash.MakeSeed()
	nextUID  atomic.Uint64
)

// New returns an empty set of vectors of dim dimensions, stored as quant,
// with m links per node and level (2m on level 0). projIn > 0 makes it a
// REDUCE set: vectors come with projIn dimensions and are projected to dim.
func New(dim int, quant Quant, m, projIn int) *Set {
	s := &Set{dim: dim, quant: quant, m: m, top: -1, entry: noNode, words: (dim + 63) / 64,
		rng: 0x7673657453656564, uid: nextUID.Add(1) - 1}
	if projIn > 0 {
		s.projIn = projIn
		s.proj = projection(projIn, dim)
	}
	return s
}

// projection is a random projection from in to out dimensions: signs drawn
// from a fixed generator, so that every server makes the same one.
func projection(in, out int) []float32 {
	p := make([]float32, in*out)
	scale := float32(1 / math.Sqrt(float64(in)))
	g := Set{rng: uint64(in)<<32 | uint64(out)}
	for i := range p {
		if g.next()&1 == 0 {
			p[i] = scale
		} else {
			p[i] = -scale
		}
	}
	return p
}

// Dim is the stored vectors' dimensions; ProjectionInput the input's for a
// REDUCE set (0 otherwise).
func (s *Set) Dim() int             { return s.dim }
func (s *Set) ProjectionInput() int { return s.projIn }
func (s *Set) Quant() Quant         { return s.quant }
func (s *Set) M() int               { return s.m }
func (s *Set) Len() int             { return len(s.live) }
func (s *Set) MaxLevel() int        { return max(s.top, 0) }
func (s *Set) Attributes() int      { return s.withAttrs }
func (s *Set) UID() uint64          { return s.uid }
func (s *Set) LastNodeID() uint64   { return s.lastID }

// Project maps an input vector of a REDUCE set to the stored dimensions.
func (s *Set) Project(v []float32) []float32 {
	out := make([]float32, s.dim)
	for i := range out {
		out[i] = dotF32(v, s.proj[i*s.projIn:][:s.projIn])
	}
	return out
}

// Name is node id's element.
func (s *Set) Name(id uint32) []byte { return s.names[s.nameAt[id]:][:s.nameLen[id]] }

// Attr is node id's attributes, nil when it has none.
func (s *Set) Attr(id uint32) []byte {
	if s.attrLen[id] == 0 {
		return nil
	}
	return s.attrs[s.attrAt[id]:][:s.attrLen[id]]
}

// Find returns the node of element name.
func (s *Set) Find(name []byte) (uint32, bool) {
	if len(s.table) == 0 {
		return 0, false
	}
	mask := uint64(len(s.table) - 1)
	for i := maphash.Bytes(hashSeed, name) & mask; ; i = (i + 1) & mask {
		switch v := s.table[i]; v {
		case 0:
			return 0, false
		case tombstone:
		default:
			if bytes.Equal(s.Name(v-1), name) {
				return v - 1, true
			}
		}
	}
}

// index enters node id under its name (not in the table yet).
func (s *Set) index(id uint32) {
	if (s.tableUsed+1)*2 > len(s.table) {
		s.rehash(max(16, 4*len(s.live)))
	}
	mask := uint64(len(s.table) - 1)
	i := maphash.Bytes(hashSeed, s.Name(id)) & mask
	for s.table[i] != 0 && s.table[i] != tombstone {
		i = (i + 1) & mask
	}
	if s.table[i] == 0 {
		s.tableUsed++
	}
	s.table[i] = id + 1
}

// rehash rebuilds the table with room for n entries (a power of two).
func (s *Set) rehash(n int) {
	size := 16
	for size < n {
		size *= 2
	}
	s.table, s.tableUsed = make([]uint32, size), 0
	for _, id := range s.live {
		s.index(id)
	}
}

func (s *Set) unindex(id uint32) {
	mask := uint64(len(s.table) - 1)
	for i := maphash.Bytes(hashSeed, s.Name(id)) & mask; ; i = (i + 1) & mask {
		if s.table[i] == id+1 {
			s.table[i] = tombstone
			return
		}
	}
}

// Add stores element name with vector v (already projected): a new node
// (true), or, for an element there, its vector replaced (false). With
// setAttr, attr becomes its attributes (empty: none). ef is the search
// effort linking the node.
func (s *Set) Add(name []byte, v []float32, attr []byte, setAttr bool, ef int) bool {
	if id, ok := s.Find(name); ok {
		s.replaceVector(id, v, ef)
		if setAttr {
			s.SetAttr(id, attr)
		}
		return false
	}
	id := s.allocNode(s.randomLevel())
	s.storeVector(id, v)
	s.nameAt[id], s.nameLen[id] = uint32(len(s.names)), uint32(len(name))
	s.names = append(s.names, name...)
	s.attrAt[id], s.attrLen[id] = 0, 0
	s.livePos[id] = uint32(len(s.live))
	s.live = append(s.live, id)
	s.index(id)
	if setAttr {
		s.SetAttr(id, attr)
	}
	s.link(id, int(s.levels[id]), ef)
	s.lastID++
	s.sorted = s.sorted[:0]
	return true
}

// replaceVector gives node id vector v: out of the graph and back in.
func (s *Set) replaceVector(id uint32, v []float32, ef int) {
	s.unlink(id)
	s.clearLinks(id)
	s.storeVector(id, v)
	s.link(id, int(s.levels[id]), ef)
}

// allocNode takes a free node id (or a new one) for a node of level.
func (s *Set) allocNode(level int) uint32 {
	var id uint32
	if n := len(s.freeIDs); n > 0 {
		id = s.freeIDs[n-1]
		s.freeIDs = s.freeIDs[:n-1]
	} else {
		id = s.newSlot()
	}
	s.placeNode(id, level)
	return id
}

// newSlot adds a node id to every per-node slice.
func (s *Set) newSlot() uint32 {
	id := uint32(len(s.levels))
	s.levels = append(s.levels, -1)
	s.inDegree = append(s.inDegree, 0)
	s.norms = append(s.norms, 0)
	s.links0 = append(s.links0, make([]uint32, 2*s.m+1)...)
	s.upperAt = append(s.upperAt, 0)
	s.nameAt, s.nameLen = append(s.nameAt, 0), append(s.nameLen, 0)
	s.attrAt, s.attrLen = append(s.attrAt, 0), append(s.attrLen, 0)
	s.livePos = append(s.livePos, 0)
	switch s.quant {
	case NoQuant:
		s.f32 = append(s.f32, make([]float32, s.dim)...)
	case Bin:
		s.bin = append(s.bin, make([]uint64, s.words)...)
	default:
		s.q8 = append(s.q8, make([]int8, s.dim)...)
		s.ranges = append(s.ranges, 0)
	}
	return id
}

// placeNode makes free id a node of level with no links.
func (s *Set) placeNode(id uint32, level int) {
	s.levels[id] = int8(level)
	s.linksAt(id, 0)[0] = 0
	if level > 0 {
		size := level * (s.m + 1)
		if free := s.freeUpper[level-1]; len(free) > 0 {
			s.upperAt[id] = free[len(free)-1]
			s.freeUpper[level-1] = free[:len(free)-1]
		} else {
			s.upperAt[id] = uint32(len(s.upper))
			s.upper = append(s.upper, make([]uint32, size)...)
		}
		for l := 1; l <= level; l++ {
			s.linksAt(id, l)[0] = 0
		}
	}
}

// storeVector normalizes v into node id's stored form.
func (s *Set) storeVector(id uint32, v []float32) {
	u := slices.Clone(v)
	s.norms[id] = normalize(u)
	switch s.quant {
	case NoQuant:
		copy(s.f32[int(id)*s.dim:][:s.dim], u)
	case Bin:
		quantizeBin(u, s.bin[int(id)*s.words:][:s.words])
	default:
		s.ranges[id] = quantizeQ8(u, s.q8[int(id)*s.dim:][:s.dim])
	}
}

// Remove deletes element name, reporting whether it was there.
func (s *Set) Remove(name []byte) bool {
	id, ok := s.Find(name)
	if !ok {
		return false
	}
	s.unlink(id)
	s.clearLinks(id)
	s.unindex(id)
	s.SetAttr(id, nil)
	s.garbage += int(s.nameLen[id])
	if level := int(s.levels[id]); level > 0 {
		s.freeUpper[level-1] = append(s.freeUpper[level-1], s.upperAt[id])
	}
	s.levels[id] = -1
	s.freeIDs = append(s.freeIDs, id)
	last := s.live[len(s.live)-1]
	s.live[s.livePos[id]] = last
	s.livePos[last] = s.livePos[id]
	s.live = s.live[:len(s.live)-1]
	s.sorted = s.sorted[:0]
	s.compact()
	return true
}

// SetAttr gives node id attributes attr (empty: none).
func (s *Set) SetAttr(id uint32, attr []byte) {
	if s.attrLen[id] > 0 {
		s.garbage += int(s.attrLen[id])
		s.withAttrs--
	}
	s.attrAt[id], s.attrLen[id] = uint32(len(s.attrs)), uint32(len(attr))
	if len(attr) > 0 {
		s.attrs = append(s.attrs, attr...)
		s.withAttrs++
	}
	s.compact()
}

// compact rewrites the name and attribute arenas once more than half of
// their bytes belong to no node.
func (s *Set) compact() {
	if s.garbage < 4096 || s.garbage*2 < len(s.names)+len(s.attrs) {
		return
	}
	names := make([]byte, 0, len(s.names)-s.garbage/2)
	var attrs []byte
	for _, id := range s.live {
		name, attr := s.Name(id), s.Attr(id)
		s.nameAt[id] = uint32(len(names))
		names = append(names, name...)
		s.attrAt[id] = uint32(len(attrs))
		attrs = append(attrs, attr...)
	}
	s.names, s.attrs, s.garbage = names, attrs, 0
}

// Vector is node id's vector as stored, back to its length: dequantized,
// de-normalized.
func (s *Set) Vector(id uint32) []float32 {
	out := make([]float32, s.dim)
	n := s.norms[id]
	switch q := s.vecOf(id); s.quant {
	case NoQuant:
		for i, x := range q.f {
			out[i] = x * n
		}
	case Bin:
		for i := range out {
			if q.b[i/64]>>(i%64)&1 == 1 {
				out[i] = n
			} else {
				out[i] = -n
			}
		}
	default:
		for i, x := range q.q {
			out[i] = float32(x) * q.r / 127 * n
		}
	}
	return out
}

// Raw is node id's stored vector bytes, its length before normalization
// and (Q8) its range, as VEMB RAW gives them.
func (s *Set) Raw(id uint32) (data []byte, norm, rng float32) {
	switch q := s.vecOf(id); s.quant {
	case NoQuant:
		for _, x := range q.f {
			data = appendU32(data, math.Float32bits(x))
		}
	case Bin:
		for i := range (s.dim + 7) / 8 {
			data = append(data, byte(q.b[i/8]>>(8*(i%8))))
		}
	default:
		for _, x := range q.q {
			data = append(data, byte(x))
		}
		rng = q.r
	}
	return data, s.norms[id], rng
}

func appendU32(b []byte, v uint32) []byte {
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
}

// Result is a node found by a search and its distance from the query,
// from 0 (same direction) to 2 (opposite).
type Result struct {
	ID   uint32
	Dist float32
}

// Similarity is the score VSIM gives: 1 for the same direction, 0 for
// opposite ones.
func (r Result) Similarity() float64 { return 1 - float64(r.Dist)/2 }

// Query is a vector made ready to search a set with.
type Query struct{ q query }

// NewQuery normalizes and quantizes v (the set's stored dimensions) as the
// set stores its own vectors.
func (s *Set) NewQuery(v []float32) Query {
	u := slices.Clone(v)
	normalize(u)
	switch s.quant {
	case NoQuant:
		return Query{query{f: u}}
	case Bin:
		b := make([]uint64, s.words)
		quantizeBin(u, b)
		return Query{query{b: b}}
	}
	q := make([]int8, s.dim)
	r := quantizeQ8(u, q)
	return Query{query{q: q, r: r}}
}

// NodeQuery is node id's own vector as a query.
func (s *Set) NodeQuery(id uint32) Query {
	q := s.vecOf(id)
	return Query{query{f: slices.Clone(q.f), q: slices.Clone(q.q), r: q.r, b: slices.Clone(q.b)}}
}

// Search returns up to count nodes nearest q, nearest first, exploring
// with effort ef (at least count). With filter, only nodes whose
// attributes pass it are results, and at most filterEF nodes are weighed
// (0: no limit). truth weighs every node instead of walking the graph.
func (s *Set) Search(q Query, count, ef int, filter *Filter, filterEF int, truth bool) []Result {
	ef = min(max(ef, count), len(s.live))
	if ef == 0 {
		return nil
	}
	var accept func(uint32) bool
	if filter != nil {
		accept = func(id uint32) bool { return filter.Match(s.Attr(id)) }
	}
	sc := s.getScratch()
	defer scratchPool.Put(sc)
	var found []item
	if truth {
		found = s.scan(q.q, ef, sc, accept)
	} else {
		found = s.search(q.q, ef, sc, accept, filterEF)
	}
	out := make([]Result, 0, min(len(found), count))
	for _, it := range found[:min(len(found), count)] {
		out = append(out, Result{it.id, it.dist})
	}
	return out
}

// Links is node id's neighbours per level, highest level first.
func (s *Set) Links(id uint32) [][]Result {
	q := s.vecOf(id)
	out := make([][]Result, 0, s.levels[id]+1)
	for l := int(s.levels[id]); l >= 0; l-- {
		var lv []Result
		for _, n := range links(s.linksAt(id, l)) {
			lv = append(lv, Result{n, s.dist(q, n)})
		}
		out = append(out, lv)
	}
	return out
}

// Live is the node ids in use, in no particular order; it changes with
// the set.
func (s *Set) Live() []uint32 { return s.live }

// Sorted is the node ids in use ordered by name (bytewise).
func (s *Set) Sorted() []uint32 {
	if len(s.sorted) != len(s.live) {
		s.sorted = append(s.sorted[:0], s.live...)
		slices.SortFunc(s.sorted, func(a, b uint32) int { return bytes.Compare(s.Name(a), s.Name(b)) })
	}
	return s.sorted
}

// Memory estimates the bytes the set holds.
func (s *Set) Memory() int {
	return 256 + cap(s.f32)*4 + cap(s.q8) + cap(s.ranges)*4 + cap(s.bin)*8 + cap(s.norms)*4 +
		cap(s.levels) + (cap(s.inDegree)+cap(s.links0)+cap(s.upperAt)+cap(s.upper))*4 +
		cap(s.names) + cap(s.attrs) + (cap(s.nameAt)+cap(s.nameLen)+cap(s.attrAt)+cap(s.attrLen))*4 +
		(cap(s.table)+cap(s.live)+cap(s.livePos)+cap(s.sorted)+cap(s.freeIDs))*4 + cap(s.proj)*4
}

// Clone returns an independent copy (COPY).
func (s *Set) Clone() *Set {
	c := *s
	c.f32, c.q8, c.ranges, c.bin = slices.Clone(s.f32), slices.Clone(s.q8), slices.Clone(s.ranges), slices.Clone(s.bin)
	c.norms, c.levels, c.inDegree = slices.Clone(s.norms), slices.Clone(s.levels), slices.Clone(s.inDegree)
	c.links0, c.upperAt, c.upper = slices.Clone(s.links0), slices.Clone(s.upperAt), slices.Clone(s.upper)
	for i := range c.freeUpper {
		c.freeUpper[i] = slices.Clone(s.freeUpper[i])
	}
	c.freeIDs = slices.Clone(s.freeIDs)
	c.names, c.nameAt, c.nameLen = slices.Clone(s.names), slices.Clone(s.nameAt), slices.Clone(s.nameLen)
	c.attrs, c.attrAt, c.attrLen = slices.Clone(s.attrs), slices.Clone(s.attrAt), slices.Clone(s.attrLen)
	c.table, c.live, c.livePos, c.sorted = slices.Clone(s.table), slices.Clone(s.live), slices.Clone(s.livePos), nil
	c.uid = nextUID.Add(1) - 1
	return &c
}
