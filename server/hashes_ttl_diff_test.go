package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/clock"
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/server"
)

// Hash field expiration (Redis 7.4), compared with redis-server 7.4.1.

// farMs is an absolute time far ahead, so replies do not depend on the clock.
var farMs = strconv.FormatInt(time.Now().Add(1000*time.Hour).UnixMilli(), 10)

// readAll compares a whole-hash read: in order for a listpack, as a
// multiset for a hash table.
func readAll(p *difftest.Pair, enc string, args ...any) {
	switch {
	case enc == "listpack":
		p.Do(args...)
	case args[0] == "HGETALL":
		p.DoUnorderedPairs(args...)
	default:
		p.DoUnordered(args...)
	}
}

// hashTTLPair is a pair on redis-server 7.4.1 with active expiry off.
func hashTTLPair(t *testing.T, directives ...string) *difftest.Pair {
	p := difftest.StartIsolated74(t, directives...)
	p.Do("DEBUG", "SET-ACTIVE-EXPIRE", "0") // lazy expiry only, unless a test turns it on
	return p
}

// encodingDirectives makes new hashes start in encoding enc: "listpack"
// (the default) or "hashtable".
func encodingDirectives(enc string) []string {
	if enc == "hashtable" {
		return []string{"--hash-max-listpack-entries", "0"}
	}
	return nil
}

func TestHashFieldExpireCommands(t *testing.T) {
	for _, enc := range []string{"listpack", "hashtable"} {
		for _, proto := range []int{2, 3} {
			t.Run(fmt.Sprintf("%s/RESP%d", enc, proto), func(t *testing.T) {
				p := hashTTLPair(t, encodingDirectives(enc)...)
				p.Proto(proto)
				p.Do("HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4")
				p.Do("OBJECT", "ENCODING", "h")
				// Errors, in Redis's order.
				p.Do("HEXPIRE", "h", "10", "FIELDS", "1")
				p.Do("HEXPIRE", "h", "x", "FIELDS", "1", "a")
				p.Do("HEXPIRE", "h", "-1", "FIELDS", "1", "a")
				p.Do("HEXPIRE", "h", "10", "NX", "1", "a")
				p.Do("HEXPIRE", "h", "10", "FIELDS", "0", "a")
				p.Do("HEXPIRE", "h", "10", "FIELDS", "x", "a")
				p.Do("HEXPIRE", "h", "10", "FIELDS", "2", "a")
				p.Do("HEXPIRE", "h", "10", "FIELDS", "1", "a", "b")
				p.Do("HEXPIRE", "h", "10", "BAD", "FIELDS", "1", "a")
				p.Do("HEXPIRE", "h", "99999999999999999", "FIELDS", "1", "a")
				p.Do("HPEXPIRE", "h", "99999999999999999", "FIELDS", "1", "a")
				p.Do("HPEXPIREAT", "h", "70368744177664", "FIELDS", "1", "a")
				p.Do("HEXPIREAT", "h", "70368744177", "FIELDS", "1", "a")
				p.Do("HTTL", "h", "FIELDS", "0", "a")
				p.Do("HTTL", "h", "FIELD", "1", "a")
				p.Do("HTTL", "h", "FIELDS", "2", "a")
				p.Do("HPERSIST", "h", "FIELDS", "-1", "a")
				p.Do("HPERSIST", "h", "XFIELDS", "1", "a")
				p.Do("SET", "s", "v")
				for _, cmd := range []string{"HTTL", "HPTTL", "HEXPIRETIME", "HPEXPIRETIME", "HPERSIST"} {
					p.Do(cmd, "s", "FIELDS", "1", "a")
					p.Do(cmd, "nokey", "FIELDS", "2", "a", "b")
					// a's remaining time is read at each server's own instant:
					// they may be a clock tick apart (codes stay exact).
					p.DoApprox(1, cmd, "h", "FIELDS", "2", "a", "zz")
				}
				p.Do("HEXPIRE", "s", "10", "FIELDS", "1", "a")
				p.Do("HEXPIRE", "nokey", "10", "FIELDS", "2", "a", "b")
				// A listpack becomes listpackex on HEXPIRE whatever it sets.
				p.Do("HEXPIRE", "h", "100", "FIELDS", "1", "zz")
				p.Do("OBJECT", "ENCODING", "h")
				// Codes: set, condition not met, no field.
				p.Do("HPEXPIREAT", "h", farMs, "FIELDS", "2", "b", "zz")
				p.Do("HPEXPIRETIME", "h", "FIELDS", "3", "a", "b", "zz")
				p.Do("HEXPIRETIME", "h", "FIELDS", "2", "a", "b")
				p.Do("HTTL", "h", "FIELDS", "1", "a")
				p.Do("HEXPIRE", "h", "100", "NX", "FIELDS", "2", "a", "b")
				p.Do("HEXPIRE", "h", "200", "XX", "FIELDS", "2", "c", "a")
				p.Do("HEXPIRE", "h", "50", "GT", "FIELDS", "2", "a", "d")
				p.Do("HEXPIRE", "h", "300", "GT", "FIELDS", "1", "a")
				p.Do("HEXPIRE", "h", "50", "LT", "FIELDS", "3", "a", "c", "d")
				p.Do("HEXPIRE", "h", "500", "lt", "FIELDS", "1", "a")
				p.Do("HTTL", "h", "FIELDS", "4", "a", "b", "c", "d")
				readAll(p, enc, "HGETALL", "h")
				readAll(p, enc, "HKEYS", "h")
				readAll(p, enc, "HVALS", "h")
				// HSET drops a field's TTL; HINCRBY keeps it.
				p.Do("HSET", "h", "a", "10")
				p.Do("HINCRBY", "h", "c", "5")
				p.Do("HINCRBYFLOAT", "h", "d", "0.5")
				p.Do("HTTL", "h", "FIELDS", "4", "a", "b", "c", "d")
				readAll(p, enc, "HGETALL", "h")
				// HPERSIST.
				p.Do("HPERSIST", "h", "FIELDS", "3", "a", "c", "zz")
				p.Do("HTTL", "h", "FIELDS", "4", "a", "b", "c", "d")
				readAll(p, enc, "HGETALL", "h")
				p.Do("OBJECT", "ENCODING", "h")
				// A time in the past deletes the field (2), the last one the key.
				p.Do("HEXPIRE", "h", "0", "FIELDS", "2", "a", "zz")
				p.Do("HPEXPIREAT", "h", "1", "FIELDS", "1", "b")
				readAll(p, enc, "HGETALL", "h")
				p.Do("HEXPIREAT", "h", "1", "FIELDS", "3", "c", "d", "c")
				p.Do("EXISTS", "h")
				// HDEL of a field with a TTL, and of the last one.
				p.Do("HSET", "h2", "x", "1", "y", "2")
				p.Do("HEXPIRE", "h2", "100", "FIELDS", "2", "x", "y")
				p.Do("HDEL", "h2", "x")
				p.Do("HTTL", "h2", "FIELDS", "2", "x", "y")
				p.Do("HDEL", "h2", "y")
				p.Do("EXISTS", "h2")
			})
		}
	}
}

