package server_test

// Differential tests of the HyperLogLog commands (PFADD PFCOUNT PFMERGE
// PFDEBUG PFSELFTEST) against redis-server: replies and the stored bytes.

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// hllState compares an HLL's bytes (GET), encoding and TTL.
func hllState(p *difftest.Pair, key string) {
	p.Do("GET", key)
	p.Do("OBJECT", "ENCODING", key)
	p.DoApprox(2, "TTL", key)
}

func TestHLLCommandInfo(t *testing.T) {
	p := difftest.Start(t)
	for _, c := range []string{"pfadd", "pfcount", "pfmerge", "pfdebug", "pfselftest"} {
		r := p.Redis().Do("COMMAND", "INFO", c)
		k := p.Keyhive().Do("COMMAND", "INFO", c)
		if len(r.Elems) != 1 || len(k.Elems) != 1 || len(k.Elems[0].Elems) < 7 {
			t.Fatalf("COMMAND INFO %s: redis %s, keyhive %s", c, r, k)
		}
		// Name, arity, flags, first key, last key, step, categories.
		for i := 0; i < 7; i++ {
			if string(r.Elems[0].Elems[i].Raw) != string(k.Elems[0].Elems[i].Raw) {
				t.Errorf("COMMAND INFO %s field %d: redis %q, keyhive %q", c, i, r.Elems[0].Elems[i].Raw, k.Elems[0].Elems[i].Raw)
			}
		}
		bmDocsHead(t, p, c)
	}
}

func TestHLLAddCount(t *testing.T) {
	p := difftest.Start(t)
	p.Do("PFCOUNT", "h")
	p.Do("PFADD", "h")
	hllState(p, "h")
	p.Do("PFADD", "h")
	p.Do("PFCOUNT", "h")
	hllState(p, "h")
	p.Do("PFADD", "h", "a", "b", "c")
	p.Do("PFADD", "h", "a")
	p.Do("PFADD", "h", "a", "b", "d")
	hllState(p, "h")
	p.Do("PFCOUNT", "h")
	hllState(p, "h") // the cached cardinality is in the bytes
	p.Do("PFCOUNT", "h")
	p.Do("PFADD", "h", "", "\x00", "\xff\xfe", "a long element that is longer than eight bytes")
	hllState(p, "h")
	p.Do("PFCOUNT", "h")
	// Many elements: sparse, then dense past hll-sparse-max-bytes.
	for round := 0; round < 12; round++ {
		args := []any{"PFADD", "big"}
		for i := 0; i < 300; i++ {
			args = append(args, "e"+strconv.Itoa(round*300+i))
		}
		p.Do(args...)
		p.Do("PFDEBUG", "ENCODING", "big")
		p.Do("PFCOUNT", "big")
		p.Do("STRLEN", "big")
	}
	hllState(p, "big")
	p.Do("PFADD", "big", "e1")
	p.Do("PFADD", "big", "new")
	p.Do("PFCOUNT", "big", "h")
	p.Do("PFCOUNT", "big", "h", "missing")
	p.Do("PFCOUNT", "missing", "missing2")
	hllState(p, "big") // PFCOUNT of several keys changes nothing
	// The TTL survives.
	p.Do("PFADD", "t", "x")
	p.Do("EXPIRE", "t", 100)
	p.Do("PFADD", "t", "y")
	p.Do("PFCOUNT", "t")
	hllState(p, "t")
	// Large cardinalities.
	for i := 0; i < 5; i++ {
		args := []any{"PFADD", "huge"}
		for j := 0; j < 5000; j++ {
			args = append(args, strconv.Itoa(i*5000+j))
		}
		p.Do(args...)
		p.Do("PFCOUNT", "huge")
	}
	hllState(p, "huge")
	p.Proto(3)
	p.Do("PFCOUNT", "huge")
	p.Do("PFADD", "huge", "zz")
}

// TestHLLSparseMaxBytes checks promotion to dense at other limits.
func TestHLLSparseMaxBytes(t *testing.T) {
	for _, limit := range []string{"0", "20", "100"} {
		t.Run(limit, func(t *testing.T) {
			p := difftest.Start(t, "--hll-sparse-max-bytes", limit)
			for i := 0; i < 40; i++ {
				p.Do("PFADD", "h", "x"+strconv.Itoa(i))
				p.Do("PFDEBUG", "ENCODING", "h")
				p.Do("STRLEN", "h")
			}
			hllState(p, "h")
			p.Do("PFCOUNT", "h")
			p.Do("PFMERGE", "m", "h")
			hllState(p, "m")
		})
	}
}

