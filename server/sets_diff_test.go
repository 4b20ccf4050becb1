package server_test

// Differential tests of the set commands against redis-server.

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestSetBasics: against 7.4.1, whose small sets of strings are listpacks
// (Redis 7.2), as Keyhive's are.
func TestSetBasics(t *testing.T) {
	p := difftest.Start74(t)
	p.Do("SADD", "s", "3", "1", "2", "1", "-5", "10")
	p.Do("SADD", "s", "2")
	p.Do("SADD", "s")
	p.Do("SMEMBERS", "s")
	p.Do("OBJECT", "ENCODING", "s")
	p.Do("TYPE", "s")
	p.Do("SCARD", "s")
	p.Do("SCARD", "nokey")
	p.Do("SISMEMBER", "s", "3")
	p.Do("SISMEMBER", "s", "03")
	p.Do("SISMEMBER", "s", "x")
	p.Do("SISMEMBER", "nokey", "x")
	p.Do("SMISMEMBER", "s", "1", "x", "10", "+1")
	p.Do("SMISMEMBER", "nokey", "1", "x")
	p.Do("SMISMEMBER", "s")
	p.Do("SMEMBERS", "nokey")
	p.Do("SREM", "s", "1", "1", "x", "-5")
	p.Do("SREM", "nokey", "1")
	p.Do("SREM", "s")
	p.Do("SMEMBERS", "s")
	p.Do("SREM", "s", "2", "3", "10")
	p.Do("EXISTS", "s")
	// Canonical integers only make an intset.
	p.Do("SADD", "i", "9223372036854775807", "-9223372036854775808", "0")
	p.Do("OBJECT", "ENCODING", "i")
	p.Do("SMEMBERS", "i")
	for _, m := range []string{"9223372036854775808", "01", "-0", "+1", " 1", "1.0", ""} {
		k := "n" + m
		p.Do("SADD", k, m)
		p.Do("OBJECT", "ENCODING", k)
		p.Do("SMEMBERS", k)
	}
	// Adding a non-integer converts, once, never back.
	p.Do("SADD", "c", "5", "4")
	p.Do("SADD", "c", "x")
	p.Do("OBJECT", "ENCODING", "c")
	p.DoUnordered("SMEMBERS", "c")
	p.Do("SREM", "c", "x")
	p.Do("OBJECT", "ENCODING", "c")
	p.DoUnordered("SMEMBERS", "c")
	p.Do("SISMEMBER", "c", "4")
	// Binary members.
	p.Do("SADD", "bin", "a\x00b", "\r\n", "", "\xff")
	p.Do("SISMEMBER", "bin", "a\x00b")
	p.Do("SISMEMBER", "bin", "")
	p.DoUnordered("SMEMBERS", "bin")
	p.Do("SCARD", "bin")
	// TTL is kept by edits.
	p.Do("SADD", "t", "1")
	p.Do("EXPIRE", "t", "100")
	p.Do("SADD", "t", "a")
	p.Do("SREM", "t", "1")
	p.Do("TTL", "t")
	p.Do("COPY", "t", "t2")
	p.Do("SADD", "t2", "b")
	p.DoUnordered("SMEMBERS", "t")
	p.DoUnordered("SMEMBERS", "t2")
}