// TestHashFieldLazyExpiry: reads do not see expired fields; HLEN counts
// them until a command that names one (or HRANDFIELD) removes it.
func TestHashFieldLazyExpiry(t *testing.T) {
	for _, enc := range []string{"listpack", "hashtable"} {
		for _, proto := range []int{2, 3} {
			t.Run(fmt.Sprintf("%s/RESP%d", enc, proto), func(t *testing.T) {
				p := hashTTLPair(t, encodingDirectives(enc)...)
				p.Proto(proto)
				fill := func() {
					p.Do("DEL", "h")
					p.Do("HSET", "h", "a", "1", "b", "22", "c", "333", "d", "4444")
					p.Do("HPEXPIRE", "h", "1", "FIELDS", "2", "a", "c")
					p.Do("HEXPIRE", "h", "1000", "FIELDS", "1", "d")
					time.Sleep(20 * time.Millisecond)
				}
				fill()
				p.Do("HLEN", "h")
				readAll(p, enc, "HGETALL", "h")
				readAll(p, enc, "HKEYS", "h")
				readAll(p, enc, "HVALS", "h")
				if enc == "listpack" {
					p.Do("HSCAN", "h", "0")
				}
				p.Do("HTTL", "h", "FIELDS", "4", "a", "b", "c", "d")
				p.Do("HPERSIST", "h", "FIELDS", "2", "a", "b")
				p.Do("HLEN", "h")
				p.Do("HGET", "h", "a")
				p.Do("HLEN", "h")
				p.Do("HEXISTS", "h", "c")
				p.Do("HLEN", "h")
				readAll(p, enc, "HGETALL", "h")
				fill()
				p.Do("HSTRLEN", "h", "c")
				p.Do("HMGET", "h", "a", "b", "c", "zz")
				p.Do("HLEN", "h")
				fill()
				p.Do("HSETNX", "h", "a", "new")
				p.Do("HINCRBY", "h", "c", "7")
				p.Do("HTTL", "h", "FIELDS", "2", "a", "c")
				p.Do("HLEN", "h")
				fill()
				p.Do("HINCRBYFLOAT", "h", "a", "1.5")
				p.Do("HSET", "h", "c", "x")
				p.Do("HLEN", "h")
				fill()
				p.DoUnordered("HRANDFIELD", "h", "10")
				p.Do("HLEN", "h")
				fill()
				p.Do("HDEL", "h", "a", "c")
				// Every field expired: reads see an empty hash; a lookup of
				// the last one deletes the key.
				p.Do("DEL", "h")
				p.Do("HSET", "h", "a", "1", "b", "2")
				p.Do("HPEXPIRE", "h", "1", "FIELDS", "2", "a", "b")
				time.Sleep(20 * time.Millisecond)
				readAll(p, enc, "HGETALL", "h")
				p.Do("HLEN", "h")
				p.Do("EXISTS", "h")
				p.Do("HRANDFIELD", "h")
				p.Do("EXISTS", "h")
				p.Do("HSET", "h", "a", "1", "b", "2")
				p.Do("HPEXPIRE", "h", "1", "FIELDS", "2", "a", "b")
				time.Sleep(20 * time.Millisecond)
				p.Do("HGET", "h", "a")
				p.Do("HMGET", "h", "b", "a")
				p.Do("EXISTS", "h")
			})
		}
	}
}

// TestHashFieldActiveExpiry: the expiry cycle removes expired fields, and
// the key with its last one.
func TestHashFieldActiveExpiry(t *testing.T) {
	for _, enc := range []string{"listpack", "hashtable"} {
		t.Run(enc, func(t *testing.T) {
			p := difftest.StartIsolated74(t, encodingDirectives(enc)...)
			p.Do("HSET", "h", "a", "1", "b", "2", "c", "3")
			p.Do("HSET", "gone", "a", "1", "b", "2")
			p.Do("HPEXPIRE", "h", "1", "FIELDS", "2", "a", "b")
			p.Do("HPEXPIRE", "gone", "1", "FIELDS", "2", "a", "b")
			p.Do("INFO", "keyspace")
			// Both servers' expiry cycles, on both keys: on a loaded machine
			// one server's cycle may have reached h and not yet gone.
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) {
				done := true
				for _, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
					done = done && c.Do("HLEN", "h").Int == 1 && c.Do("EXISTS", "gone").Int == 0
				}
				if done {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			p.Do("HLEN", "h")
			readAll(p, enc, "HGETALL", "h")
			p.Do("EXISTS", "gone")
			p.Do("INFO", "keyspace")
		})
	}
}

