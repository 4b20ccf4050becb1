package hll

import (
	"bytes"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// redisABC is what redis-server 7.0 stores after PFADD g a b c foo bar
// (cached cardinality invalid), and its PFDEBUG DECODE.
const (
	redisABC       = "48594c4c0100000000000000000000805cb390443e804621804a8e844bfb80425a"
	redisABCDecode = "Z:7348 v:5,1 Z:1087 v:1,1 Z:1570 v:1,1 Z:2703 v:2,1 Z:3068 v:1,1 Z:603"
)

func TestMatchesRedisBytes(t *testing.T) {
	v := AppendEmpty(nil)
	for _, e := range []string{"a", "b", "c", "foo", "bar"} {
		v, _, _ = Add(v, []byte(e), 3000)
	}
	if got := hex.EncodeToString(v); got != redisABC {
		t.Fatalf("got %s\nwant %s", got, redisABC)
	}
	if got := string(AppendDecoded(nil, v)); got != redisABCDecode {
		t.Fatalf("decode %q", got)
	}
	if c, ok := Count(v); !ok || c != 5 {
		t.Fatalf("count %d %v", c, ok)
	}
}

// TestSparseDenseAgree adds the same elements to a sparse and a dense HLL and
// checks registers, counts and promotion at hll-sparse-max-bytes.
func TestSparseDenseAgree(t *testing.T) {
	sparse := AppendEmpty(nil)
	dense, _ := ToDense(AppendEmpty(nil))
	for n := 0; n < 20000; n++ {
		e := []byte(strconv.Itoa(n))
		var c1, c2 bool
		sparse, c1, _ = Add(sparse, e, 3000)
		dense, c2, _ = Add(dense, e, 3000)
		if c1 != c2 {
			t.Fatalf("element %d: changed %v (sparse) %v (dense)", n, c1, c2)
		}
		if IsSparse(sparse) && len(sparse) > 3000 {
			t.Fatalf("sparse grew to %d bytes", len(sparse))
		}
		if n%997 == 0 {
			a, ok := Count(sparse)
			b, _ := Count(dense)
			if !ok || a != b {
				t.Fatalf("after %d: %d vs %d", n, a, b)
			}
			d, _ := ToDense(sparse)
			if !bytes.Equal(d[HeaderSize:], dense[HeaderSize:]) {
				t.Fatalf("after %d: registers differ", n)
			}
		}
	}
	if IsSparse(sparse) {
		t.Fatal("never promoted")
	}
}

func TestEstimatorEdges(t *testing.T) {
	var m Max
	if c := m.Count(); c != 0 {
		t.Fatalf("empty %d", c)
	}
	for i := range m {
		m[i] = registerMax
	}
	if c := m.Count(); c == 0 || c == math.MaxUint64 {
		t.Fatalf("full %d", c)
	}
	if err := SelfTest(); err != nil {
		t.Fatal(err)
	}
}

// FuzzHLL feeds arbitrary bytes as an HLL value (what a client can SET) and
// checks that nothing panics and that the sparse and dense views agree:
// counting the sparse body, merging it and converting it to dense see the
// same registers, and adding to it matches adding to its dense form.
func FuzzHLL(f *testing.F) {
	seed, _ := hex.DecodeString(redisABC)
	f.Add(seed, []byte("x"))
	f.Add(AppendEmpty(nil), []byte("a"))
	f.Add([]byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f"), []byte("b"))
	f.Add([]byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff"), []byte("c"))
	f.Add([]byte("HYLL\x00\x00\x00\x00"), []byte("d"))
	f.Add([]byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xfe"), []byte("e"))
	dense, _ := ToDense(seed)
	f.Add(dense, []byte("f"))
	f.Fuzz(func(t *testing.T, v, elem []byte) {
		if !Valid(v) {
			return
		}
		Cached(v)
		AppendDecoded(nil, v)
		card, countOK := Count(v)
		var m Max
		mergeOK := m.Merge(v)
		d, denseOK := ToDense(v)
		if mergeOK != denseOK {
			t.Fatalf("merge ok %v, todense ok %v", mergeOK, denseOK)
		}
		if !denseOK {
			// Redis's corrupted-HLL paths: adding must fail or work, not panic.
			Add(bytes.Clone(v), elem, 3000)
			return
		}
		if !countOK {
			t.Fatal("convertible body not countable")
		}
		for i := range m {
			if Register(d, i) != m[i] {
				t.Fatalf("register %d: dense %d, merged %d", i, Register(d, i), m[i])
			}
		}
		if dc, _ := Count(d); dc != card || m.Count() != card {
			t.Fatalf("count %d, dense %d, merged %d", card, dc, m.Count())
		}
		a, changedA, okA := Add(bytes.Clone(v), elem, 3000)
		b, changedB, _ := Add(bytes.Clone(d), elem, 3000)
		if !okA || changedA != changedB {
			t.Fatalf("add: ok %v changed %v vs %v", okA, changedA, changedB)
		}
		ad, ok := ToDense(a)
		if !ok || !bytes.Equal(ad[HeaderSize:], b[HeaderSize:]) {
			t.Fatal("add: sparse and dense results differ")
		}
	})
}

// TestDenseWordwise checks the word-at-a-time merge and count of dense
// registers against register-by-register reads, with every register value.
func TestDenseWordwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	var m, want Max
	for round := 0; round < 4; round++ {
		v, _ := ToDense(AppendEmpty(nil))
		var histo [64]int
		for i := 0; i < Registers; i++ {
			r := uint8(rng.IntN(registerMax + 1))
			if round == 0 {
				r = uint8(i % (registerMax + 1))
			}
			setRegister(v[HeaderSize:], i, r)
			histo[r]++
			want[i] = max(want[i], r)
		}
		if c, ok := Count(v); !ok || c != estimate(&histo) {
			t.Fatalf("round %d: Count %d %v, want %d", round, c, ok, estimate(&histo))
		}
		if !m.Merge(v) || m != want {
			t.Fatalf("round %d: merged registers differ", round)
		}
	}
}
