package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/redis/go-redis/v9"
)

// startReplicatedCluster starts six Keyhive nodes and has redis-cli create
// a cluster of three masters with a replica each. It returns the nodes'
// addresses and each master's replica, by address.
func startReplicatedCluster(t *testing.T, bin string) (addrs []string, replicaOf map[string]string) {
	t.Helper()
	for range 6 {
		addr, _ := startClusterNodeStop(t, bin, "--repl-diskless-sync-delay", "0")
		addrs = append(addrs, addr)
	}
	out := redisCli(t, append(append([]string{"--cluster", "create"}, addrs...), "--cluster-replicas", "1", "--cluster-yes")...)
	waitClusterAgrees(t, addrs...)
	byID := map[string]string{}
	for _, a := range addrs {
		byID[nodeID(t, a)] = a
	}
	// Every node learns the replicas' role from their next messages.
	deadline := time.Now().Add(10 * time.Second)
	for _, a := range addrs {
		for {
			nodes := inlineText(a, "CLUSTER NODES")
			replicaOf = map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(nodes), "\n") {
				if f := strings.Fields(line); len(f) > 3 && strings.Contains(f[2], "slave") {
					replicaOf[byID[f[3]]] = byID[f[0]]
				}
			}
			if len(replicaOf) == 3 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s does not see three masters with a replica each:\n%s\n%s", a, nodes, out)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return addrs, replicaOf
}

// TestClusterReplicas: redis-cli --cluster create of six Keyhive nodes with
// --cluster-replicas 1 gives three masters with a replica each that
// --cluster check accepts; CLUSTER REPLICAS lists them; what go-redis's
// cluster client writes reaches the replicas, which answer -MOVED for
// their master's slots unless READONLY, and then serve the reads.
func TestClusterReplicas(t *testing.T) {
	bin := buildKeyhiveBinary(t)
	addrs, replicaOf := startReplicatedCluster(t, bin)
	for master, replica := range replicaOf {
		r, err := difftest.Inline(master, "CLUSTER REPLICAS "+nodeID(t, master))
		if err != nil || len(r.Elems) != 1 || !strings.HasPrefix(r.Elems[0].Str, nodeID(t, replica)+" ") {
			t.Errorf("CLUSTER REPLICAS of %s: %q %v", master, r.Raw, err)
		}
		if r, _ := difftest.Inline(master, "CLUSTER REPLICATE "+nodeID(t, replica)); r.Str != "ERR I can only replicate a master, not a replica." {
			t.Errorf("CLUSTER REPLICATE of a replica: %q", r.Raw)
		}
	}

	load := startWriteLoad(addrs, 4)
	time.Sleep(time.Second)
	load.stopWrites(t)
	ctx := context.Background()
	for master := range replicaOf {
		c := redis.NewClient(&redis.Options{Addr: master})
		n, err := c.Do(ctx, "WAIT", 1, 5000).Int()
		c.Close()
		if err != nil || n != 1 {
			t.Fatalf("WAIT 1 on %s: %d %v", master, n, err)
		}
	}
	// A client that reads from the replicas finds every acknowledged write.
	reads := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ReadOnly: true})
	defer reads.Close()
	for key, want := range load.acked {
		if got, err := reads.Get(ctx, key).Int(); err != nil || got != want {
			t.Fatalf("GET %s from a replica = %d, %v; want %d", key, got, err, want)
		}
	}
	for master, replica := range replicaOf {
		var key string
		for k := range load.acked {
			if r, _ := difftest.Inline(master, "EXISTS "+k); r.Int == 1 {
				key = k
				break
			}
		}
		c := redis.NewClient(&redis.Options{Addr: replica})
		if err := c.Get(ctx, key).Err(); err == nil || !strings.HasPrefix(err.Error(), "MOVED ") || !strings.HasSuffix(err.Error(), master) {
			t.Errorf("GET %s on the replica %s without READONLY: %v", key, replica, err)
		}
		c.Close()
	}
	t.Logf("%d keys read from the replicas", len(load.acked))
}
