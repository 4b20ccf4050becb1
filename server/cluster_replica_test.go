package server_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/redis/go-redis/v9"
)

// TestClusterReplicas: redis-cli --cluster create of six Keyhive nodes with
// --cluster-replicas 1 gives three masters with a replica each that
// --cluster check accepts; CLUSTER REPLICAS lists them; what go-redis's
// cluster client writes reaches the replicas, which answer -MOVED for
// their master's slots unless READONLY, and then serve the reads.
func TestClusterReplicas(t *testing.T) {
	slowTest(t, "a six-process cluster")
	bin := buildKeyhiveBinary(t)
	addrs, replicaOf, _ := startReplicatedCluster(t, bin)
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
	// CLUSTER SHARDS lists each master with its replica and the offset its
	// messages carry.
	admin := redis.NewClient(&redis.Options{Addr: addrs[0]})
	defer admin.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		shards, err := admin.ClusterShards(ctx).Result()
		good := err == nil && len(shards) == 3
		for _, sh := range shards {
			if len(sh.Nodes) != 2 || sh.Nodes[0].Role != "master" || sh.Nodes[1].Role != "replica" || sh.Nodes[1].ReplicationOffset == 0 {
				good = false
			}
		}
		if good {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("CLUSTER SHARDS: %+v %v", shards, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("%d keys read from the replicas", len(load.acked))
}

// TestClusterReplicaFailover: a master killed (SIGKILL) under a go-redis
// cluster client's write load is replaced by its replica, elected by the
// other masters; every write WAIT 1 confirmed before the kill is on the
// new master, which keeps the old history's ID as replid2, and the client
// writes to the slots again. KEYHIVE_CLUSTER_FAILOVER_TRIALS runs it more
// than once.
func TestClusterReplicaFailover(t *testing.T) {
	slowTest(t, "a six-process cluster, a master killed and replaced")
	trials := 1
	if n, err := strconv.Atoi(os.Getenv("KEYHIVE_CLUSTER_FAILOVER_TRIALS")); err == nil && n > 0 {
		trials = n
	}
	bin := buildKeyhiveBinary(t)
	for i := range trials {
		t.Run(fmt.Sprint("trial", i), func(t *testing.T) { clusterFailoverTrial(t, bin) })
	}
}

// failoverNodeTimeout is the failover test's cluster-node-timeout: the
// failure detection takes one to one and a half, the election's delay
// half a second to a second; twice it leaves room on a busy machine.
const failoverNodeTimeout = 3000

func clusterFailoverTrial(t *testing.T, bin string) {
	addrs, replicaOf, kill := startReplicatedCluster(t, bin, "--cluster-node-timeout", strconv.Itoa(failoverNodeTimeout))
	var victim, heir string
	for m, r := range replicaOf {
		victim, heir = m, r
		break
	}
	// A hash tag served by the victim.
	var tag string
	for i := 0; tag == ""; i++ {
		candidate := fmt.Sprintf("{f%d}", i)
		if r, err := difftest.Inline(victim, "EXISTS "+candidate); err == nil && !strings.HasPrefix(r.Str, "MOVED") {
			tag = candidate
		}
	}
	ctx := context.Background()
	// The cluster client's load, whose errors while the slots have no
	// master are expected.
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRedirects: 16})
	defer cc.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var ok, failed atomic.Int64
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if cc.Set(ctx, fmt.Sprintf("load:%d:%d", g, i%1000), i, 0).Err() == nil {
					ok.Add(1)
				} else {
					failed.Add(1)
				}
			}
		}()
	}
	defer func() {
		close(stop)
		wg.Wait()
		t.Logf("cluster client: %d writes acknowledged, %d failed", ok.Load(), failed.Load())
	}()
	// Writes to the victim that its replica confirmed (WAIT 1).
	direct := redis.NewClient(&redis.Options{Addr: victim, MaxRetries: -1})
	var confirmed []int
	for i := 0; i < 200; i++ {
		if err := direct.Set(ctx, tag+strconv.Itoa(i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
		if n, err := direct.Do(ctx, "WAIT", 1, 1000).Int(); err == nil && n == 1 {
			confirmed = append(confirmed, i)
		}
	}
	direct.Close()
	if len(confirmed) == 0 {
		t.Fatal("no write confirmed by WAIT 1")
	}
	victimID := nodeID(t, victim)
	kill[victim]()
	killed := time.Now()
	timeout := time.Duration(failoverNodeTimeout) * time.Millisecond
	var detected time.Duration // when the heir flagged the victim fail
	for {
		nodes := inlineText(heir, "CLUSTER NODES")
		if i := strings.Index(nodes, victimID); detected == 0 && i >= 0 && strings.Contains(strings.SplitN(nodes[i:], "\n", 2)[0], ",fail ") {
			detected = time.Since(killed)
		}
		if strings.Contains(inlineText(heir, "INFO replication"), "role:master") && strings.Contains(firstLine(nodes), "myself,master") {
			break
		}
		if time.Since(killed) > 10*timeout {
			t.Fatalf("the replica is not promoted:\n%s", nodes)
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(killed)
	t.Logf("replica promoted %v after the kill, the failure flagged after %v (cluster-node-timeout %v)", took, detected, timeout)
	// The failure detection takes one to one and a half node timeouts on a
	// quiet machine: what it took beyond is the machine's delay, which the
	// election meets too.
	if delay := max(detected-timeout*3/2, 0); took > 2*timeout+2*delay {
		t.Errorf("promotion took %v, over twice cluster-node-timeout and twice the %v the detection was late", took, delay)
	}
	heirClient := redis.NewClient(&redis.Options{Addr: heir})
	defer heirClient.Close()
	for _, i := range confirmed {
		if got, err := heirClient.Get(ctx, tag+strconv.Itoa(i)).Int(); err != nil || got != i {
			t.Fatalf("GET %s%d on the new master = %d, %v", tag, i, got, err)
		}
	}
	info := inlineText(heir, "INFO replication")
	if !strings.Contains(info, "role:master") || strings.Contains(info, "master_replid2:0000000000000000000000000000000000000000") {
		t.Errorf("the new master's replication:\n%s", info)
	}
	// A new cluster client (the load's reloads its slot map every ten
	// seconds) finds the slots on the new master.
	fresh := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	defer fresh.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := fresh.Set(ctx, tag+"after", 1, 0).Err()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			var b strings.Builder
			for _, a := range addrs {
				if a != victim {
					fmt.Fprintf(&b, "--- %s\n%s\n", a, inlineText(a, "CLUSTER NODES"))
				}
			}
			t.Fatalf("a cluster client cannot write to the failed master's slots: %v\n%s", err, b.String())
		}
		fresh.ReloadState(ctx)
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("%d writes confirmed by WAIT 1, all on the new master", len(confirmed))
}

// firstLine is s's first line.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// TestClusterManualFailover: CLUSTER FAILOVER on a replica swaps it with
// its master (paused, caught up, elected), with every write the master
// acknowledged before it there; TAKEOVER then FORCE swap them back and
// forth; the errors are Redis's. The master PINGs its replicas every second,
// so a PING falls in the paused window often: it must not move the offset
// the replica waits for (no PING while paused for a failover).
func TestClusterManualFailover(t *testing.T) {
	slowTest(t, "a six-process cluster swapped three times")
	bin := buildKeyhiveBinary(t)
	_, replicaOf, _ := startReplicatedCluster(t, bin, "--repl-ping-replica-period", "1")
	var master, replica string
	for m, r := range replicaOf {
		master, replica = m, r
		break
	}
	for _, c := range []struct{ addr, command, want string }{
		{master, "CLUSTER FAILOVER", "ERR You should send CLUSTER FAILOVER to a replica"},
		{replica, "CLUSTER FAILOVER SOON", "ERR syntax error"},
		{replica, "CLUSTER FAILOVER FORCE NOW", "ERR syntax error"},
	} {
		if r, _ := difftest.Inline(c.addr, c.command); r.Str != c.want {
			t.Errorf("%s: %q, want %q", c.command, r.Raw, c.want)
		}
	}
	ctx := context.Background()
	var tag string
	for i := 0; tag == ""; i++ {
		candidate := fmt.Sprintf("{m%d}", i)
		if r, err := difftest.Inline(master, "EXISTS "+candidate); err == nil && !strings.HasPrefix(r.Str, "MOVED") {
			tag = candidate
		}
	}
	direct := redis.NewClient(&redis.Options{Addr: master})
	for i := range 100 {
		if err := direct.Set(ctx, tag+strconv.Itoa(i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	direct.Close()
	swap := func(to, from, mode string) {
		t.Helper()
		if r, _ := difftest.Inline(to, strings.TrimSpace("CLUSTER FAILOVER "+mode)); r.Str != "OK" {
			t.Fatalf("CLUSTER FAILOVER %s: %q", mode, r.Raw)
		}
		start := time.Now()
		toID := nodeID(t, to)
		for !strings.Contains(inlineText(to, "INFO replication"), "role:master") ||
			!strings.HasPrefix(strings.Fields(firstLine(inlineText(from, "CLUSTER NODES")))[2]+" "+strings.Fields(firstLine(inlineText(from, "CLUSTER NODES")))[3], "myself,slave "+toID) ||
			!strings.Contains(inlineText(from, "INFO replication"), "master_link_status:up") {
			if time.Since(start) > 10*time.Second {
				t.Fatalf("CLUSTER FAILOVER %s: no swap\n%s\n%s", mode, inlineText(to, "CLUSTER NODES"), inlineText(from, "CLUSTER NODES"))
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Logf("CLUSTER FAILOVER %s: swapped in %v", mode, time.Since(start))
		c := redis.NewClient(&redis.Options{Addr: to})
		defer c.Close()
		for i := range 100 {
			if got, err := c.Get(ctx, tag+strconv.Itoa(i)).Int(); err != nil || got != i {
				t.Fatalf("after CLUSTER FAILOVER %s: GET %s%d = %d, %v", mode, tag, i, got, err)
			}
		}
	}
	swap(replica, master, "")
	swap(master, replica, "TAKEOVER")
	// A master votes for one replica of a master per twice the node
	// timeout: the next election waits for that.
	timeout, _ := strconv.Atoi(difftest.ClusterNodeTimeout)
	time.Sleep(2 * time.Duration(timeout) * time.Millisecond)
	swap(replica, master, "FORCE")
}

// TestClusterResetReplica: CLUSTER RESET HARD on a replica holding its
// master's keys makes it an empty master that knows no other node, as on
// redis-server (only a master holding keys refuses).
func TestClusterResetReplica(t *testing.T) {
	for _, bin := range []string{buildKeyhiveBinary(t), ""} {
		name := "keyhive"
		if bin == "" {
			name = "redis"
		}
		master, stopMaster, err := difftest.StartClusterNode(bin, "--repl-diskless-sync-delay", "0")
		if err != nil {
			t.Fatal(err)
		}
		defer stopMaster()
		replica, stopReplica, err := difftest.StartClusterNode(bin)
		if err != nil {
			t.Fatal(err)
		}
		defer stopReplica()
		inlineText(master, "CLUSTER ADDSLOTSRANGE 0 16383")
		host, port, _ := strings.Cut(master, ":")
		busPort, _ := difftest.Inline(master, "CONFIG GET cluster-port")
		inlineText(replica, "CLUSTER MEET "+host+" "+port+" "+busPort.Elems[1].Str)
		waitUntil(t, name+" nodes to meet", func() bool {
			r, _ := difftest.Inline(replica, "CLUSTER REPLICATE "+nodeID(t, master))
			return r.Str == "OK"
		})
		waitUntil(t, name+" master to take the write", func() bool { return inlineText(master, "SET k v") == "OK" })
		waitUntil(t, name+" replica to have the key", func() bool {
			r, _ := difftest.Inline(replica, "DBSIZE")
			return r.Int == 1
		})
		if r, _ := difftest.Inline(master, "CLUSTER RESET HARD"); r.Str != "ERR CLUSTER RESET can't be called with master nodes containing keys" {
			t.Errorf("%s: CLUSTER RESET HARD on a master with keys: %q", name, r.Raw)
		}
		if r, _ := difftest.Inline(replica, "CLUSTER RESET HARD"); r.Str != "OK" {
			t.Fatalf("%s: CLUSTER RESET HARD on the replica: %q", name, r.Raw)
		}
		role, _ := difftest.Inline(replica, "ROLE")
		size, _ := difftest.Inline(replica, "DBSIZE")
		nodes := inlineText(replica, "CLUSTER NODES")
		if len(role.Elems) == 0 || role.Elems[0].Str != "master" || size.Int != 0 || strings.Count(nodes, "\n") != 1 {
			t.Errorf("%s: after CLUSTER RESET HARD on the replica: role %q, dbsize %d, nodes %q", name, role.Raw, size.Int, nodes)
		}
	}
}

// TestClusterBlockedRedirect: a client blocked on a key is released with
// -MOVED when the key's slot moves to another node, and with -CLUSTERDOWN
// when the cluster goes down, as on redis-server (else it waits for a push
// that cannot come to this node).
func TestClusterBlockedRedirect(t *testing.T) {
	for _, bin := range []string{buildKeyhiveBinary(t), ""} {
		name := "keyhive"
		if bin == "" {
			name = "redis"
		}
		a, stopA, err := difftest.StartClusterNode(bin)
		if err != nil {
			t.Fatal(err)
		}
		defer stopA()
		b, stopB, err := difftest.StartClusterNode(bin)
		if err != nil {
			t.Fatal(err)
		}
		defer stopB()
		inlineText(a, "CLUSTER ADDSLOTSRANGE 0 16383")
		host, port, _ := strings.Cut(a, ":")
		busPort, _ := difftest.Inline(a, "CONFIG GET cluster-port")
		inlineText(b, "CLUSTER MEET "+host+" "+port+" "+busPort.Elems[1].Str)
		waitUntil(t, name+" cluster to be ok", func() bool {
			nodesA, nodesB := inlineText(a, "CLUSTER NODES"), inlineText(b, "CLUSTER NODES")
			return strings.Contains(inlineText(a, "CLUSTER INFO"), "cluster_state:ok") &&
				strings.Contains(nodesA, nodeID(t, b)) && strings.Contains(nodesB, nodeID(t, a)) &&
				!strings.Contains(nodesA+nodesB, "handshake")
		})
		slot := strconv.Itoa(keyspace.Slot([]byte("k")))
		blocked := func(cmd string) <-chan difftest.Reply {
			c, err := difftest.Dial(a)
			if err != nil {
				t.Fatal(err)
			}
			c.Timeout = time.Minute
			done := make(chan difftest.Reply, 1)
			go func() {
				defer c.Close()
				var args []any
				for _, f := range strings.Fields(cmd) {
					args = append(args, f)
				}
				r, _ := c.Do(args...)
				done <- r
			}()
			waitUntil(t, name+" client to block", func() bool {
				return strings.Contains(inlineText(a, "INFO clients"), "blocked_clients:1")
			})
			return done
		}
		moved := blocked("BLPOP k 0")
		idB := nodeID(t, b)
		for _, n := range []string{b, a} {
			if r := inlineText(n, "CLUSTER SETSLOT "+slot+" NODE "+idB); r != "OK" {
				t.Fatalf("%s: CLUSTER SETSLOT on %s: %q", name, n, r)
			}
		}
		if r := <-moved; r.Str != "MOVED "+slot+" "+b {
			t.Errorf("%s: BLPOP on a slot that moved: %q", name, r.Raw)
		}
		down := blocked("BLPOP other 0")
		inlineText(a, "CLUSTER DELSLOTS "+strconv.Itoa(keyspace.Slot([]byte("other"))))
		if r := <-down; r.Str != "CLUSTERDOWN The cluster is down" {
			t.Errorf("%s: BLPOP while the cluster went down: %q", name, r.Raw)
		}
	}
}
