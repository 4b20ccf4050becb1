package server_test

import (
	"crypto/sha1"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// INCREX (Redis 8.8), as https://redis.io/docs/latest/commands/increx/
// documents it. No 8.8 server runs here: every expected reply below is the
// page's (its examples first), or follows from what the page states. The
// page gives no error texts and names no events; Keyhive answers Redis's
// usual texts (syntax error, not an integer, not a valid float, invalid
// expire time, would overflow, NaN or Infinity), one of its own for LBOUND
// above UBOUND, and INCRBY's or INCRBYFLOAT's event followed by expire or
// persist.

// TestIncrex: the page's examples and the rules it states, RESP2 and RESP3.
func TestIncrex(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.Start(t)
	pair := func(a, b string) string { return "*2\r\n" + a + b }
	i := func(n string) string { return ":" + n + "\r\n" }
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		// BYFLOAT replies bulk strings in RESP2, doubles in RESP3.
		f := func(s string) string {
			if proto == 3 {
				return "," + s + "\r\n"
			}
			return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n"
		}

		// The page's examples.
		docCase(t, p, ":0\r\n", "DEL", "mykey")
		docCase(t, p, pair(i("1"), i("1")), "INCREX", "mykey")
		docCase(t, p, pair(i("2"), i("1")), "INCREX", "mykey")
		docCase(t, p, "+OK\r\n", "SET", "mykey", "100")
		docCase(t, p, pair(i("105"), i("5")), "INCREX", "mykey", "BYINT", "5")
		docCase(t, p, pair(i("95"), i("-10")), "INCREX", "mykey", "BYINT", "-10")
		docCase(t, p, "+OK\r\n", "SET", "mykey", "1.5")
		docCase(t, p, pair(f("1.75"), f("0.25")), "INCREX", "mykey", "BYFLOAT", "0.25")
		docCase(t, p, ":1\r\n", "DEL", "mykey")
		docCase(t, p, pair(i("1"), i("1")), "INCREX", "mykey", "BYINT", "1", "EX", "100")
		docCase(t, p, ":100\r\n", "TTL", "mykey")
		docCase(t, p, "+OK\r\n", "SET", "mykey", "10")
		docCase(t, p, pair(i("11"), i("1")), "INCREX", "mykey", "BYINT", "1", "EX", "100", "ENX")
		docCase(t, p, ":100\r\n", "TTL", "mykey")
		docCase(t, p, "+OK\r\n", "SET", "mykey", "10", "EX", "500")
		docCase(t, p, pair(i("11"), i("1")), "INCREX", "mykey", "BYINT", "1", "EX", "10", "ENX")
		docCase(t, p, ":500\r\n", "TTL", "mykey")
		docCase(t, p, "+OK\r\n", "SET", "mykey", "5", "EX", "1000")
		docCase(t, p, ":1000\r\n", "TTL", "mykey")
		docCase(t, p, pair(i("6"), i("1")), "INCREX", "mykey", "BYINT", "1", "PERSIST")
		docCase(t, p, ":-1\r\n", "TTL", "mykey")
		docCase(t, p, "+OK\r\n", "SET", "mykey", "99")
		docCase(t, p, pair(i("99"), i("0")), "INCREX", "mykey", "BYINT", "5", "UBOUND", "100")
		docCase(t, p, "+OK\r\n", "SET", "mykey", "99")
		docCase(t, p, pair(i("100"), i("1")), "INCREX", "mykey", "BYINT", "5", "UBOUND", "100", "SATURATE")

		// Out of bounds without SATURATE: [current, 0], the key and its TTL
		// untouched, even with an expiration option; a missing key stays so.
		docCase(t, p, pair(i("0"), i("0")), "INCREX", "nokey", "BYINT", "5", "UBOUND", "3")
		docCase(t, p, ":0\r\n", "EXISTS", "nokey")
		docCase(t, p, "+OK\r\n", "SET", "k", "99", "EX", "50")
		docCase(t, p, pair(i("99"), i("0")), "INCREX", "k", "BYINT", "5", "UBOUND", "100", "EX", "1000")
		docCase(t, p, ":50\r\n", "TTL", "k")
		// LBOUND, with SATURATE flooring; SATURATE still applies the expiry.
		docCase(t, p, "+OK\r\n", "SET", "k", "3")
		docCase(t, p, pair(i("3"), i("0")), "INCREX", "k", "BYINT", "-5", "LBOUND", "0")
		docCase(t, p, pair(i("0"), i("-3")), "INCREX", "k", "SATURATE", "BYINT", "-5", "LBOUND", "0", "PX", "20000")
		docCase(t, p, ":20\r\n", "TTL", "k")
		docCase(t, p, pair(i("1"), i("1")), "INCREX", "k", "LBOUND", "-1", "UBOUND", "1")
		// The type's limits are the bounds when none is given.
		docCase(t, p, "+OK\r\n", "SET", "k", "9223372036854775806")
		docCase(t, p, pair(i("9223372036854775806"), i("0")), "INCREX", "k", "BYINT", "5")
		docCase(t, p, pair(i("9223372036854775807"), i("1")), "INCREX", "k", "BYINT", "5", "SATURATE")
		docCase(t, p, "+OK\r\n", "SET", "k", "-9223372036854775807")
		docCase(t, p, pair(i("-9223372036854775808"), i("-1")), "INCREX", "k", "BYINT", "-9223372036854775808", "SATURATE")
		// A saturated delta that no int64 holds is an error.
		docCase(t, p, "-ERR increment or decrement would overflow\r\n", "INCREX", "k", "LBOUND", "0", "SATURATE")
		docCase(t, p, "$20\r\n-9223372036854775808\r\n", "GET", "k")

		// BYFLOAT: integers are promoted; a float is then no integer for BYINT.
		docCase(t, p, "+OK\r\n", "SET", "n", "3")
		docCase(t, p, pair(f("3.5"), f("0.5")), "INCREX", "n", "BYFLOAT", "0.5")
		docCase(t, p, "-ERR value is not an integer or out of range\r\n", "INCREX", "n", "BYINT", "1")
		docCase(t, p, "+OK\r\n", "SET", "n", "10.5")
		docCase(t, p, pair(f("10.6"), f("0.1")), "INCREX", "n", "BYFLOAT", "0.1") // long double arithmetic
		docCase(t, p, pair(f("10.6"), f("0")), "INCREX", "n", "BYFLOAT", "1", "UBOUND", "11")
		docCase(t, p, pair(f("11"), f("0.4")), "INCREX", "n", "BYFLOAT", "1", "UBOUND", "11", "SATURATE")
		docCase(t, p, pair(f("10"), f("-1")), "INCREX", "n", "BYFLOAT", "-1", "LBOUND", "-0.5", "EXAT", "99999999999")
		docCase(t, p, ":99999999999\r\n", "EXPIRETIME", "n")
		docCase(t, p, pair(f("0"), f("0")), "INCREX", "nokey", "BYFLOAT", "1", "LBOUND", "2", "UBOUND", "3")
		docCase(t, p, ":0\r\n", "EXISTS", "nokey")
		// Past LDBL_MAX without bounds: skipped (the current value, 4933
		// digits, which the test client reads as a RESP2 bulk only, and 0).
		docCase(t, p, "+OK\r\n", "SET", "big", "1e4932")
		if proto == 2 {
			if r := p.Keyhive().Do("INCREX", "big", "BYFLOAT", "1e4932"); len(r.Elems) != 2 || len(r.Elems[0].Str) != 4933 || string(r.Elems[1].Raw) != f("0") {
				t.Errorf("INCREX past LDBL_MAX: %.80q", r.Raw)
			}
		}
		docCase(t, p, "$6\r\n1e4932\r\n", "GET", "big")
		docCase(t, p, "-ERR increment would produce NaN or Infinity\r\n", "INCREX", "n", "BYFLOAT", "inf")

		// Errors: the options, then the expiry, then the key.
		for _, bad := range [][]any{
			{"INCREX", "k", "BYINT", "1", "BYFLOAT", "1"}, {"INCREX", "k", "BYINT", "1", "BYINT", "2"},
			{"INCREX", "k", "EX", "10", "PX", "10"}, {"INCREX", "k", "EX", "10", "PERSIST"},
			{"INCREX", "k", "ENX"}, {"INCREX", "k", "PERSIST", "ENX"}, {"INCREX", "k", "BYINT"},
			{"INCREX", "k", "UBOUND"}, {"INCREX", "k", "FOO"}, {"INCREX", "k", "SATURATE", "SATURATE"},
			{"INCREX", "k", "KEEPTTL"},
		} {
			docCase(t, p, "-ERR syntax error\r\n", bad...)
		}
		notInt := "-ERR value is not an integer or out of range\r\n"
		docCase(t, p, notInt, "INCREX", "k", "BYINT", "1.5")
		docCase(t, p, notInt, "INCREX", "k", "UBOUND", "x")
		docCase(t, p, notInt, "INCREX", "k", "EX", "x")
		docCase(t, p, "-ERR value is not a valid float\r\n", "INCREX", "k", "BYFLOAT", "x")
		docCase(t, p, "-ERR value is not a valid float\r\n", "INCREX", "k", "BYFLOAT", "1", "LBOUND", "x")
		docCase(t, p, "-ERR LBOUND must not be greater than UBOUND\r\n", "INCREX", "k", "LBOUND", "5", "UBOUND", "1")
		docCase(t, p, "-ERR LBOUND must not be greater than UBOUND\r\n", "INCREX", "k", "BYFLOAT", "1", "LBOUND", "0.5", "UBOUND", "0.25")
		docCase(t, p, "-ERR invalid expire time in 'increx' command\r\n", "INCREX", "k", "EX", "0")
		docCase(t, p, "-ERR invalid expire time in 'increx' command\r\n", "INCREX", "k", "PXAT", "-1")
		docCase(t, p, "-ERR wrong number of arguments for 'increx' command\r\n", "INCREX")
		p.Keyhive().Do("SET", "s", "abc")
		docCase(t, p, notInt, "INCREX", "s")
		docCase(t, p, "-ERR value is not a valid float\r\n", "INCREX", "s", "BYFLOAT", "1")
		p.Keyhive().Do("LPUSH", "list", "x")
		docCase(t, p, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "INCREX", "list")
		docCase(t, p, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "INCREX", "list", "BYFLOAT", "1")
		p.Keyhive().Do("FLUSHALL")
	}
}

