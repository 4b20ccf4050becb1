package values

import (
	"strconv"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/internal/stream"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/persistence"
)

// limits are small thresholds, so conversions happen after a few elements.
type limits struct{}

func (limits) HashMaxListpackEntries() int64 { return 4 }
func (limits) HashMaxListpackValue() int64   { return 8 }
func (limits) SetMaxIntsetEntries() int64    { return 4 }
func (limits) SetMaxListpackEntries() int64  { return 4 }
func (limits) SetMaxListpackValue() int64    { return 8 }
func (limits) ZsetMaxListpackEntries() int64 { return 4 }
func (limits) ZsetMaxListpackValue() int64   { return 8 }
func (limits) ListMaxListpackSize() int      { return 4 }
func (limits) StreamNodeMaxBytes() int64     { return 4096 }
func (limits) StreamNodeMaxEntries() int64   { return 100 }

const now = int64(1_700_000_000_000)

func newEnv() *Env {
	return &Env{Limits: limits{}, DB: keyspace.New(1, keyspace.Hooks{}).DB(0), Now: now, Scratch: &Scratch{}}
}

func lookup(env *Env, key string) (keyspace.Entry, bool) {
	return env.DB.Lookup([]byte(key), env.Now, false)
}

func hashEdit(t *testing.T, env *Env, key string) *HashEdit {
	t.Helper()
	e, found := lookup(env, key)
	if found && e.Type() != keyspace.TypeHash {
		t.Fatalf("%s: type %v", key, e.Type())
	}
	h := &HashEdit{}
	h.Begin(env, []byte(key), &e, found)
	return h
}

func setEdit(env *Env, key string) *SetEdit {
	e, found := lookup(env, key)
	s := &SetEdit{}
	s.Begin(env, []byte(key), &e, found)
	return s
}

func wantEncoding(t *testing.T, env *Env, key string, enc keyspace.Encoding, n int) {
	t.Helper()
	e, found := lookup(env, key)
	if !found {
		t.Fatalf("%s: missing", key)
	}
	if e.Encoding() != enc {
		t.Fatalf("%s: encoding %s, want %s", key, e.Encoding().Name(), enc.Name())
	}
	var got int
	switch e.Type() {
	case keyspace.TypeHash:
		got = ViewHash(&e).Len()
	case keyspace.TypeSet:
		got = ViewSet(&e).Len()
	case keyspace.TypeList:
		got = ViewList(&e).Len()
	case keyspace.TypeZSet:
		got = ViewZSet(&e).Len()
	}
	if got != n {
		t.Fatalf("%s: %d elements, want %d", key, got, n)
	}
}

func TestHashConvertsAtThresholds(t *testing.T) {
	env := newEnv()
	for i := range 4 {
		h := hashEdit(t, env, "h")
		if !h.Set([]byte("f"+strconv.Itoa(i)), []byte("v")) {
			t.Fatalf("field %d not new", i)
		}
		if c := h.Commit(); c.Outcome != Stored || c.Type != keyspace.TypeHash || string(c.Key) != "h" {
			t.Fatalf("commit %+v", c)
		}
	}
	wantEncoding(t, env, "h", keyspace.EncListpack, 4)

	// The fifth entry passes hash-max-listpack-entries.
	h := hashEdit(t, env, "h")
	h.Set([]byte("f4"), []byte("v"))
	h.Commit()
	wantEncoding(t, env, "h", keyspace.EncHashtable, 5)

	// A value longer than hash-max-listpack-value makes a hashtable, kept
	// packed while small (OBJECT ENCODING hashtable all the same).
	h = hashEdit(t, env, "long")
	h.Set([]byte("f"), []byte("123456789"))
	h.Commit()
	wantEncoding(t, env, "long", keyspace.EncHashPacked, 1)
	e, _ := lookup(env, "long")
	if v, ok := ViewHash(&e).Get([]byte("f")); !ok || string(v) != "123456789" || !ViewHash(&e).Large() {
		t.Fatalf("long: f = %q %v", v, ok)
	}
	// Deleting the long value leaves it a hashtable, as in Redis.
	h = hashEdit(t, env, "long")
	h.Set([]byte("g"), []byte("1"))
	h.Delete([][]byte{[]byte("f")})
	h.Commit()
	wantEncoding(t, env, "long", keyspace.EncHashPacked, 1)
	// Past packedHashMax bytes it takes the table form.
	h = hashEdit(t, env, "long")
	h.Set([]byte("big"), make([]byte, packedHashMax))
	h.Commit()
	wantEncoding(t, env, "long", keyspace.EncHashtable, 2)
	// So does a packed hash past hash-max-listpack-entries.
	for i := range 5 {
		h = hashEdit(t, env, "many")
		h.Set([]byte("f"+strconv.Itoa(i)), []byte("a long value"[:1+8*(i/4)]))
		h.Commit()
	}
	wantEncoding(t, env, "many", keyspace.EncHashtable, 5)
}

