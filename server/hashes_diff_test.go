package server_test

// Differential tests of the hash commands against redis-server.

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

func TestHashBasics(t *testing.T) {
	p := difftest.Start(t)
	p.Do("HSET", "h", "a", "1", "b", "2", "c", "3")
	p.Do("HSET", "h", "b", "22", "d", "4")
	p.Do("HGETALL", "h")
	p.Do("HKEYS", "h")
	p.Do("HVALS", "h")
	p.Do("HMSET", "h", "e", "5")
	p.Do("HMSET", "h", "e")
	p.Do("HSET", "h", "e")
	p.Do("HSET", "h")
	p.Do("HGET", "h", "b")
	p.Do("HGET", "h", "zz")
	p.Do("HGET", "nokey", "a")
	p.Do("HMGET", "h", "a", "zz", "e")
	p.Do("HMGET", "nokey", "a", "b")
	p.Do("HLEN", "h")
	p.Do("HLEN", "nokey")
	p.Do("HEXISTS", "h", "a")
	p.Do("HEXISTS", "h", "zz")
	p.Do("HEXISTS", "nokey", "a")
	p.Do("HSTRLEN", "h", "b")
	p.Do("HSTRLEN", "h", "zz")
	p.Do("HSTRLEN", "nokey", "zz")
	p.Do("HSETNX", "h", "a", "x")
	p.Do("HSETNX", "h", "new", "x")
	p.Do("HSETNX", "n2", "f", "v")
	p.Do("HGETALL", "n2")
	p.Do("HGETALL", "nokey")
	p.Do("HKEYS", "nokey")
	p.Do("HVALS", "nokey")
	p.Do("HDEL", "h", "a", "a", "zz", "c")
	p.Do("HDEL", "nokey", "a")
	p.Do("HGETALL", "h")
	p.Do("HDEL", "h", "b", "d", "e", "new")
	p.Do("EXISTS", "h")
	p.Do("HSET", "bin", "f\x00\xff", "v\r\n\x00", "", "")
	p.Do("HGETALL", "bin")
	p.Do("HGET", "bin", "")
	p.Do("OBJECT", "ENCODING", "bin")
	p.Do("TYPE", "bin")
	p.Do("HSET", "t", "a", "1")
	p.Do("EXPIRE", "t", "100")
	p.Do("HSET", "t", "b", "2")
	p.Do("TTL", "t")
	p.Do("HDEL", "t", "a")
	p.Do("TTL", "t")
	p.Do("COPY", "t", "t2")
	p.Do("RENAME", "t", "t3")
	p.Do("HGETALL", "t2")
	p.Do("HGETALL", "t3")
}

func TestHashWrongType(t *testing.T) {
	p := difftest.Start(t)
	p.Do("SET", "s", "x")
	for _, c := range [][]any{
		{"HSET", "s", "a", "b"}, {"HMSET", "s", "a", "b"}, {"HSETNX", "s", "a", "b"}, {"HGET", "s", "a"},
		{"HMGET", "s", "a"}, {"HGETALL", "s"}, {"HKEYS", "s"}, {"HVALS", "s"}, {"HDEL", "s", "a"},
		{"HEXISTS", "s", "a"}, {"HLEN", "s"}, {"HSTRLEN", "s", "a"}, {"HINCRBY", "s", "a", "1"},
		{"HINCRBY", "s", "a", "x"}, {"HINCRBYFLOAT", "s", "a", "1"}, {"HINCRBYFLOAT", "s", "a", "x"},
		{"HRANDFIELD", "s"}, {"HRANDFIELD", "s", "2"}, {"HRANDFIELD", "s", "2", "WITHVALUES"},
		{"HSCAN", "s", "0"}, {"HSCAN", "s", "x"}, {"HSCAN", "s", "0", "COUNT", "0"},
	} {
		p.Do(c...)
	}
	p.Do("HSET", "h", "a", "1")
	p.Do("GET", "h")
	p.Do("APPEND", "h", "x")
}

