package jsonpath

import (
	"testing"

	"github.com/keyhive/keyhive/internal/jsondoc"
)

// FuzzPath parses a document and a path and evaluates one on the other:
// no input may panic or run past the evaluation budget, and every match
// must be a whole value inside the document.
func FuzzPath(f *testing.F) {
	for _, c := range pathCases {
		f.Add(docs[c.doc], c.path)
	}
	f.Add(`[[[[[[[[1]]]]]]]]`, `$..*..*..*..*..*..*`)
	f.Add(`{"a":[{"a":[{"a":1}]}]}`, `$..a[?(@..a[?(@..a)])]`)
	f.Add(`{"a":1}`, `$[?(@.a == $..a && !(@.b != 'x' || @.c =~ "a*"))]`)
	f.Fuzz(func(t *testing.T, text, path string) {
		doc, err := jsondoc.Parse(nil, []byte(text))
		if err != nil {
			doc = jsondoc.EmptyObject
		}
		if len(doc) > 0 && jsondoc.Size(doc, 0) != len(doc) {
			t.Fatalf("%q parsed to %d bytes sized %d", text, len(doc), jsondoc.Size(doc, 0))
		}
		p, err := Parse([]byte(path))
		if err != nil {
			return
		}
		ms, err := p.Eval(nil, doc)
		if err != nil {
			return
		}
		for _, m := range ms {
			if m.Off < 0 || jsondoc.End(doc, m.Off) > len(doc) {
				t.Fatalf("%s on %s: match at %d outside %d bytes", path, text, m.Off, len(doc))
			}
			jsondoc.AppendJSON(nil, doc, m.Off, nil)
		}
	})
}