// TestHashFieldExpiryEvents: hexpire, hpersist, hexpired, hdel and del, as
// redis-server 7.4 emits them.
func TestHashFieldExpiryEvents(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			p := difftest.StartIsolated74(t, "--notify-keyspace-events", "KEA")
			p.Do("DEBUG", "SET-ACTIVE-EXPIRE", "0")
			sub := p.NewConn()
			sub.Proto(proto)
			sub.Do("PSUBSCRIBE", "__key*__:*")
			w := &eventWatch{t, p, sub}
			w.do("HSET", "h", "a", "1", "b", "2", "c", "3")
			w.do("HEXPIRE", "h", "100", "FIELDS", "1", "zz")
			w.do("HEXPIRE", "h", "100", "FIELDS", "2", "a", "b")
			w.do("HEXPIRE", "h", "100", "NX", "FIELDS", "1", "a")
			w.do("HPERSIST", "h", "FIELDS", "1", "a")
			w.do("HPERSIST", "h", "FIELDS", "1", "a")
			w.do("HEXPIRE", "h", "0", "FIELDS", "2", "a", "b")
			w.do("HPEXPIRE", "h", "1", "FIELDS", "1", "c")
			time.Sleep(20 * time.Millisecond)
			w.do("HGET", "h", "c")
			w.do("HSET", "h2", "a", "1", "b", "2", "c", "3")
			w.do("HPEXPIRE", "h2", "1", "FIELDS", "2", "a", "b")
			time.Sleep(20 * time.Millisecond)
			w.do("HMGET", "h2", "a", "b", "c")
			w.do("HPEXPIRE", "h2", "1", "FIELDS", "1", "c")
			time.Sleep(20 * time.Millisecond)
			w.do("HSETNX", "h2", "c", "new")
			w.do("HEXPIRE", "h2", "0", "FIELDS", "1", "c")
			w.do("HSET", "h3", "a", "1")
			w.do("HPEXPIRE", "h3", "1", "FIELDS", "1", "a")
			p.Do("DEBUG", "SET-ACTIVE-EXPIRE", "1")
			// Each server's expiry cycle removes h3's field on its own
			// schedule (Redis's before its next reply, Keyhive's in its
			// cron): wait for both (HLEN expires nothing itself), then
			// compare what they emitted.
			waitUntil(t, "h3 expired actively", func() bool {
				return p.Redis().Do("HLEN", "h3").Int == 0 && p.Keyhive().Do("HLEN", "h3").Int == 0
			})
			w.check("active expiry of h3")
			w.do("EXISTS", "h3")
		})
	}
}

// TestHashFieldTTLKeyCommands: RENAME, COPY and MOVE keep field TTLs.
func TestHashFieldTTLKeyCommands(t *testing.T) {
	for _, enc := range []string{"listpack", "hashtable"} {
		t.Run(enc, func(t *testing.T) {
			p := hashTTLPair(t, encodingDirectives(enc)...)
			p.Do("HSET", "h", "a", "1", "b", "2")
			p.Do("HPEXPIREAT", "h", farMs, "FIELDS", "1", "a")
			p.Do("RENAME", "h", "h2")
			p.Do("HPEXPIRETIME", "h2", "FIELDS", "2", "a", "b")
			p.Do("COPY", "h2", "h3")
			p.Do("HPEXPIRETIME", "h3", "FIELDS", "2", "a", "b")
			p.Do("MOVE", "h3", "1")
			p.Do("SELECT", "1")
			p.Do("HPEXPIRETIME", "h3", "FIELDS", "2", "a", "b")
			p.Do("OBJECT", "ENCODING", "h3")
			p.Do("SELECT", "0")
			p.Do("INFO", "keyspace")
		})
	}
}

// populateFieldTTLs writes hashes with field TTLs in each encoding, and one
// whose TTLs were all removed.
func populateFieldTTLs(p *difftest.Pair) {
	p.Do("HSET", "ttl:small", "a", "1", "b", "two", "c", "3", "d", "")
	p.Do("HPEXPIREAT", "ttl:small", farMs, "FIELDS", "2", "c", "a")
	p.Do("HEXPIREAT", "ttl:small", "4102444800", "FIELDS", "1", "b")
	big := []any{"HSET", "ttl:big"}
	for i := range 300 {
		big = append(big, "field-"+strconv.Itoa(i), strconv.Itoa(i*i))
	}
	p.Do(big...)
	p.Do("HPEXPIREAT", "ttl:big", farMs, "FIELDS", "3", "field-1", "field-2", "field-299")
	p.Do("HEXPIREAT", "ttl:big", "4102444800", "FIELDS", "1", "field-7")
	p.Do("HSET", "ttl:persisted", "a", "1")
	p.Do("HEXPIRE", "ttl:persisted", "100", "FIELDS", "1", "a")
	p.Do("HPERSIST", "ttl:persisted", "FIELDS", "1", "a")
	p.Do("HSET", "plain", "x", "1")
}

// compareFieldTTLs compares the hashes populateFieldTTLs wrote; a replayed
// AOF may order fields with equal TTLs differently from the hash it was
// rewritten from (HPEXPIREAT puts a field before those with its time), on
// redis-server too, so unless ordered the small one is compared unordered.
func compareFieldTTLs(p *difftest.Pair, ordered bool) {
	if !ordered {
		p.DoUnorderedPairs("HGETALL", "ttl:small")
	} else {
		p.Do("HGETALL", "ttl:small")
	}
	p.Do("HPEXPIRETIME", "ttl:small", "FIELDS", "5", "a", "b", "c", "d", "zz")
	p.Do("OBJECT", "ENCODING", "ttl:small")
	p.DoUnorderedPairs("HGETALL", "ttl:big")
	p.Do("HPEXPIRETIME", "ttl:big", "FIELDS", "5", "field-1", "field-2", "field-299", "field-7", "field-8")
	p.Do("HLEN", "ttl:big")
	p.Do("OBJECT", "ENCODING", "ttl:big")
	p.Do("HGETALL", "ttl:persisted")
	p.Do("HTTL", "ttl:persisted", "FIELDS", "1", "a")
	p.Do("HGETALL", "plain")
}

