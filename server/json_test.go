package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/redis/go-redis/v9"
)

// The JSON commands (Redis 8.0), as their redis.io pages document them:
// https://redis.io/docs/latest/commands/json.<name>/ for each command, and
// https://redis.io/docs/latest/develop/data-types/json/resp3/ for what
// RESP3 changes (the default path `$` instead of `.`, numbers instead of
// JSON text from NUMINCRBY/NUMMULTBY, JSON.TYPE's list wrapped in an
// array). No Redis 8 server runs here: every expected reply is the page's
// example or follows from what the page states; where a page is silent the
// case says what Keyhive chose. A few cases come from go-redis v9.22.0's
// json_test.go, whose specs run against Redis 8 (named where used).

func jb(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }
func ji(n int) string    { return ":" + strconv.Itoa(n) + "\r\n" }
func ja(items ...string) string {
	return "*" + strconv.Itoa(len(items)) + "\r\n" + strings.Join(items, "")
}

func jnull(proto int) string {
	if proto == 3 {
		return "_\r\n"
	}
	return "$-1\r\n"
}

func TestJSONCommands(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.Start(t)
	k := p.Keyhive()
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		null := jnull(proto)
		k.Do("FLUSHALL")

		// json.set: replace a value, add a member, NX/XX, new keys at the root.
		docCase(t, p, "+OK\r\n", "JSON.SET", "doc", "$", `{"a":2}`)
		docCase(t, p, "+OK\r\n", "JSON.SET", "doc", "$.a", "3")
		docCase(t, p, jb(`[{"a":3}]`), "JSON.GET", "doc", "$")
		docCase(t, p, "+OK\r\n", "JSON.SET", "doc", "$.b", "8")
		docCase(t, p, jb(`[{"a":3,"b":8}]`), "JSON.GET", "doc", "$")
		docCase(t, p, null, "JSON.SET", "doc", "$.a", "4", "NX")
		docCase(t, p, null, "JSON.SET", "doc", "$.c", "4", "XX")
		docCase(t, p, "+OK\r\n", "JSON.SET", "doc", "$.a", "5", "XX")
		docCase(t, p, "+OK\r\n", "JSON.SET", "doc", "$.c", "6", "NX")
		docCase(t, p, jb(`{"a":5,"b":8,"c":6}`), "JSON.GET", "doc", ".")
		docCase(t, p, null, "JSON.SET", "doc", "$", "1", "NX")
		docCase(t, p, null, "JSON.SET", "doc", "$.x.y", "1")
		docCase(t, p, "-ERR new objects must be created at the root\r\n", "JSON.SET", "nodoc", "$.a", "1")
		docCase(t, p, null, "JSON.SET", "nodoc", "$", "1", "XX")
		docCase(t, p, "-ERR syntax error\r\n", "JSON.SET", "doc", "$", "1", "NX", "XX")
		docCase(t, p, "-expected value at line 1 column 1\r\n", "JSON.SET", "doc", "$", "x")
		docCase(t, p, "-trailing comma at line 1 column 4\r\n", "JSON.SET", "doc", "$", "[1,]")
		docCase(t, p, "+OK\r\n", "JSON.SET", "k1", ".", `{"a":{"a":1, "b":2, "c":3}}`)
		docCase(t, p, "+OK\r\n", "JSON.SET", "k1", "$.a.*", "0")
		docCase(t, p, jb(`{"a":{"a":0,"b":0,"c":0}}`), "JSON.GET", "k1", ".")
		docCase(t, p, "+ReJSON-RL\r\n", "TYPE", "doc")
		docCase(t, p, ja(jb("0"), ja(jb("doc"))), "SCAN", "0", "MATCH", "doc", "TYPE", "rejson-rl")
		docCase(t, p, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "GET", "doc")
		docCase(t, p, "+OK\r\n", "SET", "str", "x")
		// RedisJSON's line for a key of another type has no error code.
		docCase(t, p, "-Existing key has wrong Redis type\r\n", "JSON.GET", "str")
		docCase(t, p, "-Existing key has wrong Redis type\r\n", "JSON.SET", "str", "$", "1")
		docCase(t, p, "-Existing key has wrong Redis type\r\n", "JSON.ARRAPPEND", "str", "$", "1")

		// json.get: one JSONPath gives an array, a legacy path the value,
		// several paths an object; INDENT/NEWLINE/SPACE format the text.
		docCase(t, p, "+OK\r\n", "JSON.SET", "k1", ".", `{"firstName":"John","lastName":"Smith","age":27,"weight":135.25,"isAlive":true,"address":{"street":"21 2nd Street","city":"New York","state":"NY","zipcode":"10021-3100"},"phoneNumbers":[{"type":"home","number":"212 555-1234"},{"type":"office","number":"646 555-4567"}],"children":[],"spouse":null}`)
		docCase(t, p, jb(`["21 2nd Street","New York","NY","10021-3100"]`), "JSON.GET", "k1", "$.address.*")
		docCase(t, p, jb("[\n\t\"21 2nd Street\",\n\t\"New York\",\n\t\"NY\",\n\t\"10021-3100\"\n]"), "JSON.GET", "k1", "indent", "\t", "space", " ", "NEWLINE", "\n", "$.address.*")
		docCase(t, p, jb(`{"$.firstName":["John"],"$.lastName":["Smith"],"$.age":[27]}`), "JSON.GET", "k1", "$.firstName", "$.lastName", "$.age")
		docCase(t, p, jb(`{".firstName":"John",".age":27}`), "JSON.GET", "k1", ".firstName", ".age")
		docCase(t, p, jb(`{".firstName":["John"],"$.age":[27]}`), "JSON.GET", "k1", ".firstName", "$.age")
		docCase(t, p, jb(`"New York"`), "JSON.GET", "k1", ".address.city")
		docCase(t, p, jb(`135.25`), "JSON.GET", "k1", "weight")
		docCase(t, p, jb(`[]`), "JSON.GET", "k1", "$.nothing")
		docCase(t, p, "-ERR Path does not exist\r\n", "JSON.GET", "k1", ".nothing")
		docCase(t, p, "-ERR Path does not exist\r\n", "JSON.GET", "k1", ".firstName", ".nothing")
		docCase(t, p, "-ERR Invalid JSONPath\r\n", "JSON.GET", "k1", "$[")
		docCase(t, p, null, "JSON.GET", "nokey", "$")
		docCase(t, p, "+OK\r\n", "JSON.SET", "k2", ".", `{"a":{}, "b":{"a":1}, "c":{"a":1, "b":2}}`)
		docCase(t, p, jb(`[{},{"a":1},{"a":1,"b":2},1,1,2]`), "JSON.GET", "k2", "$..*")
		docCase(t, p, "+OK\r\n", "JSON.SET", "p", "$", `{"a":[1,{}],"b":{"c":true},"d":[]}`)
		docCase(t, p, jb("{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": {\n    \"c\": true\n  },\n  \"d\": []\n}"), "JSON.GET", "p", "INDENT", "  ", "NEWLINE", "\n", "SPACE", " ", ".")
		// Without a path: the legacy root `.`, in RESP3 too (go-redis
		// json_test.go "should JSONGet" runs against Redis 8 in RESP3; the
		// RESP3 migration page's `$` is not what Redis 8 does).
		docCase(t, p, "+OK\r\n", "JSON.SET", "k", "$", "[1,2,3]")
		docCase(t, p, jb(`[1,2,3]`), "JSON.GET", "k")
		docCase(t, p, "+OK\r\n", "JSON.SET", "get3", "$", `{"a": 1, "b": 2}`)
		docCase(t, p, jb(`{-"a":1,-"b":2}`), "JSON.GET", "get3", "INDENT", "-")
		docCase(t, p, jb(`{~-"a":!1,~-"b":!2~}`), "JSON.GET", "get3", "INDENT", "-", "NEWLINE", "~", "SPACE", "!")

		// json.mget
		docCase(t, p, "+OK\r\n", "JSON.SET", "doc1", "$", `{"a":1, "b": 2, "nested": {"a": 3}, "c": null}`)
		docCase(t, p, "+OK\r\n", "JSON.SET", "doc2", "$", `{"a":4, "b": 5, "nested": {"a": 6}, "c": null}`)
		docCase(t, p, ja(jb(`[1,3]`), jb(`[4,6]`)), "JSON.MGET", "doc1", "doc2", "$..a")
		docCase(t, p, ja(jb(`1`), null, null), "JSON.MGET", "doc1", "nokey", "str", ".a")
		docCase(t, p, ja(jb(`[]`), null), "JSON.MGET", "doc1", "doc3", "$.nothing")
		docCase(t, p, ja(null, null), "JSON.MGET", "doc1", "doc2", "$[") // a path that does not parse

		// json.mset (go-redis json_test.go "should JSONMSet").
		docCase(t, p, "+OK\r\n", "JSON.MSET", "a1", "$", `{"a":1}`, "a2", "$", "2")
		docCase(t, p, ja(jb(`[{"a":1}]`), jb(`[2]`)), "JSON.MGET", "a1", "a2", "$")
		docCase(t, p, "-ERR wrong number of arguments for 'json.mset' command\r\n", "JSON.MSET", "a1", "$", "1", "a2")
		docCase(t, p, "-ERR new objects must be created at the root\r\n", "JSON.MSET", "a1", "$.b", "2", "a3", "$.c", "3")
		docCase(t, p, "-ERR new objects must be created at the root\r\n", "JSON.MSET", "a3", "$", "{}", "a3", "$.c", "3")
		docCase(t, p, "-Err wrong static path\r\n", "JSON.MSET", "a1", "$", "{}", "a1", "$..x", "3")
		docCase(t, p, jb(`[{"a":1}]`), "JSON.GET", "a1", "$")

		// json.del / json.forget: the root deletes the key; an object's last
		// member takes a deleted member's place (go-redis json_test.go
		// "should JSONDel with $", replies of Redis 8).
		docCase(t, p, "+OK\r\n", "JSON.SET", "doc", "$", `{"a": 1, "nested": {"a": 2, "b": 3}}`)
		docCase(t, p, ji(2), "JSON.DEL", "doc", "$..a")
		docCase(t, p, jb(`[{"nested":{"b":3}}]`), "JSON.GET", "doc", "$")
		docCase(t, p, "+OK\r\n", "JSON.SET", "del2", "$", `{"a": {"a": 2, "b": 3}, "b": ["a", "b"], "nested": {"b": [true, "a", "b"]}}`)
		docCase(t, p, ji(1), "JSON.FORGET", "del2", "$..a")
		docCase(t, p, jb(`[{"nested":{"b":[true,"a","b"]},"b":["a","b"]}]`), "JSON.GET", "del2", "$")
		docCase(t, p, ji(1), "JSON.DEL", "del2", "$.b[0]")
		docCase(t, p, jb(`[["b"]]`), "JSON.GET", "del2", "$.b")
		docCase(t, p, ji(0), "JSON.DEL", "del2", "$.nothing")
		docCase(t, p, ji(1), "JSON.DEL", "del2")
		docCase(t, p, ":0\r\n", "EXISTS", "del2")
		docCase(t, p, ji(0), "JSON.DEL", "del2")

		// json.clear: containers emptied, numbers zeroed, the rest counted out
		// (go-redis json_test.go "should JSONClear with $").
		docCase(t, p, "+OK\r\n", "JSON.SET", "doc", "$", `{"obj":{"a":1, "b":2}, "arr":[1,2,3], "str": "foo", "bool": true, "int": 42, "float": 3.14}`)
		docCase(t, p, ji(4), "JSON.CLEAR", "doc", "$.*")
		docCase(t, p, jb(`[{"obj":{},"arr":[],"str":"foo","bool":true,"int":0,"float":0}]`), "JSON.GET", "doc", "$")
		docCase(t, p, ji(1), "JSON.CLEAR", "doc")
		docCase(t, p, jb(`[{}]`), "JSON.GET", "doc", "$")
		docCase(t, p, "-ERR could not perform this operation on a key that doesn't exist\r\n", "JSON.CLEAR", "nokey")

		// json.toggle
		docCase(t, p, "+OK\r\n", "JSON.SET", "doc", "$", `{"bool": true}`)
		docCase(t, p, ja(ji(0)), "JSON.TOGGLE", "doc", "$.bool")
		docCase(t, p, jb(`[{"bool":false}]`), "JSON.GET", "doc", "$")
		docCase(t, p, ja(ji(1)), "JSON.TOGGLE", "doc", "$.bool")
		docCase(t, p, jb(`false`), "JSON.TOGGLE", "doc", ".bool")
		docCase(t, p, "+OK\r\n", "JSON.SET", "doc", "$", `{"a":true,"b":1,"c":{"a":false}}`)
		docCase(t, p, ja(ji(0), ji(1)), "JSON.TOGGLE", "doc", "$..a")
		docCase(t, p, ja(null), "JSON.TOGGLE", "doc", "$.b")
		docCase(t, p, "-ERR Path does not exist or not a bool\r\n", "JSON.TOGGLE", "doc", ".b")
		docCase(t, p, jb("false"), "JSON.TOGGLE", "doc", "..a") // a legacy path toggles its booleans, replies the last

		// json.type
		docCase(t, p, "+OK\r\n", "JSON.SET", "doc", "$", `{"a":2, "nested": {"a": true}, "foo": "bar"}`)
		if proto == 2 {
			docCase(t, p, ja(jb("integer"), jb("boolean")), "JSON.TYPE", "doc", "$..a")
			docCase(t, p, ja(jb("integer"), jb("object"), jb("string"), jb("boolean")), "JSON.TYPE", "doc", "$..*")
		} else {
			docCase(t, p, ja(ja(jb("integer"), jb("boolean"))), "JSON.TYPE", "doc", "$..a")
		}
		if proto == 2 {
			docCase(t, p, jb("object"), "JSON.TYPE", "doc", ".")
			docCase(t, p, null, "JSON.TYPE", "nokey")
		} else { // RESP3 wraps every reply in an array
			docCase(t, p, ja(jb("object")), "JSON.TYPE", "doc", ".")
			docCase(t, p, ja(null), "JSON.TYPE", "nokey")
		}

		// json.numincrby / json.nummultby: a JSON array of the new values in
		// RESP2, numbers in RESP3; null for a match that is not a number.
		docCase(t, p, "+OK\r\n", "JSON.SET", "doc", ".", `{"a":"b","b":[{"a":2}, {"a":5}, {"a":"c"}]}`)
		if proto == 2 {
			docCase(t, p, jb(`[null]`), "JSON.NUMINCRBY", "doc", "$.a", "2")
			docCase(t, p, jb(`[null,4,7,null]`), "JSON.NUMINCRBY", "doc", "$..a", "2")
			docCase(t, p, jb(`[null,8,14,null]`), "JSON.NUMMULTBY", "doc", "$..a", "2")
			docCase(t, p, jb(`9.5`), "JSON.NUMINCRBY", "doc", ".b[0].a", "1.5")
		} else {
			docCase(t, p, ja(null), "JSON.NUMINCRBY", "doc", "$.a", "2")
			docCase(t, p, ja(null, ji(4), ji(7), null), "JSON.NUMINCRBY", "doc", "$..a", "2")
			docCase(t, p, ja(null, ji(8), ji(14), null), "JSON.NUMMULTBY", "doc", "$..a", "2")
			docCase(t, p, ja(",9.5\r\n"), "JSON.NUMINCRBY", "doc", ".b[0].a", "1.5")
		}
		// go-redis json_test.go "should JSONNumIncrBy with $" (RESP3): 5.0 + 2
		// is the double 7; a double stays a double.
		docCase(t, p, "+OK\r\n", "JSON.SET", "doc1", "$", `{"a": "b", "b": [{"a": 2}, {"a": 5.0}, {"a": "c"}]}`)
		docCase(t, p, jb(`[5.0]`), "JSON.GET", "doc1", "$.b[1].a")
		if proto == 2 {
			docCase(t, p, jb(`[7.0]`), "JSON.NUMINCRBY", "doc1", "$.b[1].a", "2")
			docCase(t, p, jb(`[10.5]`), "JSON.NUMINCRBY", "doc1", "$.b[1].a", "3.5")
		} else {
			docCase(t, p, ja(",7\r\n"), "JSON.NUMINCRBY", "doc1", "$.b[1].a", "2")
			docCase(t, p, ja(",10.5\r\n"), "JSON.NUMINCRBY", "doc1", "$.b[1].a", "3.5")
		}
		// A double replied as Redis 7.2 and later write one (64.99, where
		// 7.0's %.17g gave 64.989999999999995).
		docCase(t, p, "+OK\r\n", "JSON.SET", "dbl", "$", "[64.99]")
		if proto == 2 {
			docCase(t, p, jb(`[64.99]`), "JSON.NUMMULTBY", "dbl", "$[0]", "1")
		} else {
			docCase(t, p, ja(",64.99\r\n"), "JSON.NUMMULTBY", "dbl", "$[0]", "1")
		}
		docCase(t, p, "-ERR Path does not exist or does not contains a number\r\n", "JSON.NUMINCRBY", "doc1", ".a", "1")
		docCase(t, p, "-ERR Path does not exist or does not contains a number\r\n", "JSON.NUMINCRBY", "doc1", ".x", "1")
		docCase(t, p, "-bad input number\r\n", "JSON.NUMINCRBY", "doc1", "$.a", `"x"`)
		docCase(t, p, "-result is not a number\r\n", "JSON.NUMMULTBY", "doc1", "$.b[1].a", "1e308")
		docCase(t, p, "-ERR could not perform this operation on a key that doesn't exist\r\n", "JSON.NUMINCRBY", "nokey", "$", "1")
		docCase(t, p, "+OK\r\n", "JSON.SET", "n", "$", "9223372036854775807")
		docCase(t, p, jb(`9223372036854775807`), "JSON.GET", "n", ".")
		docCase(t, p, "+OK\r\n", "JSON.SET", "n", "$", "[1]")
		if proto == 2 {
			docCase(t, p, jb(`[9223372036854775807]`), "JSON.NUMINCRBY", "n", "$[0]", "9223372036854775806")
			// Integers wrap, as RedisJSON's do.
			docCase(t, p, jb(`[-9223372036854775808]`), "JSON.NUMINCRBY", "n", "$[0]", "1")
		}

		// json.strappend / json.strlen
		docCase(t, p, "+OK\r\n", "JSON.SET", "doc", "$", `{"a":"foo", "nested": {"a": "hello"}, "nested2": {"a": 31}}`)
		docCase(t, p, ja(ji(6), ji(8), null), "JSON.STRAPPEND", "doc", "$..a", `"baz"`)
		docCase(t, p, jb(`[{"a":"foobaz","nested":{"a":"hellobaz"},"nested2":{"a":31}}]`), "JSON.GET", "doc", "$")
		docCase(t, p, ja(ji(6), ji(8), null), "JSON.STRLEN", "doc", "$..a")
		docCase(t, p, ji(9), "JSON.STRAPPEND", "doc", ".a", `"!!!"`)
		docCase(t, p, ji(9), "JSON.STRLEN", "doc", ".a")
		docCase(t, p, "-WRONGTYPE wrong type of path value - expected string\r\n", "JSON.STRLEN", "doc", ".nested2.a")
		docCase(t, p, "-ERR Path does not exist or not a string\r\n", "JSON.STRAPPEND", "doc", ".nested2.a", `"x"`)

		// json.arrappend / json.arrinsert / json.arrlen / json.arrindex
		docCase(t, p, "+OK\r\n", "JSON.SET", "item:1", "$", `{"name":"Noise-cancelling Bluetooth headphones","description":"Wireless Bluetooth headphones with noise-cancelling technology","connection":{"wireless":true,"type":"Bluetooth"},"price":99.98,"stock":25,"colors":["black","silver"]}`)
		docCase(t, p, ja(ji(3)), "JSON.ARRAPPEND", "item:1", "$.colors", `"blue"`)
		docCase(t, p, jb(`[["black","silver","blue"]]`), "JSON.GET", "item:1", "$.colors")
		docCase(t, p, ja(ji(5)), "JSON.ARRINSERT", "item:1", "$.colors", "2", `"yellow"`, `"gold"`)
		docCase(t, p, jb(`[["black","silver","yellow","gold","blue"]]`), "JSON.GET", "item:1", "$.colors")
		docCase(t, p, ja(ji(2)), "JSON.ARRINDEX", "item:1", "$..colors", `"yellow"`)
		docCase(t, p, ja(ji(-1)), "JSON.ARRINDEX", "item:1", "$..colors", `"silver"`, "2")
		docCase(t, p, ja(ji(5)), "JSON.ARRLEN", "item:1", "$.colors")
		docCase(t, p, ja(null), "JSON.ARRLEN", "item:1", "$.price")
		docCase(t, p, ji(5), "JSON.ARRLEN", "item:1", ".colors")
		docCase(t, p, "-ERR index out of bounds\r\n", "JSON.ARRINSERT", "item:1", "$.colors", "6", `"x"`)
		docCase(t, p, "+OK\r\n", "JSON.SET", "k1", ".", `[[], ["a"], ["a", "b"]]`)
		docCase(t, p, ja(ji(1), ji(2), ji(3)), "JSON.ARRAPPEND", "k1", "$[*]", `"c"`)
		docCase(t, p, jb(`[["c"],["a","c"],["a","b","c"]]`), "JSON.GET", "k1", ".")
		docCase(t, p, ji(4), "JSON.ARRAPPEND", "k1", "[-1]", `"d"`)
		docCase(t, p, "-ERR Path does not exist or not an array\r\n", "JSON.ARRAPPEND", "k1", "[0][0]", `"d"`)
		// ARRINDEX compares types too: 1 is not 1.0.
		docCase(t, p, "+OK\r\n", "JSON.SET", "ix", "$", `[1, 1.0, "1", [1], {"a":1}]`)
		docCase(t, p, ja(ji(1)), "JSON.ARRINDEX", "ix", "$", "1.0")
		docCase(t, p, ja(ji(3)), "JSON.ARRINDEX", "ix", "$", "[1]")
		docCase(t, p, ja(ji(4)), "JSON.ARRINDEX", "ix", "$", `{"a":1}`)
		docCase(t, p, ji(-1), "JSON.ARRINDEX", "ix", ".", "1", "1")
		docCase(t, p, "-ERR Path does not exist\r\n", "JSON.ARRINDEX", "nokey", "$", "1")

		// json.arrpop / json.arrtrim (go-redis json_test.go's cases).
		docCase(t, p, "+OK\r\n", "JSON.SET", "pop4", "$", "[100, 200, 300, 200]")
		docCase(t, p, ja(jb("300")), "JSON.ARRPOP", "pop4", "$", "2")
		docCase(t, p, jb(`[[100,200,200]]`), "JSON.GET", "pop4", "$")
		docCase(t, p, jb("200"), "JSON.ARRPOP", "pop4", ".")
		docCase(t, p, jb("100"), "JSON.ARRPOP", "pop4", ".", "0")
		docCase(t, p, jb("200"), "JSON.ARRPOP", "pop4", ".", "99")
		docCase(t, p, null, "JSON.ARRPOP", "pop4", ".")
		docCase(t, p, ja(null), "JSON.ARRPOP", "pop4", "$")
		docCase(t, p, "+OK\r\n", "JSON.SET", "trim", "$", "[0,1,2,3,4]")
		docCase(t, p, ja(ji(3)), "JSON.ARRTRIM", "trim", "$", "1", "3")
		docCase(t, p, jb(`[[1,2,3]]`), "JSON.GET", "trim", "$")
		docCase(t, p, ja(ji(0)), "JSON.ARRTRIM", "trim", "$", "-1", "0")
		docCase(t, p, "+OK\r\n", "JSON.SET", "trim", "$", "[0,1,2,3,4]")
		docCase(t, p, ja(ji(2)), "JSON.ARRTRIM", "trim", "$", "-2", "99")
		docCase(t, p, jb(`[[3,4]]`), "JSON.GET", "trim", "$")
		docCase(t, p, ja(ji(0)), "JSON.ARRTRIM", "trim", "$", "9", "11")

		// json.objkeys / json.objlen (go-redis json_test.go's cases).
		docCase(t, p, "+OK\r\n", "JSON.SET", "objkeys1", "$", `{"nested1": {"a": {"foo": 10, "bar": 20}}, "a": ["foo"], "nested2": {"a": {"baz": 50}}}`)
		docCase(t, p, ja(ja(jb("foo"), jb("bar"))), "JSON.OBJKEYS", "objkeys1", "$.nested1.a")
		docCase(t, p, ja(jb("foo"), jb("bar")), "JSON.OBJKEYS", "objkeys1", ".*.a")
		docCase(t, p, ja(jb("baz")), "JSON.OBJKEYS", "objkeys1", ".nested2.a")
		docCase(t, p, "+OK\r\n", "JSON.SET", "objlen2", "$", `{"a": [1, 2], "b": {"a": [0, -1]}}`)
		docCase(t, p, ja(null, ji(1), null, null, null, null, null), "JSON.OBJLEN", "objlen2", "$..*")
		docCase(t, p, ji(2), "JSON.OBJLEN", "objlen2", ".")

		// json.merge (RFC 7396): null deletes, objects merge, the rest
		// replaces; go-redis json_test.go "should JSONMerge".
		docCase(t, p, "+OK\r\n", "JSON.SET", "merge1", "$", `{"a": 1, "b": 2}`)
		docCase(t, p, "+OK\r\n", "JSON.MERGE", "merge1", "$", `{"b": 3, "c": 4}`)
		docCase(t, p, jb(`[{"a":1,"b":3,"c":4}]`), "JSON.GET", "merge1", "$")
		docCase(t, p, "+OK\r\n", "JSON.SET", "doc", "$", `{"a":2}`)
		docCase(t, p, "+OK\r\n", "JSON.MERGE", "doc", "$.a", "3")
		docCase(t, p, jb(`[{"a":3}]`), "JSON.GET", "doc", "$")
		docCase(t, p, "+OK\r\n", "JSON.MERGE", "doc", "$.b", "8")
		docCase(t, p, jb(`[{"a":3,"b":8}]`), "JSON.GET", "doc", "$")
		docCase(t, p, "+OK\r\n", "JSON.MERGE", "doc", "$", `{"a":null}`)
		docCase(t, p, jb(`[{"b":8}]`), "JSON.GET", "doc", "$")
		docCase(t, p, "+OK\r\n", "JSON.SET", "doc", "$", `{"a":[2,4,6,8]}`)
		docCase(t, p, "+OK\r\n", "JSON.MERGE", "doc", "$.a", "[10,12]")
		docCase(t, p, jb(`[{"a":[10,12]}]`), "JSON.GET", "doc", "$")
		docCase(t, p, "+OK\r\n", "JSON.SET", "doc", "$", `{"f1": {"a":1}, "f2":{"a":2}}`)
		docCase(t, p, "+OK\r\n", "JSON.MERGE", "doc", "$", `{"f1": null, "f2":{"a":3, "b":4}, "f3":[2,4,6]}`)
		docCase(t, p, jb(`[{"f2":{"a":3,"b":4},"f3":[2,4,6]}]`), "JSON.GET", "doc", "$")
		// The patch's members apply in their order: f4 comes last, then the
		// removal of f2 moves it into f2's place. A null at a path sets null.
		docCase(t, p, "+OK\r\n", "JSON.MERGE", "doc", "$", `{"f4":{"x":null,"y":1},"f2":null}`)
		docCase(t, p, jb(`[{"f4":{"y":1},"f3":[2,4,6]}]`), "JSON.GET", "doc", "$")
		docCase(t, p, "+OK\r\n", "JSON.MERGE", "doc", "$.f4", "null")
		docCase(t, p, jb(`[{"f4":null,"f3":[2,4,6]}]`), "JSON.GET", "doc", "$")
		docCase(t, p, "+OK\r\n", "JSON.MERGE", "new", "$", `{"a":null}`)
		docCase(t, p, jb(`{"a":null}`), "JSON.GET", "new", ".")

		// json.resp
		docCase(t, p, "+OK\r\n", "JSON.SET", "r", "$", `{"a":[1,2.5,"x",null,true],"b":{"c":false}}`)
		dbl := jb("2.5")
		if proto == 3 {
			dbl = ",2.5\r\n"
		}
		docCase(t, p, ja("+{\r\n", jb("a"), ja("+[\r\n", ji(1), dbl, jb("x"), null, "+true\r\n"), jb("b"), ja("+{\r\n", jb("c"), "+false\r\n")), "JSON.RESP", "r", ".")
		docCase(t, p, ja(ja("+{\r\n", jb("c"), "+false\r\n")), "JSON.RESP", "r", "$.b")

		// json.debug
		// The stored sizes: {"c":false} is a 9-byte header, the key's length
		// and byte, and the one byte of false. Keyhive's own figures: the
		// page gives none.
		docCase(t, p, ji(12), "JSON.DEBUG", "MEMORY", "r", ".b")
		docCase(t, p, ja(ji(12)), "JSON.DEBUG", "MEMORY", "r", "$.b")
		docCase(t, p, ja(), "JSON.DEBUG", "MEMORY", "nokey", "$")
		docCase(t, p, ji(0), "JSON.DEBUG", "MEMORY", "nokey", ".")

		// Scripts call the commands as clients do.
		docCase(t, p, jb(`[{"c":false}]`), "EVAL", "return redis.call('JSON.GET', KEYS[1], '$.b')", "1", "r")
	}
}

