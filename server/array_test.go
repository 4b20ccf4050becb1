package server_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// Redis 8.8's arrays as their redis.io pages give them: the data type page
// (develop/data-types/arrays) and each command's page, examples and
// replies. No Redis 8.8 server runs here: each expected reply follows from
// what the pages state. go-redis's own specs run in TestGoRedisArraySpecs.

func TestArrayDataTypePage(t *testing.T) {
	forProtocols(t, func(t *testing.T, p *difftest.Pair, r replies) {
		c := func(want string, args ...any) { t.Helper(); docCase(t, p, want, args...) }
		// Basic usage.
		c(r.i(3), "ARSET", "events:1", "0", "login", "click", "purchase")
		c(r.bulk("login"), "ARGET", "events:1", "0")
		c(r.null(), "ARGET", "events:1", "999")
		c(r.i(3), "ARMSET", "metrics", "0", "10", "5", "20", "100", "30")
		c(r.arr(r.bulk("10"), r.bulk("20"), r.bulk("30"), r.null()), "ARMGET", "metrics", "0", "5", "100", "999")
		// Array length vs. element count.
		c(r.i(1), "ARSET", "sparse", "0", "a")
		c(r.i(1), "ARSET", "sparse", "1000000", "b")
		c(r.i(1000001), "ARLEN", "sparse")
		c(r.i(2), "ARCOUNT", "sparse")
		// Reading ranges.
		c(r.i(3), "ARMSET", "seq", "0", "a", "1", "b", "3", "d")
		c(r.arr(r.bulk("a"), r.bulk("b"), r.null(), r.bulk("d")), "ARGETRANGE", "seq", "0", "3")
		c(r.arr(r.arr(r.i(0), r.bulk("a")), r.arr(r.i(1), r.bulk("b")), r.arr(r.i(3), r.bulk("d"))), "ARSCAN", "seq", "0", "3")
		// Sequential insertion.
		c(r.i(0), "ARINSERT", "log", "event1")
		c(r.i(1), "ARINSERT", "log", "event2")
		c(r.i(2), "ARNEXT", "log")
		c(r.i(1), "ARSEEK", "log", "10")
		c(r.i(10), "ARINSERT", "log", "event3")
		// Ring buffer mode.
		c(r.i(0), "ARRING", "readings", "3", "v0")
		c(r.i(1), "ARRING", "readings", "3", "v1")
		c(r.i(2), "ARRING", "readings", "3", "v2")
		c(r.i(0), "ARRING", "readings", "3", "v3")
		c(r.bulk("v3"), "ARGET", "readings", "0")
		c(r.arr(r.bulk("v1"), r.bulk("v2"), r.bulk("v3")), "ARLASTITEMS", "readings", "3")
		c(r.arr(r.bulk("v3"), r.bulk("v2"), r.bulk("v1")), "ARLASTITEMS", "readings", "3", "REV")
		// Aggregate operations.
		c(r.i(3), "ARMSET", "scores", "0", "10", "1", "20", "2", "30")
		c(r.bulk("60"), "AROP", "scores", "0", "2", "SUM")
		c(r.bulk("30"), "AROP", "scores", "0", "2", "MAX")
		c(r.i(1), "AROP", "scores", "0", "2", "MATCH", "10")
		// Deleting elements; the last one takes the key.
		c(r.i(1), "ARDEL", "scores", "1")
		c(r.i(2), "ARDELRANGE", "scores", "0", "2")
		c(r.i(0), "EXISTS", "scores")
		// Introspection: the first fields. The page's listing, cut short,
		// shows next-insert-index 0; after the fourth ARRING wrote index 0
		// the cursor is 1, as ARNEXT answers in go-redis's ring specs.
		info := r.info("len", r.i(3), "count", r.i(3), "next-insert-index", r.i(1), "slices", r.i(1),
			"directory-size", r.i(1), "super-dir-entries", r.i(0), "slice-size", r.i(4096))
		c(info, "ARINFO", "readings")
		// Limits: at most 1,000,000 slots per ARGETRANGE.
		c(r.err("ERR range exceeds maximum of 1000000 elements"), "ARGETRANGE", "seq", "0", "1000000")
		c(r.err("ERR range exceeds maximum of 1000000 elements"), "ARGETRANGE", "seq", "1000000", "0")
		c("*1000000\r\n"+strings.Repeat(r.null(), 999996)+r.bulk("d")+r.null()+r.bulk("b")+r.bulk("a"), "ARGETRANGE", "seq", "999999", "0")
	})
}

