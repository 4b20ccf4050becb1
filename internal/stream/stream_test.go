package stream

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// model is a stream as a plain sorted list, to check the packed nodes.
type model struct {
	ids    []ID
	fields map[ID][]string
}

func pairsOf(s [][]byte) []string {
	out := make([]string, len(s))
	for i, b := range s {
		out[i] = string(b)
	}
	return out
}

// TestRandomOps adds, deletes, trims and ranges over a stream with small
// nodes and compares it with a model after every operation.
func TestRandomOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 20 {
		s, m := New(), model{fields: map[ID][]string{}}
		maxEntries := int64(1 + rng.IntN(8))
		next := ID{1, 0}
		for op := range 400 {
			switch r := rng.IntN(10); {
			case r < 5:
				id := next
				next = ID{next.Ms + uint64(rng.IntN(3)), next.Seq + 1}
				var pairs [][]byte
				fields := []string{"a", "b"}
				if rng.IntN(3) == 0 {
					fields = []string{"x"}
				}
				for _, f := range fields {
					pairs = append(pairs, []byte(f), fmt.Appendf(nil, "%d", rng.IntN(1000)))
				}
				s.Add(id, pairs, 200, maxEntries)
				m.ids = append(m.ids, id)
				m.fields[id] = pairsOf(pairs)
			case r < 7 && len(m.ids) > 0:
				id := m.ids[rng.IntN(len(m.ids))]
				if !s.Delete(id) {
					t.Fatalf("round %d op %d: delete %v failed", round, op, id)
				}
				m.ids = slices.DeleteFunc(m.ids, func(x ID) bool { return x == id })
				if s.Delete(id) {
					t.Fatalf("deleted %v twice", id)
				}
			case r < 8:
				keep := int64(rng.IntN(len(m.ids) + 1))
				approx := rng.IntN(2) == 0
				removed := s.Trim(Trim{MaxLen: keep, Approx: approx})
				if !approx && int64(s.Length) != min(keep, int64(len(m.ids))) {
					t.Fatalf("exact trim to %d left %d", keep, s.Length)
				}
				m.ids = m.ids[removed:]
			}
			if s.Length != uint64(len(m.ids)) {
				t.Fatalf("round %d op %d: length %d, model %d", round, op, s.Length, len(m.ids))
			}
			var got []ID
			s.Range(ID{}, MaxID, false, func(id ID, f [][]byte) bool {
				if !slices.Equal(pairsOf(f), m.fields[id]) {
					t.Fatalf("entry %v fields %q, want %q", id, pairsOf(f), m.fields[id])
				}
				got = append(got, id)
				return true
			})
			if !slices.Equal(got, m.ids) && !(len(got) == 0 && len(m.ids) == 0) {
				t.Fatalf("round %d op %d: entries %v, want %v", round, op, got, m.ids)
			}
			var rev []ID
			s.Range(ID{}, MaxID, true, func(id ID, _ [][]byte) bool { rev = append(rev, id); return true })
			slices.Reverse(rev)
			if !slices.Equal(rev, got) {
				t.Fatalf("reverse %v, forward %v", rev, got)
			}
			c := s.Clone()
			if c.Length != s.Length || c.Nodes() != s.Nodes() {
				t.Fatal("clone differs")
			}
		}
	}
}

func TestIDs(t *testing.T) {
	for _, c := range []struct {
		arg              string
		missing          uint64
		strict, autoSeq  bool
		want             ID
		seqGiven, wantOK bool
	}{
		{"1-2", 0, false, false, ID{1, 2}, true, true},
		{"5", 7, false, false, ID{5, 7}, true, true},
		{"-", 0, false, false, ID{}, true, true},
		{"+", 0, false, false, MaxID, true, true},
		{"-", 0, true, false, ID{}, false, false},
		{"5-*", 0, true, true, ID{5, 0}, false, true},
		{"5-*", 0, true, false, ID{}, false, false},
		{"18446744073709551615-18446744073709551615", 0, true, false, MaxID, true, true},
		{"18446744073709551616-0", 0, true, false, ID{}, false, false},
		{" 7-1", 0, true, false, ID{7, 1}, true, true},
		{"+8-1", 0, true, false, ID{8, 1}, true, true},
		{"1--1", 0, true, false, ID{1, math.MaxUint64}, false, false},
		{"1-1\x00junk", 0, true, false, ID{1, 1}, true, true},
		{"", 0, false, false, ID{}, false, false},
		{"01-1", 0, true, false, ID{1, 1}, true, true},
	} {
		id, seqGiven, ok := ParseID([]byte(c.arg), c.missing, c.strict, c.autoSeq)
		if ok != c.wantOK || ok && (id != c.want || seqGiven != c.seqGiven) {
			t.Errorf("ParseID(%q) = %v %v %v, want %v %v %v", c.arg, id, seqGiven, ok, c.want, c.seqGiven, c.wantOK)
		}
	}
	if _, ok := MaxID.Next(); ok {
		t.Error("MaxID has a next")
	}
	if _, ok := (ID{}).Prev(); ok {
		t.Error("0-0 has a previous")
	}
	if id, _ := (ID{1, math.MaxUint64}).Next(); id != (ID{2, 0}) {
		t.Error(id)
	}
}