func TestSetConvertsAtThresholds(t *testing.T) {
	env := newEnv()
	s := setEdit(env, "ints")
	for i := range 4 {
		s.Add([]byte(strconv.Itoa(i)))
	}
	s.Commit()
	wantEncoding(t, env, "ints", keyspace.EncIntset, 4)
	s = setEdit(env, "ints")
	if s.Add([]byte("3")) {
		t.Fatal("3 added twice")
	}
	s.Add([]byte("4")) // past set-max-intset-entries
	s.Commit()
	wantEncoding(t, env, "ints", keyspace.EncHashtable, 5)

	// A string makes an intset a listpack (Redis 7.2), in the intset's
	// order then the string's; past set-max-listpack-entries members, or a
	// member past set-max-listpack-value bytes, a hashtable.
	s = setEdit(env, "mixed")
	s.Add([]byte("2"))
	s.Add([]byte("1"))
	s.Add([]byte("a")) // not an integer
	s.Add([]byte("12345678"))
	s.Commit()
	wantEncoding(t, env, "mixed", keyspace.EncListpack, 4)
	wantMembers(t, env, "mixed", "1", "2", "a", "12345678")
	s = setEdit(env, "mixed")
	if s.Add([]byte("a")) {
		t.Fatal("a added twice")
	}
	s.Remove([]byte("1"))
	s.Add([]byte("exactly8")) // set-max-listpack-value bytes: still a listpack
	s.Commit()
	wantEncoding(t, env, "mixed", keyspace.EncListpack, 4)
	wantMembers(t, env, "mixed", "2", "a", "12345678", "exactly8")
	s = setEdit(env, "mixed")
	s.Add([]byte("b"))
	s.Commit()
	wantEncoding(t, env, "mixed", keyspace.EncHashtable, 5)

	s = setEdit(env, "long")
	s.Add([]byte("ninebytes"))
	s.Commit()
	wantEncoding(t, env, "long", keyspace.EncHashtable, 1)
	// An intset's integers count as members of their length as text.
	s = setEdit(env, "wide")
	s.Add([]byte("123456789"))
	s.Add([]byte("a"))
	s.Commit()
	wantEncoding(t, env, "wide", keyspace.EncHashtable, 2)
	s = setEdit(env, "edge")
	s.Add([]byte("-1234567"))
	s.Add([]byte("exactly8"))
	s.Commit()
	wantEncoding(t, env, "edge", keyspace.EncListpack, 2)
}

// TestSetExpect: a command's number of members picks a new set's form and
// converts a stored one, as Redis's SADD does.
func TestSetExpect(t *testing.T) {
	env := newEnv()
	for _, c := range []struct {
		key, first string
		n          int
		want       keyspace.Encoding
	}{
		{"int", "1", 4, keyspace.EncIntset},
		{"intmany", "1", 5, keyspace.EncHashtable},
		{"str", "a", 4, keyspace.EncListpack},
		{"strmany", "a", 5, keyspace.EncHashtable},
		{"long", "exactly8", 1, keyspace.EncListpack},
		{"longer", "ninebytes", 1, keyspace.EncHashtable},
	} {
		s := setEdit(env, c.key)
		s.Expect([]byte(c.first), c.n)
		s.Add([]byte(c.first))
		s.Commit()
		wantEncoding(t, env, c.key, c.want, 1)
	}
	// Stored sets convert for a count past their form, members new or not.
	s := setEdit(env, "str")
	s.Expect([]byte("a"), 5)
	s.Add([]byte("a"))
	s.Commit()
	wantEncoding(t, env, "str", keyspace.EncHashtable, 1)
	s = setEdit(env, "int")
	s.Expect([]byte("1"), 5)
	s.Commit()
	wantEncoding(t, env, "int", keyspace.EncHashtable, 1)
}

func wantMembers(t *testing.T, env *Env, key string, want ...string) {
	t.Helper()
	e, _ := lookup(env, key)
	var got []string
	ViewSet(&e).Each(func(m []byte) { got = append(got, string(m)) })
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("%s: members %q, want %q", key, got, want)
	}
}