// TestIncrexCommandTable: COMMAND INFO and GETKEYS of INCREX from its spec,
// as the page's header gives them (arity -2; write, denyoom, fast;
// @write @string @fast; one RW access update key at index 1).
func TestIncrexCommandTable(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.Start(t)
	info := p.Keyhive().Do("COMMAND", "INFO", "increx").Elems[0]
	var got []string
	for _, e := range info.Elems[:7] {
		got = append(got, string(e.Raw))
	}
	want := "$6\r\nincrex\r\n :-2\r\n *3\r\n+write\r\n+denyoom\r\n+fast\r\n :1\r\n :1\r\n :1\r\n *3\r\n+@write\r\n+@string\r\n+@fast\r\n"
	if strings.Join(got, " ") != want {
		t.Errorf("COMMAND INFO increx: %q, want %q", strings.Join(got, " "), want)
	}
	docCase(t, p, "*1\r\n$1\r\nk\r\n", "COMMAND", "GETKEYS", "INCREX", "k", "LBOUND", "0", "EX", "10")
	if d := p.Keyhive().Do("COMMAND", "DOCS", "increx").Raw; !strings.Contains(string(d), "8.8.0") || !strings.Contains(string(d), "ENX") {
		t.Errorf("COMMAND DOCS increx: %q", d)
	}
}

