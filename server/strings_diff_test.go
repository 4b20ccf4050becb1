package server_test

// Differential tests of the string commands against redis-server. Wrong-type
// cases are not covered yet: Keyhive has no command that creates a non-string
// value.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// skBinary are values and key suffixes that a text-minded implementation gets
// wrong: empty, NUL bytes, CRLF, invalid UTF-8, something that looks like RESP.
var skBinary = []string{"", "\x00", "a\x00b", "\r\n", "\xff\xfe\x80", "line1\r\nline2", "*1\r\n$3\r\nfoo\r\n", " ", "$-1"}

// skFuture returns a Unix time in seconds and in ms d from now.
func skFuture(d time.Duration) (sec, ms string) {
	t := time.Now().Add(d)
	return strconv.FormatInt(t.Unix(), 10), strconv.FormatInt(t.UnixMilli(), 10)
}

func TestStringGetSetBasic(t *testing.T) {
	p := difftest.Start(t)
	p.Do("GET", "missing")
	p.Do("SET", "k", "v")
	p.Do("GET", "k")
	p.Do("SET", "k", "v2")
	p.Do("GET", "k")
	p.Do("set", "k", "lower")
	p.Do("gEt", "k")
	p.Do("SET", "", "empty key")
	p.Do("GET", "")
	p.Do("SET", "ek", "")
	p.Do("GET", "ek")
	p.Do("STRLEN", "ek")
	p.Do("EXISTS", "ek")
	for i, v := range skBinary {
		key := "bin\x00\r\n\xff" + strconv.Itoa(i)
		p.Do("SET", key, v)
		p.Do("GET", key)
		p.Do("STRLEN", key)
		p.Do("SET", v, key)
		p.Do("GET", v)
	}
	big := strings.Repeat("0123456789", 20000)
	p.Do("SET", "big", big)
	p.Do("GET", "big")
	p.Do("STRLEN", "big")
	// A plain SET drops the previous TTL.
	p.Do("SET", "t", "v", "EX", "100")
	p.Do("SET", "t", "w")
	skState(t, p, "t")
	// Arity.
	p.Do("GET")
	p.Do("GET", "a", "b")
	p.Do("SET", "k")
	p.Do("SET")
	p.Do("STRLEN")
	p.Do("STRLEN", "a", "b")
}

// TestStringSetOptions runs SET with every pair of options (in both orders)
// on a missing key, a key without TTL and a key with a TTL.
func TestStringSetOptions(t *testing.T) {
	p := difftest.Start(t)
	exat, pxat := skFuture(1000 * time.Second)
	opts := [][]string{
		{"NX"}, {"XX"}, {"GET"}, {"KEEPTTL"},
		{"EX", "100"}, {"PX", "100000"}, {"EXAT", exat}, {"PXAT", pxat},
		{"nx"}, {"get"}, {"keepttl"}, {"ex", "50"}, {"pxat", pxat},
	}
	setup := func(state int) {
		p.Do("DEL", "k")
		switch state {
		case 1:
			p.Do("SET", "k", "old")
		case 2:
			p.Do("SET", "k", "old", "EX", "500")
		}
	}
	for state := range 3 {
		for _, a := range opts {
			setup(state)
			p.Do("SET", "k", "new", a)
			skState(t, p, "k")
			for _, b := range opts {
				setup(state)
				p.Do("SET", "k", "new", a, b)
				skState(t, p, "k")
			}
		}
		// A few triples, including GET with NX and XX (allowed since 7.0).
		for _, c := range [][]string{
			{"NX", "GET", "EX", "100"}, {"XX", "GET", "KEEPTTL"}, {"GET", "XX", "PX", "5000"},
			{"NX", "XX", "GET"}, {"KEEPTTL", "GET", "EX", "10"}, {"GET", "GET", "GET"},
			{"NX", "NX"}, {"XX", "XX"}, {"KEEPTTL", "KEEPTTL"},
			{"EX", "10", "EX", "20"}, {"PX", "10000", "PX", "20000"}, {"EXAT", exat, "EXAT", exat},
			{"PXAT", pxat, "PXAT", pxat}, {"EX", "10", "NX", "EX", "20"},
			{"PERSIST"}, {"EX"}, {"PX"}, {"EXAT"}, {"PXAT"}, {"GET", "EX"}, {"FOO"}, {"EX", "10", "FOO"},
			{"NX\x00"}, {"E"}, {"EXX", "10"},
		} {
			setup(state)
			p.Do("SET", "k", "new", c)
			skState(t, p, "k")
		}
	}
}

// TestStringSetExpireValues feeds every expire option odd numbers: zero,
// negative, not integers, and values overflowing the ms conversion or the
// addition of the current time.
func TestStringSetExpireValues(t *testing.T) {
	p := difftest.Start(t)
	values := []string{
		"0", "-1", "1.5", "abc", "", " 10", "10 ", "+10", "010", "-0", "0x10",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808",
		"9223372036854775", "9223372036854776", "9223372036854775000",
		"92233720368547758", "9223372036854", "1", "2", "100",
	}
	for _, opt := range []string{"EX", "PX", "EXAT", "PXAT"} {
		for _, v := range values {
			if opt == "PX" && (v == "1" || v == "2") {
				continue // would expire between commands on one server only
			}
			p.Do("SET", "k", "old")
			p.Do("SET", "k", "new", opt, v)
			skState(t, p, "k")
			p.Do("DEL", "k")
			p.Do("SET", "k", "new", opt, v, "GET")
			skState(t, p, "k")
			p.Do("SETEX", "k", v, "x")
			p.Do("PSETEX", "k", v, "x")
			p.Do("SET", "k", "x") // PSETEX 1 would race with the next command
			p.Do("GETEX", "k", opt, v)
			skState(t, p, "k")
			p.Do("GETEX", "missing", opt, v)
		}
	}
}

// TestStringSetPastExpire sets keys with absolute times in the past.
func TestStringSetPastExpire(t *testing.T) {
	p := difftest.Start(t)
	for _, opt := range [][]string{{"EXAT", "1"}, {"PXAT", "1"}, {"PXAT", "1000"}, {"EXAT", "1000000000"}} {
		p.Do("SET", "k", "v", opt)
		skState(t, p, "k")
		p.Do("SET", "k", "v")
		p.Do("SET", "k", "v2", opt, "GET")
		skState(t, p, "k")
		p.Do("SET", "k", "v3", opt, "XX")
		skState(t, p, "k")
		p.Do("SET", "k", "v3", opt, "NX")
		skState(t, p, "k")
	}
}

