package server_test

// Differential tests of the bitmap commands (SETBIT GETBIT BITCOUNT BITPOS
// BITOP BITFIELD BITFIELD_RO) against redis-server.

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// bmValues are string values for the bitmap tests: empty, NUL and 0xff runs,
// integers (int encoded), text, a long raw value.
var bmValues = []string{
	"", "\x00", "\xff", "\x00\xff", "\xff\x00\xff", "foobar", "123", "-1",
	"\x80\x01", "\x00\x00\x00\x01", "\xff\xff\xff\xfe", "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x10",
	"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xef\xff",
	"a\x00b\r\n\xfe", "this is a longer value of more than forty-four bytes, so raw",
}

// bmState compares a key's value, encoding and TTL after a command.
func bmState(p *difftest.Pair, key string) {
	p.Do("GET", key)
	p.Do("EXISTS", key)
	p.Do("OBJECT", "ENCODING", key)
	p.DoApprox(2, "TTL", key)
}

func TestBitmapCommandInfo(t *testing.T) {
	p := difftest.Start(t)
	for _, c := range []string{"setbit", "getbit", "bitcount", "bitpos", "bitop", "bitfield", "bitfield_ro"} {
		r := p.Redis().Do("COMMAND", "INFO", c)
		k := p.Keyhive().Do("COMMAND", "INFO", c)
		if len(r.Elems) != 1 || len(k.Elems) != 1 || len(k.Elems[0].Elems) < 6 {
			t.Fatalf("COMMAND INFO %s: redis %s, keyhive %s", c, r, k)
		}
		// Name, arity, flags, first key, last key, step.
		for i := 0; i < 6; i++ {
			if string(r.Elems[0].Elems[i].Raw) != string(k.Elems[0].Elems[i].Raw) {
				t.Errorf("COMMAND INFO %s field %d: redis %q, keyhive %q", c, i, r.Elems[0].Elems[i].Raw, k.Elems[0].Elems[i].Raw)
			}
		}
		bmDocsHead(t, p, c)
	}
}

func TestBitmapSetbitGetbit(t *testing.T) {
	p := difftest.Start(t)
	p.Do("GETBIT", "missing", 0)
	p.Do("GETBIT", "missing", 4294967295)
	p.Do("SETBIT", "k", 7, 1)
	bmState(p, "k")
	p.Do("SETBIT", "k", 7, 1)
	p.Do("SETBIT", "k", 7, 0)
	p.Do("SETBIT", "k", 0, 1)
	p.Do("GETBIT", "k", 0)
	p.Do("GETBIT", "k", 1)
	p.Do("GETBIT", "k", 7)
	p.Do("GETBIT", "k", 8)
	p.Do("GETBIT", "k", 1000000)
	p.Do("SETBIT", "k", 100, 1)
	bmState(p, "k")
	p.Do("STRLEN", "k")
	for i := 0; i < 110; i++ {
		p.Do("GETBIT", "k", i)
	}
	// Growing keeps the old bytes and zero-fills.
	p.Do("SET", "s", "foobar")
	p.Do("SETBIT", "s", 60, 1)
	bmState(p, "s")
	// Existing embstr and int strings become raw, even without a change.
	p.Do("SET", "e", "abc")
	p.Do("SETBIT", "e", 1, 1)
	bmState(p, "e")
	p.Do("SET", "i", "12345")
	p.Do("OBJECT", "ENCODING", "i")
	p.Do("GETBIT", "i", 2)
	p.Do("GETBIT", "i", 3)
	p.Do("OBJECT", "ENCODING", "i")
	p.Do("SETBIT", "i", 2, 1)
	bmState(p, "i")
	p.Do("SET", "i2", "999")
	p.Do("SETBIT", "i2", 100, 0)
	bmState(p, "i2")
	// The TTL survives.
	p.Do("SET", "t", "x", "EX", 100)
	p.Do("SETBIT", "t", 3, 1)
	bmState(p, "t")
	p.Do("SETBIT", "t", 300, 1)
	bmState(p, "t")
	// Binary values and keys.
	for i, v := range bmValues {
		key := "b\x00\xff" + strconv.Itoa(i)
		p.Do("SET", key, v)
		for _, off := range []int{0, 1, 7, 8, 15, 31, 32, 100} {
			p.Do("GETBIT", key, off)
		}
		p.Do("SETBIT", key, 9, 1)
		p.Do("SETBIT", key, 0, 0)
		bmState(p, key)
	}
	p.Do("SETBIT", "", 0, 1)
	p.Do("GETBIT", "", 0)
	// The highest offset allowed: byte 512MB-1 (no allocation for GETBIT).
	p.Do("GETBIT", "k", 4294967295)
	p.Do("EXISTS", "z")
}

func TestBitmapSetbitGetbitErrors(t *testing.T) {
	p := difftest.Start(t)
	p.Do("SET", "k", "abc")
	for _, off := range []string{"-1", "4294967296", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
		"abc", "", "1.5", "+1", "01", " 1", "#1", "0x10", "1e3", "18446744073709551616", "99999999999999999999"} {
		p.Do("SETBIT", "k", off, 1)
		p.Do("GETBIT", "k", off)
		p.Do("SETBIT", "missing", off, 1)
		p.Do("GETBIT", "missing", off)
	}
	for _, v := range []string{"2", "-1", "a", "", "01", "1.0", "9223372036854775808", "-0", "+1", " 1"} {
		p.Do("SETBIT", "k", 0, v)
		p.Do("SETBIT", "missing", 0, v)
	}
	// The offset is checked before the value.
	p.Do("SETBIT", "k", -1, 5)
	p.Do("EXISTS", "missing")
	p.Do("GET", "k")
	p.Do("SETBIT", "k", 0)
	p.Do("SETBIT", "k", 0, 1, 1)
	p.Do("GETBIT", "k")
	p.Do("GETBIT", "k", 0, 1)
	p.Do("SETBIT")
	p.Do("GETBIT")
}

