package server_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestDebugProtocol compares every DEBUG PROTOCOL type in RESP2 (Redis's
// downgrades) and RESP3 (push: the reply, then the push, as Redis 7.2+).
func TestDebugProtocol(t *testing.T) {
	p := difftest.StartIsolated74(t)
	types := []string{"string", "integer", "double", "bignum", "null", "array", "set", "map",
		"attrib", "push", "verbatim", "true", "false", "STRING", "nosuch", "", "string\x00x"}
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		for _, typ := range types {
			p.Do("DEBUG", "PROTOCOL", typ)
			if typ == "push" && proto == 3 {
				p.Read() // the push that follows the reply
			}
		}
		p.Do("DEBUG", "PROTOCOL")
		p.Do("DEBUG", "PROTOCOL", "string", "extra")
	}
}

// TestDebugErrors compares the arity and argument errors of the DEBUG
// subcommands.
func TestDebugErrors(t *testing.T) {
	p := difftest.StartIsolated(t)
	p.Do("SET", "str", "v")
	p.Do("RPUSH", "list", "a", "b")
	p.Do("HSET", "hash", "f", "v")
	p.Do("ZADD", "zset", "1", "m")
	p.Do("SADD", "set", "1")
	long := strings.Repeat("x", 200)
	for _, args := range [][]any{
		{"DEBUG"}, {"DEBUG", long}, {"DEBUG", "HELP", "x"}, {"DEBUG", "DIGEST", "x"},
		{"DEBUG", "DIGEST-VALUE"}, {"DEBUG", "POPULATE"}, {"DEBUG", "POPULATE", "1", "a", "1", "x"},
		{"DEBUG", "POPULATE", "-1"}, {"DEBUG", "POPULATE", "abc"}, {"DEBUG", "POPULATE", "1", "p", "-1"},
		{"DEBUG", "POPULATE", "1", "p", "x"}, {"DEBUG", "POPULATE", "0"},
		{"DEBUG", "QUICKLIST-PACKED-THRESHOLD"}, {"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "abc"},
		{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "-1"}, {"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "5gb"},
		{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "4294967296"}, {"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "4293918720"},
		{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "4293918721"}, {"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1k"},
		{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1MB"}, {"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0"},
		{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1x"},
		{"DEBUG", "REPLYBUFFER"}, {"DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME"},
		{"DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "never"}, {"DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "RESET"},
		{"DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "100"}, {"DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "x"},
		{"DEBUG", "REPLYBUFFER", "RESIZING", "0"}, {"DEBUG", "REPLYBUFFER", "RESIZING", "1"},
		{"DEBUG", "REPLYBUFFER", "NOSUCH", "1"}, {"DEBUG", "REPLYBUFFER", "RESIZING", "1", "2"},
		{"DEBUG", "SET-DISABLE-DENY-SCRIPTS"}, {"DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0"},
		{"DEBUG", "PAUSE-CRON"}, {"DEBUG", "PAUSE-CRON", "0"}, {"DEBUG", "PAUSE-CRON", "0", "1"},
		{"DEBUG", "CHANGE-REPL-ID"}, {"DEBUG", "CHANGE-REPL-ID", "x"},
		{"DEBUG", "STRINGMATCH-TEST", "x"},
		{"DEBUG", "LOG"}, {"DEBUG", "LOG", "hello"}, {"DEBUG", "LOG", "a", "b"},
		{"DEBUG", "LISTPACK"}, {"DEBUG", "LISTPACK", "nosuch"}, {"DEBUG", "LISTPACK", "str"},
		{"DEBUG", "LISTPACK", "list"}, {"DEBUG", "LISTPACK", "set"}, {"DEBUG", "LISTPACK", "hash"},
		{"DEBUG", "LISTPACK", "zset"}, {"DEBUG", "LISTPACK", "hash", "x"},
		{"DEBUG", "QUICKLIST"}, {"DEBUG", "QUICKLIST", "nosuch"}, {"DEBUG", "QUICKLIST", "str"},
		{"DEBUG", "QUICKLIST", "hash"}, {"DEBUG", "QUICKLIST", "list"}, {"DEBUG", "QUICKLIST", "list", "1"},
		{"DEBUG", "QUICKLIST", "list", "x"}, {"DEBUG", "QUICKLIST", "list", "1", "2"},
		{"DEBUG", "digest\x00x"}, {"DEBUG", "OBJECT"},
	} {
		p.Do(args...)
	}
	// Redis's matcher fuzz test runs for half a minute: Keyhive's alone. Its
	// million matches passed the default 5 s under -race beside a CPU hog.
	p.SetTimeout(2 * time.Minute)
	if r := p.Keyhive().Do("DEBUG", "STRINGMATCH-TEST"); r.Str != "Apparently Redis did not crash: test passed" {
		t.Errorf("DEBUG STRINGMATCH-TEST: %v", r)
	}
}

// TestDebugPopulate compares the keys DEBUG POPULATE creates: names,
// values, sizes, encodings, and existing keys kept.
func TestDebugPopulate(t *testing.T) {
	p := difftest.StartIsolated(t)
	p.Do("SET", "key:3", "mine")
	p.Do("DEBUG", "POPULATE", "10")
	p.Do("DEBUG", "POPULATE", "5", "p")
	p.Do("DEBUG", "POPULATE", "5", "small", "3")
	p.Do("DEBUG", "POPULATE", "3", "big", "100")
	p.Do("DEBUG", "POPULATE", "2", "exact", "7")
	p.Do("DEBUG", "POPULATE", "2", "nul\x00byte")
	p.Do("DEBUG", "POPULATE", "3", strings.Repeat("L", 130))
	p.Do("DEBUG", "POPULATE", "2", "", "0")
	p.Do("DBSIZE")
	keys := p.DoUnordered("KEYS", "*")
	for _, k := range keys.Elems {
		p.Do("GET", k.Str)
		p.Do("OBJECT", "ENCODING", k.Str)
		p.Do("TTL", k.Str)
	}
	p.Do("DEBUG", "DIGEST")
	p.Do("SELECT", "3")
	p.Do("DEBUG", "POPULATE", "1000")
	p.Do("DBSIZE")
	p.Do("DEBUG", "DIGEST")

	// A populated key counts as modified for WATCH; DEBUG runs in MULTI.
	p.Do("FLUSHALL")
	p.Do("WATCH", "key:1")
	p.Do("DEBUG", "POPULATE", "2")
	p.Do("MULTI")
	p.Do("DEBUG", "DIGEST")
	p.Do("DEBUG", "POPULATE", "4")
	p.Do("DEBUG", "DIGEST-VALUE", "key:3")
	p.Do("EXEC")
	p.Do("MULTI")
	p.Do("DEBUG", "POPULATE", "4")
	p.Do("DEBUG", "DIGEST")
	p.Do("EXEC")
}

// TestDebugDigest compares DEBUG DIGEST and DIGEST-VALUE after the same
// commands: every type and encoding, TTLs, several databases, streams with
// consumer groups (which the digest leaves out) and deleted entries.
func TestDebugDigest(t *testing.T) {
	p := difftest.StartIsolated(t)
	p.Do("DEBUG", "DIGEST") // empty: all zeros
	p.Do("DEBUG", "DIGEST-VALUE", "nosuch")
	populateAllTypes(p)
	p.Do("DEBUG", "DIGEST")
	for db := range 3 {
		p.Do("SELECT", strconv.Itoa(db))
		keys := p.DoUnordered("KEYS", "*")
		args := []any{"DEBUG", "DIGEST-VALUE"}
		for _, k := range keys.Elems {
			args = append(args, k.Str)
		}
		p.Do(append(args, "nosuch")...)
	}
	p.Do("SELECT", "0")

	// More shapes: integer strings, scores needing 17 digits, a stream
	// whose entries changed fields, sets across encodings.
	p.Do("SET", "int", "-123")
	p.Do("ZADD", "scores", "0.1", "a", "1e-7", "b", "123456789.123", "c", "-0", "d", "1e22", "e")
	p.Do("XADD", "fields", "1-1", "a", "1")
	p.Do("XADD", "fields", "1-2", "a", "2")
	p.Do("XADD", "fields", "1-3", "b", "3", "c", "")
	p.Do("XGROUP", "CREATE", "fields", "g", "0")
	p.Do("ZADD", "intmembers", "1", "100", "2", "-5", "3", "99999999999", "4", "007")
	p.Do("HSET", "intfields", "1", "2", "-3", "40000000000", "x", "")
	p.Do("RPUSH", "intlist", "1", "-1", "65536", "9223372036854775807", "x")
	p.Do("DEBUG", "DIGEST-VALUE", "int", "scores", "fields", "intmembers", "intfields", "intlist")
	before := p.Do("DEBUG", "DIGEST")
	// A consumer group changes nothing the digest reads.
	p.Do("XGROUP", "CREATE", "fields", "g2", "$")
	if after := p.Do("DEBUG", "DIGEST"); after.Str != before.Str {
		t.Errorf("a consumer group changed the digest")
	}
	// Order matters in lists, not in sets or hashes.
	p.Do("RPUSH", "l1", "a", "b")
	p.Do("RPUSH", "l2", "b", "a")
	p.Do("SADD", "s1", "a", "b")
	p.Do("SADD", "s2", "b", "a")
	p.Do("DEBUG", "DIGEST-VALUE", "l1", "l2", "s1", "s2")
	// An expire counts, not its time.
	p.Do("SET", "e1", "v", "EX", "1000")
	p.Do("SET", "e2", "v", "EX", "2000")
	p.Do("SET", "e3", "v")
	p.Do("DEBUG", "DIGEST-VALUE", "e1", "e2", "e3")
	p.Do("DEBUG", "DIGEST")
	// A key past its time but not yet removed is still in both digests.
	p.Do("DEBUG", "SET-ACTIVE-EXPIRE", "0")
	p.Do("SET", "gone", "v", "PX", "1")
	time.Sleep(20 * time.Millisecond)
	p.Do("DEBUG", "DIGEST-VALUE", "gone")
	p.Do("DEBUG", "DIGEST")
	p.Do("DEBUG", "SET-ACTIVE-EXPIRE", "1")
	p.Do("FLUSHALL")
	p.Do("DEBUG", "DIGEST")
}

// TestDebugDigestEncodings compares digests of each type in its small and
// large encodings, and of one value converted between them.
func TestDebugDigestEncodings(t *testing.T) {
	p := difftest.StartIsolated(t)
	for _, n := range []int{1, 10, 127, 128, 129, 511, 512, 513, 3000} {
		list := []any{"RPUSH", fmt.Sprint("list", n)}
		set := []any{"SADD", fmt.Sprint("intset", n)}
		sset := []any{"SADD", fmt.Sprint("strset", n)}
		zset := []any{"ZADD", fmt.Sprint("zset", n)}
		hash := []any{"HSET", fmt.Sprint("hash", n)}
		for i := range n {
			list = append(list, fmt.Sprint(i*37))
			set = append(set, fmt.Sprint(i*-1001))
			sset = append(sset, fmt.Sprint("m", i))
			zset = append(zset, fmt.Sprint(float64(i)/3), fmt.Sprint("m", i))
			hash = append(hash, fmt.Sprint("f", i), fmt.Sprint(i))
		}
		p.Do(list...)
		p.Do(set...)
		p.Do(sset...)
		p.Do(zset...)
		p.Do(hash...)
		p.Do("DEBUG", "DIGEST-VALUE", fmt.Sprint("list", n), fmt.Sprint("intset", n), fmt.Sprint("strset", n), fmt.Sprint("zset", n), fmt.Sprint("hash", n))
	}
	p.Do("CONFIG", "SET", "stream-node-max-entries", "5")
	for i := 1; i <= 40; i++ {
		p.Do("XADD", "stream", fmt.Sprintf("%d-%d", i, i%3), "f", strconv.Itoa(i), "g", strings.Repeat("v", i))
	}
	p.Do("XDEL", "stream", "3-0", "10-1", "11-2")
	p.Do("XTRIM", "stream", "MINID", "5")
	p.Do("DEBUG", "DIGEST-VALUE", "stream")
	p.Do("DEBUG", "DIGEST")
	p.Do("DEBUG", "RELOAD")
	p.Do("DEBUG", "DIGEST")
}

// TestDebugSwitches checks what PAUSE-CRON and SET-DISABLE-DENY-SCRIPTS
// change.
func TestDebugSwitches(t *testing.T) {
	p := difftest.StartIsolated(t)
	p.Do("EVAL", "return redis.call('debug', 'protocol', 'integer')", "0")
	p.Do("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1")
	p.Do("EVAL", "return redis.call('debug', 'protocol', 'integer')", "0")
	p.Do("EVAL", "return redis.call('debug', 'protocol', 'map')", "0")
	p.Do("EVAL", "redis.setresp(3); return redis.call('debug', 'protocol', 'bignum')", "0")
	p.Do("EVAL", "redis.setresp(3); return redis.call('debug', 'protocol', 'double')", "0")
	p.Do("EVAL", "return redis.call('client', 'getname')", "0")
	for _, typ := range []string{"string", "integer", "double", "bignum", "null", "array", "set", "map", "attrib", "verbatim", "true", "false"} {
		for _, proto := range []int{2, 3} {
			p.Proto(proto)
			p.Do("EVAL", "return redis.call('debug', 'protocol', ARGV[1])", "0", typ)
			p.Do("EVAL", "redis.setresp(3); return redis.call('debug', 'protocol', ARGV[1])", "0", typ)
		}
	}
	p.Proto(2)
	p.Do("EVAL", "return redis.call('debug', 'protocol', 'push')", "0")
	p.DoDifferent("Redis's script reply parser knows no push type and gives nil; Keyhive's scripting engine reads it as an array",
		"EVAL", "redis.setresp(3); return redis.call('debug', 'protocol', 'push')", "0")
	// Commands that would re-enter the engine or change the script's
	// connection stay refused (Redis crashes on a nested EVAL).
	for _, script := range []string{"return redis.call('eval', 'return 1', 0)", "return redis.call('multi')",
		"return redis.call('script', 'flush')", "return redis.call('debug', 'reload')", "return redis.call('subscribe', 'c')"} {
		if r := p.Keyhive().Do("EVAL", script, "0"); !strings.HasPrefix(r.Str, "ERR This Redis command is not allowed from script") {
			t.Errorf("%s: %v", script, r)
		}
	}
	p.Do("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0")
	p.Do("EVAL", "return redis.call('debug', 'protocol', 'integer')", "0")

	// With the cron paused, active expiry stops.
	p.Do("DEBUG", "PAUSE-CRON", "1")
	p.Do("SET", "k", "v", "PX", "1")
	p.Do("DEBUG", "SLEEP", "0.3")
	p.Do("DBSIZE")
	p.Do("DEBUG", "PAUSE-CRON", "0")
}

// TestDebugReloadMissingFile: DEBUG RELOAD NOSAVE with no file empties the
// data set and fails with Redis 7.0's text.
func TestDebugReloadMissingFile(t *testing.T) {
	p := difftest.StartIsolated74(t)
	p.Do("SET", "a", "1")
	p.Do("DEBUG", "RELOAD", "NOSAVE")
	p.Do("DBSIZE")
}

// TestDebugSleepStopsServer: like Redis's, DEBUG SLEEP holds up every other
// client's commands until it ends (it takes the exclusive lock).
func TestDebugSleepStopsServer(t *testing.T) {
	p := difftest.StartIsolated(t)
	other := p.NewConn()
	for _, side := range []func(*difftest.Pair) *difftest.Client{(*difftest.Pair).Redis, (*difftest.Pair).Keyhive} {
		side(p).Send("DEBUG", "SLEEP", "0.3")
		time.Sleep(50 * time.Millisecond)
		start := time.Now()
		side(other).Do("SET", "k", "v")
		if waited := time.Since(start); waited < 150*time.Millisecond {
			t.Errorf("%s: SET ran during DEBUG SLEEP (waited %v)", side(p).Name(), waited)
		}
		side(p).Read()
	}
}
