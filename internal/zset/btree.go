package zset

// The order index is a counted B+tree. Leaves hold record refs in
// (score, member) order; inner nodes hold their subtrees' element counts, so
// a rank is the sum of the counts left of the path to an element, and keys
// that route a search without reading the slab unless scores tie. Nodes live
// in two slices and refer to each other by index. Every node but the root
// stays at least a quarter full, so a path is O(log n) nodes.

const (
	leafCap   = 64
	innerCap  = 32
	maxHeight = 32 // far above what a quarter-full tree of 2^40 records needs
)

type leaf struct {
	n    int32
	refs [leafCap]uint64
}

// key is a subtree's lower bound. Its record may have been removed since: the
// bytes stay in the slab until compact rebuilds the tree.
type key struct {
	score float64
	ref   uint64
}

// inner holds subtrees in order; keys[i] (i >= 1) is at most the first
// element under child[i] and above every element under child[i-1].
type inner struct {
	n     int32
	child [innerCap]int32
	count [innerCap]int
	keys  [innerCap]key // keys[0] is unused
}

// step is an inner node on a search path and the child taken.
type step struct {
	node, i int32
}

func (in *inner) total() int {
	c := 0
	for _, x := range in.count[:in.n] {
		c += x
	}
	return c
}

func (in *inner) insertChild(pos int, k key, child int32, count int) {
	n := int(in.n)
	copy(in.child[pos+1:n+1], in.child[pos:n])
	copy(in.count[pos+1:n+1], in.count[pos:n])
	copy(in.keys[pos+1:n+1], in.keys[pos:n])
	in.child[pos], in.count[pos], in.keys[pos] = child, count, k
	in.n++
}

func (in *inner) removeChild(pos int) {
	n := int(in.n)
	copy(in.child[pos:], in.child[pos+1:n])
	copy(in.count[pos:], in.count[pos+1:n])
	copy(in.keys[pos:], in.keys[pos+1:n])
	in.n--
}

// keyLess reports whether (score, member) orders before k.
func (t *Tree) keyLess(score float64, member []byte, k key) bool {
	if score != k.score {
		return score < k.score
	}
	return string(member) < string(t.member(k.ref))
}

func (t *Tree) newLeaf() int32 {
	if n := len(t.freeLeaves); n > 0 {
		i := t.freeLeaves[n-1]
		t.freeLeaves = t.freeLeaves[:n-1]
		t.leaves[i].n = 0
		return i
	}
	t.leaves = append(t.leaves, leaf{})
	return int32(len(t.leaves) - 1)
}

func (t *Tree) newInner() int32 {
	if n := len(t.freeInners); n > 0 {
		i := t.freeInners[n-1]
		t.freeInners = t.freeInners[:n-1]
		t.inners[i].n = 0
		return i
	}
	t.inners = append(t.inners, inner{})
	return int32(len(t.inners) - 1)
}

