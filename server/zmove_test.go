package server_test

import (
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// ZMOVE, BZMOVE and ZMOVEMEMBER (Redis 8.12), as
// https://redis.io/docs/latest/commands/zmove/,
// https://redis.io/docs/latest/commands/bzmove/ and
// https://redis.io/docs/latest/commands/zmovemember/ document them: their
// syntax, ACL categories and stated rules (scores kept, a destination
// score replaced, the source deleted once empty, expiry times kept, one key
// for both answering null, WRONGTYPE only when the source exists, BZMOVE
// waiting only while the source is missing, not blocking inside MULTI or a
// script). No 8.12 server runs here, and the copies of the pages available
// give their overview, not their reply sections, so these replies are
// Keyhive's reading of them, each said where it is made:
//   - ZMOVE and BZMOVE reply the moved members as [member, score] pairs
//     (ZMPOP's element shape: nested in RESP2 too, scores doubles in RESP3),
//     highest first for MAX; ZMOVEMEMBER replies the moved members' names in
//     the order given. Nothing to move is a null (array) reply.
//   - MIN and MAX move one member without COUNT, BYSCORE every member of
//     the range; COUNT bounds either.
//   - Errors are Redis's usual texts (syntax error, "count should be greater
//     than 0" as ZMPOP, "min or max is not a float" as ZRANGEBYSCORE), and
//     "num-members should be greater than 0" for a bad MEMBERS count.
//   - Events: the source "zrem" (then "del" when emptied), the destination
//     "zadd" when it changed, as SMOVE emits srem and sadd.
//   - ZMOVE and ZMOVEMEMBER propagate as sent (what they move follows from
//     the data); BZMOVE as the ZMOVE it did.

const wrongTypeReply = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"

// zpairs is the reply of [member, score] pairs, scores as RESP2 bulk
// strings or RESP3 doubles.
func zpairs(proto int, ms ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(ms)/2)
	for i := 0; i < len(ms); i += 2 {
		fmt.Fprintf(&b, "*2\r\n$%d\r\n%s\r\n", len(ms[i]), ms[i])
		if proto == 3 {
			fmt.Fprintf(&b, ",%s\r\n", ms[i+1])
		} else {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(ms[i+1]), ms[i+1])
		}
	}
	return b.String()
}

// withScores is ZRANGE ... WITHSCORES's reply: flat in RESP2, pairs in RESP3.
func withScores(proto int, ms ...string) string {
	if proto == 3 {
		return zpairs(proto, ms...)
	}
	return bulkArray(ms...)
}

// bulks is an array of bulk strings.
func bulkArray(ss ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(ss))
	for _, s := range ss {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(s), s)
	}
	return b.String()
}

