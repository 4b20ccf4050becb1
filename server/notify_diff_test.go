package server_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// Keyspace notifications: a subscriber to every keyspace and keyevent
// channel, and after each command the events each server sent, in order,
// compared as lists (read up to the reply of a PING sent after the command).

func TestNotifyEveryFamily(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			w := watchEvents(t, proto, "KEAnm")
			// Strings and generic commands.
			w.do("SET", "s", "1")
			w.do("SET", "s", "2", "EX", "100")
			w.do("SET", "s", "3", "KEEPTTL")
			w.do("SET", "s", "4", "NX")
			w.do("SET", "s", "5", "XX", "GET")
			w.do("SETNX", "s2", "v")
			w.do("SETNX", "s2", "v")
			w.do("SETEX", "s3", "100", "v")
			w.do("PSETEX", "s3", "100000", "v")
			w.do("GETSET", "s3", "w")
			w.do("MSET", "m1", "a", "m2", "b")
			w.do("MSETNX", "m3", "a", "m1", "b")
			w.do("MSETNX", "m3", "a", "m4", "b")
			w.do("APPEND", "ap", "x")
			w.do("APPEND", "ap", "y")
			w.do("INCR", "n")
			w.do("DECRBY", "n", "5")
			w.do("INCRBYFLOAT", "n", "1.5")
			w.do("INCR", "s2")
			w.do("SETRANGE", "sr", "3", "abc")
			w.do("SETRANGE", "sr", "0", "")
			w.do("SETRANGE", "sr", "0", "z")
			w.do("GET", "nosuch")
			w.do("MGET", "s", "nosuch", "n")
			w.do("GETEX", "s", "EX", "50")
			w.do("GETEX", "s", "PERSIST")
			w.do("GETEX", "s", "PERSIST")
			w.do("GETEX", "s")
			w.do("GETEX", "s", "PXAT", "1")
			w.do("GETDEL", "s2")
			w.do("GETDEL", "s2")
			w.do("STRLEN", "nosuch")
			w.do("SETBIT", "b", "7", "1")
			w.do("SETBIT", "b", "7", "1")
			w.do("SETBIT", "b", "100", "0")
			w.do("BITFIELD", "bf", "SET", "u8", "0", "5", "GET", "u8", "0")
			w.do("BITFIELD", "bf", "SET", "u8", "0", "5")
			w.do("BITFIELD", "bf", "GET", "u8", "0")
			w.do("BITOP", "OR", "bo", "b", "bf")
			w.do("BITOP", "AND", "bo", "nosuch1", "nosuch2")
			w.do("EXPIRE", "m1", "100")
			w.do("EXPIRE", "m1", "100", "NX")
			w.do("PEXPIREAT", "m1", "1")
			w.do("EXPIRE", "nosuch", "10")
			w.do("SET", "p", "v", "EX", "100")
			w.do("PERSIST", "p")
			w.do("PERSIST", "p")
			w.do("DEL", "p", "nosuch", "m2")
			w.do("SET", "u", "v")
			w.do("UNLINK", "u")
			w.do("SET", "r1", "v")
			w.do("RENAME", "r1", "r2")
			w.do("SET", "r3", "v")
			w.do("RENAME", "r2", "r3")
			w.do("RENAME", "r3", "r3")
			w.do("RENAMENX", "r3", "ap")
			w.do("RENAMENX", "r3", "r4")
			w.do("COPY", "r4", "c1")
			w.do("COPY", "r4", "c1")
			w.do("COPY", "r4", "c1", "REPLACE")
			w.do("COPY", "r4", "c1", "DB", "1")
			w.do("MOVE", "c1", "1")
			w.do("MOVE", "r4", "1")
			w.do("EXISTS", "nosuch")
			w.do("TYPE", "nosuch")
			w.do("TTL", "nosuch")
			w.do("OBJECT", "ENCODING", "nosuch")
			w.do("TOUCH", "nosuch")

			// Lists.
			w.do("LPUSH", "l", "a", "b")
			w.do("RPUSH", "l", "c")
			w.do("LPUSHX", "l", "d")
			w.do("RPUSHX", "nol", "d")
			w.do("LINSERT", "l", "BEFORE", "a", "x")
			w.do("LINSERT", "l", "BEFORE", "zz", "x")
			w.do("LSET", "l", "0", "y")
			w.do("LREM", "l", "0", "nothing")
			w.do("LREM", "l", "0", "x")
			w.do("LTRIM", "l", "0", "-1")
			w.do("LTRIM", "l", "0", "1")
			w.do("LPOP", "l")
			w.do("RPOP", "l", "5")
			w.do("LPOP", "l")
			w.do("RPUSH", "l", "1", "2", "3")
			w.do("LMOVE", "l", "l", "LEFT", "RIGHT")
			w.do("LMOVE", "l", "l2", "LEFT", "RIGHT")
			w.do("RPOPLPUSH", "l", "l2")
			w.do("LMOVE", "l", "l2", "RIGHT", "LEFT")
			w.do("LMPOP", "2", "nol", "l2", "LEFT", "COUNT", "2")
			w.do("LMPOP", "1", "l2", "RIGHT", "COUNT", "5")
			w.do("RPUSH", "l", "a", "b")
			w.do("LTRIM", "l", "5", "10")
			w.do("LRANGE", "nol", "0", "-1")
			w.do("LINDEX", "nol", "0")
			w.do("LLEN", "nol")
			w.do("BLPOP", "nol", "l", "0.01")

			// Hashes.
			w.do("HSET", "h", "a", "1", "b", "2")
			w.do("HSET", "h", "a", "1")
			w.do("HMSET", "h", "c", "3")
			w.do("HSETNX", "h", "a", "1")
			w.do("HSETNX", "h", "d", "1")
			w.do("HINCRBY", "h", "a", "2")
			w.do("HINCRBYFLOAT", "h", "a", "0.5")
			w.do("HDEL", "h", "nosuch")
			w.do("HDEL", "h", "a", "b")
			w.do("HGET", "noh", "a")
			w.do("HGETALL", "noh")
			w.do("HDEL", "h", "c", "d")

			// Sets.
			w.do("SADD", "st", "a", "b", "1")
			w.do("SADD", "st", "a")
			w.do("SREM", "st", "x")
			w.do("SREM", "st", "1")
			w.do("SMOVE", "st", "st2", "a")
			w.do("SMOVE", "st", "st2", "nosuch")
			w.do("SMOVE", "st", "st", "b")
			w.do("SMOVE", "st", "st2", "b")
			w.do("SADD", "st", "1", "2", "3", "4")
			w.do("SINTERSTORE", "dst", "st", "st2")
			w.do("SUNIONSTORE", "dst", "st", "st2")
			w.do("SDIFFSTORE", "dst", "st", "st")
			w.do("SDIFFSTORE", "dst", "st", "st")
			w.do("SREM", "st2", "a")
			w.do("SPOP", "st2")
			w.doRandom("SPOP", "st", "2")
			w.doRandom("SPOP", "st", "10")
			w.do("SPOP", "st", "0")
			w.do("SMEMBERS", "nos")
			w.do("SISMEMBER", "nos", "a")
			w.do("SINTER", "nos", "nos2")

			// Sorted sets.
			w.do("ZADD", "z", "1", "a", "2", "b", "3", "c")
			w.do("ZADD", "z", "1", "a")
			w.do("ZADD", "z", "CH", "5", "a")
			w.do("ZADD", "z", "INCR", "1", "a")
			w.do("ZADD", "z", "NX", "INCR", "1", "a")
			w.do("ZINCRBY", "z", "2", "b")
			w.do("ZREM", "z", "nosuch")
			w.do("ZREM", "z", "c")
			w.do("ZADD", "z", "7", "d", "8", "e", "9", "f")
			w.do("ZREMRANGEBYRANK", "z", "0", "0")
			w.do("ZREMRANGEBYRANK", "z", "10", "20")
			w.do("ZREMRANGEBYSCORE", "z", "8", "8")
			w.do("ZREMRANGEBYLEX", "z", "[a", "[a")
			w.do("ZRANGESTORE", "zd", "z", "0", "-1")
			w.do("ZRANGESTORE", "zd", "z", "10", "20")
			w.do("ZUNIONSTORE", "zd", "2", "z", "st")
			w.do("ZINTERSTORE", "zd", "1", "z")
			w.do("ZDIFFSTORE", "zd", "2", "z", "z")
			w.do("ZPOPMIN", "z")
			w.do("ZPOPMAX", "z", "2")
			w.do("ZADD", "z", "1", "a", "2", "b")
			w.do("ZMPOP", "1", "z", "MIN", "COUNT", "1")
			w.do("BZPOPMAX", "z", "0.01")
			w.do("BZMPOP", "0.01", "1", "z", "MAX")
			w.do("ZSCORE", "noz", "a")
			w.do("ZRANGE", "noz", "0", "-1")

			// SORT ... STORE.
			w.do("RPUSH", "sl", "3", "1", "2")
			w.do("SORT", "sl", "STORE", "sd")
			w.do("SORT", "sl", "STORE", "sd")
			w.do("SORT", "nosuch", "STORE", "sd")
			w.do("SORT", "nosuch", "STORE", "sd")

			// Transactions: each command's events, in order.
			w.do("MULTI")
			w.do("SET", "tx", "1")
			w.do("INCR", "tx")
			w.do("LPUSH", "tl", "a")
			w.do("EXEC")

			// Scripts.
			w.do("EVAL", "redis.call('set', KEYS[1], 'x'); redis.call('lpush', KEYS[2], 'y'); return redis.call('get', 'nosuch')", "2", "es", "el")

			// FLUSHDB sends no events.
			w.do("FLUSHDB")
		})
	}
}

