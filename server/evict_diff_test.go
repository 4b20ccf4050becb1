package server_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestOOMReplies: with a limit below what either server uses and noeviction,
// denyoom commands are refused exactly as Redis 7.2+ refuses them; reads,
// deletes and transactions behave as in Redis.
func TestOOMReplies(t *testing.T) {
	p := difftest.StartIsolated74(t)
	p.Do("SET", "k", "v")
	p.Do("RPUSH", "l", "a")
	other := p.NewConn()
	other.Do("MULTI")
	other.Do("SET", "x", "1")
	p.Do("CONFIG", "SET", "maxmemory", "1")
	p.Do("SET", "k", "v2")
	p.Do("GET", "k")
	p.Do("LPUSH", "l", "b")
	p.Do("LPOP", "l") // not denyoom
	p.Do("INCR", "n")
	p.Do("APPEND", "k", "x")
	p.Do("DEL", "k")
	p.Do("EXISTS", "k")
	other.Do("EXEC") // queued before the limit: the transaction is discarded
	other.Do("GET", "x")
	p.Do("MULTI")
	p.Do("GET", "x") // queued: Redis 7.0 refused anything inside MULTI, 7.2+ only denyoom commands
	p.Do("DEL", "x")
	p.Do("EXEC")
	p.Do("MULTI")
	p.Do("GET", "x")
	p.Do("SET", "x", "2") // refused: the transaction is discarded
	p.Do("EXEC")
	p.Do("MULTI")
	p.Do("DISCARD")
	p.Do("CONFIG", "SET", "maxmemory", "0")
	p.Do("SET", "k", "v3")
}

// TestMemoryCommand checks MEMORY's replies and errors; the byte counts are
// Keyhive's own and only checked for plausibility.
func TestMemoryCommand(t *testing.T) {
	p := difftest.StartIsolated(t)
	p.Do("MEMORY", "help", "x")
	p.Do("MEMORY", "nosuch")
	p.Do("MEMORY")
	p.Do("MEMORY", "USAGE")
	p.Do("MEMORY", "USAGE", "missing")
	p.Do("MEMORY", "DOCTOR") // an empty instance
	p.Do("MEMORY", "PURGE")
	p.Do("SET", "k", "value")
	p.Do("MEMORY", "USAGE", "k", "SAMPLES")
	p.Do("MEMORY", "USAGE", "k", "SAMPLES", "x")
	p.Do("MEMORY", "USAGE", "k", "NOPE", "1")
	p.Do("COMMAND", "INFO", "memory|usage")
	plausible := func(lo, hi int64) func(r, k difftest.Reply) error {
		return func(r, k difftest.Reply) error {
			if k.Int < lo || k.Int > hi {
				return fmt.Errorf("keyhive %d not in [%d, %d] (redis %d)", k.Int, lo, hi, r.Int)
			}
			return nil
		}
	}
	p.DoCompare(plausible(10, 200), "MEMORY", "USAGE", "k")
	p.DoCompare(plausible(10, 200), "MEMORY", "USAGE", "k", "SAMPLES", "0")
	for i := range 1000 {
		p.Do("HSET", "h", "field"+strconv.Itoa(i), "value")
		p.Do("RPUSH", "l", "element"+strconv.Itoa(i))
		p.Do("ZADD", "z", strconv.Itoa(i), "member"+strconv.Itoa(i))
		p.Do("SADD", "s", "member"+strconv.Itoa(i))
	}
	for _, key := range []string{"h", "l", "z", "s"} {
		p.DoCompare(plausible(10_000, 200_000), "MEMORY", "USAGE", key)
		p.DoCompare(plausible(10_000, 200_000), "MEMORY", "USAGE", key, "SAMPLES", "0")
	}
	stats := func(r, k difftest.Reply) error {
		names := map[string]bool{}
		for i := 0; i+1 < len(r.Elems); i += 2 {
			names[r.Elems[i].Str] = true
		}
		for i := 0; i+1 < len(k.Elems); i += 2 {
			if !names[k.Elems[i].Str] {
				return fmt.Errorf("keyhive field %q is not a redis field", k.Elems[i].Str)
			}
		}
		for _, want := range []string{"peak.allocated", "total.allocated", "keys.count", "dataset.bytes", "db.0"} {
			found := false
			for i := 0; i < len(k.Elems); i += 2 {
				found = found || k.Elems[i].Str == want
			}
			if !found {
				return fmt.Errorf("keyhive lacks %s", want)
			}
		}
		return nil
	}
	p.DoCompare(stats, "MEMORY", "STATS")
	p.Proto(3)
	p.DoCompare(func(r, k difftest.Reply) error {
		if len(k.Elems) == 0 {
			return fmt.Errorf("empty MEMORY STATS map")
		}
		return nil
	}, "MEMORY", "STATS")
}

