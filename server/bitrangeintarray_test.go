package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// BITRANGEINTARRAY (Redis 8.12), as
// https://redis.io/docs/latest/commands/bitrangeintarray/ documents it: the
// offsets of the set bits (ZEROS: the clear bits) in a range, ascending, in
// GETBIT's numbering (bit 0 the first byte's most significant) and in bits
// whatever the range's unit; start and end inclusive, BYTE by default,
// negative ones counting from the end as BITCOUNT's; LIMIT stops after
// count offsets. The copy of the page available gives its overview and
// arguments, not its reply and error sections; where they are silent
// Keyhive chose: a missing key has no offsets (an empty array), LIMIT 0 is
// no limit and a negative LIMIT is ZINTERCARD's error, the options come in
// any order, once each, and BITCOUNT's errors for the range.

// ints is an array of integers.
func bitOffsets(ns ...int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(ns))
	for _, n := range ns {
		fmt.Fprintf(&b, ":%d\r\n", n)
	}
	return b.String()
}

func bitSpan(from, to int) []int {
	var ns []int
	for i := from; i <= to; i++ {
		ns = append(ns, i)
	}
	return ns
}

// TestBitRangeIntArray: the page's rules, RESP2 and RESP3 (integers in both).
func TestBitRangeIntArray(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.Start(t)
	k := p.Keyhive()
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		k.Do("SET", "mykey", "foobar")
		// 'o' is 0x6f, 01101111: its set bits in byte 1.
		docCase(t, p, bitOffsets(9, 10, 12, 13, 14, 15), "BITRANGEINTARRAY", "mykey", "1", "1")
		docCase(t, p, bitOffsets(9, 10, 12, 13, 14, 15), "BITRANGEINTARRAY", "mykey", "1", "1", "BYTE")
		docCase(t, p, bitOffsets(8, 11), "BITRANGEINTARRAY", "mykey", "1", "1", "ZEROS")
		k.Do("SET", "b", "\xff\xf0\x00")
		docCase(t, p, bitOffsets(bitSpan(0, 11)...), "BITRANGEINTARRAY", "b", "0", "-1")
		docCase(t, p, bitOffsets(bitSpan(12, 23)...), "BITRANGEINTARRAY", "b", "0", "-1", "ZEROS")
		// BIT units; negative offsets from the end.
		docCase(t, p, bitOffsets(5, 6, 7, 8, 9, 10), "BITRANGEINTARRAY", "b", "5", "13", "BIT", "LIMIT", "6")
		docCase(t, p, bitOffsets(11), "BITRANGEINTARRAY", "b", "-13", "-12", "BIT")
		docCase(t, p, bitOffsets(22, 23), "BITRANGEINTARRAY", "b", "-2", "-1", "BIT", "ZEROS")
		docCase(t, p, bitOffsets(), "BITRANGEINTARRAY", "b", "-1", "-1")
		docCase(t, p, bitOffsets(bitSpan(16, 23)...), "BITRANGEINTARRAY", "b", "-1", "100", "ZEROS")
		// LIMIT: the first count offsets; 0 none.
		docCase(t, p, bitOffsets(0, 1, 2), "BITRANGEINTARRAY", "b", "0", "-1", "LIMIT", "3")
		docCase(t, p, bitOffsets(12, 13), "BITRANGEINTARRAY", "b", "0", "-1", "ZEROS", "LIMIT", "2")
		docCase(t, p, bitOffsets(bitSpan(8, 11)...), "BITRANGEINTARRAY", "b", "1", "2", "LIMIT", "0")
		docCase(t, p, bitOffsets(bitSpan(8, 11)...), "BITRANGEINTARRAY", "b", "1", "2", "LIMIT", "100", "BYTE")
		// Empty ranges and a missing key: no offsets, with ZEROS too.
		docCase(t, p, bitOffsets(), "BITRANGEINTARRAY", "b", "2", "1")
		docCase(t, p, bitOffsets(), "BITRANGEINTARRAY", "b", "-1", "-2", "ZEROS")
		docCase(t, p, bitOffsets(), "BITRANGEINTARRAY", "b", "3", "10")
		docCase(t, p, bitOffsets(), "BITRANGEINTARRAY", "nokey", "0", "-1", "ZEROS")
		k.Do("SET", "empty", "")
		docCase(t, p, bitOffsets(), "BITRANGEINTARRAY", "empty", "0", "-1", "ZEROS")
		// A long value: the offsets past the first word.
		k.Do("SETBIT", "long", 1000, 1)
		k.Do("SETBIT", "long", 7, 1)
		docCase(t, p, bitOffsets(7, 1000), "BITRANGEINTARRAY", "long", "0", "-1")
		docCase(t, p, bitOffsets(1000), "BITRANGEINTARRAY", "long", "8", "-1", "BIT")
		// It reads, never writes: the value is unchanged.
		docCase(t, p, "$6\r\nfoobar\r\n", "GET", "mykey")
		// Errors.
		notInt := "-ERR value is not an integer or out of range\r\n"
		docCase(t, p, notInt, "BITRANGEINTARRAY", "b", "x", "1")
		docCase(t, p, notInt, "BITRANGEINTARRAY", "b", "0", "1", "LIMIT", "x")
		docCase(t, p, "-ERR LIMIT can't be negative\r\n", "BITRANGEINTARRAY", "b", "0", "1", "LIMIT", "-1")
		for _, bad := range [][]any{
			{"BITRANGEINTARRAY", "b", "0", "1", "WORD"}, {"BITRANGEINTARRAY", "b", "0", "1", "LIMIT"},
			{"BITRANGEINTARRAY", "b", "0", "1", "BIT", "BYTE"}, {"BITRANGEINTARRAY", "b", "0", "1", "ZEROS", "ZEROS"},
			{"BITRANGEINTARRAY", "b", "0", "1", "LIMIT", "1", "LIMIT", "2"},
		} {
			docCase(t, p, "-ERR syntax error\r\n", bad...)
		}
		k.Do("RPUSH", "list", "x")
		docCase(t, p, wrongTypeReply, "BITRANGEINTARRAY", "list", "0", "-1")
		docCase(t, p, "-ERR wrong number of arguments for 'bitrangeintarray' command\r\n", "BITRANGEINTARRAY", "b", "0")
		k.Do("FLUSHALL")
	}
}

