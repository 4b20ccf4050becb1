package namespace_test

import (
	"testing"

	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/namespace"
	"github.com/keyhive/keyhive/values"
)

// TestKeysizesLines: the histogram lines' buckets and units (INFO
// keysizes, redis.io/docs/latest/commands/info/): 0 alone, powers of two,
// binary K, M and G, a line only for a type holding keys.
func TestKeysizesLines(t *testing.T) {
	ks := keyspace.New(2, keyspace.Hooks{Len: values.Len})
	tab := namespace.NewTable(nil, 2, nil)
	ks.SetSchema(tab)
	var all keyspace.LockSet
	all.All()
	db := ks.Lock(0, &all)
	for i, n := range []int{0, 1, 2, 3, 7, 1023, 1024, 2047, 1 << 20, 1<<21 - 1} {
		db.Set([]byte{byte('a' + i)}, keyspace.TypeString, keyspace.EncRaw, make([]byte, n), 0, 1)
	}
	ks.Unlock(db, &all)
	const want = "db0_distrib_strings_sizes:0=1,1=1,2=2,4=1,512=1,1K=2,1M=2\r\n"
	if got := string(tab.AppendKeySizes(nil, 0)); got != want {
		t.Fatalf("db0: %q, want %q", got, want)
	}
	if got := tab.AppendKeySizes(nil, 1); len(got) != 0 {
		t.Fatalf("db1 holds no keys: %q", got)
	}
}

// BenchmarkKeysizesWrite measures what keeping the histograms adds to a
// write, each under its own lock as a command's: an overwrite of a string
// of the same length (the common case: rewritten in place) and one that
// moves it to another bucket, with no schema (without namespaces nothing
// was reported before keysizes) and with the Table the server installs.
func BenchmarkKeysizesWrite(b *testing.B) {
	for _, c := range []struct {
		name   string
		schema bool
		sizes  [2]int
	}{
		{"none/same-length", false, [2]int{5, 5}},
		{"table/same-length", true, [2]int{5, 5}},
		{"none/new-bucket", false, [2]int{3, 9}},
		{"table/new-bucket", true, [2]int{3, 9}},
	} {
		b.Run(c.name, func(b *testing.B) {
			ks := keyspace.New(1, keyspace.Hooks{Len: values.Len})
			if c.schema {
				ks.SetSchema(namespace.NewTable(nil, 1, nil))
			}
			var all keyspace.LockSet
			all.All()
			key := []byte("bench:key")
			vals := [2][]byte{make([]byte, c.sizes[0]), make([]byte, c.sizes[1])}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				db := ks.Lock(0, &all)
				db.Set(key, keyspace.TypeString, keyspace.EncRaw, vals[i&1], 0, 1)
				ks.Unlock(db, &all)
			}
		})
	}
}

// BenchmarkKeysizesReport measures the Table's side of one report: a
// collection's length changed in place, moving its key between buckets
// (two atomic adds), and a change within its bucket (none).
func BenchmarkKeysizesReport(b *testing.B) {
	tab := namespace.NewTable(nil, 1, nil)
	key := []byte("bench:key")
	for _, c := range []struct {
		name string
		lens [2]int64
	}{{"same-bucket", [2]int64{5, 6}}, {"new-bucket", [2]int64{3, 9}}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				was := keyspace.KeySize{Type: keyspace.TypeList, Len: c.lens[i&1]}
				is := keyspace.KeySize{Type: keyspace.TypeList, Len: c.lens[1-i&1]}
				tab.Changed(0, key, 0, 0, 0, 0, -1, was, is)
			}
		})
	}
}
