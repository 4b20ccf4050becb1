package server_test

// Interop with redis-server 7.0: files and DUMP payloads written by one
// server are loaded by the other, and the contents compared.

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

const farFuture = "4102444800000" // 2100-01-01, a fixed PEXPIREAT both sides report alike

// populateAllTypes writes, to both servers, a data set with every type and
// every encoding Redis 7.0 keeps (small and large of each), TTLs, three
// databases and a function library.
func populateAllTypes(p *difftest.Pair) {
	p.Do("SET", "str:int", "12345")
	p.Do("SET", "str:negint", "-7")
	p.Do("SET", "str:int64", "1234567890123456")
	p.Do("SET", "str:leadingzero", "007")
	p.Do("SET", "str:embstr", "hello")
	p.Do("SET", "str:compressible", strings.Repeat("abc", 100))
	var noise strings.Builder
	for i := range 200 {
		noise.WriteByte(byte(i*131 + i*i*7))
	}
	p.Do("SET", "str:incompressible", noise.String())
	p.Do("SET", "str:empty", "")
	p.Do("SET", "str:binary", "\x00\xff\r\n")

	p.Do("RPUSH", "list:small", "a", "1", "-300", "70000", "4294967296", "-9223372036854775808", strings.Repeat("x", 100))
	big := make([]any, 0, 5002)
	big = append(big, "RPUSH", "list:big")
	for i := range 5000 {
		if i%3 == 0 {
			big = append(big, "element-"+strconv.Itoa(i))
		} else {
			big = append(big, strconv.Itoa(i*7919-1000000))
		}
	}
	p.Do(big...)
	p.Do("RPUSH", "list:hugeelement", "a", strings.Repeat("y", 10000), "b")

	p.Do("SADD", "set:intset16", "1", "2", "3", "-5")
	p.Do("SADD", "set:intset32", "100000", "-100000", "7")
	p.Do("SADD", "set:intset64", "5000000000", "-1")
	p.Do("SADD", "set:strings", "a", "b", "c", "1")
	ints := []any{"SADD", "set:manyints"}
	for i := range 600 {
		ints = append(ints, strconv.Itoa(i*3))
	}
	p.Do(ints...)

	p.Do("ZADD", "zset:small", "1.5", "a", "2", "b", "-inf", "c", "inf", "d", "0", "e", "3.141592653589793", "pi", "1e300", "huge", "-42", "neg", "4503599627370496", "twoto52")
	zs := []any{"ZADD", "zset:big"}
	for i := range 200 {
		zs = append(zs, strconv.FormatFloat(float64(i)*0.5-17, 'g', -1, 64), "member-"+strconv.Itoa(i))
	}
	p.Do(zs...)
	p.Do("ZADD", "zset:longmember", "1", strings.Repeat("m", 100), "2", "short")

	p.Do("HSET", "hash:small", "f", "v", "n", "12", "neg", "-5", "empty", "")
	hs := []any{"HSET", "hash:big"}
	for i := range 600 {
		hs = append(hs, "field-"+strconv.Itoa(i), strconv.Itoa(i*i))
	}
	p.Do(hs...)
	p.Do("HSET", "hash:longvalue", "f", strings.Repeat("v", 100))

	for _, k := range []string{"str:int", "list:small", "set:strings", "zset:big", "hash:big"} {
		p.Do("PEXPIREAT", k, farFuture)
	}
	p.Do("SELECT", "1")
	p.Do("SET", "db1:string", "one")
	p.Do("HSET", "db1:hash", "a", "1")
	p.Do("PEXPIREAT", "db1:string", farFuture)
	p.Do("SELECT", "2")
	p.Do("RPUSH", "db2:list", "x", "y")
	p.Do("SELECT", "0")
	p.Do("FUNCTION", "LOAD", "#!lua name=interop\nredis.register_function('answer', function() return 42 end)")
}

