package jsonpath

import (
	"strings"
	"testing"

	"github.com/keyhive/keyhive/internal/jsondoc"
)

// The documents of the table: Goessner's bookstore (the JSONPath article's
// example, as redis.io's JSONPath page also uses), and small ones for the
// edge cases.
var docs = map[string]string{
	"store": `{"store":{"book":[
		{"category":"reference","author":"Nigel Rees","title":"Sayings of the Century","price":8.95},
		{"category":"fiction","author":"Evelyn Waugh","title":"Sword of Honour","price":12.99},
		{"category":"fiction","author":"Herman Melville","title":"Moby Dick","isbn":"0-553-21311-3","price":8.99},
		{"category":"fiction","author":"J. R. R. Tolkien","title":"The Lord of the Rings","isbn":"0-395-19395-8","price":22.99}],
		"bicycle":{"color":"red","price":19.95}}}`,
	"arr":    `[0,1,2,3,4,5,6,7,8,9]`,
	"nested": `{"a":"foo","nested":{"a":"hello"},"nested2":{"a":31}}`,
	"mixed":  `{"a":1,"b":[1,2,{"a":3}],"c":{"a":{"a":4}},"d":null,"e":true,"f":"s","g":1.5,"h":[],"i":{}}`,
	"keys":   `{"a b":1,"c.d":2,"e'f":3,"g\"h":4,"":5,"é":6,"x-y":7,"0":8,"_u":9}`,
	"items": `{"items":[
		{"name":"pen","price":5,"tags":["x","blue"],"stock":true},
		{"name":"book","price":15,"tags":["y"],"stock":false},
		{"name":"mug","price":9.5,"tags":["x"],"stock":true,"color":null},
		{"name":"lamp","price":10,"tags":[],"stock":true}]}`,
	"scalar": `42`,
	"deep":   `{"a":{"b":{"c":{"d":[{"e":1},{"e":[2,{"e":3}]}]}}}}`,
	"matrix": `[[1,2],[3,4],[5,[6,7]]]`,
}

type pathCase struct {
	doc, path, want string // want: the matches as a JSON array, or "ERR"
}

