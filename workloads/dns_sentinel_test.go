package workloads

import (
	"context"
	"math/rand/v2"
	"net"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestDNSSentinel runs seed 000's resolver cache in sentinel mode: through
// go-redis's failover client, on a Keyhive master with a Keyhive replica
// that three redis-sentinel processes monitor. A manual SENTINEL FAILOVER
// in the middle moves the master; the application's requests go on
// against the promoted replica.
func TestDNSSentinel(t *testing.T) {
	if testing.Short() {
		t.Skip("Sentinel timeouts")
	}
	ctx := context.Background()
	start := func() (string, *redis.Client) {
		addr, stop, err := difftest.StartKeyhive("--repl-diskless-sync-delay", "0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		t.Cleanup(func() { rdb.Close() })
		return addr, rdb
	}
	masterAddr, master := start()
	_, replica := start()
	host, port, _ := net.SplitHostPort(masterAddr)
	must(t, replica.SlaveOf(ctx, host, port).Err())
	var sentinels []string
	for range 3 {
		addr, stop, err := difftest.StartSentinel(masterAddr, nil)
		if err != nil {
			t.Skip(err)
		}
		t.Cleanup(stop)
		sentinels = append(sentinels, addr)
	}
	sentinel := redis.NewSentinelClient(&redis.Options{Addr: sentinels[0]})
	defer sentinel.Close()
	waitUntil(t, "the sentinels see the replica and each other", func() bool {
		for _, addr := range sentinels {
			s := redis.NewSentinelClient(&redis.Options{Addr: addr})
			replicas, _ := s.Replicas(ctx, "mymaster").Result()
			others, _ := s.Sentinels(ctx, "mymaster").Result()
			s.Close()
			if len(replicas) != 1 || len(others) != 2 {
				return false
			}
		}
		return true
	})

	rdb := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "mymaster", SentinelAddrs: sentinels, MaxRetries: 20})
	defer rdb.Close()
	must(t, DNS.Prepare(ctx, rdb))
	rng := rand.New(rand.NewPCG(0, 0))
	run := func(n int) (failed int) {
		for range n {
			if err := DNS.Op(ctx, rdb, rng); err != nil {
				failed++
			}
		}
		return failed
	}
	if failed := run(2000); failed > 0 {
		t.Fatalf("%d of 2000 requests failed before the failover", failed)
	}
	must(t, sentinel.Failover(ctx, "mymaster").Err())
	waitUntil(t, "the replica promoted", func() bool {
		info, _ := replica.Info(ctx, "replication").Result()
		return strings.Contains(info, "role:master")
	})
	waitUntil(t, "the old master follows", func() bool {
		info, _ := master.Info(ctx, "replication").Result()
		return strings.Contains(info, "role:slave") && strings.Contains(info, "master_link_status:up")
	})
	failed := run(2000)
	if failed > 20 {
		t.Fatalf("%d of 2000 requests failed after the failover", failed)
	}
	t.Logf("%d of 2000 requests failed as the failover went on", failed)
}
