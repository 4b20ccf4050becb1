package zset

import (
	"encoding/binary"
	"math"

	"github.com/keyhive/keyhive/internal/slab"
)

// records holds the elements (score as 8 little-endian bytes, uvarint member
// length, member) in an internal/slab store.
type records struct{ slab.Slab }

func (s *records) score(ref uint64) float64 {
	return math.Float64frombits(binary.LittleEndian.Uint64(s.At(ref)))
}

func (s *records) setScore(ref uint64, score float64) {
	binary.LittleEndian.PutUint64(s.At(ref), math.Float64bits(score))
}

// record returns the record at ref and its length.
func (s *records) record(ref uint64) (score float64, member []byte, size int) {
	b := s.At(ref)
	l, n := binary.Uvarint(b[8:])
	end := 8 + n + int(l)
	return math.Float64frombits(binary.LittleEndian.Uint64(b)), b[8+n : end : end], end
}

func (s *records) member(ref uint64) []byte {
	_, m, _ := s.record(ref)
	return m
}

func (s *records) add(member []byte, score float64) uint64 {
	var hdr [8 + binary.MaxVarintLen64]byte
	binary.LittleEndian.PutUint64(hdr[:], math.Float64bits(score))
	n := 8 + binary.PutUvarint(hdr[8:], uint64(len(member)))
	ref, b := s.Reserve(n + len(member))
	copy(b[copy(b, hdr[:n]):], member)
	return ref
}

func (s *records) clone() records { return records{s.Slab.Clone()} }