var pathCases = []pathCase{
	// Goessner's examples.
	{"store", `$.store.book[*].author`, `["Nigel Rees","Evelyn Waugh","Herman Melville","J. R. R. Tolkien"]`},
	{"store", `$..author`, `["Nigel Rees","Evelyn Waugh","Herman Melville","J. R. R. Tolkien"]`},
	{"store", `$.store.*`, `[[{"category":"reference","author":"Nigel Rees","title":"Sayings of the Century","price":8.95},{"category":"fiction","author":"Evelyn Waugh","title":"Sword of Honour","price":12.99},{"category":"fiction","author":"Herman Melville","title":"Moby Dick","isbn":"0-553-21311-3","price":8.99},{"category":"fiction","author":"J. R. R. Tolkien","title":"The Lord of the Rings","isbn":"0-395-19395-8","price":22.99}],{"color":"red","price":19.95}]`},
	{"store", `$.store..price`, `[8.95,12.99,8.99,22.99,19.95]`},
	{"store", `$..book[2].title`, `["Moby Dick"]`},
	{"store", `$..book[-1].title`, `["The Lord of the Rings"]`},
	{"store", `$..book[-1:].title`, `["The Lord of the Rings"]`},
	{"store", `$..book[0,1].title`, `["Sayings of the Century","Sword of Honour"]`},
	{"store", `$..book[:2].title`, `["Sayings of the Century","Sword of Honour"]`},
	{"store", `$..book[?(@.isbn)].title`, `["Moby Dick","The Lord of the Rings"]`},
	{"store", `$..book[?(@.price<10)].title`, `["Sayings of the Century","Moby Dick"]`},
	{"store", `$..book[?(@.price < 10 && @.category == "fiction")].title`, `["Moby Dick"]`},
	{"store", `$..book[?(@.price > 20 || @.author == 'Nigel Rees')].price`, `[8.95,22.99]`},
	{"store", `$..book[?(!@.isbn)].title`, "ERR"}, // no negation in RedisJSON's grammar
	{"store", `$..book[?(@.price <= 8.99)].price`, `[8.95,8.99]`},
	{"store", `$..book[?(@.price >= 12.99)].price`, `[12.99,22.99]`},
	{"store", `$..book[?(@.price != 8.95)].price`, `[12.99,8.99,22.99]`},
	{"store", `$..book[?(@.author =~ "^J")].author`, `["J. R. R. Tolkien"]`},
	{"store", `$..book[?(@.author =~ "(?i)melville")].title`, `["Moby Dick"]`},
	{"store", `$..book[?(@.price < $.store.bicycle.price)].price`, `[8.95,12.99,8.99]`},
	{"store", `$.store.bicycle.color`, `["red"]`},
	{"store", `$.store.bicycle['color']`, `["red"]`},
	{"store", `$.store.bicycle["color","price"]`, `["red",19.95]`},
	{"store", `$['store']['bicycle']['price']`, `[19.95]`},
	{"store", `$.store.book.length`, `[]`},
	{"store", `$.store.nothing`, `[]`},
	{"store", `$..book.*.category`, `["reference","fiction","fiction","fiction"]`},
	{"store", `$..book[?(@.category=="fiction")].author`, `["Evelyn Waugh","Herman Melville","J. R. R. Tolkien"]`},
	{"store", `$..book[?(@.category=="fiction" && @.price>10)].title`, `["Sword of Honour","The Lord of the Rings"]`},
	{"store", `$..book[?((@.price>10 || @.isbn) && @.category=='fiction')].title`, `["Sword of Honour","Moby Dick","The Lord of the Rings"]`},
	{"store", `$..[?(@.color)].price`, `[19.95]`},
	{"store", `$..book[1:3].author`, `["Evelyn Waugh","Herman Melville"]`},
	{"store", `$..book[::2].author`, `["Nigel Rees","Herman Melville"]`},
	{"store", `$..book[::-1].price`, "ERR"}, // steps are positive
	{"store", `$..book[5].title`, `[]`},
	{"store", `$..book[-5].title`, `["Sayings of the Century"]`},
	{"store", `$.store.book[0]`, `[{"category":"reference","author":"Nigel Rees","title":"Sayings of the Century","price":8.95}]`},
	{"store", `.store.bicycle.price`, `[19.95]`},
	{"store", `store.bicycle.price`, `[19.95]`},
	{"store", `.store.book[1].author`, `["Evelyn Waugh"]`},
	{"store", `store.book[-1].price`, `[22.99]`},
	{"store", `["store"]["bicycle"]["color"]`, `["red"]`},
	{"store", `.store["bicycle"].color`, `["red"]`},
	{"store", `..price`, `[8.95,12.99,8.99,22.99,19.95]`},

	// Slices and indexes on a plain array.
	{"arr", `$[0]`, `[0]`},
	{"arr", `$[9]`, `[9]`},
	{"arr", `$[10]`, `[]`},
	{"arr", `$[-1]`, `[9]`},
	{"arr", `$[-10]`, `[0]`},
	{"arr", `$[-11]`, `[0]`}, // a negative index stops at the first element
	{"arr", `$[2:5]`, `[2,3,4]`},
	{"arr", `$[:3]`, `[0,1,2]`},
	{"arr", `$[7:]`, `[7,8,9]`},
	{"arr", `$[-3:]`, `[7,8,9]`},
	{"arr", `$[:-7]`, `[0,1,2]`},
	{"arr", `$[-4:-2]`, `[6,7]`},
	{"arr", `$[1:8:3]`, `[1,4,7]`},
	{"arr", `$[::3]`, `[0,3,6,9]`},
	{"arr", `$[::-3]`, "ERR"},
	{"arr", `$[8:2:-2]`, "ERR"},
	{"arr", `$[5:2]`, `[]`},
	{"arr", `$[0:0]`, `[]`},
	{"arr", `$[::0]`, "ERR"},
	{"arr", `$[100:]`, `[]`},
	{"arr", `$[-100:2]`, `[0,1]`},
	{"arr", `$[:]`, `[0,1,2,3,4,5,6,7,8,9]`},
	{"arr", `$[*]`, `[0,1,2,3,4,5,6,7,8,9]`},
	{"arr", `$.*`, `[0,1,2,3,4,5,6,7,8,9]`},
	{"arr", `$[0,9,0]`, `[0,9,0]`},
	{"arr", `$[ 1 , 2 ]`, `[1,2]`},
	{"arr", `$[1:3,7]`, "ERR"}, // no slices in lists
	{"arr", `$[?(@ > 6)]`, `[7,8,9]`},
	{"arr", `$[?(@ == 3 || @ == 5)]`, `[3,5]`},
	{"arr", `$[?(@ >= 2 && @ < 4)]`, `[2,3]`},
	{"arr", `$[?(@ > 1.5 && @ < 3.5)]`, `[2,3]`},
	{"arr", `$[?(@ < 8 || @ == 9)]`, `[0,1,2,3,4,5,6,7,9]`},
	{"arr", `$[?(@ == "3")]`, `[]`},
	{"arr", `$[?(@ != "3")]`, `[0,1,2,3,4,5,6,7,8,9]`},
	{"arr", `$.a`, `[]`},
	{"arr", `$`, `[[0,1,2,3,4,5,6,7,8,9]]`},
	{"arr", `.`, `[[0,1,2,3,4,5,6,7,8,9]]`},
	{"arr", `[3]`, `[3]`},
	{"arr", `[-2]`, `[8]`},
	{"arr", `$..*`, `[0,1,2,3,4,5,6,7,8,9]`},

	// Recursive descent.
	{"nested", `$..a`, `["foo","hello",31]`},
	{"nested", `$.a`, `["foo"]`},
	{"nested", `$.nested.a`, `["hello"]`},
	{"nested", `$.*.a`, `["hello",31]`},
	{"nested", `$..*`, `["foo",{"a":"hello"},{"a":31},"hello",31]`},
	{"nested", `$..[?(@.a == 31)]`, `[{"a":31}]`},
	{"nested", `$..[?(@.a)]`, `[{"a":"hello"},{"a":31}]`},
	{"nested", `$[?(@.a)].a`, `["hello",31]`},
	{"nested", `$..a..a`, `[]`},
	{"nested", `..a`, `["foo","hello",31]`},
	{"mixed", `$..a`, `[1,3,{"a":4},4]`},
	{"mixed", `$..a.a`, `[4]`},
	{"mixed", `$.b..a`, `[3]`},
	{"mixed", `$..[0]`, `[1]`},
	{"mixed", `$..b[*]`, `[1,2,{"a":3}]`},
	{"mixed", `$.c..a`, `[{"a":4},4]`},
	{"mixed", `$..["a"]`, `[1,3,{"a":4},4]`},
	{"deep", `$..e`, `[1,[2,{"e":3}],3]`},
	{"deep", `$.a.b.c.d[1].e[1].e`, `[3]`},
	{"deep", `$..d[*].e`, `[1,[2,{"e":3}]]`},
	{"deep", `$..d[?(@.e > 0)]`, `[{"e":1}]`},
	{"deep", `$.a..c.d[0]`, `[{"e":1}]`},
	{"deep", `a.b.c.d[0].e`, `[1]`},
	{"matrix", `$[*][0]`, `[1,3,5]`},
	{"matrix", `$[*][-1]`, `[2,4,[6,7]]`},
	{"matrix", `$..[1]`, `[[3,4],2,4,[6,7],7]`},
	{"matrix", `$[2][1][0]`, `[6]`},
	{"matrix", `$[?(@[0] > 2)]`, `[[3,4],[5,[6,7]]]`},
	{"matrix", `$[0:2][1]`, `[2,4]`},

	// Types in filters.
	{"mixed", `$[?(@ == null)]`, `[null]`},
	{"mixed", `$[?(@ == true)]`, `[true]`},
	{"mixed", `$[?(@ == false)]`, `[]`},
	{"mixed", `$[?(@ == "s")]`, `["s"]`},
	{"mixed", `$[?(@ == 1.5)]`, `[1.5]`},
	{"mixed", `$[?(@ == 1)]`, `[1]`},
	{"mixed", `$[?(@ == 1.0)]`, `[1]`},
	{"mixed", `$[?(@ > 1)]`, `[1.5]`},
	{"mixed", `$[?(@ < "t")]`, `["s"]`},
	{"mixed", `$[?(@ =~ "^s$")]`, `["s"]`},
	{"mixed", `$.b[?(@.a)]`, `[{"a":3}]`},
	{"mixed", `$.b[?(@ > 1)]`, `[2]`},
	{"mixed", `$.h[*]`, `[]`},
	{"mixed", `$.i.*`, `[]`},
	{"mixed", `$.d`, `[null]`},
	{"mixed", `$.d.x`, `[]`},
	{"mixed", `$.f[0]`, `[]`},
	{"mixed", `$.a[0]`, `[]`},
	{"mixed", `$.e`, `[true]`},
	// A path term stands for a value only when it names exactly one: the
	// pen's two tags compare equal to nothing.
	{"items", `$.items[?(@.price < 10 && @.tags[*] == "x")].name`, `["mug"]`},
	{"items", `$.items[?(@.tags[*] == "x")].name`, `["mug"]`},
	{"items", `$.items[?(@.tags[0] == "y")].name`, `["book"]`},
	{"items", `$.items[?(@.stock == true)].name`, `["pen","mug","lamp"]`},
	{"items", `$.items[?(@.stock != true)].name`, `["book"]`},
	{"items", `$.items[?(@.color == null)].name`, `["mug"]`},
	{"items", `$.items[?(@.color)].name`, `["mug"]`},
	{"items", `$.items[?(@.price == 10)].name`, `["lamp"]`},
	{"items", `$.items[?(@.price == 9.5)].name`, `["mug"]`},
	{"items", `$.items[?(@.name > "m")].name`, `["pen","mug"]`},
	{"items", `$.items[?(@.name =~ "o")].name`, `["book"]`},
	{"items", `$.items[?(@.tags == [])].name`, "ERR"}, // no array literals
	{"items", `$.items[?(@.price>=10)].price`, `[15,10]`},
	{"items", `$.items[?(@.price<=9.5)].price`, `[5,9.5]`},
	{"items", `$.items[?(@.nothing == 1)].name`, `[]`},
	{"items", `$.items[?(@.nothing != 1)].name`, `["pen","book","mug","lamp"]`},
	{"items", `$.items[?(@.price > -1000)].price`, `[5,15,9.5,10]`},
	{"items", `$.items[?(@.price > -1e3)].price`, "ERR"}, // no exponents
	{"items", `$.items[?(@.price < 12.0)].price`, `[5,9.5,10]`},
	{"items", `$.items[?(@.tags[1] =~ "lu")].name`, `["pen"]`},
	{"items", `$.items[?(@.tags[*] =~ "lu")].name`, `[]`},
	{"items", `$.items[*].tags[*]`, `["x","blue","y","x"]`},
	{"items", `$.items[-1:].name`, `["lamp"]`},
	{"items", `$.items[?((@.price < 6))].name`, `["pen"]`},
	{"items", `$.items[?(@.price >= 6 && @.stock == true || @.name == "pen")].name`, `["pen","mug","lamp"]`},
	{"items", `$.items[?@.price == 5]`, `[{"name":"pen","price":5,"tags":["x","blue"],"stock":true}]`}, // parentheses are optional

	// Member names.
	{"keys", `$["a b"]`, `[1]`},
	{"keys", `$['c.d']`, `[2]`},
	{"keys", `$["e'f"]`, `[3]`},
	{"keys", `$['g"h']`, `[4]`},
	{"keys", `$['e\'f']`, `[3]`},
	{"keys", `$[""]`, `[5]`},
	{"keys", `$.é`, "ERR"}, // dotted names are ASCII
	{"keys", `$["é"]`, `[6]`},
	{"keys", `$.x-y`, `[7]`},
	{"keys", `$.0`, `[8]`},
	{"keys", `$._u`, `[9]`},
	{"keys", `$["0"]`, `[8]`},
	{"keys", `$[0]`, `[]`},
	{"keys", `$.c.d`, `[]`},
	{"keys", `$["a b","x-y"]`, `[1,7]`},
	{"keys", `["a b"]`, `[1]`},
	{"keys", `x-y`, `[7]`},
	{"keys", `._u`, `[9]`},

	// A scalar document.
	{"scalar", `$`, `[42]`},
	{"scalar", `.`, `[42]`},
	{"scalar", `$.a`, `[]`},
	{"scalar", `$[0]`, `[]`},
	{"scalar", `$..*`, `[]`},
	{"scalar", `$.*`, `[]`},

	// A filter on a scalar tests the scalar; under `..` a scalar is tested
	// both as its container's element and as itself.
	{"mixed", `$.a[?(@ == 1)]`, `[1]`},
	{"matrix", `$..[?(@ == 7)]`, `[7,7]`},
	{"store", `$.store.book[0].price[?(@ > 5)]`, `[8.95]`},
	// Terms: the root in a filter, booleans ordered false before true.
	{"mixed", `$.b[?($.a == 1)]`, `[1,2,{"a":3}]`},
	{"items", `$.items[?(@.stock > false)].name`, `["pen","mug","lamp"]`},
	{"items", `$.items[?(@.tags == @.tags)].name`, `["pen","book","mug","lamp"]`},
	{"arr", `$[ 0 ]`, `[0]`},
	{"arr", `$[0:10:4]`, `[0,4,8]`},
	{"arr", `$[:-8:]`, `[0,1]`},

	// Syntax errors.
	{"arr", `$.`, "ERR"},
	{"arr", `$[`, "ERR"},
	{"arr", `$[0`, "ERR"},
	{"arr", `$]`, "ERR"},
	{"arr", `$a`, `[]`}, // not `$.` or `$[`: a legacy path naming the member "$a"
	{"arr", `$..`, "ERR"},
	{"arr", `$[?(@ > 1]`, "ERR"},
	{"arr", `$[?(@ >)]`, "ERR"},
	{"arr", `$[?(1)]`, `[0,1,2,3,4,5,6,7,8,9]`}, // a literal term always stands
	{"arr", `$[?(@ =~ 1)]`, `[]`},
	{"arr", `$[?(@ =~ "(")]`, `[]`}, // a regular expression that does not compile matches nothing
	{"arr", `$['a]`, "ERR"},
	{"arr", `$[a]`, "ERR"},
	{"arr", `$.a b`, "ERR"},
	{"arr", `$[1:2:3:4]`, "ERR"},
	{"arr", `$[?@ > 7]`, `[8,9]`},
	{"arr", `$[01]`, "ERR"},            // no leading zeros
	{"arr", `$["a",1]`, "ERR"},         // no mixed lists
	{"arr", `$[?(@ == "x\n")]`, "ERR"}, // only quotes and backslashes are escaped
	{"arr", `.a.`, "ERR"},
	{"arr", `a..`, "ERR"},
	{"arr", `$[99999999999999999999]`, "ERR"},
	{"arr", `$[?(@ > 1 &&)]`, "ERR"},
	{"arr", `$[?(` + strings.Repeat("(", 100) + `@` + strings.Repeat(")", 100) + `)]`, "ERR"},
}

