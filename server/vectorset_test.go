package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/persistence"
)

// Redis 8's vector sets as the vectorset module's documentation gives
// them (its README, the redis.io command pages) and its error texts. No
// Redis 8 server runs here: each expected reply follows from what the
// documentation states. go-redis's own specs run in
// TestGoRedisVectorSetSpecs.

func TestVectorSetCommands(t *testing.T) {
	forProtocols(t, func(t *testing.T, p *difftest.Pair, r replies) {
		c := func(want string, args ...any) { t.Helper(); docCase(t, p, want, args...) }
		// The README's VREM example.
		c(r.b(true), "VADD", "vset", "VALUES", "3", "1", "0", "1", "bar")
		c(r.b(true), "VREM", "vset", "bar")
		c(r.b(false), "VREM", "vset", "bar")
		c(":0\r\n", "EXISTS", "vset") // the last element takes the set with it
		// Three directions: the same, orthogonal, opposite.
		c(r.b(true), "VADD", "s", "VALUES", "2", "1", "0", "a")
		c(r.b(true), "VADD", "s", "FP32", "\x00\x00\x00\x00\x00\x00\x80\x3f", "b", "SETATTR", `{"n": 2}`)
		c(r.b(true), "VADD", "s", "VALUES", "2", "-1", "0", "c", "CAS", "Q8", "EF", "10", "M", "16")
		c(r.b(false), "VADD", "s", "VALUES", "2", "-1", "0", "c", "SETATTR", `{"n": 3}`)
		c(r.i(3), "VCARD", "s")
		c(r.i(2), "VDIM", "s")
		c(r.b(true), "VISMEMBER", "s", "a")
		c(r.b(false), "VISMEMBER", "s", "z")
		c(r.b(false), "VISMEMBER", "nosuch", "a")
		// VSIM: similarity 1 for the same direction, 0.5 orthogonal, 0
		// opposite; RESP3 pairs each element with its score, or with
		// [score, attributes] when both are asked.
		all := func(items ...string) string {
			if r.proto == 3 {
				return "%" + strconv.Itoa(len(items)/2) + "\r\n" + strings.Join(items, "")
			}
			return r.arr(items...)
		}
		c(r.arr(r.bulk("a"), r.bulk("b"), r.bulk("c")), "VSIM", "s", "VALUES", "2", "1", "0")
		c(all(r.bulk("a"), r.d("1"), r.bulk("b"), r.d("0.5"), r.bulk("c"), r.d("0")), "VSIM", "s", "VALUES", "2", "1", "0", "WITHSCORES")
		c(all(r.bulk("a"), r.d("1"), r.bulk("b"), r.d("0.5")), "VSIM", "s", "ELE", "a", "WITHSCORES", "EPSILON", "0.5")
		c(r.arr(r.bulk("a")), "VSIM", "s", "ELE", "a", "COUNT", "1", "EF", "50", "NOTHREAD", "TRUTH")
		pair := func(score, attr string) string {
			if r.proto == 3 {
				return r.arr(r.d(score), attr)
			}
			return r.d(score) + attr
		}
		both := "*6\r\n"
		if r.proto == 3 {
			both = "%2\r\n"
		}
		c(both+r.bulk("a")+pair("1", r.null())+r.bulk("b")+pair("0.5", r.bulk(`{"n": 2}`)),
			"VSIM", "s", "VALUES", "2", "1", "0", "WITHSCORES", "WITHATTRIBS", "COUNT", "2")
		c(all(r.bulk("b"), r.bulk(`{"n": 2}`), r.bulk("c"), r.bulk(`{"n": 3}`)), "VSIM", "s", "VALUES", "2", "1", "0", "WITHATTRIBS", "FILTER", ".n >= 2", "FILTER-EF", "10")
		c(r.arr(r.bulk("c")), "VSIM", "s", "VALUES", "2", "1", "0", "FILTER", `.n == 3 and "" in ""`)
		c(r.arr(), "VSIM", "nosuch", "VALUES", "2", "1", "0", "WITHSCORES")
		c(r.err("ERR element not found in set"), "VSIM", "s", "ELE", "z")
		c(r.err("ERR invalid vector specification"), "VSIM", "s", "FOO", "1")
		c(r.err("ERR Vector dimension mismatch - got 3 but set has 2"), "VSIM", "s", "VALUES", "3", "1", "0", "0")
		c(r.err("ERR syntax error in FILTER expression near: .n >"), "VSIM", "s", "VALUES", "2", "1", "0", "FILTER", ".n >")
		c(r.err("ERR syntax error in FILTER expression near: @ 1"), "VSIM", "s", "VALUES", "2", "1", "0", "FILTER", ".n == @ 1")
		c(r.err("ERR syntax error in VSIM command"), "VSIM", "s", "VALUES", "2", "1", "0", "BOGUS")
		c(r.err("ERR invalid COUNT"), "VSIM", "s", "VALUES", "2", "1", "0", "COUNT", "0")
		c(r.err("ERR invalid EPSILON"), "VSIM", "s", "VALUES", "2", "1", "0", "EPSILON", "-1")
		c(r.err("ERR invalid EF"), "VSIM", "s", "VALUES", "2", "1", "0", "EF", "1000001")
		c(r.err("ERR invalid FILTER-EF"), "VSIM", "s", "VALUES", "2", "1", "0", "FILTER-EF", "x")
		// VADD's checks against the set.
		c(r.err("ERR Vector dimension mismatch - got 3 but set has 2"), "VADD", "s", "VALUES", "3", "1", "0", "0", "d")
		c(r.err("ERR asked quantization mismatch with existing vector set"), "VADD", "s", "VALUES", "2", "1", "0", "d", "NOQUANT")
		c(r.err("ERR asked M value mismatch with existing vector set"), "VADD", "s", "VALUES", "2", "1", "0", "d", "M", "32")
		c(r.err("ERR cannot add projection to existing set without projection"), "VADD", "s", "REDUCE", "1", "VALUES", "2", "1", "0", "d")
		c(r.err("ERR invalid EF"), "VADD", "s", "VALUES", "2", "1", "0", "d", "EF", "0")
		c(r.err("ERR invalid M"), "VADD", "s", "VALUES", "2", "1", "0", "d", "M", "3")
		c(r.err("ERR invalid option after element"), "VADD", "s", "VALUES", "2", "1", "0", "d", "FOO")
		c(r.err("ERR invalid option after element"), "VADD", "s", "VALUES", "2", "1", "0", "d", "EF")
		c(r.err("ERR invalid vector specification"), "VADD", "s", "VALUES", "2", "1", "x", "d")
		c(r.err("ERR invalid vector specification"), "VADD", "s", "FP32", "abc", "d")
		c(r.err("ERR invalid vector specification"), "VADD", "s", "REDUCE", "3", "VALUES", "2", "1", "0", "d")
		c(r.err("ERR wrong number of arguments for 'vadd' command"), "VADD", "s", "VALUES", "2", "1", "0")
		// Attributes.
		c(r.null(), "VGETATTR", "s", "a")
		c(r.b(true), "VSETATTR", "s", "a", `{"year": 1950}`)
		c(r.bulk(`{"year": 1950}`), "VGETATTR", "s", "a")
		c(r.b(true), "VSETATTR", "s", "a", "")
		c(r.null(), "VGETATTR", "s", "a")
		c(r.b(false), "VSETATTR", "s", "z", "{}")
		c(r.b(false), "VSETATTR", "nosuch", "z", "{}")
		c(r.null(), "VGETATTR", "nosuch", "z")
		// VEMB: the vector back, de-normalized; RAW: the stored form.
		c(r.b(true), "VADD", "f", "VALUES", "2", "0", "2", "x", "NOQUANT")
		c(r.arr(r.d("0"), r.d("2")), "VEMB", "f", "x")
		c(r.arr("+fp32\r\n", r.bulk("\x00\x00\x00\x00\x00\x00\x80\x3f"), r.d("2")), "VEMB", "f", "x", "RAW")
		c(r.b(true), "VADD", "q", "VALUES", "2", "0", "2", "x")
		c(r.arr("+q8\r\n", r.bulk("\x00\x7f"), r.d("2"), r.d("1")), "VEMB", "q", "x", "RAW")
		c(r.b(true), "VADD", "bin", "VALUES", "2", "-1", "1", "x", "BIN")
		c(r.arr(r.d("-1.4142135381698608"), r.d("1.4142135381698608")), "VEMB", "bin", "x")
		c(r.arr("+bin\r\n", r.bulk("\x02"), r.d("1.4142135381698608")), "VEMB", "bin", "x", "RAW")
		c(r.null(), "VEMB", "f", "nosuch")
		c(r.null(), "VEMB", "nosuch", "x")
		c(r.err("ERR invalid option"), "VEMB", "f", "x", "COOKED")
		// VINFO: a map of the set's parameters (a flat array in RESP2).
		c(r.info("quant-type", "+f32\r\n", "hnsw-m", r.i(16), "vector-dim", r.i(2), "projection-input-dim", r.i(0),
			"size", r.i(1), "max-level", r.i(0), "attributes-count", r.i(0), "vset-uid", vinfoField(p, "f", "vset-uid"),
			"hnsw-max-node-uid", r.i(1)), "VINFO", "f")
		if r.proto == 3 {
			c("_\r\n", "VINFO", "nosuch")
		} else {
			c("*-1\r\n", "VINFO", "nosuch")
		}
		// VLINKS: one level here, holding the two others.
		if got := p.Keyhive().Do("VLINKS", "s", "a"); len(got.Elems) == 0 || len(got.Elems[len(got.Elems)-1].Elems) != 2 {
			t.Errorf("VLINKS s a: %s", got)
		}
		c(r.null(), "VLINKS", "s", "z")
		c(r.err("ERR wrong number of arguments for 'vlinks' command"), "VLINKS", "s", "a", "BOGUS")
		// VRANDMEMBER as SRANDMEMBER.
		c(r.null(), "VRANDMEMBER", "nosuch")
		c(r.arr(), "VRANDMEMBER", "nosuch", "3")
		c(r.arr(), "VRANDMEMBER", "s", "0")
		c(r.err("ERR COUNT value is not an integer"), "VRANDMEMBER", "s", "x")
		if got := p.Keyhive().Do("VRANDMEMBER", "s", "10"); len(got.Elems) != 3 || got.Elems[0].Str == got.Elems[1].Str {
			t.Errorf("VRANDMEMBER s 10: %s", got)
		}
		if got := p.Keyhive().Do("VRANDMEMBER", "s", "-7"); len(got.Elems) != 7 {
			t.Errorf("VRANDMEMBER s -7: %s", got)
		}
		// VRANGE: byte order between [inclusive, (exclusive, - and +.
		c(r.arr(r.bulk("a"), r.bulk("b"), r.bulk("c")), "VRANGE", "s", "-", "+")
		c(r.arr(r.bulk("b"), r.bulk("c")), "VRANGE", "s", "[b", "+")
		c(r.arr(r.bulk("b")), "VRANGE", "s", "(a", "[b")
		c(r.arr(r.bulk("a")), "VRANGE", "s", "-", "+", "1")
		c(r.arr(r.bulk("a"), r.bulk("b"), r.bulk("c")), "VRANGE", "s", "-", "+", "-1")
		c(r.arr(), "VRANGE", "s", "(c", "+")
		c(r.arr(), "VRANGE", "nosuch", "-", "+")
		c(r.err("ERR '-' can only be used as first argument, '+' only as second"), "VRANGE", "s", "+", "-")
		c(r.err("ERR invalid start range format"), "VRANGE", "s", "b", "+")
		c(r.err("ERR invalid end range format"), "VRANGE", "s", "-", "[")
		c(r.err("ERR invalid COUNT value"), "VRANGE", "s", "-", "+", "x")
		// REDUCE: the set keeps the projected dimensions; queries and
		// adds come with the input's.
		c(r.b(true), "VADD", "red", "REDUCE", "2", "VALUES", "4", "1", "2", "3", "4", "e")
		c(r.i(2), "VDIM", "red")
		c(r.b(true), "VADD", "red", "REDUCE", "2", "VALUES", "4", "4", "3", "2", "1", "f")
		c(r.arr(r.bulk("e")), "VSIM", "red", "VALUES", "4", "1", "2", "3", "4", "COUNT", "1")
		c(r.err("ERR Vector dimension mismatch - got 4 but set has 2"), "VADD", "red", "VALUES", "4", "1", "2", "3", "4", "g")
		c(r.err("ERR Input dimension mismatch for projection - got 3 but projection expects 4"), "VADD", "red", "REDUCE", "2", "VALUES", "3", "1", "2", "3", "g")
		c(r.err("ERR Input dimension mismatch for projection - got 3 but projection expects 4"), "VSIM", "red", "VALUES", "3", "1", "2", "3")
		big := []any{"VADD", "huge", "REDUCE", "8193", "FP32", strings.Repeat("\x00\x00\x80\x3f", 8193), "e"}
		c(r.err("ERR REDUCE projection too large"), big...) // Keyhive's text: 8193 x 8193 floats
		c(r.i(0), "EXISTS", "huge")
		// Other types and missing keys.
		c(r.err("ERR key does not exist"), "VDIM", "nosuch")
		c(r.i(0), "VCARD", "nosuch")
		c(r.b(false), "VREM", "nosuch", "a")
		c(r.ok(), "SET", "str", "x")
		for _, args := range [][]any{{"VADD", "str", "VALUES", "1", "1", "a"}, {"VSIM", "str", "VALUES", "1", "1"}, {"VCARD", "str"}, {"VREM", "str", "a"}} {
			c(r.err("WRONGTYPE Operation against a key holding the wrong kind of value"), args...)
		}
	})
}