func TestHashIncr(t *testing.T) {
	p := difftest.Start(t)
	p.Do("HINCRBY", "h", "n", "5")
	p.Do("HINCRBY", "h", "n", "-12")
	p.Do("HINCRBY", "h", "n", "x")
	p.Do("HINCRBY", "h", "n", "1.5")
	p.Do("HSET", "h", "s", "abc", "big", "9223372036854775806", "sp", " 1", "f", "1.5")
	p.Do("HINCRBY", "h", "s", "1")
	p.Do("HINCRBY", "h", "sp", "1")
	p.Do("HINCRBY", "h", "big", "1")
	p.Do("HINCRBY", "h", "big", "1")
	p.Do("HINCRBY", "h", "n", "-9223372036854775808")
	p.Do("HINCRBY", "h", "n", "-9223372036854775801")
	p.Do("HINCRBYFLOAT", "h", "f", "0.1")
	p.Do("HINCRBYFLOAT", "h", "f", "1e3")
	p.Do("HINCRBYFLOAT", "h", "n", "2.5")
	p.Do("HINCRBYFLOAT", "h", "new", "3.0e-2")
	p.Do("HINCRBYFLOAT", "h", "s", "1")
	p.Do("HINCRBYFLOAT", "h", "f", "inf")
	p.Do("HINCRBYFLOAT", "h", "f", "-inf")
	p.Do("HINCRBYFLOAT", "h", "f", "nan")
	p.Do("HINCRBYFLOAT", "h", "f", "abc")
	p.Do("HINCRBYFLOAT", "h", "f", "1.7e308")
	p.Do("HSET", "h", "i", "inf")
	p.Do("HINCRBYFLOAT", "h", "i", "1")
	p.Do("HINCRBYFLOAT", "h", "big", "1")
	p.Do("OBJECT", "ENCODING", "h")
	p.DoUnorderedPairs("HGETALL", "h")
	p.Do("HINCRBY", "nokey", "a", "x")
	p.Do("EXISTS", "nokey")
	p.Do("HINCRBYFLOAT", "nokey", "a", "x")
	p.Do("EXISTS", "nokey")
}

func TestHashRandField(t *testing.T) {
	p := difftest.Start(t)
	p.Do("HRANDFIELD", "nokey")
	p.Do("HRANDFIELD", "nokey", "3")
	p.Do("HRANDFIELD", "nokey", "-3", "WITHVALUES")
	p.Do("HSET", "one", "a", "1")
	p.Do("HRANDFIELD", "one")
	p.Do("HRANDFIELD", "one", "-3")
	p.Do("HRANDFIELD", "one", "-3", "WITHVALUES")
	p.Do("HRANDFIELD", "one", "1", "withvalues")
	p.Do("HSET", "h", "a", "1", "b", "2", "c", "3")
	p.Do("HRANDFIELD", "h", "0")
	p.Do("HRANDFIELD", "h", "3")
	p.Do("HRANDFIELD", "h", "100", "WITHVALUES")
	p.Do("HRANDFIELD", "h", "x")
	p.Do("HRANDFIELD", "h", "1", "WITHVALUE")
	p.Do("HRANDFIELD", "h", "1", "WITHVALUES", "x")
	p.Do("HRANDFIELD", "h", "-9223372036854775808")
	p.Do("HRANDFIELD", "h", "4611686018427387904", "WITHVALUES")
	p.Do("HRANDFIELD", "h", "-4611686018427387904", "WITHVALUES")
	p.Do("HRANDFIELD", "h", "9223372036854775807")
	// Redis builds a reply of any negative count and dies of it near the
	// int64 limit; Keyhive refuses counts beyond 2^24 repeats.
	if k := p.Keyhive(); k.Name() == "keyhive" {
		if r := k.Do("HRANDFIELD", "h", "-16777217"); r.Str != "ERR value is out of range" {
			t.Errorf("HRANDFIELD h -16777217: %s", r)
		}
	}
	h := hashOf(p.Redis(), "h")
	p.DoCompare(hashRandShape(2, true, false, h), "HRANDFIELD", "h", "2")
	p.DoCompare(hashRandShape(8, false, false, h), "HRANDFIELD", "h", "-8")
	p.DoCompare(hashRandShape(2, true, true, h), "HRANDFIELD", "h", "2", "WITHVALUES")
	p.DoCompare(hashRandShape(5, false, true, h), "HRANDFIELD", "h", "-5", "WITHVALUES")
	p.DoCompare(hashRandShape(1, true, false, h), "HRANDFIELD", "h", "1")
	p.Proto(3)
	p.Do("HRANDFIELD", "one", "-2", "WITHVALUES")
	p.Do("HRANDFIELD", "h", "3", "WITHVALUES")
	p.Do("HGETALL", "h")
	p.Do("HGETALL", "nokey")
	p.DoCompare(hashRandShape(4, false, true, h), "HRANDFIELD", "h", "-4", "WITHVALUES")
	p.DoCompare(hashRandShape(2, true, true, h), "HRANDFIELD", "h", "2", "WITHVALUES")
}