func TestBitmapProtoMaxBulkLen(t *testing.T) {
	p := difftest.StartIsolated(t, "--proto-max-bulk-len", "1mb")
	p.Do("SETBIT", "k", 8388608, 1)
	p.Do("EXISTS", "k")
	p.Do("GETBIT", "k", 8388608)
	p.Do("SETBIT", "k", 8388607, 1)
	p.Do("STRLEN", "k")
	p.Do("BITCOUNT", "k")
	p.Do("BITPOS", "k", 1)
	p.Do("BITPOS", "k", 0, -1)
	p.Do("BITPOS", "k", 1, -2)
	p.Do("BITPOS", "k", 1, 0, -1)
	p.Do("BITPOS", "k", 1, 1000, 8388607, "BIT")
	p.Do("BITCOUNT", "k", 8388600, 8388607, "BIT")
	p.Do("BITCOUNT", "k", -1, -1)
	p.Do("BITFIELD", "k", "GET", "u8", 8388600)
	p.Do("BITFIELD", "k", "GET", "u8", 8388601)
	p.Do("BITFIELD", "k", "GET", "i64", 8388607)
	p.Do("BITFIELD", "k", "SET", "u8", 8388608, 1)
	p.Do("BITFIELD", "k", "SET", "u8", "#1048576", 1)
	p.Do("BITFIELD", "k", "SET", "u4", "#2097151", 1)
	// A field may start on the last allowed byte and run a few bytes past it.
	p.Do("BITFIELD", "k", "SET", "i64", 8388607, -1)
	p.Do("STRLEN", "k")
	p.Do("BITFIELD_RO", "k", "GET", "i64", 8388607)
	p.Do("BITOP", "NOT", "d", "k")
	p.Do("STRLEN", "d")
	p.Do("BITCOUNT", "d")
	p.Do("CONFIG", "SET", "proto-max-bulk-len", "2mb")
	p.Do("SETBIT", "k", 8388608, 1)
	p.Do("STRLEN", "k")
}

func TestBitmapBitcount(t *testing.T) {
	p := difftest.Start74(t)
	p.Do("BITCOUNT", "missing")
	p.Do("BITCOUNT", "missing", 0, -1)
	p.Do("BITCOUNT", "missing", 0, -1, "BIT")
	// The arguments are checked before the key is looked up (7.2 and later).
	p.Do("BITCOUNT", "missing", "x", "y")
	p.Do("BITCOUNT", "missing", 1)
	p.Do("BITCOUNT", "missing", 0, 1, "BAD")
	p.Do("SET", "k", "foobar")
	p.Do("BITCOUNT", "k")
	p.Do("BITCOUNT", "k", 0, 0)
	p.Do("BITCOUNT", "k", 1, 1)
	p.Do("BITCOUNT", "k", 1, 1, "BYTE")
	p.Do("BITCOUNT", "k", 5, 30, "BIT")
	p.Do("BITCOUNT", "k", 5, 30, "bit")
	p.Do("BITCOUNT", "k", 5, 30, "bYtE")
	p.Do("BITCOUNT", "k", 5, 30, "BIT\x00junk")
	p.Do("BITCOUNT", "k", 5, 30, "BITS")
	p.Do("BITCOUNT", "k", 5, 30, "")
	p.Do("BITCOUNT", "k", 1)
	p.Do("BITCOUNT", "k", 1, 2, "BIT", "x")
	p.Do("BITCOUNT", "k", "a", 1)
	p.Do("BITCOUNT", "k", 1, "a")
	p.Do("BITCOUNT", "k", "a", "b", "c")
	p.Do("BITCOUNT", "k", 1, "a", "BAD")
	// Both negative with start > end answers 0, after the unit is checked.
	p.Do("BITCOUNT", "k", -1, -2, "BAD")
	p.Do("BITCOUNT", "k", -1, -2)
	p.Do("BITCOUNT", "k", -2, -1, "BAD")
	p.Do("BITCOUNT", "k", -100, -200)
	p.Do("BITCOUNT", "k", -100, 100)
	p.Do("BITCOUNT", "k", 100, -100)
	p.Do("BITCOUNT", "k", 2, 1)
	p.Do("BITCOUNT", "k", -9223372036854775808, 9223372036854775807)
	p.Do("BITCOUNT", "k", -9223372036854775808, 9223372036854775807, "BIT")
	p.Do("BITCOUNT", "k", 9223372036854775807, 9223372036854775807, "BIT")
	p.Do("BITCOUNT", "k", 0, "9223372036854775808")
	p.Do("BITCOUNT", "k", "01", 2)
	p.Do("BITCOUNT", "k", 0, -1, "BIT")
	p.Do("BITCOUNT", "k", -1, -1, "BIT")
	p.Do("BITCOUNT", "k", -8, -1, "BIT")
	p.Do("BITCOUNT", "k", -9, -9, "BIT")
	p.Do("SET", "e", "")
	p.Do("BITCOUNT", "e")
	p.Do("BITCOUNT", "e", 0, -1)
	p.Do("BITCOUNT", "e", 0, 0, "BIT")
	p.Do("BITCOUNT", "e", -1, -1, "BIT")
	p.Do("SET", "i", 1234567890123)
	p.Do("BITCOUNT", "i")
	p.Do("BITCOUNT", "i", 3, 40, "BIT")
	p.Do("BITCOUNT")
	for i, v := range bmValues {
		key := "v" + strconv.Itoa(i)
		p.Do("SET", key, v)
		p.Do("BITCOUNT", key)
		p.Do("BITCOUNT", key, 1, -2)
		p.Do("BITCOUNT", key, 3, -4, "BIT")
	}
}

