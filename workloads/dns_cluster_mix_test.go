package workloads

import (
	"context"
	"math/rand/v2"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestDNSMixCluster runs seed 000's benchmark mix through go-redis's
// cluster client on three Keyhive masters: four resolver clients' requests
// (pipelined reads, writes of an entry and its "{dnsmeta}:" index entry,
// hit flushes) beside a sweeper that finds every entry due, refreshes or
// deletes it and applies the cap. No request and no sweep may fail.
func TestDNSMixCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("builds keyhive and starts three cluster nodes")
	}
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Skip("redis-cli not found")
	}
	bin, err := difftest.BuildKeyhive(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	addrs, stop, err := difftest.StartCluster(bin, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	defer rdb.Close()
	must(t, dnsPrepare(ctx, rdb))

	const clients, requests = 4, 1000
	var wg sync.WaitGroup
	errs := make(chan error, clients*requests)
	for i := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), 0))
			for range requests {
				if err := dnsRequest(ctx, rdb, rng); err != nil {
					errs <- err
				}
			}
		})
	}
	requestsDone := make(chan struct{})
	go func() { wg.Wait(); close(requestsDone) }()
	sweeper := newDNSCache(rdb, dnsMetaCluster, dnsBenchNames/2)
	sweeps := 0
	for done := false; !done; sweeps++ {
		select {
		case <-requestsDone:
			done = true
		default:
		}
		// An hour on: every entry is due, and older than the warm age.
		if err := sweeper.sweep(ctx, time.Now().Unix()+3600, 100); err != nil {
			t.Errorf("sweep: %v", err)
			break
		}
	}
	<-requestsDone
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	entries, err := scanAll(ctx, nil, rdb, "dns:*", 1000)
	must(t, err)
	indexed, err := rdb.ZCard(ctx, sweeper.index()).Result()
	must(t, err)
	if len(entries) == 0 || len(entries) > dnsBenchNames/2 || indexed > dnsBenchNames/2 {
		t.Errorf("%d entries and %d index members left, want 1 to %d (the cap)", len(entries), indexed, dnsBenchNames/2)
	}
	t.Logf("%d requests, %d sweeps; %d entries and %d index members left", clients*requests, sweeps, len(entries), indexed)
}