// vinfoField is one of VINFO's fields as Keyhive replies it (vset-uid
// depends on the sets made before).
func vinfoField(p *difftest.Pair, key, field string) string {
	got := p.Keyhive().Do("VINFO", key)
	for i := 0; i+1 < len(got.Elems); i += 2 {
		if got.Elems[i].Str == field {
			return ":" + strconv.FormatInt(got.Elems[i+1].Int, 10) + "\r\n"
		}
	}
	return ""
}

// Vector sets as keys: type, encoding, SCAN TYPE, DUMP and RESTORE, DEBUG
// RELOAD and DIGEST, COPY, MEMORY USAGE, expiry, MULTI, and generic
// keyspace events named after the command.
func TestVectorSetKeys(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.StartIsolated(t) // it changes notify-keyspace-events
	k := p.Keyhive()
	c := func(want string, args ...any) { t.Helper(); docCase(t, p, want, args...) }
	k.Do("FLUSHALL")
	for i := range 200 {
		args := []any{"VADD", "v", "VALUES", "3", strconv.Itoa(i % 7), strconv.Itoa(i % 11), strconv.Itoa(i % 13), "e" + strconv.Itoa(i)}
		if i%3 == 0 {
			args = append(args, "SETATTR", `{"i": `+strconv.Itoa(i)+`}`)
		}
		k.Do(args...)
	}
	k.Do("VADD", "r", "REDUCE", "2", "VALUES", "3", "1", "2", "3", "x", "BIN")
	for i := 0; i < 200; i += 5 {
		k.Do("VREM", "v", "e"+strconv.Itoa(i))
	}
	for _, key := range []string{"v", "r"} {
		c("+vectorset\r\n", "TYPE", key)
		c("$3\r\nraw\r\n", "OBJECT", "ENCODING", key)
		digest := k.Do("DEBUG", "DIGEST-VALUE", key).Raw
		links := k.Do("VLINKS", key, "e1").Raw
		dump := k.Do("DUMP", key).Str
		c(":1\r\n", "DEL", key)
		c("+OK\r\n", "RESTORE", key, "0", dump)
		if got := k.Do("DEBUG", "DIGEST-VALUE", key).Raw; string(got) != string(digest) {
			t.Errorf("%s: digest %q after RESTORE, was %q", key, got, digest)
		}
		if got := k.Do("VLINKS", key, "e1").Raw; string(got) != string(links) {
			t.Errorf("%s: VLINKS %q after RESTORE, was %q", key, got, links)
		}
	}
	if got := k.Do("SCAN", "0", "TYPE", "vectorset"); len(got.Elems) != 2 || len(got.Elems[1].Elems) != 2 {
		t.Errorf("SCAN 0 TYPE vectorset: %s", got)
	}
	c("-ERR Bad data format\r\n", "RESTORE", "x", "0", badVSetDump())
	if n := k.Do("MEMORY", "USAGE", "v").Int; n < 160*(3+4*33) {
		t.Errorf("MEMORY USAGE v: %d", n)
	}
	c(":1\r\n", "COPY", "v", "w")
	c(r2b(true), "VREM", "w", "e1")
	c(":160\r\n", "VCARD", "v")
	c(":159\r\n", "VCARD", "w")
	digest := k.Do("DEBUG", "DIGEST").Raw
	c("+OK\r\n", "DEBUG", "RELOAD")
	if got := k.Do("DEBUG", "DIGEST").Raw; string(got) != string(digest) {
		t.Errorf("DEBUG RELOAD changed the digest: %q, was %q", got, digest)
	}
	c(":160\r\n", "VCARD", "v")
	// A set with a TTL goes when it passes.
	c(":1\r\n", "PEXPIRE", "w", "50")
	time.Sleep(120 * time.Millisecond)
	c(":0\r\n", "EXISTS", "w")
	c("+OK\r\n", "MULTI")
	c("+QUEUED\r\n", "VADD", "m", "VALUES", "1", "1", "a")
	c("+QUEUED\r\n", "VCARD", "m")
	c("*2\r\n:1\r\n:1\r\n", "EXEC")
	c("$1\r\n1\r\n", "EVAL", "return tostring(redis.call('VCARD', KEYS[1]))", "1", "m")
	c("+OK\r\n", "CONFIG", "SET", "notify-keyspace-events", "KEA")
	expect := expectEvents(t, p, k)
	expect([]string{"__keyevent@0__:vadd n"}, "VADD", "n", "VALUES", "1", "1", "a")
	expect([]string{"__keyevent@0__:vsetattr n"}, "VSETATTR", "n", "a", "{}")
	expect(nil, "VSETATTR", "n", "z", "{}")
	expect([]string{"__keyevent@0__:vadd n"}, "VADD", "n", "VALUES", "1", "1", "b")
	expect([]string{"__keyevent@0__:vrem n"}, "VREM", "n", "a")
	expect([]string{"__keyevent@0__:vrem n", "__keyevent@0__:del n"}, "VREM", "n", "b")
	expect(nil, "VREM", "n", "b")
}

