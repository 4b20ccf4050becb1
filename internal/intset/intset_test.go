package intset

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestAgainstMap applies random adds and removes to an intset and to a Go map
// and checks they agree, and that the intset stays sorted.
func TestAgainstMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var b []byte
	ref := map[int64]bool{}
	vals := []int64{-1 << 63, 1<<63 - 1, 0, -1, 1}
	for i := 0; i < 20000; i++ {
		v := r.Int64N(200) - 100
		if r.IntN(50) == 0 {
			v = vals[r.IntN(len(vals))]
		}
		if r.IntN(3) > 0 {
			out, added := Add(nil, b, v)
			if added == ref[v] {
				t.Fatalf("Add(%d) added=%v, present=%v", v, added, ref[v])
			}
			b, ref[v] = out, true
		} else {
			out, removed := Remove(nil, b, v)
			if removed != ref[v] {
				t.Fatalf("Remove(%d) removed=%v, present=%v", v, removed, ref[v])
			}
			b = out
			delete(ref, v)
		}
		if Len(b) != len(ref) {
			t.Fatalf("Len %d, want %d", Len(b), len(ref))
		}
		if i%97 == 0 {
			want := make([]int64, 0, len(ref))
			for k := range ref {
				want = append(want, k)
			}
			slices.Sort(want)
			for j, w := range want {
				if At(b, j) != w || !Contains(b, w) {
					t.Fatalf("At(%d) = %d, want %d", j, At(b, j), w)
				}
			}
		}
	}
}

// TestNoAlias checks Add and Remove leave their input unchanged.
func TestNoAlias(t *testing.T) {
	b, _ := Add(nil, nil, 5)
	b, _ = Add(nil, b, 1)
	orig := slices.Clone(b)
	Add(make([]byte, 0, 64), b, 3)
	Remove(make([]byte, 0, 64), b, 1)
	if !slices.Equal(b, orig) {
		t.Fatal("input modified")
	}
	if out, added := Add(nil, b, 5); added || &out[0] != &b[0] {
		t.Fatal("re-adding a present value must return the input")
	}
}
