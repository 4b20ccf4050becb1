package vset

import "golang.org/x/sys/cpu"

// dotQ8AVX2 is a·b over n bytes, n a multiple of 16 (dot_amd64.s).
//
//go:noescape
func dotQ8AVX2(a, b *int8, n int) int32

// dotF32AVX is a·b over n components, n a multiple of 8, summed as
// dotF32Go sums them (dot_amd64.s).
//
//go:noescape
func dotF32AVX(a, b *float32, n int) float32

var hasAVX, hasAVX2 = cpu.X86.HasAVX, cpu.X86.HasAVX2

// dotF32 is a·b: AVX where the processor has it, Go otherwise, with the
// same result to the bit (so every server builds the same graph).
func dotF32(a, b []float32) float32 {
	b = b[:len(a)]
	n := len(a) &^ 7
	if !hasAVX || n == 0 {
		return dotF32Go(a, b)
	}
	s := dotF32AVX(&a[0], &b[0], n)
	for i := n; i < len(a); i++ {
		s += float32(a[i] * b[i])
	}
	return s
}

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