// TestHashFieldTTLRDBInterop: files and DUMP payloads with Redis 7.4's hash
// types move between redis-server 7.4.1 and Keyhive, both ways.
func TestHashFieldTTLRDBInterop(t *testing.T) {
	p := hashTTLPair(t)
	populateFieldTTLs(p)
	compareFieldTTLs(p, true)

	// Keyhive -> redis-server: an RDB 12 file.
	if r := p.Keyhive().Do("SAVE"); r.Str != "OK" {
		t.Fatalf("keyhive SAVE: %v", r)
	}
	data, err := os.ReadFile(filepath.Join(dirOf(t, p.Keyhive()), "dump.rdb"))
	if err != nil || string(data[:9]) != "REDIS0012" {
		t.Fatalf("Keyhive's file with field TTLs starts %q (%v), want REDIS0012", data[:min(len(data), 9)], err)
	}
	copyDump(t, p.Keyhive(), p.Redis())
	p.Redis().Do("FLUSHALL")
	if r := p.Redis().Do("DEBUG", "RELOAD", "NOSAVE"); r.Str != "OK" {
		t.Fatalf("redis DEBUG RELOAD NOSAVE of Keyhive's file: %v", r)
	}
	compareFieldTTLs(p, true)
	p.Do("INFO", "keyspace")

	// DUMP payloads: the listpackex one is byte-identical (a hash without
	// field TTLs is not: Keyhive writes RDB 10 for Redis 7.0); redis-server
	// restores Keyhive's.
	for _, key := range []string{"ttl:small", "ttl:big", "plain"} {
		fromRedis := p.Redis().Do("DUMP", key)
		fromKeyhive := p.Keyhive().Do("DUMP", key)
		if key == "ttl:small" && fromRedis.Str != fromKeyhive.Str {
			t.Errorf("DUMP %s differs:\nredis   %q\nkeyhive %q", key, fromRedis.Str, fromKeyhive.Str)
		}
		p.Redis().Do("RESTORE", "fromkeyhive:"+key, "0", fromKeyhive.Str)
		for _, cmd := range [][]any{
			{"HPEXPIRETIME", "FIELDS", "3", "b", "field-7", "x"},
			{"HLEN"},
			{"OBJECT|ENCODING"},
		} {
			name, sub, _ := strings.Cut(cmd[0].(string), "|")
			restored := append([]any{name, sub, "fromkeyhive:" + key}, cmd[1:]...)
			original := append([]any{name, sub, key}, cmd[1:]...)
			if sub == "" {
				restored = append([]any{name, "fromkeyhive:" + key}, cmd[1:]...)
				original = append([]any{name, key}, cmd[1:]...)
			}
			if r, k := p.Redis().Do(restored...), p.Keyhive().Do(original...); string(r.Raw) != string(k.Raw) {
				t.Errorf("%v restored by redis-server: %q, keyhive's original %q", restored, r.Raw, k.Raw)
			}
		}
	}

	// redis-server -> Keyhive: its file and payloads.
	reloadFrom(t, p.Redis(), p.Keyhive())
	compareFieldTTLs(p, true)
	for _, key := range []string{"ttl:small", "ttl:big", "plain"} {
		fromRedis := p.Redis().Do("DUMP", key)
		fromKeyhive := p.Keyhive().Do("DUMP", key)
		p.Keyhive().Do("RESTORE", "fromkeyhive:"+key, "0", fromKeyhive.Str)
		p.Do("HPEXPIRETIME", "fromkeyhive:"+key, "FIELDS", "3", "b", "field-7", "x")
		p.Redis().Do("RESTORE", "fromredis:"+key, "0", fromRedis.Str)
		p.Keyhive().Do("RESTORE", "fromredis:"+key, "0", fromRedis.Str)
		p.Do("HPEXPIRETIME", "fromredis:"+key, "FIELDS", "3", "a", "field-1", "x")
		p.Do("OBJECT", "ENCODING", "fromredis:"+key)
	}
	p.Do("INFO", "keyspace")

	// An empty file stays RDB 10.
	p.Keyhive().Do("FLUSHALL")
	p.Keyhive().Do("SAVE")
	data, _ = os.ReadFile(filepath.Join(dirOf(t, p.Keyhive()), "dump.rdb"))
	if string(data[:9]) != "REDIS0010" {
		t.Errorf("Keyhive's file without field TTLs starts %q, want REDIS0010", data[:9])
	}
}

// want sends a command to Keyhive alone and checks its raw reply: Redis
// 8.0's commands have no oracle binary here, so the expected replies are
// written from their redis.io pages.
func want(t *testing.T, c *difftest.Client, reply string, args ...any) {
	t.Helper()
	if r := c.Do(args...); string(r.Raw) != reply {
		t.Errorf("%v: got %q, want %q", args, r.Raw, reply)
	}
}

// TestHGETDEL follows https://redis.io/docs/latest/commands/hgetdel/ (its
// example, then the errors of the FIELDS block as HTTL has them).
func TestHGETDEL(t *testing.T) {
	p := hashTTLPair(t)
	c := p.Keyhive()
	want(t, c, ":3\r\n", "HSET", "mykey", "field1", "Hello", "field2", "World", "field3", "!")
	want(t, c, "*2\r\n$1\r\n!\r\n$-1\r\n", "HGETDEL", "mykey", "FIELDS", "2", "field3", "field4")
	want(t, c, "*4\r\n$6\r\nfield1\r\n$5\r\nHello\r\n$6\r\nfield2\r\n$5\r\nWorld\r\n", "HGETALL", "mykey")
	want(t, c, "*2\r\n$5\r\nHello\r\n$5\r\nWorld\r\n", "HGETDEL", "mykey", "FIELDS", "2", "field1", "field2")
	want(t, c, "*0\r\n", "KEYS", "*")
	want(t, c, "*2\r\n$-1\r\n$-1\r\n", "HGETDEL", "nokey", "FIELDS", "2", "a", "b")
	want(t, c, "-ERR wrong number of arguments for 'hgetdel' command\r\n", "HGETDEL", "k", "FIELDS", "1")
	want(t, c, "-ERR Mandatory argument FIELDS is missing or not at the right position\r\n", "HGETDEL", "k", "FIELD", "1", "a")
	want(t, c, "-ERR Number of fields must be a positive integer\r\n", "HGETDEL", "k", "FIELDS", "0", "a")
	want(t, c, "-ERR The `numfields` parameter must match the number of arguments\r\n", "HGETDEL", "k", "FIELDS", "2", "a")
	want(t, c, "+OK\r\n", "SET", "s", "v")
	want(t, c, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "HGETDEL", "s", "FIELDS", "1", "a")
	// An expired field reads as missing (and is removed lazily).
	want(t, c, ":2\r\n", "HSET", "h", "a", "1", "b", "2")
	want(t, c, "*1\r\n:1\r\n", "HPEXPIRE", "h", "1", "FIELDS", "1", "a")
	time.Sleep(10 * time.Millisecond)
	want(t, c, "*2\r\n$-1\r\n$1\r\n2\r\n", "HGETDEL", "h", "FIELDS", "2", "a", "b")
	want(t, c, ":0\r\n", "EXISTS", "h")
	p.Proto(3)
	want(t, c, ":1\r\n", "HSET", "h", "a", "1")
	want(t, c, "*2\r\n$1\r\n1\r\n_\r\n", "HGETDEL", "h", "FIELDS", "2", "a", "a")
}