// hashRandShape checks HRANDFIELD replies by shape: n picks (pairs with
// values), distinct when unique, each a field of hash with its value, on both
// sides.
func hashRandShape(n int, unique, withValues bool, hash map[string]string) func(r, k difftest.Reply) error {
	return func(r, k difftest.Reply) error {
		if r.IsError() || k.IsError() {
			return difftest.Exact(r, k)
		}
		for _, x := range []difftest.Reply{r, k} {
			if err := hashRandCheck(x, n, unique, withValues, hash); err != nil {
				return err
			}
		}
		return nil
	}
}

func hashRandCheck(x difftest.Reply, n int, unique, withValues bool, hash map[string]string) error {
	pairs := withValues && len(x.Elems) > 0 && x.Elems[0].Kind == difftest.KindArray // RESP3
	want := n
	if withValues && !pairs {
		want *= 2
	}
	if x.Kind != difftest.KindArray || len(x.Elems) != want {
		return fmt.Errorf("want %d elements: %s", want, x)
	}
	seen := map[string]bool{}
	for i := 0; i < len(x.Elems); i++ {
		field, value := x.Elems[i].Str, ""
		switch {
		case pairs:
			if len(x.Elems[i].Elems) != 2 {
				return fmt.Errorf("bad pair %s", x.Elems[i])
			}
			field, value = x.Elems[i].Elems[0].Str, x.Elems[i].Elems[1].Str
		case withValues:
			i++
			value = x.Elems[i].Str
		}
		v, ok := hash[field]
		if !ok || (withValues && v != value) {
			return fmt.Errorf("%q=%q is not in the hash: %s", field, value, x)
		}
		if unique && seen[field] {
			return fmt.Errorf("field %q repeated in %s", field, x)
		}
		seen[field] = true
	}
	return nil
}

// hashOf reads a hash from redis as a map.
func hashOf(c *difftest.Client, key string) map[string]string {
	r := c.Do("HGETALL", key)
	m := map[string]string{}
	for i := 0; i+1 < len(r.Elems); i += 2 {
		m[r.Elems[i].Str] = r.Elems[i+1].Str
	}
	return m
}

func TestHashScanListpack(t *testing.T) {
	p := difftest.Start74(t)
	p.Do("HSCAN", "nokey", "0")
	p.Do("HSCAN", "nokey", "x")
	p.Do("HSCAN", "nokey", "0", "COUNT", "0")
	p.Do("HSET", "h", "foo", "1", "bar", "2", "food", "3")
	p.Do("HSCAN", "h", "0")
	p.Do("HSCAN", "h", "17", "COUNT", "1")
	p.Do("HSCAN", "h", "0", "MATCH", "foo*")
	p.Do("HSCAN", "h", "0", "match", "*", "count", "2")
	p.Do("HSCAN", "h", "0", "MATCH", "zz*")
	p.Do("HSCAN", "h", "x")
	p.Do("HSCAN", "h", "-1")
	p.Do("HSCAN", "h", "0", "COUNT", "0")
	p.Do("HSCAN", "h", "0", "COUNT", "x")
	p.Do("HSCAN", "h", "0", "COUNT")
	p.Do("HSCAN", "h", "0", "TYPE", "string")
	p.DoDifferent("NOVALUES is Redis 7.4's (TestHashScanNoValues)", "HSCAN", "h", "0", "NOVALUES")
}

