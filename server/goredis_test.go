package server_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestGoRedisClient drives Keyhive through go-redis v9 the way applications do:
// RESP3 handshake, typed commands, pipelines, SCAN iteration and redis.Nil.
func TestGoRedisClient(t *testing.T) {
	srv := startKeyhive(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()

	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, "ql:v1:link:abc", `{"u":"https://example.com","p":true}`, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := rdb.Get(ctx, "ql:v1:link:abc").Result(); err != nil || v != `{"u":"https://example.com","p":true}` {
		t.Fatalf("get: %q %v", v, err)
	}
	if _, err := rdb.Get(ctx, "missing").Result(); !errors.Is(err, redis.Nil) {
		t.Fatalf("missing key: %v", err)
	}
	if ttl := rdb.TTL(ctx, "ql:v1:link:abc").Val(); ttl < 59*time.Minute {
		t.Fatalf("ttl %v", ttl)
	}
	ok, err := rdb.SetNX(ctx, "lock:x", "1", 30*time.Second).Result()
	if err != nil || !ok {
		t.Fatalf("setnx: %v %v", ok, err)
	}
	if ok, _ := rdb.SetNX(ctx, "lock:x", "1", 30*time.Second).Result(); ok {
		t.Fatal("second SETNX succeeded")
	}

	pipe := rdb.Pipeline()
	for i := range 100 {
		pipe.IncrBy(ctx, fmt.Sprintf("hits:%d", i%10), 2)
		pipe.Expire(ctx, fmt.Sprintf("hits:%d", i%10), time.Minute)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if v := rdb.Get(ctx, "hits:3").Val(); v != "20" {
		t.Fatalf("hits:3 = %q", v)
	}

	var keys []string
	iter := rdb.Scan(ctx, 0, "hits:*", 3).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if iter.Err() != nil || len(keys) != 10 {
		t.Fatalf("scan found %d keys: %v", len(keys), iter.Err())
	}
	if f, err := rdb.IncrByFloat(ctx, "f", 10.5).Result(); err != nil || f != 10.5 {
		t.Fatalf("incrbyfloat %v %v", f, err)
	}
	if n := rdb.Exists(ctx, "hits:1", "hits:2", "nope").Val(); n != 2 {
		t.Fatalf("exists = %d", n)
	}
	if err := rdb.Do(ctx, "NOSUCHCOMMAND").Err(); err == nil || err.Error() != "ERR unknown command 'NOSUCHCOMMAND', with args beginning with: " {
		t.Fatalf("unknown command error: %v", err)
	}
}

// TestConcurrentIncr is the lost-update check: 50 clients, 100,000 INCRs.
func TestConcurrentIncr(t *testing.T) {
	srv := startKeyhive(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: 50})
	defer rdb.Close()
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 2000 {
				if err := rdb.Incr(ctx, "counter").Err(); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if v := rdb.Get(ctx, "counter").Val(); v != "100000" {
		t.Fatalf("counter = %s, want 100000", v)
	}
}

// TestUnixSocket serves clients on a unix socket only: as in Redis, port 0 with
// a unixsocket means no TCP listener.
func TestUnixSocket(t *testing.T) {
	path := t.TempDir() + "/keyhive.sock"
	srv := startKeyhive(t, "--unixsocket", path, "--unixsocketperm", "700")
	if srv.Addr() != path {
		t.Fatalf("Addr() = %q, want the socket path", srv.Addr())
	}
	rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: path})
	defer rdb.Close()
	ctx := context.Background()
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v := rdb.Get(ctx, "k").Val(); v != "v" {
		t.Fatalf("get = %q", v)
	}
	info := rdb.ClientInfo(ctx).Val()
	if info == nil || info.Flags&redis.ClientUnixSocket == 0 {
		t.Fatalf("client info over the unix socket: %+v", info)
	}
}

// TestSwapDBUnderLoad swaps databases while other clients use them: every
// command must see one whole database, before or after a swap (the race
// detector guards the database table).
func TestSwapDBUnderLoad(t *testing.T) {
	srv := startKeyhive(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: 8})
	defer rdb.Close()
	rdb.Set(ctx, "where", "db0", 0)
	db1 := redis.NewClient(&redis.Options{Addr: srv.Addr(), DB: 1})
	defer db1.Close()
	db1.Set(ctx, "where", "db1", 0)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 300 {
			if err := rdb.Do(ctx, "SWAPDB", 0, 1).Err(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for range 300 {
		if v := rdb.Get(ctx, "where").Val(); v != "db0" && v != "db1" {
			t.Fatalf("GET during SWAPDB = %q", v)
		}
	}
	<-done
	if a, b := rdb.Get(ctx, "where").Val(), db1.Get(ctx, "where").Val(); a == b {
		t.Fatalf("both databases hold %q", a)
	}
}

// TestScriptCacheFromConcurrentClients loads, runs and flushes scripts and
// functions from several connections at once (the workloads' tests flush
// the script cache while another connection loads): the engine's state must
// be serialized like the keyspace (run with -race).
func TestScriptCacheFromConcurrentClients(t *testing.T) {
	srv := startKeyhive(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
			defer rdb.Close()
			lib := fmt.Sprintf("#!lua name=lib%d\nredis.register_function('f%d', function() return %d end)", i, i, i)
			for range 100 {
				sha, err := rdb.ScriptLoad(ctx, fmt.Sprintf("return %d", i)).Result()
				if err != nil {
					t.Error(err)
					return
				}
				rdb.ScriptExists(ctx, sha)
				rdb.EvalSha(ctx, sha, nil) // NOSCRIPT when another client flushed in between
				rdb.FunctionLoadReplace(ctx, lib)
				rdb.FunctionList(ctx, redis.FunctionListQuery{})
				if i == 0 {
					rdb.ScriptFlush(ctx)
					rdb.FunctionFlush(ctx)
				}
			}
		})
	}
	wg.Wait()
}