func TestSetWrongTypeAndArity(t *testing.T) {
	p := difftest.Start(t)
	p.Do("SET", "str", "x")
	p.Do("SADD", "s", "1")
	for _, c := range [][]any{
		{"SADD", "str", "a"}, {"SREM", "str", "a"}, {"SISMEMBER", "str", "a"}, {"SMISMEMBER", "str", "a"},
		{"SMEMBERS", "str"}, {"SCARD", "str"}, {"SPOP", "str"}, {"SPOP", "str", "2"}, {"SPOP", "str", "x"},
		{"SRANDMEMBER", "str"}, {"SRANDMEMBER", "str", "2"}, {"SRANDMEMBER", "str", "x"},
		{"SMOVE", "str", "s", "a"}, {"SMOVE", "s", "str", "1"}, {"SMOVE", "s", "str", "nope"}, {"SMOVE", "nokey", "str", "a"},
		{"SINTER", "s", "str"}, {"SINTER", "nokey", "str"}, {"SINTERCARD", "2", "nokey", "str"},
		{"SUNION", "s", "str"}, {"SDIFF", "s", "str"}, {"SDIFF", "nokey", "str"},
		{"SINTERSTORE", "d", "s", "str"}, {"SUNIONSTORE", "d", "str"}, {"SDIFFSTORE", "d", "s", "str"},
		{"SSCAN", "str", "0"}, {"SSCAN", "str", "x"},
		{"SADD", "s"}, {"SREM", "s"}, {"SISMEMBER", "s"}, {"SMISMEMBER", "s"}, {"SMEMBERS"}, {"SCARD"},
		{"SPOP"}, {"SPOP", "s", "1", "2"}, {"SRANDMEMBER"}, {"SRANDMEMBER", "s", "1", "2"}, {"SMOVE", "s", "d"},
		{"SINTER"}, {"SINTERCARD", "1"}, {"SINTERSTORE", "d"}, {"SUNION"}, {"SUNIONSTORE", "d"}, {"SDIFF"},
		{"SDIFFSTORE", "d"}, {"SSCAN", "s"},
	} {
		p.Do(c...)
	}
	p.Do("EXISTS", "d")
	p.Do("SMEMBERS", "s")
}

func TestSetPopRandom(t *testing.T) {
	p := difftest.Start(t)
	for _, c := range [][]any{
		{"SPOP", "s", "-1"}, {"SPOP", "s", "x"}, {"SPOP", "s", "9223372036854775808"},
		{"SRANDMEMBER", "s", "x"}, {"SRANDMEMBER", "s", "-9223372036854775808"}, {"SRANDMEMBER", "s", "9223372036854775808"},
		{"SPOP", "nokey"}, {"SPOP", "nokey", "3"}, {"SPOP", "nokey", "0"},
		{"SRANDMEMBER", "nokey"}, {"SRANDMEMBER", "nokey", "3"}, {"SRANDMEMBER", "nokey", "-3"}, {"SRANDMEMBER", "nokey", "0"},
	} {
		p.Do(c...)
	}
	p.Do("SADD", "s", "5", "3", "1")
	p.Do("SRANDMEMBER", "s", "0")
	p.Do("SPOP", "s", "0")
	p.Do("SRANDMEMBER", "s", "3")
	p.Do("SRANDMEMBER", "s", "9223372036854775807")
	p.Do("SADD", "h", "a", "b", "c", "d", "e", "f", "g", "h")
	p.DoUnordered("SRANDMEMBER", "h", "100")
	members := map[string]bool{}
	for _, m := range p.Redis().Do("SMEMBERS", "h").Elems {
		members[m.Str] = true
	}
	p.DoCompare(setRandShape(1, true, members), "SRANDMEMBER", "h")
	p.DoCompare(setRandShape(3, true, members), "SRANDMEMBER", "h", "3")
	p.DoCompare(setRandShape(7, true, members), "SRANDMEMBER", "h", "7")
	p.DoCompare(setRandShape(1, true, members), "SRANDMEMBER", "h", "1")
	p.DoCompare(setRandShape(20, false, members), "SRANDMEMBER", "h", "-20")
	p.DoCompare(setRandShape(2, true, map[string]bool{"1": true, "3": true, "5": true}), "SRANDMEMBER", "s", "2")
	p.DoCompare(setRandShape(5, false, map[string]bool{"1": true, "3": true, "5": true}), "SRANDMEMBER", "s", "-5")
	// SPOP: shapes and the members left.
	p.DoCompare(setRandShape(1, true, members), "SPOP", "h")
	p.DoCompare(setRandShape(3, true, members), "SPOP", "h", "3")
	p.Do("SCARD", "h")
	p.DoCompare(setRandShape(4, true, members), "SPOP", "h", "4")
	p.Do("EXISTS", "h")
	p.DoCompare(setRandShape(1, true, map[string]bool{"1": true, "3": true, "5": true}), "SPOP", "s", "1")
	p.Do("SCARD", "s")
	p.DoCompare(setRandShape(1, true, map[string]bool{"1": true, "3": true, "5": true}), "SPOP", "s")
	p.DoCompare(setRandShape(1, true, map[string]bool{"1": true, "3": true, "5": true}), "SPOP", "s")
	p.Do("EXISTS", "s")
	p.Do("SADD", "s", "8", "2", "4")
	p.Do("SPOP", "s", "3")
	p.Do("EXISTS", "s")
	p.Do("SADD", "one", "x")
	p.Do("SPOP", "one")
	p.Do("EXISTS", "one")
	// RESP3: set replies where Redis writes them.
	p.Proto(3)
	p.Do("SADD", "s", "8", "2", "4")
	p.Do("SRANDMEMBER", "s", "3")
	p.Do("SRANDMEMBER", "s", "0")
	p.Do("SRANDMEMBER", "nokey", "3")
	p.Do("SPOP", "nokey", "3")
	p.Do("SPOP", "s", "0")
	p.DoCompare(setRandShape(2, true, map[string]bool{"2": true, "4": true, "8": true}), "SRANDMEMBER", "s", "2")
	p.DoCompare(setRandShape(2, false, map[string]bool{"2": true, "4": true, "8": true}), "SRANDMEMBER", "s", "-2")
	p.DoCompare(setRandShape(2, true, map[string]bool{"2": true, "4": true, "8": true}), "SPOP", "s", "2")
	p.DoCompare(setRandShape(1, true, map[string]bool{"2": true, "4": true, "8": true}), "SPOP", "s", "5")
	p.Do("EXISTS", "s")
	p.Do("SADD", "s", "8", "2", "4")
	p.Do("SPOP", "s", "5")
	p.Do("SPOP", "nokey")
	p.Do("SRANDMEMBER", "nokey")
}