func TestStringSetGetNXXX(t *testing.T) {
	p := difftest.Start(t)
	p.Do("SET", "k", "v", "NX")
	p.Do("SET", "k", "w", "NX")
	p.Do("GET", "k")
	p.Do("SET", "k", "w", "XX")
	p.Do("GET", "k")
	p.Do("SET", "m", "w", "XX")
	p.Do("EXISTS", "m")
	p.Do("SET", "k", "x", "GET")
	p.Do("SET", "m", "x", "GET")
	p.Do("GET", "m")
	p.Do("SET", "k", "y", "NX", "GET")
	p.Do("GET", "k")
	p.Do("SET", "n", "y", "XX", "GET")
	p.Do("EXISTS", "n")
	p.Do("SET", "n", "y", "NX", "GET")
	p.Do("GET", "n")
	p.Do("SET", "k", "\x00\xff", "GET")
	p.Do("SET", "k", "z", "GET")
	// KEEPTTL keeps the TTL across SET, GET and XX.
	p.Do("SET", "t", "1", "PX", "100000")
	p.Do("SET", "t", "2", "KEEPTTL")
	skState(t, p, "t")
	p.Do("SET", "t", "3", "KEEPTTL", "XX", "GET")
	skState(t, p, "t")
	p.Do("SET", "t", "4")
	skState(t, p, "t")
	p.Do("SET", "t2", "1", "KEEPTTL")
	skState(t, p, "t2")
}

func TestStringSetexPsetex(t *testing.T) {
	p := difftest.Start(t)
	p.Do("SETEX", "k", "100", "v")
	skState(t, p, "k")
	p.Do("SETEX", "k", "200", "w")
	skState(t, p, "k")
	p.Do("PSETEX", "k", "100000", "x")
	skState(t, p, "k")
	p.Do("PSETEX", "k", "1", "x")
	skSleep(20)
	skState(t, p, "k")
	for _, v := range []string{"0", "-1", "abc", "", "1.5", "9223372036854775807", "9223372036854775", "-9223372036854775808"} {
		p.Do("SETEX", "e", v, "v")
		p.Do("PSETEX", "e", v, "v")
		p.Do("EXISTS", "e")
	}
	p.Do("SETEX", "e\x00", "100", "\r\n")
	skState(t, p, "e\x00")
	p.Do("SETEX", "k", "100")
	p.Do("SETEX", "k", "100", "v", "x")
	p.Do("PSETEX", "k")
	p.Do("setex", "k", "10", "v")
	p.Do("OBJECT", "ENCODING", "k")
}

func TestStringSetnxGetsetGetdel(t *testing.T) {
	p := difftest.Start(t)
	p.Do("SETNX", "k", "v")
	p.Do("SETNX", "k", "w")
	p.Do("GET", "k")
	p.Do("SETNX", "", "")
	p.Do("GET", "")
	p.Do("SETNX", "k")
	p.Do("SETNX", "k", "v", "x")

	p.Do("GETSET", "g", "1")
	p.Do("GETSET", "g", "2")
	p.Do("GET", "g")
	p.Do("SET", "g", "ttl", "EX", "100")
	p.Do("GETSET", "g", "3") // drops the TTL
	skState(t, p, "g")
	p.Do("GETSET", "g", "\x00\r\n")
	p.Do("GETSET", "g", "")
	p.Do("GET", "g")
	p.Do("GETSET", "g")

	p.Do("GETDEL", "missing")
	p.Do("SET", "d", "v", "PX", "100000")
	p.Do("GETDEL", "d")
	p.Do("GETDEL", "d")
	skState(t, p, "d")
	p.Do("SET", "d", "")
	p.Do("GETDEL", "d")
	p.Do("EXISTS", "d")
	p.Do("GETDEL")
	p.Do("GETDEL", "a", "b")
	p.Do("SET", "d", "123")
	p.Do("GETDEL", "d")
}

func TestStringGetex(t *testing.T) {
	p := difftest.Start(t)
	exat, pxat := skFuture(1000 * time.Second)
	p.Do("GETEX", "missing")
	p.Do("GETEX", "missing", "EX", "10")
	p.Do("GETEX", "missing", "EX", "-5")
	p.Do("GETEX", "missing", "PX", "abc")
	p.Do("GETEX", "missing", "PERSIST")
	p.Do("EXISTS", "missing")
	p.Do("SET", "k", "v")
	p.Do("GETEX", "k")
	skState(t, p, "k")
	for _, opt := range [][]string{
		{"EX", "100"}, {"PX", "200000"}, {"EXAT", exat}, {"PXAT", pxat}, {"PERSIST"},
		{"ex", "100"}, {"persist"}, {"EX", "100", "PERSIST"}, {"PERSIST", "EX", "100"},
		{"PERSIST", "PERSIST"}, {"EX", "10", "EX", "20"}, {"PX", "10000", "PX", "20000"},
		{"EX", "10", "PX", "20000"}, {"EXAT", exat, "PXAT", pxat}, {"KEEPTTL"}, {"NX"}, {"XX"}, {"GET"},
		{"EX"}, {"PX"}, {"FOO"}, {"EX", "0"}, {"EX", "-1"}, {"PX", "0"}, {"EXAT", "0"}, {"PXAT", "-1"},
		{"EX", "9223372036854775807"}, {"PX", "9223372036854775807"}, {"PXAT", "9223372036854775807"},
	} {
		p.Do("SET", "k", "v", "EX", "500")
		p.Do("GETEX", "k", opt)
		skState(t, p, "k")
		p.Do("SET", "k", "v")
		p.Do("GETEX", "k", opt)
		skState(t, p, "k")
	}
	// A time in the past deletes the key, after replying with its value.
	for _, opt := range [][]string{{"EXAT", "1"}, {"PXAT", "1"}, {"PXAT", "1000"}} {
		p.Do("SET", "k", "gone")
		p.Do("GETEX", "k", opt)
		skState(t, p, "k")
	}
	// A short TTL set by GETEX expires.
	p.Do("SET", "s", "v")
	p.Do("GETEX", "s", "PX", "30")
	skSleep(60)
	skState(t, p, "s")
	p.Do("GETEX")
}

func TestStringMgetMset(t *testing.T) {
	p := difftest.Start(t)
	p.Do("MGET", "a", "b", "c")
	p.Do("MSET", "a", "1", "b", "2")
	p.Do("MGET", "a", "b", "c", "a", "")
	p.Do("MSET", "a", "1", "b")
	p.Do("MSET", "a")
	p.Do("MSET")
	p.Do("MGET")
	p.Do("MSET", "x", "1", "x", "2", "x", "3")
	p.Do("GET", "x")
	p.Do("SET", "t", "v", "EX", "100")
	p.Do("MSET", "t", "w", "u", "z")
	skState(t, p, "t")
	args := []string{"MSET"}
	for i, v := range skBinary {
		args = append(args, "bin"+strconv.Itoa(i)+v, v)
	}
	p.Do(args)
	mget := []string{"MGET"}
	for i := 1; i < len(args); i += 2 {
		mget = append(mget, args[i])
	}
	p.Do(mget)

	p.Do("MSETNX", "n1", "1", "n2", "2")
	p.Do("MGET", "n1", "n2")
	p.Do("MSETNX", "n3", "3", "n1", "x")
	p.Do("MGET", "n1", "n2", "n3")
	p.Do("MSETNX", "n4", "a", "n4", "b")
	p.Do("GET", "n4")
	p.Do("MSETNX", "n5", "1", "n6")
	p.Do("MSETNX", "n5")
	p.Do("MSETNX")
	p.Do("EXISTS", "n5", "n6")
	// An expired key does not block MSETNX.
	p.Do("SET", "e", "v", "PX", "20")
	skSleep(50)
	p.Do("MSETNX", "e", "new", "n7", "7")
	p.Do("MGET", "e", "n7")
	p.Do("mset", "lower", "case")
	p.Do("mget", "lower")
}

