package server_test

// Differential tests of the non-blocking list commands against redis-server.

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

func TestListPushPop(t *testing.T) {
	p := difftest.Start(t)
	p.Do("LPUSH", "l", "a", "b", "c")
	p.Do("RPUSH", "l", "x", "y")
	p.Do("LRANGE", "l", "0", "-1")
	p.Do("LPUSHX", "l", "p")
	p.Do("RPUSHX", "l", "q", "r")
	p.Do("LPUSHX", "nokey", "p")
	p.Do("RPUSHX", "nokey", "p")
	p.Do("EXISTS", "nokey")
	p.Do("LPUSH", "l")
	p.Do("LPUSHX", "l")
	p.Do("LLEN", "l")
	p.Do("LLEN", "nokey")
	p.Do("TYPE", "l")
	p.Do("OBJECT", "ENCODING", "l")
	p.Do("LPOP", "l")
	p.Do("RPOP", "l")
	p.Do("LPOP", "l", "2")
	p.Do("RPOP", "l", "1")
	p.Do("LPOP", "l", "0")
	p.Do("RPOP", "l", "0")
	p.Do("LPOP", "l", "-1")
	p.Do("LPOP", "l", "x")
	p.Do("LPOP", "l", "1.5")
	p.Do("LPOP", "l", "1", "2")
	p.Do("RPOP", "l", "9223372036854775807")
	p.Do("EXISTS", "l")
	p.Do("LPOP", "l")
	p.Do("RPOP", "l")
	p.Do("LPOP", "l", "3")
	p.Do("RPOP", "l", "0")
	p.Do("LPOP", "l", "-1")
	p.Do("RPUSH", "one", "v")
	p.Do("RPOP", "one")
	p.Do("EXISTS", "one")
	p.Do("RPUSH", "bin", "\x00\xff", "", "a\r\nb", strings.Repeat("z", 300))
	p.Do("LRANGE", "bin", "0", "-1")
	p.Do("RPOP", "bin", "2")
	p.Do("LPOP", "bin")
	p.Do("LPOP", "bin")
	p.Do("EXISTS", "bin")
	p.Do("RPUSH", "t", "a", "b")
	p.Do("EXPIRE", "t", "100")
	p.Do("LPOP", "t")
	p.Do("TTL", "t")
	p.Do("COPY", "t", "t2")
	p.Do("RPUSH", "t2", "c")
	p.Do("LRANGE", "t", "0", "-1")
	p.Do("LRANGE", "t2", "0", "-1")
	p.Proto(3)
	p.Do("LPOP", "nokey")
	p.Do("LPOP", "nokey", "2")
	p.Do("LPOP", "nokey", "0")
	p.Do("LPOP", "t2", "5")
	p.Do("LRANGE", "nokey", "0", "-1")
}

func TestListWrongType(t *testing.T) {
	p := difftest.Start(t)
	p.Do("SET", "s", "x")
	p.Do("RPUSH", "l", "a")
	for _, c := range [][]any{
		{"LPUSH", "s", "a"}, {"RPUSH", "s", "a"}, {"LPUSHX", "s", "a"}, {"RPUSHX", "s", "a"},
		{"LPOP", "s"}, {"RPOP", "s", "2"}, {"LPOP", "s", "0"}, {"LPOP", "s", "x"}, {"LLEN", "s"},
		{"LINDEX", "s", "0"}, {"LINDEX", "s", "x"}, {"LINSERT", "s", "BEFORE", "a", "b"},
		{"LINSERT", "s", "x", "a", "b"}, {"LRANGE", "s", "0", "-1"}, {"LRANGE", "s", "x", "1"},
		{"LREM", "s", "0", "a"}, {"LREM", "s", "x", "a"}, {"LSET", "s", "0", "a"}, {"LSET", "s", "x", "a"},
		{"LTRIM", "s", "0", "1"}, {"LTRIM", "s", "x", "1"}, {"LPOS", "s", "a"}, {"LPOS", "s", "a", "RANK", "0"},
		{"LMOVE", "s", "l", "LEFT", "RIGHT"}, {"LMOVE", "l", "s", "LEFT", "RIGHT"},
		{"LMOVE", "nokey", "s", "LEFT", "RIGHT"}, {"RPOPLPUSH", "s", "l"}, {"RPOPLPUSH", "l", "s"},
		{"LMPOP", "2", "s", "l", "LEFT"}, {"LMPOP", "2", "nokey", "s", "LEFT"}, {"LMPOP", "2", "l", "s", "LEFT"},
	} {
		p.Do(c...)
	}
	p.Do("LRANGE", "l", "0", "-1")
	p.Do("GET", "l")
	p.Do("HSET", "l", "a", "b")
}

