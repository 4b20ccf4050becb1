package quicklist

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
)

// check compares l with want, element by element and through Each both ways.
func check(t testing.TB, l *List, want [][]byte) {
	t.Helper()
	if l.Len() != len(want) {
		t.Fatalf("Len %d, want %d", l.Len(), len(want))
	}
	total := 0
	for _, b := range l.live() {
		if Count(b) == 0 {
			t.Fatal("empty node")
		}
		total += Count(b)
	}
	if total != len(want) {
		t.Fatalf("nodes hold %d elements, want %d", total, len(want))
	}
	for i, w := range want {
		if got := l.Index(i); !bytes.Equal(got, w) {
			t.Fatalf("Index(%d) = %q, want %q", i, got, w)
		}
	}
	if len(want) == 0 {
		return
	}
	i := 0
	l.Each(0, false, func(e []byte) bool {
		if !bytes.Equal(e, want[i]) {
			t.Fatalf("forward %d = %q, want %q", i, e, want[i])
		}
		i++
		return true
	})
	i = len(want) - 1
	l.Each(i, true, func(e []byte) bool {
		if !bytes.Equal(e, want[i]) {
			t.Fatalf("backward %d = %q, want %q", i, e, want[i])
		}
		i--
		return true
	})
}

// packed builds a packed node of elems.
func packed(elems [][]byte) []byte {
	return Splice(nil, Empty, 0, 0, elems...)
}

func run(t testing.TB, seed uint64, fill, steps int) {
	r := rand.New(rand.NewPCG(seed, 1))
	l := FromPacked(fill, Empty)
	var want [][]byte
	elem := func() []byte {
		n := r.IntN(20)
		if r.IntN(50) == 0 {
			n = 200 + r.IntN(9000)
		}
		return bytes.Repeat([]byte{byte('a' + r.IntN(3))}, n)
	}
	for step := 0; step < steps; step++ {
		n := len(want)
		switch op := r.IntN(9); {
		case op == 0:
			e := elem()
			l.PushFront(fill, e)
			want = append([][]byte{e}, want...)
		case op == 1:
			e := elem()
			l.PushBack(fill, e)
			want = append(want, e)
		case op == 2 && n > 0:
			k := 1 + r.IntN(min(n, 3))
			l.Trim(k, n)
			want = want[k:]
		case op == 3 && n > 0:
			k := 1 + r.IntN(min(n, 3))
			l.Trim(0, n-k)
			want = want[:n-k]
		case op == 4:
			i, e := r.IntN(n+1), elem()
			l.Insert(fill, i, e)
			want = append(want[:i], append([][]byte{e}, want[i:]...)...)
		case op == 5 && n > 0:
			i, e := r.IntN(n), elem()
			l.Set(fill, i, e)
			want[i] = e
		case op == 6 && r.IntN(10) == 0:
			a := r.IntN(n + 1)
			b := a + r.IntN(n-a+1)
			l.Trim(a, b)
			want = append([][]byte(nil), want[a:b]...)
		case op == 7 && r.IntN(5) == 0:
			x := elem()
			var kept [][]byte
			for _, w := range want {
				if !bytes.Equal(w, x) {
					kept = append(kept, w)
				}
			}
			if got := l.Filter(func(e []byte) bool { return !bytes.Equal(e, x) }); got != n-len(kept) {
				t.Fatalf("Filter removed %d, want %d", got, n-len(kept))
			}
			want = kept
		case op == 8 && r.IntN(20) == 0:
			l = l.Clone()
		}
		check(t, l, want)
		for _, b := range l.live() {
			if !Fits(fill, len(b), Count(b)) {
				t.Fatalf("node of %d bytes, %d elements over fill %d", len(b), Count(b), fill)
			}
		}
	}
	// The packed-node functions agree with the list.
	b := packed(want)
	for i := range want {
		if !bytes.Equal(Index(b, i), want[i]) {
			t.Fatalf("packed Index(%d)", i)
		}
	}
	check(t, FromPacked(fill, b), want)
}

