package server_test

// Interop with redis-server 7.0: files and DUMP payloads written by one
// server are loaded by the other, and the contents compared.

import (
	"strconv"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// withSets70 gives Keyhive Redis 7.0's set encodings (no listpack sets,
// Redis 7.2's form, which 7.0's files and payloads lack): what it writes
// then loads into redis-server 7.0.15. TestRDB74Interop and
// TestSetListpackPersistence exchange listpack sets with 7.4.1.
func withSets70(p *difftest.Pair) {
	p.Keyhive().Do("CONFIG", "SET", "set-max-listpack-entries", "0")
}

// TestRDBInterop saves the data set on one server and loads the file on the
// other (DEBUG RELOAD NOSAVE empties it first), both ways.
func TestRDBInterop(t *testing.T) {
	for _, compression := range []string{"yes", "no"} {
		t.Run("rdbcompression="+compression, func(t *testing.T) {
			p := difftest.StartIsolated(t, "--rdbcompression", compression)
			withSets70(p)
			populateAllTypes(p)
			compareAll(t, p)

			// redis-server -> Keyhive
			reloadFrom(t, p.Redis(), p.Keyhive())
			compareAll(t, p)

			// Keyhive -> redis-server
			p.Keyhive().Do("SET", "written-by", "keyhive")
			p.Redis().Do("SET", "written-by", "keyhive")
			reloadFrom(t, p.Keyhive(), p.Redis())
			compareAll(t, p)
		})
	}
}

// TestDumpInterop restores each server's DUMP payloads on the other, and
// compares the payloads themselves where Redis's encoding is deterministic.
func TestDumpInterop(t *testing.T) {
	p := difftest.StartIsolated(t)
	withSets70(p)
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
		case "stream:groups":
			// Consumers' seen times and delivery times are each server's clock.
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

// TestStreamRDBInterop moves streams with consumer groups between the
// servers by file and by DUMP payload, both ways, and compares them
// exactly: once both hold the same file or payload, delivery and seen
// times agree too. It covers what TestRDBInterop's data set cannot (a PEL
// entry whose entry was deleted, which Redis's AOF rewrite drops).
func TestStreamRDBInterop(t *testing.T) {
	p := difftest.StartIsolated(t)
	p.Do("CONFIG", "SET", "stream-node-max-entries", "4")
	for i := 1; i <= 20; i++ {
		p.Do("XADD", "s", strconv.Itoa(i)+"-1", "f", strconv.Itoa(i), "g", "v")
	}
	p.Do("XGROUP", "CREATE", "s", "readers", "0")
	p.DoCompare(idleTimes, "XREADGROUP", "GROUP", "readers", "r1", "COUNT", "5", "STREAMS", "s", ">")
	p.DoCompare(idleTimes, "XREADGROUP", "GROUP", "readers", "r2", "COUNT", "3", "STREAMS", "s", ">")
	p.Do("XGROUP", "CREATECONSUMER", "s", "readers", "idle")
	p.Do("XDEL", "s", "2-1", "7-1", "13-1") // 2-1 and 7-1 are pending
	p.Do("XGROUP", "CREATE", "s", "late", "$")
	p.Do("XADD", "e", "1-1", "a", "b")
	p.Do("XDEL", "e", "1-1")
	p.Do("XGROUP", "CREATE", "e", "g", "0")

	exact := func() {
		t.Helper()
		for _, key := range []string{"s", "e", "from-redis:s", "from-keyhive:s"} {
			p.Do("XINFO", "STREAM", key, "FULL")
			p.Do("XRANGE", key, "-", "+")
			p.Do("XINFO", "GROUPS", key)
			p.DoCompare(idleTimes, "XINFO", "CONSUMERS", key, "readers")
		}
		idle := p.Keyhive().Do("XINFO", "CONSUMERS", "s", "readers")
		for _, c := range idle.Elems {
			if ms := c.Elems[5].Int; ms < 0 || ms > 60000 {
				t.Errorf("consumer %s idle %d ms after loading", c.Elems[1].Str, ms)
			}
		}
	}

	// redis-server -> Keyhive by file, then Keyhive -> redis-server.
	if r := p.Redis().Do("SAVE"); r.Str != "OK" {
		t.Fatalf("redis SAVE: %v", r)
	}
	copyDump(t, p.Redis(), p.Keyhive())
	if r := p.Keyhive().Do("DEBUG", "RELOAD", "NOSAVE"); r.Str != "OK" {
		t.Fatalf("keyhive DEBUG RELOAD NOSAVE: %v", r)
	}
	exact()
	if r := p.Keyhive().Do("SAVE"); r.Str != "OK" {
		t.Fatalf("keyhive SAVE: %v", r)
	}
	copyDump(t, p.Keyhive(), p.Redis())
	if r := p.Redis().Do("DEBUG", "RELOAD", "NOSAVE"); r.Str != "OK" {
		t.Fatalf("redis DEBUG RELOAD NOSAVE of Keyhive's file: %v", r)
	}
	exact()

	// DUMP payloads, both ways; the servers now hold the same data, so
	// the payloads are byte for byte the same.
	fromRedis, fromKeyhive := p.Redis().Do("DUMP", "s"), p.Keyhive().Do("DUMP", "s")
	if fromRedis.Str != fromKeyhive.Str {
		t.Errorf("DUMP s differs:\nredis   %q\nkeyhive %q", fromRedis.Str, fromKeyhive.Str)
	}
	p.Do("RESTORE", "from-redis:s", "0", fromRedis.Str)
	p.Do("RESTORE", "from-keyhive:s", "0", fromKeyhive.Str)
	p.Do("DUMP", "e")
	exact()
}
