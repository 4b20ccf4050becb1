package zset

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// harness runs operations on a Tree and on a model, a sorted slice, and
// compares every answer. It also keeps one SCAN going across the operations
// and checks Redis's guarantee when it ends: every member present for the
// whole scan was returned.
type harness struct {
	t     testing.TB
	tr    Tree
	ref   []elem // sorted
	score map[string]float64

	scanning bool
	cursor   uint64
	keep     map[string]bool // present since the scan started
	seen     map[string]bool
	scans    int // scans completed
}

func newHarness(t testing.TB) *harness {
	return &harness{t: t, score: map[string]float64{}}
}

func (h *harness) pos(m string, s float64) int {
	i, _ := slices.BinarySearchFunc(h.ref, elem{m, s}, cmpElem)
	return i
}

// upsert adds m or changes its score, as ZADD does.
func (h *harness) upsert(m string, s float64) {
	old, ok := h.score[m]
	if !ok {
		h.tr.Add([]byte(m), s)
		h.ref = slices.Insert(h.ref, h.pos(m, s), elem{m, s})
		h.score[m] = s
		return
	}
	h.tr.SetScore([]byte(m), s)
	if old == s {
		return // the stored score keeps its sign, as in Redis
	}
	h.ref = slices.Delete(h.ref, h.pos(m, old), h.pos(m, old)+1)
	h.ref = slices.Insert(h.ref, h.pos(m, s), elem{m, s})
	h.score[m] = s
}

func (h *harness) drop(m string) {
	s, ok := h.score[m]
	if ok {
		i := h.pos(m, s)
		h.ref = slices.Delete(h.ref, i, i+1)
		delete(h.score, m)
		delete(h.keep, m)
	}
}

func (h *harness) remove(m string) {
	if got, want := h.tr.Remove([]byte(m)), h.has(m); got != want {
		h.t.Fatalf("Remove(%q) = %v, want %v", m, got, want)
	}
	h.drop(m)
}

func (h *harness) has(m string) bool { _, ok := h.score[m]; return ok }

// removeAt removes the element of rank i through the member bytes At
// returns, which alias the tree (the server's ZREMRANGEBYRANK does this).
func (h *harness) removeAt(i int) {
	if len(h.ref) == 0 {
		return
	}
	i %= len(h.ref)
	m, _ := h.tr.At(i)
	want := h.ref[i].m
	if string(m) != want || !h.tr.Remove(m) {
		h.t.Fatalf("At(%d) = %q, remove failed or want %q", i, m, want)
	}
	h.drop(want)
}

func (h *harness) lookup(m string) {
	s, ok := h.tr.Score([]byte(m))
	ws, wok := h.score[m]
	if ok != wok || math.Float64bits(s) != math.Float64bits(ws) {
		h.t.Fatalf("Score(%q) = %v %v, want %v %v", m, s, ok, ws, wok)
	}
	r, ok := h.tr.Rank([]byte(m))
	if ok != wok || (ok && r != h.pos(m, ws)) {
		h.t.Fatalf("Rank(%q) = %d %v, want %d %v", m, r, ok, h.pos(m, ws), wok)
	}
}

func (h *harness) at(i int) {
	if len(h.ref) == 0 {
		return
	}
	i %= len(h.ref)
	m, s := h.tr.At(i)
	if e := h.ref[i]; string(m) != e.m || math.Float64bits(s) != math.Float64bits(e.s) {
		h.t.Fatalf("At(%d) = %q %v, want %v", i, m, s, e)
	}
}

// count checks Count for bounds on scores alone (ZRANGEBYSCORE) and on whole
// elements.
func (h *harness) count(bs float64, bm string) {
	bounds := []Before{
		func(s float64, _ []byte) bool { return s < bs },
		func(s float64, _ []byte) bool { return s <= bs },
		func(s float64, m []byte) bool { return Less(s, m, bs, []byte(bm)) },
	}
	for k, before := range bounds {
		want, _ := slices.BinarySearchFunc(h.ref, false, func(e elem, _ bool) int {
			if before(e.s, []byte(e.m)) {
				return -1
			}
			return 1
		})
		if got := h.tr.Count(before); got != want {
			h.t.Fatalf("Count(bound %d, %v %q) = %d, want %d", k, bs, bm, got, want)
		}
	}
	h.scoreRange(bs, bs+float64(len(bm)%4))
	h.scoreRange(math.Inf(-1), bs)
}

