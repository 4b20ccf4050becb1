package server_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/redis/go-redis/v9"
)

// startDetached starts a server process (difftest.StartChild: a process
// group of its own, killed with the test binary) and waits until addr
// answers; kill ends it.
func startDetached(t *testing.T, addr string, dir string, path string, args ...string) (kill func()) {
	t.Helper()
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	if _, err := difftest.StartChild(cmd); err != nil {
		t.Fatal(err)
	}
	kill = func() { difftest.KillGroup(cmd.Process.Pid) }
	t.Cleanup(kill)
	waitUntil(t, addr+" up", func() bool {
		c, err := difftest.Dial(addr)
		if err != nil {
			return false
		}
		c.Close()
		return true
	})
	return kill
}

// restartOnPort starts a Keyhive process on port again.
func restartOnPort(t *testing.T, bin, port string) *replNode {
	t.Helper()
	dir := t.TempDir()
	addr := net.JoinHostPort("127.0.0.1", port)
	kill := startDetached(t, addr, dir, bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--dir", dir, "--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0")
	return openReplNode(t, "old master", addr, kill, nil)
}

// startSentinel starts a redis-sentinel monitoring the master at
// 127.0.0.1:masterPort; its log is in the test's output if the test fails.
func startSentinel(t *testing.T, masterPort string) string {
	t.Helper()
	var log lockedBuffer
	addr, stop, err := difftest.StartSentinel(net.JoinHostPort("127.0.0.1", masterPort), &log)
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("sentinel %s log:\n%s", addr, log.String())
		}
	})
	return addr
}

func sentinelCount(t *testing.T, sentinel, what string) int {
	c, err := difftest.Dial(sentinel)
	if err != nil {
		return 0
	}
	defer c.Close()
	r, err := c.Do("SENTINEL", what, "mymaster")
	if err != nil || r.IsError() {
		return 0
	}
	return len(r.Elems)
}

// TestReplSentinelFailover: three redis-sentinel processes monitor a
// Keyhive master with two Keyhive replicas. The master is killed (SIGKILL)
// under a write load from go-redis's failover client: Sentinel promotes a
// replica, the client goes on, every write WAIT 1 confirmed is on the new
// master, and the old master, restarted, rejoins as a replica; as many
// times as KEYHIVE_SENTINEL_TRIALS says (1 by default). Then a manual
// SENTINEL FAILOVER moves the role again.
func TestReplSentinelFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("processes and Sentinel timeouts")
	}
	trials := 1
	if n, err := strconv.Atoi(os.Getenv("KEYHIVE_SENTINEL_TRIALS")); err == nil && n > 0 {
		trials = n
	}
	bin, err := difftest.BuildKeyhive(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	master := processNode(t, bin, "node0")
	mhost, mport := master.hostPort()
	nodes := []*replNode{
		master,
		processNode(t, bin, "node1", "--replicaof", mhost, mport),
		processNode(t, bin, "node2", "--replicaof", mhost, mport),
	}
	var sentinels []string
	for range 3 {
		sentinels = append(sentinels, startSentinel(t, mport))
	}
	waitUntil(t, "sentinels see both replicas and each other", func() bool {
		for _, s := range sentinels {
			if sentinelCount(t, s, "REPLICAS") != 2 || sentinelCount(t, s, "SENTINELS") != 2 {
				return false
			}
		}
		return true
	})
	rdb := redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName: "mymaster", SentinelAddrs: sentinels,
		MaxRetries: -1, DialTimeout: 500 * time.Millisecond, ReadTimeout: time.Second, WriteTimeout: time.Second,
	})
	defer rdb.Close()
	current := 0 // the master's index in nodes
	for trial := range trials {
		killed := current
		current = killMasterUnderLoad(t, rdb, nodes, current, trial)
		// The old master comes back on its port: Sentinel makes it a replica.
		_, port := nodes[killed].hostPort()
		nodes[killed] = restartOnPort(t, bin, port)
		// Beside a CPU hog a Sentinel may count the new master down too (1 s
		// without a PONG) and fail over once more: the master is whichever
		// node the Sentinels agree on once all is settled.
		current = settled(t, sentinels, nodes)
		for i, n := range nodes {
			if i != current {
				sameAs(t, nodes[current], n)
			}
		}
	}

	// SENTINEL FAILOVER: a manual failover to one of the two replicas.
	c, err := difftest.Dial(sentinels[0])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if r, err := c.Do("SENTINEL", "FAILOVER", "mymaster"); err != nil || r.IsError() {
		t.Fatalf("SENTINEL FAILOVER: %v %v", r, err)
	}
	waitUntil(t, "the Sentinels move the master", func() bool {
		_, port := nodes[current].hostPort()
		return sentinelMaster(t, sentinels[0]) != port
	})
	next := nodes[settled(t, sentinels, nodes)]
	next.ok(t, "SET", "after-manual", "1")
	for _, n := range nodes {
		if n != next {
			sameAs(t, next, n)
		}
	}
}