// TestHashEncodingThresholds converts at exactly Redis's limits.
func TestHashEncodingThresholds(t *testing.T) {
	p := difftest.StartIsolated(t, "--hash-max-listpack-entries", "4", "--hash-max-listpack-value", "8")
	p.Do("HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4")
	p.Do("OBJECT", "ENCODING", "h")
	p.Do("HGETALL", "h")
	p.Do("HSET", "h", "d", "44")
	p.Do("OBJECT", "ENCODING", "h")
	p.Do("HSET", "h", "e", "5")
	p.Do("OBJECT", "ENCODING", "h")
	p.DoUnordered("HKEYS", "h")
	p.DoUnordered("HVALS", "h")
	p.DoUnorderedPairs("HGETALL", "h")
	p.Do("HDEL", "h", "a", "b", "c")
	p.Do("OBJECT", "ENCODING", "h") // never converts back
	p.Do("HDEL", "h", "d", "e")
	p.Do("EXISTS", "h")

	p.Do("HSET", "v", "a", "12345678")
	p.Do("OBJECT", "ENCODING", "v")
	p.Do("HSET", "v", "b", "123456789")
	p.Do("OBJECT", "ENCODING", "v")
	p.Do("HSET", "f", "123456789", "x")
	p.Do("OBJECT", "ENCODING", "f")
	p.Do("HSET", "n", "a", "1")
	p.Do("HSETNX", "n", "a", "123456789")
	p.Do("OBJECT", "ENCODING", "n")
	p.Do("HSET", "i", "a", "9999999")
	p.Do("HINCRBY", "i", "a", "1")
	p.Do("OBJECT", "ENCODING", "i")
	p.Do("HINCRBY", "i", "a", "90000000")
	p.Do("OBJECT", "ENCODING", "i")
	p.Do("HSET", "fl", "a", "1")
	p.Do("HINCRBYFLOAT", "fl", "a", "0.0000001")
	p.Do("OBJECT", "ENCODING", "fl")
	p.Do("HSET", "m", "a", "1", "b", "2", "c", "3", "d", "4", "e", "5")
	p.Do("OBJECT", "ENCODING", "m")

	p.Do("CONFIG", "SET", "hash-max-listpack-entries", "0")
	p.Do("HSET", "z", "a", "1")
	p.Do("OBJECT", "ENCODING", "z")
}

// TestHashConvertsForFieldCount: an HSET naming more pairs than
// hash-max-listpack-entries makes a hashtable before it sets them, even when
// they name fewer fields, as Redis 7.2+ (7.0 converted only past the limit).
func TestHashConvertsForFieldCount(t *testing.T) {
	p := difftest.StartIsolated74(t, "--hash-max-listpack-entries", "4", "--hash-max-listpack-value", "8")
	p.Do("HSET", "dup", "a", "1", "a", "2", "a", "3", "a", "4", "a", "5")
	p.Do("OBJECT", "ENCODING", "dup")
	p.Do("HGETALL", "dup")
	p.Do("HMSET", "m", "a", "1", "a", "2", "b", "3", "b", "4", "c", "5")
	p.Do("OBJECT", "ENCODING", "m")
	p.DoUnorderedPairs("HGETALL", "m")
	p.Do("HSET", "four", "a", "1", "b", "2", "c", "3", "d", "4")
	p.Do("OBJECT", "ENCODING", "four")
	p.Do("HSET", "four", "a", "1", "b", "2", "c", "3", "d", "4", "a", "5")
	p.Do("OBJECT", "ENCODING", "four")
	p.DoUnorderedPairs("HGETALL", "four")
}