// setRandShape checks SPOP/SRANDMEMBER replies by shape: n members (a bare
// string for n=1 without a count, otherwise an aggregate of the same kind on
// both sides), distinct when unique, each a member of members.
func setRandShape(n int, unique bool, members map[string]bool) func(r, k difftest.Reply) error {
	return func(r, k difftest.Reply) error {
		if r.Kind != k.Kind || r.IsError() {
			return difftest.Exact(r, k)
		}
		for _, side := range []difftest.Reply{r, k} {
			elems := side.Elems
			if !side.IsAggregate() {
				elems = []difftest.Reply{side}
			}
			if len(elems) != n {
				return fmt.Errorf("%d members, want %d: %s", len(elems), n, side)
			}
			seen := map[string]bool{}
			for _, e := range elems {
				if !members[e.Str] {
					return fmt.Errorf("%q is not a member", e.Str)
				}
				if unique && seen[e.Str] {
					return fmt.Errorf("%q repeated", e.Str)
				}
				seen[e.Str] = true
			}
		}
		return nil
	}
}

// TestSetMove: against 7.4.1 for its listpack sets (Redis 7.2).
func TestSetMove(t *testing.T) {
	p := difftest.Start74(t)
	p.Do("SADD", "a", "1", "2", "x")
	p.Do("SADD", "b", "3")
	p.Do("SMOVE", "a", "b", "1")
	p.Do("SMOVE", "a", "b", "nope")
	p.Do("SMOVE", "a", "b", "x")
	p.Do("OBJECT", "ENCODING", "b")
	p.DoUnordered("SMEMBERS", "b")
	p.Do("SMOVE", "a", "a", "2")
	p.Do("SMOVE", "a", "a", "9")
	p.Do("SMOVE", "nokey", "b", "1")
	p.Do("SMOVE", "a", "new", "2")
	p.Do("EXISTS", "a")
	p.Do("SMEMBERS", "new")
	p.Do("OBJECT", "ENCODING", "new")
	p.Do("SMOVE", "b", "new", "3")
	p.Do("SMEMBERS", "new")
	p.Do("SADD", "c", "3")
	p.Do("SMOVE", "c", "new", "3")
	p.Do("SMEMBERS", "new")
	p.Do("EXISTS", "c")
	p.Do("SMOVE", "b", "new2", "x")
	p.Do("OBJECT", "ENCODING", "new2")
	p.Do("SMEMBERS", "new2")
}