func TestNotifyClasses(t *testing.T) {
	for _, flags := range []string{"K$", "Eg", "Kl", "El", "Ehz", "Ks", "KA", "Em", "En", "Egx", "E"} {
		t.Run(flags, func(t *testing.T) {
			w := watchEvents(t, 2, flags)
			w.do("SET", "s", "1", "PX", "100000")
			w.do("INCR", "n")
			w.do("LPUSH", "l", "a")
			w.do("LPOP", "l")
			w.do("HSET", "h", "a", "1")
			w.do("SADD", "st", "a")
			w.do("ZADD", "z", "1", "a")
			w.do("DEL", "s", "n")
			w.do("GET", "nosuch")
			w.do("SET", "e", "v", "PX", "1")
			time.Sleep(5 * time.Millisecond)
			w.do("GET", "e")
		})
	}
}

func TestNotifyExpired(t *testing.T) {
	w := watchEvents(t, 2, "KEA")
	// Lazily: the read that finds the key expired removes it.
	w.do("SET", "lazy", "v", "PX", "1")
	time.Sleep(5 * time.Millisecond)
	w.do("GET", "lazy")
	w.do("SET", "lazy", "v", "PX", "1")
	time.Sleep(5 * time.Millisecond)
	w.do("SET", "lazy", "w")
	// Actively: the expiry cycle removes it without a command.
	w.do("SET", "active", "v", "PX", "20")
	time.Sleep(400 * time.Millisecond)
	w.check("the active expiry cycle")
}

