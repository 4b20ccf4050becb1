package zset

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/keyhive/keyhive/internal/bytemap"
)

// Tree is the large form: a treap ordered by (score, member) with subtree
// sizes for rank, plus a member → score hash. Nodes are slice elements linked
// by int32 index (0 is no node), members are spans of a byte slab: the
// collector sees a few slices however many members there are. The zero value
// is an empty set ready to use.
type Tree struct {
	nodes  []node // nodes[0] is the empty sentinel
	root   int32
	free   int32 // list of unused nodes, linked by left
	slab   []byte
	dead   int // slab bytes of removed members
	rnd    uint64
	scores bytemap.Map // member → 8-byte score
}

type node struct {
	score       float64
	off         int
	mlen        uint32
	prio        uint32
	left, right int32
	size        int32 // -1 for an unused node
}

// Len returns the number of members.
func (t *Tree) Len() int { return t.scores.Len() }

// Clone returns an independent copy.
func (t *Tree) Clone() *Tree {
	c := *t
	c.nodes = append([]node(nil), t.nodes...)
	c.slab = bytes.Clone(t.slab)
	c.scores = *t.scores.Clone()
	return &c
}

func (t *Tree) member(n int32) []byte {
	nd := &t.nodes[n]
	end := nd.off + int(nd.mlen)
	return t.slab[nd.off:end:end]
}

func (t *Tree) size(n int32) int32 { return t.nodes[n].size }

func (t *Tree) update(n int32) {
	nd := &t.nodes[n]
	nd.size = t.nodes[nd.left].size + t.nodes[nd.right].size + 1
}

func (t *Tree) less(n int32, score float64, member []byte) bool {
	return Less(t.nodes[n].score, t.member(n), score, member)
}

// Score returns member's score.
func (t *Tree) Score(member []byte) (float64, bool) {
	v, ok := t.scores.Get(member)
	if !ok {
		return 0, false
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(v)), true
}

// Add adds an absent member.
func (t *Tree) Add(member []byte, score float64) {
	var v [8]byte
	binary.LittleEndian.PutUint64(v[:], math.Float64bits(score))
	t.scores.Set(member, v[:])
	n := t.alloc(member, score)
	l, r := t.split(t.root, score, member)
	t.root = t.merge(t.merge(l, n), r)
}

// Remove removes member, reporting whether it was present.
func (t *Tree) Remove(member []byte) bool {
	score, ok := t.Score(member)
	if !ok {
		return false
	}
	t.root = t.remove(t.root, score, member)
	t.scores.Delete(member)
	t.maybeCompact()
	return true
}

// SetScore changes a present member's score.
func (t *Tree) SetScore(member []byte, score float64) {
	t.Remove(member)
	t.Add(member, score)
}

// Rank returns member's rank (0 for the lowest score).
func (t *Tree) Rank(member []byte) (int, bool) {
	score, ok := t.Score(member)
	if !ok {
		return 0, false
	}
	return t.Count(func(s float64, m []byte) bool { return Less(s, m, score, member) }), true
}

// Count returns how many elements lie before the bound.
func (t *Tree) Count(before Before) int {
	c := 0
	for n := t.root; n != 0; {
		nd := &t.nodes[n]
		if before(nd.score, t.member(n)) {
			c += int(t.nodes[nd.left].size) + 1
			n = nd.right
		} else {
			n = nd.left
		}
	}
	return c
}

// At returns the element of rank i (0 <= i < Len).
func (t *Tree) At(i int) (member []byte, score float64) {
	n := t.root
	for {
		nd := &t.nodes[n]
		l := int(t.nodes[nd.left].size)
		switch {
		case i < l:
			n = nd.left
		case i == l:
			return t.member(n), nd.score
		default:
			i -= l + 1
			n = nd.right
		}
	}
}

// Scan iterates the members by the hash's cursor (see bytemap.Map.Scan).
func (t *Tree) Scan(cursor uint64, count int, fn func(member []byte, score float64)) uint64 {
	return t.scores.Scan(cursor, count, func(m, v []byte) {
		fn(m, math.Float64frombits(binary.LittleEndian.Uint64(v)))
	})
}

func (t *Tree) alloc(member []byte, score float64) int32 {
	if len(t.nodes) == 0 {
		t.nodes = append(t.nodes, node{})
	}
	t.rnd = t.rnd*6364136223846793005 + 1442695040888963407
	nd := node{score: score, off: len(t.slab), mlen: uint32(len(member)), prio: uint32(t.rnd >> 32), size: 1}
	t.slab = append(t.slab, member...)
	if n := t.free; n != 0 {
		t.free = t.nodes[n].left
		t.nodes[n] = nd
		return n
	}
	t.nodes = append(t.nodes, nd)
	return int32(len(t.nodes) - 1)
}

// split divides subtree n into the elements before (score, member) and the rest.
func (t *Tree) split(n int32, score float64, member []byte) (int32, int32) {
	if n == 0 {
		return 0, 0
	}
	if t.less(n, score, member) {
		l, r := t.split(t.nodes[n].right, score, member)
		t.nodes[n].right = l
		t.update(n)
		return n, r
	}
	l, r := t.split(t.nodes[n].left, score, member)
	t.nodes[n].left = r
	t.update(n)
	return l, n
}

// merge joins subtrees a and b, every element of a ordering before b's.
func (t *Tree) merge(a, b int32) int32 {
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	case t.nodes[a].prio > t.nodes[b].prio:
		t.nodes[a].right = t.merge(t.nodes[a].right, b)
		t.update(a)
		return a
	default:
		t.nodes[b].left = t.merge(a, t.nodes[b].left)
		t.update(b)
		return b
	}
}

func (t *Tree) remove(n int32, score float64, member []byte) int32 {
	nd := t.nodes[n]
	switch {
	case Less(score, member, nd.score, t.member(n)):
		t.nodes[n].left = t.remove(nd.left, score, member)
	case Less(nd.score, t.member(n), score, member):
		t.nodes[n].right = t.remove(nd.right, score, member)
	default:
		m := t.merge(nd.left, nd.right)
		t.dead += int(nd.mlen)
		t.nodes[n] = node{left: t.free, size: -1}
		t.free = n
		return m
	}
	t.update(n)
	return n
}

// maybeCompact rewrites the slab without removed members once they are most
// of it.
func (t *Tree) maybeCompact() {
	if t.dead < 1024 || t.dead*2 < len(t.slab) {
		return
	}
	slab := make([]byte, 0, len(t.slab)-t.dead)
	for i := 1; i < len(t.nodes); i++ {
		nd := &t.nodes[i]
		if nd.size < 0 {
			continue
		}
		off := len(slab)
		slab = append(slab, t.slab[nd.off:nd.off+int(nd.mlen)]...)
		nd.off = off
	}
	t.slab, t.dead = slab, 0
}