func TestStringAppendStrlen(t *testing.T) {
	p := difftest.Start(t)
	p.Do("APPEND", "k", "abc")
	p.Do("APPEND", "k", "def")
	p.Do("GET", "k")
	p.Do("APPEND", "k", "")
	p.Do("STRLEN", "k")
	p.Do("APPEND", "e", "")
	p.Do("EXISTS", "e")
	p.Do("GET", "e")
	p.Do("APPEND", "b", "\x00")
	p.Do("APPEND", "b", "\r\n\xff")
	p.Do("GET", "b")
	p.Do("STRLEN", "b")
	p.Do("SET", "n", "12")
	p.Do("APPEND", "n", "3")
	p.Do("GET", "n")
	p.Do("INCR", "n")
	p.Do("SET", "t", "v", "EX", "100")
	p.Do("APPEND", "t", "w")
	skState(t, p, "t")
	p.Do("STRLEN", "missing")
	p.Do("SET", "i", "-12345")
	p.Do("STRLEN", "i")
	for range 50 {
		p.Do("APPEND", "grow", "0123456789")
	}
	p.Do("GET", "grow")
	p.Do("APPEND", "k")
	p.Do("APPEND", "k", "a", "b")
}

func TestStringIncrDecr(t *testing.T) {
	p := difftest.Start(t)
	p.Do("INCR", "k")
	p.Do("INCR", "k")
	p.Do("DECR", "k")
	p.Do("DECR", "k")
	p.Do("DECR", "k")
	p.Do("INCRBY", "k", "10")
	p.Do("INCRBY", "k", "-20")
	p.Do("DECRBY", "k", "5")
	p.Do("DECRBY", "k", "-5")
	p.Do("DECR", "new")
	p.Do("INCRBY", "new2", "7")
	p.Do("DECRBY", "new3", "7")
	p.Do("GET", "k")
	for _, v := range []string{
		"abc", "", " 1", "1 ", "+1", "01", "-0", "1.0", "1e3", "0x10", "\x001", "1\x00",
		"9223372036854775808", "-9223372036854775809", "123456789012345678901", "--1", "-",
	} {
		p.Do("SET", "bad", v)
		p.Do("INCR", "bad")
		p.Do("DECR", "bad")
		p.Do("INCRBY", "bad", "1")
		p.Do("DECRBY", "bad", "1")
		p.Do("GET", "bad")
		p.Do("INCRBY", "k", v)
		p.Do("DECRBY", "k", v)
	}
	// 64-bit boundaries.
	p.Do("SET", "max", "9223372036854775807")
	p.Do("INCR", "max")
	p.Do("INCRBY", "max", "1")
	p.Do("INCRBY", "max", "0")
	p.Do("DECRBY", "max", "-1")
	p.Do("DECR", "max")
	p.Do("INCR", "max")
	p.Do("GET", "max")
	p.Do("SET", "min", "-9223372036854775808")
	p.Do("DECR", "min")
	p.Do("DECRBY", "min", "1")
	p.Do("INCRBY", "min", "-1")
	p.Do("INCR", "min")
	p.Do("DECR", "min")
	p.Do("GET", "min")
	p.Do("SET", "z", "0")
	p.Do("INCRBY", "z", "-9223372036854775808")
	p.Do("SET", "z", "0")
	p.Do("DECRBY", "z", "-9223372036854775808")
	p.Do("DECRBY", "z", "9223372036854775807")
	p.Do("DECRBY", "z", "1")
	p.Do("DECRBY", "z", "1")
	p.Do("SET", "z", "1")
	p.Do("INCRBY", "z", "9223372036854775807")
	p.Do("INCRBY", "z", "9223372036854775806")
	p.Do("SET", "z", "-1")
	p.Do("DECRBY", "z", "9223372036854775807")
	p.Do("DECRBY", "z", "1")
	p.Do("SET", "z", "-2")
	p.Do("DECRBY", "z", "9223372036854775807")
	p.Do("INCRBY", "z", "9223372036854775808")
	p.Do("INCRBY", "z", "-9223372036854775809")
	// TTL is kept; an expired key counts from 0.
	p.Do("SET", "t", "5", "EX", "100")
	p.Do("INCR", "t")
	skState(t, p, "t")
	p.Do("SET", "t", "5", "PX", "20")
	skSleep(50)
	p.Do("INCR", "t")
	skState(t, p, "t")
	// Arity.
	p.Do("INCR")
	p.Do("INCR", "a", "b")
	p.Do("DECR")
	p.Do("INCRBY", "a")
	p.Do("DECRBY", "a", "1", "2")
}