func TestBitmapBitpos(t *testing.T) {
	p := difftest.Start74(t)
	p.Do("BITPOS", "missing", 0)
	p.Do("BITPOS", "missing", 1)
	p.Do("BITPOS", "missing", 0, 5, 10, "BIT")
	// The range is checked before the key is looked up (7.2 and later).
	p.Do("BITPOS", "missing", 1, "x")
	p.Do("BITPOS", "missing", 0, 1, 2, "BAD")
	p.Do("BITPOS", "missing", 2)
	p.Do("BITPOS", "missing", -1)
	p.Do("BITPOS", "missing", "x")
	p.Do("SET", "k", "\xff\xf0\x00")
	p.Do("BITPOS", "k", 0)
	p.Do("BITPOS", "k", 1)
	p.Do("BITPOS", "k", 0, 1)
	p.Do("BITPOS", "k", 1, 2)
	p.Do("BITPOS", "k", 1, 2, -1)
	p.Do("BITPOS", "k", 0, 0, 0)
	p.Do("BITPOS", "k", 0, 0, 1)
	p.Do("BITPOS", "k", 0, 0, 0, "BYTE")
	p.Do("BITPOS", "k", 0, 0, 7, "BIT")
	p.Do("BITPOS", "k", 0, 3, 15, "BIT")
	p.Do("BITPOS", "k", 1, 12, 23, "BIT")
	p.Do("BITPOS", "k", 1, 7, 7, "BIT")
	p.Do("BITPOS", "k", 0, 7, 7, "BIT")
	p.Do("BITPOS", "k", 1, 7, 6, "BIT")
	p.Do("BITPOS", "k", 0, -5, -1, "BIT")
	p.Do("BITPOS", "k", 1, -5, -1, "BIT")
	p.Do("BITPOS", "k", 0, 100)
	p.Do("BITPOS", "k", 0, -100)
	p.Do("BITPOS", "k", 0, -100, -200)
	p.Do("BITPOS", "k", 1, -100, -200)
	p.Do("BITPOS", "k", 1, -9223372036854775808, 9223372036854775807, "BIT")
	p.Do("BITPOS", "k", 1, 9223372036854775807)
	p.Do("SET", "ones", "\xff\xff\xff")
	p.Do("BITPOS", "ones", 0)
	p.Do("BITPOS", "ones", 0, 1)
	p.Do("BITPOS", "ones", 0, -1)
	p.Do("BITPOS", "ones", 0, 0, -1)
	p.Do("BITPOS", "ones", 0, 0, 100)
	p.Do("BITPOS", "ones", 0, 1, 20, "BIT")
	p.Do("BITPOS", "ones", 1, 3)
	p.Do("SET", "zeros", "\x00\x00\x00")
	p.Do("BITPOS", "zeros", 1)
	p.Do("BITPOS", "zeros", 0)
	p.Do("BITPOS", "zeros", 1, 1, -1)
	p.Do("BITPOS", "zeros", 0, 2)
	p.Do("BITPOS", "zeros", 0, 9, 22, "BIT")
	p.Do("SET", "e", "")
	p.Do("BITPOS", "e", 0)
	p.Do("BITPOS", "e", 1)
	p.Do("BITPOS", "e", 0, 0)
	p.Do("BITPOS", "e", 0, 0, -1)
	p.Do("BITPOS", "e", 0, 0, -1, "BIT")
	// Argument errors, in Redis's order.
	p.Do("BITPOS", "k", 2)
	p.Do("BITPOS", "k", "01")
	p.Do("BITPOS", "k", "1.0")
	p.Do("BITPOS", "k", 1, "a")
	p.Do("BITPOS", "k", 1, 0, "a")
	p.Do("BITPOS", "k", 1, 0, "a", "BAD")
	p.Do("BITPOS", "k", 1, "a", 0, "BAD")
	p.Do("BITPOS", "k", 1, 0, 1, "BAD")
	p.Do("BITPOS", "k", 1, 0, 1, "bit\x00")
	p.Do("BITPOS", "k", 1, 0, 1, "BIT", "x")
	p.Do("BITPOS", "k")
	// Integer-encoded values.
	p.Do("SET", "i", "-7")
	p.Do("BITPOS", "i", 1)
	p.Do("BITPOS", "i", 0, 1)
	// Long runs, to cross the word-at-a-time scan.
	long := make([]byte, 100)
	long[77] = 0x04
	p.Do("SET", "l", long)
	p.Do("BITPOS", "l", 1)
	p.Do("BITPOS", "l", 1, 3, 90)
	p.Do("BITPOS", "l", 1, 24, 622, "BIT")
	p.Do("BITPOS", "l", 1, 24, 621, "BIT")
	for i := range long {
		long[i] = 0xff
	}
	long[64] = 0xfe
	p.Do("SET", "l", long)
	p.Do("BITPOS", "l", 0)
	p.Do("BITPOS", "l", 0, 1, 63)
	p.Do("BITPOS", "l", 0, 1, 64)
	p.Do("BITPOS", "l", 0, 9, 519, "BIT")
	p.Do("BITPOS", "l", 0, 9, 518, "BIT")
}

