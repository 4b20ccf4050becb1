package glob

import (
	"strings"
	"testing"
	"time"
)

func TestMatch(t *testing.T) {
	cases := []struct {
		pattern, s string
		nocase     bool
		want       bool
	}{
		{"*", "abc", false, true},
		{"*", "", false, false}, // Redis: the empty string matches only the empty pattern
		{"", "", false, true},
		{"a*", "a", false, true},
		{"a**", "a", false, true},
		{"h?llo", "hello", false, true},
		{"h?llo", "hllo", false, false},
		{"h*llo", "heeeello", false, true},
		{"h[ae]llo", "hallo", false, true},
		{"h[ae]llo", "hillo", false, false},
		{"h[^e]llo", "hallo", false, true},
		{"h[^e]llo", "hello", false, false},
		{"h[a-b]llo", "hbllo", false, true},
		{"h[b-a]llo", "hallo", false, true},
		{"h[a-]", "h]", false, true}, // "a-]" is a range up to ']'
		{"h\\*llo", "h*llo", false, true},
		{"h\\*llo", "hello", false, false},
		{"[abc", "b", false, true},
		{"[\\]]", "]", false, true},
		{"HELLO", "hello", true, true},
		{"H[A-Z]LLO", "hello", true, true},
		{"dns:*", "dns:example.com", false, true},
		{"ql:v1:link:*", "ql:v1:404:x", false, false},
		{"*a*b", "xaxxb", false, true},
		{"\\", "\\", false, true},
	}
	for _, c := range cases {
		if got := MatchString(c.pattern, c.s, c.nocase); got != c.want {
			t.Errorf("Match(%q, %q, %v) = %v, want %v", c.pattern, c.s, c.nocase, got, c.want)
		}
	}
}

func TestHostilePatternIsBounded(t *testing.T) {
	pattern := []byte(strings.Repeat("*a", 64) + "b")
	s := []byte(strings.Repeat("a", 64*1024))
	start := time.Now()
	if Match(pattern, s, false) {
		t.Fatal("unexpected match")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("hostile pattern took %v", d)
	}
}

// recursive is a direct model of the documented semantics, used as the oracle.
func recursive(p, s []byte, nocase bool) bool {
	if len(s) == 0 {
		return len(p) == 0
	}
	for len(p) > 0 && len(s) > 0 {
		if p[0] == '*' {
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for len(s) > 0 {
				if recursive(p[1:], s, nocase) {
					return true
				}
				s = s[1:]
			}
			return false
		}
		ok, next := matchOne(p, 0, s[0], nocase)
		if !ok {
			return false
		}
		p, s = p[next:], s[1:]
		if len(s) == 0 {
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
		}
	}
	return len(p) == 0 && len(s) == 0
}

func FuzzMatch(f *testing.F) {
	for _, seed := range [][2]string{{"*", "x"}, {"h[a-z]*o", "hello"}, {"[^", "a"}, {"a\\", "a\\"}, {"*?*", "ab"}, {"[a-]", "]"}} {
		f.Add(seed[0], seed[1], false)
	}
	f.Fuzz(func(t *testing.T, pattern, s string, nocase bool) {
		if len(pattern) > 24 || len(s) > 24 {
			return // keep the exponential oracle cheap
		}
		got := Match([]byte(pattern), []byte(s), nocase)
		if want := recursive([]byte(pattern), []byte(s), nocase); got != want {
			t.Fatalf("Match(%q, %q, %v) = %v, oracle %v", pattern, s, nocase, got, want)
		}
	})
}