func TestStringIncrByFloat(t *testing.T) {
	p := difftest.Start(t)
	type tc struct{ start, incr string }
	cases := []tc{
		{"", "1"}, {"", "0"}, {"", "-0"}, {"", "1.5"}, {"", "-1.5"},
		{"10.5", "0.1"}, {"0.1", "0.2"}, {"1.1", "2.2"}, {"3.0e3", "200"}, {"5.0e3", "0"},
		{"5.0E3", "1"}, {"10", "1.5"}, {"-5", "2.5"}, {"1", "-1"}, {"0", "-0.0"},
		{"9223372036854775807", "1"}, {"100000000000000000", "1"}, {"1e17", "1"},
		{"1.23456789012345678901234", "0"}, {"3.141592653589793238462643", "0"},
		{"1e-20", "0"}, {"1e-17", "0"}, {"5e-18", "0"}, {"-1e-20", "0"}, {"1e20", "0.5"},
		{"1e300", "1e300"}, {"1e308", "1e308"}, {"1.7976931348623157e308", "1e308"},
		{"1e4000", "1"}, {"1e4932", "1e4932"}, {"-1e4932", "-1e4932"}, {"", "1e-4940"},
		{"", "inf"}, {"", "-inf"}, {"", "+inf"}, {"", "Infinity"}, {"", "INF"}, {"inf", "1"},
		{"", "nan"}, {"", "NaN"}, {"nan", "1"}, {"", "-nan"},
		{"", "0x10"}, {"", "0X1p-2"}, {"0x10", "1"}, {"", "0x"}, {"", "0x1.8p1"},
		{"", " 1"}, {"", "1 "}, {"", "\t1"}, {"", "1\n"}, {" 1", "1"}, {"1 ", "1"},
		{"", ".5"}, {"", "5."}, {"", "1e"}, {"", "e1"}, {"", "--1"}, {"", "1_000"}, {"", ""},
		{"", "+1.5"}, {"", "1e+2"}, {"", "1e-2"}, {"", "0b1"}, {"", "0o7"}, {"", "1.5.5"},
		{"abc", "1"}, {"", "abc"}, {"", "\x00"}, {"1\x00", "1"}, {"", "1,5"},
		{"", "00012.5"}, {"", "-00.5"}, {"", strings.Repeat("1", 300)}, {"", "0." + strings.Repeat("0", 5200) + "1"},
		{"", "123456789.123456789"}, {"", "0.30000000000000004"}, {"2.5", "-2.5"}, {"-2.5", "2.5"},
	}
	for _, c := range cases {
		p.Do("DEL", "f")
		if c.start != "" {
			p.Do("SET", "f", c.start)
		}
		p.Do("INCRBYFLOAT", "f", c.incr)
		p.Do("GET", "f")
		p.Do("OBJECT", "ENCODING", "f")
	}
	t.Run("OutOfRangeLiterals", func(t *testing.T) {
		// strtold reports ERANGE for these and Redis rejects them as not a float.
		p := difftest.Start(t)
		for _, c := range []tc{{"1e5000", "0"}, {"1e-5000", "0"}, {"", "1e5000"}, {"", "-1e5000"}, {"", "1e-5000"}} {
			p.Do("DEL", "f")
			if c.start != "" {
				p.Do("SET", "f", c.start)
			}
			p.Do("INCRBYFLOAT", "f", c.incr)
			p.Do("GET", "f")
		}
	})
	// Repeated increments accumulate in long double precision.
	p.Do("DEL", "acc")
	for range 30 {
		p.Do("INCRBYFLOAT", "acc", "0.1")
	}
	for range 30 {
		p.Do("INCRBYFLOAT", "acc", "-0.3")
	}
	// TTL is kept.
	p.Do("SET", "t", "1.5", "EX", "100")
	p.Do("INCRBYFLOAT", "t", "1")
	skState(t, p, "t")
	p.Do("INCRBYFLOAT", "f")
	p.Do("INCRBYFLOAT", "f", "1", "2")
	p.Do("incrbyfloat", "lower", "1e1")
}

func TestStringGetrange(t *testing.T) {
	p := difftest.Start(t)
	p.Do("SET", "k", "Hello, World")
	p.Do("SET", "n", "1234567")
	p.Do("SET", "e", "")
	p.Do("SET", "b", "\x00\r\n\xff")
	ranges := [][2]string{
		{"0", "-1"}, {"0", "0"}, {"0", "4"}, {"-5", "-1"}, {"-1", "-5"}, {"5", "3"}, {"-3", "-3"},
		{"0", "100"}, {"100", "200"}, {"-100", "-50"}, {"-100", "100"}, {"11", "11"}, {"12", "12"},
		{"-1", "0"}, {"3", "-1"}, {"-12", "-12"}, {"-13", "-13"}, {"-13", "0"},
		{"9223372036854775807", "9223372036854775807"}, {"-9223372036854775808", "9223372036854775807"},
		{"-9223372036854775808", "-9223372036854775808"}, {"0", "-9223372036854775808"},
		{"a", "1"}, {"1", "b"}, {"", "1"}, {"9223372036854775808", "1"}, {"1.5", "2"}, {" 1", "2"},
	}
	for _, key := range []string{"k", "n", "e", "b", "missing"} {
		for _, r := range ranges {
			p.Do("GETRANGE", key, r[0], r[1])
		}
	}
	p.Do("SUBSTR", "k", "0", "2")
	p.Do("GETRANGE", "k", "0")
	p.Do("GETRANGE", "k", "0", "1", "2")
}

func TestStringSetrange(t *testing.T) {
	p := difftest.Start(t)
	p.Do("SETRANGE", "k", "0", "Hello")
	p.Do("SETRANGE", "k", "6", "World")
	p.Do("GET", "k")
	p.Do("SETRANGE", "k", "1", "a")
	p.Do("GET", "k")
	p.Do("SETRANGE", "k", "20", "!")
	p.Do("GET", "k")
	p.Do("SETRANGE", "p", "5", "pad")
	p.Do("GET", "p")
	p.Do("SETRANGE", "k", "3", "")
	p.Do("GET", "k")
	p.Do("SETRANGE", "missing", "0", "")
	p.Do("SETRANGE", "missing", "100", "")
	p.Do("SETRANGE", "missing", "536870912", "")
	p.Do("SETRANGE", "missing", "9223372036854775807", "")
	p.Do("EXISTS", "missing")
	p.Do("SETRANGE", "k", "-1", "x")
	p.Do("SETRANGE", "missing", "-1", "")
	p.Do("SETRANGE", "k", "abc", "x")
	p.Do("SETRANGE", "k", "", "x")
	p.Do("SETRANGE", "k", "1.5", "x")
	p.Do("SETRANGE", "k", "9223372036854775808", "x")
	p.Do("SETRANGE", "k", "536870912", "x")
	p.Do("SETRANGE", "k", "536870911", "xx")
	p.Do("SETRANGE", "k", "9223372036854775807", "x")
	p.Do("SETRANGE", "k", "9223372036854775806", "xx")
	p.Do("SETRANGE", "big", "4611686018427387904", "x")
	p.Do("SETRANGE", "big", "536870912", "")
	p.Do("GET", "k")
	p.Do("EXISTS", "big")
	// Binary data and in-place patches.
	p.Do("SET", "b", "\x00\x00\x00\x00")
	p.Do("SETRANGE", "b", "1", "\xff\r\n")
	p.Do("GET", "b")
	p.Do("SETRANGE", "b", "4", "\x00")
	p.Do("GET", "b")
	// Integer-encoded values are patched as strings.
	p.Do("SET", "n", "12345")
	p.Do("SETRANGE", "n", "1", "x")
	p.Do("GET", "n")
	p.Do("SET", "n", "12345")
	p.Do("SETRANGE", "n", "0", "9")
	p.Do("INCR", "n")
	// TTL is kept.
	p.Do("SET", "t", "abc", "EX", "100")
	p.Do("SETRANGE", "t", "1", "X")
	skState(t, p, "t")
	p.Do("SETRANGE", "t", "10", "X")
	skState(t, p, "t")
	p.Do("SETRANGE", "k", "1")
	p.Do("SETRANGE", "k", "1", "a", "b")
}

// TestStringBulkLimit checks the proto-max-bulk-len limit on SETRANGE and
// APPEND at its smallest allowed value, 1mb.
func TestStringBulkLimit(t *testing.T) {
	p := difftest.Start(t, "--proto-max-bulk-len", "1mb")
	p.Do("SETRANGE", "k", "1048575", "x")
	p.Do("STRLEN", "k")
	p.Do("GETRANGE", "k", "-3", "-1")
	p.Do("SETRANGE", "k", "1048575", "yz")
	p.Do("SETRANGE", "k", "1048576", "y")
	p.Do("SETRANGE", "k", "1048576", "")
	p.Do("APPEND", "k", "x")
	p.Do("APPEND", "k", "")
	p.Do("SETRANGE", "k2", "1048576", "x")
	p.Do("EXISTS", "k2")
	p.Do("SET", "a", strings.Repeat("a", 1048570))
	p.Do("APPEND", "a", "123456")
	p.Do("APPEND", "a", "7")
	p.Do("STRLEN", "a")
	p.Do("DEL", "k", "a")
}

