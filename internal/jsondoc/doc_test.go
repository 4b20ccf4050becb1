package jsondoc

import (
	"encoding/json"
	"strings"
	"testing"
)

func mustParse(t testing.TB, text string) []byte {
	t.Helper()
	doc, err := Parse(nil, []byte(text))
	if err != nil {
		t.Fatalf("Parse(%s): %v", text, err)
	}
	return doc
}

func TestRoundTrip(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{`null`, `null`},
		{` true `, `true`},
		{`false`, `false`},
		{`0`, `0`},
		{`-0`, `0`},
		{`-0.0`, `-0.0`},
		{`127`, `127`},
		{`-128`, `-128`},
		{`300`, `300`},
		{`70000`, `70000`},
		{`9223372036854775807`, `9223372036854775807`},
		{`-9223372036854775808`, `-9223372036854775808`},
		{`9223372036854775808`, `9.223372036854776e18`},
		{`1.5`, `1.5`},
		{`3.0`, `3.0`},
		{`1e2`, `100.0`},
		{`1E+2`, `100.0`},
		{`0.1`, `0.1`},
		{`0.0001`, `0.0001`},
		{`0.00001`, `0.00001`},
		{`0.000001`, `1e-6`},
		{`1e-7`, `1e-7`},
		{`1.5e300`, `1.5e300`},
		{`1e15`, `1000000000000000.0`},
		{`1e16`, `1e16`},
		{`12345678.9`, `12345678.9`},
		{`99.98`, `99.98`},
		{`""`, `""`},
		{`"a\"b\\c\/d"`, `"a\"b\\c/d"`},
		{`"\n\t\r\b\f\u0001"`, `"\n\t\r\b\f\u0001"`},
		{`"\u00e9\ud83d\ude00"`, `"é😀"`},
		{`"é"`, `"é"`},
		{`[]`, `[]`},
		{`{}`, `{}`},
		{`[1, [2, [3]], {"a": {}}]`, `[1,[2,[3]],{"a":{}}]`},
		{`{"b":1,"a":2}`, `{"b":1,"a":2}`},
		{`{"a":1,"b":2,"a":3}`, `{"a":3,"b":2}`},
		{`{"a":[1,2],"b":{"c":"d"},"a":{"x":null}}`, `{"a":{"x":null},"b":{"c":"d"}}`},
		{`"` + strings.Repeat("x", 200) + `"`, `"` + strings.Repeat("x", 200) + `"`},
	} {
		doc := mustParse(t, c.in)
		if got := string(AppendJSON(nil, doc, 0, nil)); got != c.out {
			t.Errorf("%s: got %s, want %s", c.in, got, c.out)
		}
		if Size(doc, 0) != len(doc) {
			t.Errorf("%s: size %d of %d bytes", c.in, Size(doc, 0), len(doc))
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ in, err string }{
		{``, "EOF while parsing a value at line 1 column 0"},
		{`x`, "expected value at line 1 column 1"},
		{`[1,]`, "trailing comma at line 1 column 4"},
		{`{"a":1,}`, "trailing comma at line 1 column 8"},
		{`{a:1}`, "key must be a string at line 1 column 2"},
		{`[1 2]`, "expected `,` or `]` at line 1 column 4"},
		{`{"a" 1}`, "expected `:` at line 1 column 6"},
		{`1 2`, "trailing characters at line 1 column 3"},
		{`01`, "invalid number at line 1 column 2"},
		{`1.`, "EOF while parsing a value at line 1 column 2"},
		{`"abc`, "EOF while parsing a string at line 1 column 4"},
		{`tru`, "EOF while parsing a value at line 1 column 3"},
		{`nul1`, "expected ident at line 1 column 4"},
		{"[\n1,\n", "EOF while parsing a value at line 3 column 0"},
		{`"\x"`, "invalid escape at line 1 column 3"},
		{`"\ud800"`, "lone leading surrogate in hex escape at line 1 column 7"},
		{`1e400`, "number out of range at line 1 column 5"},
		{"\"a\x01\"", "control character (\\u0000-\\u001F) found while parsing a string at line 1 column 3"},
		{strings.Repeat("[", 129) + strings.Repeat("]", 129), "recursion limit exceeded at line 1 column 129"},
	} {
		_, err := Parse(nil, []byte(c.in))
		if err == nil || err.Error() != c.err {
			t.Errorf("%q: got %v, want %s", c.in, err, c.err)
		}
	}
	if _, err := Parse(nil, []byte(strings.Repeat("[", 128)+strings.Repeat("]", 128))); err != nil {
		t.Errorf("128 levels: %v", err)
	}
}