// TestZMove: ZMOVE's documented rules, RESP2 and RESP3.
func TestZMove(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.Start(t)
	k := p.Keyhive()
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		null := "*-1\r\n"
		if proto == 3 {
			null = "_\r\n"
		}
		pairs := func(ms ...string) string { return zpairs(proto, ms...) }
		zrange := func(ms ...string) string { return withScores(proto, ms...) }
		k.Do("ZADD", "bookmarks:{user:42}", 1, "a", 2, "b", 3, "c", 4, "d", 5, "e")
		// MIN and MAX move one member, COUNT up to count; scores are kept.
		docCase(t, p, pairs("a", "1"), "ZMOVE", "bookmarks:{user:42}", "batch:{user:42}:001", "MIN")
		docCase(t, p, pairs("e", "5", "d", "4"), "ZMOVE", "bookmarks:{user:42}", "batch:{user:42}:001", "MAX", "COUNT", "2")
		docCase(t, p, zrange("a", "1", "d", "4", "e", "5"), "ZRANGE", "batch:{user:42}:001", "0", "-1", "WITHSCORES")
		docCase(t, p, zrange("b", "2", "c", "3"), "ZRANGE", "bookmarks:{user:42}", "0", "-1", "WITHSCORES")
		// BYSCORE moves the range (exclusive bounds as ZRANGEBYSCORE), COUNT
		// the lowest of it; an empty range moves nothing.
		k.Do("ZADD", "src", 1, "a", 2, "b", 3, "c", 4, "d", 5, "e")
		docCase(t, p, pairs("b", "2", "c", "3", "d", "4"), "ZMOVE", "src", "dst", "BYSCORE", "2", "4")
		docCase(t, p, pairs("e", "5"), "ZMOVE", "src", "dst", "BYSCORE", "(1", "+inf", "COUNT", "5")
		docCase(t, p, null, "ZMOVE", "src", "dst", "BYSCORE", "(1", "2")
		docCase(t, p, pairs("a", "1"), "ZMOVE", "src", "dst", "BYSCORE", "-inf", "+inf", "COUNT", "1")
		// The last member moved deletes the source.
		docCase(t, p, ":0\r\n", "EXISTS", "src")
		docCase(t, p, zrange("a", "1", "b", "2", "c", "3", "d", "4", "e", "5"), "ZRANGE", "dst", "0", "-1", "WITHSCORES")
		// A member dst has takes the source's score; others stay.
		k.Do("ZADD", "s2", 10, "a", 0.5, "z")
		docCase(t, p, pairs("z", "0.5", "a", "10"), "ZMOVE", "s2", "dst", "MIN", "COUNT", "10")
		docCase(t, p, zrange("z", "0.5", "b", "2", "c", "3", "d", "4", "e", "5", "a", "10"), "ZRANGE", "dst", "0", "-1", "WITHSCORES")
		// Expiry times are kept; a new destination has none.
		k.Do("ZADD", "s3", 1, "x", 2, "y")
		k.Do("EXPIRE", "s3", 100)
		k.Do("EXPIRE", "dst", 200)
		docCase(t, p, pairs("x", "1"), "ZMOVE", "s3", "dst", "MIN")
		docCase(t, p, ":100\r\n", "TTL", "s3")
		docCase(t, p, ":200\r\n", "TTL", "dst")
		docCase(t, p, pairs("y", "2"), "ZMOVE", "s3", "fresh", "MIN")
		docCase(t, p, ":-1\r\n", "TTL", "fresh")
		// A missing source, or one key for both, is null.
		docCase(t, p, null, "ZMOVE", "nokey", "dst", "MIN")
		docCase(t, p, null, "ZMOVE", "dst", "dst", "MAX", "COUNT", "3")
		docCase(t, p, null, "ZMOVE", "nokey", "nokey", "MIN")
		docCase(t, p, ":7\r\n", "ZCARD", "dst")
		// WRONGTYPE when the source exists and either key has another type.
		k.Do("SET", "str", "v")
		docCase(t, p, wrongTypeReply, "ZMOVE", "str", "dst", "MIN")
		docCase(t, p, wrongTypeReply, "ZMOVE", "dst", "str", "MIN")
		docCase(t, p, wrongTypeReply, "ZMOVE", "str", "str", "MIN")
		docCase(t, p, null, "ZMOVE", "nokey", "str", "MIN")
		docCase(t, p, ":7\r\n", "ZCARD", "dst")
		// A large (skiplist) source and destination.
		for i := range 200 {
			k.Do("ZADD", "big", i, fmt.Sprint("m", i))
		}
		docCase(t, p, pairs("m199", "199", "m198", "198"), "ZMOVE", "big", "big2", "MAX", "COUNT", "2")
		docCase(t, p, "$8\r\nlistpack\r\n", "OBJECT", "ENCODING", "big2")
		if r := k.Do("ZMOVE", "big", "big2", "MIN", "COUNT", "1000"); len(r.Elems) != 198 {
			t.Errorf("ZMOVE of 198 members replied %d", len(r.Elems))
		}
		docCase(t, p, ":0\r\n", "EXISTS", "big")
		docCase(t, p, ":200\r\n", "ZCARD", "big2")
		docCase(t, p, "$8\r\nskiplist\r\n", "OBJECT", "ENCODING", "big2")
		docCase(t, p, zrange("m0", "0"), "ZRANGE", "big2", "0", "0", "WITHSCORES")
		for _, bad := range [][]any{
			{"ZMOVE", "s", "d", "MIDDLE"}, {"ZMOVE", "s", "d", "MIN", "COUNT"}, {"ZMOVE", "s", "d", "MIN", "2"},
			{"ZMOVE", "s", "d", "BYSCORE", "1"}, {"ZMOVE", "s", "d", "MIN", "COUNT", "1", "COUNT", "2"},
			{"ZMOVE", "s", "d", "BYSCORE", "1", "2", "LIMIT", "0", "1"},
		} {
			docCase(t, p, "-ERR syntax error\r\n", bad...)
		}
		docCase(t, p, "-ERR count should be greater than 0\r\n", "ZMOVE", "s", "d", "MIN", "COUNT", "0")
		docCase(t, p, "-ERR count should be greater than 0\r\n", "ZMOVE", "s", "d", "MIN", "COUNT", "x")
		docCase(t, p, "-ERR min or max is not a float\r\n", "ZMOVE", "s", "d", "BYSCORE", "x", "1")
		docCase(t, p, "-ERR wrong number of arguments for 'zmove' command\r\n", "ZMOVE", "s", "d")
		k.Do("FLUSHALL")
	}
}

