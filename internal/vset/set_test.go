package vset

import (
	"bytes"
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"
)

func name(i int) []byte { return fmt.Appendf(nil, "e%d", i) }

// checkGraph fails unless every link is to a node on its level and every
// node's in-degree counts the links to it.
func checkGraph(t *testing.T, s *Set) {
	t.Helper()
	in := make([]uint32, len(s.levels))
	for x, xl := range s.levels {
		for l := 0; l <= int(xl); l++ {
			for _, n := range links(s.linksAt(uint32(x), l)) {
				if int(s.levels[n]) < l || n == uint32(x) {
					t.Fatalf("node %d links to %d (level %d) on level %d", x, n, s.levels[n], l)
				}
				in[n]++
			}
		}
	}
	for x := range in {
		if s.levels[x] >= 0 && in[x] != s.inDegree[x] {
			t.Fatalf("node %d: in-degree %d, %d links to it", x, s.inDegree[x], in[x])
		}
	}
}

// A set's elements stay findable and reachable through the graph while
// they are added, replaced and removed, whatever the quantization.
func TestSetAddRemove(t *testing.T) {
	for _, quant := range []Quant{Q8, NoQuant, Bin} {
		t.Run(quant.Name(), func(t *testing.T) {
			data := randomVectors(600, 16, 3)
			s := New(16, quant, 8, 0)
			for i, v := range data {
				if !s.Add(name(i), v, nil, false, DefaultBuildEF) {
					t.Fatalf("e%d not added", i)
				}
			}
			if s.Add(name(5), data[6], []byte(`{"a":1}`), true, DefaultBuildEF) {
				t.Fatal("a replaced vector counts as added")
			}
			for i := 0; i < len(data); i += 3 {
				if !s.Remove(name(i)) || s.Remove(name(i)) {
					t.Fatalf("e%d removed twice or never", i)
				}
			}
			checkGraph(t, s)
			if want := len(data) - len(data)/3; s.Len() != want {
				t.Fatalf("%d elements, want %d", s.Len(), want)
			}
			for i := range data {
				id, ok := s.Find(name(i))
				if ok != (i%3 != 0) {
					t.Fatalf("e%d found %v", i, ok)
				}
				if ok && !bytes.Equal(s.Name(id), name(i)) {
					t.Fatalf("e%d found as %s", i, s.Name(id))
				}
			}
			if id, _ := s.Find(name(5)); string(s.Attr(id)) != `{"a":1}` || s.Attributes() != 1 {
				t.Fatalf("attributes %q, count %d", s.Attr(id), s.Attributes())
			}
			// Every element is reachable: a search as wide as the set finds all.
			for _, probe := range []int{1, 2, 4} {
				res := s.Search(s.NewQuery(data[probe]), s.Len(), s.Len(), nil, 0, false)
				if len(res) != s.Len() {
					t.Fatalf("a full search reaches %d of %d", len(res), s.Len())
				}
			}
			// Removed ids are reused.
			for i := 0; i < len(data); i += 3 {
				s.Add(name(i), data[i], nil, false, DefaultBuildEF)
			}
			checkGraph(t, s)
			if s.Len() != len(data) || int(s.LastNodeID()) != len(data)+len(data)/3 {
				t.Fatalf("%d elements, %d added ever", s.Len(), s.LastNodeID())
			}
			if len(s.levels) != len(data) {
				t.Fatalf("%d node ids for %d elements", len(s.levels), len(data))
			}
		})
	}
}

// An element's own vector is its nearest neighbour, at similarity 1, and
// VEMB's vector is the one added, within the quantization's error.
func TestSearchSelf(t *testing.T) {
	for _, quant := range []Quant{Q8, NoQuant, Bin} {
		data := randomVectors(200, 32, 4)
		s := New(32, quant, DefaultM, 0)
		for i, v := range data {
			s.Add(name(i), v, nil, false, DefaultBuildEF)
		}
		for i := range 20 {
			id, _ := s.Find(name(i))
			res := s.Search(s.NodeQuery(id), 1, DefaultSearchEF, nil, 0, false)
			if len(res) != 1 || res[0].Similarity() < 0.999 {
				t.Fatalf("%s: e%d's nearest: %v", quant.Name(), i, res)
			}
			if quant == Bin {
				continue
			}
			v := s.Vector(id)
			tol := 1e-5
			if quant == Q8 {
				tol = 0.02
			}
			for j := range v {
				if math.Abs(float64(v[j]-data[i][j])) > tol {
					t.Fatalf("%s: e%d's component %d: %v, added %v", quant.Name(), i, j, v[j], data[i][j])
				}
			}
		}
	}
}

