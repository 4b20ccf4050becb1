package server_test

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// One test per class of Redis CVE that applies to Keyhive: the hostile
// input gets Redis's answer (compared with redis-server where Redis itself
// survives it) and the server keeps serving. Classes covered elsewhere:
//   - huge multibulk and bulk headers (CVE-2021-32627/32628/32675):
//     TestProtocolProtoMaxBulkLen, TestProtocolBulkHeaderDoesNotAllocate;
//   - the limits before AUTH (CVE-2021-32675): TestProtocolUnauthenticatedLimits;
//   - Lua sandbox escapes (CVE-2022-24735, CVE-2015-4335):
//     scripting's TestSandbox;
//   - output of a subscriber that does not read: TestPubSubSlowSubscriber.

// survives checks that the server still answers a new connection.
func survives(t *testing.T, p *difftest.Pair) {
	t.Helper()
	fresh := p.NewConn()
	fresh.Do("PING")
}

// Pattern blow-up (CVE-2022-36021 and KEYS/SCAN/PSUBSCRIBE/CONFIG GET
// patterns in general): a pattern of many stars against long names must
// not take exponential time.
func TestCVEPatternBlowUp(t *testing.T) {
	p := difftest.Start(t)
	long := strings.Repeat("a", 5000)
	p.Do("SET", long, "v")
	pattern := strings.Repeat("*a", 200) + "*b"
	start := time.Now()
	p.Do("KEYS", pattern)
	p.Do("SCAN", 0, "MATCH", pattern, "COUNT", 1000)
	p.Do("CONFIG", "GET", pattern)
	p.Do("KEYS", strings.Repeat("[a-", 1000))
	p.Do("KEYS", strings.Repeat("\\", 10001))
	sub := p.NewConn()
	sub.Do("PSUBSCRIBE", pattern)
	p.Do("PUBLISH", long, "x")
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("hostile patterns took %v", d)
	}
	survives(t, p)
}

