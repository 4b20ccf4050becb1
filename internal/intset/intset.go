// Package intset is the compact inline encoding of small sets of integers, as
// Redis's intset keeps them: distinct int64 values in ascending order. An
// encoding is plain bytes (8 bytes little-endian per value), stored as a key's
// value; the functions that change one return a new slice and never modify
// their input, which may live in the keyspace's arena.
package intset

import (
	"encoding/binary"
	"sort"
)

const width = 8

// Len returns the number of values in b.
func Len(b []byte) int { return len(b) / width }

// At returns the i-th smallest value of b.
func At(b []byte, i int) int64 { return int64(binary.LittleEndian.Uint64(b[i*width:])) }

// Search returns the index of v in b, or where it would be inserted, and
// whether it is present.
func Search(b []byte, v int64) (int, bool) {
	n := Len(b)
	i := sort.Search(n, func(i int) bool { return At(b, i) >= v })
	return i, i < n && At(b, i) == v
}

// Contains reports whether v is in b.
func Contains(b []byte, v int64) bool {
	_, ok := Search(b, v)
	return ok
}

// Add builds, in dst's memory (which must not overlap b), b with v added, and
// reports whether v is new; when it is not, out is b itself.
func Add(dst, b []byte, v int64) (out []byte, added bool) {
	i, found := Search(b, v)
	if found {
		return b, false
	}
	out = append(dst[:0], b[:i*width]...)
	out = binary.LittleEndian.AppendUint64(out, uint64(v))
	return append(out, b[i*width:]...), true
}

// Remove builds, in dst's memory (which must not overlap b), b without v, and
// reports whether v was present; when it was not, out is b itself.
func Remove(dst, b []byte, v int64) (out []byte, removed bool) {
	i, found := Search(b, v)
	if !found {
		return b, false
	}
	out = append(dst[:0], b[:i*width]...)
	return append(out, b[(i+1)*width:]...), true
}