func r2b(v bool) string { return replies{2}.b(v) }

// badVSetDump is a DUMP payload with a valid footer holding a vector set
// whose data is cut short, which RESTORE must refuse.
func badVSetDump() string {
	b := []byte{persistence.TypeModule2}
	b = (&persistence.Encoder{}).AppendModuleValue(b, persistence.ModuleID("vectorset", persistence.KeyhiveEncVer), []byte{1, 1, 2, 0})
	return string(persistence.AppendDumpFooter(b))
}

// TestVectorSetPropagation: writes propagate as they are, nothing when
// they changed nothing.
func TestVectorSetPropagation(t *testing.T) {
	s := startKeyhiveProp(t)
	s.collect()
	for _, step := range []propStep{
		w("VADD v VALUES 2 1 0 a", "VADD v VALUES 2 1 0 a"),
		w("VADD v REDUCE 1 VALUES 2 1 0 b"),
		w("VADD v VALUES 2 0 1 a SETATTR {}", "VADD v VALUES 2 0 1 a SETATTR {}"),
		w("VSETATTR v a x", "VSETATTR v a x"),
		w("VSETATTR v z x"),
		w("VSIM v ELE a"),
		w("VREM v z"),
		w("VREM v a", "VREM v a"),
	} {
		t0 := time.Now().UnixMilli()
		reply := s.conn.do(t, step.cmd...)
		t1 := time.Now().UnixMilli()
		if err := matchPropagated(s.collect(), step.want, 0, t0, t1); err != nil {
			t.Errorf("%q (reply %v): %v", step.cmd, reply, err)
		}
	}
}