func TestNotifyConfig(t *testing.T) {
	p := difftest.StartIsolated(t)
	for _, v := range []string{"", "KEA", "AKE", "Kx", "gE", "KEg$lshzxetd", "KEg$lshzxetdn", "KEAnm", "n", "m", "Am", "K", "E", "A"} {
		p.Do("CONFIG", "SET", "notify-keyspace-events", v)
		p.Do("CONFIG", "GET", "notify-keyspace-events")
	}
	p.Do("CONFIG", "SET", "notify-keyspace-events", "KEQ")
	p.Do("CONFIG", "GET", "notify-keyspace-events")
}

// A pop served to a blocked client notifies after the push that woke it.
func TestNotifyServedWaiters(t *testing.T) {
	w := watchEvents(t, 2, "KEA")
	b := w.p.NewConn()
	b.Send("BLPOP", "bl", "5")
	time.Sleep(50 * time.Millisecond)
	w.do("RPUSH", "bl", "a", "b")
	b.Read()
	b.Send("BLMOVE", "src", "dst", "LEFT", "RIGHT", "5")
	time.Sleep(50 * time.Millisecond)
	w.do("LPUSH", "src", "x")
	b.Read()
	b.Send("BZPOPMIN", "bz", "5")
	time.Sleep(50 * time.Millisecond)
	w.do("ZADD", "bz", "1", "m")
	b.Read()
	b.Send("BLPOP", "bt", "5")
	time.Sleep(50 * time.Millisecond)
	w.do("MULTI")
	w.do("RPUSH", "bt", "1")
	w.do("RPUSH", "bt", "2")
	w.do("EXEC")
	b.Read()
}