// TestSetAlgebra: against 7.4.1 for its listpack sets (Redis 7.2).
func TestSetAlgebra(t *testing.T) {
	p := difftest.Start74(t)
	p.Do("SADD", "i1", "1", "2", "3", "4", "5")
	p.Do("SADD", "i2", "4", "5", "6", "2")
	p.Do("SADD", "i3", "5", "2", "100")
	p.Do("SADD", "h1", "a", "b", "c", "2", "5")
	p.Do("SADD", "h2", "b", "c", "d")
	p.Do("SET", "str", "x")
	p.Do("SINTER", "i1")
	p.Do("SINTER", "i1", "i2")
	p.Do("SINTER", "i1", "i2", "i3")
	p.Do("SINTER", "i1", "nokey")
	p.Do("SINTER", "nokey", "i1")
	p.Do("SINTER", "i1", "h1")
	p.DoUnordered("SINTER", "h1", "h2")
	p.Do("SINTER", "h1", "h2", "i1")
	p.Do("SUNION", "i1", "i2", "nokey")
	p.Do("SUNION", "nokey")
	p.DoUnordered("SUNION", "h1", "i1")
	p.DoUnordered("SUNION", "h1", "h2")
	p.Do("SDIFF", "i1", "i2")
	p.Do("SDIFF", "i1", "i2", "i3")
	p.Do("SDIFF", "i1", "nokey")
	p.Do("SDIFF", "nokey", "i1")
	p.Do("SDIFF", "i1", "i1")
	p.DoUnordered("SDIFF", "h1", "h2")
	p.Do("SDIFF", "h1", "h2", "a", "i1") // an intset result: ascending
	p.DoUnordered("SDIFF", "h1", "i1")
	for _, c := range [][]any{
		{"SINTERCARD", "1", "i1"}, {"SINTERCARD", "2", "i1", "i2"}, {"SINTERCARD", "3", "i1", "i2", "i3"},
		{"SINTERCARD", "2", "i1", "nokey"}, {"SINTERCARD", "2", "h1", "h2", "LIMIT", "1"},
		{"SINTERCARD", "2", "i1", "i2", "LIMIT", "0"}, {"SINTERCARD", "2", "i1", "i2", "limit", "2"},
		{"SINTERCARD", "2", "i1", "i2", "LIMIT", "100"}, {"SINTERCARD", "2", "i1", "i2", "LIMIT", "1", "LIMIT", "5"},
		{"SINTERCARD", "0", "i1"}, {"SINTERCARD", "-1", "i1"}, {"SINTERCARD", "x", "i1"}, {"SINTERCARD", "3", "i1", "i2"},
		{"SINTERCARD", "1", "i1", "LIMIT", "-1"}, {"SINTERCARD", "1", "i1", "LIMIT", "x"}, {"SINTERCARD", "1", "i1", "LIMIT"},
		{"SINTERCARD", "1", "i1", "FOO", "1"}, {"SINTERCARD", "1", "str"}, {"SINTERCARD", "2", "nokey", "str"},
	} {
		p.Do(c...)
	}
	// STORE forms.
	p.Do("SINTERSTORE", "d", "i1", "i2")
	p.Do("SMEMBERS", "d")
	p.Do("OBJECT", "ENCODING", "d")
	p.Do("SUNIONSTORE", "d", "h1", "h2")
	p.Do("OBJECT", "ENCODING", "d")
	p.DoUnordered("SMEMBERS", "d")
	p.Do("SDIFFSTORE", "d", "h1", "h2")
	p.Do("OBJECT", "ENCODING", "d")
	p.DoUnordered("SMEMBERS", "d")
	p.Do("SDIFFSTORE", "d", "h1", "h2", "i2")
	p.Do("OBJECT", "ENCODING", "d")
	p.Do("SMEMBERS", "d")
	p.Do("EXPIRE", "d", "100")
	p.Do("SUNIONSTORE", "d", "d", "i3")
	p.Do("TTL", "d")
	p.Do("OBJECT", "ENCODING", "d")
	p.DoUnordered("SMEMBERS", "d")
	p.Do("SINTERSTORE", "i1", "i1", "i2") // destination among the sources
	p.Do("SMEMBERS", "i1")
	// A destination of another type is overwritten; an empty result deletes it.
	p.Do("SET", "ds", "x")
	p.Do("SUNIONSTORE", "ds", "i2")
	p.Do("TYPE", "ds")
	p.Do("HSET", "dh", "f", "v")
	p.Do("SINTERSTORE", "dh", "h1", "h2")
	p.Do("TYPE", "dh")
	p.DoUnordered("SMEMBERS", "dh")
	p.Do("SINTERSTORE", "dh", "i2", "nokey")
	p.Do("EXISTS", "dh")
	p.Do("SDIFFSTORE", "ds", "i2", "i2")
	p.Do("EXISTS", "ds")
	p.Do("SET", "ds", "x")
	p.Do("SUNIONSTORE", "ds", "nokey")
	p.Do("EXISTS", "ds")
	p.Do("SINTERSTORE", "nokey2", "i2", "h2")
	p.Do("SDIFFSTORE", "nokey2", "nokey", "i2")
	p.Do("EXISTS", "nokey2")
	p.Do("SINTERSTORE", "ds", "str", "i2")
	// RESP3 replies.
	p.Proto(3)
	p.Do("SMEMBERS", "i2")
	p.Do("SMEMBERS", "nokey")
	p.Do("SINTER", "i2", "i3")
	p.Do("SINTER", "i2", "nokey")
	p.Do("SUNION", "i2", "i3")
	p.Do("SDIFF", "i2", "i3")
	p.Do("SDIFF", "nokey", "i3")
	p.DoUnordered("SMEMBERS", "h2")
	p.Do("SINTERCARD", "2", "i2", "i3")
	p.Do("SMISMEMBER", "i2", "2", "3")
	p.Do("SSCAN", "i2", "0")
}