// TestStringObjectEncoding checks OBJECT ENCODING and REFCOUNT of the values
// every string-creating command produces.
func TestStringObjectEncoding(t *testing.T) {
	p := difftest.Start(t)
	check := func(key string) {
		t.Helper()
		p.Do("OBJECT", "ENCODING", key)
		p.Do("OBJECT", "REFCOUNT", key)
	}
	values := []string{
		"123", "0", "9999", "10000", "-1", "0123", "-123", "-0", "+1", "1.5", " 1", "1 ", "",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
		"12345678901234567890", "abc", "\x00", strings.Repeat("a", 44), strings.Repeat("a", 45),
		strings.Repeat("1", 44), strings.Repeat("x", 1000),
	}
	for i, v := range values {
		k := "v" + strconv.Itoa(i)
		p.Do("SET", k, v)
		check(k)
		p.Do("SET", k, v, "EX", "100")
		check(k)
		p.Do("SET", k, v, "KEEPTTL")
		check(k)
		p.Do("DEL", k)
		p.Do("SETNX", k, v)
		check(k)
		p.Do("SETEX", k, "100", v)
		check(k)
		p.Do("PSETEX", k, "100000", v)
		check(k)
		p.Do("GETSET", k, v)
		check(k)
		p.Do("MSET", k, v, "other", v)
		check(k)
		check("other")
		p.Do("DEL", k)
		p.Do("MSETNX", k, v)
		check(k)
		p.Do("DEL", k)
		p.Do("APPEND", k, v)
		check(k)
		p.Do("APPEND", k, "")
		check(k)
		p.Do("DEL", k)
		p.Do("SETRANGE", k, "0", v)
		check(k)
		p.Do("GETEX", k, "EX", "100")
		check(k)
	}
	p.Do("SET", "s", "abc")
	p.Do("APPEND", "s", "d")
	check("s")
	p.Do("SET", "s", "123")
	p.Do("APPEND", "s", "4")
	check("s")
	p.Do("SET", "s", "abc")
	p.Do("SETRANGE", "s", "0", "x")
	check("s")
	p.Do("SET", "s", "abc")
	p.Do("SETRANGE", "s", "0", "")
	check("s")
	for _, v := range []string{"1", "9998", "9999", "10000", "-5", "123456789", "9223372036854775806"} {
		p.Do("SET", "i", v)
		p.Do("INCR", "i")
		check("i")
		p.Do("DECR", "i")
		check("i")
		p.Do("SET", "i", v, "EX", "100")
		p.Do("INCRBY", "i", "1")
		check("i")
	}
	p.Do("DEL", "i")
	p.Do("INCR", "i")
	check("i")
	p.Do("SET", "i", "abc0")
	p.Do("SET", "i", "0123")
	p.Do("INCR", "i")
	p.Do("SET", "i", strings.Repeat("1", 19))
	p.Do("INCR", "i")
	check("i")
	for _, v := range []string{"1", "1.5", "1e50", "-1e44", "1e43", "123"} {
		p.Do("DEL", "f")
		p.Do("INCRBYFLOAT", "f", v)
		check("f")
		p.Do("INCRBYFLOAT", "f", "0")
		check("f")
	}
	p.Do("SET", "f", "5")
	p.Do("INCRBYFLOAT", "f", "1")
	check("f")
	p.Do("INCR", "f")
	check("f")
	p.Do("OBJECT", "ENCODING", "missing")
	p.Do("OBJECT", "REFCOUNT", "missing")
}

// TestStringExpireLazy lets short TTLs pass and checks that every string
// command sees the key as gone.
func TestStringExpireLazy(t *testing.T) {
	p := difftest.Start(t)
	cmds := [][]string{
		{"GET", "k"}, {"STRLEN", "k"}, {"GETRANGE", "k", "0", "-1"}, {"APPEND", "k", "x"},
		{"INCR", "k"}, {"INCRBYFLOAT", "k", "1.5"}, {"SETRANGE", "k", "2", "x"}, {"GETDEL", "k"},
		{"GETEX", "k", "EX", "100"}, {"GETSET", "k", "new"}, {"SETNX", "k", "new"},
		{"SET", "k", "new", "NX"}, {"SET", "k", "new", "XX"}, {"SET", "k", "new", "GET"},
		{"SET", "k", "new", "KEEPTTL"}, {"MSETNX", "k", "new"}, {"MGET", "k", "k"},
	}
	// One key per case, all expiring together.
	for i, c := range cmds {
		key := "k" + strconv.Itoa(i)
		p.Do("SET", key, "5", "PX", "30")
		for j := range c {
			if c[j] == "k" {
				c[j] = key
			}
		}
	}
	p.Do("GET", "k0")
	skSleep(60)
	for i, c := range cmds {
		p.Do(c)
		skState(t, p, "k"+strconv.Itoa(i))
	}
	// KEEPTTL carries a short TTL to the new value.
	p.Do("SET", "k", "a", "PX", "50")
	p.Do("SET", "k", "b", "KEEPTTL")
	p.Do("GET", "k")
	skSleep(80)
	skState(t, p, "k")
}

// TestStringRESP3 checks replies whose RESP3 form differs from RESP2.
func TestStringRESP3(t *testing.T) {
	p := difftest.Start(t)
	p.Proto(3)
	p.Do("GET", "missing")
	p.Do("SET", "k", "v")
	p.Do("GET", "k")
	p.Do("MGET", "k", "missing", "k")
	p.Do("SET", "k", "w", "GET")
	p.Do("SET", "m", "w", "GET")
	p.Do("SET", "k", "x", "NX")
	p.Do("SET", "n", "x", "XX")
	p.Do("GETDEL", "missing")
	p.Do("GETEX", "missing")
	p.Do("GETSET", "missing2", "v")
	p.Do("INCRBYFLOAT", "f", "1.5")
	p.Do("INCR", "i")
	p.Do("GETRANGE", "missing", "0", "1")
	p.Do("SETRANGE", "r", "0", "x")
	p.Do("MSETNX", "a", "1")
	p.Do("SET", "k", "v", "EX", "0")
	p.Do("INCR", "k")
	p.Do("OBJECT", "ENCODING", "missing")
	p.Do("OBJECT", "ENCODING", "i")
	p.Proto(2)
	p.Do("GET", "missing")
}