// TestNotifyOverwrittenTypeChanged: Redis 8.2's "overwritten" (class o) and
// "type_changed" (class c) events, as
// https://redis.io/docs/latest/develop/pubsub/keyspace-notifications/ and
// redis/redis#14141 define them: a command that replaces a key's value whole
// (SET and its kin, MSET, BITOP, the STORE commands, RENAME, COPY) emits
// "overwritten" for a key that existed, then "type_changed" when the type
// differs; neither is part of A.
func TestNotifyOverwrittenTypeChanged(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.StartIsolated(t)
	k := p.Keyhive()
	docCase(t, p, "+OK\r\n", "CONFIG", "SET", "notify-keyspace-events", "KEA")
	expect := expectEvents(t, p, k)
	expect([]string{"__keyevent@0__:set s"}, "SET", "s", "1") // A leaves o and c out
	expect([]string{"__keyevent@0__:set s"}, "SET", "s", "2")
	docCase(t, p, "+OK\r\n", "CONFIG", "SET", "notify-keyspace-events", "KEAoc")
	// As 'n', o and c are listed only when the classes are not all of A.
	docCase(t, p, "*2\r\n$22\r\nnotify-keyspace-events\r\n$3\r\nAKE\r\n", "CONFIG", "GET", "notify-keyspace-events")
	docCase(t, p, "+OK\r\n", "CONFIG", "SET", "notify-keyspace-events", "Eoc$")
	docCase(t, p, "*2\r\n$22\r\nnotify-keyspace-events\r\n$4\r\n$ocE\r\n", "CONFIG", "GET", "notify-keyspace-events")
	docCase(t, p, "+OK\r\n", "CONFIG", "SET", "notify-keyspace-events", "KEAoc")
	expect([]string{"__keyevent@0__:overwritten s", "__keyevent@0__:set s"}, "SET", "s", "3")
	expect([]string{"__keyevent@0__:set n"}, "SET", "n", "1") // a new key is not overwritten
	expect([]string{"__keyevent@0__:lpush l"}, "LPUSH", "l", "a")
	expect([]string{"__keyevent@0__:overwritten l", "__keyevent@0__:type_changed l", "__keyevent@0__:set l"}, "SET", "l", "x")
	expect([]string{"__keyevent@0__:overwritten s", "__keyevent@0__:set s", "__keyevent@0__:expire s"}, "SETEX", "s", "100", "v")
	expect([]string{"__keyevent@0__:overwritten s", "__keyevent@0__:set s"}, "GETSET", "s", "w")
	expect([]string{"__keyevent@0__:overwritten s", "__keyevent@0__:set s", "__keyevent@0__:set m"}, "MSET", "s", "1", "m", "2")
	expect([]string{"__keyevent@0__:overwritten s", "__keyevent@0__:set s"}, "MSETEX", "1", "s", "x", "XX")
	// MSETEX notifies each key's expire before its set, as Redis 8.4 does.
	expect([]string{"__keyevent@0__:overwritten s", "__keyevent@0__:expire s", "__keyevent@0__:set s"}, "MSETEX", "1", "s", "y", "EX", "100")
	expect([]string{"__keyevent@0__:append s"}, "APPEND", "s", "y") // an edit in place is no overwrite
	expect([]string{"__keyevent@0__:incrby n"}, "INCR", "n")
	// STORE commands: over a string, the type changes too.
	expect([]string{"__keyevent@0__:sadd a"}, "SADD", "a", "1", "2")
	expect([]string{"__keyevent@0__:overwritten s", "__keyevent@0__:type_changed s", "__keyevent@0__:sunionstore s"}, "SUNIONSTORE", "s", "a")
	expect([]string{"__keyevent@0__:overwritten s", "__keyevent@0__:sinterstore s"}, "SINTERSTORE", "s", "a")
	expect([]string{"__keyevent@0__:overwritten s", "__keyevent@0__:type_changed s", "__keyevent@0__:zunionstore s"}, "ZUNIONSTORE", "s", "1", "a")
	expect([]string{"__keyevent@0__:overwritten s", "__keyevent@0__:type_changed s", "__keyevent@0__:set s"}, "BITOP", "OR", "s", "n")
	expect([]string{"__keyevent@0__:del s"}, "SDIFFSTORE", "s", "nokey") // an empty result deletes
	// RENAME and COPY: after their own events.
	expect([]string{"__keyevent@0__:rename_from a", "__keyevent@0__:rename_to l", "__keyevent@0__:overwritten l", "__keyevent@0__:type_changed l"}, "RENAME", "a", "l")
	expect([]string{"__keyevent@0__:copy_to n", "__keyevent@0__:overwritten n", "__keyevent@0__:type_changed n"}, "COPY", "l", "n", "REPLACE")
	expect([]string{"__keyevent@0__:copy_to fresh"}, "COPY", "l", "fresh")
	dump := k.Do("DUMP", "fresh").Str
	expect([]string{"__keyevent@0__:restore fresh", "__keyevent@0__:overwritten fresh"}, "RESTORE", "fresh", "0", dump, "REPLACE")
	expect([]string{"__keyevent@0__:restore n", "__keyevent@0__:overwritten n"}, "RESTORE", "n", "0", dump, "REPLACE")
	expect([]string{"__keyevent@0__:set s"}, "SET", "s", "str")
	expect([]string{"__keyevent@0__:restore s", "__keyevent@0__:overwritten s", "__keyevent@0__:type_changed s"}, "RESTORE", "s", "0", dump, "REPLACE")
}
