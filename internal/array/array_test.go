package array

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"testing"
)

// model is the reference the array is checked against: a map.
type model map[uint64]string

func (m model) sorted() []uint64 {
	ks := make([]uint64, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i] < ks[j] })
	return ks
}

// check compares everything a reader sees of a with m.
func check(t *testing.T, a *Array, m model) {
	t.Helper()
	if a.Count() != uint64(len(m)) {
		t.Fatalf("Count %d, want %d", a.Count(), len(m))
	}
	ks := m.sorted()
	var wantLen uint64
	if len(ks) > 0 {
		wantLen = ks[len(ks)-1] + 1
	}
	if a.Len() != wantLen {
		t.Fatalf("Len %d, want %d", a.Len(), wantLen)
	}
	for _, k := range ks {
		if v, ok := a.Get(k); !ok || string(v) != m[k] {
			t.Fatalf("Get(%d) = %q %v, want %q", k, v, ok, m[k])
		}
	}
	var got []uint64
	a.Range(0, MaxIndex, func(i uint64, v []byte) bool {
		if string(v) != m[i] {
			t.Fatalf("Range at %d: %q, want %q", i, v, m[i])
		}
		got = append(got, i)
		return true
	})
	if fmt.Sprint(got) != fmt.Sprint(ks) {
		t.Fatalf("Range ascending %v, want %v", got, ks)
	}
	got = got[:0]
	a.Range(MaxIndex, 0, func(i uint64, _ []byte) bool { got = append(got, i); return true })
	for i, j := 0, len(got)-1; i < j; i, j = i+1, j-1 {
		got[i], got[j] = got[j], got[i]
	}
	if fmt.Sprint(got) != fmt.Sprint(ks) {
		t.Fatalf("Range descending %v, want reversed %v", got, ks)
	}
}

// TestAgainstMap runs random sets, overwrites, deletes and range deletes
// over index patterns that make sparse pages, dense pages and the
// conversions between them, and compares with a map after each batch; a
// clone and a file round trip must read the same.
func TestAgainstMap(t *testing.T) {
	patterns := map[string]func(r *rand.Rand) uint64{
		"dense":  func(r *rand.Rand) uint64 { return r.Uint64N(3 * PageSlots) },
		"sparse": func(r *rand.Rand) uint64 { return r.Uint64N(1<<40) * 997 },
		"mixed": func(r *rand.Rand) uint64 {
			if r.IntN(2) == 0 {
				return r.Uint64N(PageSlots)
			}
			return MaxIndex - r.Uint64N(1<<20)
		},
	}
	for name, index := range patterns {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(len(name))))
			a, m := &Array{}, model{}
			for round := range 40 {
				for range 300 {
					i := index(r)
					switch r.IntN(10) {
					case 0, 1:
						_, had := m[i]
						if a.Delete(i) != had {
							t.Fatalf("Delete(%d) disagrees with the model", i)
						}
						delete(m, i)
					case 2:
						hi := i + r.Uint64N(2*PageSlots)
						if hi < i || hi > MaxIndex {
							hi = MaxIndex
						}
						var n uint64
						for k := range m {
							if k >= i && k <= hi {
								delete(m, k)
								n++
							}
						}
						if got := a.DeleteRange(i, hi); got != n {
							t.Fatalf("DeleteRange(%d, %d) = %d, want %d", i, hi, got, n)
						}
					default:
						v := fmt.Sprint(r.IntN(1000), bytes.Repeat([]byte("v"), r.IntN(40)))
						_, had := m[i]
						if a.Set(i, []byte(v)) == had {
							t.Fatalf("Set(%d) disagrees with the model on emptiness", i)
						}
						m[i] = v
					}
				}
				check(t, a, m)
				if round%10 == 9 {
					check(t, a.Clone(), m)
					if a.Count() > 0 {
						b, err := ReadFile(a.AppendFile(nil))
						if err != nil {
							t.Fatal(err)
						}
						check(t, b, m)
					}
				}
			}
		})
	}
}

// TestDenseAndBack fills one page past denseAt and empties it below
// sparseAt: the layout ARINFO reports follows, the values stay.
func TestDenseAndBack(t *testing.T) {
	a, m := &Array{}, model{}
	for i := uint64(0); i < denseAt; i++ {
		a.Set(i*3, []byte(fmt.Sprint(i)))
		m[i*3] = fmt.Sprint(i)
	}
	if in := a.Info(); in.DensePages != 1 || in.SparsePages != 0 {
		t.Fatalf("after %d elements: %+v, want one dense page", denseAt, in)
	}
	check(t, a, m)
	if n := a.DeleteRange(30, 3*denseAt); n != denseAt-10 {
		t.Fatalf("DeleteRange: %d", n)
	}
	for k := range m {
		if k >= 30 {
			delete(m, k)
		}
	}
	if in := a.Info(); in.DensePages != 0 || in.SparsePages != 1 {
		t.Fatalf("after the delete: %+v, want one sparse page", in)
	}
	check(t, a, m)
}