// TestJSONEventsAndWatch: keyspace events of class d (module) named after
// the command, json.set creating a key also raising "new"; WATCH sees a
// change made in place.
func TestJSONEventsAndWatch(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.StartIsolated(t) // it changes notify-keyspace-events
	k := p.Keyhive()
	docCase(t, p, "+OK\r\n", "CONFIG", "SET", "notify-keyspace-events", "KEA")
	expect := expectEvents(t, p, k)
	expect([]string{"__keyevent@0__:json.set e"}, "JSON.SET", "e", "$", `{"n":1,"b":true,"a":[]}`)
	expect([]string{"__keyevent@0__:json.numincrby e"}, "JSON.NUMINCRBY", "e", "$.n", "1")
	expect([]string{"__keyevent@0__:json.toggle e"}, "JSON.TOGGLE", "e", "$.b")
	expect([]string{"__keyevent@0__:json.arrappend e"}, "JSON.ARRAPPEND", "e", "$.a", "1")
	expect(nil, "JSON.SET", "e", "$.n", "5", "NX")
	expect([]string{"__keyevent@0__:json.del e"}, "JSON.DEL", "e", "$")

	// WATCH: a NUMINCRBY written into the entry in place still aborts EXEC.
	k.Do("JSON.SET", "w", "$", `{"n":1}`)
	w := p.NewConn().Keyhive()
	w.Do("WATCH", "w")
	k.Do("JSON.NUMINCRBY", "w", "$.n", "1")
	w.Do("MULTI")
	w.Do("JSON.GET", "w")
	if got := w.Do("EXEC").Raw; string(got) != "*-1\r\n" {
		t.Errorf("EXEC after a watched JSON key changed: %q", got)
	}
	// Expiry comes from the key: JSON.SET of the root keeps a TTL.
	k.Do("EXPIRE", "w", "100")
	k.Do("JSON.SET", "w", "$", "2")
	if got := k.Do("TTL", "w").Raw; string(got) != ":100\r\n" {
		t.Errorf("TTL after JSON.SET of the root: %q", got)
	}
}

