package server_test

import (
	"context"
	"net"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/redis/go-redis/v9"
)

// startDetached starts a server process (a process group of its own,
// killed with the test binary) and waits until addr answers.
func startDetached(t *testing.T, addr string, dir string, path string, args ...string) {
	t.Helper()
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // Pdeathsig follows the thread that forked it
		started <- cmd.Start()
		cmd.Wait()
	}()
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	waitUntil(t, addr+" up", func() bool {
		c, err := difftest.Dial(addr)
		if err != nil {
			return false
		}
		c.Close()
		return true
	})
}

// restartOnPort starts a Keyhive process on port again.
func restartOnPort(t *testing.T, bin, port string) *replNode {
	t.Helper()
	dir := t.TempDir()
	addr := net.JoinHostPort("127.0.0.1", port)
	startDetached(t, addr, dir, bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--dir", dir, "--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0")
	conn, err := difftest.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &replNode{name: "old master", addr: addr, conn: conn, stop: func() {}}
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

// processNode starts a Keyhive process, to be killed with SIGKILL.
func processNode(t *testing.T, bin, name string, directives ...string) *replNode {
	t.Helper()
	addr, stop, err := difftest.StartProcess(bin, append([]string{"--repl-diskless-sync-delay", "0"}, directives...)...)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := difftest.Dial(addr)
	if err != nil {
		stop()
		t.Fatal(err)
	}
	n := &replNode{name: name, addr: addr, conn: conn, stop: stop}
	t.Cleanup(func() { conn.Close(); stop() })
	return n
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
// master, and the old master, restarted, rejoins as a replica. Then a
// manual SENTINEL FAILOVER moves the role again.
func TestReplSentinelFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("processes and Sentinel timeouts")
	}
	bin, err := difftest.BuildKeyhive(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	master := processNode(t, bin, "master")
	mhost, mport := master.hostPort()
	replicas := []*replNode{
		processNode(t, bin, "replica1", "--replicaof", mhost, mport),
		processNode(t, bin, "replica2", "--replicaof", mhost, mport),
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

	ctx := context.Background()
	rdb := redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName: "mymaster", SentinelAddrs: sentinels,
		MaxRetries: -1, DialTimeout: 500 * time.Millisecond, ReadTimeout: time.Second, WriteTimeout: time.Second,
	})
	defer rdb.Close()
	var mu sync.Mutex
	var confirmed []int
	var failures, after int
	var lastErr error
	killed := make(chan struct{})
	stop := make(chan struct{})
	done := make(chan struct{})
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
			key := "k" + strconv.Itoa(i)
			if err := rdb.Set(ctx, key, i, 0).Err(); err != nil {
				mu.Lock()
				failures++
				lastErr = err
				mu.Unlock()
				time.Sleep(50 * time.Millisecond)
				continue
			}
			n, err := rdb.Do(ctx, "WAIT", 1, 100).Int()
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
	waitUntil(t, "confirmed writes", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(confirmed) >= 200
	})
	mu.Lock()
	beforeKill := append([]int(nil), confirmed...)
	mu.Unlock()
	master.stop() // SIGKILL
	close(killed)

	var promoted *replNode
	waitUntil(t, "Sentinel promotes a replica", func() bool {
		for _, r := range replicas {
			if r.info(t, "replication", "role") == "master" {
				promoted = r
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
	killedAt := time.Now()
	deadline := time.Now().Add(30 * time.Second)
	for promoted.infoInt(t, "replication", "connected_slaves") != 1 {
		if time.Now().After(deadline) {
			for _, r := range replicas {
				t.Logf("%s: %s", r.name, r.ok(t, "INFO", "replication").Str)
			}
			t.Fatal("the other replica does not follow the new master")
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("the other replica followed %v after the writes resumed", time.Since(killedAt))
	close(stop)
	<-done
	for _, i := range beforeKill {
		if r := promoted.ok(t, "GET", "k"+strconv.Itoa(i)); r.Str != strconv.Itoa(i) {
			t.Fatalf("write k%d confirmed by WAIT 1 before the kill is lost: %v", i, r)
		}
	}
	t.Logf("%d writes confirmed before the kill, %d failed calls during the failover (the last: %v), %d writes after", len(beforeKill), failures, lastErr, after)

	// The old master comes back on its port: Sentinel makes it a replica.
	back := restartOnPort(t, bin, mport)
	waitUntil(t, "the old master rejoins as a replica", func() bool {
		return back.info(t, "replication", "role") == "slave" && back.info(t, "replication", "master_link_status") == "up"
	})
	sameAs(t, promoted, back)

	// SENTINEL FAILOVER: a manual failover to one of the two replicas.
	c, err := difftest.Dial(sentinels[0])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if r, err := c.Do("SENTINEL", "FAILOVER", "mymaster"); err != nil || r.IsError() {
		t.Fatalf("SENTINEL FAILOVER: %v %v", r, err)
	}
	nodes := []*replNode{replicas[0], replicas[1], back}
	var next *replNode
	waitUntil(t, "the manual failover", func() bool {
		for _, n := range nodes {
			if n != promoted && n.info(t, "replication", "role") == "master" {
				next = n
				return promoted.info(t, "replication", "role") == "slave"
			}
		}
		return false
	})
	next.ok(t, "SET", "after-manual", "1")
	for _, n := range nodes {
		if n != next {
			sameAs(t, next, n)
		}
	}
}