// TestHashLarge exercises the large form with a low entries threshold.
func TestHashLarge(t *testing.T) {
	p := difftest.StartIsolated(t, "--hash-max-listpack-entries", "4")
	const n = 300
	for i := 0; i < n; i++ {
		p.Do("HSET", "h", "f"+strconv.Itoa(i), strconv.Itoa(i*7))
	}
	p.Do("OBJECT", "ENCODING", "h")
	p.Do("HLEN", "h")
	for i := 0; i < n; i += 3 {
		p.Do("HDEL", "h", "f"+strconv.Itoa(i), "missing")
	}
	for i := 0; i < n; i += 5 {
		p.Do("HGET", "h", "f"+strconv.Itoa(i))
		p.Do("HINCRBY", "h", "f"+strconv.Itoa(i), "1000000")
		p.Do("HSTRLEN", "h", "f"+strconv.Itoa(i))
		p.Do("HEXISTS", "h", "f"+strconv.Itoa(i))
	}
	p.Do("HSET", "h", "bin\x00", "\x00\xff")
	p.Do("HMGET", "h", "f1", "f3", "bin\x00", "nope")
	p.Do("HLEN", "h")
	p.DoUnorderedPairs("HGETALL", "h")
	p.DoUnordered("HKEYS", "h")
	p.DoUnordered("HVALS", "h")
	p.DoUnordered("HRANDFIELD", "h", "1000")
	h := hashOf(p.Redis(), "h")
	p.DoCompare(hashRandShape(10, true, false, h), "HRANDFIELD", "h", "10")
	p.DoCompare(hashRandShape(150, true, true, h), "HRANDFIELD", "h", "150", "WITHVALUES")
	p.DoCompare(hashRandShape(500, false, true, h), "HRANDFIELD", "h", "-500", "WITHVALUES")
	p.DoCompare(func(r, k difftest.Reply) error {
		if _, ok := h[r.Str]; !ok {
			return fmt.Errorf("redis: %s not in the hash", r)
		}
		if _, ok := h[k.Str]; !ok || k.Kind != difftest.KindBulk {
			return fmt.Errorf("keyhive: %s not in the hash", k)
		}
		return nil
	}, "HRANDFIELD", "h")
	p.Do("COPY", "h", "h2")
	p.Do("HDEL", "h2", "f1")
	p.Do("HEXISTS", "h", "f1")
	p.Do("OBJECT", "ENCODING", "h2")

	// A full HSCAN returns every field exactly as HGETALL does.
	for _, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
		all := map[string]string{}
		cursor := "0"
		for calls := 0; ; calls++ {
			if calls > 1000 {
				t.Fatalf("%s: HSCAN did not finish", c.Name())
			}
			r := c.Do("HSCAN", "h", cursor, "COUNT", "7")
			for i := 0; i+1 < len(r.Elems[1].Elems); i += 2 {
				all[r.Elems[1].Elems[i].Str] = r.Elems[1].Elems[i+1].Str
			}
			cursor = r.Elems[0].Str
			if cursor == "0" {
				break
			}
		}
		g := c.Do("HGETALL", "h")
		if len(all)*2 != len(g.Elems) {
			t.Fatalf("%s: HSCAN found %d fields, HGETALL %d", c.Name(), len(all), len(g.Elems)/2)
		}
		for i := 0; i < len(g.Elems); i += 2 {
			if all[g.Elems[i].Str] != g.Elems[i+1].Str {
				t.Fatalf("%s: HSCAN missed %q", c.Name(), g.Elems[i].Str)
			}
		}
	}
	p.DoCompare(skScanShape, "HSCAN", "h", "0", "MATCH", "f1*", "COUNT", "5")
	p.Do("HSCAN", "h", "0", "COUNT", "0")
	for i := 0; i < n; i++ {
		p.Do("HDEL", "h", "f"+strconv.Itoa(i))
	}
	p.Do("HDEL", "h", "bin\x00")
	p.Do("EXISTS", "h")
	p.Proto(3)
	p.DoUnordered("HGETALL", "h2")
}