// TestJSONPersistence: a document survives DUMP/RESTORE, DEBUG RELOAD (an
// RDB written and loaded) and an AOF rewrite and restart, with its TTL, and
// DEBUG DIGEST reads the same data set back. The RDB and DUMP form is
// Redis 8's module value (type ReJSON-RL, version 3, the compact text); an
// AOF without the RDB preamble holds JSON.SET of the document.
func TestJSONPersistence(t *testing.T) {
	for _, preamble := range []string{"yes", "no"} {
		t.Run("aof-use-rdb-preamble "+preamble, func(t *testing.T) { testJSONPersistence(t, preamble) })
	}
}

func testJSONPersistence(t *testing.T, preamble string) {
	ctx := context.Background()
	dir := t.TempDir()
	args := []string{"--dir", dir, "--appendonly", "yes", "--enable-debug-command", "yes", "--aof-use-rdb-preamble", preamble}
	srv := startKeyhive(t, args...)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: 2})
	defer rdb.Close()
	do := func(want any, args ...any) {
		t.Helper()
		got, err := rdb.Do(ctx, args...).Result()
		if err != nil || got != want {
			t.Errorf("%v: got %v %v, want %v", args, got, err, want)
		}
	}
	text := `{"a":[1,2.5,"x",null,true,{"b":{}}],"n":-9223372036854775808,"s":"é\n"}`
	do("OK", "JSON.SET", "doc", "$", text)
	do(int64(1), "EXPIRE", "doc", "1000")
	do("OK", "JSON.SET", "small", "$", "1")
	digest := rdb.Do(ctx, "DEBUG", "DIGEST").Val()

	dump := rdb.Dump(ctx, "doc").Val()
	if dump == "" || dump[0] != 7 { // RDB_TYPE_MODULE_2
		t.Fatalf("DUMP: %q", dump)
	}
	do("OK", "RESTORE", "copy", "0", dump)
	do(text, "JSON.GET", "copy", ".")
	do("ReJSON-RL", "TYPE", "copy")
	do(int64(1), "DEL", "copy")

	do("OK", "DEBUG", "RELOAD")
	do(text, "JSON.GET", "doc", ".")
	if got := rdb.Do(ctx, "DEBUG", "DIGEST").Val(); got != digest {
		t.Errorf("DEBUG DIGEST after DEBUG RELOAD: %s, was %s", got, digest)
	}
	if ttl := rdb.TTL(ctx, "doc").Val(); ttl < 990*time.Second {
		t.Errorf("TTL after DEBUG RELOAD: %v", ttl)
	}

	do("Background append only file rewriting started", "BGREWRITEAOF")
	waitAOFRewrite(t, rdb)
	do("OK", "JSON.SET", "doc", "$.a[0]", "7")
	srv.Close()
	if preamble == "no" {
		base, _ := filepath.Glob(filepath.Join(dir, "appendonlydir", "*.base.aof"))
		if b, err := os.ReadFile(base[0]); err != nil || !strings.Contains(string(b), "JSON.SET\r\n$3\r\ndoc\r\n$1\r\n$\r\n") {
			t.Errorf("the rewritten AOF %s lacks JSON.SET doc $: %q %v", base, b, err)
		}
	}
	srv = startKeyhive(t, args...)
	rdb = redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: 2})
	defer rdb.Close()
	do(strings.Replace(text, "[1,", "[7,", 1), "JSON.GET", "doc", ".")
	do("1", "JSON.GET", "small", ".")
	if ttl := rdb.TTL(ctx, "doc").Val(); ttl < 990*time.Second {
		t.Errorf("TTL after the AOF's load: %v", ttl)
	}
	if n := rdb.MemoryUsage(ctx, "doc").Val(); n <= 0 {
		t.Errorf("MEMORY USAGE: %d", n)
	}
}