// TestObjectFreqIdle: OBJECT FREQ and IDLETIME under LRU and LFU policies.
func TestObjectFreqIdle(t *testing.T) {
	p := difftest.StartIsolated(t)
	p.Do("SET", "k", "v")
	p.Do("OBJECT", "FREQ", "k")
	p.DoApprox(1, "OBJECT", "IDLETIME", "k") // 1 when a second began since the SET, on either server
	p.Do("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
	p.Do("OBJECT", "IDLETIME", "k")
	p.Do("SET", "f", "v")
	p.Do("OBJECT", "FREQ", "f") // a new key starts at 5 under LFU
	p.Do("OBJECT", "FREQ", "missing")
}

// TestEvictionInfo: INFO reports the eviction settings and counters Redis
// does, and evicted_keys counts what the policy removed.
func TestEvictionInfo(t *testing.T) {
	p := difftest.StartIsolated(t, "--maxmemory-policy", "allkeys-random")
	for i := range 2000 {
		p.Do("SET", "key:"+strconv.Itoa(i), strings.Repeat("v", 4000))
	}
	field := func(info, name string) string {
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, name+":"); ok {
				return v
			}
		}
		return ""
	}
	_, k := p.DoDifferent("memory figures differ", "INFO", "memory")
	used, _ := strconv.ParseInt(field(k.Str, "used_memory"), 10, 64)
	if used <= 0 || field(k.Str, "maxmemory_policy") != "allkeys-random" {
		t.Fatalf("INFO memory: %q", k.Str)
	}
	// A limit below the keys' 8 MB evicts some keys but not all. The
	// in-process server's used memory counts the Go runtime's growth, which
	// includes this test process's garbage (8 MB of values just sent):
	// MEMORY PURGE collects it first, so the keys are what the limit meets.
	k2 := p.Keyhive()
	k2.Do("MEMORY", "PURGE")
	k2.Do("CONFIG", "SET", "maxmemory", "6mb")
	k2.Do("SET", "trigger", "x")
	_, k = p.DoDifferent("stats differ", "INFO", "stats")
	evicted, _ := strconv.Atoi(field(k.Str, "evicted_keys"))
	if evicted == 0 || evicted >= 2000 {
		t.Fatalf("evicted_keys %d of 2000 4 KB keys under maxmemory 6mb", evicted)
	}
}

// TestEvictedEvents: every evicted key is published as "evicted" (classes e
// and K/E) and invalidates the clients tracking it, in eviction order;
// volatile-ttl makes the order the same in both servers.
func TestEvictedEvents(t *testing.T) {
	p := difftest.StartIsolated(t, "--maxmemory-policy", "volatile-ttl")
	p.Do("CONFIG", "SET", "notify-keyspace-events", "KEe")
	sub := p.NewConn()
	sub.Do("PSUBSCRIBE", "__key*__:*")
	tracker := p.NewConn()
	tracker.Proto(3)
	tracker.Do("CLIENT", "TRACKING", "ON")
	p.Do("SET", "keep", "1")
	p.Do("SET", "later", "2", "EX", "1000")
	p.Do("SET", "sooner", "3", "PX", "500000")
	tracker.Do("GET", "later")
	tracker.Do("GET", "keep")
	p.Do("CONFIG", "SET", "maxmemory", "1")
	p.Do("SET", "more", "4") // evicts sooner, then later, then is refused
	for range 4 {
		sub.Read()
	}
	sub.NoReply(100 * time.Millisecond)
	tracker.Read() // invalidate later
	tracker.NoReply(100 * time.Millisecond)
	p.Do("CONFIG", "SET", "maxmemory", "0")
	p.Do("KEYS", "*")
}