// TestIncrexDispatch: INCREX inside MULTI, from a script, and its events.
func TestIncrexDispatch(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.StartIsolated(t)
	docCase(t, p, "+OK\r\n", "MULTI")
	docCase(t, p, "+QUEUED\r\n", "INCREX", "m", "BYINT", "2", "EX", "100")
	docCase(t, p, "+QUEUED\r\n", "INCREX", "m", "UBOUND", "2")
	docCase(t, p, "+QUEUED\r\n", "INCREX", "m", "BYINT", "x")
	docCase(t, p, "*3\r\n*2\r\n:2\r\n:2\r\n*2\r\n:2\r\n:0\r\n-ERR value is not an integer or out of range\r\n", "EXEC")
	docCase(t, p, ":100\r\n", "TTL", "m")
	// A rate limiter as the page's pattern: capped, the window set once.
	script := "return redis.call('INCREX', KEYS[1], 'BYINT', ARGV[1], 'UBOUND', '10', 'SATURATE', 'EX', '60', 'ENX')"
	docCase(t, p, "*2\r\n:7\r\n:7\r\n", "EVAL", script, "1", "rl", "7")
	docCase(t, p, "*2\r\n:10\r\n:3\r\n", "EVAL", script, "1", "rl", "7")
	docCase(t, p, "*2\r\n:10\r\n:0\r\n", "EVAL", script, "1", "rl", "7")
	docCase(t, p, ":60\r\n", "TTL", "rl")
	docCase(t, p, "*2\r\n$3\r\n1.5\r\n$3\r\n1.5\r\n", "EVAL", "return redis.call('INCREX', KEYS[1], 'BYFLOAT', '1.5')", "1", "fl")
	bad := "return redis.call('INCREX', KEYS[1], 'ENX')"
	docCase(t, p, fmt.Sprintf("-ERR syntax error script: %x, on @user_script:1.\r\n", sha1.Sum([]byte(bad))), "EVAL", bad, "1", "rl")

	// Events: INCRBY's or INCRBYFLOAT's, then expire or persist; none when
	// a bound skips the increment.
	k := p.Keyhive()
	docCase(t, p, "+OK\r\n", "CONFIG", "SET", "notify-keyspace-events", "KEA")
	expect := expectEvents(t, p, k)
	expect([]string{"__keyevent@0__:incrby e"}, "INCREX", "e")
	expect([]string{"__keyevent@0__:incrby e", "__keyevent@0__:expire e"}, "INCREX", "e", "EX", "100")
	expect([]string{"__keyevent@0__:incrby e"}, "INCREX", "e", "EX", "10", "ENX")
	expect([]string{"__keyevent@0__:incrby e", "__keyevent@0__:persist e"}, "INCREX", "e", "PERSIST")
	expect([]string{"__keyevent@0__:incrby e"}, "INCREX", "e", "PERSIST")
	expect(nil, "INCREX", "e", "UBOUND", "0")
	expect([]string{"__keyevent@0__:incrbyfloat e"}, "INCREX", "e", "BYFLOAT", "0.5")
}

