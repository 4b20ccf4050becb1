package prob

import (
	"encoding/binary"
	"math/bits"
)

// Odd 64-bit constants of the SplitMix64 generator's finalizer.
const (
	golden = 0x9e3779b97f4a7c15
	mulA   = 0xbf58476d1ce4e5b9
	mulB   = 0x94d049bb133111eb
)

// mix64 is a bijective avalanche of x: every output bit depends on every
// input bit.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= mulA
	x ^= x >> 27
	x *= mulB
	x ^= x >> 31
	return x
}

// Hash is a 64-bit hash of b under seed, stable across processes and
// machines (the structures keep hashed positions in their bytes).
func Hash(b []byte, seed uint64) uint64 {
	h := seed ^ uint64(len(b))*golden
	for len(b) >= 8 {
		h = mix64(h^binary.LittleEndian.Uint64(b)) + golden
		b = b[8:]
	}
	var tail uint64
	for i, c := range b {
		tail |= uint64(c) << (8 * i)
	}
	return mix64(h ^ bits.RotateLeft64(tail, 17) ^ uint64(len(b)))
}

// pair is an item's two base hashes: the i-th of a family of hash
// functions is h1 + i*h2 (double hashing), so one pass over the item
// serves all of them.
type pair struct{ h1, h2 uint64 }

func hashPair(item []byte) pair {
	h := Hash(item, 0)
	return pair{h, mix64(h+golden) | 1}
}

func (p pair) at(i uint64) uint64 { return p.h1 + i*p.h2 }

// rng is a xorshift64* generator whose state lives in a structure's bytes.
func rngNext(state uint64) (next, out uint64) {
	state ^= state >> 12
	state ^= state << 25
	state ^= state >> 27
	return state, state * 0x2545f4914f6cdd1d
}

func u32(b []byte, at int) uint32      { return binary.LittleEndian.Uint32(b[at:]) }
func u64(b []byte, at int) uint64      { return binary.LittleEndian.Uint64(b[at:]) }
func put32(b []byte, at int, v uint32) { binary.LittleEndian.PutUint32(b[at:], v) }
func put64(b []byte, at int, v uint64) { binary.LittleEndian.PutUint64(b[at:], v) }