// TestZMoveMember: ZMOVEMEMBER's documented rules, RESP2 and RESP3.
func TestZMoveMember(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.Start(t)
	k := p.Keyhive()
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		null := "*-1\r\n"
		if proto == 3 {
			null = "_\r\n"
		}
		zrange := func(ms ...string) string { return withScores(proto, ms...) }
		k.Do("ZADD", "src", 1, "a", 2, "b", 3, "c", 4, "d")
		k.Do("ZADD", "dst", 20, "b", 100, "x")
		// Request order; missing members skipped; a duplicate moved once;
		// a member dst has takes the source's score.
		docCase(t, p, bulkArray("c", "b"), "ZMOVEMEMBER", "src", "dst", "MEMBERS", "4", "c", "nope", "b", "c")
		docCase(t, p, zrange("b", "2", "c", "3", "x", "100"), "ZRANGE", "dst", "0", "-1", "WITHSCORES")
		docCase(t, p, zrange("a", "1", "d", "4"), "ZRANGE", "src", "0", "-1", "WITHSCORES")
		// NX: only members dst lacks; XX: only those it has; the rest stay.
		k.Do("ZADD", "dst", 7, "a")
		docCase(t, p, bulkArray("d"), "ZMOVEMEMBER", "src", "dst", "NX", "MEMBERS", "2", "a", "d")
		docCase(t, p, zrange("a", "1"), "ZRANGE", "src", "0", "-1", "WITHSCORES")
		docCase(t, p, null, "ZMOVEMEMBER", "src", "dst", "NX", "MEMBERS", "1", "a")
		k.Do("ZADD", "src", 5, "e")
		docCase(t, p, bulkArray("a"), "ZMOVEMEMBER", "src", "dst", "XX", "MEMBERS", "2", "e", "a")
		docCase(t, p, null, "ZMOVEMEMBER", "src", "new", "XX", "MEMBERS", "1", "e")
		docCase(t, p, ":0\r\n", "EXISTS", "new")
		// The last member moved deletes the source; a new dst is created.
		docCase(t, p, bulkArray("e"), "ZMOVEMEMBER", "src", "new", "MEMBERS", "1", "e")
		docCase(t, p, ":0\r\n", "EXISTS", "src")
		docCase(t, p, zrange("e", "5"), "ZRANGE", "new", "0", "-1", "WITHSCORES")
		// Nothing to move, a missing source, one key: null.
		docCase(t, p, null, "ZMOVEMEMBER", "new", "dst", "MEMBERS", "1", "zz")
		docCase(t, p, null, "ZMOVEMEMBER", "nokey", "dst", "MEMBERS", "1", "a")
		docCase(t, p, null, "ZMOVEMEMBER", "dst", "dst", "MEMBERS", "1", "a")
		k.Do("SET", "str", "v")
		docCase(t, p, wrongTypeReply, "ZMOVEMEMBER", "str", "dst", "MEMBERS", "1", "a")
		docCase(t, p, wrongTypeReply, "ZMOVEMEMBER", "dst", "str", "MEMBERS", "1", "a")
		docCase(t, p, null, "ZMOVEMEMBER", "nokey", "str", "MEMBERS", "1", "a")
		for _, bad := range [][]any{
			{"ZMOVEMEMBER", "s", "d", "MEMBERS", "2", "a"}, {"ZMOVEMEMBER", "s", "d", "MEMBERS", "1", "a", "b"},
			{"ZMOVEMEMBER", "s", "d", "NX", "XX", "MEMBERS", "1", "a"}, {"ZMOVEMEMBER", "s", "d", "FIELDS", "1", "a"},
			{"ZMOVEMEMBER", "s", "d", "NX", "a", "b", "c"},
		} {
			docCase(t, p, "-ERR syntax error\r\n", bad...)
		}
		docCase(t, p, "-ERR num-members should be greater than 0\r\n", "ZMOVEMEMBER", "s", "d", "MEMBERS", "0", "a")
		docCase(t, p, "-ERR num-members should be greater than 0\r\n", "ZMOVEMEMBER", "s", "d", "MEMBERS", "x", "a")
		docCase(t, p, "-ERR wrong number of arguments for 'zmovemember' command\r\n", "ZMOVEMEMBER", "s", "d", "MEMBERS", "1")
		k.Do("FLUSHALL")
	}
}