// TestStringRandomOps runs a seeded random mix of string and key commands
// over a few keys, with values from empty to past Keyhive's large-entry size,
// so entries move between in-place rewrites, new chunks and compaction.
func TestStringRandomOps(t *testing.T) {
	p := difftest.Start(t)
	rng := rand.New(rand.NewPCG(2, 11)) // seed 2 caught a keyspace rewrite corrupting keys
	keys := []string{"r0", "r1", "r2", "r3", "r4", "{x}a", "{x}b", "{x}c", "", "\x00"}
	key := func() string { return keys[rng.IntN(len(keys))] }
	value := func() string {
		var n int
		switch rng.IntN(6) {
		case 0:
			return strconv.Itoa(rng.IntN(20000) - 10000)
		case 1:
			n = rng.IntN(3)
		case 2:
			n = 40 + rng.IntN(10)
		case 3:
			n = 100 + rng.IntN(300)
		case 4:
			n = 60000 + rng.IntN(10000)
		default:
			n = rng.IntN(40)
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = "ab\x00\r\n\xff0123456789"[rng.IntN(15)]
		}
		return string(b)
	}
	for range 2500 {
		switch rng.IntN(20) {
		case 0, 1:
			opts := [][]string{nil, {"EX", "1000"}, {"KEEPTTL"}, {"GET"}, {"NX"}, {"XX"}, {"PX", "500000", "GET"}}
			p.Do("SET", key(), value(), opts[rng.IntN(len(opts))])
		case 2:
			p.Do("APPEND", key(), value())
		case 3:
			p.Do("SETRANGE", key(), rng.IntN(3000), value())
		case 4:
			p.Do("INCRBY", key(), rng.IntN(200)-100)
		case 5:
			p.Do("GETDEL", key())
		case 6:
			p.Do("DEL", key(), key())
		case 7:
			p.Do("GET", key())
		case 8:
			p.Do("MGET", key(), key(), key())
		case 9:
			p.Do("STRLEN", key())
		case 10:
			p.Do("GETRANGE", key(), rng.IntN(200)-100, rng.IntN(100000)-50)
		case 11:
			p.Do("EXPIRE", key(), 1000+rng.IntN(1000))
		case 12:
			p.Do("PERSIST", key())
		case 13:
			p.DoApprox(1, "TTL", key())
		case 14:
			p.Do("RENAME", key(), key())
		case 15:
			p.Do("COPY", key(), key(), "REPLACE")
		case 16:
			p.Do("OBJECT", "ENCODING", key())
		case 17:
			p.Do("GETSET", key(), value())
		case 18:
			p.Do("MSET", key(), value(), key(), value())
		case 19:
			p.Do("EXISTS", key(), key())
			p.Do("DBSIZE")
			p.DoUnordered("KEYS", "*")
		}
	}
}

// TestStringHugeKeys uses keys larger than Keyhive's large-entry size.
func TestStringHugeKeys(t *testing.T) {
	p := difftest.Start(t)
	big := strings.Repeat("k", 70000)
	big2 := strings.Repeat("\x00", 100000)
	p.Do("SET", big, "v")
	p.Do("GET", big)
	p.Do("APPEND", big, strings.Repeat("v", 70000))
	p.Do("STRLEN", big)
	p.Do("EXISTS", big, big2)
	p.Do("RENAME", big, big2)
	p.Do("EXISTS", big, big2)
	p.Do("COPY", big2, big)
	p.DoUnordered("KEYS", "k*")
	p.DoCompare(skScanAll, "SCAN", "0", "MATCH", "*k", "COUNT", "1000")
	p.Do("EXPIRE", big, "100")
	p.DoApprox(1, "TTL", big)
	p.Do("INCR", big)
	p.Do("SET", big, "41")
	p.Do("INCR", big)
	p.Do("OBJECT", "ENCODING", big)
	p.Do("DEL", big, big2)
	p.Do("DBSIZE")
}

