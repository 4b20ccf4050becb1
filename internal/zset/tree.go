package zset

import (
	"encoding/binary"
	"slices"
)

// Tree is the large form. Every element is one record in a byte slab
// (slab.go): its score, then its member. Two indexes refer to records by
// their place in the slab: a member hash (index.go) for ZSCORE and for
// finding a member's record, and a counted B+tree (btree.go) that orders the
// records by (score, member) and ranks them. A member is
// stored once, and the collector sees a few slices of plain values however
// many members there are. The zero value is an empty set ready to use.
type Tree struct {
	slab  records
	dead  int // slab bytes of removed records
	count int

	slots []uint64 // member hash index, see index.go
	log   uint

	leaves     []leaf
	inners     []inner
	freeLeaves []int32
	freeInners []int32
	root       int32
	height     int // levels of inner nodes above the leaves

	// At's last leaf and the ranks it holds, [atFirst, atEnd), so that
	// reading ranks in order (ZRANGE) descends once per leaf. Changes clear
	// it. This makes At a write: a Tree is for one goroutine at a time.
	atLeaf         int32
	atFirst, atEnd int
}

// Len returns the number of members.
func (t *Tree) Len() int { return t.count }

// Clone returns an independent copy.
func (t *Tree) Clone() *Tree {
	c := *t
	c.slab = t.slab.clone()
	c.slots = slices.Clone(t.slots)
	c.leaves = slices.Clone(t.leaves)
	c.inners = slices.Clone(t.inners)
	c.freeLeaves = slices.Clone(t.freeLeaves)
	c.freeInners = slices.Clone(t.freeInners)
	return &c
}

func (t *Tree) record(ref uint64) (score float64, member []byte) {
	score, member, _ = t.slab.record(ref)
	return score, member
}

func (t *Tree) member(ref uint64) []byte { return t.slab.member(ref) }

// Score returns member's score.
func (t *Tree) Score(member []byte) (float64, bool) {
	i, _ := t.find(member, hashOf(member))
	if i < 0 {
		return 0, false
	}
	return t.slab.score(refOf(t.slots[i])), true
}

// Add adds an absent member.
func (t *Tree) Add(member []byte, score float64) {
	h := hashOf(member)
	_, free := t.find(member, h)
	if (t.count+1)*4 > len(t.slots)*3 {
		t.resize(logFor(t.count+1), nil)
		_, free = t.find(member, h)
	}
	ref := t.slab.add(member, score)
	t.slots[free] = h>>offBits<<offBits | (ref + 1)
	t.count++
	t.insert(ref, score, member)
}

// Remove removes member, reporting whether it was present.
func (t *Tree) Remove(member []byte) bool {
	i, _ := t.find(member, hashOf(member))
	if i < 0 {
		return false
	}
	ref := refOf(t.slots[i])
	score, _, size := t.slab.record(ref)
	t.unlink(ref, score, member)
	t.deleteSlot(i)
	t.count--
	t.dead += size
	if t.count == 0 {
		*t = Tree{}
	} else if t.dead*2 > t.slab.Used {
		t.compact()
	}
	return true
}

// SetScore changes a present member's score. The record keeps its place in
// the slab; only its position in the order changes.
func (t *Tree) SetScore(member []byte, score float64) {
	i, _ := t.find(member, hashOf(member))
	ref := refOf(t.slots[i])
	old := t.slab.score(ref)
	if old == score {
		return // as in Redis, -0 does not replace 0 or the reverse
	}
	t.unlink(ref, old, member)
	t.slab.setScore(ref, score)
	t.insert(ref, score, member)
}

// Rank returns member's rank (0 for the lowest score).
func (t *Tree) Rank(member []byte) (int, bool) {
	i, _ := t.find(member, hashOf(member))
	if i < 0 {
		return 0, false
	}
	ref := refOf(t.slots[i])
	return t.rank(ref, t.slab.score(ref), member), true
}

// At returns the element of rank i (0 <= i < Len).
func (t *Tree) At(i int) (member []byte, score float64) {
	if i < t.atFirst || i >= t.atEnd {
		n, j := t.root, i
		for h := t.height; h > 0; h-- {
			in := &t.inners[n]
			c := 0
			for j >= in.count[c] {
				j -= in.count[c]
				c++
			}
			n = in.child[c]
		}
		t.atLeaf, t.atFirst, t.atEnd = n, i-j, i-j+int(t.leaves[n].n)
	}
	score, member = t.record(t.leaves[t.atLeaf].refs[i-t.atFirst])
	return member, score
}

// compact copies the live records into a fresh slab in order, which also
// rebuilds the B+tree packed and the member index sized for what is left.
func (t *Tree) compact() {
	var fresh records
	old := t.slab
	refs := t.collect()
	for i, ref := range refs {
		_, _, size := old.record(ref)
		r, b := fresh.Reserve(size)
		copy(b, old.At(ref))
		refs[i] = r
		// Leave the new ref in the old record for the index rebuild.
		binary.LittleEndian.PutUint64(old.At(ref), r)
	}
	t.slab, t.dead = fresh, 0
	t.build(refs)
	t.resize(logFor(t.count), &old)
}