// TestBZMove: BZMOVE served at once when the source exists, else blocked
// until it does (a change to dst does not serve it), null on timeout; one
// key answers null without blocking; inside MULTI or a script it does not
// block.
func TestBZMove(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.Start(t)
	k := p.Keyhive()
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		null := "*-1\r\n"
		if proto == 3 {
			null = "_\r\n"
		}
		pairs := func(ms ...string) string { return zpairs(proto, ms...) }
		k.Do("ZADD", "src", 1, "a", 2, "b", 3, "c")
		docCase(t, p, pairs("a", "1"), "BZMOVE", "src", "dst", "MIN", "0")
		docCase(t, p, pairs("c", "3", "b", "2"), "BZMOVE", "src", "dst", "MAX", "0", "COUNT", "5")
		docCase(t, p, null, "BZMOVE", "src", "dst", "MIN", "0.05")
		docCase(t, p, null, "BZMOVE", "dst", "dst", "MIN", "0")
		docCase(t, p, null, "BZMOVE", "nokey", "nokey", "MIN", "0")
		// Blocked: a write to dst does not serve it; members in src do, up to
		// COUNT, without waiting for a full batch.
		k.Send("BZMOVE", "src", "dst", "MIN", "0", "COUNT", "3")
		q := p.NewConn().Keyhive()
		q.Do("ZADD", "dst", 9, "z")
		q.Do("ZADD", "src", 5, "p", 6, "q")
		if got, want := string(k.Read().Raw), pairs("p", "5", "q", "6"); got != want {
			t.Errorf("RESP%d blocked BZMOVE served %q, want %q", proto, got, want)
		}
		docCase(t, p, ":6\r\n", "ZCARD", "dst")
		// A move serves the clients blocked on its destination: a BZMOVE
		// waiting on it, and a BZPOPMIN waiting on that one's destination.
		k.Send("BZMOVE", "mid", "end", "MAX", "0")
		q2 := p.NewConn().Keyhive()
		q2.Send("BZPOPMIN", "end", "0")
		time.Sleep(50 * time.Millisecond)
		q.Do("ZMOVE", "dst", "mid", "MIN", "COUNT", "2")
		if got, want := string(k.Read().Raw), pairs("b", "2"); got != want {
			t.Errorf("RESP%d BZMOVE served by ZMOVE: %q, want %q", proto, got, want)
		}
		if got := string(q2.Read().Raw); !strings.Contains(got, "$3\r\nend\r\n$1\r\nb\r\n") {
			t.Errorf("RESP%d BZPOPMIN served by BZMOVE: %q", proto, got)
		}
		docCase(t, p, ":1\r\n", "ZCARD", "mid")
		q.Do("ZMOVE", "mid", "dst", "MIN")
		// Inside MULTI and a script: null, no blocking.
		k.Do("MULTI")
		k.Do("BZMOVE", "nokey", "dst", "MIN", "0")
		k.Do("ZADD", "src", 1, "m")
		k.Do("BZMOVE", "src", "dst", "MAX", "0")
		docCase(t, p, "*3\r\n"+null+":1\r\n"+pairs("m", "1"), "EXEC")
		nullLua := "$-1\r\n" // a Lua false
		if proto == 3 {
			nullLua = "_\r\n"
		}
		docCase(t, p, nullLua, "EVAL", "return redis.call('BZMOVE', KEYS[1], KEYS[2], 'MIN', 0)", "2", "nokey", "dst")
		k.Do("SET", "str", "v")
		docCase(t, p, wrongTypeReply, "BZMOVE", "str", "dst", "MIN", "0")
		docCase(t, p, wrongTypeReply, "BZMOVE", "str", "str", "MIN", "0")
		k.Do("ZADD", "src", 1, "m")
		docCase(t, p, wrongTypeReply, "BZMOVE", "src", "str", "MIN", "0")
		for _, bad := range [][]any{
			{"BZMOVE", "s", "d", "BYSCORE", "0"}, {"BZMOVE", "s", "d", "MIN", "0", "COUNT"},
			{"BZMOVE", "s", "d", "MIN", "0", "LIMIT", "1"},
		} {
			docCase(t, p, "-ERR syntax error\r\n", bad...)
		}
		docCase(t, p, "-ERR count should be greater than 0\r\n", "BZMOVE", "s", "d", "MIN", "0", "COUNT", "0")
		docCase(t, p, "-ERR timeout is negative\r\n", "BZMOVE", "s", "d", "MIN", "-1")
		docCase(t, p, "-ERR timeout is not a float or out of range\r\n", "BZMOVE", "s", "d", "MIN", "x")
		k.Do("FLUSHALL")
	}
}