// TestReclaim overwrites values with values of other sizes many times: the
// slab is rebuilt, so memory stays near what is live.
func TestReclaim(t *testing.T) {
	a := &Array{}
	for round := range 200 {
		for i := uint64(0); i < 100; i++ {
			a.Set(i, bytes.Repeat([]byte{'x'}, 50+round%7))
		}
	}
	if a.Memory() > 64<<10 {
		t.Fatalf("100 values of ~55 bytes hold %d bytes", a.Memory())
	}
	if v, _ := a.Get(99); len(v) != 50+199%7 {
		t.Fatalf("Get(99) has %d bytes", len(v))
	}
}

func values(s ...string) [][]byte {
	vs := make([][]byte, len(s))
	for i, v := range s {
		vs[i] = []byte(v)
	}
	return vs
}

func lastItems(a *Array, n uint64) string {
	var out []string
	a.LastItems(n, func(v []byte, ok bool) {
		if !ok {
			out = append(out, "nil")
			return
		}
		out = append(out, string(v))
	})
	return fmt.Sprint(out)
}

// TestCursor: ARINSERT, ARSEEK and ARNEXT as their redis.io pages show
// them, and the cursor at the end of the index space.
func TestCursor(t *testing.T) {
	a := &Array{}
	for k, v := range []string{"a", "b"} {
		if last, ok := a.Insert(values(v)); !ok || last != uint64(k) {
			t.Fatalf("Insert %s: %d %v", v, last, ok)
		}
	}
	if a.Next() != 2 {
		t.Fatalf("Next %d", a.Next())
	}
	a.Seek(10)
	if last, _ := a.Insert(values("c")); last != 10 || a.Next() != 11 {
		t.Fatalf("after ARSEEK 10: inserted at %d, next %d", last, a.Next())
	}
	a.Seek(MaxIndex - 1)
	if _, ok := a.Insert(values("x", "y", "z")); ok {
		t.Fatal("three values from MaxIndex-1 fit")
	}
	if last, ok := a.Insert(values("x", "y")); !ok || last != MaxIndex || a.Next() != Exhausted {
		t.Fatalf("two values from MaxIndex-1: %d %v, next %d", last, ok, a.Next())
	}
	if _, ok := a.Insert(values("z")); ok {
		t.Fatal("an insert past the exhausted cursor")
	}
}

// TestRing: ARRING's page example and go-redis's ring specs (wrap, shrink,
// shrink stopping at a hole), with ARLASTITEMS.
func TestRing(t *testing.T) {
	a := &Array{}
	for k, v := range []string{"v0", "v1", "v2", "v3"} {
		if last := a.Ring(3, values(v)); last != uint64(k%3) {
			t.Fatalf("ARRING %s: %d", v, last)
		}
	}
	if got := lastItems(a, 3); got != "[v3 v2 v1]" {
		t.Fatalf("last items %s", got)
	}
	a = &Array{}
	for k := range 15 {
		a.Ring(10, values(fmt.Sprint("v", k)))
	}
	a.Ring(5, values("t"))
	if got := lastItems(a, 10); got != "[t v14 v13 v12 v11]" || a.Count() != 5 {
		t.Fatalf("after shrinking to 5: %s, count %d", got, a.Count())
	}
	if v, _ := a.Get(0); string(v) != "t" {
		t.Fatalf("index 0 %q", v)
	}
	a = &Array{}
	for k := range 5 {
		a.Ring(5, values(fmt.Sprint("v", k)))
	}
	a.Delete(3)
	a.Ring(3, values("new"))
	if got := lastItems(a, 5); got != "[new v4]" || a.Count() != 2 {
		t.Fatalf("shrink past a hole: %s, count %d", got, a.Count())
	}
	// Holes before the cursor are nil.
	a = &Array{}
	a.Insert(values("a"))
	a.Seek(3)
	a.Insert(values("b"))
	if got := lastItems(a, 10); got != "[b nil nil a]" {
		t.Fatalf("last items over holes %s", got)
	}
}

// FuzzReadFile: any bytes either fail to load or load an array whose file
// form is those bytes (the form is canonical) and whose count they state.
func FuzzReadFile(f *testing.F) {
	a := &Array{}
	a.Insert(values("a", "", "ccc"))
	a.Set(5000, []byte("far"))
	a.Set(MaxIndex, []byte("last"))
	f.Add(a.AppendFile(nil))
	f.Add([]byte{fileVersion, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := ReadFile(b)
		if err != nil {
			return
		}
		if again := a.AppendFile(nil); !bytes.Equal(again, b) {
			t.Fatalf("read %x, wrote %x", b, again)
		}
		n := uint64(0)
		a.Range(0, MaxIndex, func(uint64, []byte) bool { n++; return true })
		if n != a.Count() || n == 0 {
			t.Fatalf("%d elements, count %d", n, a.Count())
		}
	})
}

