package slab

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestRecords stores records of every size, up to several chunks long, and
// reads each back by ref, in the slab and in a clone changed afterwards.
func TestRecords(t *testing.T) {
	var s Slab
	rng := rand.New(rand.NewPCG(1, 2))
	var refs []uint64
	var want [][]byte
	for i := range 3000 {
		size := rng.IntN(300)
		if i%500 == 0 {
			size = 3 * maxChunk // larger than a chunk: a chunk of its own
		}
		rec := make([]byte, size)
		for j := range rec {
			rec[j] = byte(rng.Uint32())
		}
		ref, b := s.Reserve(size)
		copy(b, rec)
		refs, want = append(refs, ref), append(want, rec)
	}
	c := s.Clone()
	for i, ref := range refs {
		if got := s.At(ref)[:len(want[i])]; !bytes.Equal(got, want[i]) {
			t.Fatalf("record %d changed", i)
		}
		copy(c.At(ref), bytes.Repeat([]byte{0xAA}, len(want[i])))
	}
	for i, ref := range refs {
		if !bytes.Equal(s.At(ref)[:len(want[i])], want[i]) {
			t.Fatalf("record %d changed through the clone", i)
		}
	}
	total := 0
	for _, w := range want {
		total += len(w)
	}
	if s.Used != total || s.MemoryBytes() < total || s.MemoryBytes() > total+total/2+maxChunk {
		t.Fatalf("used %d, memory %d for %d bytes of records", s.Used, s.MemoryBytes(), total)
	}
}