// compareAll compares every key of databases 0-2 (type, expire time,
// encoding, contents) and the functions.
func compareAll(t *testing.T, p *difftest.Pair) {
	t.Helper()
	for db := range 3 {
		p.Do("SELECT", strconv.Itoa(db))
		p.Do("DBSIZE")
		keys := p.DoUnordered("KEYS", "*")
		for _, k := range keys.Elems {
			key := k.Str
			typ := p.Do("TYPE", key)
			p.Do("PEXPIRETIME", key)
			p.Do("OBJECT", "ENCODING", key)
			switch typ.Str {
			case "string":
				p.Do("GET", key)
			case "list":
				p.Do("LRANGE", key, "0", "-1")
			case "set":
				p.DoUnordered("SMEMBERS", key)
			case "zset":
				p.Do("ZRANGE", key, "0", "-1", "WITHSCORES")
			case "hash":
				p.DoUnorderedPairs("HGETALL", key)
			default:
				t.Errorf("key %q: unexpected type %q", key, typ.Str)
			}
		}
	}
	p.Do("SELECT", "0")
	p.Do("FUNCTION", "LIST", "WITHCODE")
	if t.Failed() {
		t.FailNow()
	}
}

func dirOf(t *testing.T, c *difftest.Client) string {
	t.Helper()
	r := c.Do("CONFIG", "GET", "dir")
	if len(r.Elems) != 2 {
		t.Fatalf("%s: CONFIG GET dir: %v", c.Name(), r)
	}
	return r.Elems[1].Str
}

// copyDump copies from's dump.rdb over to's.
func copyDump(t *testing.T, from, to *difftest.Client) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dirOf(t, from), "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirOf(t, to), "dump.rdb"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRDBInterop saves the data set on one server and loads the file on the
// other (DEBUG RELOAD NOSAVE empties it first), both ways.
func TestRDBInterop(t *testing.T) {
	for _, compression := range []string{"yes", "no"} {
		t.Run("rdbcompression="+compression, func(t *testing.T) {
			p := difftest.StartIsolated(t, "--rdbcompression", compression)
			populateAllTypes(p)
			compareAll(t, p)

			// redis-server -> Keyhive
			if r := p.Redis().Do("SAVE"); r.Str != "OK" {
				t.Fatalf("redis SAVE: %v", r)
			}
			copyDump(t, p.Redis(), p.Keyhive())
			p.Keyhive().Do("FLUSHALL")
			if r := p.Keyhive().Do("DEBUG", "RELOAD", "NOSAVE"); r.Str != "OK" {
				t.Fatalf("keyhive DEBUG RELOAD NOSAVE: %v", r)
			}
			compareAll(t, p)

			// Keyhive -> redis-server
			p.Keyhive().Do("SET", "written-by", "keyhive")
			p.Redis().Do("SET", "written-by", "keyhive")
			if r := p.Keyhive().Do("SAVE"); r.Str != "OK" {
				t.Fatalf("keyhive SAVE: %v", r)
			}
			copyDump(t, p.Keyhive(), p.Redis())
			p.Redis().Do("FLUSHALL")
			if r := p.Redis().Do("DEBUG", "RELOAD", "NOSAVE"); r.Str != "OK" {
				t.Fatalf("redis DEBUG RELOAD NOSAVE of Keyhive's file: %v", r)
			}
			compareAll(t, p)
		})
	}
}

// TestDumpInterop restores each server's DUMP payloads on the other, and
// compares the payloads themselves where Redis's encoding is deterministic.
func TestDumpInterop(t *testing.T) {
	p := difftest.StartIsolated(t)
	populateAllTypes(p)
	keys := p.DoUnordered("KEYS", "*")
	for _, k := range keys.Elems {
		key := k.Str
		fromRedis := p.Redis().Do("DUMP", key)
		fromKeyhive := p.Keyhive().Do("DUMP", key)
		switch key {
		case "set:strings", "set:manyints", "hash:big":
			// Hashtable sets and hashes list their elements in hash-table
			// order, which differs.
		default:
			if fromRedis.Str != fromKeyhive.Str {
				t.Errorf("DUMP %s differs:\nredis   %.200q\nkeyhive %.200q", key, fromRedis.Str, fromKeyhive.Str)
			}
		}
		// Each server restores the other's payload.
		p.Redis().Do("RESTORE", "fromkeyhive:"+key, "0", fromKeyhive.Str)
		p.Keyhive().Do("RESTORE", "fromkeyhive:"+key, "0", fromKeyhive.Str)
		p.Redis().Do("RESTORE", "fromredis:"+key, "0", fromRedis.Str)
		p.Keyhive().Do("RESTORE", "fromredis:"+key, "0", fromRedis.Str)
	}
	p.Do("FUNCTION", "FLUSH")
	p.Do("SELECT", "1")
	p.Do("FLUSHDB")
	p.Do("SELECT", "2")
	p.Do("FLUSHDB")
	p.Do("SELECT", "0")
	compareAll(t, p)
}