func TestHLLErrors(t *testing.T) {
	p := difftest.Start(t)
	bmNonString(t, p, "list")
	p.Do("SET", "str", "not an hll at all")
	p.Do("SET", "short", "HYLL")
	p.Do("SET", "int", "12345678901234567")
	p.Do("SET", "badenc", "HYLL\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff")
	p.Do("SET", "baddense", "HYLL\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")
	for _, k := range []string{"list", "str", "short", "int", "badenc", "baddense"} {
		p.Do("PFADD", k, "a")
		p.Do("PFCOUNT", k)
		p.Do("PFCOUNT", "missing", k)
		p.Do("PFMERGE", "dst", k)
		p.Do("PFMERGE", k, "missing")
		p.Do("PFDEBUG", "ENCODING", k)
		p.Do("GET", k)
	}
	p.Do("EXISTS", "dst")
	p.Do("PFADD")
	p.Do("PFCOUNT")
	p.Do("PFMERGE")
	p.Do("PFDEBUG", "ENCODING")
	p.Do("PFDEBUG", "ENCODING", "h", "extra")
	p.Do("PFSELFTEST", "x")
}

// TestHLLCorrupted stores HLLs whose sparse bodies lie (as APPEND, SETRANGE
// or a bad SET make them) and compares what each command does with them
// (redis-server 7.4.1 reads a body up to a run of values past the last
// register).
func TestHLLCorrupted(t *testing.T) {
	p := difftest.Start74(t)
	hdr := "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	bodies := map[string]string{
		"empty":     "",
		"short":     "\x7f\xfe",         // 16383 registers
		"long":      "\x7f\xff\x00",     // 16385 registers
		"cut":       "\x7f",             // XZERO without its second byte
		"valover":   "\x7f\xfd\x8f\x8f", // VALs past the end
		"valsonly":  "\x7f\xfb\x8f\x8f", // 16380 + 4 + 4
		"zeros":     "\x3f\x7f\xbf",     // ZERO 64, XZERO 16320
		"allvals":   "\x7f\xfb\xfb",     // XZERO 16380, VAL 32 x4
		"cachedbad": "\x7f\xff",
	}
	for name, body := range bodies {
		p.Do("SET", name, hdr+body)
	}
	p.Do("SETRANGE", "cachedbad", 8, "\x07\x00\x00\x00\x00\x00\x00\x00") // a valid cache
	for name := range bodies {
		p.Do("PFCOUNT", name)
		p.Do("PFCOUNT", name, "missing")
		p.Do("PFDEBUG", "DECODE", name)
		p.Do("PFADD", "c"+name)
		p.Do("PFMERGE", "c"+name, name)
		p.Do("GET", "c"+name)
	}
	for name := range bodies {
		for i := 0; i < 30; i++ {
			p.Do("PFADD", name, "el"+strconv.Itoa(i))
		}
		p.Do("GET", name)
		p.Do("PFDEBUG", "GETREG", name)
		p.Do("PFDEBUG", "TODENSE", name)
		p.Do("GET", name)
	}
	// A valid HLL broken by APPEND and SETRANGE.
	p.Do("PFADD", "h", "a", "b", "c")
	p.Do("APPEND", "h", "\x7f")
	p.Do("PFCOUNT", "h")
	p.Do("PFADD", "h", "zzz")
	p.Do("PFADD", "d", "a")
	p.Do("PFDEBUG", "TODENSE", "d")
	p.Do("APPEND", "d", "x")
	p.Do("PFCOUNT", "d")
	p.Do("PFADD", "d2", "a")
	p.Do("PFDEBUG", "TODENSE", "d2")
	p.Do("SETRANGE", "d2", 100, "\xff\xff\xff")
	p.Do("PFCOUNT", "d2")
	p.Do("PFDEBUG", "GETREG", "d2")
}