// TestHashPropagation checks what the hash writes propagate, on Keyhive and
// on redis-server alike (see TestPropagation).
func TestHashPropagation(t *testing.T) {
	servers := []*propServer{startKeyhiveProp(t)}
	if r := startRedisAOF(t); r != nil {
		servers = append(servers, r)
	}
	for _, s := range servers {
		s.collect()
	}
	steps := []propStep{
		w("HSET h a 1 b 2", "HSET h a 1 b 2"),
		w("hmset h c 3", "hmset h c 3"),
		w("HSETNX h a x"),
		w("HSETNX h d 4", "HSETNX h d 4"),
		w("HINCRBY h a 5", "HINCRBY h a 5"),
		w("HINCRBY h a x"),
		// HINCRBYFLOAT propagates the result as HSET.
		w("HINCRBYFLOAT h f 1.5", "HSET h f 1.5"),
		w("hincrbyfloat h f 1e3", "HSET h f 1001.5"),
		w("HDEL h zz"),
		w("HDEL h a b c d f zz", "HDEL h a b c d f zz"),
		w("HDEL h a"),
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
}

// TestHashScanDuringChanges: on Keyhive's large form, a field present for a
// whole HSCAN is returned although fields come and go (and the table grows
// and shrinks) between calls, as Redis guarantees.
func TestHashScanDuringChanges(t *testing.T) {
	p := difftest.StartIsolated(t, "--hash-max-listpack-entries", "4")
	k := p.Keyhive()
	for i := 0; i < 500; i++ {
		k.Do("HSET", "h", "stay"+strconv.Itoa(i), "v")
	}
	seen := map[string]bool{}
	cursor := "0"
	for step := 0; ; step++ {
		if step > 1000 {
			t.Fatal("HSCAN did not finish")
		}
		r := k.Do("HSCAN", "h", cursor, "COUNT", "20")
		for i := 0; i+1 < len(r.Elems[1].Elems); i += 2 {
			seen[r.Elems[1].Elems[i].Str] = true
		}
		if cursor = r.Elems[0].Str; cursor == "0" {
			break
		}
		for i := 0; i < 300; i++ {
			f := "tmp" + strconv.Itoa(i)
			if step%2 == 0 {
				k.Do("HSET", "h", f, "x")
			} else {
				k.Do("HDEL", "h", f)
			}
		}
	}
	for i := 0; i < 500; i++ {
		if !seen["stay"+strconv.Itoa(i)] {
			t.Fatalf("stay%d not returned", i)
		}
	}
}

// TestHashPackedHashtable: a hash of a few fields with one long value (seed
// 000's DNS entries) is a hashtable to Redis and to its clients; Keyhive
// keeps it in a listpack's bytes (values.HashView.Packed). Every reply,
// the encoding it reports and keeps after the long value is gone, and its
// RDB form (DUMP into the other server, DEBUG RELOAD) are Redis's.
func TestHashPackedHashtable(t *testing.T) {
	p := difftest.StartIsolated(t)
	msg := strings.Repeat("\x00\xffm", 70)
	p.Do("HSET", "dns", "msg", msg, "expires", "1700000000", "stored", "1700000001", "hits", "7")
	p.Do("OBJECT", "ENCODING", "dns")
	p.Do("HGET", "dns", "msg")
	p.Do("HMGET", "dns", "hits", "nope", "msg")
	p.Do("HINCRBY", "dns", "hits", "1")
	p.Do("HLEN", "dns")
	p.Do("HSTRLEN", "dns", "msg")
	p.DoUnorderedPairs("HGETALL", "dns")
	p.DoCompare(skScanShape, "HSCAN", "dns", "0")
	p.Do("HSETNX", "short", "a", "1")
	p.Do("HSETNX", "short", "a", msg) // nothing set, but converted
	p.Do("OBJECT", "ENCODING", "short")
	p.Do("HDEL", "dns", "msg")
	p.Do("OBJECT", "ENCODING", "dns") // never converts back
	for _, key := range []string{"dns", "short"} {
		fromRedis, fromKeyhive := p.Redis().Do("DUMP", key), p.Keyhive().Do("DUMP", key)
		for _, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
			c.Do("RESTORE", "fromredis:"+key, "0", fromRedis.Str)
			c.Do("RESTORE", "fromkeyhive:"+key, "0", fromKeyhive.Str)
		}
		for _, restored := range []string{"fromredis:" + key, "fromkeyhive:" + key} {
			p.Do("OBJECT", "ENCODING", restored)
			p.DoUnorderedPairs("HGETALL", restored)
		}
	}
	p.Do("HSET", "dns", "msg", msg)
	p.Do("DEBUG", "RELOAD")
	for _, key := range []string{"dns", "short"} {
		p.Do("OBJECT", "ENCODING", key)
		p.DoUnorderedPairs("HGETALL", key)
	}
}