func TestRandom(t *testing.T) {
	for _, fill := range []int{1, 2, 4, 100, -1, -2, -5} {
		for seed := uint64(0); seed < 4; seed++ {
			t.Run(fmt.Sprintf("fill%d/seed%d", fill, seed), func(t *testing.T) { run(t, seed, fill, 1500) })
		}
	}
}

func TestPackedNode(t *testing.T) {
	elems := [][]byte{[]byte("a"), {}, bytes.Repeat([]byte("x"), 300), []byte("\x00\xff")}
	b := packed(elems)
	if Count(b) != 4 {
		t.Fatalf("Count %d", Count(b))
	}
	b2 := Splice(nil, b, 1, 3, []byte("y"))
	if Count(b2) != 3 || string(Index(b2, 1)) != "y" || string(Index(b2, 2)) != "\x00\xff" {
		t.Fatalf("Splice: %q", b2)
	}
	b3, removed := Filter(nil, b, func(e []byte) bool { return len(e) != 0 })
	if removed != 1 || Count(b3) != 3 || string(Index(b3, 1)) != string(elems[2]) {
		t.Fatalf("Filter: %d %q", removed, b3)
	}
	big := Empty
	for i := 0; i < 200; i++ {
		big = Splice(nil, big, i, i, []byte{byte(i)})
	}
	if Count(big) != 200 || Index(big, 199)[0] != 199 || Index(big, 0)[0] != 0 {
		t.Fatal("count past one uvarint byte")
	}
}

func FuzzList(f *testing.F) {
	f.Add(uint64(1), int8(3))
	f.Fuzz(func(t *testing.T, seed uint64, fill int8) {
		if fill == 0 {
			fill = -2
		}
		run(t, seed, int(fill), 300)
	})
}

func BenchmarkPushFront(b *testing.B) {
	l := &List{}
	e := []byte("0123456789abcdef")
	for b.Loop() {
		l.PushFront(-2, e)
	}
}

// TestPushBackLeavesNoRoom: under the default fill (-2, nodes of 8 KB),
// nodes filled by PushBack hold no unused room beyond the tail node's
// (RPUSH of a million elements once took 1.4x Redis's memory in room and
// garbage). A count-bounded node's room is up to its Go size class's.
func TestPushBackLeavesNoRoom(t *testing.T) {
	for _, fill := range []int{-2, -1} {
		l := &List{}
		for i := range 100_000 {
			l.PushBack(fill, []byte("element:"+strconv.Itoa(i)))
		}
		live := l.live()
		used, held := 0, 0
		for _, b := range live[:len(live)-1] {
			used += len(b)
			held += cap(b)
		}
		if held > used+used/100 {
			t.Errorf("fill %d: full nodes hold %d bytes for %d used", fill, held, used)
		}
	}
}

// TestFindAppendOffsets: the lookups a set's listpack form makes of a
// packed node, across a count whose uvarint grows to two bytes.
func TestFindAppendOffsets(t *testing.T) {
	b := append([]byte(nil), Empty...)
	var want [][]byte
	for i := range 200 {
		e := []byte("m" + strconv.Itoa(i))
		b = Append(b, e)
		want = append(want, e)
	}
	if !bytes.Equal(b, packed(want)) {
		t.Fatal("Append built another node than Splice")
	}
	offs := Offsets(b)
	for i, e := range want {
		if got := Find(b, e); got != i {
			t.Fatalf("Find(%q) = %d, want %d", e, got, i)
		}
		if got := ElemAt(b, offs[i]); !bytes.Equal(got, e) {
			t.Fatalf("ElemAt(offset %d) = %q, want %q", i, got, e)
		}
	}
	if got := Find(b, []byte("m200")); got != -1 {
		t.Fatalf("Find of a missing element = %d", got)
	}
}