func TestHLLMerge(t *testing.T) {
	p := difftest.Start(t)
	p.Do("PFMERGE", "empty")
	hllState(p, "empty")
	p.Do("PFMERGE", "dst", "nope1", "nope2")
	hllState(p, "dst")
	p.Do("PFADD", "a", "1", "2", "3")
	p.Do("PFADD", "b", "3", "4", "5", "6")
	p.Do("PFMERGE", "dst", "a", "b")
	hllState(p, "dst")
	p.Do("PFCOUNT", "dst")
	p.Do("PFMERGE", "a", "b") // the destination is a source
	hllState(p, "a")
	// A dense source makes the destination dense.
	p.Do("PFADD", "d", "x")
	p.Do("PFDEBUG", "TODENSE", "d")
	p.Do("PFMERGE", "dst", "d")
	hllState(p, "dst")
	p.Do("PFDEBUG", "ENCODING", "dst")
	p.Do("PFMERGE", "new", "a", "d")
	hllState(p, "new")
	// An existing destination keeps its TTL; a cached cardinality is
	// invalidated even when nothing changes.
	p.Do("PFADD", "ttl", "q")
	p.Do("PFCOUNT", "ttl")
	p.Do("EXPIRE", "ttl", 500)
	p.Do("PFMERGE", "ttl")
	hllState(p, "ttl")
	p.Do("PFMERGE", "ttl", "a")
	hllState(p, "ttl")
	// Wrong types among the sources leave the destination alone.
	bmNonString(t, p, "list")
	p.Do("PFMERGE", "dst", "a", "list")
	p.Do("PFMERGE", "list", "a")
	p.Do("PFMERGE", "x", "list")
	p.Do("EXISTS", "x")
	// Embstr-sized HLLs set by clients become raw.
	r := p.Redis().Do("GET", "a")
	p.Do("SET", "copy", r.Str)
	p.Do("OBJECT", "ENCODING", "copy")
	p.Do("PFCOUNT", "copy")
	p.Do("OBJECT", "ENCODING", "copy")
}

func TestHLLDebug(t *testing.T) {
	p := difftest.Start(t)
	p.Do("PFDEBUG", "ENCODING", "missing")
	p.Do("PFDEBUG", "NOSUCH", "missing")
	p.Do("PFADD", "h", "a", "b", "c", "d", "e")
	p.Do("PFDEBUG", "NOSUCH", "h")
	p.Do("PFDEBUG", "NOSUCH\x00x", "h")
	p.Do("PFDEBUG", "ENCODING", "h")
	p.Do("PFDEBUG", "encoding", "h")
	p.Do("PFDEBUG", "DECODE", "h")
	p.Do("PFDEBUG", "GETREG", "h")
	p.Do("PFDEBUG", "ENCODING", "h") // GETREG converted it
	hllState(p, "h")
	p.Do("PFDEBUG", "DECODE", "h")
	p.Do("PFDEBUG", "TODENSE", "h")
	p.Do("PFADD", "s", "x")
	p.Do("PFDEBUG", "TODENSE", "s")
	hllState(p, "s")
	p.Do("PFADD", "s", "y")
	p.Do("PFCOUNT", "s")
	p.Do("PFSELFTEST")
}