func TestSetScan(t *testing.T) {
	p := difftest.Start74(t)
	p.Do("SSCAN", "nokey", "0")
	p.Do("SSCAN", "nokey", "x")
	p.Do("SADD", "s", "30", "1", "-2", "11", "100")
	p.Do("SSCAN", "s", "0")
	p.Do("SSCAN", "s", "0", "COUNT", "1")
	p.Do("SSCAN", "s", "0", "MATCH", "1*")
	p.Do("SSCAN", "s", "0", "match", "*", "count", "2")
	p.Do("SSCAN", "s", "0", "COUNT", "0")
	p.Do("SSCAN", "s", "0", "COUNT", "x")
	p.Do("SSCAN", "s", "0", "MATCH")
	p.Do("SSCAN", "s", "0", "FOO", "bar")
	p.Do("SSCAN", "s", "-1")
	p.Do("SSCAN", "s", "x")
	p.Do("SADD", "h", "a", "b", "c")
	p.DoCompare(func(r, k difftest.Reply) error {
		if len(r.Elems) != 2 || len(k.Elems) != 2 || r.Elems[0].Str != k.Elems[0].Str {
			return difftest.Exact(r, k)
		}
		return difftest.Unordered(r.Elems[1], k.Elems[1])
	}, "SSCAN", "h", "0", "COUNT", "100")
}