// descend walks from the root to the leaf where (score, member) belongs,
// adding add to the counts on the way and recording the path when path is
// not nil. It returns the leaf and how many elements lie left of the path.
func (t *Tree) descend(score float64, member []byte, path *[maxHeight]step, add int) (leaf int32, before int) {
	n := t.root
	for d := 0; d < t.height; d++ {
		in := &t.inners[n]
		lo, hi := 1, int(in.n)
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if t.keyLess(score, member, in.keys[mid]) {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		i := lo - 1
		for _, c := range in.count[:i] {
			before += c
		}
		in.count[i] += add
		if path != nil {
			path[d] = step{n, int32(i)}
		}
		n = in.child[i]
	}
	return n, before
}

// indexOf returns ref's position in leaf n, found by ref: no slab reads.
func (t *Tree) indexOf(n int32, ref uint64) int {
	lf := &t.leaves[n]
	for j, r := range lf.refs[:lf.n] {
		if r == ref {
			return j
		}
	}
	panic("zset: record missing from its leaf")
}

func (t *Tree) rank(ref uint64, score float64, member []byte) int {
	n, before := t.descend(score, member, nil, 0)
	return before + t.indexOf(n, ref)
}

// insert puts the record at ref, holding (score, member), in order.
func (t *Tree) insert(ref uint64, score float64, member []byte) {
	t.atEnd = 0
	if len(t.leaves) == 0 {
		t.root, t.height = t.newLeaf(), 0
	}
	var path [maxHeight]step
	n, _ := t.descend(score, member, &path, 1)
	if t.leaves[n].n == leafCap && t.height > 0 {
		n = t.spill(&path, n, score, member)
	}
	lf := &t.leaves[n]
	lo, hi := 0, int(lf.n)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if r := lf.refs[mid]; t.keyLess(score, member, key{t.slab.score(r), r}) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if lf.n < leafCap {
		insertRef(lf, lo, ref)
		return
	}
	r := t.newLeaf()
	lf = &t.leaves[n]
	right := &t.leaves[r]
	const half = leafCap / 2
	copy(right.refs[:], lf.refs[half:])
	lf.n, right.n = half, leafCap-half
	if lo <= half {
		insertRef(lf, lo, ref)
	} else {
		insertRef(right, lo-half, ref)
	}
	first := right.refs[0]
	t.split(&path, n, int(lf.n), key{t.slab.score(first), first}, r, int(right.n))
}

// spill shares the elements of full leaf n, where (score, member) goes, with
// a sibling that has room, and returns the leaf where it goes now. Leaves
// thus fill up before they split, whatever the order of arrival: with
// splits alone, ascending scores (timestamps) would leave every leaf half
// empty.
func (t *Tree) spill(path *[maxHeight]step, n int32, score float64, member []byte) int32 {
	const room = leafCap - leafCap/8
	st := &path[t.height-1]
	in := &t.inners[st.node]
	i := int(st.i)
	var a int
	switch {
	case i > 0 && t.leaves[in.child[i-1]].n <= room:
		a = i - 1
	case i+1 < int(in.n) && t.leaves[in.child[i+1]].n <= room:
		a = i
	default:
		return n
	}
	t.rebalanceLeaves(in, a) // recounts both, without the new element
	if !t.keyLess(score, member, in.keys[a+1]) {
		a++
	}
	in.count[a]++
	st.i = int32(a)
	return in.child[a]
}

func insertRef(lf *leaf, pos int, ref uint64) {
	copy(lf.refs[pos+1:lf.n+1], lf.refs[pos:lf.n])
	lf.refs[pos] = ref
	lf.n++
}

// split hangs right, a new node with lower bound k, after left in left's
// parent on path, splitting full ancestors and the root as needed; lc and rc
// are their element counts.
func (t *Tree) split(path *[maxHeight]step, left int32, lc int, k key, right int32, rc int) {
	for d := t.height - 1; d >= 0; d-- {
		p, i := path[d].node, int(path[d].i)
		in := &t.inners[p]
		in.count[i] = lc
		if in.n < innerCap {
			in.insertChild(i+1, k, right, rc)
			return
		}
		q := t.newInner()
		in = &t.inners[p]
		sib := &t.inners[q]
		const half = innerCap / 2
		up := in.keys[half]
		copy(sib.child[:], in.child[half:])
		copy(sib.count[:], in.count[half:])
		copy(sib.keys[:], in.keys[half:])
		in.n, sib.n = half, innerCap-half
		if i+1 <= half {
			in.insertChild(i+1, k, right, rc)
		} else {
			sib.insertChild(i+1-half, k, right, rc)
		}
		left, lc, k, right, rc = p, in.total(), up, q, sib.total()
	}
	root := t.newInner()
	in := &t.inners[root]
	in.n = 2
	in.child[0], in.count[0] = left, lc
	in.child[1], in.count[1], in.keys[1] = right, rc, k
	t.root = root
	t.height++
}

// unlink takes the record at ref, holding (score, member), out of the order.
func (t *Tree) unlink(ref uint64, score float64, member []byte) {
	t.atEnd = 0
	var path [maxHeight]step
	n, _ := t.descend(score, member, &path, -1)
	lf := &t.leaves[n]
	j := t.indexOf(n, ref)
	copy(lf.refs[j:lf.n-1], lf.refs[j+1:lf.n])
	lf.n--
	small := lf.n < leafCap/4
	for d := t.height - 1; d >= 0 && small; d-- {
		p := path[d].node
		in := &t.inners[p]
		if in.n > 1 {
			a := max(int(path[d].i)-1, 0)
			if d == t.height-1 {
				t.rebalanceLeaves(in, a)
			} else {
				t.rebalanceInners(in, a)
			}
		}
		small = in.n < innerCap/4
	}
	for t.height > 0 && t.inners[t.root].n == 1 {
		t.freeInners = append(t.freeInners, t.root)
		t.root = t.inners[t.root].child[0]
		t.height--
	}
}

// rebalanceLeaves merges the leaves at a and a+1 of in if they fit in one,
// else shares their elements evenly.
func (t *Tree) rebalanceLeaves(in *inner, a int) {
	b := a + 1
	la, lb := &t.leaves[in.child[a]], &t.leaves[in.child[b]]
	if la.n+lb.n <= leafCap {
		copy(la.refs[la.n:], lb.refs[:lb.n])
		la.n += lb.n
		in.count[a] = int(la.n)
		t.freeLeaves = append(t.freeLeaves, in.child[b])
		in.removeChild(b)
		return
	}
	total := la.n + lb.n
	want := total / 2
	if k := want - la.n; k > 0 {
		copy(la.refs[la.n:], lb.refs[:k])
		copy(lb.refs[:], lb.refs[k:lb.n])
	} else {
		k = -k
		copy(lb.refs[k:], lb.refs[:lb.n])
		copy(lb.refs[:k], la.refs[want:la.n])
	}
	la.n, lb.n = want, total-want
	in.count[a], in.count[b] = int(la.n), int(lb.n)
	in.keys[b] = key{t.slab.score(lb.refs[0]), lb.refs[0]}
}

// rebalanceInners is rebalanceLeaves for inner nodes: the parent's key for
// the right node moves down into the pair and a new one moves up.
func (t *Tree) rebalanceInners(in *inner, a int) {
	b := a + 1
	na, nb := &t.inners[in.child[a]], &t.inners[in.child[b]]
	nb.keys[0] = in.keys[b]
	if na.n+nb.n <= innerCap {
		copy(na.child[na.n:], nb.child[:nb.n])
		copy(na.count[na.n:], nb.count[:nb.n])
		copy(na.keys[na.n:], nb.keys[:nb.n])
		na.n += nb.n
		in.count[a] += in.count[b]
		t.freeInners = append(t.freeInners, in.child[b])
		in.removeChild(b)
		return
	}
	total := na.n + nb.n
	want := total / 2
	if k := want - na.n; k > 0 {
		copy(na.child[na.n:], nb.child[:k])
		copy(na.count[na.n:], nb.count[:k])
		copy(na.keys[na.n:], nb.keys[:k])
		copy(nb.child[:], nb.child[k:nb.n])
		copy(nb.count[:], nb.count[k:nb.n])
		copy(nb.keys[:], nb.keys[k:nb.n])
	} else {
		k = -k
		copy(nb.child[k:], nb.child[:nb.n])
		copy(nb.count[k:], nb.count[:nb.n])
		copy(nb.keys[k:], nb.keys[:nb.n])
		copy(nb.child[:k], na.child[want:na.n])
		copy(nb.count[:k], na.count[want:na.n])
		copy(nb.keys[:k], na.keys[want:na.n])
	}
	na.n, nb.n = want, total-want
	in.count[a], in.count[b] = na.total(), nb.total()
	in.keys[b] = nb.keys[0]
}

// Count returns how many elements lie before the bound.
func (t *Tree) Count(before Before) int {
	if t.count == 0 {
		return 0
	}
	c, n := 0, t.root
	for h := t.height; h > 0; h-- {
		in := &t.inners[n]
		lo, hi := 1, int(in.n)
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if k := in.keys[mid]; before(k.score, t.member(k.ref)) {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		for _, x := range in.count[:lo-1] {
			c += x
		}
		n = in.child[lo-1]
	}
	lf := &t.leaves[n]
	lo, hi := 0, int(lf.n)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if before(t.record(lf.refs[mid])) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return c + lo
}

// ScoreRange calls fn for the elements with min <= score < max in order,
// until fn returns false; fn must not change the tree. Records lie scattered
// in the slab, so each leaf's scores are read first in a loop of independent
// loads, whose cache misses overlap, before fn sees the elements.
func (t *Tree) ScoreRange(min, max float64, fn func(member []byte, score float64) bool) {
	if t.count == 0 {
		return
	}
	// Descend by the keys' scores alone: every child left of the one taken
	// holds only scores below min.
	var path [maxHeight]step
	n := t.root
	for d := 0; d < t.height; d++ {
		in := &t.inners[n]
		lo, hi := 1, int(in.n)
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if in.keys[mid].score < min {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		path[d] = step{n, int32(lo - 1)}
		n = in.child[lo-1]
	}
	var scores [leafCap]float64
	for {
		lf := &t.leaves[n]
		refs := lf.refs[:lf.n]
		end := 0
		for ; end < len(refs); end++ {
			if scores[end] = t.slab.score(refs[end]); scores[end] >= max {
				break
			}
		}
		for j, ref := range refs[:end] {
			if scores[j] >= min && !fn(t.member(ref), scores[j]) {
				return
			}
		}
		if end < len(refs) {
			return
		}
		// The next leaf: up to the deepest ancestor with a next child,
		// then down its leftmost path.
		d := t.height - 1
		for d >= 0 && int(path[d].i)+1 >= int(t.inners[path[d].node].n) {
			d--
		}
		if d < 0 {
			return
		}
		path[d].i++
		n = t.inners[path[d].node].child[path[d].i]
		for d++; d < t.height; d++ {
			path[d] = step{n, 0}
			n = t.inners[n].child[0]
		}
	}
}

// collect returns the record offsets in order.
func (t *Tree) collect() []uint64 {
	return t.appendRefs(make([]uint64, 0, t.count), t.root, t.height)
}

func (t *Tree) appendRefs(dst []uint64, n int32, height int) []uint64 {
	if height == 0 {
		lf := &t.leaves[n]
		return append(dst, lf.refs[:lf.n]...)
	}
	in := &t.inners[n]
	for _, c := range in.child[:in.n] {
		dst = t.appendRefs(dst, c, height-1)
	}
	return dst
}

// build replaces the tree by one holding refs (in order, not empty) in full
// nodes, sizes spread evenly so that none is under half full.
func (t *Tree) build(refs []uint64) {
	type sub struct {
		node  int32
		count int
		first key
	}
	nl := (len(refs) + leafCap - 1) / leafCap
	t.leaves = make([]leaf, nl)
	level := make([]sub, nl)
	for i := range t.leaves {
		lo, hi := i*len(refs)/nl, (i+1)*len(refs)/nl
		lf := &t.leaves[i]
		lf.n = int32(copy(lf.refs[:], refs[lo:hi]))
		level[i] = sub{int32(i), hi - lo, key{t.slab.score(refs[lo]), refs[lo]}}
	}
	t.inners, t.freeLeaves, t.freeInners, t.height, t.atEnd = nil, nil, nil, 0, 0
	for len(level) > 1 {
		m := (len(level) + innerCap - 1) / innerCap
		for j := 0; j < m; j++ {
			lo, hi := j*len(level)/m, (j+1)*len(level)/m
			in := inner{n: int32(hi - lo)}
			for x, s := range level[lo:hi] {
				in.child[x], in.count[x], in.keys[x] = s.node, s.count, s.first
			}
			t.inners = append(t.inners, in)
			level[j] = sub{int32(len(t.inners) - 1), in.total(), in.keys[0]}
		}
		level = level[:m]
		t.height++
	}
	t.root = level[0].node
}