// TestBitmapRangesRandom compares BITCOUNT, BITPOS and GETBIT over random
// values and ranges, in bytes and bits.
func TestBitmapRangesRandom(t *testing.T) {
	p := difftest.Start(t)
	rng := rand.New(rand.NewPCG(1, 2))
	units := []string{"BYTE", "BIT"}
	for round := 0; round < 40; round++ {
		n := rng.IntN(20)
		v := make([]byte, n)
		for i := range v {
			switch rng.IntN(4) {
			case 0:
				v[i] = 0
			case 1:
				v[i] = 0xff
			default:
				v[i] = byte(rng.IntN(256))
			}
		}
		p.Do("SET", "r", v)
		p.Do("BITCOUNT", "r")
		p.Do("BITPOS", "r", 0)
		p.Do("BITPOS", "r", 1)
		lim := int64(n*8 + 10)
		for j := 0; j < 12; j++ {
			a, b := rng.Int64N(2*lim)-lim, rng.Int64N(2*lim)-lim
			u := units[rng.IntN(2)]
			bit := rng.IntN(2)
			p.Do("BITCOUNT", "r", a, b, u)
			p.Do("BITPOS", "r", bit, a, b, u)
			p.Do("BITPOS", "r", bit, a/8, b/8)
			p.Do("BITPOS", "r", bit, a/8)
			p.Do("GETBIT", "r", rng.Int64N(lim))
		}
	}
}