// TestHGETEX follows https://redis.io/docs/latest/commands/hgetex/.
func TestHGETEX(t *testing.T) {
	p := hashTTLPair(t)
	c := p.Keyhive()
	want(t, c, ":2\r\n", "HSET", "mykey", "field1", "Hello", "field2", "World")
	want(t, c, "*1\r\n$5\r\nHello\r\n", "HGETEX", "mykey", "EX", "120", "FIELDS", "1", "field1")
	want(t, c, "*1\r\n$5\r\nWorld\r\n", "HGETEX", "mykey", "EX", "100", "FIELDS", "1", "field2")
	want(t, c, "*3\r\n:120\r\n:100\r\n:-2\r\n", "HTTL", "mykey", "FIELDS", "3", "field1", "field2", "field3")
	// Without an option it is HMGET and keeps the TTLs.
	want(t, c, "*2\r\n$5\r\nHello\r\n$-1\r\n", "HGETEX", "mykey", "FIELDS", "2", "field1", "nofield")
	want(t, c, "*1\r\n:120\r\n", "HTTL", "mykey", "FIELDS", "1", "field1")
	want(t, c, "*1\r\n$5\r\nHello\r\n", "HGETEX", "mykey", "PXAT", farMs, "FIELDS", "1", "field1")
	want(t, c, "*1\r\n:"+farMs+"\r\n", "HPEXPIRETIME", "mykey", "FIELDS", "1", "field1")
	want(t, c, "*1\r\n$5\r\nHello\r\n", "HGETEX", "mykey", "EXAT", "4102444800", "FIELDS", "1", "field1")
	want(t, c, "*1\r\n:4102444800\r\n", "HEXPIRETIME", "mykey", "FIELDS", "1", "field1")
	want(t, c, "*2\r\n$5\r\nHello\r\n$5\r\nWorld\r\n", "HGETEX", "mykey", "PERSIST", "FIELDS", "2", "field1", "field2")
	want(t, c, "*2\r\n:-1\r\n:-1\r\n", "HTTL", "mykey", "FIELDS", "2", "field1", "field2")
	want(t, c, "*1\r\n$5\r\nHello\r\n", "HGETEX", "mykey", "PX", "100000", "FIELDS", "1", "field1")
	want(t, c, "*1\r\n:100\r\n", "HTTL", "mykey", "FIELDS", "1", "field1")
	// A time already past returns the values and deletes the fields.
	want(t, c, "*2\r\n$5\r\nHello\r\n$5\r\nWorld\r\n", "HGETEX", "mykey", "PXAT", "1", "FIELDS", "2", "field1", "field2")
	want(t, c, ":0\r\n", "EXISTS", "mykey")
	want(t, c, "*1\r\n$-1\r\n", "HGETEX", "nokey", "EX", "10", "FIELDS", "1", "a")
	// Errors.
	want(t, c, "-ERR wrong number of arguments for 'hgetex' command\r\n", "HGETEX", "h", "FIELDS", "1")
	want(t, c, "-ERR Mandatory argument FIELDS is missing or not at the right position\r\n", "HGETEX", "h", "XFIELDX", "1", "a")
	want(t, c, "-ERR Mandatory argument FIELDS is missing or not at the right position\r\n", "HGETEX", "h", "PXAT", "1", "1")
	want(t, c, "-ERR Mandatory argument FIELDS is missing or not at the right position\r\n", "HGETEX", "h", "PERSIST", "1", "FIELDS", "1", "a")
	want(t, c, "-ERR The `numfields` parameter must match the number of arguments\r\n", "HGETEX", "h", "FIELDS", "2", "a")
	want(t, c, "-ERR Number of fields must be a positive integer\r\n", "HGETEX", "h", "FIELDS", "0", "a")
	want(t, c, "-ERR Number of fields must be a positive integer\r\n", "HGETEX", "h", "FIELDS", "-1", "a")
	want(t, c, "-ERR value is not an integer or out of range\r\n", "HGETEX", "h", "EX", "bla", "FIELDS", "1", "a")
	want(t, c, "-ERR invalid expire time, must be >= 0\r\n", "HGETEX", "h", "PX", "-1", "FIELDS", "1", "a")
	want(t, c, "-ERR invalid expire time in 'hgetex' command\r\n", "HGETEX", "h", "EXAT", strconv.Itoa(1<<46+100), "FIELDS", "1", "a")
	want(t, c, "+OK\r\n", "SET", "s", "v")
	want(t, c, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "HGETEX", "s", "FIELDS", "1", "a")
}

