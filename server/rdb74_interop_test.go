package server_test

// Interop with redis-server 7.4.1: its RDB version 12 files load into
// Keyhive, and Keyhive's files (version 12 once it held a listpack set,
// else 10) load into it; DEBUG DIGEST and the contents compared on both
// sides.

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// populate74 writes a data set with every type in every encoding Redis 7.4
// keeps, including 7.2's listpack sets (of strings, and of integers left
// after a string was removed) and, with the packed threshold lowered, list
// elements in plain nodes. Scores are ones 7.0's "%.17g" and 7.4's
// shortest form print alike, so the two digests agree.
func populate74(p *difftest.Pair) {
	p.Do("SET", "str:int", "12345")
	p.Do("SET", "str:int64", "-1234567890123456")
	p.Do("SET", "str:embstr", "hello")
	p.Do("SET", "str:raw", strings.Repeat("abc", 100))
	p.Do("SET", "str:empty", "")
	p.Do("SET", "str:binary", "\x00\xff\r\n")

	p.Do("RPUSH", "list:small", "a", "1", "-300", "70000", "4294967296")
	big := []any{"RPUSH", "list:big"}
	for i := range 2000 {
		big = append(big, "element-"+strconv.Itoa(i*7))
	}
	p.Do(big...)
	p.Do("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "100")
	p.Do("RPUSH", "list:plain", "a", strings.Repeat("p", 300), "b", strings.Repeat("q", 150))

	p.Do("SADD", "set:intset", "1", "2", "3", "-5", "5000000000")
	p.Do("SADD", "set:listpack", "a", "b", "c", "1")
	p.Do("SADD", "set:lpints", "x", "10", "20", "30")
	p.Do("SREM", "set:lpints", "x")
	strs := []any{"SADD", "set:bigstrings"}
	ints := []any{"SADD", "set:bigints"}
	midints := []any{"SADD", "set:midints"}
	for i := range 300 {
		strs = append(strs, "m"+strconv.Itoa(i))
	}
	for i := range 600 {
		ints = append(ints, strconv.Itoa(i*3))
	}
	for i := range 200 {
		midints = append(midints, strconv.Itoa(-i))
	}
	p.Do(strs...)
	p.Do(ints...)
	p.Do(midints...)

	p.Do("ZADD", "zset:small", "1.5", "a", "2", "b", "-inf", "c", "inf", "d", "0", "e", "-42.25", "f")
	zs := []any{"ZADD", "zset:big"}
	for i := range 200 {
		zs = append(zs, strconv.FormatFloat(float64(i)*0.5-17, 'g', -1, 64), "member-"+strconv.Itoa(i))
	}
	p.Do(zs...)

	p.Do("HSET", "hash:small", "f", "v", "n", "12", "empty", "")
	hs := []any{"HSET", "hash:big"}
	for i := range 600 {
		hs = append(hs, "field-"+strconv.Itoa(i), strconv.Itoa(i*i))
	}
	p.Do(hs...)

	p.Do("CONFIG", "SET", "stream-node-max-entries", "10")
	for i := range 60 {
		args := []any{"XADD", "stream", fmt.Sprintf("%d-%d", 100+i/3, i%3), "i", strconv.Itoa(i)}
		if i%7 == 0 {
			args = append(args, "extra", "x"+strconv.Itoa(i))
		}
		p.Do(args...)
	}
	p.Do("XDEL", "stream", "100-0", "105-1", "110-2")
	p.Do("XGROUP", "CREATE", "stream", "g1", "0")
	p.DoCompare(idleTimes, "XREADGROUP", "GROUP", "g1", "alice", "COUNT", "3", "STREAMS", "stream", ">")
	p.DoCompare(idleTimes, "XREADGROUP", "GROUP", "g1", "bob", "COUNT", "2", "STREAMS", "stream", ">")
	p.Do("XACK", "stream", "g1", "101-0")
	p.Do("XGROUP", "CREATECONSUMER", "stream", "g1", "carol")
	p.Do("XGROUP", "CREATE", "stream", "g2", "$")
	p.Do("XADD", "stream:emptied", "5-1", "a", "1")
	p.Do("XDEL", "stream:emptied", "5-1")
	p.Do("XGROUP", "CREATE", "stream:mkstream", "g", "$", "MKSTREAM")

	for _, k := range []string{"str:int", "list:small", "set:listpack", "zset:big", "hash:big", "stream"} {
		p.Do("PEXPIREAT", k, farFuture)
	}
	p.Do("SELECT", "1")
	p.Do("SET", "db1:string", "one")
	p.Do("SADD", "db1:set", "a", "b")
	p.Do("SELECT", "2")
	p.Do("RPUSH", "db2:list", "x", "y")
	p.Do("SELECT", "0")
	p.Do("FUNCTION", "LOAD", "#!lua name=interop74\nredis.register_function('answer', function() return 42 end)")
}

// compare74 compares the digest and every key's contents in databases 0-2
// (not encodings, which 7.4 chooses differently), and the functions.
func compare74(t *testing.T, p *difftest.Pair) {
	t.Helper()
	compareDataSet(t, p, false, func(key string) {
		p.Do("XRANGE", key, "-", "+")
		p.Do("XINFO", "GROUPS", key)
		p.DoCompare(idleTimes, "XPENDING", key, "g1", "-", "+", "100")
	})
}

// TestRDB74Interop loads redis-server 7.4.1's file into Keyhive and
// Keyhive's file into redis-server 7.4.1 (DEBUG RELOAD NOSAVE after the
// file is copied over), comparing the digests and contents each time.
func TestRDB74Interop(t *testing.T) {
	for _, compression := range []string{"yes", "no"} {
		t.Run("rdbcompression="+compression, func(t *testing.T) {
			p := difftest.StartIsolated74(t, "--rdbcompression", compression)
			populate74(p)
			compare74(t, p)

			reloadFrom(t, p.Redis(), p.Keyhive())
			compare74(t, p)

			p.Do("SET", "written-by", "keyhive")
			reloadFrom(t, p.Keyhive(), p.Redis())
			compare74(t, p)
		})
	}
}

// TestRDB74DigestOn70 loads a Keyhive file holding the same data set, its
// sets in 7.0's encodings, into redis-server 7.0.15: the digests agree
// there too.
func TestRDB74DigestOn70(t *testing.T) {
	p := difftest.StartIsolated(t)
	withSets70(p)
	populate74(p)
	p.Do("DEBUG", "DIGEST")
	reloadFrom(t, p.Keyhive(), p.Redis())
	compare74(t, p)
}

// TestStartWithRedis74File starts Keyhive in a directory holding a file
// redis-server 7.4.1 saved (persistence/testdata/redis-7.4.rdb): the data set
// loads and its digest is the one redis-server 7.4.1 reported for it.
func TestStartWithRedis74File(t *testing.T) {
	const digest74 = "3b3d54418325f4568915f0ef41ddc4be32f476c8" // DEBUG DIGEST on 7.4.1 before its SAVE
	dir := t.TempDir()
	data, err := os.ReadFile("../persistence/testdata/redis-7.4.rdb")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	addr, stop, err := difftest.StartKeyhive("--dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	c, err := difftest.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, check := range []struct {
		args []any
		want string
	}{
		{[]any{"DEBUG", "DIGEST"}, "+" + digest74 + "\r\n"},
		{[]any{"DBSIZE"}, ":15\r\n"},
		{[]any{"SCARD", "set:lp"}, ":4\r\n"},
		{[]any{"FCALL", "f74", "0"}, ":74\r\n"},
		{[]any{"XINFO", "GROUPS", "st"}, "*1\r\n*12\r\n$4\r\nname\r\n$1\r\ng\r\n$9\r\nconsumers\r\n:2\r\n$7\r\npending\r\n:2\r\n$17\r\nlast-delivered-id\r\n$3\r\n1-2\r\n$12\r\nentries-read\r\n:2\r\n$3\r\nlag\r\n:1\r\n"},
	} {
		r, err := c.Do(check.args...)
		if err != nil || string(r.Raw) != check.want {
			t.Errorf("%v: %q, %v; want %q", check.args, r.Raw, err, check.want)
		}
	}
}
