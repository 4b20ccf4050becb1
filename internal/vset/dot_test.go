package vset

import (
	"math"
	"math/rand/v2"
	"testing"
)

// dotQ8 agrees with the plain Go sum on every length and extreme values.
func TestDotQ8(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for n := range 300 {
		a, b := make([]int8, n), make([]int8, n)
		for i := range a {
			a[i], b[i] = int8(r.IntN(256)-128), int8(r.IntN(256)-128)
		}
		if n%7 == 0 {
			for i := range a {
				a[i], b[i] = -128, -128
			}
		}
		var want int32
		for i := range a {
			want += int32(a[i]) * int32(b[i])
		}
		if got := dotQ8(a, b); got != want {
			t.Fatalf("n %d: %d, want %d", n, got, want)
		}
	}
}

func BenchmarkDotQ8(b *testing.B) {
	x, y := make([]int8, 128), make([]int8, 128)
	for i := range x {
		x[i], y[i] = int8(i), int8(3*i)
	}
	var s int32
	for b.Loop() {
		s += dotQ8(x, y)
	}
	_ = s
}

// dotF32 gives dotF32Go's bits on every length.
func TestDotF32(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for n := range 300 {
		a, b := make([]float32, n), make([]float32, n)
		for i := range a {
			a[i], b[i] = float32(r.NormFloat64()*1e3), float32(r.NormFloat64()*1e-2)
		}
		if got, want := dotF32(a, b), dotF32Go(a, b); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("n %d: %v, Go %v", n, got, want)
		}
	}
}

func BenchmarkDotF32(b *testing.B) {
	x, y := make([]float32, 128), make([]float32, 128)
	for i := range x {
		x[i], y[i] = float32(i), float32(3*i)
	}
	var s float32
	for b.Loop() {
		s += dotF32(x, y)
	}
	_ = s
}