func TestListIndexRange(t *testing.T) {
	// 7.4.1 sets the last element for LSET at an index near 2^63 (an overflow), a bug.
	p := difftest.Start70(t)
	p.Do("RPUSH", "l", "a", "b", "c", "d", "e")
	for _, i := range []string{"0", "4", "5", "-1", "-5", "-6", "9223372036854775807", "-9223372036854775808", "x", "1.0", ""} {
		p.Do("LINDEX", "l", i)
		p.Do("LINDEX", "nokey", i)
	}
	ranges := [][2]string{
		{"0", "-1"}, {"1", "2"}, {"-2", "-1"}, {"-100", "100"}, {"3", "1"}, {"5", "10"}, {"4", "4"},
		{"-9223372036854775808", "9223372036854775807"}, {"9223372036854775807", "-9223372036854775808"},
		{"0", "-6"}, {"-6", "0"}, {"x", "1"}, {"1", "y"},
	}
	for _, r := range ranges {
		p.Do("LRANGE", "l", r[0], r[1])
		p.Do("LRANGE", "nokey", r[0], r[1])
	}
	for _, r := range ranges {
		p.Do("DEL", "t")
		p.Do("RPUSH", "t", "a", "b", "c", "d", "e")
		p.Do("LTRIM", "t", r[0], r[1])
		p.Do("LRANGE", "t", "0", "-1")
		p.Do("EXISTS", "t")
	}
	p.Do("LTRIM", "nokey", "0", "1")
	p.Do("LTRIM", "nokey", "x", "1")
	for _, i := range []string{"0", "-1", "4", "5", "-6", "x", "9223372036854775807"} {
		p.Do("LSET", "l", i, "new"+i)
		p.Do("LSET", "nokey", i, "v")
	}
	p.Do("LRANGE", "l", "0", "-1")
	p.Do("LINSERT", "l", "BEFORE", "c", "x")
	p.Do("LINSERT", "l", "after", "c", "y")
	p.Do("LINSERT", "l", "AFTER", "new-1", "z")
	p.Do("LINSERT", "l", "before", "new0", "w")
	p.Do("LINSERT", "l", "BEFORE", "zz", "x")
	p.Do("LINSERT", "l", "MIDDLE", "c", "x")
	p.Do("LINSERT", "nokey", "BEFORE", "c", "x")
	p.Do("LINSERT", "nokey", "bad", "c", "x")
	p.Do("EXISTS", "nokey")
	p.Do("LRANGE", "l", "0", "-1")
}

