package server_test

import (
	"context"
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
// 127.0.0.1:masterPort.
func startSentinel(t *testing.T, masterPort string) string {
	t.Helper()
	addr, stop, err := difftest.StartSentinel(net.JoinHostPort("127.0.0.1", masterPort))
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(stop)
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
		old := nodes[killed]
		waitUntil(t, "the old master rejoins as a replica", func() bool {
			return old.info(t, "replication", "role") == "slave" && old.info(t, "replication", "master_link_status") == "up"
		})
		sameAs(t, nodes[current], old)
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
	promoted := nodes[current]
	var next *replNode
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		for _, n := range nodes {
			if n != promoted && n.info(t, "replication", "role") == "master" {
				next = n
			}
		}
		if next != nil && promoted.info(t, "replication", "role") == "slave" {
			break
		}
		if time.Now().After(deadline) {
			for _, n := range nodes {
				t.Logf("%s: %s", n.addr, n.ok(t, "INFO", "replication").Str)
			}
			r, _ := c.Do("SENTINEL", "MASTER", "mymaster")
			t.Fatalf("no manual failover; Sentinel's view: %v", r)
		}
	}
	next.ok(t, "SET", "after-manual", "1")
	for _, n := range nodes {
		if n != next {
			sameAs(t, next, n)
		}
	}
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