func TestZSetAndListConvert(t *testing.T) {
	env := newEnv()
	var z ZSetEdit
	e, found := lookup(env, "z")
	z.Begin(env, []byte("z"), &e, found)
	for i := range 5 {
		z.Add([]byte{'a' + byte(i)}, float64(i))
	}
	z.Commit()
	wantEncoding(t, env, "z", keyspace.EncSkiplist, 5)

	var l ListEdit
	e, found = lookup(env, "l")
	l.Begin(env, []byte("l"), &e, found)
	for i := range 3 {
		l.Push(false, []byte(strconv.Itoa(i)))
	}
	l.Commit()
	e, _ = lookup(env, "l")
	if e.Object() != nil {
		t.Fatal("a list of 3 is large")
	}
	l.Begin(env, []byte("l"), &e, true)
	for i := range 10 {
		l.Push(true, []byte(strconv.Itoa(i)))
	}
	l.Commit()
	e, _ = lookup(env, "l")
	if e.Object() == nil || ViewList(&e).Len() != 13 {
		t.Fatal("a list of 13 past a fill of 4 is not large")
	}
}

func TestEmptiedCollectionIsDeleted(t *testing.T) {
	env := newEnv()
	for _, large := range []bool{false, true} {
		s := setEdit(env, "s")
		s.Add([]byte("1"))
		if large {
			s.Add([]byte("x"))
		}
		s.Commit()
		s = setEdit(env, "s")
		s.Remove([]byte("1"))
		s.Remove([]byte("x"))
		if c := s.Commit(); c.Outcome != Deleted {
			t.Fatalf("large=%v: outcome %v, want Deleted", large, c.Outcome)
		}
		if _, found := lookup(env, "s"); found {
			t.Fatalf("large=%v: emptied set still stored", large)
		}
	}
	// An edit of a missing key that adds nothing stores nothing.
	h := hashEdit(t, env, "none")
	if c := h.Commit(); c.Outcome != Unchanged {
		t.Fatalf("outcome %v, want Unchanged", c.Outcome)
	}
	if _, found := lookup(env, "none"); found {
		t.Fatal("empty hash stored")
	}
}

func TestEditKeepsTTL(t *testing.T) {
	env := newEnv()
	at := now + 60_000
	h := hashEdit(t, env, "h")
	h.Set([]byte("a"), []byte("1"))
	h.Commit()
	e, _ := lookup(env, "h")
	env.DB.SetExpire(&e, at, now)

	h = hashEdit(t, env, "h") // compact bytes rewritten
	h.Set([]byte("b"), []byte("2"))
	h.Commit()
	if e, _ := lookup(env, "h"); e.ExpireAt() != at {
		t.Fatalf("compact rewrite: expire %d, want %d", e.ExpireAt(), at)
	}
	h = hashEdit(t, env, "h") // packed: a hashtable in a listpack's bytes
	h.Set([]byte("c"), []byte("a long value"))
	h.Commit()
	if e, _ := lookup(env, "h"); e.ExpireAt() != at || e.Encoding() != keyspace.EncHashPacked {
		t.Fatalf("packing: expire %d (want %d), encoding %v", e.ExpireAt(), at, e.Encoding())
	}
	h = hashEdit(t, env, "h") // converted to the large form
	h.Set([]byte("c"), make([]byte, packedHashMax))
	h.Commit()
	if e, _ := lookup(env, "h"); e.ExpireAt() != at || e.Object() == nil {
		t.Fatalf("conversion: expire %d (want %d), object %v", e.ExpireAt(), at, e.Object())
	}
	h = hashEdit(t, env, "h") // the large form changed in place
	h.Set([]byte("d"), []byte("4"))
	h.Commit()
	if e, _ := lookup(env, "h"); e.ExpireAt() != at || ViewHash(&e).Len() != 4 {
		t.Fatalf("in place: expire %d, want %d", e.ExpireAt(), at)
	}
}

func TestStoreAtReplacesAndDropsTTL(t *testing.T) {
	env := newEnv()
	env.DB.Set([]byte("dst"), keyspace.TypeString, keyspace.EncEmbstr, []byte("old"), now+1000, now)
	var s SetEdit
	s.BeginNew(env)
	s.Add([]byte("7"))
	e, found := lookup(env, "dst")
	if c := s.StoreAt(&e, found, []byte("dst")); c.Outcome != Stored {
		t.Fatalf("outcome %v", c.Outcome)
	}
	e, _ = lookup(env, "dst")
	if e.Type() != keyspace.TypeSet || e.ExpireAt() != 0 || !ViewSet(&e).Has([]byte("7")) {
		t.Fatalf("stored %v expire %d", e.Type(), e.ExpireAt())
	}
	s.BeginNew(env) // an empty result deletes the destination
	if c := s.StoreAt(&e, true, []byte("dst")); c.Outcome != Deleted {
		t.Fatalf("outcome %v, want Deleted", c.Outcome)
	}
	if _, found := lookup(env, "dst"); found {
		t.Fatal("dst not deleted")
	}
}