// TestJSONReplica: a Keyhive replica of a Keyhive master holds equal JSON
// documents (DEBUG DIGEST), through the full sync (an RDB with module
// values) and the command stream (each JSON write as its command).
func TestJSONReplica(t *testing.T) {
	master := startReplNode(t, false, "--repl-diskless-sync-delay", "0")
	replica := startReplNode(t, false)
	master.name, replica.name = "master", "replica"
	for i := range 200 {
		master.ok(t, "JSON.SET", fmt.Sprintf("doc:%d", i), "$", fmt.Sprintf(`{"n":%d,"a":[1,"x",{"b":null}],"s":"%s","f":1.5}`, i, strings.Repeat("y", i)))
	}
	master.ok(t, "EXPIRE", "doc:1", 10000)
	replicate(t, master, replica)
	sameAs(t, master, replica)
	for i := range 200 {
		k := fmt.Sprintf("doc:%d", i)
		master.ok(t, "JSON.NUMINCRBY", k, "$.n", 1000)
		master.ok(t, "JSON.ARRAPPEND", k, "$.a", `{"c":[true]}`)
		master.ok(t, "JSON.STRAPPEND", k, "$.s", `"z"`)
		master.ok(t, "JSON.NUMMULTBY", k, "$.f", 3)
		master.ok(t, "JSON.DEL", k, "$.a[0]")
		master.ok(t, "JSON.MERGE", k, "$", `{"m":{"x":1},"s":null}`)
	}
	sameAs(t, master, replica)
	if got := replica.ok(t, "JSON.GET", "doc:7").Str; got != `{"n":1007,"a":["x",{"b":null},{"c":[true]}],"m":{"x":1},"f":4.5}` {
		t.Fatalf("replica's doc:7: %s", got)
	}
}

