// Package zset holds the two encodings of a sorted set: the compact inline
// form (OBJECT ENCODING listpack), plain bytes kept sorted, and the large form
// Tree (OBJECT ENCODING skiplist): records in a byte slab, a member hash and a
// counted B+tree over them, all in slices of plain values, so it holds no Go
// pointer per member.
//
// Elements are ordered by score, then by member bytes, as Redis orders them;
// scores compare as float64 (so -0 equals 0).
package zset

import (
	"bytes"
	"encoding/binary"
	"github.com/keyhive/keyhive/internal/listpack"
	"math"
)

// Before reports whether an element lies before a bound. Over the ordered
// elements it must be true for a prefix and false for the rest.
type Before func(score float64, member []byte) bool

// Less reports whether (s1, m1) orders before (s2, m2).
func Less(s1 float64, m1 []byte, s2 float64, m2 []byte) bool {
	return s1 < s2 || (s1 == s2 && bytes.Compare(m1, m2) < 0)
}

// The compact form: uvarint(count) { uvarint(len(member)) member score }, the
// score as 8 little-endian bytes of its IEEE 754 bits, sorted. Functions that
// change one build the result in dst's memory (which must not overlap the
// input) and never modify their input.

// The compact encoding has listpack's header (the element count); its
// elements are a length-prefixed member and an 8-byte score.

// Empty is the compact encoding of no elements.
var Empty = listpack.Empty

// Len returns the number of elements in b.
func Len(b []byte) int { return listpack.Len(b) }

// Iter walks the elements of a compact encoding in order.
type Iter struct {
	b   []byte
	off int
}

// NewIter returns an iterator over b's elements.
func NewIter(b []byte) Iter { return Iter{b: b, off: listpack.First(b)} }

// Offset returns the position of the element Next returns next, for Seek.
func (it *Iter) Offset() int { return it.off }

// Seek moves the iterator to a position Offset returned.
func (it *Iter) Seek(off int) { it.off = off }

// Next returns the next element, or ok=false at the end. member aliases b.
func (it *Iter) Next() (member []byte, score float64, ok bool) {
	if it.off >= len(it.b) {
		return nil, 0, false
	}
	l, n := binary.Uvarint(it.b[it.off:])
	start := it.off + n
	end := start + int(l)
	member = it.b[start:end:end]
	score = math.Float64frombits(binary.LittleEndian.Uint64(it.b[end:]))
	it.off = end + 8
	return member, score, true
}

// Find returns member's score and rank.
func Find(b, member []byte) (score float64, rank int, ok bool) {
	it := NewIter(b)
	for i := 0; ; i++ {
		m, s, more := it.Next()
		if !more {
			return 0, 0, false
		}
		if bytes.Equal(m, member) {
			return s, i, true
		}
	}
}

// Count returns how many elements lie before the bound.
func Count(b []byte, before Before) int {
	it := NewIter(b)
	n := 0
	for {
		m, s, ok := it.Next()
		if !ok || !before(s, m) {
			return n
		}
		n++
	}
}

func appendElem(out, member []byte, score float64) []byte {
	out = binary.AppendUvarint(out, uint64(len(member)))
	out = append(out, member...)
	return binary.LittleEndian.AppendUint64(out, math.Float64bits(score))
}

// Insert builds b with member (which must be absent) added at its place. A
// score of -0 is stored as 0, as Redis's listpack keeps scores as strings.
func Insert(dst, b, member []byte, score float64) []byte {
	if score == 0 {
		score = 0
	}
	it := NewIter(b)
	at := len(b)
	for {
		off := it.off
		m, s, ok := it.Next()
		if !ok {
			break
		}
		if Less(score, member, s, m) {
			at = off
			break
		}
	}
	_, hn := binary.Uvarint(b)
	out := binary.AppendUvarint(dst[:0], uint64(Len(b)+1))
	out = append(out, b[hn:at]...)
	out = appendElem(out, member, score)
	return append(out, b[at:]...)
}

// RemoveRange builds b without the elements of ranks start to end-1.
func RemoveRange(dst, b []byte, start, end int) []byte {
	it := NewIter(b)
	from, to := len(b), len(b)
	for i := 0; ; i++ {
		if i == start {
			from = it.off
		}
		if i == end {
			to = it.off
			break
		}
		if _, _, ok := it.Next(); !ok {
			break
		}
	}
	_, hn := binary.Uvarint(b)
	out := binary.AppendUvarint(dst[:0], uint64(Len(b)-(end-start)))
	out = append(out, b[hn:from]...)
	return append(out, b[to:]...)
}
