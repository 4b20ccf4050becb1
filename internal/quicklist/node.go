// Package quicklist holds lists of byte strings in packed nodes: a small list
// is one node kept inline in the keyspace, a large one a List, a chain of
// nodes each within Redis's list-max-listpack-size limit. A node costs the
// collector one pointer however many elements it packs. A small set's
// listpack form is a packed node too, of distinct members.
//
// A packed node is the element count as a uvarint followed by the elements,
// each its length as a uvarint, its bytes, and the length's uvarint bytes
// again in reverse order, so that a node is walked from either end.
package quicklist

import (
	"encoding/binary"
	"slices"
)

// Empty is the packed node of no elements.
var Empty = []byte{0}

// sizeSafetyLimit caps a node's bytes under a positive (element count) fill,
// as Redis's SIZE_SAFETY_LIMIT does.
const sizeSafetyLimit = 8192

// Fits reports whether a node of size bytes and count elements is within the
// fill limit (list-max-listpack-size): positive, at most fill elements;
// negative, at most 4 KB << (-fill-1) bytes (-1 to -5). A single element
// always fits.
func Fits(fill, size, count int) bool {
	if count <= 1 {
		return true
	}
	if fill > 0 {
		return count <= fill && size <= sizeSafetyLimit
	}
	return size <= maxBytes(fill)
}

// newNode returns the memory for a tail node whose first element's packed
// size is first. A size-bounded node gets its whole size at once: growing
// it by append would leave, per node filled, garbage as big as the node,
// which the Go heap holds until a collection (RPUSH of a million elements
// took 1.4x Redis's memory).
func newNode(fill, first int) []byte {
	if fill > 0 {
		return nil
	}
	return make([]byte, 0, max(maxBytes(fill), first+2*binary.MaxVarintLen64))
}

func maxBytes(fill int) int {
	shift := min(max(-fill-1, 0), 4)
	return 4096 << shift
}

func uvarintLen(n int) int {
	l := 1
	for ; n >= 0x80; n >>= 7 {
		l++
	}
	return l
}

// ElemSize is the packed size of an element.
func ElemSize(e []byte) int { return 2*uvarintLen(len(e)) + len(e) }

func appendElem(dst, e []byte) []byte {
	var tmp [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(tmp[:], uint64(len(e)))
	dst = append(dst, tmp[:k]...)
	dst = append(dst, e...)
	for i := k - 1; i >= 0; i-- {
		dst = append(dst, tmp[i])
	}
	return dst
}

// Count returns the number of elements of a packed node.
func Count(b []byte) int {
	n, _ := binary.Uvarint(b)
	return int(n)
}

func headerLen(b []byte) int {
	_, k := binary.Uvarint(b)
	return k
}

// next returns the element starting at off and the offset after it.
func next(b []byte, off int) (e []byte, end int) {
	l, k := binary.Uvarint(b[off:])
	s := off + k
	end = s + int(l)
	return b[s:end:end], end + k
}

// prev returns the element ending at end and the offset where it starts.
func prev(b []byte, end int) (e []byte, start int) {
	var l uint64
	i, shift := end-1, 0
	for {
		c := b[i]
		l |= uint64(c&0x7f) << shift
		i--
		if c < 0x80 {
			break
		}
		shift += 7
	}
	k := end - 1 - i
	dataEnd := end - k
	s := dataEnd - int(l)
	return b[s:dataEnd:dataEnd], s - k
}

// seek returns the byte offset of element i (0 <= i <= count) of a packed
// node, walking from the nearer end.
func seek(b []byte, i int) int {
	n := Count(b)
	if i <= n/2 {
		off := headerLen(b)
		for ; i > 0; i-- {
			_, off = next(b, off)
		}
		return off
	}
	off := len(b)
	for ; i < n; i++ {
		_, off = prev(b, off)
	}
	return off
}

// Index returns element i (0 <= i < count) of a packed node.
func Index(b []byte, i int) []byte {
	e, _ := next(b, seek(b, i))
	return e
}

// Find returns the index of the first element of a packed node equal to e,
// or -1: a set's listpack form looks its members up with it.
func Find(b, e []byte) int {
	off := headerLen(b)
	for i := range Count(b) {
		var x []byte
		x, off = next(b, off)
		if string(x) == string(e) {
			return i
		}
	}
	return -1
}

// Append appends e to the packed node b, which the caller owns (it is
// changed in place), and returns it.
func Append(b, e []byte) []byte {
	return setCount(appendElem(b, e), Count(b)+1)
}

// Offsets returns the byte offsets of a packed node's elements, for ElemAt.
func Offsets(b []byte) []int {
	offs := make([]int, Count(b))
	off := headerLen(b)
	for i := range offs {
		offs[i] = off
		_, off = next(b, off)
	}
	return offs
}

// ElemAt returns the element at a byte offset Offsets returned.
func ElemAt(b []byte, off int) []byte {
	e, _ := next(b, off)
	return e
}

// Splice appends to dst[:0] the packed node b with its elements [i, j)
// replaced by ins, and returns it. dst must not overlap b.
func Splice(dst, b []byte, i, j int, ins ...[]byte) []byte {
	from := seek(b, i)
	to := from
	for k := i; k < j; k++ {
		_, to = next(b, to)
	}
	dst = binary.AppendUvarint(dst[:0], uint64(Count(b)-(j-i)+len(ins)))
	dst = append(dst, b[headerLen(b):from]...)
	for _, e := range ins {
		dst = appendElem(dst, e)
	}
	return append(dst, b[to:]...)
}

// Filter appends to dst[:0] the packed node b without the elements keep
// rejects, and returns it with the number removed. dst must not overlap b.
func Filter(dst, b []byte, keep func(e []byte) bool) (out []byte, removed int) {
	n := Count(b)
	dst = slices.Grow(dst[:0], len(b)+binary.MaxVarintLen64)
	dst = dst[:binary.MaxVarintLen64]
	for i, off := 0, headerLen(b); i < n; i++ {
		start := off
		var e []byte
		e, off = next(b, off)
		if keep(e) {
			dst = append(dst, b[start:off]...)
		} else {
			removed++
		}
	}
	var head [binary.MaxVarintLen64]byte
	h := binary.PutUvarint(head[:], uint64(n-removed))
	start := binary.MaxVarintLen64 - h
	copy(dst[start:], head[:h])
	return dst[start:], removed
}

// Each calls fn on the elements of a packed node from element i on, forward
// or backward, until fn returns false.
func Each(b []byte, i int, backward bool, fn func(e []byte) bool) bool {
	if backward {
		for off := seek(b, i+1); i >= 0; i-- {
			var e []byte
			e, off = prev(b, off)
			if !fn(e) {
				return false
			}
		}
		return true
	}
	n := Count(b)
	for off := seek(b, i); i < n; i++ {
		var e []byte
		e, off = next(b, off)
		if !fn(e) {
			return false
		}
	}
	return true
}

// setCount rewrites the count of a packed node in place, moving the elements
// when the count's length changes.
func setCount(b []byte, n int) []byte {
	oh, nh := headerLen(b), uvarintLen(n)
	switch {
	case nh > oh:
		b = append(b, make([]byte, nh-oh)...)
		copy(b[nh:], b[oh:len(b)-(nh-oh)])
	case nh < oh:
		copy(b[nh:], b[oh:])
		b = b[:len(b)-(oh-nh)]
	}
	binary.PutUvarint(b, uint64(n))
	return b
}