// TestSetEncodingThresholds converts at exactly Redis's limit, in every
// command that builds a set; against 7.4.1, whose small sets of strings are
// listpacks (Redis 7.2).
func TestSetEncodingThresholds(t *testing.T) {
	p := difftest.StartIsolated74(t, "--set-max-intset-entries", "4")
	p.Do("SADD", "s", "4", "3", "2", "1")
	p.Do("OBJECT", "ENCODING", "s")
	p.Do("SMEMBERS", "s")
	p.Do("SADD", "s", "3")
	p.Do("OBJECT", "ENCODING", "s")
	p.Do("SADD", "s", "5")
	p.Do("OBJECT", "ENCODING", "s")
	p.DoUnordered("SMEMBERS", "s")
	p.Do("SREM", "s", "5", "4")
	p.Do("OBJECT", "ENCODING", "s") // never back
	p.Do("SUNION", "s")             // a result is an intset again: ascending
	p.Do("SDIFF", "s", "nokey")
	p.Do("SUNIONSTORE", "d", "s")
	p.Do("OBJECT", "ENCODING", "d")
	p.Do("SMEMBERS", "d")
	p.DoUnordered("SRANDMEMBER", "s", "10") // the hashtable's own order
	p.Do("SPOP", "s", "10")                 // rebuilt as an intset: ascending
	p.Do("SADD", "s", "1", "2", "3")
	p.Do("SADD", "t", "7", "8", "9")
	p.Do("SUNIONSTORE", "d", "s", "t")
	p.Do("OBJECT", "ENCODING", "d")
	p.Do("SINTERSTORE", "d", "s", "s")
	p.Do("OBJECT", "ENCODING", "d")
	p.Do("SMOVE", "t", "d", "7")
	p.Do("OBJECT", "ENCODING", "d")
	p.Do("SMOVE", "t", "d", "8")
	p.Do("OBJECT", "ENCODING", "d")
	p.DoUnordered("SMEMBERS", "d")
	p.Do("SPOP", "s", "10")
	p.Do("SADD", "big", "1", "2", "3", "4", "5", "6")
	p.Do("OBJECT", "ENCODING", "big")
	p.Do("SADD", "z", "1")
	p.Do("CONFIG", "SET", "set-max-intset-entries", "0")
	p.Do("SADD", "z", "2")
	p.Do("OBJECT", "ENCODING", "z")
	p.Do("SADD", "z0", "1")
	p.Do("OBJECT", "ENCODING", "z0")
}

// TestSetLarge exercises the hashtable form past the intset limit.
func TestSetLarge(t *testing.T) {
	p := difftest.StartIsolated(t, "--set-max-intset-entries", "16")
	const n = 400
	args := []any{"SADD", "big"}
	for i := 0; i < n; i++ {
		args = append(args, strconv.Itoa(i*3))
	}
	p.Do(args...)
	p.Do("OBJECT", "ENCODING", "big")
	p.Do("SCARD", "big")
	for i := 0; i < n; i += 4 {
		p.Do("SREM", "big", strconv.Itoa(i*3), "nope")
	}
	p.Do("SCARD", "big")
	p.Do("SISMEMBER", "big", "3")
	p.Do("SISMEMBER", "big", "0")
	p.DoUnordered("SMEMBERS", "big")
	p.Do("SADD", "mix", "a", "1", "2")
	p.DoUnordered("SINTER", "big", "mix")
	p.DoUnordered("SUNION", "big", "mix")
	p.DoUnordered("SDIFF", "big", "mix")
	p.Do("SINTERCARD", "2", "big", "big", "LIMIT", "17")
	p.Do("SDIFFSTORE", "d", "big", "big")
	p.Do("EXISTS", "d")
	got := scanAll(t, p.Keyhive(), "big", 7)
	want := map[string]bool{}
	for _, m := range p.Redis().Do("SMEMBERS", "big").Elems {
		want[m.Str] = true
	}
	if len(got) != len(want) {
		t.Fatalf("SSCAN found %d members, want %d", len(got), len(want))
	}
	for m := range want {
		if !got[m] {
			t.Fatalf("SSCAN missed %q", m)
		}
	}
	p.DoCompare(setRandShape(10, true, want), "SRANDMEMBER", "big", "10")
	p.DoCompare(setRandShape(250, true, want), "SRANDMEMBER", "big", "250")
	p.DoCompare(setRandShape(600, false, want), "SRANDMEMBER", "big", "-600")
	p.DoCompare(setRandShape(100, true, want), "SPOP", "big", "100")
	p.DoCompare(setRandShape(150, true, want), "SPOP", "big", "150")
	p.Do("SCARD", "big")
	p.DoCompare(setRandShape(50, true, want), "SPOP", "big", "1000")
	p.Do("EXISTS", "big")
}