func TestListRemPos(t *testing.T) {
	p := difftest.Start74(t)
	fill := func() {
		p.Do("DEL", "l")
		p.Do("RPUSH", "l", "a", "b", "a", "c", "a", "b", "a")
	}
	for _, c := range []string{"0", "1", "2", "-1", "-2", "100", "-100", "9223372036854775807", "-9223372036854775808"} {
		fill()
		p.Do("LREM", "l", c, "a")
		p.Do("LRANGE", "l", "0", "-1")
		p.Do("LREM", "l", c, "zz")
	}
	p.Do("LREM", "l", "x", "a")
	p.Do("LREM", "nokey", "0", "a")
	p.Do("LREM", "nokey", "x", "a")
	p.Do("DEL", "l")
	p.Do("RPUSH", "l", "a", "a")
	p.Do("LREM", "l", "0", "a")
	p.Do("EXISTS", "l")
	fill()
	for _, opts := range [][]any{
		{}, {"RANK", "1"}, {"RANK", "2"}, {"RANK", "4"}, {"RANK", "5"}, {"RANK", "-1"}, {"RANK", "-3"},
		{"RANK", "0"}, {"RANK", "x"}, {"RANK", "-9223372036854775808"}, {"RANK", "9223372036854775807"},
		{"RANK", "-9223372036854775807"}, {"COUNT", "0"}, {"COUNT", "2"}, {"COUNT", "10"}, {"COUNT", "-1"},
		{"COUNT", "x"}, {"MAXLEN", "3"}, {"MAXLEN", "0"}, {"MAXLEN", "-1"}, {"MAXLEN", "x"},
		{"RANK", "-2", "COUNT", "0"}, {"RANK", "2", "COUNT", "2", "MAXLEN", "5"},
		{"RANK", "-1", "MAXLEN", "2"}, {"RANK", "-1", "MAXLEN", "2", "COUNT", "0"}, {"rank", "1", "count", "1"},
		{"RANK"}, {"COUNT"}, {"BOGUS", "1"}, {"COUNT", "1", "RANK", "1", "MAXLEN"},
	} {
		p.Do(append([]any{"LPOS", "l", "a"}, opts...)...)
		p.Do(append([]any{"LPOS", "l", "zz"}, opts...)...)
		p.Do(append([]any{"LPOS", "nokey", "a"}, opts...)...)
	}
	p.Proto(3)
	p.Do("LPOS", "l", "zz")
	p.Do("LPOS", "nokey", "zz")
	p.Do("LPOS", "l", "a", "COUNT", "0")
}

func TestListMove(t *testing.T) {
	p := difftest.Start(t)
	p.Do("RPUSH", "a", "1", "2", "3")
	for _, ends := range [][2]string{{"LEFT", "LEFT"}, {"LEFT", "RIGHT"}, {"right", "left"}, {"RIGHT", "RIGHT"}} {
		p.Do("LMOVE", "a", "b", ends[0], ends[1])
		p.Do("LRANGE", "b", "0", "-1")
		p.Do("LMOVE", "a", "a", ends[0], ends[1])
		p.Do("LRANGE", "a", "0", "-1")
	}
	p.Do("LMOVE", "a", "b", "UP", "LEFT")
	p.Do("LMOVE", "a", "b", "LEFT", "DOWN")
	p.Do("LMOVE", "nokey", "b", "UP", "LEFT")
	p.Do("LMOVE", "nokey", "b", "LEFT", "LEFT")
	p.Do("EXISTS", "a")
	p.Do("LRANGE", "b", "0", "-1")
	p.Do("RPOPLPUSH", "b", "c")
	p.Do("RPOPLPUSH", "b", "b")
	p.Do("RPOPLPUSH", "nokey", "c")
	p.Do("LRANGE", "b", "0", "-1")
	p.Do("LRANGE", "c", "0", "-1")
	p.Do("RPUSH", "single", "x")
	p.Do("LMOVE", "single", "single", "LEFT", "RIGHT")
	p.Do("LRANGE", "single", "0", "-1")
	p.Do("RPOPLPUSH", "single", "other")
	p.Do("EXISTS", "single")
	p.Do("RPUSH", "big", strings.Repeat("v", 1000))
	p.Do("LMOVE", "big", "other", "RIGHT", "LEFT")
	p.Do("LRANGE", "other", "0", "-1")
	p.Proto(3)
	p.Do("LMOVE", "nokey", "b", "LEFT", "LEFT")
	p.Do("RPOPLPUSH", "nokey", "c")
}

