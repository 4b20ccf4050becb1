package zset

import (
	"encoding/binary"
	"math"
)

// slab holds the records: (score as 8 little-endian bytes, uvarint member
// length, member). Records are appended to chunks of at most 64 KiB, so the
// slab grows without copying and leaves the collector no garbage; chunk
// sizes double from 1 KiB, so a small set stays small. A record larger than
// a chunk gets a chunk of its own. A record's ref is its chunk<<chunkBits |
// offset, below 2^offBits.
type slab struct {
	chunks [][]byte
	used   int // bytes of records
}

const (
	chunkBits = 16
	chunkMask = 1<<chunkBits - 1
	minChunk  = 1 << 10
	maxChunk  = 1 << chunkBits
)

func (s *slab) at(ref uint64) []byte { return s.chunks[ref>>chunkBits][ref&chunkMask:] }

func (s *slab) score(ref uint64) float64 {
	return math.Float64frombits(binary.LittleEndian.Uint64(s.at(ref)))
}

func (s *slab) setScore(ref uint64, score float64) {
	binary.LittleEndian.PutUint64(s.at(ref), math.Float64bits(score))
}

// record returns the record at ref and its length.
func (s *slab) record(ref uint64) (score float64, member []byte, size int) {
	b := s.at(ref)
	l, n := binary.Uvarint(b[8:])
	end := 8 + n + int(l)
	return math.Float64frombits(binary.LittleEndian.Uint64(b)), b[8+n : end : end], end
}

func (s *slab) member(ref uint64) []byte {
	_, m, _ := s.record(ref)
	return m
}

// reserve returns a ref for a record of size bytes and the bytes to fill.
func (s *slab) reserve(size int) (uint64, []byte) {
	last := len(s.chunks) - 1
	if last < 0 || len(s.chunks[last])+size > cap(s.chunks[last]) {
		c := minChunk
		if last >= 0 {
			c = min(maxChunk, 2*cap(s.chunks[last]))
		}
		if len(s.chunks) > offMask>>chunkBits {
			panic("zset: slab exceeds 1 TiB")
		}
		s.chunks = append(s.chunks, make([]byte, 0, max(c, size)))
		last++
	}
	c := s.chunks[last]
	ref := uint64(last)<<chunkBits | uint64(len(c))
	s.chunks[last] = c[:len(c)+size]
	s.used += size
	return ref, s.chunks[last][len(c):]
}

func (s *slab) add(member []byte, score float64) uint64 {
	var hdr [8 + binary.MaxVarintLen64]byte
	binary.LittleEndian.PutUint64(hdr[:], math.Float64bits(score))
	n := 8 + binary.PutUvarint(hdr[8:], uint64(len(member)))
	ref, b := s.reserve(n + len(member))
	copy(b[copy(b, hdr[:n]):], member)
	return ref
}

func (s *slab) clone() slab {
	c := slab{chunks: make([][]byte, len(s.chunks)), used: s.used}
	for i, b := range s.chunks {
		c.chunks[i] = append(make([]byte, 0, cap(b)), b...)
	}
	return c
}