func TestArrayCommandPages(t *testing.T) {
	forProtocols(t, func(t *testing.T, p *difftest.Pair, r replies) {
		c := func(want string, args ...any) { t.Helper(); docCase(t, p, want, args...) }
		// ARSET's page.
		c(r.i(1), "ARSET", "myarray", "0", "hello")
		c(r.bulk("hello"), "ARGET", "myarray", "0")
		c(r.i(3), "ARSET", "myarray", "2", "a", "b", "c")
		c(r.bulk("a"), "ARGET", "myarray", "2")
		c(r.bulk("c"), "ARGET", "myarray", "4")
		c(r.i(1), "ARSET", "myarray", "4", "C", "d") // one slot was empty
		c(r.i(1), "DEL", "myarray")
		// ARMSET's page.
		c(r.i(3), "ARMSET", "myarray", "0", "alpha", "5", "beta", "100", "gamma")
		c(r.bulk("alpha"), "ARGET", "myarray", "0")
		c(r.bulk("beta"), "ARGET", "myarray", "5")
		c(r.bulk("gamma"), "ARGET", "myarray", "100")
		c(r.i(1), "DEL", "myarray")
		// ARDELRANGE's page.
		c(r.i(5), "ARMSET", "myarray", "0", "a", "1", "b", "2", "c", "3", "d", "4", "e")
		c(r.i(3), "ARDELRANGE", "myarray", "1", "3")
		c(r.i(2), "ARCOUNT", "myarray")
		c(r.bulk("a"), "ARGET", "myarray", "0")
		c(r.bulk("e"), "ARGET", "myarray", "4")
		c(r.i(1), "ARDELRANGE", "myarray", "9", "4", "1", "3", "4", "4") // reversed, overlapping: counted once
		c(r.i(1), "DEL", "myarray")
		// ARGETRANGE's page.
		c(r.i(3), "ARMSET", "myarray", "0", "a", "1", "b", "3", "d")
		c(r.arr(r.bulk("a"), r.bulk("b"), r.null(), r.bulk("d")), "ARGETRANGE", "myarray", "0", "3")
		c(r.arr(r.bulk("d"), r.null(), r.bulk("b"), r.bulk("a")), "ARGETRANGE", "myarray", "3", "0")
		c(r.arr(r.null(), r.null()), "ARGETRANGE", "myarray", "7", "8")
		c(r.arr(), "ARGETRANGE", "nosuch", "0", "3")
		c(r.i(1), "DEL", "myarray")
		// ARINSERT's and ARNEXT's pages.
		c(r.i(0), "ARINSERT", "myarray", "alpha")
		c(r.i(1), "ARINSERT", "myarray", "beta")
		c(r.i(2), "ARINSERT", "myarray", "gamma")
		c(r.bulk("beta"), "ARGET", "myarray", "1")
		c(r.i(3), "ARNEXT", "myarray")
		c(r.i(5), "ARINSERT", "myarray", "x", "y", "z") // the last index written
		c(r.i(0), "ARNEXT", "nosuch")
		c(r.i(1), "DEL", "myarray")
		// ARSEEK's page; on a missing key it creates nothing.
		c(r.i(0), "ARINSERT", "myarray", "a")
		c(r.i(1), "ARINSERT", "myarray", "b")
		c(r.i(2), "ARNEXT", "myarray")
		c(r.i(1), "ARSEEK", "myarray", "10")
		c(r.i(10), "ARINSERT", "myarray", "c")
		c(r.i(11), "ARNEXT", "myarray")
		c(r.i(0), "ARSEEK", "nosuch", "100")
		c(r.i(0), "EXISTS", "nosuch")
		// ARNEXT is nil once the cursor is past the last index; ARINSERT
		// then has nowhere to write.
		c(r.i(1), "ARSEEK", "myarray", "18446744073709551615")
		c(r.null(), "ARNEXT", "myarray")
		c(r.err("ERR invalid array index"), "ARINSERT", "myarray", "d")
		c(r.i(1), "ARSEEK", "myarray", "18446744073709551614")
		c(r.u(18446744073709551614), "ARINSERT", "myarray", "last")
		c(r.null(), "ARNEXT", "myarray")
		c(r.i(1), "DEL", "myarray")
		// ARSCAN's page.
		c(r.i(1), "ARSET", "myarray", "0", "a")
		c(r.i(1), "ARSET", "myarray", "5", "b")
		c(r.i(1), "ARSET", "myarray", "9", "c")
		c(r.arr(r.arr(r.i(0), r.bulk("a")), r.arr(r.i(5), r.bulk("b")), r.arr(r.i(9), r.bulk("c"))), "ARSCAN", "myarray", "0", "10")
		c(r.arr(r.arr(r.i(0), r.bulk("a")), r.arr(r.i(5), r.bulk("b"))), "ARSCAN", "myarray", "0", "10", "LIMIT", "2")
		c(r.arr(r.arr(r.i(9), r.bulk("c")), r.arr(r.i(5), r.bulk("b"))), "ARSCAN", "myarray", "10", "0", "LIMIT", "2")
		c(r.arr(), "ARSCAN", "nosuch", "0", "10")
		c(r.err("ERR LIMIT must be a positive integer"), "ARSCAN", "myarray", "0", "10", "LIMIT", "0")
		c(r.err("ERR syntax error"), "ARSCAN", "myarray", "0", "10", "COUNT", "2")
		// ARLEN and ARCOUNT: a missing key is 0.
		c(r.i(10), "ARLEN", "myarray")
		c(r.i(3), "ARCOUNT", "myarray")
		c(r.i(0), "ARLEN", "nosuch")
		c(r.i(0), "ARCOUNT", "nosuch")
		// ARDEL: the slots that held a value.
		c(r.i(2), "ARDEL", "myarray", "5", "6", "9", "9")
		c(r.i(1), "ARLEN", "myarray")
		c(r.i(1), "DEL", "myarray")
		// AROP's page.
		c(r.i(3), "ARMSET", "myarray", "0", "10", "1", "20", "2", "30")
		c(r.bulk("60"), "AROP", "myarray", "0", "2", "SUM")
		c(r.bulk("10"), "AROP", "myarray", "0", "2", "MIN")
		c(r.bulk("30"), "AROP", "myarray", "0", "2", "MAX")
		c(r.i(1), "AROP", "myarray", "0", "2", "MATCH", "10")
		c(r.i(3), "AROP", "myarray", "0", "2", "USED")
		c(r.bulk("50"), "AROP", "myarray", "2", "1", "SUM") // lower to higher whatever the order
		c(r.i(3), "ARMSET", "flags", "0", "255", "1", "15", "2", "240")
		c(r.i(0), "AROP", "flags", "0", "2", "AND")
		c(r.i(255), "AROP", "flags", "0", "2", "OR")
		c(r.i(0), "AROP", "flags", "0", "2", "XOR")
		// Non-numeric values are left out; no numeric value is nil.
		c(r.i(2), "ARMSET", "words", "0", "x", "1", "2.5")
		c(r.bulk("2.5"), "AROP", "words", "0", "1", "SUM")
		c(r.null(), "AROP", "words", "0", "0", "MAX")
		c(r.null(), "AROP", "words", "0", "0", "XOR")
		c(r.i(2), "AROP", "words", "0", "9", "USED")
		c(r.i(0), "AROP", "nosuch", "0", "9", "USED")
		c(r.null(), "AROP", "nosuch", "0", "9", "SUM")
		c(r.err("ERR syntax error"), "AROP", "myarray", "0", "2", "AVG")
		// ARRING's page, then a smaller ring keeps the most recent values
		// from index 0.
		c(r.i(0), "ARRING", "readings", "3", "v0")
		c(r.i(1), "ARRING", "readings", "3", "v1")
		c(r.i(2), "ARRING", "readings", "3", "v2")
		c(r.i(0), "ARRING", "readings", "3", "v3")
		c(r.bulk("v3"), "ARGET", "readings", "0")
		c(r.i(3), "ARCOUNT", "readings")
		c(r.arr(r.bulk("v1"), r.bulk("v2"), r.bulk("v3")), "ARLASTITEMS", "readings", "3")
		c(r.i(0), "ARRING", "readings", "2", "v4")
		c(r.arr(r.bulk("v4"), r.bulk("v3")), "ARGETRANGE", "readings", "0", "1") // v2 v3 kept, v4 over v2
		c(r.i(2), "ARCOUNT", "readings")
		c(r.err("ERR ring size must be a positive integer"), "ARRING", "readings", "0", "x")
		// ARLASTITEMS's page; empty slots before the cursor are nil.
		c(r.i(0), "ARINSERT", "log", "first")
		c(r.i(1), "ARINSERT", "log", "second")
		c(r.i(2), "ARINSERT", "log", "third")
		c(r.arr(r.bulk("second"), r.bulk("third")), "ARLASTITEMS", "log", "2")
		c(r.arr(r.bulk("third"), r.bulk("second")), "ARLASTITEMS", "log", "2", "REV")
		c(r.i(1), "ARSEEK", "log", "5")
		c(r.i(5), "ARINSERT", "log", "sixth")
		c(r.arr(r.bulk("third"), r.null(), r.null(), r.bulk("sixth")), "ARLASTITEMS", "log", "4")
		c(r.arr(), "ARLASTITEMS", "nosuch", "4")
		c(r.arr(), "ARLASTITEMS", "log", "0")
		c(r.err("ERR syntax error"), "ARLASTITEMS", "log", "2", "REVERSE")
		c(r.i(1), "ARSET", "far", "2000000", "x")
		c(r.err("ERR range exceeds maximum of 1000000 elements"), "ARLASTITEMS", "far", "1000001")
		c("*1000000\r\n"+r.bulk("x")+strings.Repeat(r.null(), 999999), "ARLASTITEMS", "far", "1000000", "REV")
		// ARGREP's page.
		c(r.i(5), "ARMSET", "log2", "0", "boot: ok", "1", "warn: disk", "2", "ERROR: cpu", "3", "info: ready", "4", "error: net")
		c(r.arr(r.i(2), r.i(4)), "ARGREP", "log2", "-", "+", "MATCH", "error", "NOCASE")
		c(r.arr(r.arr(r.i(2), r.bulk("ERROR: cpu")), r.arr(r.i(4), r.bulk("error: net"))), "ARGREP", "log2", "-", "+", "MATCH", "error", "NOCASE", "WITHVALUES")
		c(r.arr(r.i(1), r.i(4)), "ARGREP", "log2", "0", "4", "GLOB", "warn:*", "OR", "GLOB", "error:*")
		c(r.arr(r.arr(r.i(2), r.bulk("ERROR: cpu")), r.arr(r.i(4), r.bulk("error: net"))), "ARGREP", "log2", "0", "4", "RE", "^[A-Za-z]+: (cpu|net)$", "NOCASE", "WITHVALUES")
		c(r.arr(r.i(3)), "ARGREP", "log2", "0", "4", "EXACT", "info: ready")
		c(r.arr(r.i(2)), "ARGREP", "log2", "-", "+", "MATCH", "error", "NOCASE", "LIMIT", "1")
		c(r.arr(r.i(4), r.i(2)), "ARGREP", "log2", "+", "-", "MATCH", "error", "NOCASE") // reversed
		c(r.arr(r.i(4)), "ARGREP", "log2", "-", "+", "MATCH", "error", "GLOB", "*net", "AND")
		c(r.arr(), "ARGREP", "nosuch", "-", "+", "MATCH", "error")
		c(r.err("ERR syntax error"), "ARGREP", "log2", "-", "+", "NOCASE", "WITHVALUES")
		c(r.err("ERR invalid regular expression"), "ARGREP", "log2", "-", "+", "RE", "(")
		// ARINFO: RESP2 pairs, RESP3 a map; FULL adds the page layout.
		c(r.i(3), "ARMSET", "info", "0", "a", "1", "b", "100", "c")
		c(r.info("len", r.i(101), "count", r.i(3), "next-insert-index", r.i(0), "slices", r.i(1),
			"directory-size", r.i(1), "super-dir-entries", r.i(0), "slice-size", r.i(4096),
			"dense-slices", r.i(0), "sparse-slices", r.i(1), "avg-dense-size", r.d("0"),
			"avg-dense-fill", r.d("0"), "avg-sparse-size", r.d("4")), "ARINFO", "info", "FULL")
		c(nullArray(r), "ARINFO", "nosuch")
	})
}