// Argument overflows (CVE-2021-41099 SETRANGE with a raised
// proto-max-bulk-len, CVE-2022-35977 SETRANGE/SORT, CVE-2021-32761
// BITFIELD, CVE-2023-22458 HRANDFIELD/ZRANDMEMBER counts, CVE-2021-29477
// LCS sizes): offsets and counts at the integer limits get Redis's errors.
func TestCVEArgumentOverflows(t *testing.T) {
	p := difftest.Start74(t)
	const llMin, llMax = "-9223372036854775808", "9223372036854775807"
	p.Do("SET", "s", "abc")
	p.Do("SETRANGE", "s", llMax, "x")
	p.Do("SETRANGE", "s", "536870911", "xx")
	p.Do("SETRANGE", "s", "4294967296", "x")
	p.Do("SETRANGE", "s", "-1", "x")
	p.Do("GETRANGE", "s", llMin, llMax)
	p.Do("GETRANGE", "s", llMax, llMin)
	p.Do("SETBIT", "b", "4294967296", 1)
	p.Do("SETBIT", "b", llMax, 1)
	p.Do("GETBIT", "b", llMax)
	p.Do("BITFIELD", "b", "SET", "u8", "4294967296", 1)
	p.Do("BITFIELD", "b", "SET", "u8", "#"+llMax, 1)
	p.Do("BITFIELD", "b", "INCRBY", "i64", 0, llMax, "INCRBY", "i64", 0, 1)
	p.Do("BITFIELD", "b", "GET", "u64", 0)
	p.Do("BITFIELD", "b", "GET", "i65", 0)
	p.Do("BITCOUNT", "s", llMin, llMax)
	p.Do("BITPOS", "s", 1, llMin, llMax, "BIT")
	p.Do("SADD", "set", "a", "b")
	p.Do("SADD", "iset", 1, 2, 3) // an intset: SSCAN's order is the same on both
	p.Do("HSET", "h", "a", 1)
	p.Do("ZADD", "z", 1, "a")
	p.Do("RPUSH", "l", "a", "b")
	for _, cmd := range [][]any{
		{"SRANDMEMBER", "set", llMin}, {"HRANDFIELD", "h", llMin}, {"HRANDFIELD", "h", llMin, "WITHVALUES"},
		{"ZRANDMEMBER", "z", llMin}, {"ZRANDMEMBER", "z", llMin, "WITHSCORES"}, {"SPOP", "set", llMin},
		{"LPOS", "l", "a", "RANK", llMin}, {"LPOS", "l", "a", "COUNT", llMin}, {"LPOS", "l", "a", "MAXLEN", llMin},
		{"LPOS", "l", "a", "RANK", llMax, "COUNT", llMax, "MAXLEN", llMax},
		{"LRANGE", "l", llMin, llMax}, {"LTRIM", "x", llMin, llMax}, {"LINDEX", "l", llMin},
		{"LPOP", "l", llMin}, {"RPOP", "l", llMax},
		{"SORT", "l", "LIMIT", llMin, llMax, "ALPHA"}, {"SORT", "l", "LIMIT", llMax, llMax, "ALPHA"},
		{"ZRANGE", "z", 0, -1, "BYSCORE", "LIMIT", llMin, llMax},
		{"ZRANGE", "z", llMin, llMax}, {"ZREMRANGEBYRANK", "none", llMin, llMax},
		{"INCRBY", "n", llMax}, {"INCRBY", "n", 1}, {"DECRBY", "m", llMin}, {"INCRBYFLOAT", "f", "1e308"}, {"INCRBYFLOAT", "f", "1e308"},
		{"HINCRBYFLOAT", "h", "a", "1e400"}, {"HINCRBYFLOAT", "h", "a", "nan"},
		{"EXPIRE", "s", llMax}, {"PEXPIRE", "s", llMax}, {"EXPIREAT", "s", llMin}, {"SET", "t", "v", "EX", llMax},
		{"SET", "t", "v", "PX", llMax}, {"GETEX", "s", "EX", llMax},
		{"LCS", "s", "s", "MINMATCHLEN", llMax}, {"OBJECT", "FREQ", "s"},
		{"SCAN", "18446744073709551616"}, {"SSCAN", "iset", 0, "COUNT", llMax},
		{"SELECT", llMax}, {"MOVE", "s", llMin}, {"SWAPDB", 0, llMax},
		{"CLIENT", "KILL", "ID", llMax}, {"CLIENT", "UNBLOCK", llMin},
	} {
		p.Do(cmd...)
	}
	// The whole collection, in an order of the server's own.
	p.DoUnordered("SRANDMEMBER", "set", llMax)
	p.DoUnorderedPairs("HRANDFIELD", "h", llMax, "WITHVALUES")
	p.DoUnordered("ZRANDMEMBER", "z", llMax)
	p.DoDifferent("a cursor names a position in the server's own table layout", "SCAN", llMax)
	// Redis 7.0 rejects a proto-max-bulk-len below 1 MB; the checks above
	// also hold with it raised.
	p.Do("CONFIG", "SET", "proto-max-bulk-len", "1000000000000")
	p.Do("SETRANGE", "s", llMax, "x")
	p.Do("CONFIG", "SET", "proto-max-bulk-len", "512mb")
	survives(t, p)
}

// Collections past the compact thresholds when those are raised to huge
// values (CVE-2021-32627/32628/32687: ziplist and intset overflows).
func TestCVEHugeEncodingThresholds(t *testing.T) {
	p := difftest.StartIsolated(t)
	for _, d := range []string{"set-max-intset-entries", "hash-max-listpack-entries", "zset-max-listpack-entries", "list-max-listpack-size"} {
		p.Do("CONFIG", "SET", d, "2147483647")
	}
	p.Do("CONFIG", "SET", "hash-max-listpack-value", "2147483647")
	big := strings.Repeat("x", 1<<20)
	for i := range 20 {
		p.Do("SADD", "is", i*1000003)
		p.Do("HSET", "h", fmt.Sprint("f", i), big)
		p.Do("ZADD", "z", i, big+fmt.Sprint(i))
		p.Do("RPUSH", "l", big)
	}
	p.Do("SCARD", "is")
	p.Do("HLEN", "h")
	p.Do("ZCARD", "z")
	p.Do("LLEN", "l")
	p.DoDifferent("encodings differ once values pass 1 MB", "OBJECT", "ENCODING", "h")
	survives(t, p)
}

