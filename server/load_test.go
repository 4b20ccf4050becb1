package server_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestBlockingQueueUnderLoad runs a job queue the way applications do:
// producers LPUSH onto several queues in pipelines,
// consumers BRPOP from them with short timeouts, others BLMOVE into a
// processing list and LREM it back. Every job must be consumed exactly once.
func TestBlockingQueueUnderLoad(t *testing.T) {
	slowTest(t, "a load of blocked clients")
	srv := startKeyhive(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: 64})
	defer rdb.Close()

	const producers, consumers, jobs = 4, 12, 3000
	queues := []string{"q:{a}", "q:{b}", "q:{c}"}
	var seen sync.Map
	var consumed sync.WaitGroup
	consumed.Add(producers * jobs)
	done := make(chan struct{})
	var wg sync.WaitGroup
	take := func(job string) {
		if _, dup := seen.LoadOrStore(job, true); dup {
			t.Errorf("job %s consumed twice", job)
			return
		}
		consumed.Done()
	}
	for c := range consumers {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				if c%3 == 0 {
					// Reliable-queue pattern: move into a processing list.
					q := queues[c%len(queues)]
					job, err := rdb.BLMove(ctx, q, "processing:"+strconv.Itoa(c), "RIGHT", "LEFT", 50*time.Millisecond).Result()
					if err == redis.Nil {
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					if err := rdb.LRem(ctx, "processing:"+strconv.Itoa(c), 1, job).Err(); err != nil {
						t.Error(err)
						return
					}
					take(job)
					continue
				}
				kv, err := rdb.BRPop(ctx, 50*time.Millisecond, queues...).Result()
				if err == redis.Nil {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				take(kv[1])
			}
		})
	}
	for p := range producers {
		wg.Go(func() {
			for i := 0; i < jobs; i += 10 {
				pipe := rdb.Pipeline()
				for j := i; j < i+10; j++ {
					pipe.LPush(ctx, queues[(p+j)%len(queues)], fmt.Sprintf("job-%d-%d", p, j))
				}
				if _, err := pipe.Exec(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	finished := make(chan struct{})
	go func() { consumed.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(60 * time.Second):
		t.Error("not every job was consumed")
	}
	close(done)
	wg.Wait()
	for _, q := range queues {
		if n := rdb.LLen(ctx, q).Val(); n != 0 {
			t.Errorf("%s still holds %d jobs", q, n)
		}
	}
	if n := rdb.Info(ctx, "clients").Val(); !strings.Contains(n, "blocked_clients:0") {
		t.Errorf("INFO clients after the run: %s", n)
	}
}

// TestWatchUnderLoad: the optimistic-locking pattern (WATCH, read, MULTI,
// write, EXEC, retry on failure) from many clients at once must lose no
// update, and MULTI/EXEC must apply each transaction atomically.
func TestWatchUnderLoad(t *testing.T) {
	srv := startKeyhive(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: 32})
	defer rdb.Close()

	const clients, increments = 16, 100
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for range increments {
				for {
					err := rdb.Watch(ctx, func(tx *redis.Tx) error {
						n, err := tx.Get(ctx, "balance").Int()
						if err != nil && err != redis.Nil {
							return err
						}
						_, err = tx.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
							pipe.Set(ctx, "balance", n+1, 0)
							pipe.RPush(ctx, "log", n+1)
							return nil
						})
						return err
					}, "balance")
					if err == redis.TxFailedErr {
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					break
				}
			}
		})
	}
	wg.Wait()
	if n, _ := rdb.Get(ctx, "balance").Int(); n != clients*increments {
		t.Errorf("balance %d, want %d", n, clients*increments)
	}
	log := rdb.LRange(ctx, "log", 0, -1).Val()
	for i, v := range log {
		if v != strconv.Itoa(i+1) {
			t.Fatalf("log[%d] = %s: transactions interleaved", i, v)
		}
	}
}

// TestShutdownDuringScript: SHUTDOWN NOSAVE stops a server whose script has
// written and loops forever, as in Redis.
func TestShutdownDuringScript(t *testing.T) {
	srv := startKeyhive(t, "--busy-reply-threshold", "50")
	ctx := context.Background()
	a := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	b := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer a.Close()
	defer b.Close()
	go a.Eval(ctx, "redis.call('set', 'k', 1) while true do end", nil)
	time.Sleep(200 * time.Millisecond)
	if err := b.Do(ctx, "SCRIPT", "KILL").Err(); err == nil || !strings.HasPrefix(err.Error(), "UNKILLABLE") {
		t.Errorf("SCRIPT KILL: %v", err)
	}
	b.Do(ctx, "SHUTDOWN", "NOSAVE")
	select {
	case <-srv.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not shut down")
	}
}

