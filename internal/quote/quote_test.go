package quote

import "testing"

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		"":             `""`,
		"plain":        `"plain"`,
		"a b\"c\\":     `"a b\"c\\"`,
		"\n\r\t\a\b":   `"\n\r\t\a\b"`,
		"\x00\x01\xff": `"\x00\x01\xff"`,
		"~\x7f":        `"~\x7f"`,
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %s, want %s", in, got, want)
		}
	}
}
