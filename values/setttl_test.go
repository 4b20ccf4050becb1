package values

import (
	"testing"

	"github.com/keyhive/keyhive/persistence"
)

// TestSetTTLFileLayout: the KH-SETTTL layout round-trips members and
// times, and any truncation or trailing byte is bad data, not a panic.
func TestSetTTLFileLayout(t *testing.T) {
	o := &SetObject{}
	for _, m := range []string{"a", "bb", ""} {
		o.Set([]byte(m), nil)
	}
	o.ttl = o.ttl.with([]byte("bb"), 1<<47)
	b := SetView{Obj: o}.appendFile(nil)
	v, err := readSetTTLFile(b)
	if err != nil || len(v.Elems) != 3 || v.Type != persistence.TypeSet {
		t.Fatalf("read back: %v %+v", err, v)
	}
	for i, m := range v.Elems {
		want := int64(0)
		if string(m) == "bb" {
			want = 1 << 47
		}
		if v.FieldTTLs[i] != want {
			t.Errorf("%q: time %d, want %d", m, v.FieldTTLs[i], want)
		}
	}
	for n := range len(b) {
		if _, err := readSetTTLFile(b[:n]); err == nil {
			t.Errorf("%d of %d bytes read without error", n, len(b))
		}
	}
	if _, err := readSetTTLFile(append(b, 0)); err == nil {
		t.Error("a trailing byte read without error")
	}
}
