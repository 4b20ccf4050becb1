// Package listpack is the compact inline encoding of small hashes: a count
// followed by length-prefixed field/value pairs in insertion order, as Redis's
// listpack keeps them. An encoding is plain bytes, stored as a key's value;
// the functions that change one return a new slice and never modify their
// input, which may live in the keyspace's arena.
//
// Layout: uvarint(pairs) { uvarint(len(field)) field uvarint(len(value)) value }.
package listpack

import (
	"bytes"
	"encoding/binary"
)

// Empty is the encoding of no pairs.
var Empty = []byte{0}

// Len returns the number of pairs in b.
func Len(b []byte) int {
	n, _ := binary.Uvarint(b)
	return int(n)
}

// Iter walks the pairs of an encoding in order.
type Iter struct {
	b   []byte
	off int
}

// First returns the offset of the first element, after the count header.
// Other compact encodings with the same header (sorted sets) use it too.
func First(b []byte) int {
	_, n := binary.Uvarint(b)
	return n
}

// NewIter returns an iterator over b's pairs.
func NewIter(b []byte) Iter { return Iter{b: b, off: First(b)} }

// Offset returns the position of the pair Next returns next, for Seek.
func (it *Iter) Offset() int { return it.off }

// Seek moves the iterator to a position Offset returned.
func (it *Iter) Seek(off int) { it.off = off }

// Next returns the next pair, or ok=false at the end. The slices alias b.
func (it *Iter) Next() (field, value []byte, ok bool) {
	if it.off >= len(it.b) {
		return nil, nil, false
	}
	field = it.str()
	value = it.str()
	return field, value, true
}

func (it *Iter) str() []byte {
	l, n := binary.Uvarint(it.b[it.off:])
	start := it.off + n
	it.off = start + int(l)
	return it.b[start:it.off:it.off]
}

// find returns the offsets of the pair holding field (start of the pair and
// of its value, and the end of the pair), or start=-1.
func find(b, field []byte) (start, valueAt, end int) {
	it := NewIter(b)
	for {
		s := it.off
		if s >= len(b) {
			return -1, 0, 0
		}
		f := it.str()
		v := it.off
		it.str()
		if bytes.Equal(f, field) {
			return s, v, it.off
		}
	}
}

// Get returns field's value.
func Get(b, field []byte) ([]byte, bool) {
	s, v, _ := find(b, field)
	if s < 0 {
		return nil, false
	}
	it := Iter{b: b, off: v}
	return it.str(), true
}

// Set builds, in dst's memory (which must not overlap b), b with field set to
// value: replaced where it was, or appended. added reports a new field.
func Set(dst, b, field, value []byte) (out []byte, added bool) {
	s, _, e := find(b, field)
	count := Len(b)
	if s < 0 {
		s, e = len(b), len(b)
		count++
		added = true
	}
	_, hn := binary.Uvarint(b)
	out = binary.AppendUvarint(dst[:0], uint64(count))
	out = append(out, b[hn:s]...)
	out = appendPair(out, field, value)
	out = append(out, b[e:]...)
	return out, added
}

// Delete builds, in dst's memory (which must not overlap b), b without the
// given fields, and reports how many were present.
func Delete(dst, b []byte, fields [][]byte) (out []byte, deleted int) {
	out = append(dst[:0], make([]byte, binary.MaxVarintLen64)...)
	it := NewIter(b)
	for {
		s := it.off
		f, _, ok := it.Next()
		if !ok {
			break
		}
		if contains(fields, f) {
			deleted++
			continue
		}
		out = append(out, b[s:it.off]...)
	}
	var head [binary.MaxVarintLen64]byte
	h := binary.PutUvarint(head[:], uint64(Len(b)-deleted))
	start := binary.MaxVarintLen64 - h
	copy(out[start:], head[:h])
	return out[start:], deleted
}

func contains(list [][]byte, f []byte) bool {
	for _, x := range list {
		if bytes.Equal(x, f) {
			return true
		}
	}
	return false
}

func appendPair(out, field, value []byte) []byte {
	out = binary.AppendUvarint(out, uint64(len(field)))
	out = append(out, field...)
	out = binary.AppendUvarint(out, uint64(len(value)))
	return append(out, value...)
}