// scoreRange checks ScoreRange, whole and stopped after a few elements.
func (h *harness) scoreRange(from, to float64) {
	lo, _ := slices.BinarySearchFunc(h.ref, from, func(e elem, from float64) int { return cmpBool(e.s < from) })
	hi, _ := slices.BinarySearchFunc(h.ref, to, func(e elem, to float64) int { return cmpBool(e.s < to) })
	want := h.ref[lo:max(lo, hi)]
	for _, stop := range []int{-1, 0, 3} {
		n := 0
		h.tr.ScoreRange(from, to, func(m []byte, s float64) bool {
			if n >= len(want) || string(m) != want[n].m || s != want[n].s {
				h.t.Fatalf("ScoreRange(%v, %v): element %d is %q %v, want %v", from, to, n, m, s, want[min(n, len(want)):])
			}
			n++
			return n != stop+1
		})
		if w := len(want); n != w && (stop < 0 || n != min(w, stop+1)) {
			h.t.Fatalf("ScoreRange(%v, %v) stopping after %d: %d elements, want %d", from, to, stop+1, n, w)
		}
	}
}

// cmpBool orders true (before the bound) first, for binary searches.
func cmpBool(before bool) int {
	if before {
		return -1
	}
	return 1
}

// scanStep continues the scan, or starts one.
func (h *harness) scanStep(count int) {
	if !h.scanning {
		h.scanning, h.cursor = true, 0
		h.keep, h.seen = map[string]bool{}, map[string]bool{}
		for m := range h.score {
			h.keep[m] = true
		}
	}
	h.cursor = h.tr.Scan(h.cursor, count, func(m []byte, s float64) {
		if ws, ok := h.score[string(m)]; !ok || math.Float64bits(ws) != math.Float64bits(s) {
			h.t.Fatalf("Scan returned %q %v, want %v %v", m, s, ws, ok)
		}
		h.seen[string(m)] = true
	})
	if h.cursor != 0 {
		return
	}
	for m := range h.keep {
		if !h.seen[m] {
			h.t.Fatalf("Scan missed %q, present for the whole scan", m)
		}
	}
	h.scanning = false
	h.scans++
}

// clone checks that a clone has the same elements and shares nothing.
func (h *harness) clone() {
	c := h.tr.Clone()
	if c.Len() != len(h.ref) {
		h.t.Fatalf("clone Len %d, want %d", c.Len(), len(h.ref))
	}
	for i, e := range h.ref {
		if m, s := c.At(i); string(m) != e.m || s != e.s {
			h.t.Fatalf("clone At(%d) = %q %v, want %v", i, m, s, e)
		}
	}
	for _, e := range h.ref {
		c.Remove([]byte(e.m))
	}
	c.Add([]byte("clone-only"), 1)
	if _, ok := h.tr.Score([]byte("clone-only")); ok || h.tr.Len() != len(h.ref) {
		h.t.Fatal("clone shares state")
	}
}

// verify compares everything and checks the tree's invariants.
func (h *harness) verify() {
	if h.tr.Len() != len(h.ref) {
		h.t.Fatalf("Len %d, want %d", h.tr.Len(), len(h.ref))
	}
	for i, e := range h.ref {
		h.at(i)
		h.lookup(e.m)
	}
	if len(h.ref) > 0 {
		var last *elem
		h.checkNode(h.tr.root, h.tr.height, true, &last)
	}
	used := 0
	for i, s := range h.tr.slots {
		if s == 0 {
			continue
		}
		used++
		for j := h.tr.homeOf(s, h.tr.log); j != i; j = (j + 1) & (len(h.tr.slots) - 1) {
			if h.tr.slots[j] == 0 {
				h.t.Fatalf("slot %d unreachable from its home", i)
			}
		}
	}
	if used != len(h.ref) || h.tr.dead*2 > h.tr.slab.Used && len(h.ref) > 0 {
		h.t.Fatalf("%d slots used for %d members; %d of %d slab bytes dead", used, len(h.ref), h.tr.dead, h.tr.slab.Used)
	}
}