func TestListMPop(t *testing.T) {
	p := difftest.Start(t)
	p.Do("RPUSH", "a", "1", "2", "3")
	p.Do("RPUSH", "b", "x", "y")
	p.Do("LMPOP", "2", "nokey", "a", "LEFT")
	p.Do("LMPOP", "2", "nokey", "a", "RIGHT", "COUNT", "1")
	p.Do("LMPOP", "3", "nokey", "a", "b", "left", "count", "10")
	p.Do("LMPOP", "2", "a", "b", "RIGHT", "COUNT", "1")
	p.Do("LMPOP", "2", "a", "b", "RIGHT", "COUNT", "5")
	p.Do("EXISTS", "a", "b")
	p.Do("LMPOP", "2", "a", "b", "RIGHT")
	p.Do("LMPOP", "1", "a", "LEFT", "COUNT", "0")
	p.Do("LMPOP", "1", "a", "LEFT", "COUNT", "-1")
	p.Do("LMPOP", "1", "a", "LEFT", "COUNT", "x")
	p.Do("LMPOP", "1", "a", "LEFT", "COUNT", "1", "COUNT", "2")
	p.Do("LMPOP", "1", "a", "LEFT", "COUNT")
	p.Do("LMPOP", "1", "a", "LEFT", "BOGUS")
	p.Do("LMPOP", "1", "a", "MIDDLE")
	p.Do("LMPOP", "0", "a", "LEFT")
	p.Do("LMPOP", "-1", "a", "LEFT")
	p.Do("LMPOP", "x", "a", "LEFT")
	p.Do("LMPOP", "2", "a", "LEFT")
	p.Do("LMPOP", "3", "a", "LEFT")
	p.Do("LMPOP", "1", "a")
	p.Do("LMPOP", "1")
	p.Do("RPUSH", "c", "1", "2", "3")
	p.Do("LMPOP", "1", "c", "LEFT", "COUNT", "9223372036854775807")
	p.Proto(3)
	p.Do("RPUSH", "c", "1", "2", "3")
	p.Do("LMPOP", "1", "nokey", "LEFT")
	p.Do("LMPOP", "1", "c", "LEFT", "COUNT", "2")
	p.Do("LMPOP", "1", "c", "RIGHT")
}

// TestListEncoding: Redis 7.0 reports every list as quicklist, whatever its
// size; Keyhive keeps small lists inline but reports the same.
func TestListEncoding(t *testing.T) {
	p := difftest.Start(t)
	p.Do("RPUSH", "l", "a")
	p.Do("OBJECT", "ENCODING", "l")
	for i := 0; i < 2000; i++ {
		p.Do("RPUSH", "l", "element-"+strconv.Itoa(i))
	}
	p.Do("OBJECT", "ENCODING", "l")
	p.Do("LLEN", "l")
	p.Do("LINDEX", "l", "1000")
	p.Do("LRANGE", "l", "990", "1010")
	p.Do("COPY", "l", "lc")
	p.Do("RPUSH", "lc", "x")
	p.Do("LSET", "lc", "500", "y")
	p.Do("LLEN", "l")
	p.Do("LRANGE", "l", "498", "502")
	p.Do("LRANGE", "lc", "498", "502")
	p.Do("RENAME", "lc", "lr")
	p.Do("LRANGE", "lr", "-2", "-1")
	p.Do("LPOS", "lr", "element-1999", "RANK", "-1")
	p.Do("LTRIM", "l", "0", "2")
	p.Do("OBJECT", "ENCODING", "l")
	p.Do("LRANGE", "l", "0", "-1")
	p.Do("RPUSH", "huge", strings.Repeat("h", 20000))
	p.Do("LPUSH", "huge", "a", strings.Repeat("g", 9000))
	p.Do("OBJECT", "ENCODING", "huge")
	p.Do("LRANGE", "huge", "0", "-1")
	p.Do("LSET", "huge", "1", "small")
	p.Do("LRANGE", "huge", "0", "-1")
	p.Do("RPOP", "huge", "2")
	p.Do("OBJECT", "ENCODING", "huge")
	p.Do("LRANGE", "huge", "0", "-1")
}