// TestJSONNamespaceTypes: a namespace's TYPES names JSON documents as json
// (Keyhive's key schema), refusing JSON writes elsewhere and other types'
// writes there.
func TestJSONNamespaceTypes(t *testing.T) {
	ctx := context.Background()
	rdb := nsClient(t)
	nsDo(t, rdb, "NAMESPACE", "DEFINE", "docs", "PREFIX", "docs:", "TYPES", "json")
	nsDo(t, rdb, "NAMESPACE", "DEFINE", "sets", "PREFIX", "sets:", "TYPES", "set")
	if err := rdb.Do(ctx, "JSON.SET", "docs:a", "$", `{"a":1}`).Err(); err != nil {
		t.Errorf("JSON.SET in a json namespace: %v", err)
	}
	if err := rdb.Do(ctx, "JSON.NUMINCRBY", "docs:a", "$.a", 1).Err(); err != nil {
		t.Errorf("JSON.NUMINCRBY in a json namespace: %v", err)
	}
	if err := rdb.Do(ctx, "SET", "docs:s", "v").Err(); err == nil || err.Error() != "WRONGTYPE namespace 'docs' holds only json values" {
		t.Errorf("SET in a json namespace: %v", err)
	}
	if err := rdb.Do(ctx, "JSON.SET", "sets:j", "$", "1").Err(); err == nil || err.Error() != "WRONGTYPE namespace 'sets' holds only set values" {
		t.Errorf("JSON.SET in a set namespace: %v", err)
	}
	if got := rdb.Do(ctx, "NAMESPACE", "INFO", "docs").String(); !strings.Contains(got, "json") {
		t.Errorf("NAMESPACE INFO docs: %s", got)
	}
}
