package jsondoc

import (
	"bytes"
	"testing"
)

// FuzzParse: any text either fails to parse or parses to a document whose
// text parses back to the same bytes, pretty or compact.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5,"x",null,true,{"b":{}}]}`, `"\u00e9\ud83d\ude00"`, `-0.0`, `1e300`,
		`[[[[]]]]`, `{"a":1,"a":2}`, `9223372036854775808`, `"\"\\\/\b\f\n\r\t"`} {
		f.Add(s)
	}
	pretty := &Format{Indent: []byte("  "), Newline: []byte("\n"), Space: []byte(" ")}
	f.Fuzz(func(t *testing.T, text string) {
		doc, err := Parse(nil, []byte(text))
		if err != nil {
			return
		}
		if Size(doc, 0) != len(doc) {
			t.Fatalf("%q: size %d of %d bytes", text, Size(doc, 0), len(doc))
		}
		for _, fm := range []*Format{nil, pretty} {
			out := AppendJSON(nil, doc, 0, fm)
			again, err := Parse(nil, out)
			if err != nil || !bytes.Equal(again, doc) {
				t.Fatalf("%q printed %q, read back %x (%v), want %x", text, out, again, err, doc)
			}
		}
	})
}