// TestHSETEX follows https://redis.io/docs/latest/commands/hsetex/.
func TestHSETEX(t *testing.T) {
	p := hashTTLPair(t)
	c := p.Keyhive()
	want(t, c, ":1\r\n", "HSETEX", "mykey", "EXAT", "4102444800", "FIELDS", "2", "field1", "Hello", "field2", "World")
	want(t, c, "*2\r\n:4102444800\r\n:4102444800\r\n", "HEXPIRETIME", "mykey", "FIELDS", "2", "field1", "field2")
	want(t, c, ":0\r\n", "HSETEX", "mykey", "FNX", "EX", "60", "FIELDS", "2", "field1", "Hello", "field2", "World")
	want(t, c, "-ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified\r\n",
		"HSETEX", "mykey", "FXX", "EX", "60", "KEEPTTL", "FIELDS", "2", "field1", "hello", "field2", "world")
	want(t, c, ":1\r\n", "HSETEX", "mykey", "FXX", "KEEPTTL", "FIELDS", "2", "field1", "hello", "field2", "world")
	want(t, c, "*2\r\n:4102444800\r\n:4102444800\r\n", "HEXPIRETIME", "mykey", "FIELDS", "2", "field1", "field2")
	// Fields given the same time are listed last-set first, as HEXPIRE
	// orders them in Redis 7.4 (KEEPTTL keeps their places).
	want(t, c, "*4\r\n$6\r\nfield2\r\n$5\r\nworld\r\n$6\r\nfield1\r\n$5\r\nhello\r\n", "HGETALL", "mykey")
	// Without KEEPTTL the fields set lose their TTL.
	want(t, c, ":1\r\n", "HSETEX", "mykey", "FIELDS", "1", "field1", "x")
	want(t, c, "*2\r\n:-1\r\n:4102444800\r\n", "HEXPIRETIME", "mykey", "FIELDS", "2", "field1", "field2")
	// FNX and FXX test every field; a missing key fails FXX and is not created.
	want(t, c, ":0\r\n", "HSETEX", "mykey", "FXX", "FIELDS", "2", "field1", "a", "field3", "b")
	want(t, c, ":1\r\n", "HSETEX", "mykey", "PX", "100000", "FNX", "FIELDS", "1", "field3", "c")
	want(t, c, "*1\r\n:100\r\n", "HTTL", "mykey", "FIELDS", "1", "field3")
	want(t, c, ":0\r\n", "HSETEX", "nokey", "FXX", "FIELDS", "1", "a", "b")
	want(t, c, ":0\r\n", "EXISTS", "nokey")
	want(t, c, ":1\r\n", "HSETEX", "nokey", "FNX", "FIELDS", "1", "a", "b")
	// An expired field counts as missing.
	want(t, c, ":1\r\n", "HSETEX", "lazy", "PX", "1", "FIELDS", "1", "f", "v")
	time.Sleep(10 * time.Millisecond)
	want(t, c, ":0\r\n", "HSETEX", "lazy", "FXX", "FIELDS", "1", "f", "v2")
	want(t, c, ":0\r\n", "EXISTS", "lazy")
	// Errors.
	want(t, c, "-ERR wrong number of arguments for 'hsetex' command\r\n", "HSETEX", "h", "FIELDS", "1")
	want(t, c, "-ERR wrong number of arguments for 'hsetex' command\r\n", "HSETEX", "h", "FIELDS", "2", "a", "b")
	want(t, c, "-ERR wrong number of arguments for 'hsetex' command\r\n", "HSETEX", "h", "FIELDS", "1", "a", "b", "unknown")
	want(t, c, "-ERR unknown argument: nx\r\n", "HSETEX", "h", "nx", "FIELDS", "1", "a", "b")
	want(t, c, "-ERR Only one of FXX or FNX arguments can be specified\r\n", "HSETEX", "h", "FXX", "FNX", "EX", "100", "FIELDS", "1", "a", "b")
	want(t, c, "-ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified\r\n", "HSETEX", "h", "EX", "100", "PX", "1000", "FIELDS", "1", "a", "b")
	want(t, c, "-ERR value is not an integer or out of range\r\n", "HSETEX", "h", "EX", "FIELDS", "1", "a", "b")
	want(t, c, "-ERR invalid expire time in 'hsetex' command\r\n", "HSETEX", "h", "PXAT", strconv.Itoa(1<<48), "FIELDS", "1", "a", "b")
	want(t, c, "-ERR invalid number of fields\r\n", "HSETEX", "h", "FIELDS", "0", "a", "b")
	want(t, c, "-ERR invalid number of fields\r\n", "HSETEX", "h", "FIELDS", "x", "a", "b")
	want(t, c, "+OK\r\n", "SET", "s", "v")
	want(t, c, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "HSETEX", "s", "FIELDS", "1", "a", "b")
}

// multiHDEL is a step whose command removes several expired fields: Redis
// wraps their HDELs in MULTI/EXEC, Keyhive publishes each at once, under the
// key's lock (replayed alike).
func multiHDEL(cmd string, hdels ...string) propStep {
	return propStep{cmd: strings.Fields(cmd), want: hdels,
		redis: append(append([]string{"MULTI"}, hdels...), "EXEC"),
		why:   "Redis wraps one command's lazy field deletions in MULTI/EXEC"}
}

// TestHashFieldPropagation: what the field expiry commands and field
// expiry propagate, against redis-server 7.4.1's AOF.
func TestHashFieldPropagation(t *testing.T) {
	path := difftest.Need74(t)
	ms := 10 * time.Millisecond
	checkPropagationWith(t, []propStep{
		w("HSET h a 1 b 2 c 3", "HSET h a 1 b 2 c 3"),
		w("HEXPIRE h 100 FIELDS 2 a zz", "HPEXPIREAT h {+100000} FIELDS 1 a"),
		w("HPEXPIRE h 100000 NX FIELDS 2 a b", "HPEXPIREAT h {+100000} NX FIELDS 1 b"),
		w("HEXPIREAT h 9999999999 FIELDS 1 c", "HPEXPIREAT h 9999999999000 FIELDS 1 c"),
		w("hpexpireat h 9999999999000 xx fields 1 c", "hpexpireat h 9999999999000 xx fields 1 c"),
		w("HEXPIRE h 100 NX FIELDS 1 a"),
		w("HPERSIST h FIELDS 2 a zz", "HPERSIST h FIELDS 2 a zz"),
		w("HPERSIST h FIELDS 1 a"),
		w("HEXPIRE h 0 FIELDS 2 a zz", "HDEL h a"),
		w("HTTL h FIELDS 1 b"),
		{cmd: strings.Fields("HPEXPIRE h 1 FIELDS 1 b"), want: []string{"HPEXPIREAT h {+1} FIELDS 1 b"}, sleep: ms},
		w("HGET h b", "HDEL h b"),
		w("HINCRBYFLOAT h c 1.5", "HSET h c 4.5"),
		w("HSET g a 1 b 2", "HSET g a 1 b 2"),
		{cmd: strings.Fields("HPEXPIRE g 1 FIELDS 2 a b"), want: []string{"HPEXPIREAT g {+1} FIELDS 2 a b"}, sleep: ms},
		multiHDEL("HMGET g a b x", "HDEL g a", "HDEL g b"),
		w("EXISTS g"),
		w("HSET g a 1 b 2 c 3", "HSET g a 1 b 2 c 3"),
		{cmd: strings.Fields("HPEXPIRE g 1 FIELDS 2 a b"), want: []string{"HPEXPIREAT g {+1} FIELDS 2 a b"}, sleep: ms},
		multiHDEL("HRANDFIELD g", "HDEL g b", "HDEL g a"),
		w("HGETALL g"),
		// Inside EXEC the HDEL joins the transaction.
		w("HSET x a 1 b 2", "HSET x a 1 b 2"),
		{cmd: strings.Fields("HPEXPIRE x 1 FIELDS 1 a"), want: []string{"HPEXPIREAT x {+1} FIELDS 1 a"}, sleep: ms},
		w("MULTI"), w("HGET x a"), w("HSET x c 3"),
		w("EXEC", "MULTI", "HDEL x a", "HSET x c 3", "EXEC"),
	}, startRedisAOFAt(t, path))
}