// TestEvictLRM: Redis 8.6's volatile-lrm and allkeys-lrm, as
// https://redis.io/docs/latest/develop/reference/eviction/#lrm-eviction
// describes them: like LRU, but only writes refresh a key's clock, so the
// least recently modified keys go first whatever was read since.
func TestEvictLRM(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.StartIsolated(t)
	k := p.Keyhive()
	docCase(t, p, "+OK\r\n", "CONFIG", "SET", "maxmemory-policy", "allkeys-lrm")
	docCase(t, p, "*2\r\n$16\r\nmaxmemory-policy\r\n$11\r\nallkeys-lrm\r\n", "CONFIG", "GET", "maxmemory-policy")
	docCase(t, p, "+OK\r\n", "CONFIG", "SET", "maxmemory-policy", "VOLATILE-LRM")
	docCase(t, p, "-ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction\r\n",
		"CONFIG", "SET", "maxmemory-policy", "lrm")
	docCase(t, p, "+OK\r\n", "CONFIG", "SET", "maxmemory-policy", "allkeys-lrm")
	k.Do("MSET", "read", "1", "written", "2", "idle", "3")
	k.Do("RPUSH", "list", "a")
	time.Sleep(2100 * time.Millisecond)
	k.Do("GET", "read")
	k.Do("EXISTS", "idle")
	k.Do("SET", "written", "x")
	k.Do("RPUSH", "list", "b")
	// A read leaves the clock (OBJECT IDLETIME) alone; a write resets it.
	for key, want := range map[string]int64{"read": 2, "idle": 2, "written": 0, "list": 0} {
		if got := k.Do("OBJECT", "IDLETIME", key).Int; got < want || got > want+1 {
			t.Errorf("OBJECT IDLETIME %s under allkeys-lrm: %d, want %d", key, got, want)
		}
	}
	// Evicting everything: the two keys modified 2 s ago go before the two just modified.
	k.Do("CONFIG", "SET", "notify-keyspace-events", "Ee")
	sub := p.NewConn().Keyhive()
	sub.Do("SUBSCRIBE", "__keyevent@0__:evicted")
	k.Do("CONFIG", "SET", "maxmemory-samples", "10")
	k.Do("CONFIG", "SET", "maxmemory", "1")
	k.Do("SET", "more", "1")
	var order []string
	for range 4 {
		order = append(order, sub.Read().Elems[2].Str)
	}
	slices.Sort(order[:2])
	slices.Sort(order[2:])
	if want := []string{"idle", "read", "list", "written"}; !slices.Equal(order, want) {
		t.Errorf("allkeys-lrm evicted %q, want the unmodified first: %q", order, want)
	}
	k.Do("CONFIG", "SET", "maxmemory", "0")
	// Under LRM a small integer is not shared (each key has its own clock).
	k.Do("CONFIG", "SET", "maxmemory", "1gb")
	k.Do("SET", "n", "7")
	docCase(t, p, ":1\r\n", "OBJECT", "REFCOUNT", "n")
}

// TestMaxMemoryLowered: used_memory is the figure eviction compares with
// maxmemory. Lowering maxmemory below it with CONFIG SET evicts at once (no
// further command needed, as Redis starts evicting in the config apply):
// used_memory is within the limit right after and keys are gone; deleting
// data makes used_memory fall. Each server's own used_memory sets its limit.
func TestMaxMemoryLowered(t *testing.T) {
	p := difftest.StartIsolated(t, "--maxmemory-policy", "allkeys-lru", "--maxmemory-eviction-tenacity", "100")
	for i := range 4000 {
		p.Do("SET", "key:"+strconv.Itoa(i), strings.Repeat("v", 1000))
	}
	for _, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
		used, _ := strconv.ParseInt(infoField(c.Do("INFO", "memory").Str, "used_memory"), 10, 64)
		limit := used - 1<<20 // about a thousand keys fewer
		if r := c.Do("CONFIG", "SET", "maxmemory", limit); r.Str != "OK" {
			t.Fatalf("%s: CONFIG SET maxmemory: %v", c.Name(), r)
		}
		// Eviction runs without any other command: look from outside.
		deadline := time.Now().Add(2 * time.Second)
		for infoField(c.Do("INFO", "stats").Str, "evicted_keys") == "0" {
			if time.Now().After(deadline) {
				t.Fatalf("%s: nothing evicted after CONFIG SET maxmemory", c.Name())
			}
			time.Sleep(time.Millisecond)
		}
		// Eviction goes on in slices after the first key: the server gets
		// under the limit, but on a loaded machine not by the time the
		// first eviction shows. used_memory counts the asking client's own
		// buffers, which grow after eviction ran (redis-server was seen 24
		// bytes over).
		const measuring = 16 << 10
		var after int64
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			after, _ = strconv.ParseInt(infoField(c.Do("INFO", "memory").Str, "used_memory"), 10, 64)
			if after <= limit+measuring {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: used_memory %d above maxmemory %d", c.Name(), after, limit)
			}
		}
		if n := c.Do("DBSIZE").Int; n >= 4000 || n < 2000 {
			t.Errorf("%s: %d keys left of 4000 1 KB keys, 1 MB below the limit", c.Name(), n)
		}
		c.Do("CONFIG", "SET", "maxmemory", 0)
		c.Do("FLUSHALL")
		emptied, _ := strconv.ParseInt(infoField(c.Do("INFO", "memory").Str, "used_memory"), 10, 64)
		if emptied >= after-2<<20 {
			t.Errorf("%s: used_memory %d after FLUSHALL, %d before", c.Name(), emptied, after)
		}
	}
}