// TestListLarge drives long lists through the large form with a small fill
// limit, checking against Redis after random operations.
func TestListLarge(t *testing.T) {
	for _, fill := range []string{"4", "-1"} {
		t.Run("fill"+fill, func(t *testing.T) {
			p := difftest.StartIsolated(t, "--list-max-listpack-size", fill)
			r := rand.New(rand.NewPCG(uint64(len(fill)), 7))
			val := func() string {
				if r.IntN(40) == 0 {
					return strings.Repeat("x", 100+r.IntN(2000))
				}
				return "v" + strconv.Itoa(r.IntN(20))
			}
			for i := 0; i < 300; i++ {
				p.Do("RPUSH", "l", val(), val())
				p.Do("LPUSH", "l", val())
			}
			p.Do("OBJECT", "ENCODING", "l")
			for step := 0; step < 600; step++ {
				n := 900
				idx := strconv.Itoa(r.IntN(2*n) - n)
				switch r.IntN(12) {
				case 0:
					p.Do("LPUSH", "l", val(), val())
				case 1:
					p.Do("RPUSH", "l", val())
				case 2:
					p.Do("LPOP", "l", strconv.Itoa(r.IntN(5)))
				case 3:
					p.Do("RPOP", "l")
				case 4:
					p.Do("LINSERT", "l", []string{"BEFORE", "AFTER"}[r.IntN(2)], val(), val())
				case 5:
					p.Do("LSET", "l", idx, val())
				case 6:
					p.Do("LINDEX", "l", idx)
				case 7:
					p.Do("LREM", "l", strconv.Itoa(r.IntN(7)-3), val())
				case 8:
					p.Do("LPOS", "l", val(), "RANK", strconv.Itoa(r.IntN(5)-2|1), "COUNT", strconv.Itoa(r.IntN(4)), "MAXLEN", strconv.Itoa(r.IntN(500)))
				case 9:
					p.Do("LRANGE", "l", idx, strconv.Itoa(r.IntN(2*n)-n))
				case 10:
					if r.IntN(10) == 0 {
						p.Do("LTRIM", "l", strconv.Itoa(r.IntN(20)), strconv.Itoa(-1-r.IntN(20)))
					}
					p.Do("LMOVE", "l", "l", []string{"LEFT", "RIGHT"}[r.IntN(2)], []string{"LEFT", "RIGHT"}[r.IntN(2)])
				case 11:
					p.Do("LMOVE", "l", "m", []string{"LEFT", "RIGHT"}[r.IntN(2)], "LEFT")
					p.Do("LMPOP", "2", "m", "l", "RIGHT", "COUNT", "3")
				}
				if step%50 == 0 {
					p.Do("LRANGE", "l", "0", "-1")
					p.Do("LLEN", "l")
				}
			}
			p.Do("LRANGE", "l", "0", "-1")
			p.Do("LRANGE", "m", "0", "-1")
			p.Do("LTRIM", "l", "5", "10")
			p.Do("LRANGE", "l", "0", "-1")
			p.Do("LTRIM", "l", "1", "0")
			p.Do("EXISTS", "l")
		})
	}
}

