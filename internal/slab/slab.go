// Package slab stores variable-size records for the large collection forms
// without a Go pointer per record: records are appended to chunks of at most
// 64 KiB, so a collection grows without copying its records and leaves the
// collector no garbage; chunk sizes double from 64 bytes, so a small
// collection (an array of a few values) stays small. A record larger than a chunk gets a chunk of its own. A
// record's ref is chunk<<ChunkBits | offset, below 2^RefBits (1 TiB).
package slab

// RefBits is the width of a ref.
const RefBits = 40

const (
	chunkBits = 16
	chunkMask = 1<<chunkBits - 1
	minChunk  = 1 << 6
	maxChunk  = 1 << chunkBits
)

// Slab is a record store. The zero value is empty and ready to use.
type Slab struct {
	chunks [][]byte
	Used   int // bytes of records appended (dead ones included)
}

// At returns the bytes from ref to the end of its chunk; the record at ref is
// at their start.
func (s *Slab) At(ref uint64) []byte { return s.chunks[ref>>chunkBits][ref&chunkMask:] }

// Reserve appends a record of size bytes and returns its ref and the bytes to
// fill.
func (s *Slab) Reserve(size int) (uint64, []byte) {
	last := len(s.chunks) - 1
	if last < 0 || len(s.chunks[last])+size > cap(s.chunks[last]) {
		c := minChunk
		if last >= 0 {
			c = min(maxChunk, 2*cap(s.chunks[last]))
		}
		if len(s.chunks) >= 1<<(RefBits-chunkBits) {
			panic("slab: exceeds 1 TiB")
		}
		s.chunks = append(s.chunks, make([]byte, 0, max(c, size)))
		last++
	}
	c := s.chunks[last]
	ref := uint64(last)<<chunkBits | uint64(len(c))
	s.chunks[last] = c[:len(c)+size]
	s.Used += size
	return ref, s.chunks[last][len(c):]
}

// Clone returns an independent copy.
func (s *Slab) Clone() Slab {
	c := Slab{chunks: make([][]byte, len(s.chunks)), Used: s.Used}
	for i, b := range s.chunks {
		c.chunks[i] = append(make([]byte, 0, cap(b)), b...)
	}
	return c
}

// MemoryBytes returns the bytes the slab holds allocated.
func (s *Slab) MemoryBytes() int {
	n := 8 * cap(s.chunks)
	for _, c := range s.chunks {
		n += cap(c)
	}
	return n
}
