package values

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/keyspace"
)

// fieldOrder lists a hash's fields with their times, in Each's order.
func fieldOrder(env *Env, key string) string {
	e, _ := lookup(env, key)
	var b strings.Builder
	ViewHash(&e).EachTTL(func(f, _ []byte, at int64) {
		b.WriteString(string(f))
		if at != 0 {
			b.WriteString("@" + string(rune('0'+(at-now)/1000)))
		}
		b.WriteByte(' ')
	})
	return b.String()
}

// TestFieldTTLOrder: the compact form keeps Redis's listpackex order
// (soonest first, a field set to a time before those with the same time,
// fields without a TTL last), converts past the limits keeping the TTLs,
// and HSET drops a TTL while SetKeepTTL keeps it.
func TestFieldTTLOrder(t *testing.T) {
	env := newEnv()
	h := hashEdit(t, env, "h")
	for _, f := range []string{"a", "b", "c"} {
		h.Set([]byte(f), []byte("v"))
	}
	h.SetExpire([]byte("c"), now+2000)
	h.SetExpire([]byte("a"), now+2000)
	h.SetExpire([]byte("b"), now+1000)
	h.Commit()
	wantEncoding(t, env, "h", keyspace.EncListpackEx, 3)
	if got := fieldOrder(env, "h"); got != "b@1 a@2 c@2 " {
		t.Fatalf("order %q", got)
	}
	h = hashEdit(t, env, "h")
	h.SetKeepTTL([]byte("a"), []byte("w"))
	h.Set([]byte("b"), []byte("w"))
	h.Commit()
	if got := fieldOrder(env, "h"); got != "a@2 c@2 b " {
		t.Fatalf("order after HSET %q", got)
	}
	h = hashEdit(t, env, "h")
	h.Set([]byte("d"), []byte("v"))
	h.Set([]byte("e"), []byte("v"))
	h.Commit()
	wantEncoding(t, env, "h", keyspace.EncHashtable, 5)
	e, _ := lookup(env, "h")
	v := ViewHash(&e)
	if _, at, _ := v.Lookup([]byte("c")); at != now+2000 {
		t.Fatalf("c's time after conversion: %d", at)
	}
	if v.MinExpire() != now+2000 {
		t.Fatalf("min %d", v.MinExpire())
	}
}

// TestExpireFields removes the fields due, in either form, and the key with
// its last field; a view skips expired fields without removing them.
func TestExpireFields(t *testing.T) {
	for _, n := range []int{3, 6} { // compact, large
		env := newEnv()
		h := hashEdit(t, env, "h")
		for i := range n {
			h.Set([]byte{byte('a' + i)}, []byte("v"))
		}
		h.SetExpire([]byte("a"), now-1)
		h.SetExpire([]byte("b"), now+10)
		h.Commit()
		e, _ := lookup(env, "h")
		v := ViewHash(&e)
		v.Now = now
		if _, ok := v.Get([]byte("a")); ok || v.LiveLen() != n-1 || v.Len() != n {
			t.Fatalf("n=%d: expired field seen, or lengths %d %d", n, v.LiveLen(), v.Len())
		}
		h = hashEdit(t, env, "h")
		var gone []string
		if h.ExpireFields(now+10, func(f []byte) { gone = append(gone, string(f)) }) != 2 || strings.Join(gone, "") != "ab" && strings.Join(gone, "") != "ba" {
			t.Fatalf("n=%d: expired %q", n, gone)
		}
		if h.Commit().Outcome != Stored || h.HasTTLs() && h.MinExpire() != 0 {
			t.Fatalf("n=%d: TTLs left after expiry", n)
		}
		h = hashEdit(t, env, "only")
		h.Set([]byte("x"), []byte("v"))
		h.SetExpire([]byte("x"), now)
		h.Commit()
		h = hashEdit(t, env, "only")
		h.ExpireFields(now, func([]byte) {})
		if h.Commit().Outcome != Deleted {
			t.Fatalf("n=%d: emptied hash not deleted", n)
		}
	}
}

// TestFieldTTLModel runs random edits on hashes with field TTLs, in both
// forms, against a map model: values, TTLs, lengths, and that the compact
// form keeps its triplets in TTL order.
func TestFieldTTLModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	type field struct {
		v  string
		at int64
	}
	for round := range 200 {
		env := newEnv()
		model := map[string]field{}
		key := "h"
		for range 40 {
			h := hashEdit(t, env, key)
			f := string(rune('a' + rng.IntN(8)))
			switch op := rng.IntN(6); op {
			case 0, 1:
				v := strings.Repeat("v", rng.IntN(10)) // past the value limit now and then
				old, existed := model[f]
				if added := h.Set([]byte(f), []byte(v)); added == existed {
					t.Fatalf("round %d: Set(%s) added=%v, existed %v", round, f, added, existed)
				}
				old.v, old.at = v, 0
				model[f] = old
			case 2:
				if old, ok := model[f]; ok {
					h.SetKeepTTL([]byte(f), []byte("k"))
					old.v = "k"
					model[f] = old
				}
			case 3:
				if old, ok := model[f]; ok {
					at := now + int64(rng.IntN(3)+1)*1000
					h.SetExpire([]byte(f), at)
					old.at = at
					model[f] = old
				}
			case 4:
				if old, ok := model[f]; ok {
					h.SetExpire([]byte(f), 0)
					old.at = 0
					model[f] = old
				}
			case 5:
				deleted := h.Delete([][]byte{[]byte(f)})
				if _, ok := model[f]; ok != (deleted == 1) {
					t.Fatalf("round %d: Delete(%s) = %d", round, f, deleted)
				}
				delete(model, f)
			}
			h.Commit()
			e, found := lookup(env, key)
			if found != (len(model) > 0) {
				t.Fatalf("round %d: found %v with %d fields", round, found, len(model))
			}
			if !found {
				continue
			}
			v := ViewHash(&e)
			if v.Len() != len(model) {
				t.Fatalf("round %d: Len %d, model %d", round, v.Len(), len(model))
			}
			prev, sawNoTTL := int64(0), false
			v.EachTTL(func(f, val []byte, at int64) {
				m := model[string(f)]
				if string(val) != m.v || at != m.at {
					t.Fatalf("round %d: %s = %q@%d, model %q@%d", round, f, val, at, m.v, m.at)
				}
				if v.Ex {
					if at == 0 {
						sawNoTTL = true
					} else if sawNoTTL || at < prev {
						t.Fatalf("round %d: listpackex out of order at %s", round, f)
					} else {
						prev = at
					}
				}
			})
		}
	}
}