// sentinelSeesReplicas says why a Sentinel does not yet know n replicas of
// the master on port, each reporting itself as a replica of it with the
// link up ("" when it does).
func sentinelSeesReplicas(sentinel, port string, n int) string {
	c, err := difftest.Dial(sentinel)
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	r, err := c.Do("SENTINEL", "REPLICAS", "mymaster")
	if err != nil || len(r.Elems) != n {
		return fmt.Sprintf("%s: SENTINEL REPLICAS: %v %v", sentinel, r, err)
	}
	for _, replica := range r.Elems {
		fields := map[string]string{}
		for i := 0; i+1 < len(replica.Elems); i += 2 {
			fields[replica.Elems[i].Str] = replica.Elems[i+1].Str
		}
		if fields["flags"] != "slave" || fields["role-reported"] != "slave" ||
			fields["master-port"] != port || fields["master-link-status"] != "ok" {
			return fmt.Sprintf("%s: replica %v", sentinel, fields)
		}
	}
	return ""
}

// sentinelMaster is the port of the master a Sentinel names ("" when it
// does not answer).
func sentinelMaster(t *testing.T, sentinel string) string {
	c, err := difftest.Dial(sentinel)
	if err != nil {
		return ""
	}
	defer c.Close()
	r, err := c.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster")
	if err != nil || len(r.Elems) != 2 {
		return ""
	}
	return r.Elems[1].Str
}

// settled waits until every Sentinel names the same node as master, that
// node says it is one, every other node is its replica with the link up,
// and every Sentinel has seen each replica report itself as one; it returns
// the master's index in nodes. The last matters for a node that came back
// as a master and was turned into a replica: a Sentinel that never saw it
// report "slave" (it reads a replica's INFO every 10 s) takes its promotion
// in a failover led by another Sentinel for the old master come back and
// converts it to a replica again, and that failover times out. Sentinel
// does this whatever the server.
func settled(t *testing.T, sentinels []string, nodes []*replNode) int {
	t.Helper()
	master := -1
	var why string
	defer func() {
		if t.Failed() {
			t.Logf("last disagreement: %s", why)
		}
	}()
	waitUntil(t, "the Sentinels and the nodes agree on one master", func() bool {
		port := sentinelMaster(t, sentinels[0])
		for _, s := range sentinels {
			if p := sentinelMaster(t, s); p != port {
				why = fmt.Sprintf("%s names %s, %s names %s", sentinels[0], port, s, p)
				return false
			}
			if why = sentinelSeesReplicas(s, port, len(nodes)-1); why != "" {
				return false
			}
		}
		why = "the nodes' roles"
		master = -1
		for i, n := range nodes {
			if _, p := n.hostPort(); p == port {
				master = i
			}
		}
		if master < 0 || nodes[master].info(t, "replication", "role") != "master" {
			return false
		}
		for i, n := range nodes {
			if i != master && (n.info(t, "replication", "role") != "slave" ||
				n.info(t, "replication", "master_port") != port ||
				n.info(t, "replication", "master_link_status") != "up") {
				return false
			}
		}
		return true
	})
	return master
}

// killMasterUnderLoad writes through rdb, kills nodes[master] (SIGKILL)
// once 200 writes are confirmed by WAIT 1, and checks that Sentinel
// promotes a replica holding every confirmed write while the writes go
// on. It returns the new master's index.
func killMasterUnderLoad(t *testing.T, rdb *redis.Client, nodes []*replNode, master, trial int) int {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	var confirmed []int
	var failures, after int
	var lastErr error
	killed := make(chan struct{})
	stop := make(chan struct{})
	done := make(chan struct{})
	prefix := "t" + strconv.Itoa(trial) + ":"
	go func() {
		defer close(done)
		dead := false
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-killed:
				dead = true
			default:
			}
			if err := rdb.Set(ctx, prefix+strconv.Itoa(i), i, 0).Err(); err != nil {
				mu.Lock()
				failures++
				lastErr = err
				mu.Unlock()
				time.Sleep(50 * time.Millisecond)
				continue
			}
			// 500 ms (within the client's 1 s read timeout): beside a CPU
			// hog too few acknowledgements came within 100 ms.
			n, err := rdb.Do(ctx, "WAIT", 1, 500).Int()
			mu.Lock()
			if err == nil && n >= 1 {
				confirmed = append(confirmed, i)
			}
			if dead {
				after++
			}
			mu.Unlock()
		}
	}()
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		<-done
	}()
	waitUntil(t, "confirmed writes", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(confirmed) >= 200
	})
	mu.Lock()
	beforeKill := append([]int(nil), confirmed...)
	mu.Unlock()
	nodes[master].stop() // SIGKILL
	nodes[master].conn.Close()
	close(killed)

	promoted := -1
	waitUntil(t, "Sentinel promotes a replica", func() bool {
		for i, n := range nodes {
			if i != master && n.info(t, "replication", "role") == "master" {
				promoted = i
				return true
			}
		}
		return false
	})
	waitUntil(t, "writes after the failover", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return after >= 50
	})
	close(stop)
	<-done
	for _, i := range beforeKill {
		key := prefix + strconv.Itoa(i)
		if r := nodes[promoted].ok(t, "GET", key); r.Str != strconv.Itoa(i) {
			t.Fatalf("trial %d: write %s confirmed by WAIT 1 before the kill is lost: %v", trial, key, r)
		}
	}
	t.Logf("trial %d: %d writes confirmed before the kill, all on the new master; %d failed calls during the failover (the last: %v), %d writes after",
		trial, len(beforeKill), failures, lastErr, after)
	return promoted
}
