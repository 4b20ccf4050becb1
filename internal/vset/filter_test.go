package vset

import (
	"strings"
	"testing"
	"time"
)

// The expressions of Redis's vector-set documentation (the FILTER
// section of the module's README and the redis.io VSIM page) and of
// go-redis's vector set specs, over their example attributes.
func TestFilterMatch(t *testing.T) {
	alice := `{"age": 25, "name": "Alice", "active": true, "scores": [85, 90, 95], "city": "New York"}`
	bob := `{"age": 30, "name": "Bob", "active": false, "scores": [70, 75, 80], "city": "Boston"}`
	charlie := `{"age": 35, "name": "Charlie", "scores": [60, 65, 70], "city": "Seattle"}`
	escapes := `{"dq": "a\"b", "sq": "O'Brien", "bs": "x\\y", "nl": "l1\nl2", "u": "\u00e9t\u00e9", "nested": {"x": [1, {"y": 2}]}, "n": null}`
	docs := map[string]string{"alice": alice, "bob": bob, "charlie": charlie, "none": "", "invalid": "invalid json"}
	cases := []struct {
		expr string
		want []string // the documents it matches, of docs
	}{
		{`.age == 25`, []string{"alice"}},
		{`.age > 25`, []string{"bob", "charlie"}},
		{`.age <= 30`, []string{"alice", "bob"}},
		{`.name == "Alice"`, []string{"alice"}},
		{`.name != "Alice"`, []string{"bob", "charlie"}},
		{`.active`, []string{"alice"}},
		{`.age > 20 and .age < 30`, []string{"alice"}},
		{`.age < 30 or .age > 35`, []string{"alice"}},
		{`.age > 20 && .age < 30 || .name == 'Charlie'`, []string{"alice", "charlie"}},
		{`!(.age == 25)`, []string{"bob", "charlie"}},
		{`not (.age == 25)`, []string{"bob", "charlie"}},
		{`!!.active`, []string{"alice"}},
		{`.age in [25, 35]`, []string{"alice", "charlie"}},
		{`.name in ["Alice", "David"]`, []string{"alice"}},
		{`"lic" in .name`, []string{"alice"}},
		{`"ork" in .city`, []string{"alice"}},
		{`"" in .name`, []string{"alice", "bob", "charlie"}},
		{`.name in ""`, nil},
		{`85 in .scores`, []string{"alice"}},
		{`.age + 10 > 40`, []string{"charlie"}},
		{`.age * 2 > 60`, []string{"charlie"}},
		{`.age / 5 == 5`, []string{"alice"}},
		{`.age % 2 == 0`, []string{"bob"}},
		{`.age ** 2 > 900`, []string{"charlie"}},
		{`(.age - 30) ** 2 < 30`, []string{"alice", "bob", "charlie"}},
		{`2 ** 3 ** 2 == 512`, []string{"alice", "bob", "charlie", "invalid"}}, // no field read, the text unparsed
		{`.age > -1`, []string{"alice", "bob", "charlie"}},
		{`.age - -5 == 30`, []string{"alice"}},
		{`.missing == "x"`, nil},
		{`.scores`, []string{"alice", "bob", "charlie"}},
		{`(.age > 20 and .age < 40) and (.city == "Boston" or .city == "New York")`, []string{"alice", "bob"}},
		{`.age > (20 + 10)`, []string{"charlie"}},
		{`.name == null`, nil},
		{`.age == "25"`, []string{"alice"}},
		{`1`, []string{"alice", "bob", "charlie", "invalid"}},
	}
	for _, c := range cases {
		f, err := CompileFilter(c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		var got []string
		for _, name := range []string{"alice", "bob", "charlie", "none", "invalid"} {
			if f.Match([]byte(docs[name])) {
				got = append(got, name)
			}
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s matches %v, want %v", c.expr, got, c.want)
		}
	}
	for _, expr := range []string{`.dq == "a\"b"`, `.sq == 'O\'Brien'`, `.bs == "x\\y"`, `.nl == "l1\nl2"`,
		`"\"b" in .dq`, `.dq in ["zzz", "a\"b"]`, `'a"b' == .dq`, `.sq == "O'Brien"`, `.u == "été"`,
		`.n == null`, `!.n`} {
		f, err := CompileFilter(expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if !f.Match([]byte(escapes)) {
			t.Errorf("%s does not match %s", expr, escapes)
		}
	}
	for _, expr := range []string{`.nested`, `.nested == 1`} {
		f, _ := CompileFilter(expr)
		if f.Match([]byte(escapes)) {
			t.Errorf("%s matches an object field", expr)
		}
	}
}

// Expressions that do not compile, and where the error says they went
// wrong: a bad token at its place, a malformed structure at the start.
func TestFilterSyntaxErrors(t *testing.T) {
	cases := map[string]string{
		``:                 ``,
		`.age >`:           `.age >`,
		`.age > 25 and`:    `.age > 25 and`,
		`(.age > 25`:       `(.age > 25`,
		`.age > 25)`:       `.age > 25)`,
		`.age 25`:          `.age 25`,
		`.age >> 25`:       `.age >> 25`,
		`.name == "Alice`:  `"Alice`,
		`.age > 25 AND .x`: `AND .x`,
		`.age in [1, x]`:   `[1, x]`,
		`.age in [1 2]`:    `[1 2]`,
		`true`:             `true`,
		`.a = 1`:           `= 1`,
		`.a == 1e`:         `1e`,
		`@`:                `@`,
		`.age > 25 andx 3`: `x 3`,
		`!`:                `!`,
		`.a == 1 .b == 2`:  `.a == 1 .b == 2`,
		`[1, 2] in [[1]]`:  `[[1]]`,
		`.x in ["a", "b"`:  `["a", "b"`,
		`- 5`:              `- 5`,
		`.name == 'O\'Bri`: `'O\'Bri`,
	}
	for expr, near := range cases {
		_, err := CompileFilter(expr)
		if err == nil {
			t.Errorf("%q compiled", expr)
			continue
		}
		if want := "syntax error in FILTER expression near: " + near; err.Error() != want {
			t.Errorf("%q: %q, want %q", expr, err, want)
		}
	}
}

// FuzzFilter: any expression compiles or fails without a panic, quickly,
// and a compiled one runs over any attributes without a panic.
func FuzzFilter(f *testing.F) {
	f.Add(`.age > 25 and .name == "Alice"`, `{"age": 30, "name": "Alice"}`)
	f.Add(`"x" in .tags or .n ** 2 % 3 != 1`, `{"tags": ["x", 1], "n": 4}`)
	f.Add(`!(.a in [1, "b"]) && .c`, `{"a": "b", "c": [[]]}`)
	f.Fuzz(func(t *testing.T, expr, attrs string) {
		start := time.Now()
		flt, err := CompileFilter(expr)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "syntax error in FILTER expression near: ") {
				t.Fatalf("%q: %v", expr, err)
			}
			return
		}
		flt.Match([]byte(attrs))
		flt.Match([]byte(attrs))
		if d := time.Since(start); d > time.Second {
			t.Fatalf("%q over %q took %v", expr, attrs, d)
		}
	})
}

// Nesting deeper than the parser takes is a syntax error, not a crash.
func TestFilterNesting(t *testing.T) {
	for _, expr := range []string{strings.Repeat("(", 1e6) + "1" + strings.Repeat(")", 1e6), strings.Repeat("!", 1e6) + "1"} {
		if _, err := CompileFilter(expr); err == nil {
			t.Errorf("%d bytes of nesting compiled", len(expr))
		}
	}
	if _, err := CompileFilter(strings.Repeat("(", 500) + "1" + strings.Repeat(")", 500)); err != nil {
		t.Error(err)
	}
}