// TestFewObjects: an array of 200,000 elements, dense or one in every
// thousand indexes (timestamps in milliseconds, say), holds a few hundred
// heap objects, not one per element.
func TestFewObjects(t *testing.T) {
	for _, step := range []uint64{1, 1000} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		a := &Array{}
		for i := range uint64(200000) {
			a.Set(i*step, []byte("a value of some bytes"))
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		objects := int64(after.HeapObjects) - int64(before.HeapObjects)
		if objects > 2000 {
			t.Errorf("200000 elements %d apart: %d heap objects", step, objects)
		}
		t.Logf("200000 elements %d apart: %d heap objects, %d bytes (%.1f per element)", step, objects, a.Memory(), float64(a.Memory())/200000)
		runtime.KeepAlive(a)
	}
}

// TestSmallArrayIsSmall: an array of three short values holds a few
// hundred bytes, not a chunk sized for thousands.
func TestSmallArrayIsSmall(t *testing.T) {
	a := &Array{}
	a.Insert(values("one", "two", "three"))
	if n := a.Memory(); n > 400 {
		t.Errorf("three short values hold %d bytes", n)
	}
}

// FuzzOps runs the sets, deletes and range deletes the bytes spell over a
// few pages near 0 and near MaxIndex, and compares the array with a map,
// then its clone and its file round trip.
func FuzzOps(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	var dense []byte // 768 sets in the first page, then deletes: dense and back
	for k := range 768 {
		dense = append(dense, 0, byte(k>>8), byte(k))
	}
	for k := range 700 {
		dense = append(dense, 2, byte(k>>8), byte(k))
	}
	f.Add(dense)
	f.Fuzz(func(t *testing.T, b []byte) {
		a, m := &Array{}, model{}
		for len(b) >= 3 {
			op, hi, lo := b[0], b[1], b[2]
			b = b[3:]
			i := uint64(hi&0x7f)<<8 | uint64(lo) // 8 pages' worth
			if hi&0x80 != 0 {
				i = MaxIndex - i
			}
			switch op % 4 {
			case 0, 1:
				v := bytes.Repeat([]byte{op}, int(op%37))
				_, had := m[i]
				if a.Set(i, v) == had {
					t.Fatalf("Set(%d) disagrees on emptiness", i)
				}
				m[i] = string(v)
			case 2:
				_, had := m[i]
				if a.Delete(i) != had {
					t.Fatalf("Delete(%d) disagrees", i)
				}
				delete(m, i)
			default:
				hi := min(i+uint64(op)*40, MaxIndex)
				var n uint64
				for k := range m {
					if k >= i && k <= hi {
						delete(m, k)
						n++
					}
				}
				if got := a.DeleteRange(i, hi); got != n {
					t.Fatalf("DeleteRange(%d, %d) = %d, want %d", i, hi, got, n)
				}
			}
		}
		check(t, a, m)
		check(t, a.Clone(), m)
		if a.Count() > 0 {
			c, err := ReadFile(a.AppendFile(nil))
			if err != nil {
				t.Fatal(err)
			}
			check(t, c, m)
		}
	})
}

// TestDirectoryBlocks: thousands of pages split the directory into blocks;
// range deletes that drop whole blocks and deletes one by one keep the
// array whole.
func TestDirectoryBlocks(t *testing.T) {
	a, m := &Array{}, model{}
	r := rand.New(rand.NewPCG(3, 4))
	for _, k := range r.Perm(5000) { // pages in random order: splits anywhere
		i := uint64(k)*PageSlots + uint64(k%7)
		a.Set(i, []byte(fmt.Sprint(k)))
		m[i] = fmt.Sprint(k)
	}
	if len(a.dir) < 5 {
		t.Fatalf("5000 pages in %d blocks", len(a.dir))
	}
	check(t, a, m)
	lo, hi := uint64(1000)*PageSlots+3, uint64(4000)*PageSlots
	var n uint64
	for k := range m {
		if k >= lo && k <= hi {
			delete(m, k)
			n++
		}
	}
	if got := a.DeleteRange(lo, hi); got != n {
		t.Fatalf("DeleteRange: %d, want %d", got, n)
	}
	check(t, a, m)
	for _, k := range m.sorted() {
		if r.IntN(2) == 0 {
			a.Delete(k)
			delete(m, k)
		}
	}
	check(t, a, m)
	if in := a.Info(); in.Pages != uint64(len(m)) {
		t.Fatalf("%d pages for %d elements one per page", in.Pages, len(m))
	}
	a.DeleteRange(0, MaxIndex)
	check(t, a, model{})
	if len(a.dir) != 0 {
		t.Fatalf("an empty array keeps %d blocks", len(a.dir))
	}
}