func TestPretty(t *testing.T) {
	doc := mustParse(t, `{"a":[1,{}],"b":{"c":true},"d":[]}`)
	f := &Format{Indent: []byte("\t"), Newline: []byte("\n"), Space: []byte(" ")}
	want := "{\n\t\"a\": [\n\t\t1,\n\t\t{}\n\t],\n\t\"b\": {\n\t\t\"c\": true\n\t},\n\t\"d\": []\n}"
	if got := string(AppendJSON(nil, doc, 0, f)); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// Numbers print as encoding/json reads them back: the same double.
func TestNumberReadsBack(t *testing.T) {
	for _, f := range []float64{1.5, 0.1, 1e-7, 1e300, 123456789012345680, 5e-324, 1.7976931348623157e308, 2.5e-5, 1234.5678} {
		text := AppendNumber(nil, f)
		var back float64
		if err := json.Unmarshal(text, &back); err != nil || back != f {
			t.Errorf("%v printed %s read back %v %v", f, text, back, err)
		}
	}
}

func TestSplice(t *testing.T) {
	doc := mustParse(t, `{"a":{"b":[1,2]},"c":"x"}`)
	a, _, _ := Lookup(doc, 0, []byte("a"))
	b, _, _ := Lookup(doc, a, []byte("b"))
	// Append 3 to a.b, growing every enclosing container.
	three := AppendInt(nil, 3)
	got := Splice(nil, doc, b, End(doc, b), End(doc, b), three, 1)
	if s := string(AppendJSON(nil, got, 0, nil)); s != `{"a":{"b":[1,2,3]},"c":"x"}` {
		t.Fatalf("append: %s", s)
	}
	if Len(got, b) != 3 || Size(got, 0) != len(got) {
		t.Fatalf("append: len %d size %d of %d", Len(got, b), Size(got, 0), len(got))
	}
	// The same in place, in a buffer grown for it.
	buf := append(append([]byte(nil), doc...), make([]byte, len(three))...)
	SpliceInPlace(buf, len(doc), b, End(doc, b), End(doc, b), three, 1)
	if string(buf) != string(got) {
		t.Fatalf("in place: %x, want %x", buf, got)
	}
	// Delete member "a" of the root.
	_, m, _ := Lookup(doc, 0, []byte("a"))
	got = Splice(nil, doc, 0, m, End(doc, a), nil, -1)
	if s := string(AppendJSON(nil, got, 0, nil)); s != `{"c":"x"}` || Len(got, 0) != 1 {
		t.Fatalf("delete: %s", s)
	}
	// A number of the same width changes in place.
	one := Index(doc, b, 0)
	if !SetIntInPlace(doc, one, 100) || SetIntInPlace(doc, one, 1000) {
		t.Fatal("SetIntInPlace widths")
	}
	if s := string(AppendJSON(nil, doc, 0, nil)); s != `{"a":{"b":[100,2]},"c":"x"}` {
		t.Fatalf("in place: %s", s)
	}
}

func TestKinds(t *testing.T) {
	doc := mustParse(t, `[null,true,1,1.5,"s",[],{}]`)
	want := []Kind{Null, Bool, Integer, Number, String, Array, Object}
	for i, k := range want {
		if got := KindAt(doc, Index(doc, 0, i)); got != k {
			t.Errorf("element %d: %v, want %v", i, got.Name(), k.Name())
		}
	}
}