// u is an integer reply of an unsigned value (indexes past 2^63-1).
func (replies) u(n uint64) string { return ":" + strconv.FormatUint(n, 10) + "\r\n" }

func nullArray(r replies) string {
	if r.proto == 3 {
		return "_\r\n"
	}
	return "*-1\r\n"
}

// TestArrayErrors: indexes outside 0..2^64-2, argument counts, wrong types,
// TYPE and OBJECT ENCODING as go-redis's specs and the pages have them.
func TestArrayErrors(t *testing.T) {
	forProtocols(t, func(t *testing.T, p *difftest.Pair, r replies) {
		c := func(want string, args ...any) { t.Helper(); docCase(t, p, want, args...) }
		const bad = "ERR invalid array index"
		for _, index := range []string{"-1", "18446744073709551615", "18446744073709551616", "x", "", "1.5", "+1"} {
			c(r.err(bad), "ARSET", "a", index, "v")
			c(r.err(bad), "ARGET", "a", index)
			c(r.err(bad), "ARMGET", "a", "0", index)
			c(r.err(bad), "ARDEL", "a", index)
		}
		c(r.err(bad), "ARSET", "a", "18446744073709551613", "x", "y", "z") // the last would pass the end
		c(r.i(0), "EXISTS", "a")
		c(r.i(2), "ARSET", "a", "18446744073709551613", "x", "y")
		c(r.u(18446744073709551615), "ARLEN", "a")
		c(r.err(bad), "ARMSET", "a", "0", "v", "-1", "w") // checked before anything is written
		c(r.i(2), "ARCOUNT", "a")                         // unchanged
		c(r.err("ERR wrong number of arguments for 'armset' command"), "ARMSET", "a", "0", "v", "1")
		c(r.err("ERR wrong number of arguments for 'ardelrange' command"), "ARDELRANGE", "a", "0", "1", "2")
		c(r.err("ERR wrong number of arguments for 'arset' command"), "ARSET", "a", "0")
		c(r.err("ERR wrong number of arguments for 'argrep' command"), "ARGREP", "a", "-", "+", "MATCH")
		c(r.err("ERR wrong number of arguments for 'arop' command"), "AROP", "a", "0", "1")
		c(r.ok(), "SET", "str", "v")
		wrong := r.err("WRONGTYPE Operation against a key holding the wrong kind of value")
		for _, cmd := range [][]any{{"ARSET", "str", "0", "v"}, {"ARGET", "str", "0"}, {"ARMGET", "str", "0"}, {"ARLEN", "str"},
			{"ARCOUNT", "str"}, {"ARGETRANGE", "str", "0", "1"}, {"ARSCAN", "str", "0", "1"}, {"ARINSERT", "str", "v"},
			{"ARSEEK", "str", "1"}, {"ARNEXT", "str"}, {"ARRING", "str", "2", "v"}, {"ARLASTITEMS", "str", "1"},
			{"AROP", "str", "0", "1", "USED"}, {"ARGREP", "str", "-", "+", "MATCH", "x"}, {"ARINFO", "str"},
			{"ARDEL", "str", "0"}, {"ARDELRANGE", "str", "0", "1"}, {"ARMSET", "str", "0", "v"}} {
			c(wrong, cmd...)
		}
		c(r.i(1), "ARSET", "arr", "0", "hello")
		c("+array\r\n", "TYPE", "arr")
		c(r.bulk("sliced-array"), "OBJECT", "ENCODING", "arr")
		c(wrong, "LPUSH", "arr", "x")
		c(r.i(1), "DEL", "a")
		c(r.arr(r.bulk("0"), r.arr(r.bulk("arr"))), "SCAN", "0", "TYPE", "array")
	})
}