// checkNode checks node n's subtree (fill, counts, keys, order) and returns
// its element count and first element; last is the element before it.
func (h *harness) checkNode(n int32, height int, root bool, last **elem) (int, elem) {
	var first *elem
	if height == 0 {
		lf := &h.tr.leaves[n]
		if !root && lf.n < leafCap/4 {
			h.t.Fatalf("leaf of %d", lf.n)
		}
		for _, ref := range lf.refs[:lf.n] {
			s, m := h.tr.record(ref)
			e := &elem{string(m), s}
			if *last != nil && cmpElem(**last, *e) >= 0 {
				h.t.Fatalf("leaf order: %v then %v", **last, *e)
			}
			*last = e
			if first == nil {
				first = e
			}
		}
		return int(lf.n), *first
	}
	in := &h.tr.inners[n]
	if (!root && in.n < innerCap/4) || (root && in.n < 2) {
		h.t.Fatalf("inner node of %d", in.n)
	}
	total := 0
	for i, c := range in.child[:in.n] {
		before := *last
		got, f := h.checkNode(c, height-1, false, last)
		if i > 0 {
			k := in.keys[i]
			ke := elem{string(h.tr.member(k.ref)), k.score}
			if cmpElem(*before, ke) >= 0 || cmpElem(ke, f) > 0 {
				h.t.Fatalf("key %v not in (%v, %v]", ke, *before, f)
			}
		} else {
			first = &f
		}
		if got != in.count[i] {
			h.t.Fatalf("count %d, want %d", in.count[i], got)
		}
		total += got
	}
	return total, *first
}

// member returns the member named by id: varied lengths, some past a
// one-byte length prefix.
func member(id int) string {
	m := fmt.Sprintf("m%d", id)
	if id%13 == 0 {
		m += string(bytes.Repeat([]byte{'x'}, 130))
	}
	return m
}

// scoreOf returns a score from b: few distinct values (ties between scores
// are where members decide the order), both zeros and the infinities.
func scoreOf(b byte) float64 {
	switch b % 16 {
	case 0:
		return math.Copysign(0, -1)
	case 1:
		return math.Inf(1)
	case 2:
		return math.Inf(-1)
	}
	return float64(int(b%64)-32) / 4
}

// run interprets ops, four bytes per operation, over members 0..members-1.
func (h *harness) run(ops []byte, members int) {
	for ; len(ops) >= 4; ops = ops[4:] {
		id := int(binary.BigEndian.Uint16(ops[1:])) % members
		m, s := member(id), scoreOf(ops[3])
		switch ops[0] % 16 {
		case 0, 1, 2, 3, 4:
			h.upsert(m, s)
		case 5, 6:
			h.remove(m)
		case 7:
			h.removeAt(id)
		case 8:
			h.lookup(m)
		case 9:
			h.at(id)
		case 10:
			h.count(s, m)
		case 11, 12:
			h.scanStep(1 + int(ops[3])%8)
		case 13:
			h.clone()
		case 14:
			h.verify()
		}
		if h.tr.Len() != len(h.ref) {
			h.t.Fatalf("Len %d, want %d", h.tr.Len(), len(h.ref))
		}
	}
	h.verify()
}

func randomOps(r *rand.Rand, n int, weights [16]int) []byte {
	var table []byte
	for op, w := range weights {
		for range w {
			table = append(table, byte(op))
		}
	}
	ops := make([]byte, 4*n)
	for i := 0; i < len(ops); i += 4 {
		binary.BigEndian.PutUint32(ops[i:], r.Uint32())
		ops[i] = table[r.IntN(len(table))]
	}
	return ops
}

// TestTreeAgainstSlice runs phases of growth to tens of thousands of members
// (several B+tree levels, index growth) and of shrinking to almost none
// (merges, compaction, index shrinking), with a scan in progress throughout.
func TestTreeAgainstSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	h := newHarness(t)
	grow := [16]int{0: 30, 5: 2, 7: 1, 8: 2, 9: 2, 10: 1, 11: 2}
	shrink := [16]int{0: 4, 5: 25, 7: 6, 8: 2, 9: 2, 10: 1, 11: 2}
	for round, size := range []int{2000, 12000, 300, 5000} {
		h.run(randomOps(r, size*2, grow), size)
		h.run(randomOps(r, size*3, shrink), size)
		h.clone()
		t.Logf("round %d: %d members left, %d scans", round, h.tr.Len(), h.scans)
	}
	if h.scans < 10 {
		t.Fatalf("only %d scans completed", h.scans)
	}
}

// TestEqualScores: with one score the order is by member alone, so every
// comparison reads members from the slab.
func TestEqualScores(t *testing.T) {
	h := newHarness(t)
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 20000; i++ {
		h.upsert(member(r.IntN(8000)), 1)
		if i%3 == 0 {
			h.remove(member(r.IntN(8000)))
		}
	}
	h.verify()
	h.count(1, member(4000))
	h.count(1, "")
}