// TestIncrConcurrent has 50 clients do 100,000 INCRs in total on one key, in
// pipelined batches: every reply 1..100000 must come exactly once and the
// final value be 100000.
func TestIncrConcurrent(t *testing.T) {
	p := difftest.Start(t)
	addr := p.Keyhive().Addr()
	const clients, perClient, batch = 50, 2000, 100
	seen := make([][]int64, clients)
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for c := range clients {
		wg.Go(func() {
			conn, err := difftest.Dial(addr)
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close()
			cmd := difftest.EncodeCommand("INCR", "counter")
			buf := []byte{}
			for range batch {
				buf = append(buf, cmd...)
			}
			for range perClient / batch {
				if err := conn.SendRaw(buf); err != nil {
					errs <- err
					return
				}
				for range batch {
					r, err := conn.Read()
					if err != nil {
						errs <- err
						return
					}
					if r.Kind != difftest.KindInt {
						errs <- fmt.Errorf("INCR replied %s", r)
						return
					}
					seen[c] = append(seen[c], r.Int)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var all []int64
	for _, s := range seen {
		if !slices.IsSorted(s) {
			t.Errorf("one client's INCR replies are not increasing")
		}
		all = append(all, s...)
	}
	slices.Sort(all)
	for i, v := range all {
		if v != int64(i+1) {
			t.Fatalf("INCR replies: position %d holds %d; want each of 1..%d exactly once", i, v, clients*perClient)
		}
	}
	if r := p.Keyhive().Do("GET", "counter"); r.Str != strconv.Itoa(clients*perClient) {
		t.Fatalf("GET counter = %s, want %d", r, clients*perClient)
	}
}

// TestSetIfConditions: SET's IFEQ, IFNE, IFDEQ and IFDNE (Redis 8.4), as
// https://redis.io/docs/latest/commands/set/ documents them, with the
// digest rules of redis/redis#14502 (16 hex digits, any case).
func TestSetIfConditions(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.Start(t)
	const helloDigest = "b6acb9d84a38ff74" // DIGEST of "Hello world", from the DIGEST page
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		null := "$-1\r\n"
		if proto == 3 {
			null = "_\r\n"
		}
		p.Keyhive().Do("SET", "k", "Hello world")
		docCase(t, p, null, "SET", "k", "v", "IFEQ", "other")
		docCase(t, p, "+OK\r\n", "SET", "k", "Hello world!", "IFEQ", "Hello world")
		docCase(t, p, "$12\r\nHello world!\r\n", "GET", "k")
		docCase(t, p, null, "SET", "k", "x", "IFNE", "Hello world!")
		docCase(t, p, "+OK\r\n", "SET", "k", "Hello world", "IFNE", "zzz")
		docCase(t, p, "+OK\r\n", "SET", "k", "Hello world", "IFDEQ", helloDigest)
		docCase(t, p, "+OK\r\n", "SET", "k", "y", "IFDEQ", "B6ACB9D84A38FF74") // case does not matter
		docCase(t, p, null, "SET", "k", "z", "IFDEQ", helloDigest)
		docCase(t, p, "+OK\r\n", "SET", "k", "test", "IFDNE", helloDigest)
		docCase(t, p, null, "SET", "k", "z", "IFDNE", "9ec9f7918d7dfc40") // "test"'s digest
		docCase(t, p, "+OK\r\n", "SET", "k", "Hello world", "IFDEQ", "9EC9F7918D7DFC40")
		// A missing key: IFEQ and IFDEQ do not create it, IFNE and IFDNE do.
		docCase(t, p, null, "SET", "m1", "v", "IFEQ", "v")
		docCase(t, p, null, "SET", "m1", "v", "IFDEQ", helloDigest)
		docCase(t, p, ":0\r\n", "EXISTS", "m1")
		docCase(t, p, "+OK\r\n", "SET", "m1", "v", "IFNE", "v")
		docCase(t, p, "+OK\r\n", "SET", "m2", "v", "IFDNE", helloDigest)
		// GET returns the old value whether or not the key was set.
		docCase(t, p, "$11\r\nHello world\r\n", "SET", "k", "new", "IFEQ", "nope", "GET")
		docCase(t, p, "$11\r\nHello world\r\n", "SET", "k", "new", "GET", "IFEQ", "Hello world")
		docCase(t, p, null, "SET", "m3", "v", "IFNE", "x", "GET")
		docCase(t, p, "$1\r\nv\r\n", "GET", "m3")
		// With an expiry, set only when the condition holds.
		docCase(t, p, "+OK\r\n", "SET", "k", "e", "IFEQ", "new", "PX", "100000")
		docCase(t, p, ":1\r\n", "EXPIRE", "k", "100000", "GT")
		docCase(t, p, "+OK\r\n", "SET", "k", "f", "IFEQ", "e", "KEEPTTL")
		docCase(t, p, ":100000\r\n", "TTL", "k")
		// A non-string key: WRONGTYPE; conditions exclude NX, XX and each other.
		p.Keyhive().Do("RPUSH", "list", "a")
		docCase(t, p, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "SET", "list", "v", "IFNE", "x")
		for _, bad := range [][]any{
			{"SET", "k", "v", "IFEQ"}, {"SET", "k", "v", "NX", "IFEQ", "a"}, {"SET", "k", "v", "IFEQ", "a", "XX"},
			{"SET", "k", "v", "IFEQ", "a", "IFNE", "b"}, {"GETEX", "k", "IFEQ", "f"},
		} {
			docCase(t, p, "-ERR syntax error\r\n", bad...)
		}
		// The digest's length is checked against a key that exists only.
		docCase(t, p, "-ERR must be exactly 16 hexadecimal characters\r\n", "SET", "k", "v", "IFDEQ", "6c38adf31777")
		docCase(t, p, "-ERR must be exactly 16 hexadecimal characters\r\n", "SET", "k", "v", "IFDNE", "00000000000000000")
		docCase(t, p, null, "SET", "m4", "v", "IFDEQ", "short")
		docCase(t, p, "+OK\r\n", "SET", "m4", "v", "IFDNE", "short")
		p.Keyhive().Do("DEL", "k", "m1", "m2", "m3", "m4", "list")
	}
}

// TestDigestAndDelex: DIGEST and DELEX (Redis 8.4), as
// https://redis.io/docs/latest/commands/digest/ and
// https://redis.io/docs/latest/commands/delex/ document them, with
// redis/redis#14502's digest rules (16 digits, leading zeros, any case) and
// the error texts of Redis 8.4's delexCommand.
func TestDigestAndDelex(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.Start(t)
	// A value whose digest starts with zeros, from redis/redis#14496.
	const zeroLed = "v8lf0c11xh8ymlqztfd3eeq16kfn4sspw7fqmnuuq3k3t75em5wdizgcdw7uc26nnf961u2jkfzkjytls2kwlj7626sd"
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		null := "$-1\r\n"
		if proto == 3 {
			null = "_\r\n"
		}
		p.Keyhive().Do("SET", "key1", "Hello world")
		docCase(t, p, "$16\r\nb6acb9d84a38ff74\r\n", "DIGEST", "key1")
		p.Keyhive().Do("SET", "z", zeroLed)
		docCase(t, p, "$16\r\n00006c38adf31777\r\n", "DIGEST", "z")
		p.Keyhive().Do("SET", "n", "12345") // an integer-encoded string hashes its digits
		p.Keyhive().Do("SET", "n2", "12345x")
		p.Keyhive().Do("SETRANGE", "n2", "5", "")
		if a, b := p.Keyhive().Do("DIGEST", "n"), p.Keyhive().Do("DIGEST", "n2"); string(a.Raw) == string(b.Raw) {
			t.Errorf("DIGEST of 12345 and 12345x are equal")
		}
		docCase(t, p, null, "DIGEST", "nokey")
		p.Keyhive().Do("SADD", "set", "a")
		docCase(t, p, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "DIGEST", "set")
		docCase(t, p, "-ERR wrong number of arguments for 'digest' command\r\n", "DIGEST")

		// DELEX: 1 when deleted, 0 when missing or the condition fails.
		docCase(t, p, ":0\r\n", "DELEX", "key1", "IFEQ", "other")
		docCase(t, p, ":0\r\n", "DELEX", "key1", "IFNE", "Hello world")
		docCase(t, p, ":0\r\n", "DELEX", "key1", "IFDEQ", "0000000000000000")
		docCase(t, p, ":0\r\n", "DELEX", "key1", "IFDNE", "B6ACB9D84A38FF74")
		docCase(t, p, ":1\r\n", "DELEX", "key1", "IFEQ", "Hello world")
		docCase(t, p, ":0\r\n", "DELEX", "key1", "IFNE", "x") // missing: nothing to delete
		docCase(t, p, ":1\r\n", "DELEX", "z", "IFDEQ", "00006C38ADF31777")
		p.Keyhive().Do("SET", "key1", "Hello world")
		docCase(t, p, ":1\r\n", "DELEX", "key1", "IFDNE", "0000000000000000")
		p.Keyhive().Do("SET", "key1", "Hello world")
		docCase(t, p, ":1\r\n", "DELEX", "key1", "IFNE", "bye")
		// No condition: any type goes, as DEL.
		docCase(t, p, ":1\r\n", "DELEX", "set")
		docCase(t, p, ":0\r\n", "DELEX", "set")
		p.Keyhive().Do("SADD", "set", "a")
		// Redis 8.4's checks, in its order: the key, its type, the condition.
		docCase(t, p, "-ERR Key should be of string type if conditions are specified\r\n", "DELEX", "set", "IFEQ", "a")
		docCase(t, p, ":0\r\n", "DELEX", "nokey", "IFEQ", "a")
		docCase(t, p, ":0\r\n", "DELEX", "nokey", "IFXX", "a")
		docCase(t, p, ":0\r\n", "DELEX", "nokey", "IFDEQ", "abc")
		docCase(t, p, "-ERR must be exactly 16 hexadecimal characters\r\n", "DELEX", "n", "IFDEQ", "abc")
		docCase(t, p, "-ERR Invalid condition. Use IFEQ, IFNE, IFDEQ, or IFDNE\r\n", "DELEX", "n", "IFXX", "a")
		docCase(t, p, "-ERR wrong number of arguments for 'delex' command\r\n", "DELEX", "n", "IFEQ")
		docCase(t, p, "-ERR wrong number of arguments for 'delex' command\r\n", "DELEX", "n", "IFEQ", "a", "b")
		docCase(t, p, "-ERR wrong number of arguments for 'delex' command\r\n", "DELEX")
		p.Keyhive().Do("FLUSHALL")
	}
}

// TestCompareAndSetDispatch: the 8.4 commands take the one dispatch path:
// inside MULTI, from a script, and under ACL key permissions (a condition
// reads the key, so a write-only key pattern refuses it).
func TestCompareAndSetDispatch(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.StartIsolated(t)
	p.Keyhive().Do("SET", "k", "Hello world")
	docCase(t, p, "+OK\r\n", "MULTI")
	docCase(t, p, "+QUEUED\r\n", "DIGEST", "k")
	docCase(t, p, "+QUEUED\r\n", "SET", "k", "v2", "IFDEQ", "b6acb9d84a38ff74")
	docCase(t, p, "+QUEUED\r\n", "DELEX", "k", "IFEQ", "v2")
	docCase(t, p, "*3\r\n$16\r\nb6acb9d84a38ff74\r\n+OK\r\n:1\r\n", "EXEC")
	p.Keyhive().Do("SET", "k", "Hello world")
	docCase(t, p, ":1\r\n", "EVAL", "if redis.call('DIGEST', KEYS[1]) == ARGV[1] then return redis.call('DELEX', KEYS[1], 'IFEQ', 'Hello world') end return 0", "1", "k", "b6acb9d84a38ff74")
	docCase(t, p, "+OK\r\n", "ACL", "SETUSER", "w", "on", "nopass", "%W~w*", "%R~r*", "+@all")
	docCase(t, p, "+OK\r\n", "AUTH", "w", "x")
	docCase(t, p, "+OK\r\n", "SET", "w1", "v")
	docCase(t, p, "-NOPERM No permissions to access a key\r\n", "SET", "w1", "v", "IFEQ", "v")
	docCase(t, p, "-NOPERM No permissions to access a key\r\n", "DELEX", "w1", "IFNE", "x")
	docCase(t, p, "-NOPERM No permissions to access a key\r\n", "DIGEST", "w1")
	docCase(t, p, ":1\r\n", "DELEX", "w1")
	docCase(t, p, "$-1\r\n", "DIGEST", "r1")
	docCase(t, p, "-NOPERM No permissions to access a key\r\n", "DELEX", "r1")
	// MSETEX's second key is checked too (redis/redis#14659).
	docCase(t, p, "-NOPERM No permissions to access a key\r\n", "MSETEX", "2", "w1", "v", "r1", "v")
	docCase(t, p, ":1\r\n", "MSETEX", "2", "w1", "v", "w2", "v", "EX", "10")
}

// TestMSetEx: MSETEX (Redis 8.4), as https://redis.io/docs/latest/commands/msetex/
// documents it: 1 when every key was set, 0 when NX or XX refused them all;
// one expiry for every key, KEEPTTL keeping each key's own.
func TestMSetEx(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.Start(t)
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		null := "$-1\r\n"
		if proto == 3 {
			null = "_\r\n"
		}
		docCase(t, p, ":1\r\n", "MSETEX", "2", "a", "1", "b", "2")
		docCase(t, p, "*3\r\n$1\r\n1\r\n$1\r\n2\r\n"+null, "MGET", "a", "b", "c")
		docCase(t, p, ":-1\r\n", "TTL", "a")
		docCase(t, p, ":0\r\n", "MSETEX", "2", "a", "x", "c", "3", "NX")
		docCase(t, p, ":-2\r\n", "TTL", "c")
		docCase(t, p, ":1\r\n", "MSETEX", "2", "c", "3", "d", "4", "NX", "EX", "100")
		docCase(t, p, ":100\r\n", "TTL", "d")
		docCase(t, p, ":0\r\n", "MSETEX", "2", "a", "x", "e", "5", "XX")
		docCase(t, p, ":1\r\n", "MSETEX", "3", "a", "x", "b", "y", "c", "z", "XX", "KEEPTTL")
		docCase(t, p, ":100\r\n", "TTL", "c")
		docCase(t, p, ":-1\r\n", "TTL", "a")
		docCase(t, p, ":1\r\n", "MSETEX", "1", "c", "w") // no expiry option: the TTL goes, as MSET
		docCase(t, p, ":-1\r\n", "TTL", "c")
		docCase(t, p, ":1\r\n", "MSETEX", "2", "a", "1", "b", "2", "PX", "5000000")
		docCase(t, p, ":5000\r\n", "TTL", "b")
		docCase(t, p, ":1\r\n", "MSETEX", "1", "a", "1", "EXAT", "99999999999")
		docCase(t, p, ":99999999999\r\n", "EXPIRETIME", "a")
		docCase(t, p, ":1\r\n", "MSETEX", "1", "a", "1", "PXAT", "99999999999000")
		docCase(t, p, ":99999999999\r\n", "EXPIRETIME", "a")
		p.Keyhive().Do("LPUSH", "list", "x")
		docCase(t, p, ":1\r\n", "MSETEX", "1", "list", "s") // overwrites any type, as MSET
		docCase(t, p, "$1\r\ns\r\n", "GET", "list")
		for _, bad := range [][]any{
			{"MSETEX", "1", "a", "1", "NX", "XX"}, {"MSETEX", "1", "a", "1", "EX", "1", "PX", "1"},
			{"MSETEX", "1", "a", "1", "GET"}, {"MSETEX", "1", "a", "1", "IFEQ", "1"}, {"MSETEX", "1", "a", "1", "b"},
			{"MSETEX", "1", "a", "1", "EX"},
		} {
			docCase(t, p, "-ERR syntax error\r\n", bad...)
		}
		// Redis 8.4's msetexCommand texts.
		docCase(t, p, "-ERR invalid numkeys value\r\n", "MSETEX", "x", "a", "1")
		docCase(t, p, "-ERR invalid numkeys value\r\n", "MSETEX", "0", "a", "1")
		docCase(t, p, "-ERR wrong number of key-value pairs\r\n", "MSETEX", "2", "a", "1", "b")
		docCase(t, p, "-ERR invalid expire time in 'msetex' command\r\n", "MSETEX", "1", "a", "1", "EX", "0")
		docCase(t, p, "-ERR wrong number of arguments for 'msetex' command\r\n", "MSETEX", "1", "a")
		// Every key is found for locks and ACL: key value pairs, step 2 (redis/redis#14659).
		docCase(t, p, "*3\r\n$1\r\na\r\n$1\r\nc\r\n$1\r\ne\r\n", "COMMAND", "GETKEYS", "MSETEX", "3", "a", "b", "c", "d", "e", "f", "NX")
		p.Keyhive().Do("FLUSHALL")
	}
}
