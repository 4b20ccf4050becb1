package server_test

// Propagation tests: every write must publish exactly the command(s) Redis 7.0
// propagates to its AOF and replicas. Each step below runs on Keyhive, whose
// OnPropagate stream is collected, and on a redis-server writing an AOF
// (appendfsync always, so a command is in the file before its reply is sent);
// both must produce the step's expected commands. "{+N}" in an expectation is
// an absolute Unix ms time N ms after the command ran.

import (
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

func propagationSteps() []propStep {
	return []propStep{
		// SET: with an expire time, SET key value PXAT <ms> and nothing else;
		// without, as sent less any GET.
		w("SET a 1 EX 100", "SET a 1 PXAT {+100000}"),
		w("SET a 1 PX 100000 NX"),
		w("SET a 1 PX 100000 XX GET", "SET a 1 PXAT {+100000}"),
		w("set b 1 exat 9999999999 get", "SET b 1 PXAT 9999999999000"),
		w("SET b 2 PXAT 9999999999000 XX", "SET b 2 PXAT 9999999999000"),
		w("set b 3 pxat 9999999999000 get", "SET b 3 PXAT 9999999999000"),
		w("set c 1 keepttl", "set c 1 keepttl"),
		w("SET c 1 EX 100 KEEPTTL"),
		w("SET d 1 NX EX 100", "SET d 1 PXAT {+100000}"),
		w("set d 1 ex 10 ex 20", "SET d 1 PXAT {+20000}"),
		w("set d 2 keepttl get", "set d 2 keepttl"),
		w("SET d 3 get GeT XX", "SET d 3 XX"),
		w("SET d 2 NX PX 100"),
		w("SET d 2 NX GET"),
		w("SET z 2 GET", "SET z 2"),
		w("SET z 3 XX", "SET z 3 XX"),
		w("SET e 1 EXAT 1", "SET e 1 PXAT 1000"),
		w("GET e", "DEL e"), // expired: lazily deleted
		w("SETEX s 100 v", "SET s v PXAT {+100000}"),
		w("SETEX s 0 v"),
		w("psetex s 100000 v", "SET s v PXAT {+100000}"),
		w("getset s w", "SET s w"),
		// GETEX: PEXPIREAT, PERSIST, or a deletion for a time in the past.
		w("GETEX s EX 100", "PEXPIREAT s {+100000}"),
		w("getex s px 5000", "PEXPIREAT s {+5000}"),
		w("GETEX s EXAT 9999999999", "PEXPIREAT s 9999999999000"),
		w("GETEX s PXAT 9999999999001", "PEXPIREAT s 9999999999001"),
		w("GETEX s"),
		w("GETEX s PERSIST", "PERSIST s"),
		w("GETEX s PERSIST"),
		w("GETEX s EXAT 1", "DEL s"),
		w("GETEX nokey EX 10"),
		w("SET a 1", "SET a 1"),
		w("GETDEL a", "DEL a"),
		w("GETDEL a"),
		w("SETNX n 1", "SETNX n 1"),
		w("SETNX n 1"),
		w("MSET m1 1 m2 2", "MSET m1 1 m2 2"),
		w("MSETNX m1 1 m3 3"),
		w("msetnx m3 3 m4 4", "msetnx m3 3 m4 4"),
		w("APPEND n x", "APPEND n x"),
		{cmd: []string{"APPEND", "n", ""}, want: []string{`APPEND n ""`}},
		w("INCR i", "INCR i"),
		w("incrby i 0", "incrby i 0"),
		w("DECR i", "DECR i"),
		w("DECRBY i 5", "DECRBY i 5"),
		w("INCR n"),
		// INCRBYFLOAT propagates its result, keeping the TTL.
		w("SET f 5 EX 100", "SET f 5 PXAT {+100000}"),
		w("INCRBYFLOAT f 1.5", "SET f 6.5 KEEPTTL"),
		w("incrbyfloat g 1e3", "SET g 1000 KEEPTTL"),
		w("INCRBYFLOAT g 0", "SET g 1000 KEEPTTL"),
		{cmd: []string{"SETRANGE", "n", "0", ""}},
		{cmd: []string{"SETRANGE", "nokey", "0", ""}},
		w("SETRANGE n 1 y", "SETRANGE n 1 y"),
		w("SETRANGE n 10 z", "SETRANGE n 10 z"),

		// EXPIRE family: PEXPIREAT with the absolute time, options as sent;
		// a time in the past deletes the key and propagates the deletion.
		w("SET k 1", "SET k 1"),
		w("EXPIRE k 100", "PEXPIREAT k {+100000}"),
		w("expire k 200 gt", "PEXPIREAT k {+200000} gt"),
		w("EXPIRE k 10 GT"),
		w("PEXPIRE k 100000 XX", "PEXPIREAT k {+100000} XX"),
		w("EXPIREAT k 9999999999", "PEXPIREAT k 9999999999000"),
		w("pexpireat k 9999999999001 lt"),
		w("pexpireat k 9999999998000 lt", "pexpireat k 9999999998000 lt"),
		w("EXPIRE k 100 NX"),
		w("PERSIST k", "PERSIST k"),
		w("PERSIST k"),
		w("EXPIRE nokey 10"),
		w("EXPIRE k -1", "DEL k"),
		w("SET k 1", "SET k 1"),
		w("PEXPIREAT k 1", "DEL k"),
		w("SET k 1", "SET k 1"),
		w("EXPIREAT k 1 NX", "DEL k"),
		w("SET k 1", "SET k 1"),
		w("PEXPIRE k 0", "DEL k"),

		// DEL and UNLINK in place of a deletion follow the lazyfree options.
		w("CONFIG SET lazyfree-lazy-user-del yes"),
		w("SET a 1", "SET a 1"),
		w("GETDEL a", "UNLINK a"),
		w("SET a 1", "SET a 1"),
		w("DEL a", "DEL a"),
		w("SET a 1", "SET a 1"),
		w("EXPIRE a 0", "DEL a"),
		w("CONFIG SET lazyfree-lazy-user-del no"),
		w("CONFIG SET lazyfree-lazy-expire yes"),
		w("SET a 1", "SET a 1"),
		w("GETDEL a", "DEL a"),
		w("SET a 1", "SET a 1"),
		w("GETEX a PXAT 1", "UNLINK a"),
		w("SET a 1", "SET a 1"),
		w("EXPIRE a -5", "UNLINK a"),
		{cmd: strings.Fields("SET a 1 PX 1"), want: []string{"SET a 1 PXAT {+1}"}, sleep: 5 * time.Millisecond},
		w("GET a", "UNLINK a"),
		w("CONFIG SET lazyfree-lazy-expire no"),
		{cmd: strings.Fields("SET a 1 PX 1"), want: []string{"SET a 1 PXAT {+1}"}, sleep: 5 * time.Millisecond},
		w("GET a", "DEL a"),

		// Keyspace commands propagate as sent, and only when they change
		// something.
		w("DEL m1 nokey", "DEL m1 nokey"),
		w("DEL nokey"),
		w("unlink m2", "unlink m2"),
		w("UNLINK nokey"),
		w("RENAME m3 r1", "RENAME m3 r1"),
		w("RENAME r1 r1"),
		w("RENAMENX r1 m4"),
		w("renamenx r1 r2", "renamenx r1 r2"),
		w("COPY r2 c1", "COPY r2 c1"),
		w("COPY r2 c1"),
		w("COPY r2 c1 REPLACE DB 1", "COPY r2 c1 REPLACE DB 1"),
		w("MOVE c1 2", "MOVE c1 2"),
		w("MOVE nokey 2"),
		w("SELECT 1"),
		w("SET x 1 EX 100", "1 SET x 1 PXAT {+100000}"),
		w("SWAPDB 0 1", "1 SWAPDB 0 1"), // under the client's database number
		w("SET x 2", "1 SET x 2"),
		w("SELECT 0"),
		w("SWAPDB 0 0", "SWAPDB 0 0"),

		// Bitmaps: as sent, when a bit changed or the string grew.
		w("SETBIT bits 7 1", "SETBIT bits 7 1"),
		w("SETBIT bits 7 1"),
		w("SETBIT bits 100 0", "SETBIT bits 100 0"),
		w("BITFIELD bf SET u8 0 200 GET u8 0", "BITFIELD bf SET u8 0 200 GET u8 0"),
		w("BITFIELD bf SET u8 0 200"),
		w("BITFIELD bf OVERFLOW FAIL INCRBY u8 0 100"),
		w("BITFIELD bf INCRBY u8 0 1", "BITFIELD bf INCRBY u8 0 1"),
		w("BITFIELD bf GET u8 0"),
		w("BITFIELD_RO bf GET u8 0"),
		{
			cmd:   strings.Fields("BITFIELD bf2 OVERFLOW FAIL SET u8 0 300"),
			want:  []string{"BITFIELD bf2 OVERFLOW FAIL SET u8 0 300"},
			redis: nil,
			why:   "Redis creates bf2 but counts no change, so its replicas and AOF miss the key; Keyhive propagates it",
		},
		w("BITOP AND dest bits bf", "BITOP AND dest bits bf"),
		w("BITOP AND dest nokey", "BITOP AND dest nokey"),
		w("BITOP AND dest nokey"),
		w("LCS bits bf"),

		// Flushes propagate as sent, even when there is nothing to remove.
		// Blocking pops that find an element propagate as the pop they did.
		w("RPUSH bl a b c d e", "RPUSH bl a b c d e"),
		w("BLPOP nokey bl 0", "LPOP bl"),
		w("brpop bl 1.5", "RPOP bl"),
		w("BLMOVE bl bl2 LEFT right 0", "LMOVE bl bl2 LEFT right"),
		w("BRPOPLPUSH bl bl2 0", "RPOPLPUSH bl bl2"),
		w("BLMPOP 0 2 nokey bl2 LEFT COUNT 5", "LPOP bl2 2"),
		w("BLPOP nokey 0.01"),
		w("ZADD bz 1 a 2 b 3 c", "ZADD bz 1 a 2 b 3 c"),
		w("BZPOPMIN bz 0", "ZPOPMIN bz"),
		w("bzpopmax bz 0", "ZPOPMAX bz"),
		w("BZMPOP 0 1 bz MIN COUNT 3", "ZPOPMIN bz 1"),
		w("LMPOP 1 bl RIGHT", "RPOP bl 1"),
		// EXEC propagates its writes, wrapped in MULTI/EXEC when more than one.
		w("MULTI"), w("SET t 1"), w("INCR t"), w("GET t"), w("RPUSH t x"),
		w("EXEC", "MULTI", "SET t 1", "INCR t", "EXEC"),
		w("MULTI"), w("SET t 2 EX 100"), w("GET t"),
		w("EXEC", "SET t 2 PXAT {+100000}"),
		w("MULTI"), w("GET t"), w("EXEC"),
		w("MULTI"), w("SET t 3"), w("DISCARD"),
		// A script propagates its writes (Redis 7: effects replication).
		{cmd: []string{"EVAL", "redis.call('set', KEYS[1], 'v'); redis.call('expire', KEYS[1], 100); return redis.call('get', KEYS[1])", "1", "sc"},
			want: []string{"MULTI", "set sc v", "PEXPIREAT sc {+100000}", "EXEC"}},
		{cmd: []string{"EVAL", "return redis.call('incr', 'sc2')", "0"}, want: []string{"incr sc2"}},
		{cmd: []string{"EVAL", "return redis.call('get', 'sc2')", "0"}},
		w("MULTI"), w("SET t 4"), {cmd: []string{"EVAL", "return redis.call('incr', 'sc2')", "0"}},
		w("EXEC", "MULTI", "SET t 4", "incr sc2", "EXEC"),
		w("FLUSHDB", "FLUSHDB"),
		w("flushdb async", "flushdb async"),
		w("FLUSHALL SYNC", "FLUSHALL SYNC"),
		w("FLUSHALL ASYNC", "FLUSHALL ASYNC"),
		w("FLUSHALL", "FLUSHALL"),
	}
}

// TestPropagation checks what each write propagates, on Keyhive and on
// redis-server alike.
func TestPropagation(t *testing.T) { checkPropagation(t, propagationSteps()) }

// TestPropagationNoConsumerAllocs checks that rewriting a command for
// propagation costs nothing while nothing consumes the stream: a command that
// is rewritten allocates as much as a similar one propagated as sent.
func TestPropagationNoConsumerAllocs(t *testing.T) {
	srv := startKeyhive(t)
	c := dialRaw(t, "tcp", srv.Addr())
	c.do(t, "SET", "k", "v")
	pairs := []struct{ rewritten, asSent []any }{
		{[]any{"SET", "k", "v", "EX", "100"}, []any{"SET", "k", "v", "KEEPTTL", "XX"}},
		{[]any{"EXPIRE", "k", "100"}, []any{"PEXPIREAT", "k", "9999999999000"}},
	}
	measure := func(args []any) float64 {
		cmd := difftest.EncodeCommand(args...)
		return testing.AllocsPerRun(300, func() {
			c.nc.Write(cmd)
			if _, err := difftest.ReadReply(c.br); err != nil {
				t.Fatal(err)
			}
		})
	}
	c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	for _, p := range pairs {
		if a, b := measure(p.rewritten), measure(p.asSent); a > b {
			t.Errorf("without a consumer %q allocates %v times per command, %q %v", p.rewritten, a, p.asSent, b)
		}
	}
	// With a consumer the rewrite allocates, which shows that the
	// measurement sees the server's allocations.
	srv.OnPropagate(func(int, [][]byte) {})
	for _, p := range pairs {
		if a, b := measure(p.rewritten), measure(p.asSent); a <= b {
			t.Errorf("with a consumer %q allocates %v times per command, %q %v: measurement broken?", p.rewritten, a, p.asSent, b)
		}
	}
}