// TestHashScanNoValues: HSCAN NOVALUES (Redis 7.4) lists fields only.
func TestHashScanNoValues(t *testing.T) {
	for _, proto := range []int{2, 3} {
		p := hashTTLPair(t)
		p.Proto(proto)
		p.Do("HSET", "h", "foo", "1", "bar", "2", "food", "3")
		p.Do("HSCAN", "h", "0", "NOVALUES")
		p.Do("HSCAN", "h", "0", "novalues", "MATCH", "foo*")
		p.Do("HSCAN", "h", "0", "MATCH", "foo*", "NOVALUES", "COUNT", "5")
		p.Do("HSCAN", "h", "0", "NOVALUES", "NOVALUES")
		p.Do("HSCAN", "h", "0", "NOVALUES", "COUNT")
		p.Do("HSCAN", "nokey", "0", "NOVALUES")
		p.Do("HPEXPIRE", "h", "1", "FIELDS", "1", "bar")
		time.Sleep(10 * time.Millisecond)
		p.Do("HSCAN", "h", "0", "NOVALUES")
		big := []any{"HSET", "big"}
		for i := range 200 {
			big = append(big, "f"+strconv.Itoa(i), "v")
		}
		p.Do(big...)
		p.DoCompare(scanFieldsOnly, "HSCAN", "big", "0", "NOVALUES", "COUNT", "1000")
	}
}

// scanFieldsOnly compares a whole hash-table HSCAN reply as a set of
// fields (the order is each server's table order).
func scanFieldsOnly(redis, keyhive difftest.Reply) error {
	if len(redis.Elems) != 2 || len(keyhive.Elems) != 2 || redis.Elems[0].Str != keyhive.Elems[0].Str {
		return fmt.Errorf("cursor: redis %v, keyhive %v", redis, keyhive)
	}
	return difftest.Unordered(redis.Elems[1], keyhive.Elems[1])
}

// TestHashFieldTTLConversions: a listpackex converts to a hash table at the
// listpack limits, keeping the TTLs.
func TestHashFieldTTLConversions(t *testing.T) {
	p := hashTTLPair(t, "--hash-max-listpack-entries", "4", "--hash-max-listpack-value", "8")
	p.Do("HSET", "h", "a", "1", "b", "2", "c", "3")
	p.Do("HPEXPIREAT", "h", farMs, "FIELDS", "2", "b", "c")
	p.Do("OBJECT", "ENCODING", "h")
	p.Do("HSET", "h", "d", "4")
	p.Do("OBJECT", "ENCODING", "h")
	p.Do("HSET", "h", "e", "5")
	p.Do("OBJECT", "ENCODING", "h")
	p.Do("HPEXPIRETIME", "h", "FIELDS", "5", "a", "b", "c", "d", "e")
	p.DoUnorderedPairs("HGETALL", "h")
	p.Do("HSET", "v", "a", "1")
	p.Do("HEXPIRE", "v", "100", "FIELDS", "1", "a")
	p.Do("HINCRBYFLOAT", "v", "a", "0.123456789")
	p.Do("OBJECT", "ENCODING", "v")
	p.Do("HTTL", "v", "FIELDS", "1", "a")
	p.Do("HSET", "w", "a", "1")
	p.Do("HEXPIRE", "w", "100", "FIELDS", "1", "a")
	p.Do("HSET", "w", "longfield", "1")
	p.Do("OBJECT", "ENCODING", "w")
	p.Do("HTTL", "w", "FIELDS", "2", "a", "longfield")
	p.Do("HPERSIST", "w", "FIELDS", "1", "a")
	p.Do("HTTL", "w", "FIELDS", "1", "a")
	p.Do("OBJECT", "ENCODING", "w")
	p.Do("COPY", "h", "h2")
	p.Do("HPEXPIRETIME", "h2", "FIELDS", "2", "b", "a")
}

