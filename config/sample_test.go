package config

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestSampleConfig checks packaging/keyhive.conf, the sample configuration
// that documents every directive: each directive of the registry (and each
// alias) is in it, the file loads to exactly the defaults, and a paragraph
// is marked [startup] exactly when its directives are immutable.
func TestSampleConfig(t *testing.T) {
	data, err := os.ReadFile("../packaging/keyhive.conf")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for i := range specs {
		for _, name := range []string{specs[i].name, specs[i].alias} {
			if name != "" && !regexp.MustCompile(`(^|[\s(])`+regexp.QuoteMeta(name)+`([\s)]|$)`).MatchString(text) {
				t.Errorf("keyhive.conf does not document %s", name)
			}
		}
	}

	loaded, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := loaded.Get("*"), Default().Get("*"); !slices.Equal(got, want) {
		for i := 0; i+1 < len(got) && i+1 < len(want); i += 2 {
			if got[i] != want[i] || got[i+1] != want[i+1] {
				t.Errorf("keyhive.conf sets %s %q, the default is %s %q", got[i], got[i+1], want[i], want[i+1])
			}
		}
	}

	// A directive line, commented out or not: "# name value" or "name value".
	line := regexp.MustCompile(`^(?:# )?([a-z][a-z0-9_-]*)(?: |$)`)
	for _, para := range strings.Split(text, "\n\n") {
		startup := strings.Contains(para, "[startup]")
		for _, l := range strings.Split(para, "\n") {
			m := line.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			s := lookup(m[1])
			if s == nil {
				continue // a comment's first word
			}
			if immutable := s.flags&fImmutable != 0; immutable != startup {
				t.Errorf("%s: immutable %v, but its paragraph's [startup] mark says %v", m[1], immutable, startup)
			}
		}
	}
}
