//go:build !amd64

package vset

// dotQ8 is a·b of two byte vectors.
func dotQ8(a, b []int8) int32 { return dotQ8Go(a, b) }

// dotF32 is a·b.
func dotF32(a, b []float32) float32 { return dotF32Go(a, b) }