// TestRestoreRoundTrip encodes each type as DUMP does, decodes it and
// restores it into another database with no server: same encoding, same
// encoded value, the expire time and LFU counter carried over.
func TestRestoreRoundTrip(t *testing.T) {
	env := newEnv()
	h := hashEdit(t, env, "h")
	h.Set([]byte("a"), []byte("1"))
	h.Commit()
	s := setEdit(env, "s")
	s.Add([]byte("x"))
	s.Add([]byte("2"))
	s.Commit()
	var z ZSetEdit
	e, found := lookup(env, "z")
	z.Begin(env, []byte("z"), &e, found)
	z.Add([]byte("m"), 1.5)
	z.Commit()
	var l ListEdit
	e, found = lookup(env, "l")
	l.Begin(env, []byte("l"), &e, found)
	l.Push(false, []byte("a"))
	l.Commit()
	e, _ = lookup(env, "x")
	st := CreateStream(env, &e, []byte("x"))
	st.Add(stream.ID{Ms: 1, Seq: 1}, [][]byte{[]byte("f"), []byte("v")}, env.Limits.StreamNodeMaxBytes(), env.Limits.StreamNodeMaxEntries())
	dst := newEnv()
	var enc persistence.Encoder
	for _, key := range []string{"h", "s", "z", "l", "x"} {
		e, _ := lookup(env, key)
		payload := persistence.AppendDumpFooter(AppendValue(&enc, nil, &e, nil, limits{}))
		v, err := persistence.DecodeDump(payload)
		if err != nil {
			t.Fatal(key, err)
		}
		vacancy, _ := lookup(dst, key)
		if err := Restore(dst, vacancy, []byte(key), &v, now+5000, AccessLFU, 42, -1); err != nil {
			t.Fatal(key, err)
		}
		got, found := lookup(dst, key)
		if !found || got.Type() != e.Type() || got.Encoding() != e.Encoding() || got.ExpireAt() != now+5000 {
			t.Fatalf("%s: restored %v %s expire %d", key, got.Type(), got.Encoding().Name(), got.ExpireAt())
		}
		if c := keyspace.LFUCounter(got.Access(), now, 1); c != 42 {
			t.Fatalf("%s: LFU counter %d, want 42", key, c)
		}
		again := AppendValue(&enc, nil, &got, nil, limits{})
		if key == "s" {
			// A hashtable set's order follows its table, which depends on
			// the process's hash seed and the insertion order, as a Redis
			// dict's does: compare members.
			w, err := persistence.DecodeDump(persistence.AppendDumpFooter(again))
			if err != nil || !sameMembers(w.Elems, v.Elems) {
				t.Fatalf("%s: restored members %q, want %q (%v)", key, w.Elems, v.Elems, err)
			}
			continue
		}
		if string(again) != string(payload[:len(again)]) {
			t.Fatalf("%s: restored value encodes differently", key)
		}
	}
	// A duplicate member is an error, as Redis reports corruption.
	v := persistence.Value{Type: persistence.TypeSet, Elems: [][]byte{[]byte("a"), []byte("a")}}
	vacancy, _ := lookup(dst, "dup")
	if err := Restore(dst, vacancy, []byte("dup"), &v, 0, AccessNone, -1, -1); err != ErrDuplicate {
		t.Fatalf("duplicate: %v", err)
	}
}

func sameMembers(a, b [][]byte) bool {
	seen := map[string]int{}
	for _, m := range a {
		seen[string(m)]++
	}
	for _, m := range b {
		seen[string(m)]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return len(a) == len(b)
}

// TestSmallEditsDoNotAllocate: once the scratch buffers have grown, a
// change of a compact collection allocates nothing.
func TestSmallEditsDoNotAllocate(t *testing.T) {
	env := newEnv()
	hkey, skey, lkey := []byte("h"), []byte("s"), []byte("l")
	field, value := []byte("f"), []byte("v")
	member := []byte("3")
	allocs := testing.AllocsPerRun(200, func() {
		var h HashEdit
		e, found := env.DB.Lookup(hkey, env.Now, false)
		h.Begin(env, hkey, &e, found)
		h.Set(field, value)
		h.Commit()
		var s SetEdit
		e, found = env.DB.Lookup(skey, env.Now, false)
		s.Begin(env, skey, &e, found)
		s.Remove(member)
		s.Add(member)
		s.Commit()
		var l ListEdit
		e, found = env.DB.Lookup(lkey, env.Now, false)
		l.Begin(env, lkey, &e, found)
		l.Push(true, value)
		l.Trim(0, 2)
		l.Commit()
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per run, want 0", allocs)
	}
}
