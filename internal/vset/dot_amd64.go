package vset

import "golang.org/x/sys/cpu"

// dotQ8AVX2 is a·b over n bytes, n a multiple of 16 (dot_amd64.s).
//
//go:noescape
func dotQ8AVX2(a, b *int8, n int) int32

var hasAVX2 = cpu.X86.HasAVX2

// dotQ8 is a·b of two byte vectors: AVX2 over the multiple of 16 bytes,
// where the processor has it, and Go for the rest. Integer sums are exact,
// so the result is the same either way.
func dotQ8(a, b []int8) int32 {
	b = b[:len(a)]
	n := len(a) &^ 15
	if !hasAVX2 || n == 0 {
		return dotQ8Go(a, b)
	}
	return dotQ8AVX2(&a[0], &b[0], n) + dotQ8Go(a[n:], b[n:])
}