func TestBitmapBitop(t *testing.T) {
	p := difftest.Start(t)
	p.Do("SET", "a", "foobar")
	p.Do("SET", "b", "abcdef")
	p.Do("SET", "c", "\xff\x00")
	p.Do("SET", "n", 12)
	for _, op := range []string{"AND", "OR", "XOR", "and", "Or", "xOr"} {
		p.Do("BITOP", op, "d", "a", "b")
		bmState(p, "d")
		p.Do("BITOP", op, "d", "a", "c", "missing")
		bmState(p, "d")
		p.Do("BITOP", op, "d", "c")
		bmState(p, "d")
		p.Do("BITOP", op, "d", "missing", "c")
		bmState(p, "d")
		p.Do("BITOP", op, "d", "n", "c", "a", "b")
		bmState(p, "d")
		p.Do("BITOP", op, "d", "a", "a", "a")
		bmState(p, "d")
	}
	p.Do("BITOP", "NOT", "d", "a")
	bmState(p, "d")
	p.Do("BITOP", "not", "d", "n")
	bmState(p, "d")
	p.Do("BITOP", "NOT", "d", "d")
	bmState(p, "d")
	// The destination may be a source.
	p.Do("BITOP", "XOR", "a", "a", "b")
	bmState(p, "a")
	p.Do("BITOP", "OR", "b", "c", "b")
	bmState(p, "b")
	// An empty result deletes the destination.
	p.Do("SET", "d", "x", "EX", 100)
	p.Do("BITOP", "AND", "d", "missing", "missing2")
	bmState(p, "d")
	p.Do("SET", "d", "x")
	p.Do("SET", "empty", "")
	p.Do("BITOP", "NOT", "d", "empty")
	bmState(p, "d")
	p.Do("BITOP", "OR", "d", "empty", "missing")
	p.Do("EXISTS", "d")
	// A result replaces the destination's TTL and value.
	p.Do("SET", "d", "x", "EX", 100)
	p.Do("BITOP", "OR", "d", "c")
	bmState(p, "d")
	// Short sources count as zero padded.
	p.Do("SET", "s1", "\xff")
	p.Do("SET", "s2", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff")
	for _, op := range []string{"AND", "OR", "XOR"} {
		p.Do("BITOP", op, "d", "s1", "s2")
		bmState(p, "d")
		p.Do("BITOP", op, "d", "s2", "s1")
		bmState(p, "d")
		p.Do("BITOP", op, "d", "s2", "missing")
		bmState(p, "d")
	}
	for i, v := range bmValues {
		p.Do("SET", "v"+strconv.Itoa(i), v)
	}
	for i := range bmValues {
		j := (i * 7) % len(bmValues)
		for _, op := range []string{"AND", "OR", "XOR"} {
			p.Do("BITOP", op, "d", "v"+strconv.Itoa(i), "v"+strconv.Itoa(j))
			p.Do("GET", "d")
		}
		p.Do("BITOP", "NOT", "d", "v"+strconv.Itoa(i))
		p.Do("GET", "d")
	}
	// Errors.
	p.Do("BITOP", "NAND", "d", "a")
	p.Do("BITOP", "", "d", "a")
	p.Do("BITOP", "AND\x00x", "d", "a")
	p.Do("BITOP", "NOT", "d", "a", "b")
	p.Do("BITOP", "NOT", "d", "missing", "b")
	p.Do("BITOP", "NAND", "d", "a", "b")
	p.Do("BITOP", "AND", "d")
	p.Do("BITOP", "NOT", "d")
	p.Do("BITOP", "AND")
	p.Do("GET", "d")
}

func TestBitmapBitfieldBasic(t *testing.T) {
	p := difftest.Start(t)
	p.Do("BITFIELD", "missing")
	p.Do("EXISTS", "missing")
	p.Do("BITFIELD", "missing", "GET", "u8", 0)
	p.Do("BITFIELD", "missing", "GET", "i64", 100, "GET", "u63", 0)
	p.Do("EXISTS", "missing")
	p.Do("BITFIELD_RO", "missing", "GET", "u8", 0)
	p.Do("BITFIELD", "missing", "OVERFLOW", "FAIL")
	p.Do("EXISTS", "missing")
	p.Do("SET", "k", "foobar")
	p.Do("BITFIELD", "k", "GET", "u8", 0, "GET", "i8", 0, "GET", "u4", 4, "GET", "i4", 4, "GET", "u1", 1, "GET", "i1", 1)
	p.Do("BITFIELD", "k", "GET", "u8", "#1", "GET", "i16", "#2", "GET", "u3", "#5", "GET", "i64", "#0", "GET", "u63", 1)
	p.Do("BITFIELD", "k", "GET", "i64", 40, "GET", "i64", 47, "GET", "i64", 48, "GET", "u63", 45)
	p.Do("BITFIELD", "k", "get", "U8", 0)
	p.Do("BITFIELD", "k", "GeT", "u8", 0, "gEt", "i2", 3)
	p.Do("OBJECT", "ENCODING", "k")
	p.Do("BITFIELD_RO", "k", "GET", "u8", 0, "GET", "i32", 3)
	p.Do("OBJECT", "ENCODING", "k")
	p.Do("BITFIELD", "k", "SET", "u8", 0, 255, "GET", "u8", 0, "SET", "i8", 0, -2, "GET", "u8", 0)
	bmState(p, "k")
	p.Do("BITFIELD", "k", "INCRBY", "u8", 8, 10, "INCRBY", "i5", 100, -3, "GET", "u8", 8, "GET", "i5", 100)
	bmState(p, "k")
	// Writes past the end grow the value just enough.
	p.Do("BITFIELD", "k", "SET", "u1", 100, 1)
	bmState(p, "k")
	p.Do("BITFIELD", "k", "GET", "u16", 99, "SET", "i64", "#20", 1, "GET", "u64", 0)
	bmState(p, "k")
	p.Do("BITFIELD", "new", "INCRBY", "u2", 1000, 3)
	bmState(p, "new")
	p.Do("BITFIELD", "new2", "SET", "i64", 0, -1, "GET", "i64", 0, "GET", "u63", 0, "GET", "u63", 1)
	bmState(p, "new2")
	// Existing embstr and int strings become raw on a write; the TTL stays.
	p.Do("SET", "e", "abc", "EX", 100)
	p.Do("BITFIELD", "e", "SET", "u8", 0, 97)
	bmState(p, "e")
	p.Do("SET", "i", "42")
	p.Do("BITFIELD", "i", "GET", "u8", 0)
	p.Do("OBJECT", "ENCODING", "i")
	p.Do("BITFIELD", "i", "INCRBY", "u8", 8, 1)
	bmState(p, "i")
	// OVERFLOW applies to the operations after it.
	p.Do("SET", "o", "\x7f\xff")
	p.Do("BITFIELD", "o", "INCRBY", "i8", 0, 1, "OVERFLOW", "SAT", "INCRBY", "i8", 0, -200, "OVERFLOW", "FAIL", "INCRBY", "i8", 0, -1, "OVERFLOW", "wrap", "INCRBY", "i8", 0, -1)
	bmState(p, "o")
	p.Do("BITFIELD", "o", "OVERFLOW", "FAIL", "OVERFLOW", "SAT", "INCRBY", "u8", 8, 10)
	p.Do("BITFIELD", "o", "overflow", "fail", "INCRBY", "u8", 8, 10, "GET", "u8", 8)
	bmState(p, "o")
	// A write that fails still creates (zero-filled) the key, as in Redis.
	p.Do("BITFIELD", "f", "OVERFLOW", "FAIL", "SET", "u2", 100, 4)
	bmState(p, "f")
	// #N offsets count in units of the type's width; huge N wraps around as
	// Redis's 64-bit multiplication does.
	p.Do("BITFIELD", "k", "GET", "u8", "#2305843009213693952")
	p.Do("BITFIELD", "k", "GET", "u8", "#2305843009213693951")
	p.Do("BITFIELD", "k", "GET", "u4", "#4611686018427387904")
	p.Do("BITFIELD", "k", "GET", "u4", "#-1")
	p.Do("BITFIELD", "k", "GET", "u4", "#")
	p.Do("BITFIELD", "k", "GET", "u4", "##1")
	p.Do("BITFIELD", "k", "GET", "u32", "#134217727")
	p.Do("BITFIELD", "k", "GET", "u32", "#134217728")
	p.Do("BITFIELD", "k", "GET", "u8", 4294967295)
	p.Do("BITFIELD", "k", "GET", "u8", 4294967296)
	p.Do("BITFIELD", "k", "GET", "i64", 4294967290)
	// Binary values.
	for i, v := range bmValues {
		key := "v" + strconv.Itoa(i)
		p.Do("SET", key, v)
		p.Do("BITFIELD", key, "GET", "i64", 0, "GET", "u63", 3, "GET", "i13", 5, "GET", "u1", 9, "GET", "i9", "#3")
		p.Do("BITFIELD", key, "INCRBY", "i7", 3, 100, "SET", "u9", 20, 300, "GET", "u64", 0)
		bmState(p, key)
	}
	p.Do("SET", "z", 0)
	p.Do("BITFIELD", "z", "GET", "u8", "#0")
}

func TestBitmapBitfieldOverflow(t *testing.T) {
	p := difftest.Start(t)
	modes := []string{"WRAP", "SAT", "FAIL"}
	values := []string{"0", "1", "-1", "127", "128", "-128", "-129", "255", "256", "1000", "-1000",
		"9223372036854775807", "-9223372036854775808", "4611686018427387904", "-4611686018427387905"}
	types := []string{"i1", "u1", "i2", "u2", "i8", "u8", "i16", "u16", "i32", "u32", "i63", "u63", "i64"}
	for _, mode := range modes {
		for _, typ := range types {
			p.Do("DEL", "k")
			for _, v := range values {
				p.Do("BITFIELD", "k", "OVERFLOW", mode, "SET", typ, 3, v, "GET", typ, 3)
			}
			for _, start := range []string{"0", "1", "-1", "9223372036854775807", "-9223372036854775808", "127", "-128"} {
				p.Do("BITFIELD", "k", "OVERFLOW", "WRAP", "SET", typ, 5, start)
				for _, v := range values {
					p.Do("BITFIELD", "k", "OVERFLOW", mode, "INCRBY", typ, 5, v, "GET", typ, 5)
				}
			}
			p.Do("GET", "k")
		}
	}
	// i64 at the limits with each mode.
	for _, mode := range modes {
		p.Do("BITFIELD", "x", "SET", "i64", 0, "9223372036854775807")
		p.Do("BITFIELD", "x", "OVERFLOW", mode, "INCRBY", "i64", 0, 1, "GET", "i64", 0)
		p.Do("BITFIELD", "x", "OVERFLOW", mode, "INCRBY", "i64", 0, "9223372036854775807")
		p.Do("BITFIELD", "x", "SET", "i64", 0, "-9223372036854775808")
		p.Do("BITFIELD", "x", "OVERFLOW", mode, "INCRBY", "i64", 0, -1, "GET", "i64", 0)
		p.Do("BITFIELD", "x", "OVERFLOW", mode, "INCRBY", "i64", 0, "-9223372036854775808")
		p.Do("BITFIELD", "x", "OVERFLOW", mode, "INCRBY", "u63", 0, "-9223372036854775808")
		p.Do("BITFIELD", "x", "OVERFLOW", mode, "INCRBY", "u63", 0, "9223372036854775807")
		p.Do("GET", "x")
	}
}

// TestBitmapBitfieldRandom runs random BITFIELD operations at random offsets
// and widths on a shared value.
func TestBitmapBitfieldRandom(t *testing.T) {
	p := difftest.Start(t)
	rng := rand.New(rand.NewPCG(3, 4))
	modes := []string{"WRAP", "SAT", "FAIL"}
	randValue := func() string {
		switch rng.IntN(4) {
		case 0:
			return strconv.FormatInt(rng.Int64(), 10)
		case 1:
			return strconv.FormatInt(-rng.Int64(), 10)
		default:
			return strconv.FormatInt(rng.Int64N(600)-300, 10)
		}
	}
	for round := 0; round < 150; round++ {
		args := []any{"BITFIELD", "r"}
		for n := rng.IntN(4) + 1; n > 0; n-- {
			typ := "u" + strconv.Itoa(rng.IntN(63)+1)
			if rng.IntN(2) == 0 {
				typ = "i" + strconv.Itoa(rng.IntN(64)+1)
			}
			off := strconv.Itoa(rng.IntN(200))
			if rng.IntN(4) == 0 {
				off = "#" + strconv.Itoa(rng.IntN(10))
			}
			switch rng.IntN(4) {
			case 0:
				args = append(args, "GET", typ, off)
			case 1:
				args = append(args, "SET", typ, off, randValue())
			case 2:
				args = append(args, "INCRBY", typ, off, randValue())
			default:
				args = append(args, "OVERFLOW", modes[rng.IntN(3)])
			}
		}
		p.Do(args...)
		if round%10 == 0 {
			p.Do("GET", "r")
		}
	}
	p.Do("GET", "r")
}

func TestBitmapBitfieldErrors(t *testing.T) {
	p := difftest.Start(t)
	p.Do("SET", "k", "foobar")
	for _, typ := range []string{"i0", "u0", "i65", "u64", "I8", "U8", "8", "x8", "i", "u", "", "i-1", "i08", "i+8",
		"i8 ", "i 8", "i1.0", "u99999999999999999999", "i9223372036854775807"} {
		p.Do("BITFIELD", "k", "GET", typ, 0)
		p.Do("BITFIELD", "k", "SET", typ, 0, 1)
		p.Do("BITFIELD_RO", "k", "GET", typ, 0)
	}
	// Types are parsed as C strings: a NUL ends them.
	p.Do("BITFIELD", "k", "GET", "i8\x00garbage", 0)
	p.Do("BITFIELD", "k", "GET", "u8\x00", 8)
	for _, off := range []string{"-1", "a", "", "#a", "#-1", "4294967296", "1.5", "#", "#536870912", "9223372036854775807"} {
		p.Do("BITFIELD", "k", "GET", "u8", off)
		p.Do("BITFIELD", "k", "SET", "i8", off, 1)
	}
	for _, v := range []string{"a", "", "1.5", "9223372036854775808", "-9223372036854775809", "01", "+1"} {
		p.Do("BITFIELD", "k", "SET", "i8", 0, v)
		p.Do("BITFIELD", "k", "INCRBY", "u8", 0, v)
	}
	// Syntax: unknown or incomplete subcommands.
	p.Do("BITFIELD", "k", "FOO")
	p.Do("BITFIELD", "k", "GET")
	p.Do("BITFIELD", "k", "GET", "u8")
	p.Do("BITFIELD", "k", "SET", "u8", 0)
	p.Do("BITFIELD", "k", "INCRBY", "u8", 0)
	p.Do("BITFIELD", "k", "OVERFLOW")
	p.Do("BITFIELD", "k", "OVERFLOW", "BAD")
	p.Do("BITFIELD", "k", "OVERFLOW", "BAD", "GET", "u8", 0)
	p.Do("BITFIELD", "k", "OVERFLOW", "", "GET", "u8", 0)
	p.Do("BITFIELD", "k", "OVERFLOW", "sat\x00x", "INCRBY", "u8", 0, 1000)
	p.Do("BITFIELD", "k", "GET\x00x", "u8", 0)
	p.Do("BITFIELD", "k", "GET", "u8", 0, "EXTRA")
	// Errors in a later operation abort the command before any write.
	p.Do("BITFIELD", "k", "SET", "u8", 0, 0, "GET", "u99", 0)
	p.Do("BITFIELD", "k", "SET", "u8", 0, 0, "SET", "u8", 0, "x")
	p.Do("BITFIELD", "k", "SET", "u8", 0, 0, "OVERFLOW", "x")
	p.Do("BITFIELD", "k", "SET", "u8", 0, 0, "BAD")
	p.Do("GET", "k")
	// BITFIELD_RO takes GET (and OVERFLOW) only.
	p.Do("BITFIELD_RO", "k")
	p.Do("BITFIELD_RO", "k", "OVERFLOW", "SAT")
	p.Do("BITFIELD_RO", "k", "OVERFLOW", "SAT", "GET", "i8", 0)
	p.Do("BITFIELD_RO", "k", "SET", "u8", 0, 1)
	p.Do("BITFIELD_RO", "k", "INCRBY", "u8", 0, 1)
	p.Do("BITFIELD_RO", "k", "GET", "u8", 0, "SET", "u8", 0, 1)
	p.Do("BITFIELD_RO", "k", "SET", "u8", 0, "x")
	p.Do("BITFIELD_RO", "k", "SET", "u64", 0, 1)
	p.Do("BITFIELD_RO", "missing", "SET", "u8", 0, 1)
	p.Do("BITFIELD_RO", "k", "FOO")
	p.Do("EXISTS", "missing")
	p.Do("GET", "k")
	p.Do("BITFIELD")
	p.Do("BITFIELD_RO")
}

func TestBitmapWrongType(t *testing.T) {
	p := difftest.Start74(t)
	bmNonString(t, p, "l")
	p.Do("SET", "s", "foo")
	p.Do("GETBIT", "l", 0)
	p.Do("GETBIT", "l", -1)
	p.Do("SETBIT", "l", 0, 1)
	p.Do("SETBIT", "l", 0, 2)
	p.Do("BITCOUNT", "l")
	p.Do("BITCOUNT", "l", "x", "y")
	p.Do("BITPOS", "l", 1)
	p.Do("BITPOS", "l", 2)
	p.Do("BITPOS", "l", 1, "x")
	p.Do("BITOP", "AND", "d", "s", "l")
	p.Do("BITOP", "NOT", "d", "l")
	p.Do("BITOP", "NOT", "l", "s")
	p.Do("TYPE", "l")
	p.Do("GET", "l")
	p.Do("BITFIELD", "l")
	p.Do("BITFIELD", "l", "GET", "u8", 0)
	p.Do("BITFIELD", "l", "SET", "u8", 0, 1)
	p.Do("BITFIELD", "l", "SET", "u99", 0, 1)
	p.Do("BITFIELD_RO", "l", "GET", "u8", 0)
	p.Do("BITFIELD_RO", "l", "SET", "u8", 0, 1)
	p.Do("TYPE", "d")
}

func TestBitmapResp3(t *testing.T) {
	p := difftest.Start(t)
	p.Proto(3)
	p.Do("SETBIT", "k", 5, 1)
	p.Do("GETBIT", "k", 5)
	p.Do("BITCOUNT", "k")
	p.Do("BITPOS", "k", 1)
	p.Do("BITOP", "NOT", "d", "k")
	p.Do("BITFIELD", "k", "GET", "u8", 0, "OVERFLOW", "FAIL", "INCRBY", "u8", 0, 1000, "SET", "i8", 0, 1)
	p.Do("BITFIELD", "k")
	p.Do("BITFIELD_RO", "k", "GET", "i8", 0)
	p.Do("BITFIELD_RO", "k", "SET", "i8", 0, 1)
	p.Do("BITFIELD", "k", "GET", "u99", 0)
}

// FuzzBitfield compares one BITFIELD operation (after an optional OVERFLOW)
// on an arbitrary value. The seeds run with go test; explore with
// go test ./server/ -run '^$' -fuzz FuzzBitfield.
func FuzzBitfield(f *testing.F) {
	f.Add([]byte("foobar"), uint8(0), true, uint8(8), int64(3), int64(7), uint8(0))
	f.Add([]byte{0x7f, 0xff}, uint8(2), true, uint8(8), int64(0), int64(1), uint8(2))
	f.Add([]byte{}, uint8(1), false, uint8(63), int64(5), int64(-1), uint8(1))
	f.Add([]byte{0xff, 0x00, 0xff}, uint8(2), true, uint8(64), int64(-3), int64(-9223372036854775808), uint8(2))
	f.Add([]byte("\x80"), uint8(3), false, uint8(1), int64(1), int64(2), uint8(0))
	f.Fuzz(func(t *testing.T, value []byte, op uint8, signed bool, width uint8, offset, arg int64, mode uint8) {
		if len(value) > 64 {
			value = value[:64]
		}
		typ := "u" + strconv.Itoa(int(width))
		if signed {
			typ = "i" + strconv.Itoa(int(width))
		}
		off := strconv.FormatInt(offset%1024, 10)
		if offset < 0 && offset > -64 {
			off = "#" + strconv.FormatInt(-offset, 10)
		}
		args := []any{"BITFIELD", "k", "OVERFLOW", []string{"WRAP", "SAT", "FAIL", "BAD"}[mode%4]}
		switch op % 4 {
		case 0:
			args = append(args, "GET", typ, off)
		case 1:
			args = append(args, "SET", typ, off, arg)
		case 2:
			args = append(args, "INCRBY", typ, off, arg)
		default:
			args = append(args, "INCRBY", typ, off, arg, "GET", typ, off)
		}
		p := difftest.Start(t)
		p.Do("SET", "k", value)
		p.Do(args...)
		p.Do("GET", "k")
		args[0] = "BITFIELD_RO"
		p.Do(args...)
	})
}

// TestBitopRedis82: BITOP's DIFF, DIFF1, ANDOR and ONE (Redis 8.2), as
// https://redis.io/docs/latest/commands/bitop/ defines them: shorter
// sources and missing keys read as zero bytes, the result is as long as the
// longest source.
func TestBitopRedis82(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.Start(t)
	p.Keyhive().Do("SET", "x", "\xf0\xaa")
	p.Keyhive().Do("SET", "y1", "\x0f\x55\x01")
	p.Keyhive().Do("SET", "y2", "\x30")
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		// DIFF: in X and none of the others. x=f0 aa, y1|y2 = 3f 55 01.
		docCase(t, p, ":3\r\n", "BITOP", "DIFF", "d", "x", "y1", "y2")
		docCase(t, p, "$3\r\n\xc0\xaa\x00\r\n", "GET", "d")
		// DIFF1: in one or more of the others, not in X.
		docCase(t, p, ":3\r\n", "BITOP", "diff1", "d", "x", "y1", "y2")
		docCase(t, p, "$3\r\n\x0f\x55\x01\r\n", "GET", "d")
		// ANDOR: in X and in one or more of the others.
		docCase(t, p, ":3\r\n", "BITOP", "ANDOR", "d", "x", "y1", "y2")
		docCase(t, p, "$3\r\n\x30\x00\x00\r\n", "GET", "d")
		// ONE: in exactly one source (f0^0f^30 with 30 twice: f0|0f minus 30).
		docCase(t, p, ":3\r\n", "BITOP", "ONE", "d", "x", "y1", "y2")
		docCase(t, p, "$3\r\n\xcf\xff\x01\r\n", "GET", "d")
		docCase(t, p, ":2\r\n", "BITOP", "ONE", "d", "x")
		docCase(t, p, "$2\r\n\xf0\xaa\r\n", "GET", "d")
		docCase(t, p, ":2\r\n", "BITOP", "ONE", "d", "x", "x")
		docCase(t, p, "$2\r\n\x00\x00\r\n", "GET", "d")
		// Missing keys are zeros: DIFF of a missing X is empty, of missing Ys is X.
		docCase(t, p, ":3\r\n", "BITOP", "DIFF", "d", "nokey", "y1")
		docCase(t, p, "$3\r\n\x00\x00\x00\r\n", "GET", "d")
		docCase(t, p, ":2\r\n", "BITOP", "DIFF", "d", "x", "nokey")
		docCase(t, p, "$2\r\n\xf0\xaa\r\n", "GET", "d")
		docCase(t, p, ":0\r\n", "BITOP", "ANDOR", "d", "nokey", "nokey2")
		docCase(t, p, ":0\r\n", "EXISTS", "d")
		// The destination may be a source.
		p.Keyhive().Do("SET", "d", "\xff")
		docCase(t, p, ":1\r\n", "BITOP", "DIFF1", "d", "y2", "d")
		docCase(t, p, "$1\r\n\xcf\r\n", "GET", "d")
		for _, op := range []string{"DIFF", "DIFF1", "ANDOR"} {
			docCase(t, p, "-ERR BITOP "+op+" must be called with at least two source keys.\r\n", "BITOP", op, "d", "x")
		}
		docCase(t, p, "-ERR BITOP DIFF1 must be called with at least two source keys.\r\n", "BITOP", "diff1", "d", "x")
		p.Keyhive().Do("LPUSH", "list", "a")
		docCase(t, p, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "BITOP", "ONE", "d", "x", "list")
		docCase(t, p, "-ERR syntax error\r\n", "BITOP", "NAND", "d", "x")
		p.Keyhive().Do("DEL", "list")
	}
	p.Keyhive().Do("MULTI")
	p.Keyhive().Do("BITOP", "ANDOR", "m", "x", "y1")
	docCase(t, p, "*1\r\n:3\r\n", "EXEC")
	docCase(t, p, ":3\r\n", "EVAL", "return redis.call('BITOP', 'ONE', KEYS[1], KEYS[2], KEYS[3])", "3", "s", "x", "y1")
}
