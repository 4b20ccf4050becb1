package server_test

import (
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/server"
)

// TestSoak: many connections send every command of the table with random
// arguments, with connect/disconnect churn; afterwards the server still
// answers, and its goroutines and heap are back to where they started.
// CI runs it for 15 s with 500 connections; the long run is
// KEYHIVE_SOAK=10m go test ./server -run TestSoak -timeout 30m.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak")
	}
	duration := 15 * time.Second
	if d, err := time.ParseDuration(os.Getenv("KEYHIVE_SOAK")); err == nil {
		duration = d
	}
	const conns = 500
	srv := startKeyhive(t, "--maxmemory", "256mb", "--maxmemory-policy", "allkeys-lru")
	runtime.GC()
	baseGoroutines := runtime.NumGoroutine()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)

	names := commandNames(t, srv)
	var sent, closed, dialErrors atomic.Int64
	stop := time.Now().Add(duration)
	var wg sync.WaitGroup
	for i := range conns {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			for time.Now().Before(stop) {
				c, err := difftest.Dial(srv.Addr())
				if err != nil {
					// A full accept backlog on a loaded machine: churn too.
					dialErrors.Add(1)
					time.Sleep(10 * time.Millisecond)
					continue
				}
				c.Timeout = 500 * time.Millisecond // a blocked or subscribed client is dropped
				// Churn: each connection lives for a random number of commands.
				for n := rng.IntN(200); n > 0 && time.Now().Before(stop); n-- {
					if _, err := c.Do(randomCommand(rng, names)...); err != nil {
						break // closed by the server (CLIENT KILL, limits) or timed out
					}
					sent.Add(1)
				}
				c.Close()
				closed.Add(1)
			}
		})
	}
	wg.Wait()
	t.Logf("%d commands on %d connections in %v (%d dials timed out)", sent.Load(), closed.Load(), duration, dialErrors.Load())
	if dialErrors.Load() > closed.Load()/10 {
		t.Errorf("%d of %d dials failed", dialErrors.Load(), dialErrors.Load()+closed.Load())
	}

	c, err := difftest.Dial(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if r, err := c.Do("PING"); err != nil || r.Str != "PONG" {
		t.Fatalf("after the soak: %v %v", r, err)
	}
	c.Do("FLUSHALL")
	c.Do("SCRIPT", "FLUSH")
	c.Do("FUNCTION", "FLUSH")
	c.Close()

	// Goroutines: each client's is gone once its connection closed.
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > baseGoroutines+5 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > baseGoroutines+5 {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines: %d before, %d after\n%s", baseGoroutines, g, buf[:runtime.Stack(buf, true)])
	}
	runtime.GC()
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	t.Logf("heap in use: %d MB before, %d MB after", base.HeapInuse>>20, after.HeapInuse>>20)
	if after.HeapInuse > base.HeapInuse+64<<20 {
		t.Errorf("heap in use grew from %d MB to %d MB", base.HeapInuse>>20, after.HeapInuse>>20)
	}
}

// commandNames lists the server's commands, less those that would end the
// soak rather than exercise it.
func commandNames(t *testing.T, srv *server.Server) []string {
	c, err := difftest.Dial(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, err := c.Do("COMMAND", "LIST")
	if err != nil {
		t.Fatal(err)
	}
	skip := map[string]bool{"shutdown": true, "debug": true, "config": true, "monitor": true, "sync": true, "psync": true, "replicaof": true, "slaveof": true}
	var names []string
	for _, e := range r.Elems {
		if !skip[e.Str] {
			names = append(names, e.Str)
		}
	}
	return names
}

// soakArgs are the arguments commands are built from: keys (some sharing a
// slot), numbers at the edges, option words and patterns.
var soakArgs = []string{
	"k1", "k2", "k3", "{t}a", "{t}b", "list", "set", "hash", "zset", "", "*", "k*", "[a-",
	"0", "1", "-1", "2", "10", "100", "-100", "0.5", "1e10", "inf", "-inf", "nan", "(1", "[a", "+", "-",
	"9223372036854775807", "-9223372036854775808", "4294967296",
	"NX", "XX", "GT", "LT", "CH", "INCR", "EX", "PX", "KEEPTTL", "GET", "COUNT", "LIMIT", "MATCH", "TYPE",
	"WITHSCORES", "WITHVALUES", "BYSCORE", "BYLEX", "REV", "LEFT", "RIGHT", "MIN", "MAX", "ALPHA", "STORE",
	"RANK", "MAXLEN", "BEFORE", "AFTER", "AND", "OR", "NOT", "u8", "i16", "#1", "SET", "OVERFLOW", "FAIL",
	"return 1", "return redis.call('incr', KEYS[1])", "ON", "OFF", "YES", "NO", "BCAST", "PREFIX",
}

func randomCommand(rng *rand.Rand, names []string) []any {
	cmd := []any{names[rng.IntN(len(names))]}
	for n := rng.IntN(7); n > 0; n-- {
		if rng.IntN(8) == 0 {
			cmd = append(cmd, strconv.Itoa(rng.IntN(1000)))
		} else {
			cmd = append(cmd, soakArgs[rng.IntN(len(soakArgs))])
		}
	}
	return cmd
}