// TestZMoveCommandTable: COMMAND INFO and GETKEYS of the three from their
// specs (the pages' ACL categories; two keys, the source RW delete, the
// destination RW insert, as LMOVE's).
func TestZMoveCommandTable(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.Start(t)
	for name, want := range map[string]string{
		"zmove":       "$5\r\nzmove\r\n :-4\r\n *2\r\n+write\r\n+denyoom\r\n :1\r\n :2\r\n :1\r\n *3\r\n+@write\r\n+@sortedset\r\n+@slow\r\n",
		"zmovemember": "$11\r\nzmovemember\r\n :-6\r\n *2\r\n+write\r\n+denyoom\r\n :1\r\n :2\r\n :1\r\n *3\r\n+@write\r\n+@sortedset\r\n+@slow\r\n",
		"bzmove":      "$6\r\nbzmove\r\n :-5\r\n *3\r\n+write\r\n+denyoom\r\n+blocking\r\n :1\r\n :2\r\n :1\r\n *4\r\n+@write\r\n+@sortedset\r\n+@slow\r\n+@blocking\r\n",
	} {
		info := p.Keyhive().Do("COMMAND", "INFO", name).Elems[0]
		var got []string
		for _, e := range info.Elems[:7] {
			got = append(got, string(e.Raw))
		}
		if strings.Join(got, " ") != want {
			t.Errorf("COMMAND INFO %s: %q, want %q", name, strings.Join(got, " "), want)
		}
		if d := p.Keyhive().Do("COMMAND", "DOCS", name).Raw; !strings.Contains(string(d), "8.12.0") {
			t.Errorf("COMMAND DOCS %s: %q", name, d)
		}
	}
	docCase(t, p, bulkArray("a", "b"), "COMMAND", "GETKEYS", "ZMOVE", "a", "b", "BYSCORE", "1", "2", "COUNT", "3")
	docCase(t, p, bulkArray("a", "b"), "COMMAND", "GETKEYS", "BZMOVE", "a", "b", "MAX", "0")
	docCase(t, p, bulkArray("a", "b"), "COMMAND", "GETKEYS", "ZMOVEMEMBER", "a", "b", "XX", "MEMBERS", "1", "m")
}