// TestIncrexPropagation: INCREX propagates the SET that replays it, as
// INCRBYFLOAT does (the value stored, not the arithmetic): a TTL it gives
// as PXAT (a relative one made absolute), a TTL it keeps as KEEPTTL, none
// as a plain SET; nothing when a bound skipped it or it failed.
func TestIncrexPropagation(t *testing.T) {
	s := startKeyhiveProp(t)
	s.collect()
	for _, step := range []propStep{
		w("INCREX p", "SET p 1"),
		w("INCREX p BYINT 5 EX 100", "SET p 6 PXAT {+100000}"),
		w("INCREX p EX 10 ENX", "SET p 7 KEEPTTL"),
		w("INCREX p", "SET p 8 KEEPTTL"),
		w("INCREX p PERSIST", "SET p 9"),
		w("INCREX p UBOUND 9"),
		w("INCREX p UBOUND 9 SATURATE", "SET p 9"),
		w("INCREX p BYINT -1 PXAT 9999999999000", "SET p 8 PXAT 9999999999000"),
		w("INCREX p BYINT x"),
		w("INCREX f BYFLOAT 0.1 PX 5000", "SET f 0.1 PXAT {+5000}"),
		w("INCREX f BYFLOAT 10.4 UBOUND 5 SATURATE", "SET f 5 KEEPTTL"),
	} {
		t0 := time.Now().UnixMilli()
		reply := s.conn.do(t, step.cmd...)
		t1 := time.Now().UnixMilli()
		if err := matchPropagated(s.collect(), step.want, 0, t0, t1); err != nil {
			t.Errorf("%q (reply %v): %v", step.cmd, reply, err)
		}
	}
}