func TestShrinkReleases(t *testing.T) {
	var tr Tree
	for i := 0; i < 100000; i++ {
		tr.Add([]byte(member(i)), float64(i%100))
	}
	for i := 0; i < 99990; i++ {
		tr.Remove([]byte(member(i)))
	}
	if len(tr.slots) > 64 || len(tr.leaves) > 1 || tr.slab.Used > 2048 {
		t.Fatalf("not released: %d slots, %d leaves, %d slab bytes", len(tr.slots), len(tr.leaves), tr.slab.Used)
	}
	for i := 99990; i < 100000; i++ {
		tr.Remove([]byte(member(i)))
	}
	if tr.slab.MemoryBytes() != 0 || tr.leaves != nil || tr.slots != nil {
		t.Fatal("empty tree holds memory")
	}
}

func FuzzTree(f *testing.F) {
	f.Add([]byte{0, 0, 1, 5, 0, 0, 2, 7, 11, 0, 0, 1, 8, 0, 1, 0})
	f.Add(randomOps(rand.New(rand.NewPCG(7, 8)), 300, [16]int{0: 8, 5: 3, 7: 1, 8: 1, 9: 1, 10: 1, 11: 2, 13: 1, 14: 1}))
	f.Fuzz(func(t *testing.T, ops []byte) {
		newHarness(t).run(ops, 1000)
	})
}

// TestMovingWindow moves every member past the highest score in turn, like a
// time-ordered queue, then below the lowest: one end empties (merges and
// sharing of leaves and inner nodes, freed nodes reused), the other splits,
// and no record dies, so nothing is rebuilt by compaction.
func TestMovingWindow(t *testing.T) {
	h := newHarness(t)
	const n = 5000
	for i := 0; i < n; i++ {
		h.upsert(member(i), float64(i))
	}
	for _, dir := range []float64{1, -1} {
		for i := n; i < 4*n; i++ {
			h.upsert(member(i%n), dir*float64(i))
			if i%2 == 0 {
				h.upsert(member(i%n+n), dir*float64(i)) // and grow ...
			} else {
				h.remove(member((i-1)%n + n)) // ... and shrink around it
			}
			if i%1000 == 0 {
				h.scanStep(100)
			}
			if i%7919 == 0 {
				h.verify()
			}
		}
		h.verify()
	}
}

// TestHomeBeyondTag: a table larger than the slots' hash tags finds homes
// from the members' hashes.
func TestHomeBeyondTag(t *testing.T) {
	var tr Tree
	for i := 0; i < 100; i++ {
		tr.Add([]byte(member(i)), 0)
	}
	for _, s := range tr.slots {
		if s == 0 {
			continue
		}
		h := hashOf(tr.member(refOf(s)))
		if tr.homeOf(s, tagBits) != int(h>>(64-tagBits)) || tr.homeOf(s, tagBits+3) != int(h>>(64-tagBits-3)) {
			t.Fatal("home differs")
		}
	}
}

// benchTree returns a tree of n members with scattered scores.
func benchTree(n int) (*Tree, [][]byte) {
	var tr Tree
	members := make([][]byte, n)
	for i := range members {
		members[i] = []byte(fmt.Sprint("element:", i))
		tr.Add(members[i], float64(uint32(i)*2654435761))
	}
	return &tr, members
}

func BenchmarkAdd(b *testing.B) {
	tr, members := benchTree(1 << 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m := members[uint32(i*7919)&(1<<20-1)]
		tr.Remove(m)
		tr.Add(m, float64(i))
	}
}

func BenchmarkRank(b *testing.B) {
	tr, members := benchTree(1 << 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tr.Rank(members[uint32(i*7919)&(1<<20-1)])
	}
}

func BenchmarkScore(b *testing.B) {
	tr, members := benchTree(1 << 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tr.Score(members[uint32(i*7919)&(1<<20-1)])
	}
}

func BenchmarkAt(b *testing.B) {
	tr, _ := benchTree(1 << 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tr.At(i & (1<<20 - 1))
	}
}

// TestAscendingFill: ascending scores, as with timestamps, several runs at
// once, or descending ones fill the leaves instead of leaving every split one
// half empty.
func TestAscendingFill(t *testing.T) {
	const n = 20000
	for _, runs := range []int{1, 8, -8} {
		h := newHarness(t)
		for i := 0; i < n; i++ {
			j := i%abs(runs)*n + i/abs(runs)
			h.upsert(member(j), float64(j*runs/abs(runs)))
		}
		h.verify()
		fill := float64(n) / float64(len(h.tr.leaves)*leafCap)
		if fill < 0.85 {
			t.Fatalf("%d runs: leaves %.2f full", runs, fill)
		}
		for i := 0; i < n; i += 2 { // and still balanced as nodes empty
			h.remove(h.ref[len(h.ref)-1].m)
		}
		h.verify()
	}
}

func abs(x int) int { return max(x, -x) }