// TestHLLRandom runs random PFADD/PFMERGE/PFCOUNT sequences on both servers
// and compares every reply and the final bytes of every key.
func TestHLLRandom(t *testing.T) {
	p := difftest.Start(t, "--hll-sparse-max-bytes", "600")
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("HLLSEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	keys := []string{"r0", "r1", "r2", "r3"}
	for step := 0; step < 400; step++ {
		key := keys[rng.IntN(len(keys))]
		switch rng.IntN(10) {
		case 0, 1, 2, 3, 4, 5:
			args := []any{"PFADD", key}
			for n := rng.IntN(40); n > 0; n-- {
				args = append(args, fmt.Sprintf("%x", rng.Uint64N(1<<uint(4+rng.IntN(30)))))
			}
			p.Do(args...)
		case 6:
			p.Do("PFMERGE", key, keys[rng.IntN(len(keys))], keys[rng.IntN(len(keys))])
		case 7:
			p.Do("PFCOUNT", key, keys[rng.IntN(len(keys))])
		default:
			p.Do("PFCOUNT", key)
		}
		if step%50 == 0 {
			for _, k := range keys {
				p.Do("GET", k)
			}
		}
	}
	for _, k := range keys {
		hllState(p, k)
		p.Do("PFCOUNT", k)
	}
}

// TestHLLNotifications compares the keyspace events of the HLL writes.
func TestHLLNotifications(t *testing.T) {
	p := difftest.Start(t, "--notify-keyspace-events", "KEA")
	sub := p.NewConn()
	sub.Do("PSUBSCRIBE", "__key*__:*")
	p.Do("PFADD", "h", "a")
	p.Do("PFADD", "h", "a") // nothing added: no event
	p.Do("PFCOUNT", "h")
	p.Do("PFMERGE", "m", "h")
	p.Do("PFDEBUG", "TODENSE", "m")
	for i := 0; i < 4; i++ { // pfadd on __keyspace@0__:h and __keyevent@0__:pfadd, for h then m
		sub.Read()
	}
	sub.NoReply(50 * time.Millisecond)
}

// TestHLLPropagation checks what the HLL commands propagate, on Keyhive and on
// redis-server's AOF alike: PFCOUNT propagates when it caches the cardinality,
// PFDEBUG when it converts to dense.
func TestHLLPropagation(t *testing.T) {
	servers := []*propServer{startKeyhiveProp(t)}
	if r := startRedisAOF(t); r != nil {
		servers = append(servers, r)
	}
	for _, s := range servers {
		s.collect()
	}
	steps := []propStep{
		w("PFADD h a b c", "PFADD h a b c"),
		w("PFADD h a"),
		w("PFCOUNT h", "PFCOUNT h"),
		w("PFCOUNT h"),
		w("PFCOUNT h nokey"),
		w("PFADD h"),
		w("PFADD new", "PFADD new"),
		w("PFMERGE m h", "PFMERGE m h"),
		w("PFMERGE m", "PFMERGE m"),
		w("PFDEBUG ENCODING m"),
		w("PFDEBUG TODENSE m", "PFDEBUG TODENSE m"),
		w("PFDEBUG TODENSE m"),
		w("PFADD n x", "PFADD n x"),
		w("PFDEBUG GETREG n", "PFDEBUG GETREG n"),
		w("PFDEBUG GETREG n"),
	}
	for _, step := range steps {
		for _, s := range servers {
			t0 := time.Now().UnixMilli()
			reply := s.conn.do(t, step.cmd...)
			t1 := time.Now().UnixMilli()
			if err := matchPropagated(s.collect(), step.want, 0, t0, t1); err != nil {
				t.Errorf("%s: %q (reply %.60s): %v", s.name, step.cmd, reply, err)
			}
		}
	}
}

// TestHLLHotPathAllocs checks that PFADD and PFCOUNT allocate no more than
// PING does, sparse and dense: values are rebuilt in the scratch buffers or
// changed in place.
func TestHLLHotPathAllocs(t *testing.T) {
	srv := startKeyhive(t)
	c := dialRaw(t, "tcp", srv.Addr())
	c.do(t, "PFADD", "s", "a", "b")
	for i := 0; i < 5000; i++ {
		c.do(t, "PFADD", "d", strconv.Itoa(i))
	}
	measure := func(cmds ...[]any) float64 { return c.allocsPerRound(t, 100, cmds...) }
	for _, k := range []string{"s", "d"} {
		cmds := [][]any{{"PFADD", k, "a"}, {"PFADD", k, "zz"}, {"PFCOUNT", k}, {"PFCOUNT", k, "s"}}
		pings := [][]any{{"PING"}, {"PING"}, {"PING"}, {"PING"}}
		var a, b float64
		for try := 0; try < 3; try++ {
			if b, a = measure(pings...), measure(cmds...); a <= b {
				break
			}
		}
		if a > b {
			t.Errorf("%q allocates %v times per round, as many PINGs %v", cmds, a, b)
		}
	}
}

// TestHLLCopiedFromRedis sets HLLs written by redis-server (sparse, dense,
// with a valid cached cardinality) into both servers as plain strings: they
// keep counting identically.
func TestHLLCopiedFromRedis(t *testing.T) {
	p := difftest.Start(t)
	r := p.Redis()
	r.Do("PFADD", "sparse", "a", "b", "c")
	args := []any{"PFADD", "dense"}
	for i := 0; i < 3000; i++ {
		args = append(args, i)
	}
	r.Do(args...)
	r.Do("PFCOUNT", "dense")
	for _, k := range []string{"sparse", "dense"} {
		v := r.Do("GET", k)
		p.Do("SET", "copy:"+k, v.Str)
		p.Do("PFCOUNT", "copy:"+k)
		p.Do("PFADD", "copy:"+k, "x", "y", "z")
		p.Do("GET", "copy:"+k)
		p.Do("PFCOUNT", "copy:"+k)
		p.Do("PFMERGE", "copy:"+k, "copy:sparse")
		p.Do("GET", "copy:"+k)
	}
}
