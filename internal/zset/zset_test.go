package zset

import (
	"bytes"
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

type elem struct {
	m string
	s float64
}

// cmpElem orders as Less does.
func cmpElem(a, b elem) int {
	if a.s != b.s {
		return cmp.Compare(a.s, b.s)
	}
	return strings.Compare(a.m, b.m)
}

func TestCompact(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	b := Empty
	var ref []elem
	for step := 0; step < 3000; step++ {
		m := fmt.Sprintf("%c", 'a'+r.IntN(20))
		s := float64(r.IntN(5))
		_, rank, ok := Find(b, []byte(m))
		if ok {
			b = RemoveRange(nil, b, rank, rank+1)
			ref = slices.Delete(ref, rank, rank+1)
		} else {
			b = Insert(nil, b, []byte(m), s)
			ref = append(ref, elem{m, s})
			slices.SortFunc(ref, cmpElem)
		}
		if Len(b) != len(ref) {
			t.Fatalf("Len = %d, want %d", Len(b), len(ref))
		}
		it := NewIter(b)
		for _, e := range ref {
			gm, gs, _ := it.Next()
			if !bytes.Equal(gm, []byte(e.m)) || gs != e.s {
				t.Fatalf("step %d: got %s %v, want %v", step, gm, gs, e)
			}
		}
	}
}