func TestPathTable(t *testing.T) {
	if len(pathCases) < 150 {
		t.Fatalf("%d cases, the table should have at least 150", len(pathCases))
	}
	parsed := map[string][]byte{}
	for name, text := range docs {
		d, err := jsondoc.Parse(nil, []byte(text))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		parsed[name] = d
	}
	for _, c := range pathCases {
		p, err := Parse([]byte(c.path))
		if c.want == "ERR" {
			if err == nil {
				t.Errorf("%s: parsed, want a syntax error", c.path)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		doc := parsed[c.doc]
		got := []byte{'['}
		ms, err := p.Eval(nil, doc)
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
		}
		for i, m := range ms {
			if i > 0 {
				got = append(got, ',')
			}
			got = jsondoc.AppendJSON(got, doc, m.Off, nil)
		}
		got = append(got, ']')
		if string(got) != c.want {
			t.Errorf("%s on %s: got %s, want %s", c.path, c.doc, got, c.want)
		}
	}
}

func TestPathKinds(t *testing.T) {
	for _, c := range []struct {
		path             string
		legacy, definite bool
	}{
		{"$", false, true}, {".", true, true}, {"$.a[0]", false, true}, {"a.b", true, true},
		{"$.a[*]", false, false}, {"$..a", false, false}, {"$[0,1]", false, false},
		{"$[1:2]", false, false}, {"$[?(@.a)]", false, false}, {".a.*", true, false},
	} {
		p, err := Parse([]byte(c.path))
		if err != nil || p.IsLegacy() != c.legacy || p.Definite() != c.definite {
			t.Errorf("%s: legacy %v definite %v %v", c.path, p.IsLegacy(), p.Definite(), err)
		}
	}
	p, _ := Parse([]byte("$.a.b"))
	name, parent, ok := p.LastName()
	if !ok || string(name) != "b" || len(parent.steps) != 1 {
		t.Errorf("LastName: %s %v", name, ok)
	}
	if _, _, ok := (&Path{}).LastName(); ok {
		t.Error("the root has a last name")
	}
}
