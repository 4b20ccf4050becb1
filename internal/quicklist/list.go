package quicklist

import (
	"encoding/binary"
	"slices"
)

// List is a large list: a chain of packed nodes. Its live nodes are
// nodes[lo:]; the gap before lo makes adding a node at the head amortized
// O(1). Methods that add elements take the fill limit
// (list-max-listpack-size) their nodes must keep to.
type List struct {
	nodes [][]byte
	lo    int
	n     int
	// front is the allocation the head node was last placed in, with free
	// room before it: PushFront writes an element into that room instead
	// of moving the node's elements along (as a listpack insert at the
	// head does), so LPUSH costs the same whatever the node's size.
	front []byte
}

// FromPacked returns a List of the elements of a packed node, split into
// nodes within fill. b is copied.
func FromPacked(fill int, b []byte) *List {
	l := &List{}
	l.nodes = split(fill, b, nil)
	l.n = Count(b)
	return l
}

// split appends to out the elements of packed node b as new nodes, each
// within fill.
func split(fill int, b []byte, out [][]byte) [][]byte {
	n := Count(b)
	off := headerLen(b)
	start, cnt := off, 0
	for i := 0; i < n; i++ {
		s := off
		_, off = next(b, off)
		if cnt > 0 && !Fits(fill, uvarintLen(cnt+1)+off-start, cnt+1) {
			out = append(out, pack(b[start:s], cnt))
			start, cnt = s, 0
		}
		cnt++
	}
	if cnt > 0 {
		out = append(out, pack(b[start:off], cnt))
	}
	return out
}

func pack(elems []byte, cnt int) []byte {
	p := make([]byte, 0, uvarintLen(cnt)+len(elems))
	p = binary.AppendUvarint(p, uint64(cnt))
	return append(p, elems...)
}

// Len returns the number of elements.
func (l *List) Len() int { return l.n }

func (l *List) live() [][]byte { return l.nodes[l.lo:] }

// Small returns the list as one packed node when it is a single node within
// half of fill, small enough to be kept inline again.
func (l *List) Small(fill int) ([]byte, bool) {
	live := l.live()
	if len(live) != 1 {
		return nil, false
	}
	b := live[0]
	c := Count(b)
	return b, c <= 1 || Fits(fill, 2*len(b), 2*c)
}

// Clone returns an independent copy.
func (l *List) Clone() *List {
	c := &List{n: l.n, nodes: make([][]byte, 0, len(l.live()))}
	for _, b := range l.live() {
		c.nodes = append(c.nodes, slices.Clone(b))
	}
	return c
}

// locate returns the live node holding element i and i's index in it.
func (l *List) locate(i int) (k, j int) {
	live := l.live()
	if i < l.n/2 {
		for k = 0; ; k++ {
			c := Count(live[k])
			if i < c {
				return k, i
			}
			i -= c
		}
	}
	i = l.n - 1 - i // index from the tail
	for k = len(live) - 1; ; k-- {
		c := Count(live[k])
		if i < c {
			return k, c - 1 - i
		}
		i -= c
	}
}

// replace replaces live node k with nodes (none drops it).
func (l *List) replace(k int, nodes ...[]byte) {
	l.nodes = slices.Replace(l.nodes, l.lo+k, l.lo+k+1, nodes...)
	if len(l.nodes) == l.lo {
		l.nodes, l.lo = l.nodes[:0], 0
	}
}

func (l *List) pushNodeFront(b []byte) {
	if l.lo == 0 {
		live := l.live()
		gap := len(live) + 4
		nodes := make([][]byte, gap+len(live), gap+2*len(live)+4)
		copy(nodes[gap:], live)
		l.nodes, l.lo = nodes, gap
	}
	l.lo--
	l.nodes[l.lo] = b
}

// PushBack appends e.
func (l *List) PushBack(fill int, e []byte) {
	l.n++
	if live := l.live(); len(live) > 0 {
		k := len(live) - 1
		b := live[k]
		c := Count(b)
		if Fits(fill, len(b)+ElemSize(e)+1, c+1) {
			live[k] = setCount(appendElem(b, e), c+1)
			return
		}
		if cap(b)-len(b) > len(b)/16 {
			// The full node stays behind: give back the room append grew
			// it by (a count-bounded node's).
			live[k] = slices.Clone(b)
		}
	}
	l.nodes = append(l.nodes, appendElem(binary.AppendUvarint(newNode(fill, ElemSize(e)), 1), e))
}