// TestBitRangeIntArrayCommandTable: COMMAND INFO and GETKEYS from its spec
// (the page's @read @bitmap @slow; one read-only key).
func TestBitRangeIntArrayCommandTable(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.Start(t)
	info := p.Keyhive().Do("COMMAND", "INFO", "bitrangeintarray").Elems[0]
	var got []string
	for _, e := range info.Elems[:7] {
		got = append(got, string(e.Raw))
	}
	want := "$16\r\nbitrangeintarray\r\n :-4\r\n *1\r\n+readonly\r\n :1\r\n :1\r\n :1\r\n *3\r\n+@read\r\n+@bitmap\r\n+@slow\r\n"
	if strings.Join(got, " ") != want {
		t.Errorf("COMMAND INFO bitrangeintarray: %q, want %q", strings.Join(got, " "), want)
	}
	docCase(t, p, bulkArray("k"), "COMMAND", "GETKEYS", "BITRANGEINTARRAY", "k", "0", "-1", "LIMIT", "1", "ZEROS")
	// A read: no propagation, served on a read-only replica's keyspace.
	if d := p.Keyhive().Do("COMMAND", "DOCS", "bitrangeintarray").Raw; !strings.Contains(string(d), "8.12.0") || !strings.Contains(string(d), "ZEROS") {
		t.Errorf("COMMAND DOCS bitrangeintarray: %q", d)
	}
}
