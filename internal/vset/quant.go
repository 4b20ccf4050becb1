package vset

import (
	"math"
	"math/bits"
)

// Quant is how a set stores its vectors.
type Quant uint8

// The quantizations, numbered as Redis numbers them in its files.
const (
	NoQuant Quant = 0 // float32 components
	Q8      Quant = 1 // signed bytes scaled by a per-vector range (the default)
	Bin     Quant = 2 // one sign bit per component
)

// Name is the quantization as VINFO names it.
func (q Quant) Name() string {
	switch q {
	case NoQuant:
		return "f32"
	case Bin:
		return "bin"
	}
	return "int8"
}

// RawName is the quantization as VEMB RAW names it.
func (q Quant) RawName() string {
	switch q {
	case NoQuant:
		return "fp32"
	case Bin:
		return "bin"
	}
	return "q8"
}

// normalize scales v to unit length in place and returns its length
// before (0 for a zero vector, left as it is).
func normalize(v []float32) float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	l := math.Sqrt(s)
	if l == 0 {
		return 0
	}
	inv := float32(1 / l)
	for i := range v {
		v[i] *= inv
	}
	return float32(l)
}

// quantizeQ8 writes v (unit length) into q as bytes from -127 to 127 over
// [-r, r], r being v's largest magnitude, and returns r.
func quantizeQ8(v []float32, q []int8) float32 {
	var r float32
	for _, x := range v {
		r = max(r, float32(math.Abs(float64(x))))
	}
	if r == 0 {
		clear(q)
		return 0
	}
	scale := 127 / r
	for i, x := range v {
		q[i] = int8(math.Round(float64(x * scale)))
	}
	return r
}

// quantizeBin writes v's sign bits into words (bit set: positive).
func quantizeBin(v []float32, words []uint64) {
	clear(words)
	for i, x := range v {
		if x > 0 {
			words[i/64] |= 1 << (i % 64)
		}
	}
}

// dotF32Go is a·b in Go, summed in a fixed order that dot_amd64.s
// repeats: eight lanes, lane j the products of components j, j+8, ...
// in turn, then the lanes in pairs (0+4, 2+6, 1+5, 3+7), then the rest of
// the components. Every product is rounded to float32 before it is added
// (no fused multiply-add), so every processor gets the same bits.
func dotF32Go(a, b []float32) float32 {
	b = b[:len(a)]
	var acc [8]float32
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		x, y := (*[8]float32)(a[i:]), (*[8]float32)(b[i:])
		for j := range acc {
			acc[j] += float32(x[j] * y[j])
		}
	}
	s := (acc[0] + acc[4] + (acc[2] + acc[6])) + (acc[1] + acc[5] + (acc[3] + acc[7]))
	for i := n; i < len(a); i++ {
		s += float32(a[i] * b[i])
	}
	return s
}

// dotQ8Go is a·b of two byte vectors in Go. Eight components a step
// through array pointers keeps bounds checks out of the loop.
func dotQ8Go(a, b []int8) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	for len(a) >= 8 {
		x, y := (*[8]int8)(a), (*[8]int8)(b)
		s0 += int32(x[0])*int32(y[0]) + int32(x[4])*int32(y[4])
		s1 += int32(x[1])*int32(y[1]) + int32(x[5])*int32(y[5])
		s2 += int32(x[2])*int32(y[2]) + int32(x[6])*int32(y[6])
		s3 += int32(x[3])*int32(y[3]) + int32(x[7])*int32(y[7])
		a, b = a[8:], b[8:]
	}
	for i := range a {
		s0 += int32(a[i]) * int32(b[i])
	}
	return s0 + s1 + s2 + s3
}

// hamming is the number of differing bits.
func hamming(a, b []uint64) int {
	b = b[:len(a)]
	n := 0
	for i := range a {
		n += bits.OnesCount64(a[i] ^ b[i])
	}
	return n
}

// cosineDistance turns a cosine similarity into the distance the index
// orders by: 0 for the same direction, 2 for opposite ones.
func cosineDistance(cos float32) float32 {
	return min(max(1-cos, 0), 2)
}
