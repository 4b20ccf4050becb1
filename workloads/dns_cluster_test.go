package workloads_test

import (
	"context"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/workloads"
)

// TestDNSCluster runs seed 000's scenario in cluster mode, through
// go-redis's cluster client with the "{dnsmeta}:" prefix, on a cluster of
// three Keyhive masters and on one of three redis-server masters at the same
// time, and compares every reply and the data sets left: no CROSSSLOT nor
// any other error reaches the application.
func TestDNSCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("builds keyhive and starts six cluster nodes")
	}
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Skip("redis-cli not found")
	}
	bin, err := difftest.BuildKeyhive(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runs := map[string]*run{}
	var wg sync.WaitGroup
	for name, addrs := range map[string][]string{"redis": startCluster(t, ""), "keyhive": startCluster(t, bin)} {
		r := &run{env: workloads.NewEnv(addrs[0])}
		runs[name] = r
		admin := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
		defer admin.Close()
		wg.Go(func() {
			defer r.env.Close()
			if r.err = workloads.DNSClusterScenario(ctx, r.env); r.err == nil {
				r.dump, r.err = workloads.DumpCluster(ctx, admin)
			}
		})
	}
	wg.Wait()
	red, kh := runs["redis"], runs["keyhive"]
	if red.err != nil || kh.err != nil {
		t.Fatalf("scenario failed: redis: %v, keyhive: %v", red.err, kh.err)
	}
	if diffs := workloads.Compare(red.env.Transcripts(), kh.env.Transcripts(), 10); len(diffs) > 0 {
		t.Errorf("replies differ:\n%s", strings.Join(diffs, "\n"))
	}
	resolver := kh.env.Transcripts()["resolver"]
	metadata := 0
	for _, rec := range resolver {
		for _, clusterError := range []string{"CROSSSLOT", "MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN"} {
			if strings.Contains(rec.Line, ": "+clusterError+" ") {
				t.Errorf("the application got %s", rec.Line)
			}
		}
		if strings.Contains(rec.Line, " {dnsmeta}:") {
			metadata++
		}
	}
	if metadata == 0 {
		t.Error("no command on a {dnsmeta}: key")
	}
	// The scenario ends with the cache's clear: SCAN of every master and
	// DELs of what it found, cache entries and metadata alike.
	if len(kh.dump) > 0 || len(red.dump) > 0 {
		t.Errorf("keys left after the clear:\nredis:   %v\nkeyhive: %v", red.dump, kh.dump)
	}
	scans := kh.env.Transcripts()["scans"]
	if len(scans) == 0 || !strings.Contains(scans[0].Line, "dns:") {
		t.Errorf("the count by SCAN found no entry: %v", scans)
	}
	t.Logf("%d replies identical, %d on metadata keys", len(resolver), metadata)
}
