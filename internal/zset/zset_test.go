package zset

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

type elem struct {
	m string
	s float64
}

func cmpElem(a, b elem) int {
	switch {
	case Less(a.s, []byte(a.m), b.s, []byte(b.m)):
		return -1
	case Less(b.s, []byte(b.m), a.s, []byte(a.m)):
		return 1
	}
	return 0
}

// TestTreeAgainstSlice checks the large form against a sorted slice under
// random adds, removes, score changes, ranks and range counts.
func TestTreeAgainstSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var tr Tree
	var ref []elem
	find := func(m string) int {
		for i, e := range ref {
			if e.m == m {
				return i
			}
		}
		return -1
	}
	for step := 0; step < 30000; step++ {
		m := fmt.Sprintf("m%d", r.IntN(600))
		s := float64(r.IntN(50)) / 4
		i := find(m)
		switch op := r.IntN(10); {
		case op < 4:
			if i < 0 {
				tr.Add([]byte(m), s)
				ref = append(ref, elem{m, s})
			} else {
				tr.SetScore([]byte(m), s)
				ref[i].s = s
			}
			slices.SortFunc(ref, cmpElem)
		case op < 7:
			if got := tr.Remove([]byte(m)); got != (i >= 0) {
				t.Fatalf("step %d: Remove(%s) = %v", step, m, got)
			}
			if i >= 0 {
				ref = slices.Delete(ref, i, i+1)
			}
		case op < 8:
			rank, ok := tr.Rank([]byte(m))
			if ok != (i >= 0) || (ok && rank != i) {
				t.Fatalf("step %d: Rank(%s) = %d %v, want %d", step, m, rank, ok, i)
			}
		default:
			c := tr.Count(func(sc float64, _ []byte) bool { return sc <= s })
			want := 0
			for _, e := range ref {
				if e.s <= s {
					want++
				}
			}
			if c != want {
				t.Fatalf("step %d: Count = %d, want %d", step, c, want)
			}
		}
		if tr.Len() != len(ref) {
			t.Fatalf("step %d: Len = %d, want %d", step, tr.Len(), len(ref))
		}
		if step%500 == 0 {
			for k, e := range ref {
				gm, gs := tr.At(k)
				if string(gm) != e.m || gs != e.s {
					t.Fatalf("step %d: At(%d) = %s %v, want %v", step, k, gm, gs, e)
				}
			}
			c := tr.Clone()
			c.Add([]byte("clone-only"), 0)
			if _, ok := tr.Score([]byte("clone-only")); ok {
				t.Fatal("clone shares state")
			}
		}
	}
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
