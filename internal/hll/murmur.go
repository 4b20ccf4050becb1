package hll

import "encoding/binary"

// murmurSeed is the seed Redis hashes HyperLogLog elements with.
const murmurSeed = 0xadc83b19

// murmurHash64A is Austin Appleby's MurmurHash64A over b, reading 8-byte
// blocks little-endian whatever the machine, as Redis does.
func murmurHash64A(b []byte, seed uint64) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := seed ^ uint64(len(b))*m
	for len(b) >= 8 {
		k := binary.LittleEndian.Uint64(b)
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
		b = b[8:]
	}
	if len(b) > 0 {
		for i := len(b) - 1; i >= 0; i-- {
			h ^= uint64(b[i]) << (8 * i)
		}
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}