// TestListPropagation checks what the list writes propagate, on Keyhive and
// on redis-server alike (see TestPropagation).
func TestListPropagation(t *testing.T) {
	servers := []*propServer{startKeyhiveProp(t)}
	if r := startRedisAOF(t); r != nil {
		servers = append(servers, r)
	}
	for _, s := range servers {
		s.collect()
	}
	steps := []propStep{
		w("RPUSH l a b c d e", "RPUSH l a b c d e"),
		w("LPUSHX nokey a"),
		w("LPOP l 0"),
		w("LPOP l 2", "LPOP l 2"),
		w("RPOP nokey 2"),
		w("LMOVE l m RIGHT LEFT", "LMOVE l m RIGHT LEFT"),
		w("RPOPLPUSH l m", "RPOPLPUSH l m"),
		w("LMOVE nokey m LEFT LEFT"),
		w("LMPOP 2 nokey m LEFT COUNT 10", "LPOP m 2"),
		w("LMPOP 1 nokey RIGHT"),
		w("RPUSH l x y", "RPUSH l x y"),
		w("LMPOP 1 l RIGHT", "RPOP l 1"),
		w("LTRIM l 0 -1"),
		w("LTRIM l 1 -1", "LTRIM l 1 -1"),
		w("LREM l 0 zz"),
		w("LINSERT l BEFORE zz a"),
		w("LSET l 0 q", "LSET l 0 q"),
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

// TestLMoveM: LMOVEM (Redis 8.10), as https://redis.io/docs/latest/commands/lmovem/
// documents it (its examples first): the moved elements in destination
// order; EXACTLY moves all or nothing (nil); OBO pushes one by one, BULK as
// one batch in source order.
func TestLMoveM(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.Start(t)
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		nullArray := "*-1\r\n"
		if proto == 3 {
			nullArray = "_\r\n"
		}
		docCase(t, p, ":4\r\n", "RPUSH", "mylist", "1", "2", "3", "4")
		docCase(t, p, "*2\r\n$1\r\n2\r\n$1\r\n1\r\n", "LMOVEM", "mylist", "myotherlist", "LEFT", "LEFT", "COUNT", "2", "OBO")
		docCase(t, p, "*2\r\n$1\r\n3\r\n$1\r\n4\r\n", "LRANGE", "mylist", "0", "-1")
		docCase(t, p, "*2\r\n$1\r\n2\r\n$1\r\n1\r\n", "LRANGE", "myotherlist", "0", "-1")
		docCase(t, p, nullArray, "LMOVEM", "mylist", "myotherlist", "LEFT", "LEFT", "EXACTLY", "5", "BULK")
		docCase(t, p, ":3\r\n", "RPUSH", "somelist", "a", "b", "c")
		docCase(t, p, "*2\r\n$1\r\nb\r\n$1\r\na\r\n", "LMOVEM", "somelist", "somelist", "LEFT", "LEFT", "EXACTLY", "2", "OBO")
		docCase(t, p, "*3\r\n$1\r\nb\r\n$1\r\na\r\n$1\r\nc\r\n", "LRANGE", "somelist", "0", "-1")
		// BULK on one key changes nothing; RIGHT to LEFT rotates.
		docCase(t, p, "*2\r\n$1\r\nb\r\n$1\r\na\r\n", "LMOVEM", "somelist", "somelist", "LEFT", "LEFT", "COUNT", "2", "BULK")
		docCase(t, p, "*3\r\n$1\r\nb\r\n$1\r\na\r\n$1\r\nc\r\n", "LRANGE", "somelist", "0", "-1")
		docCase(t, p, "*2\r\n$1\r\na\r\n$1\r\nc\r\n", "LMOVEM", "somelist", "somelist", "RIGHT", "LEFT", "COUNT", "2", "BULK")
		docCase(t, p, "*3\r\n$1\r\na\r\n$1\r\nc\r\n$1\r\nb\r\n", "LRANGE", "somelist", "0", "-1")
		// From the tail: OBO onto the tail keeps pop order, BULK source order.
		p.Keyhive().Do("DEL", "s", "d")
		p.Keyhive().Do("RPUSH", "s", "1", "2", "3", "4", "5")
		p.Keyhive().Do("RPUSH", "d", "x")
		docCase(t, p, "*2\r\n$1\r\n5\r\n$1\r\n4\r\n", "LMOVEM", "s", "d", "RIGHT", "RIGHT", "COUNT", "2", "OBO")
		docCase(t, p, "*2\r\n$1\r\n2\r\n$1\r\n3\r\n", "LMOVEM", "s", "d", "RIGHT", "LEFT", "EXACTLY", "2", "BULK")
		docCase(t, p, "*5\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\nx\r\n$1\r\n5\r\n$1\r\n4\r\n", "LRANGE", "d", "0", "-1")
		// COUNT beyond the length moves all and deletes the source.
		docCase(t, p, "*1\r\n$1\r\n1\r\n", "LMOVEM", "s", "d", "LEFT", "RIGHT", "COUNT", "10", "BULK")
		docCase(t, p, ":0\r\n", "EXISTS", "s")
		// Without the block: one element, as an array. A missing source
		// moves nothing: null, with the block or without, as go-redis
		// v9.22.0 ("Empty source -> nil reply"), ioredis ("returns null when
		// the source is missing") and node-redis expect of 8.10.
		docCase(t, p, "*1\r\n$1\r\n2\r\n", "LMOVEM", "d", "d2", "LEFT", "RIGHT")
		docCase(t, p, nullArray, "LMOVEM", "nokey", "d", "LEFT", "RIGHT")
		docCase(t, p, nullArray, "LMOVEM", "nokey", "d", "LEFT", "RIGHT", "COUNT", "3", "OBO")
		docCase(t, p, nullArray, "LMOVEM", "nokey", "d", "LEFT", "RIGHT", "COUNT", "1", "BULK")
		docCase(t, p, nullArray, "LMOVEM", "nokey", "d", "LEFT", "RIGHT", "EXACTLY", "1", "OBO")
		p.Keyhive().Do("SET", "str", "v")
		docCase(t, p, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "LMOVEM", "str", "d", "LEFT", "RIGHT")
		docCase(t, p, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "LMOVEM", "d", "str", "LEFT", "RIGHT")
		for _, bad := range [][]any{
			{"LMOVEM", "d", "e", "UP", "LEFT"}, {"LMOVEM", "d", "e", "LEFT", "LEFT", "COUNT", "2"},
			{"LMOVEM", "d", "e", "LEFT", "LEFT", "COUNT", "2", "ALL"}, {"LMOVEM", "d", "e", "LEFT", "LEFT", "MANY", "2", "OBO"},
			{"LMOVEM", "d", "e", "LEFT", "LEFT", "COUNT", "2", "OBO", "x"},
		} {
			docCase(t, p, "-ERR syntax error\r\n", bad...)
		}
		docCase(t, p, "-ERR count should be greater than 0\r\n", "LMOVEM", "d", "e", "LEFT", "LEFT", "COUNT", "0", "OBO")
		docCase(t, p, "-ERR count should be greater than 0\r\n", "LMOVEM", "d", "e", "LEFT", "LEFT", "EXACTLY", "x", "BULK")
		p.Keyhive().Do("FLUSHALL")
	}
	docCase(t, p, "*2\r\n$1\r\na\r\n$1\r\nb\r\n", "COMMAND", "GETKEYS", "LMOVEM", "a", "b", "LEFT", "RIGHT", "COUNT", "1", "OBO")
}

// TestBLMoveM: BLMOVEM (Redis 8.10), as https://redis.io/docs/latest/commands/blmovem/
// documents it: served at once when the source holds enough, else blocked
// while it is empty (COUNT) or shorter than n (EXACTLY); inside MULTI or a
// script it does not block and answers nil.
func TestBLMoveM(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.Start(t)
	k := p.Keyhive()
	k.Do("RPUSH", "src", "a", "b", "c")
	docCase(t, p, "*2\r\n$1\r\na\r\n$1\r\nb\r\n", "BLMOVEM", "src", "dst", "LEFT", "RIGHT", "0", "EXACTLY", "2", "BULK")
	docCase(t, p, "*1\r\n$1\r\nc\r\n", "BLMOVEM", "src", "dst", "LEFT", "RIGHT", "0", "COUNT", "5", "BULK")
	docCase(t, p, "*-1\r\n", "BLMOVEM", "src", "dst", "LEFT", "RIGHT", "0.05")
	// EXACTLY 3 waits until the source holds 3.
	k.Send("BLMOVEM", "src", "dst", "RIGHT", "LEFT", "0", "EXACTLY", "3", "OBO")
	q := p.NewConn().Keyhive()
	q.Do("RPUSH", "src", "1", "2")
	q.Do("RPUSH", "src", "3")
	if got := string(k.Read().Raw); got != "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n" {
		t.Errorf("BLMOVEM EXACTLY 3 served %q", got)
	}
	docCase(t, p, "*6\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n", "LRANGE", "dst", "0", "-1")
	k.Do("MULTI")
	k.Do("BLMOVEM", "src", "dst", "LEFT", "LEFT", "0")
	k.Do("BLMOVEM", "dst", "src", "LEFT", "LEFT", "0", "EXACTLY", "7", "OBO")
	k.Do("LMOVEM", "dst", "src", "LEFT", "LEFT", "EXACTLY", "6", "OBO")
	docCase(t, p, "*3\r\n*-1\r\n*-1\r\n*6\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n$1\r\n3\r\n$1\r\n2\r\n$1\r\n1\r\n", "EXEC")
	docCase(t, p, "$-1\r\n", "EVAL", "return redis.call('BLMOVEM', KEYS[1], KEYS[2], 'LEFT', 'LEFT', 0)", "2", "nokey", "dst") // nil: Lua false
	docCase(t, p, "*1\r\n$1\r\nc\r\n", "EVAL", "return redis.call('BLMOVEM', KEYS[1], KEYS[2], 'LEFT', 'LEFT', 0)", "2", "src", "dst")
	docCase(t, p, "-ERR timeout is negative\r\n", "BLMOVEM", "src", "dst", "LEFT", "LEFT", "-1")
}
