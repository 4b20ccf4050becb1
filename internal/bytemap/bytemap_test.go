package bytemap

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"
)

// check compares m with want completely: lookups, iteration, a full scan.
func check(t testing.TB, m *Map, want map[string]string) {
	t.Helper()
	if m.Len() != len(want) {
		t.Fatalf("Len %d, want %d", m.Len(), len(want))
	}
	for f, v := range want {
		got, ok := m.Get([]byte(f))
		if !ok || string(got) != v {
			t.Fatalf("Get(%q) = %q %v, want %q", f, got, ok, v)
		}
	}
	n := 0
	for p := m.Next(0); p >= 0; p = m.Next(p + 1) {
		f, v := m.At(p)
		if want[string(f)] != string(v) {
			t.Fatalf("At: %q=%q not in map", f, v)
		}
		n++
	}
	if n != len(want) {
		t.Fatalf("iterated %d, want %d", n, len(want))
	}
	seen := map[string]bool{}
	cursor := uint64(0)
	for {
		cursor = m.Scan(cursor, 3, func(f, v []byte) {
			if seen[string(f)] {
				t.Fatalf("Scan returned %q twice without changes", f)
			}
			seen[string(f)] = true
		})
		if cursor == 0 {
			break
		}
	}
	if len(seen) != len(want) {
		t.Fatalf("Scan returned %d, want %d", len(seen), len(want))
	}
}

// run applies an operation stream to a Map and a Go map.
func run(t testing.TB, ops []byte) {
	m := &Map{}
	want := map[string]string{}
	for len(ops) >= 3 {
		op, k, vl := ops[0], ops[1]%64, int(ops[2])
		ops = ops[3:]
		field := []byte(fmt.Sprintf("f%d", k))
		if k%7 == 0 {
			field = bytes.Repeat(field, 40)
		}
		value := bytes.Repeat([]byte{byte(vl)}, vl%150)
		switch op % 4 {
		case 0, 1:
			_, had := want[string(field)]
			if added := m.Set(field, value); added == had {
				t.Fatalf("Set(%q) added=%v, had=%v", field, added, had)
			}
			want[string(field)] = string(value)
		case 2:
			_, had := want[string(field)]
			if m.Delete(field) != had {
				t.Fatalf("Delete(%q) != %v", field, had)
			}
			delete(want, string(field))
		case 3:
			c := m.Clone()
			check(t, c, want)
		}
	}
	check(t, m, want)
	if m.Len() > 0 {
		f, v := m.At(m.RandomPos())
		if want[string(f)] != string(v) {
			t.Fatalf("RandomPos gave %q", f)
		}
	}
}

func TestRandomOps(t *testing.T) {
	var ops []byte
	x := uint64(1)
	for i := 0; i < 30000; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		ops = binary.LittleEndian.AppendUint64(ops, x)
	}
	run(t, ops)
}

func TestGrowShrink(t *testing.T) {
	m := &Map{}
	want := map[string]string{}
	for i := 0; i < 5000; i++ {
		f := fmt.Sprint("field:", i)
		m.Set([]byte(f), []byte(f))
		want[f] = f
	}
	check(t, m, want)
	for i := 0; i < 4990; i++ {
		f := fmt.Sprint("field:", i)
		m.Delete([]byte(f))
		delete(want, f)
	}
	check(t, m, want)
	if len(m.index) > 64 || m.dead*2 > m.slab.Used {
		t.Fatalf("not compacted: %d slots, %d of %d slab bytes dead", len(m.index), m.dead, m.slab.Used)
	}
}

// TestScanGuarantee: fields present for a whole scan are returned although
// the table grows and shrinks between calls.
func TestScanGuarantee(t *testing.T) {
	m := &Map{}
	for i := 0; i < 1000; i++ {
		m.Set([]byte(fmt.Sprint("stay", i)), []byte("v"))
	}
	seen := map[string]bool{}
	cursor, step := uint64(0), 0
	for {
		cursor = m.Scan(cursor, 10, func(f, v []byte) { seen[string(f)] = true })
		if cursor == 0 {
			break
		}
		step++
		for i := 0; i < 200; i++ { // grow, then shrink
			f := []byte(fmt.Sprint("tmp", step, ":", i))
			if step%2 == 0 {
				m.Set(f, []byte("x"))
			}
		}
		if step%2 == 1 {
			for i := 0; i < 200; i++ {
				m.Delete([]byte(fmt.Sprint("tmp", step-1, ":", i)))
			}
		}
	}
	for i := 0; i < 1000; i++ {
		if !seen[fmt.Sprint("stay", i)] {
			t.Fatalf("stay%d not returned", i)
		}
	}
}

func FuzzMap(f *testing.F) {
	f.Add([]byte{0, 1, 5, 0, 2, 6, 2, 1, 0, 3, 0, 0})
	f.Add(bytes.Repeat([]byte{0, 7, 200, 1, 14, 3, 2, 7, 0}, 40))
	f.Fuzz(func(t *testing.T, ops []byte) { run(t, ops) })
}
