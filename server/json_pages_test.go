package server_test

import (
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestJSONPageExamples replays the Examples section of each JSON command's
// redis.io page, one subtest per page, read from the pages' markdown in
// github.com/redis/docs (content/commands/json.<name>.md at commit
// 63f31f69985905d997fa5b0c02e1559b5d04c8b2, August 2026). The expected
// replies are the ones the page shows (redis-cli in RESP2); in RESP3 the
// same commands expect what
// https://redis.io/docs/latest/develop/data-types/json/resp3/ says changes
// (NUMINCRBY/NUMMULTBY give numbers, JSON.TYPE wraps its reply in an array,
// nulls are RESP3 nulls). Where Keyhive does not follow a page, the case
// keeps Keyhive's reply and says why.
func TestJSONPageExamples(t *testing.T) {
	skipOnRedisTarget(t)
	const ok = "+OK\r\n"
	const headphones = `{"name":"Noise-cancelling Bluetooth headphones","description":"Wireless Bluetooth headphones with noise-cancelling technology","connection":{"wireless":true,"type":"Bluetooth"},"price":99.98,"stock":25,"colors":["black","silver"]}`
	const earbuds = `{"name":"Wireless earbuds","description":"Wireless Bluetooth in-ear headphones","connection":{"wireless":true,"type":"Bluetooth"},"price":64.99,"stock":17,"colors":["black","white"], "max_level":[80, 100, 120]}`
	twoHeadphones := func(maxLevels string) string {
		return `[{"name":"Healthy headphones","description":"Wireless Bluetooth headphones with noise-cancelling technology","connection":{"wireless":true,"type":"Bluetooth"},"price":99.98,"stock":25,"colors":["black","silver"],"max_level":[60,70,80]},{"name":"Noisy headphones","description":"Wireless Bluetooth headphones with noise-cancelling technology","connection":{"wireless":true,"type":"Bluetooth"},"price":99.98,"stock":25,"colors":["black","silver"],"max_level":` + maxLevels + `}]`
	}
	// The ARRINDEX and ARRINSERT pages share their first steps.
	colorsUpToInsert := func(t *testing.T, p *difftest.Pair) {
		t.Helper()
		docCase(t, p, ok, "JSON.SET", "item:1", "$", headphones)
		docCase(t, p, ja(ji(3)), "JSON.ARRAPPEND", "item:1", "$.colors", `"blue"`)
		// No path is the legacy root, in RESP3 too (see TestJSONCommands).
		docCase(t, p, jb(`{"name":"Noise-cancelling Bluetooth headphones","description":"Wireless Bluetooth headphones with noise-cancelling technology","connection":{"wireless":true,"type":"Bluetooth"},"price":99.98,"stock":25,"colors":["black","silver","blue"]}`), "JSON.GET", "item:1")
		docCase(t, p, jb(`["black","silver","blue"]`), "JSON.GET", "item:1", "$.colors[*]")
		docCase(t, p, ja(ji(5)), "JSON.ARRINSERT", "item:1", "$.colors", "2", `"yellow"`, `"gold"`)
		docCase(t, p, jb(`[["black","silver","yellow","gold","blue"]]`), "JSON.GET", "item:1", "$.colors")
	}
	// The DEL page's examples; the FORGET page has none and points to DEL.
	deleteExamples := func(t *testing.T, p *difftest.Pair, cmd string) {
		t.Helper()
		docCase(t, p, ok, "JSON.SET", "doc", "$", `{"a": 1, "nested": {"a": 2, "b": 3}}`)
		docCase(t, p, ji(2), cmd, "doc", "$..a")
		docCase(t, p, jb(`[{"nested":{"b":3}}]`), "JSON.GET", "doc", "$")
		// Emptying the root deletes the key (since Redis 8.2).
		docCase(t, p, ok, "JSON.SET", "doc", "$", `{"a": 1}`)
		docCase(t, p, ji(1), cmd, "doc", "$.a")
		docCase(t, p, ji(0), "EXISTS", "doc")
	}

	pages := []struct {
		name string
		run  func(t *testing.T, p *difftest.Pair, proto int)
	}{
		// https://redis.io/docs/latest/commands/json.arrappend/
		{"JSON.ARRAPPEND", func(t *testing.T, p *difftest.Pair, proto int) {
			docCase(t, p, ok, "JSON.SET", "item:1", "$", headphones)
			docCase(t, p, ja(ji(3)), "JSON.ARRAPPEND", "item:1", "$.colors", `"blue"`)
			docCase(t, p, jb(`[["black","silver","blue"]]`), "JSON.GET", "item:1", "$.colors")
		}},
		// https://redis.io/docs/latest/commands/json.arrindex/
		{"JSON.ARRINDEX", func(t *testing.T, p *difftest.Pair, proto int) {
			colorsUpToInsert(t, p)
			docCase(t, p, ja(ji(1)), "JSON.ARRINDEX", "item:1", "$..colors", `"silver"`)
		}},
		// https://redis.io/docs/latest/commands/json.arrinsert/
		{"JSON.ARRINSERT", func(t *testing.T, p *difftest.Pair, proto int) {
			colorsUpToInsert(t, p)
		}},
		// https://redis.io/docs/latest/commands/json.arrlen/
		{"JSON.ARRLEN", func(t *testing.T, p *difftest.Pair, proto int) {
			null := jnull(proto)
			docCase(t, p, ok, "JSON.SET", "item:2", "$", earbuds)
			docCase(t, p, ja(null, null, null, null, null, ji(2), ji(3)), "JSON.ARRLEN", "item:2", "$.[*]")
			docCase(t, p, ja(ji(3)), "JSON.ARRLEN", "item:2", "$..max_level")
			docCase(t, p, jb(`[[80,100,120]]`), "JSON.GET", "item:2", "$..max_level")
		}},
		// https://redis.io/docs/latest/commands/json.arrpop/
		{"JSON.ARRPOP", func(t *testing.T, p *difftest.Pair, proto int) {
			docCase(t, p, ok, "JSON.SET", "key", "$", twoHeadphones(`[80,90,100,120]`))
			docCase(t, p, jb(`[[80,90,100,120]]`), "JSON.GET", "key", "$.[1].max_level")
			docCase(t, p, ja(jb("80")), "JSON.ARRPOP", "key", "$.[1].max_level", "0")
			docCase(t, p, jb(`[[90,100,120]]`), "JSON.GET", "key", "$.[1].max_level")
			docCase(t, p, ja(ji(4)), "JSON.ARRINSERT", "key", "$.[1].max_level", "0", "85")
			docCase(t, p, jb(`[[85,90,100,120]]`), "JSON.GET", "key", "$.[1].max_level")
		}},
		// https://redis.io/docs/latest/commands/json.arrtrim/
		{"JSON.ARRTRIM", func(t *testing.T, p *difftest.Pair, proto int) {
			docCase(t, p, ok, "JSON.SET", "key", "$", twoHeadphones(`[85,90,100,120]`))
			docCase(t, p, ja(ji(12)), "JSON.ARRAPPEND", "key", "$.[1].max_level", "140", "160", "180", "200", "220", "240", "260", "280")
			docCase(t, p, jb(`[[85,90,100,120,140,160,180,200,220,240,260,280]]`), "JSON.GET", "key", "$.[1].max_level")
			docCase(t, p, ja(ji(5)), "JSON.ARRTRIM", "key", "$.[1].max_level", "4", "8")
			docCase(t, p, jb(`[[140,160,180,200,220]]`), "JSON.GET", "key", "$.[1].max_level")
		}},
		// https://redis.io/docs/latest/commands/json.clear/
		{"JSON.CLEAR", func(t *testing.T, p *difftest.Pair, proto int) {
			docCase(t, p, ok, "JSON.SET", "doc", "$", `{"obj":{"a":1, "b":2}, "arr":[1,2,3], "str": "foo", "bool": true, "int": 42, "float": 3.14}`)
			docCase(t, p, ji(4), "JSON.CLEAR", "doc", "$.*")
			docCase(t, p, jb(`[{"obj":{},"arr":[],"str":"foo","bool":true,"int":0,"float":0}]`), "JSON.GET", "doc", "$")
		}},
		// https://redis.io/docs/latest/commands/json.debug-memory/ (the
		// pages json.debug and json.debug-help have no examples).
		{"JSON.DEBUG", func(t *testing.T, p *difftest.Pair, proto int) {
			docCase(t, p, ok, "JSON.SET", "item:2", "$", earbuds)
			// Not the page's 573, RedisJSON's heap layout: Keyhive reports
			// the size of its own stored form of the document.
			docCase(t, p, ji(201), "JSON.DEBUG", "MEMORY", "item:2")
		}},
		// https://redis.io/docs/latest/commands/json.del/
		{"JSON.DEL", func(t *testing.T, p *difftest.Pair, proto int) {
			deleteExamples(t, p, "JSON.DEL")
		}},
		// https://redis.io/docs/latest/commands/json.forget/ has no examples
		// and sends the reader to JSON.DEL: its examples, through FORGET.
		{"JSON.FORGET", func(t *testing.T, p *difftest.Pair, proto int) {
			deleteExamples(t, p, "JSON.FORGET")
		}},
		// https://redis.io/docs/latest/commands/json.get/
		{"JSON.GET", func(t *testing.T, p *difftest.Pair, proto int) {
			docCase(t, p, ok, "JSON.SET", "doc", "$", `{"a":2, "b": 3, "nested": {"a": 4, "b": null}}`)
			docCase(t, p, jb(`[3,null]`), "JSON.GET", "doc", "$..b")
			// The page shows "$..b" first: RedisJSON builds this object in
			// a hash map, so its order varies; Keyhive keeps the paths' order.
			docCase(t, p, jb(`{"..a":[2,4],"$..b":[3,null]}`), "JSON.GET", "doc", "..a", "$..b")
		}},
		// https://redis.io/docs/latest/commands/json.merge/
		{"JSON.MERGE", func(t *testing.T, p *difftest.Pair, proto int) {
			// A path that does not exist yet.
			docCase(t, p, ok, "JSON.SET", "doc", "$", `{"a":2}`)
			docCase(t, p, ok, "JSON.MERGE", "doc", "$.b", "8")
			docCase(t, p, jb(`[{"a":2,"b":8}]`), "JSON.GET", "doc", "$")
			// A value replaced.
			docCase(t, p, ok, "JSON.SET", "doc", "$", `{"a":2}`)
			docCase(t, p, ok, "JSON.MERGE", "doc", "$.a", "3")
			docCase(t, p, jb(`[{"a":3}]`), "JSON.GET", "doc", "$")
			// A value deleted by a null.
			docCase(t, p, ok, "JSON.SET", "doc", "$", `{"a":2}`)
			docCase(t, p, ok, "JSON.MERGE", "doc", "$", `{"a":null}`)
			docCase(t, p, jb(`[{}]`), "JSON.GET", "doc", "$")
			// An array replaced whole.
			docCase(t, p, ok, "JSON.SET", "doc", "$", `{"a":[2,4,6,8]}`)
			docCase(t, p, ok, "JSON.MERGE", "doc", "$.a", "[10,12]")
			docCase(t, p, jb(`[{"a":[10,12]}]`), "JSON.GET", "doc", "$")
			// Several members at once.
			docCase(t, p, ok, "JSON.SET", "doc", "$", `{"f1": {"a":1}, "f2":{"a":2}}`)
			docCase(t, p, jb(`{"f1":{"a":1},"f2":{"a":2}}`), "JSON.GET", "doc")
			docCase(t, p, ok, "JSON.MERGE", "doc", "$", `{"f1": null, "f2":{"a":3, "b":4}, "f3":[2,4,6]}`)
			docCase(t, p, jb(`{"f2":{"a":3,"b":4},"f3":[2,4,6]}`), "JSON.GET", "doc")
		}},
		// https://redis.io/docs/latest/commands/json.mget/
		{"JSON.MGET", func(t *testing.T, p *difftest.Pair, proto int) {
			docCase(t, p, ok, "JSON.SET", "doc1", "$", `{"a":1, "b": 2, "nested": {"a": 3}, "c": null}`)
			docCase(t, p, ok, "JSON.SET", "doc2", "$", `{"a":4, "b": 5, "nested": {"a": 6}, "c": null}`)
			docCase(t, p, ja(jb(`[1,3]`), jb(`[4,6]`)), "JSON.MGET", "doc1", "doc2", "$..a")
		}},
		// https://redis.io/docs/latest/commands/json.mset/
		{"JSON.MSET", func(t *testing.T, p *difftest.Pair, proto int) {
			docCase(t, p, ok, "JSON.MSET", "doc1", "$", `{"a":1}`, "doc2", "$", `{"f":{"a":2}}`, "doc3", "$", `{"f1":{"a":0},"f2":{"a":0}}`)
			docCase(t, p, ok, "JSON.MSET", "doc1", "$", `{"a":2}`, "doc2", "$.f.a", "3", "doc3", "$", `{"f1":{"a":1},"f2":{"a":2}}`)
			docCase(t, p, jb(`[{"a":2}]`), "JSON.GET", "doc1", "$")
			docCase(t, p, jb(`[{"f":{"a":3}}]`), "JSON.GET", "doc2", "$")
			docCase(t, p, jb(`{"f1":{"a":1},"f2":{"a":2}}`), "JSON.GET", "doc3")
		}},
		// https://redis.io/docs/latest/commands/json.numincrby/
		{"JSON.NUMINCRBY", func(t *testing.T, p *difftest.Pair, proto int) {
			null := jnull(proto)
			docCase(t, p, ok, "JSON.SET", "doc", ".", `{"a":"b","b":[{"a":2}, {"a":5}, {"a":"c"}]}`)
			if proto == 2 {
				docCase(t, p, jb(`[null]`), "JSON.NUMINCRBY", "doc", "$.a", "2")
				docCase(t, p, jb(`[null,4,7,null]`), "JSON.NUMINCRBY", "doc", "$..a", "2")
			} else {
				docCase(t, p, ja(null), "JSON.NUMINCRBY", "doc", "$.a", "2")
				docCase(t, p, ja(null, ji(4), ji(7), null), "JSON.NUMINCRBY", "doc", "$..a", "2")
			}
		}},
		// https://redis.io/docs/latest/commands/json.nummultby/
		{"JSON.NUMMULTBY", func(t *testing.T, p *difftest.Pair, proto int) {
			null := jnull(proto)
			docCase(t, p, ok, "JSON.SET", "doc", ".", `{"a":"b","b":[{"a":2}, {"a":5}, {"a":"c"}]}`)
			if proto == 2 {
				docCase(t, p, jb(`[null]`), "JSON.NUMMULTBY", "doc", "$.a", "2")
				docCase(t, p, jb(`[null,4,10,null]`), "JSON.NUMMULTBY", "doc", "$..a", "2")
			} else {
				docCase(t, p, ja(null), "JSON.NUMMULTBY", "doc", "$.a", "2")
				docCase(t, p, ja(null, ji(4), ji(10), null), "JSON.NUMMULTBY", "doc", "$..a", "2")
			}
		}},
		// https://redis.io/docs/latest/commands/json.objkeys/
		{"JSON.OBJKEYS", func(t *testing.T, p *difftest.Pair, proto int) {
			docCase(t, p, ok, "JSON.SET", "doc", "$", `{"a":[3], "nested": {"a": {"b":2, "c": 1}}}`)
			docCase(t, p, ja(jnull(proto), ja(jb("b"), jb("c"))), "JSON.OBJKEYS", "doc", "$..a")
		}},
		// https://redis.io/docs/latest/commands/json.objlen/
		{"JSON.OBJLEN", func(t *testing.T, p *difftest.Pair, proto int) {
			docCase(t, p, ok, "JSON.SET", "doc", "$", `{"a":[3], "nested": {"a": {"b":2, "c": 1}}}`)
			docCase(t, p, ja(jnull(proto), ji(2)), "JSON.OBJLEN", "doc", "$..a")
		}},
		// https://redis.io/docs/latest/commands/json.resp/
		{"JSON.RESP", func(t *testing.T, p *difftest.Pair, proto int) {
			docCase(t, p, ok, "JSON.SET", "item:2", "$", earbuds)
			// Not the page's "64.989999999999995", C's %.17g of Redis
			// before 7.2: Redis 7.2 and later write a double with Grisu2's
			// digits (redis-server 7.4.1's ZSCORE of 64.99 is "64.99").
			price := jb("64.99")
			if proto == 3 {
				price = ",64.99\r\n"
			}
			docCase(t, p, ja("+{\r\n",
				jb("name"), jb("Wireless earbuds"),
				jb("description"), jb("Wireless Bluetooth in-ear headphones"),
				jb("connection"), ja("+{\r\n", jb("wireless"), "+true\r\n", jb("type"), jb("Bluetooth")),
				jb("price"), price,
				jb("stock"), ji(17),
				jb("colors"), ja("+[\r\n", jb("black"), jb("white")),
				jb("max_level"), ja("+[\r\n", ji(80), ji(100), ji(120)),
			), "JSON.RESP", "item:2")
		}},
		// https://redis.io/docs/latest/commands/json.set/
		{"JSON.SET", func(t *testing.T, p *difftest.Pair, proto int) {
			null := jnull(proto)
			// A value replaced.
			docCase(t, p, ok, "JSON.SET", "doc", "$", `{"a":2}`)
			docCase(t, p, ok, "JSON.SET", "doc", "$.a", "3")
			docCase(t, p, jb(`[{"a":3}]`), "JSON.GET", "doc", "$")
			// A member added.
			docCase(t, p, ok, "JSON.SET", "doc", "$", `{"a":2}`)
			docCase(t, p, ok, "JSON.SET", "doc", "$.b", "8")
			docCase(t, p, jb(`[{"a":2,"b":8}]`), "JSON.GET", "doc", "$")
			// Not the page's OK and [[[1.0,2.0,3.0,4000.0],[5.0,6.0,7.0,8.0]]]:
			// FPHA (Redis 8.8) is not implemented yet (docs/compatibility.md).
			docCase(t, p, "-ERR syntax error\r\n", "JSON.SET", "doc", "$", `[[1,2,3,4e3],[5,6.0,7,8]]`, "FPHA", "FP16")
			// Every match updated.
			docCase(t, p, ok, "JSON.SET", "doc", "$", `{"f1": {"a":1}, "f2":{"a":2}}`)
			docCase(t, p, ok, "JSON.SET", "doc", "$..a", "3")
			docCase(t, p, jb(`{"f1":{"a":3},"f2":{"a":3}}`), "JSON.GET", "doc")
			// A path whose parent is missing is not created.
			docCase(t, p, ok, "JSON.SET", "doc", "$", "1")
			docCase(t, p, null, "JSON.SET", "doc", "$.x.y", "2")
			// XX on a missing key.
			docCase(t, p, null, "JSON.SET", "nonexistentkey", "$", "5", "XX")
			docCase(t, p, null, "JSON.GET", "nonexistentkey")
			// A new key needs the root.
			docCase(t, p, "-ERR new objects must be created at the root\r\n", "JSON.SET", "nonexistentkey", "$.x", "5")
		}},
		// https://redis.io/docs/latest/commands/json.strappend/
		{"JSON.STRAPPEND", func(t *testing.T, p *difftest.Pair, proto int) {
			docCase(t, p, ok, "JSON.SET", "doc", "$", `{"a":"foo", "nested": {"a": "hello"}, "nested2": {"a": 31}}`)
			docCase(t, p, ja(ji(6), ji(8), jnull(proto)), "JSON.STRAPPEND", "doc", "$..a", `"baz"`)
			docCase(t, p, jb(`[{"a":"foobaz","nested":{"a":"hellobaz"},"nested2":{"a":31}}]`), "JSON.GET", "doc", "$")
		}},
		// https://redis.io/docs/latest/commands/json.strlen/
		{"JSON.STRLEN", func(t *testing.T, p *difftest.Pair, proto int) {
			docCase(t, p, ok, "JSON.SET", "doc", "$", `{"a":"foo", "nested": {"a": "hello"}, "nested2": {"a": 31}}`)
			docCase(t, p, ja(ji(3), ji(5), jnull(proto)), "JSON.STRLEN", "doc", "$..a")
		}},
		// https://redis.io/docs/latest/commands/json.toggle/
		{"JSON.TOGGLE", func(t *testing.T, p *difftest.Pair, proto int) {
			docCase(t, p, ok, "JSON.SET", "doc", "$", `{"bool": true}`)
			docCase(t, p, ja(ji(0)), "JSON.TOGGLE", "doc", "$.bool")
			docCase(t, p, jb(`[{"bool":false}]`), "JSON.GET", "doc", "$")
			docCase(t, p, ja(ji(1)), "JSON.TOGGLE", "doc", "$.bool")
			docCase(t, p, jb(`[{"bool":true}]`), "JSON.GET", "doc", "$")
		}},
		// https://redis.io/docs/latest/commands/json.type/
		{"JSON.TYPE", func(t *testing.T, p *difftest.Pair, proto int) {
			docCase(t, p, ok, "JSON.SET", "doc", "$", `{"a":2, "nested": {"a": true}, "foo": "bar"}`)
			types := map[string]string{
				"$..foo":   ja(jb("string")),
				"$..a":     ja(jb("integer"), jb("boolean")),
				"$..dummy": ja(),
			}
			for _, path := range []string{"$..foo", "$..a", "$..dummy"} {
				want := types[path]
				if proto == 3 {
					want = ja(want)
				}
				docCase(t, p, want, "JSON.TYPE", "doc", path)
			}
		}},
	}
	for _, page := range pages {
		t.Run(page.name, func(t *testing.T) {
			p := difftest.Start(t)
			for _, proto := range []int{2, 3} {
				p.Proto(proto)
				p.Keyhive().Do("FLUSHALL")
				page.run(t, p, proto)
			}
		})
	}
}