// Lua: deep recursion and huge stacks (CVE-2021-32626), cjson/cmsgpack
// nesting and sizes (CVE-2022-24834, CVE-2020-14147 struct), bit.tohex
// at the integer limits (CVE-2024-31449).
func TestCVELua(t *testing.T) {
	// Servers of its own, and time: a script that runs long (under -race)
	// must not leave shared servers busy.
	p := difftest.StartIsolated(t)
	p.SetTimeout(2 * time.Minute)
	for _, script := range []string{
		"local function f(n) return 1 + f(n + 1) end return f(1)",
		"return unpack({}, 1, 1e7)",
		"local t = {} for i = 1, 100000 do t[i] = i end return #{unpack(t)}",
		"return #cjson.encode(cjson.decode(string.rep('[', 1000) .. string.rep(']', 1000)))",
		"return cjson.decode(string.rep('[', 100000))",
		"return cjson.decode('{' .. string.rep('\"a\":1,', 10000) .. '\"b\":1}').b",
		"return cmsgpack.unpack(string.rep('\\145', 100000))",
		"return #cmsgpack.pack(string.rep('x', 100000))",
		"return struct.pack('i' .. 2^31, 1)",
		"return struct.unpack('>c2147483647', 'x')",
		"return bit.tohex(1, -2147483648)",
		"return bit.tohex(65535, 2147483647)",
		"return ('x'):rep(-1)",
		"return #string.rep('x', 2^31)",
		// luaL_checkint truncates 2^62 to 0: redis-server answers "", not an error.
		"return string.rep('ab', 2^62)",
		"return #string.rep('ab', 2^31 + 3)",
		"return string.format('%0999999999d', 1)",
	} {
		p.DoCompare(sameKind, "EVAL", script, 0)
	}
	survives(t, p)
}

// sameKind compares replies by kind only (both errors, or both the same
// type): the texts of Lua runtime errors carry gopher-lua's wording.
func sameKind(redis, keyhive difftest.Reply) error {
	if redis.Kind != keyhive.Kind {
		return fmt.Errorf("redis replied %s, keyhive %s", redis, keyhive)
	}
	return nil
}

// Output that grows while a client does not read (CVE-2025-21605: replies
// to an unauthenticated client): a client that pipelines commands and never
// reads stalls itself, not the server, whose memory stays bounded.
func TestCVEUnreadReplies(t *testing.T) {
	srv := startKeyhive(t, "--requirepass", "secret")
	c := dial(t, srv.Addr())
	done := make(chan error, 1)
	go func() {
		// 200 MB of PINGs, each answered with a NOAUTH error nobody reads.
		chunk := []byte(strings.Repeat("PING\r\n", 10000))
		var err error
		for sent := 0; sent < 200<<20 && err == nil; sent += len(chunk) {
			c.NetConn().SetWriteDeadline(time.Now().Add(2 * time.Second))
			_, err = c.NetConn().Write(chunk)
		}
		done <- err
	}()
	// The writer stalls once the socket buffers fill: the server stopped
	// reading because it cannot write.
	if err := <-done; err == nil {
		t.Error("200 MB of unread replies were all accepted")
	}
	other := dial(t, srv.Addr())
	if r, err := other.Do("PING"); err != nil || !strings.HasPrefix(r.Str, "NOAUTH") {
		t.Errorf("another client: %v %v", r, err)
	}
	// What the stalled client was sent is a bounded backlog, not 200 MB.
	c.NetConn().SetReadDeadline(time.Now().Add(time.Second))
	n, _ := io.Copy(io.Discard, io.LimitReader(c.NetConn(), 1<<30))
	t.Logf("replies drained after the stall: %d bytes", n)
}