// TestZMoveEvents: the source's zrem (and del), then the destination's zadd.
func TestZMoveEvents(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.StartIsolated(t)
	k := p.Keyhive()
	docCase(t, p, "+OK\r\n", "CONFIG", "SET", "notify-keyspace-events", "KEA")
	expect := expectEvents(t, p, k)
	expect([]string{"__keyevent@0__:zadd s"}, "ZADD", "s", 1, "a", 2, "b", 3, "c")
	expect([]string{"__keyevent@0__:zrem s", "__keyevent@0__:zadd d"}, "ZMOVE", "s", "d", "MIN")
	expect([]string{"__keyevent@0__:zrem s", "__keyevent@0__:zadd d"}, "ZMOVEMEMBER", "s", "d", "MEMBERS", "1", "b")
	expect([]string{"__keyevent@0__:zrem s", "__keyevent@0__:del s", "__keyevent@0__:zadd d"}, "BZMOVE", "s", "d", "MAX", "0")
	expect(nil, "ZMOVE", "s", "d", "MIN")
	expect([]string{"__keyevent@0__:zadd s"}, "ZADD", "s", 1, "a")
	// dst holds a with score 1 already: only the source changes.
	expect([]string{"__keyevent@0__:zrem s", "__keyevent@0__:del s"}, "ZMOVE", "s", "d", "MIN")
}

// TestZMovePropagation: ZMOVE and ZMOVEMEMBER as sent, a served BZMOVE (at
// once or after blocking) as the ZMOVE it did; nothing when nothing moved.
func TestZMovePropagation(t *testing.T) {
	s := startKeyhiveProp(t)
	s.collect()
	for _, step := range []propStep{
		w("ZADD s 1 a 2 b 3 c 4 d", "ZADD s 1 a 2 b 3 c 4 d"),
		w("ZMOVE s d MIN", "ZMOVE s d MIN"),
		w("ZMOVE s d BYSCORE (1 3 COUNT 5", "ZMOVE s d BYSCORE (1 3 COUNT 5"),
		w("ZMOVE s d BYSCORE 10 20"),
		w("ZMOVE nokey d MAX"),
		w("ZMOVE s s MAX"),
		w("BZMOVE s d MAX 0 COUNT 3", "ZMOVE s d MAX COUNT 3"),
		w("ZMOVEMEMBER d s NX MEMBERS 2 a zz", "ZMOVEMEMBER d s NX MEMBERS 2 a zz"),
		w("ZMOVEMEMBER d s MEMBERS 1 zz"),
		w("BZMOVE s d MIN 0", "ZMOVE s d MIN"),
	} {
		t0 := time.Now().UnixMilli()
		reply := s.conn.do(t, step.cmd...)
		t1 := time.Now().UnixMilli()
		if err := matchPropagated(s.collect(), step.want, 0, t0, t1); err != nil {
			t.Errorf("%q (reply %v): %v", step.cmd, reply, err)
		}
	}
}

// TestReplZMove: a replica, fed ZMOVE, ZMOVEMEMBER and BZMOVE (served at
// once and after blocking), holds the master's data (DEBUG DIGEST).
func TestReplZMove(t *testing.T) {
	master := startReplNode(t, false)
	replica := startReplNode(t, false)
	replicate(t, master, replica)
	rng := rand.New(rand.NewSource(1))
	keys := []string{"z0", "z1", "z2"}
	for range 2000 {
		a, b := keys[rng.Intn(3)], keys[rng.Intn(3)]
		switch rng.Intn(5) {
		case 0, 1:
			master.ok(t, "ZADD", a, rng.Intn(50), fmt.Sprint("m", rng.Intn(200)))
		case 2:
			where := []string{"MIN", "MAX"}[rng.Intn(2)]
			master.ok(t, "ZMOVE", a, b, where, "COUNT", 1+rng.Intn(4))
		case 3:
			lo := rng.Intn(50)
			master.ok(t, "ZMOVE", a, b, "BYSCORE", lo, lo+rng.Intn(10), "COUNT", 1+rng.Intn(8))
		default:
			master.ok(t, "ZMOVEMEMBER", a, b, []string{"NX", "XX"}[rng.Intn(2)], "MEMBERS", 2,
				fmt.Sprint("m", rng.Intn(200)), fmt.Sprint("m", rng.Intn(200)))
		}
	}
	master.ok(t, "BZMOVE", "z0", "z1", "MAX", 0, "COUNT", 2)
	sameData(t, master, replica)
}