// TestSetPropagation checks what the set writes propagate, on Keyhive and on
// redis-server alike.
func TestSetPropagation(t *testing.T) {
	servers := []*propServer{startKeyhiveProp(t)}
	if r := startRedisAOF(t); r != nil {
		servers = append(servers, r)
	}
	steps := []propStep{
		w("SADD s 1 2 x", "SADD s 1 2 x"),
		w("SADD s 1"),
		w("SREM s 9"),
		w("SREM s 1 9", "SREM s 1 9"),
		w("SADD one 7", "SADD one 7"),
		w("SPOP one", "SREM one 7"),
		w("SPOP one"),
		w("SPOP s 0"),
		w("SPOP s 5", "DEL s"),
		w("SADD a 1 2", "SADD a 1 2"),
		w("SMOVE a b 1", "SMOVE a b 1"),
		w("SMOVE a b 9"),
		w("SINTERSTORE d a b"),
		w("SUNIONSTORE d a b", "SUNIONSTORE d a b"),
		w("SDIFFSTORE d a a", "SDIFFSTORE d a a"),
		w("SDIFFSTORE d a a"),
		w("SRANDMEMBER a 2"),
	}
	for _, s := range servers {
		s.collect()
	}
	for _, step := range steps {
		for _, s := range servers {
			t0 := time.Now().UnixMilli()
			reply := s.conn.do(t, step.cmd...)
			t1 := time.Now().UnixMilli()
			if err := matchPropagated(s.collect(), step.want, 0, t0, t1); err != nil {
				t.Errorf("%s: %q (reply %v): %v", s.name, step.cmd, reply, err)
			}
		}
	}
	// SPOP with a count below the size propagates the removals: Redis as one
	// SREM per member in a MULTI, Keyhive as one SREM of them all.
	k := servers[0]
	k.conn.do(t, "SADD", "r", "a", "b", "c", "d")
	k.collect()
	reply := k.conn.do(t, "SPOP", "r", "3")
	got := k.collect()
	if len(got) != 1 || len(got[0].argv) != 5 || got[0].argv[0] != "SREM" || got[0].argv[1] != "r" {
		t.Fatalf("SPOP r 3 propagated %v", got)
	}
	popped := map[string]bool{}
	for _, e := range reply.Elems {
		popped[e.Str] = true
	}
	for _, m := range got[0].argv[2:] {
		if !popped[m] {
			t.Errorf("SPOP r 3 replied %v, propagated %v", reply, got)
		}
	}
}

func TestSetCommandInfo(t *testing.T) {
	p := difftest.Start(t)
	for _, name := range []string{"sadd", "srem", "sismember", "smismember", "smembers", "scard", "spop",
		"srandmember", "smove", "sinter", "sunion", "sdiff", "sinterstore", "sunionstore", "sdiffstore", "sscan"} {
		p.DoCompare(commandInfoCompare, "COMMAND", "INFO", name)
	}
	p.DoCompare(commandInfoCompare, "COMMAND", "INFO", "sintercard", "lmpop")
	p.Do("COMMAND", "GETKEYS", "SINTERCARD", "2", "a", "b", "LIMIT", "1")
	p.Do("COMMAND", "GETKEYS", "SMOVE", "a", "b", "m")
	p.Do("COMMAND", "GETKEYS", "SINTERSTORE", "d", "a", "b")
}

// TestSMoveWatch: SMOVE of a member the destination already has changes
// only the source, so a WATCH of the destination holds (a hashtable set,
// changed in place, once reported itself modified).
func TestSMoveWatch(t *testing.T) {
	p := difftest.StartIsolated(t)
	other := p.NewConn()
	for _, members := range [][]any{{"a", "b"}, {"1", "2"}} {
		p.Do("DEL", "src", "dst")
		p.Do(append([]any{"SADD", "src"}, members...)...)
		p.Do(append([]any{"SADD", "dst"}, members...)...)
		p.Do("WATCH", "dst")
		other.Do("SMOVE", "src", "dst", members[0])
		p.Do("MULTI")
		p.Do("SCARD", "dst")
		p.Do("EXEC")
		p.Do("WATCH", "src")
		other.Do("SMOVE", "src", "dst", members[1])
		p.Do("MULTI")
		p.Do("SCARD", "src")
		p.Do("EXEC")
	}
}

