package listpack

import (
	"bytes"
	"fmt"
	"testing"
)

// run applies an operation stream to an encoding and to a Go map with an
// order list, and compares them, order included.
func run(t testing.TB, ops []byte) {
	b := Empty
	var order []string
	want := map[string]string{}
	for len(ops) >= 3 {
		op, k, vl := ops[0], ops[1]%16, int(ops[2])
		ops = ops[3:]
		field := fmt.Sprintf("f%d", k)
		value := string(bytes.Repeat([]byte{byte(vl)}, vl%200))
		if op%3 != 2 {
			var added bool
			b, added = Set(nil, b, []byte(field), []byte(value))
			_, had := want[field]
			if added == had {
				t.Fatalf("Set(%q) added=%v had=%v", field, added, had)
			}
			if !had {
				order = append(order, field)
			}
			want[field] = value
		} else {
			var n int
			b, n = Delete(nil, b, [][]byte{[]byte(field), []byte("nope")})
			if _, had := want[field]; (n == 1) != had {
				t.Fatalf("Delete(%q) = %d", field, n)
			}
			delete(want, field)
			for i, f := range order {
				if f == field {
					order = append(order[:i], order[i+1:]...)
					break
				}
			}
		}
		if Len(b) != len(want) {
			t.Fatalf("Len %d, want %d", Len(b), len(want))
		}
		it := NewIter(b)
		for _, f := range order {
			gf, gv, ok := it.Next()
			if !ok || string(gf) != f || string(gv) != want[f] {
				t.Fatalf("pair %q=%q, want %q=%q", gf, gv, f, want[f])
			}
			if v, ok := Get(b, gf); !ok || string(v) != want[f] {
				t.Fatalf("Get(%q) = %q", f, v)
			}
		}
		if _, _, ok := it.Next(); ok {
			t.Fatal("extra pairs")
		}
	}
}

func TestRandomOps(t *testing.T) {
	var ops []byte
	for i := 0; i < 3000; i++ {
		ops = append(ops, byte(i*7), byte(i*13/3), byte(i*31))
	}
	run(t, ops)
}

// TestInputUnchanged checks that building into a separate buffer (reused, as
// the server's scratch buffers are) leaves the source intact.
func TestInputUnchanged(t *testing.T) {
	b, _ := Set(nil, Empty, []byte("a"), []byte("1"))
	keep := bytes.Clone(b)
	scratch := make([]byte, 0, 64)
	out, _ := Set(scratch, b, []byte("a"), []byte("2"))
	if v, _ := Get(out, []byte("a")); string(v) != "2" {
		t.Fatalf("Set into scratch: %q", v)
	}
	out, _ = Delete(out[:0], b, [][]byte{[]byte("a")})
	if Len(out) != 0 || !bytes.Equal(b, keep) || !bytes.Equal(Empty, []byte{0}) {
		t.Fatal("input modified")
	}
}

func FuzzListpack(f *testing.F) {
	f.Add([]byte{0, 1, 5, 0, 2, 6, 2, 1, 0})
	f.Fuzz(func(t *testing.T, ops []byte) { run(t, ops) })
}