// TestSeedEnqueueConcurrent: 50 clients running seed 002's enqueue script at
// once never lose or duplicate a position.
func TestSeedEnqueueConcurrent(t *testing.T) {
	srv := startKeyhive(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: 50})
	defer rdb.Close()
	sha := rdb.ScriptLoad(ctx, seedScript(t, "enqueue")).Val()
	const clients, each = 50, 40
	const q = "queue:{c}"
	var wg sync.WaitGroup
	var admitted sync.Map
	for c := range clients {
		wg.Go(func() {
			for i := range each {
				pos := fmt.Sprintf("pos-%d-%d", c, i)
				ip := fmt.Sprintf("ip-%d", (c*each+i)%700) // every IP twice or more
				res, err := rdb.EvalSha(ctx, sha, []string{q + ":waiting:" + strconv.Itoa(i%4), q + ":positions", "position:" + pos, "ipmap:{c}:" + ip, "heartbeat:active"},
					pos, 1704067200000000+int64(c*each+i), ip, 1800, "{}").Slice()
				if err != nil {
					t.Error(err)
					return
				}
				if res[0].(int64) == 1 {
					if _, dup := admitted.LoadOrStore(ip, pos); dup {
						t.Errorf("ip %s enqueued twice", ip)
					}
				}
			}
		})
	}
	wg.Wait()
	n := 0
	admitted.Range(func(ip, pos any) bool {
		n++
		if got := rdb.Get(ctx, "ipmap:{c}:"+ip.(string)).Val(); got != pos.(string) {
			t.Errorf("ipmap %s = %q, want %s", ip, got, pos)
		}
		if rdb.ZScore(ctx, q+":positions", pos.(string)).Err() != nil {
			t.Errorf("position %s lost", pos)
		}
		return true
	})
	total := int64(0)
	for p := range 4 {
		total += rdb.LLen(ctx, q+":waiting:"+strconv.Itoa(p)).Val()
	}
	if n != 700 || total != 700 || rdb.ZCard(ctx, q+":positions").Val() != 700 {
		t.Errorf("%d admitted, %d queued, %d positions; want 700 each", n, total, rdb.ZCard(ctx, q+":positions").Val())
	}
}

// TestTrackingLocalCacheCoherent keeps a local cache in front of Keyhive,
// kept coherent by CLIENT TRACKING (default mode, then BCAST), while other
// clients make 100,000 writes in all: a value served from the cache is never
// older than the last write acknowledged before the reader's last round trip.
func TestTrackingLocalCacheCoherent(t *testing.T) {
	slowTest(t, "a load of tracking clients")
	for _, mode := range [][]any{{"CLIENT", "TRACKING", "on"}, {"CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "cache:"}} {
		srv := startKeyhive(t)
		ctx := context.Background()
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: 8})
		defer rdb.Close()
		reader := dial(t, srv.Addr())
		reader.Do("HELLO", 3)
		if r, _ := reader.Do(mode...); r.Str != "OK" {
			t.Fatalf("%v: %v", mode, r)
		}

		const keys, writers, writes = 200, 8, 50000
		var acked [keys]atomic.Int64
		var keyMu [keys]sync.Mutex
		var seq atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(w), 1))
				for range writes / writers {
					k := rng.IntN(keys)
					keyMu[k].Lock() // per key, acknowledged values only grow
					v := seq.Add(1)
					err := rdb.Set(ctx, fmt.Sprintf("cache:%d", k), v, 0).Err()
					acked[k].Store(v)
					keyMu[k].Unlock()
					if err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		go func() { wg.Wait(); close(stop) }()

		cache := map[int]int64{}
		apply := func(r difftest.Reply) bool { // reports whether r was a push
			if r.Kind != difftest.KindPush {
				return false
			}
			if len(r.Elems) == 2 && r.Elems[1].Kind == difftest.KindArray {
				for _, k := range r.Elems[1].Elems {
					var n int
					fmt.Sscanf(k.Str, "cache:%d", &n)
					delete(cache, n)
				}
			} else {
				clear(cache)
			}
			return true
		}
		read := func() difftest.Reply {
			for {
				r, err := reader.Read()
				if err != nil {
					t.Fatal(err)
				}
				if !apply(r) {
					return r
				}
			}
		}
		rng := rand.New(rand.NewPCG(9, 9))
		served, hits := 0, 0
	loop:
		for {
			select {
			case <-stop:
				break loop
			default:
			}
			k := rng.IntN(keys)
			floor := acked[k].Load()
			reader.Send("PING")
			read()
			v, ok := cache[k]
			if ok {
				hits++
			} else {
				reader.Send("GET", fmt.Sprintf("cache:%d", k))
				r := read()
				v, _ = strconv.ParseInt(r.Str, 10, 64)
				cache[k] = v
			}
			served++
			if v < floor {
				t.Fatalf("%v: key %d served %d from the cache, older than acknowledged %d", mode, k, v, floor)
			}
		}
		t.Logf("%v: %d reads, %d from the local cache", mode, served, hits)
		srv.Close()
	}
}

// TestCloseWhileClientsRunCommands: a client's goroutine runs its commands
// inside its socket's RawConn.Read, so closing its connection must not wait
// for that call to return: Close (holding the client list's lock, which
// CLIENT LIST takes) and clients killing each other finish at once.
func TestCloseWhileClientsRunCommands(t *testing.T) {
	for range 10 {
		srv := startKeyhive(t)
		ctx := context.Background()
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1})
				defer c.Close()
				for j := 0; ; j++ {
					var err error
					if i%2 == 0 {
						err = c.Do(ctx, "CLIENT", "LIST").Err()
					} else {
						err = c.Do(ctx, "CLIENT", "KILL", "ID", strconv.Itoa(j%8+1)).Err()
					}
					if err != nil && !strings.Contains(err.Error(), "No such client") {
						return // closed
					}
				}
			}()
		}
		time.Sleep(50 * time.Millisecond)
		closed := make(chan struct{})
		go func() {
			srv.Close()
			close(closed)
		}()
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Fatal("Close did not return")
		}
		wg.Wait()
	}
}