// TestVectorSetAOF: vector sets survive an AOF rewrite (RESTORE in the
// base without the RDB preamble, the RDB form with it) and the commands
// after it, through a restart: the same data (DEBUG DIGEST) and the same
// graph (VLINKS).
func TestVectorSetAOF(t *testing.T) {
	for _, preamble := range []string{"yes", "no"} {
		t.Run("aof-use-rdb-preamble "+preamble, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			args := []string{"--dir", dir, "--appendonly", "yes", "--enable-debug-command", "yes", "--aof-use-rdb-preamble", preamble}
			srv := startKeyhive(t, args...)
			rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: 2})
			vadd := func(key string, i int, opts ...any) {
				t.Helper()
				args := append([]any{"VADD", key}, opts...)
				args = append(args, "VALUES", 4, i%5, i%7, i%3-1, 1, fmt.Sprint("e", i), "SETATTR", fmt.Sprintf(`{"i": %d}`, i))
				if err := rdb.Do(ctx, args...).Err(); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 100 {
				vadd("q8", i)
				vadd("red", i, "REDUCE", 2)
			}
			rdb.Do(ctx, "VREM", "q8", "e3")
			if err := rdb.Do(ctx, "BGREWRITEAOF").Err(); err != nil {
				t.Fatal(err)
			}
			waitAOFRewrite(t, rdb)
			for i := 100; i < 150; i++ {
				vadd("q8", i)
			}
			digest := rdb.Do(ctx, "DEBUG", "DIGEST").Val()
			links := fmt.Sprint(rdb.Do(ctx, "VLINKS", "q8", "e140", "WITHSCORES").Val())
			rdb.Close()
			srv.Close()
			if preamble == "no" {
				base, _ := filepath.Glob(filepath.Join(dir, "appendonlydir", "*.base.aof"))
				if b, err := os.ReadFile(base[0]); err != nil || !strings.Contains(string(b), "RESTORE\r\n$2\r\nq8\r\n") {
					t.Errorf("the rewritten AOF %s lacks RESTORE q8: %v", base, err)
				}
			}
			srv = startKeyhive(t, args...)
			rdb = redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: 2})
			defer rdb.Close()
			if got := rdb.Do(ctx, "DEBUG", "DIGEST").Val(); got != digest {
				t.Errorf("DEBUG DIGEST after the restart: %v, was %v", got, digest)
			}
			if got := fmt.Sprint(rdb.Do(ctx, "VLINKS", "q8", "e140", "WITHSCORES").Val()); got != links {
				t.Errorf("VLINKS after the restart: %s, was %s", got, links)
			}
		})
	}
}