// TestRedis8MoveAllocs: ZMOVE, ZMOVEMEMBER, BITRANGEINTARRAY
// and XNACK allocate no more per round than as many PINGs, on small and
// large sorted sets (each round moves members there and back).
func TestRedis8MoveAllocs(t *testing.T) {
	srv := startKeyhive(t)
	c := dialRaw(t, "tcp", srv.Addr())
	c.do(t, "ZADD", "s", "1", "a", "2", "b")
	c.do(t, "ZADD", "d", "9", "z")
	for i := range 300 {
		c.do(t, "ZADD", "ls", strconv.Itoa(i), fmt.Sprint("m", i))
		c.do(t, "ZADD", "ld", strconv.Itoa(i+1000), fmt.Sprint("n", i))
	}
	c.do(t, "SET", "bits", strings.Repeat("\x0f\xf0", 64))
	c.do(t, "XADD", "st", "1-0", "f", "v")
	c.do(t, "XGROUP", "CREATE", "st", "g", "0")
	c.do(t, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "st", ">")
	for _, cmds := range [][][]any{
		{{"ZMOVE", "s", "d", "MIN"}, {"ZMOVE", "d", "s", "MIN"}},
		{{"ZMOVE", "s", "d", "BYSCORE", "2", "2"}, {"ZMOVE", "d", "s", "BYSCORE", "(1", "2", "COUNT", "5"}},
		{{"ZMOVEMEMBER", "s", "d", "MEMBERS", "2", "b", "x"}, {"ZMOVEMEMBER", "d", "s", "NX", "MEMBERS", "1", "b"}},
		{{"ZMOVE", "ls", "ld", "MAX", "COUNT", "3"}, {"ZMOVEMEMBER", "ld", "ls", "MEMBERS", "3", "m299", "m298", "m297"}},
		{{"BITRANGEINTARRAY", "bits", "0", "-1"}, {"BITRANGEINTARRAY", "bits", "3", "90", "BIT", "ZEROS", "LIMIT", "20"}},
		{{"XNACK", "st", "g", "FAIL", "IDS", "1", "1-0"}},
	} {
		pings := make([][]any, len(cmds))
		for i := range pings {
			pings[i] = []any{"PING"}
		}
		var a, b float64
		for range 3 {
			if b, a = c.allocsPerRound(t, 200, pings...), c.allocsPerRound(t, 200, cmds...); a <= b {
				break
			}
		}
		if a > b {
			t.Errorf("%q allocates %v times per round, as many PINGs %v", cmds, a, b)
		}
	}
}

// TestZMoveCrossSlot: in cluster mode the two keys of ZMOVE, BZMOVE and
// ZMOVEMEMBER must share a slot (the pages' hash tag advice), as LMOVE's.
func TestZMoveCrossSlot(t *testing.T) {
	skipOnRedisTarget(t)
	addr, stop, err := difftest.StartKeyhive(clusterDirectives(t)...)
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(stop)
	c := dial(t, addr)
	expect := func(want string, args ...any) {
		t.Helper()
		r, err := c.Do(args...)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(r.Raw); got != want {
			t.Errorf("%v: %q, want %q", args, got, want)
		}
	}
	expect("+OK\r\n", "CLUSTER", "ADDSLOTSRANGE", 0, 16383)
	waitUntil(t, "cluster_state:ok", func() bool { return strings.Contains(inlineText(addr, "CLUSTER INFO"), "cluster_state:ok") })
	crossSlot := "-CROSSSLOT Keys in request don't hash to the same slot\r\n"
	expect(crossSlot, "ZMOVE", "bookmarks:{user:42}", "batch:{user:7}", "MIN")
	expect(crossSlot, "BZMOVE", "a", "b", "MIN", "0")
	expect(crossSlot, "ZMOVEMEMBER", "a", "b", "MEMBERS", "1", "m")
	expect(":1\r\n", "ZADD", "bookmarks:{user:42}", 1, "x")
	expect("*1\r\n*2\r\n$1\r\nx\r\n$1\r\n1\r\n", "ZMOVE", "bookmarks:{user:42}", "batch:{user:42}:001", "MIN")
	expect("*1\r\n$1\r\nx\r\n", "ZMOVEMEMBER", "batch:{user:42}:001", "bookmarks:{user:42}", "MEMBERS", "1", "x")
}