// TestSetCardCommands: SUNIONCARD and SDIFFCARD (Redis 8.10), as
// https://redis.io/docs/latest/commands/sunioncard/ and
// https://redis.io/docs/latest/commands/sdiffcard/ document them (their
// examples first), with SINTERCARD's argument errors.
func TestSetCardCommands(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.Start(t)
	p.Keyhive().Do("SADD", "key1", "a", "b", "c")
	p.Keyhive().Do("SADD", "key2", "c", "d", "e")
	p.Keyhive().Do("SADD", "ints", "1", "2", "3", "4")
	big := []any{"SADD", "big"}
	for i := range 1000 {
		big = append(big, fmt.Sprint("m", i))
	}
	p.Keyhive().Do(big...)
	p.Keyhive().Do("SET", "str", "x")
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		docCase(t, p, ":5\r\n", "SUNIONCARD", "2", "key1", "key2")
		docCase(t, p, ":3\r\n", "SUNIONCARD", "2", "key1", "key2", "LIMIT", "3")
		docCase(t, p, ":2\r\n", "SDIFFCARD", "2", "key1", "key2")
		docCase(t, p, ":1\r\n", "SDIFFCARD", "2", "key1", "key2", "LIMIT", "1")
		// Missing keys are empty sets; LIMIT 0 is no limit.
		docCase(t, p, ":3\r\n", "SUNIONCARD", "3", "key1", "nokey", "key1", "LIMIT", "0")
		docCase(t, p, ":0\r\n", "SUNIONCARD", "1", "nokey")
		docCase(t, p, ":0\r\n", "SDIFFCARD", "2", "nokey", "key1")
		docCase(t, p, ":3\r\n", "SDIFFCARD", "2", "key1", "nokey")
		docCase(t, p, ":3\r\n", "SDIFFCARD", "1", "key1")
		docCase(t, p, ":0\r\n", "SDIFFCARD", "2", "key1", "key1")
		docCase(t, p, ":1009\r\n", "SUNIONCARD", "4", "big", "ints", "key1", "key2")
		docCase(t, p, ":1000\r\n", "SDIFFCARD", "3", "big", "ints", "key1")
		// APPROX: a HyperLogLog estimate, exact for small sets, within LIMIT.
		docCase(t, p, ":5\r\n", "SUNIONCARD", "2", "key1", "key2", "APPROX")
		docCase(t, p, ":4\r\n", "SUNIONCARD", "2", "key1", "key2", "LIMIT", "4", "APPROX")
		if n := p.Keyhive().Do("SUNIONCARD", "3", "big", "ints", "big", "APPROX").Int; n < 990 || n > 1020 {
			t.Errorf("SUNIONCARD APPROX of 1004 members: %d", n)
		}
		docCase(t, p, "-ERR syntax error\r\n", "SDIFFCARD", "2", "key1", "key2", "APPROX")
		docCase(t, p, "-ERR syntax error\r\n", "SUNIONCARD", "1", "key1", "LIMIT")
		docCase(t, p, "-ERR syntax error\r\n", "SUNIONCARD", "1", "key1", "key2")
		docCase(t, p, "-ERR LIMIT can't be negative\r\n", "SUNIONCARD", "1", "key1", "LIMIT", "-1")
		docCase(t, p, "-ERR numkeys should be greater than 0\r\n", "SDIFFCARD", "0", "key1")
		docCase(t, p, "-ERR Number of keys can't be greater than number of args\r\n", "SUNIONCARD", "3", "key1", "key2")
		docCase(t, p, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "SUNIONCARD", "2", "key1", "str")
		docCase(t, p, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "SDIFFCARD", "2", "str", "key1")
	}
	docCase(t, p, "*2\r\n$4\r\nkey1\r\n$4\r\nkey2\r\n", "COMMAND", "GETKEYS", "SUNIONCARD", "2", "key1", "key2", "LIMIT", "1")
	p.Keyhive().Do("MULTI")
	p.Keyhive().Do("SDIFFCARD", "2", "key1", "key2")
	docCase(t, p, "*1\r\n:2\r\n", "EXEC")
	docCase(t, p, ":5\r\n", "EVAL", "return redis.call('SUNIONCARD', 2, KEYS[1], KEYS[2])", "2", "key1", "key2")
}