// TestHashHotPathAllocs checks that the common hash commands allocate no
// more than PING does, on hashes without and with field TTLs, in either
// form: field TTLs cost the hot path nothing.
func TestHashHotPathAllocs(t *testing.T) {
	// The server's clock stands still: HTTL's reply must be the same bytes
	// every round (allocsPerRound checks), and a real clock's second can
	// tick during a measurement.
	cfg, err := config.FromArgs([]string{"--port", "0", "--bind", "127.0.0.1", "--save", "", "--dir", t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(cfg, server.WithClock(clock.NewManual(time.Now())))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c := dialRaw(t, "tcp", srv.Addr())
	c.do(t, "HSET", "s", "a", "1", "b", "2", "c", "3")
	c.do(t, "HSET", "sx", "a", "1", "b", "2", "c", "3")
	c.do(t, "HEXPIRE", "sx", "150000", "FIELDS", "1", "b")
	for i := range 300 {
		c.do(t, "HSET", "l", fmt.Sprintf("f%03d", i), strconv.Itoa(i))
		c.do(t, "HSET", "lx", fmt.Sprintf("f%03d", i), strconv.Itoa(i))
	}
	c.do(t, "HEXPIRE", "lx", "150000", "FIELDS", "2", "f001", "f002")
	measure := func(cmds ...[]any) float64 { return c.allocsPerRound(t, 200, cmds...) }
	for _, k := range []string{"s", "sx", "l", "lx"} {
		for _, cmds := range [][][]any{
			{{"HSET", k, "tmp", "v"}, {"HDEL", k, "tmp"}},
			{{"HGET", k, "a"}, {"HGET", k, "f001"}, {"HMGET", k, "a", "b", "f002"}, {"HEXISTS", k, "b"}},
			{{"HINCRBY", k, "n", "0"}, {"HSTRLEN", k, "b"}, {"HLEN", k}},
			{{"HTTL", k, "FIELDS", "2", "b", "f001"}},
			{{"HGETALL", k}, {"HKEYS", k}, {"HSCAN", k, "0", "COUNT", "1000"}},
		} {
			pings := make([][]any, len(cmds))
			for i := range pings {
				pings[i] = []any{"PING"}
			}
			var a, b float64
			for range 3 {
				if b, a = measure(pings...), measure(cmds...); a <= b {
					break
				}
			}
			if a > b {
				t.Errorf("%q allocates %v times per round, as many PINGs %v", cmds, a, b)
			}
		}
	}
}

// TestHashFieldTTLAOFInterop: each server's AOF (incremental commands, then
// a rewritten command base: HMSET and HPEXPIREAT per field with a TTL) is
// loaded by the other, redis-server 7.4.1 and Keyhive.
func TestHashFieldTTLAOFInterop(t *testing.T) {
	p := hashTTLPair(t, "--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--appendfsync", "always")
	populateFieldTTLs(p)
	compareFieldTTLs(p, false)
	copyAOFDir(t, p.Redis(), p.Keyhive())
	loadAOF(t, p.Keyhive())
	compareFieldTTLs(p, false)
	copyAOFDir(t, p.Keyhive(), p.Redis())
	loadAOF(t, p.Redis())
	compareFieldTTLs(p, false)
	for _, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
		if r := c.Do("BGREWRITEAOF"); !strings.HasPrefix(r.Str, "Background append only file rewriting") {
			t.Fatalf("%s: BGREWRITEAOF: %v", c.Name(), r)
		}
		waitInfo(t, c, "aof_rewrite_in_progress:0")
	}
	copyAOFDir(t, p.Redis(), p.Keyhive())
	loadAOF(t, p.Keyhive())
	compareFieldTTLs(p, false)
	copyAOFDir(t, p.Keyhive(), p.Redis())
	loadAOF(t, p.Redis())
	compareFieldTTLs(p, false)
}

// TestHashFieldTTLRandom: HRANDFIELD on hashes with field TTLs (replies
// random: compared by shape, members checked against the hash).
func TestHashFieldTTLRandom(t *testing.T) {
	for _, proto := range []int{2, 3} {
		p := hashTTLPair(t)
		p.Proto(proto)
		p.Do("HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4", "e", "5")
		p.Do("HPEXPIREAT", "h", farMs, "FIELDS", "2", "d", "b")
		sameShape := func(redis, keyhive difftest.Reply) error {
			if len(redis.Elems) != len(keyhive.Elems) || redis.Kind != keyhive.Kind {
				return fmt.Errorf("shapes differ: redis %v, keyhive %v", redis, keyhive)
			}
			for _, e := range keyhive.Elems {
				for _, s := range append([]difftest.Reply{e}, e.Elems...) {
					if s.Kind == '$' && !strings.Contains("a1b2c3d4e5", s.Str) {
						return fmt.Errorf("keyhive returned %q", s.Str)
					}
				}
			}
			return nil
		}
		for _, args := range [][]any{
			{"HRANDFIELD", "h", "-7"}, {"HRANDFIELD", "h", "-3", "WITHVALUES"},
			{"HRANDFIELD", "h", "3"}, {"HRANDFIELD", "h", "2", "WITHVALUES"},
			{"HRANDFIELD", "h", "1"}, {"HRANDFIELD", "h", "1", "WITHVALUES"},
		} {
			p.DoCompare(sameShape, append([]any{}, args...)...)
		}
		p.DoUnordered("HRANDFIELD", "h", "5")
		p.DoCompare(sameShape, "HRANDFIELD", "h")
	}
}

// TestHashFieldTTLWatch: HEXPIRE and HPERSIST that change nothing leave a
// watched key untouched; a field's expiry, TTL change or lazy removal
// touches it.
func TestHashFieldTTLWatch(t *testing.T) {
	for _, enc := range []string{"listpack", "hashtable"} {
		t.Run(enc, func(t *testing.T) { testHashFieldTTLWatch(t, enc) })
	}
}

func testHashFieldTTLWatch(t *testing.T, enc string) {
	p := hashTTLPair(t, encodingDirectives(enc)...)
	other := p.NewConn()
	p.Do("HSET", "h", "a", "1", "b", "2")
	for i, cmd := range [][]any{
		{"HEXPIRE", "h", "100", "FIELDS", "1", "zz"},
		{"HPERSIST", "h", "FIELDS", "1", "a"},
		{"HEXPIRE", "h", "100", "FIELDS", "1", "a"},
		{"HEXPIRE", "h", "100", "NX", "FIELDS", "1", "a"},
		{"HPERSIST", "h", "FIELDS", "1", "a"},
		{"HPEXPIRE", "h", "1", "FIELDS", "1", "b"},
	} {
		p.Do("WATCH", "h")
		other.Do(cmd...)
		p.Do("MULTI")
		p.Do("PING")
		if i == 0 && enc == "listpack" {
			p.DoDifferent("HEXPIRE's conversion to listpackex rewrites the key, which touches it for WATCH", "EXEC")
		} else {
			p.Do("EXEC")
		}
	}
	time.Sleep(10 * time.Millisecond)
	p.Do("WATCH", "h")
	other.Do("HGET", "h", "b")
	p.Do("MULTI")
	p.Do("PING")
	p.Do("EXEC")
}

// TestHashFieldTTLSortBy: SORT BY and GET with key->field patterns do not
// see a field past its TTL, as Redis 7.4.
func TestHashFieldTTLSortBy(t *testing.T) {
	p := difftest.Start74(t)
	p.Do("RPUSH", "l", "a", "b", "c")
	p.Do("HSET", "w_a", "f", "3", "g", "x")
	p.Do("HSET", "w_b", "f", "1", "g", "y")
	p.Do("HSET", "w_c", "f", "2", "g", "z")
	p.Do("HPEXPIRE", "w_b", 1, "FIELDS", 2, "f", "g")
	time.Sleep(20 * time.Millisecond)
	p.Do("SORT", "l", "BY", "w_*->f")
	p.Do("SORT", "l", "BY", "w_*->f", "GET", "w_*->g")
	p.Do("SORT", "l", "BY", "nosort", "GET", "#", "GET", "w_*->f")
}