// FILTER, TRUTH and the sorted view.
func TestSearchFilterTruthSorted(t *testing.T) {
	data := randomVectors(500, 8, 5)
	s := New(8, Q8, DefaultM, 0)
	for i, v := range data {
		s.Add(name(i), v, fmt.Appendf(nil, `{"i": %d}`, i), true, DefaultBuildEF)
	}
	f, err := CompileFilter(`.i % 10 == 0`)
	if err != nil {
		t.Fatal(err)
	}
	q := s.NewQuery(data[0])
	truth := s.Search(q, 20, 0, f, 0, true)
	if len(truth) != 20 {
		t.Fatalf("%d results", len(truth))
	}
	for _, r := range truth {
		var i int
		fmt.Sscanf(string(s.Name(r.ID)), "e%d", &i)
		if i%10 != 0 {
			t.Fatalf("%s passed the filter", s.Name(r.ID))
		}
	}
	if got := s.Search(q, 20, 0, f, 0, false); len(got) != 20 || got[0].ID != truth[0].ID {
		t.Fatalf("filtered search: %v, truth %v", got, truth)
	}
	if got := s.Search(q, 20, 0, f, 5, false); len(got) > 5 {
		t.Fatalf("FILTER-EF 5 weighed more: %d results", len(got))
	}
	sorted := s.Sorted()
	for i := 1; i < len(sorted); i++ {
		if bytes.Compare(s.Name(sorted[i-1]), s.Name(sorted[i])) >= 0 {
			t.Fatal("not sorted")
		}
	}
}

// A set read back from its file form is the set saved: elements,
// attributes, vectors, graph and generator, so later adds agree too.
func TestFileRoundTrip(t *testing.T) {
	for _, quant := range []Quant{Q8, NoQuant, Bin} {
		data := randomVectors(300, 24, 6)
		s := New(12, quant, 6, 24)
		for i, v := range data {
			s.Add(name(i), s.Project(v), fmt.Appendf(nil, `{"i":%d}`, i%7), i%3 == 0, DefaultBuildEF)
		}
		for i := 0; i < 300; i += 4 {
			s.Remove(name(i))
		}
		file := s.AppendFile(nil)
		c, err := ReadFile(file)
		if err != nil {
			t.Fatalf("%s: %v", quant.Name(), err)
		}
		if !bytes.Equal(c.AppendFile(nil), file) {
			t.Fatalf("%s: the read set saves differently", quant.Name())
		}
		v := c.Project(randomVectors(1, 24, 7)[0])
		s.Add([]byte("new"), v, nil, false, DefaultBuildEF)
		c.Add([]byte("new"), v, nil, false, DefaultBuildEF)
		if !bytes.Equal(c.AppendFile(nil), s.AppendFile(nil)) {
			t.Fatalf("%s: an add after reading differs", quant.Name())
		}
		for cut := 0; cut < len(file); cut += 1 + len(file)/200 {
			if _, err := ReadFile(file[:cut]); err == nil {
				t.Fatalf("%s: %d of %d bytes read as a set", quant.Name(), cut, len(file))
			}
		}
	}
}

// FuzzReadFile: whatever ReadFile accepts can be searched, changed and
// saved without a panic.
func FuzzReadFile(f *testing.F) {
	s := New(4, Q8, 4, 0)
	for i, v := range randomVectors(20, 4, 8) {
		s.Add(name(i), v, []byte(`{"a":1}`), i%2 == 0, DefaultBuildEF)
	}
	f.Add(s.AppendFile(nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ReadFile(data)
		if err != nil {
			return
		}
		q := s.NewQuery([]float32{1, 2, 3, 4})
		s.Search(q, 5, 10, nil, 0, false)
		for _, id := range slices.Clone(s.Live()) {
			s.Links(id)
			s.Remove(slices.Clone(s.Name(id)))
			break
		}
		s.Add([]byte("x"), []float32{1, 0, 0, 1}, nil, false, 10)
		s.AppendFile(nil)
	})
}

// A set holds no Go object per element: 20,000 elements with attributes
// add a few dozen heap objects (the set's slices), and the collector has
// no pointer to follow inside them.
func TestNoHeapObjectPerElement(t *testing.T) {
	data := EmbeddingLike(20_000, 16, 4, 5)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s := New(16, Q8, DefaultM, 0)
	for i, v := range data {
		s.Add(name(i), v, fmt.Appendf(nil, `{"i":%d}`, i), true, 50)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapObjects) - int64(before.HeapObjects)
	t.Logf("%d elements: %d heap objects more", s.Len(), grown)
	if grown > 500 {
		t.Errorf("%d elements added %d heap objects", s.Len(), grown)
	}
	runtime.KeepAlive(s)
	runtime.KeepAlive(data)
}