// TestArrayLayout: a page turns dense as it fills and sparse again as it
// empties, which ARINFO FULL reports; the values stay throughout.
func TestArrayLayout(t *testing.T) {
	forProtocols(t, func(t *testing.T, p *difftest.Pair, r replies) {
		c := func(want string, args ...any) { t.Helper(); docCase(t, p, want, args...) }
		args := []any{"ARSET", "big", "0"}
		for i := range 5000 {
			args = append(args, strconv.Itoa(i))
		}
		c(r.i(5000), args...)
		c(r.info("len", r.i(5000), "count", r.i(5000), "next-insert-index", r.i(0), "slices", r.i(2),
			"directory-size", r.i(2), "super-dir-entries", r.i(0), "slice-size", r.i(4096),
			"dense-slices", r.i(2), "sparse-slices", r.i(0), "avg-dense-size", r.d("32768"),
			"avg-dense-fill", r.d("0.6103515625"), "avg-sparse-size", r.d("0")), "ARINFO", "big", "FULL")
		c(r.i(4900), "ARDELRANGE", "big", "50", "4949")
		c(r.info("len", r.i(5000), "count", r.i(100), "next-insert-index", r.i(0), "slices", r.i(2),
			"directory-size", r.i(2), "super-dir-entries", r.i(0), "slice-size", r.i(4096),
			"dense-slices", r.i(0), "sparse-slices", r.i(2), "avg-dense-size", r.d("0"),
			"avg-dense-fill", r.d("0"), "avg-sparse-size", r.d("50")), "ARINFO", "big", "FULL")
		c(r.bulk("4999"), "ARGET", "big", "4999")
		c(r.bulk("49"), "ARGET", "big", "49")
		c(r.null(), "ARGET", "big", "50")
		// 2000 pages, appended in order: headers in blocks of 512, 512
		// and 976 (a block splits in halves past 1024).
		args = []any{"ARMSET", "pages"}
		for i := range 2000 {
			args = append(args, strconv.Itoa(i*4096), "v")
		}
		c(r.i(2000), args...)
		c(r.info("len", r.i(1999*4096+1), "count", r.i(2000), "next-insert-index", r.i(0), "slices", r.i(2000),
			"directory-size", r.i(2000), "super-dir-entries", r.i(3), "slice-size", r.i(4096)), "ARINFO", "pages")
		c(r.bulk("1225"), "AROP", "big", "0", "99", "SUM")
		c(r.bulk("249950"), "AROP", "big", "0", "4999", "SUM")
	})
}
