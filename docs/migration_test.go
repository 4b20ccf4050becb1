//go:build linux

package docs_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestMigrationGuide runs docs/migration.md's blocks in order against a
// real redis-server holding keys of every type in two databases, while a
// client INCRs a counter on it until the failover turns it away: afterwards
// Keyhive is the master, the redis-server its replica, both have the same
// DEBUG DIGEST, and Keyhive holds every INCR the redis-server acknowledged.
func TestMigrationGuide(t *testing.T) {
	t.Parallel()
	m := setUp(t)
	g := guide(t, m, "docs/migration.md")

	redisAddr, stop, err := difftest.StartRedis()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	redis := dialT(t, redisAddr)
	fill(t, redis)

	// The writer stops at the first refused INCR (READONLY once the
	// redis-server is a replica) or when the test ends.
	var acked atomic.Int64
	done := make(chan struct{})
	writerErr := make(chan error, 1)
	go func() {
		w, err := difftest.Dial(redisAddr)
		if err != nil {
			writerErr <- err
			return
		}
		defer w.Close()
		w.Timeout = 2 * time.Minute // a paused writer waits
		for {
			select {
			case <-done:
				writerErr <- nil
				return
			default:
			}
			r, err := w.Do("INCR", "migration:writes")
			if err != nil {
				writerErr <- err
				return
			}
			if r.IsError() {
				if strings.HasPrefix(r.Str, "READONLY") {
					writerErr <- nil
				} else {
					writerErr <- fmt.Errorf("INCR: %s", r.Str)
				}
				return
			}
			acked.Add(1)
			time.Sleep(time.Millisecond)
		}
	}()

	_, port, _ := strings.Cut(redisAddr, ":")
	ports := freePorts(t, g.text, map[string]string{"6379": port})
	runSnippet(t, m, g, ports, 4*time.Minute, func() {
		close(done)
		if err := <-writerErr; err != nil {
			t.Errorf("writer: %v", err)
		}
		keyhive := dialT(t, "127.0.0.1:"+ports["6380"])
		if role := do(t, keyhive, "ROLE"); len(role.Elems) == 0 || role.Elems[0].Str != "master" {
			t.Fatalf("Keyhive's ROLE after the guide: %v", role)
		}
		t.Logf("the writer's INCRs acknowledged by the redis-server: %d", acked.Load())
		if got := do(t, keyhive, "GET", "migration:writes").Str; got != fmt.Sprint(acked.Load()) {
			t.Errorf("Keyhive has migration:writes %s, the redis-server acknowledged %d INCRs", got, acked.Load())
		}
		// The redis-server, now Keyhive's replica, has what Keyhive has.
		deadline := time.Now().Add(time.Minute)
		for {
			a, b := do(t, keyhive, "DEBUG", "DIGEST").Str, do(t, redis, "DEBUG", "DIGEST").Str
			if a == b && a != strings.Repeat("0", 40) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("digests differ: Keyhive %s, redis-server %s", a, b)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if n := do(t, keyhive, "DBSIZE").Int; n < 3600 { // database 0 alone
			t.Errorf("Keyhive's DBSIZE %d after the migration", n)
		}
	})
}

func dialT(t *testing.T, addr string) *difftest.Conn {
	t.Helper()
	c, err := difftest.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func do(t *testing.T, c *difftest.Conn, args ...any) difftest.Reply {
	t.Helper()
	r, err := c.Do(args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return r
}

// fill writes about 7,400 keys of every type, small and large encodings,
// some with TTLs, into databases 0 and 3, pipelined.
func fill(t *testing.T, c *difftest.Conn) {
	t.Helper()
	var cmds [][]any
	add := func(args ...any) { cmds = append(cmds, args) }
	for _, db := range []int{0, 3} {
		add("SELECT", db)
		for i := range 400 {
			k := fmt.Sprintf("db%d:%d", db, i)
			add("SET", "str:"+k, strings.Repeat("v", i%90))
			add("SET", "int:"+k, i*1000)
			add("RPUSH", "list:"+k, "a", "b", i)
			add("SADD", "intset:"+k, 1, 2, i)
			add("SADD", "set:"+k, "x", "y", k)
			add("ZADD", "zset:"+k, 1.5, "a", i, "b")
			add("HSET", "hash:"+k, "f", i, "g", k)
			add("SETBIT", "bits:"+k, i*13, 1)
			add("PFADD", "hll:"+k, "a", "b", k)
			if i%10 == 0 {
				add("SET", "ttl:"+k, i, "EX", 100000)
				add("PEXPIRE", "hash:"+k, 50000000)
				add("GEOADD", "geo:"+k, 13.361389, 38.115556, "Palermo", 15.087269, 37.502669, "Catania")
			}
		}
		for i := range 1000 { // past the compact encodings
			add("RPUSH", "biglist", strings.Repeat("e", i%100))
			add("SADD", "bigset", fmt.Sprint("m", i))
			add("SADD", "bigintset", i*7)
			add("ZADD", "bigzset", i, fmt.Sprint("m", i))
			add("HSET", "bighash", fmt.Sprint("f", i), strings.Repeat("h", i%90))
			add("XADD", "stream", "*", "f", i, "g", "v")
			add("PFADD", "bighll", fmt.Sprint("e", i))
		}
		add("XGROUP", "CREATE", "stream", "g1", "0")
		add("XREADGROUP", "GROUP", "g1", "alice", "COUNT", 50, "STREAMS", "stream", ">")
		add("SET", "big:string", strings.Repeat("x", 100000))
	}
	add("SELECT", 0)
	for _, args := range cmds {
		if err := c.Send(args...); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range cmds {
		r, err := c.Read()
		if err != nil {
			t.Fatal(err)
		}
		if r.IsError() {
			t.Fatalf("%v: %s", args, r.Str)
		}
	}
}