// FuzzParseID checks that any argument parses without panicking and that a
// parsed ID formats back to an argument parsing to itself.
func FuzzParseID(f *testing.F) {
	for _, s := range []string{"0-0", "1-1", "-", "+", "5-*", "18446744073709551615-18446744073709551615", " -1", "+1-+1", "1-1\x00", "(1-1", "99999999999999999999", "-0"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, arg []byte) {
		for _, strict := range []bool{false, true} {
			id, _, ok := ParseID(arg, 0, strict, true)
			if !ok {
				continue
			}
			again, seqGiven, ok := ParseID(id.Append(nil), 0, true, false)
			if !ok || again != id || !seqGiven {
				t.Fatalf("%q parsed as %v, which parses back as %v %v", arg, id, again, ok)
			}
		}
	})
}

// TestNodeChunks adds, deletes and trims at random (some entries larger
// than a chunk) and checks the entries and the last one against a model, the chunks' live
// byte counts against the nodes, and that trimmed chunks are released.
func TestNodeChunks(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	s := New()
	type want struct {
		id ID
		v  string
	}
	var model []want
	for i := range 20000 {
		id := ID{uint64(i), 0}
		v := strings.Repeat("v", r.IntN(40))
		if r.IntN(500) == 0 {
			v = strings.Repeat("w", chunkSize+r.IntN(1000))
		}
		s.Add(id, [][]byte{[]byte("f"), []byte(v)}, 4096, 100)
		model = append(model, want{id, v})
		switch r.IntN(10) {
		case 0:
			if len(model) > 0 {
				j := r.IntN(len(model))
				if !s.Delete(model[j].id) {
					t.Fatalf("delete %v", model[j].id)
				}
				model = slices.Delete(model, j, j+1)
			}
		case 1:
			if n := int64(len(model)) - 3000; n > 0 {
				s.Trim(Trim{MaxLen: 3000})
				model = model[n:]
			}
		}
		if last, ok := s.Edge(true); ok != (len(model) > 0) || ok && last != model[len(model)-1].id {
			t.Fatalf("last entry %v %v, want %v", last, ok, model[len(model)-1].id)
		}
	}
	var got []want
	s.Range(ID{}, MaxID, false, func(id ID, f [][]byte) bool {
		got = append(got, want{id, string(f[1])})
		return true
	})
	if !slices.Equal(got, model) {
		t.Fatalf("%d entries, want %d", len(got), len(model))
	}
	live := make([]int, len(s.store.chunks))
	for _, n := range s.index {
		live[n.chunk] += int(n.size)
	}
	used := 0
	for c := range live {
		if live[c] != s.store.live[c] {
			t.Fatalf("chunk %d: %d live bytes counted, %d in nodes", c, s.store.live[c], live[c])
		}
		used += live[c]
	}
	if mem := s.store.memoryBytes(); mem > 3*used+4*chunkSize {
		t.Fatalf("chunks hold %d bytes for %d bytes of nodes", mem, used)
	}
	c := s.Clone()
	if c.Length != s.Length || c.store.memoryBytes() > s.store.memoryBytes()+chunkSize {
		t.Fatalf("clone: %d entries, %d bytes", c.Length, c.store.memoryBytes())
	}
}

// TestSmallStreamChunks checks that a stream of a few entries holds chunks
// about its size (they double from 64 bytes), not a whole 64 KiB chunk.
func TestSmallStreamChunks(t *testing.T) {
	s := New()
	for i := range 10 {
		s.Add(ID{uint64(1000 + i), 0}, [][]byte{[]byte("f1"), []byte(strconv.Itoa(i)), []byte("f2"), []byte("value:" + strconv.Itoa(i))}, 4096, 100)
	}
	used := int(s.index[0].size)
	if mem := s.store.memoryBytes(); mem > 2*used+64 {
		t.Fatalf("chunks hold %d bytes for a node of %d", mem, used)
	}
	n := 0
	s.Range(ID{}, MaxID, false, func(id ID, f [][]byte) bool {
		if want := "value:" + strconv.Itoa(n); string(f[3]) != want {
			t.Fatalf("entry %d: %q, want %q", n, f[3], want)
		}
		n++
		return true
	})
	if n != 10 {
		t.Fatalf("%d entries", n)
	}
}
