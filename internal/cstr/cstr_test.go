package cstr

import "testing"

// TestArgIs: options compare as Redis's strcasecmp sees C strings, so a
// NUL byte ends the argument.
func TestArgIs(t *testing.T) {
	for _, c := range []struct {
		arg  string
		want bool
	}{
		{"count", true}, {"COUNT", true}, {"CoUnT", true}, {"count\x00junk", true},
		{"coun", false}, {"counts", false}, {"", false}, {"\x00count", false},
	} {
		if got := ArgIs([]byte(c.arg), "count"); got != c.want {
			t.Errorf("ArgIs(%q, count) = %v, want %v", c.arg, got, c.want)
		}
	}
	if got := string(Truncate([]byte("abc\x00def"), 2)); got != "ab" {
		t.Errorf("Truncate = %q, want ab", got)
	}
}