// PushFront prepends e.
func (l *List) PushFront(fill int, e []byte) {
	l.n++
	if live := l.live(); len(live) > 0 {
		b := live[0]
		c := Count(b)
		es := ElemSize(e)
		if Fits(fill, len(b)+es+1, c+1) {
			live[0] = l.prepend(b, c, e, es)
			return
		}
		if l.front != nil {
			// The full node stays behind: give back its room.
			live[0] = slices.Clone(b)
			l.front = nil
		}
	}
	l.pushNodeFront(appendElem(binary.AppendUvarint(nil, 1), e))
}

// prepend returns the head node b, holding c elements, with e (packed size
// es) in front: the count and e are written before b's elements, which stay
// in place, in the room front leaves before b (made when b has none).
func (l *List) prepend(b []byte, c int, e []byte, es int) []byte {
	oh, hl := headerLen(b), uvarintLen(c+1)
	need := hl + es - oh
	off := cap(l.front) - cap(b) // b's offset in front, if it lies there
	if off < 0 || off >= len(l.front) || &l.front[off] != &b[0] || off < need {
		// A quarter of the node's size as room keeps the copies amortized
		// O(1) per byte pushed and the unused room small.
		room := need + len(b)/4 + 32
		l.front = make([]byte, room+len(b))
		copy(l.front[room:], b)
		off, b = room, l.front[room:]
	}
	nb := l.front[off-need : off+len(b)]
	binary.PutUvarint(nb, uint64(c+1))
	appendElem(nb[hl:hl], e)
	return nb
}

// Index returns element i (0 <= i < Len).
func (l *List) Index(i int) []byte {
	k, j := l.locate(i)
	return Index(l.live()[k], j)
}

// rebuild replaces live node k by the packed node b, split when over fill.
func (l *List) rebuild(fill, k int, b []byte) {
	if Fits(fill, len(b), Count(b)) {
		l.replace(k, b)
		return
	}
	l.replace(k, split(fill, b, nil)...)
}

// Set replaces element i (0 <= i < Len) with e.
func (l *List) Set(fill, i int, e []byte) {
	k, j := l.locate(i)
	l.rebuild(fill, k, Splice(nil, l.live()[k], j, j+1, e))
}

// Insert inserts e before element i (0 <= i <= Len).
func (l *List) Insert(fill, i int, e []byte) {
	switch i {
	case 0:
		l.PushFront(fill, e)
	case l.n:
		l.PushBack(fill, e)
	default:
		k, j := l.locate(i)
		l.n++
		l.rebuild(fill, k, Splice(nil, l.live()[k], j, j, e))
	}
}

// Trim keeps elements [start, stop) (0 <= start <= stop <= Len), changing
// the end nodes in place.
func (l *List) Trim(start, stop int) {
	drop := l.n - stop
	for drop > 0 {
		live := l.live()
		k := len(live) - 1
		c := Count(live[k])
		if c <= drop {
			l.replace(k)
			drop -= c
			continue
		}
		b := live[k]
		live[k] = setCount(b[:seek(b, c-drop)], c-drop)
		drop = 0
	}
	for drop = start; drop > 0; {
		b := l.live()[0]
		c := Count(b)
		if c <= drop {
			l.replace(0)
			drop -= c
			continue
		}
		oh, off := headerLen(b), seek(b, drop)
		copy(b[oh:], b[off:])
		l.live()[0] = setCount(b[:len(b)-(off-oh)], c-drop)
		drop = 0
	}
	l.n = stop - start
}

// Filter removes the elements keep rejects, in order from the head, and
// returns how many it removed.
func (l *List) Filter(keep func(e []byte) bool) int {
	removed := 0
	for k := 0; k < len(l.live()); {
		b, r := Filter(nil, l.live()[k], keep)
		switch {
		case r == 0:
			k++
		case Count(b) == 0:
			l.replace(k)
		default:
			l.live()[k] = b
			k++
		}
		removed += r
	}
	l.n -= removed
	return removed
}

// Each calls fn on the elements from element i (0 <= i < Len) on, forward or
// backward, until fn returns false.
func (l *List) Each(i int, backward bool, fn func(e []byte) bool) {
	k, j := l.locate(i)
	live := l.live()
	if backward {
		for ; k >= 0; k-- {
			if !Each(live[k], j, true, fn) {
				return
			}
			if k > 0 {
				j = Count(live[k-1]) - 1
			}
		}
		return
	}
	for ; k < len(live); k++ {
		if !Each(live[k], j, false, fn) {
			return
		}
		j = 0
	}
}
