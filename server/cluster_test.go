package server_test

import (
	"context"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/redis/go-redis/v9"
)

// Cluster tests: real Keyhive processes (and redis-server 7.0.15 ones) on
// loopback ports, operated by redis-cli --cluster and go-redis's cluster
// client, and the cluster commands' replies compared with redis-server's.

// clusterDirectives are a node's (difftest.ClusterDirectives).
func clusterDirectives(t *testing.T) []string {
	t.Helper()
	directives, err := difftest.ClusterDirectives()
	if err != nil {
		t.Fatal(err)
	}
	return directives
}

// startClusterNode starts a node process: bin is a built keyhive, or ""
// for redis-server. It returns its address.
func startClusterNode(t *testing.T, bin string) string {
	t.Helper()
	addr, _ := startClusterNodeStop(t, bin)
	return addr
}

// TestClusterRedisCliLifecycle: redis-cli --cluster create of three
// Keyhive masters, check, add-node, reshard to the new node under a write
// load, rebalance that empties it again, del-node: no write lost, no error
// beyond the redirects the client follows; then fix of a slot nobody
// serves.
func TestClusterRedisCliLifecycle(t *testing.T) {
	slowTest(t, "a cluster of processes through redis-cli --cluster")
	bin := buildKeyhiveBinary(t)
	a, b, c := startClusterNode(t, bin), startClusterNode(t, bin), startClusterNode(t, bin)
	redisCli(t, "--cluster", "create", a, b, c, "--cluster-replicas", "0", "--cluster-yes")
	waitClusterAgrees(t, a, b, c)
	cliLifecycle(t, bin, a, []string{a, b, c})

	// fix: a slot nobody serves is given to a node (DELSLOTS, ADDSLOTS and
	// BUMPEPOCH in a transaction).
	for _, addr := range []string{a, b, c} {
		difftest.Inline(addr, "CLUSTER DELSLOTS 0")
	}
	redisCliInput(t, "yes", "--cluster", "fix", a, "--cluster-yes")
	waitClusterAgrees(t, a, b, c)
}

// TestClusterRedisCliLifecycleReplicas is the lifecycle on three masters
// with a replica each: the replicas follow their masters' slots through
// the reshard and the rebalance.
func TestClusterRedisCliLifecycleReplicas(t *testing.T) {
	slowTest(t, "a six-process cluster through redis-cli --cluster")
	bin := buildKeyhiveBinary(t)
	addrs, replicaOf, _ := startReplicatedCluster(t, bin, "--enable-debug-command", "yes")
	var master string
	for m := range replicaOf {
		master = m
		break
	}
	cliLifecycle(t, bin, master, addrs)
	// Every replica holds what its master holds.
	for m, r := range replicaOf {
		difftest.Inline(m, "WAIT 1 5000")
		if mk, rk := inlineText(m, "DEBUG DIGEST"), inlineText(r, "DEBUG DIGEST"); mk == "" || mk != rk {
			t.Errorf("replica %s of %s: digest %s, master's %s", r, m, rk, mk)
		}
	}
}

// cliLifecycle runs redis-cli --cluster add-node, reshard (from master)
// under a go-redis write load, rebalance and del-node on the cluster of
// nodes: no acknowledged write is lost and no error reaches the client.
func cliLifecycle(t *testing.T, bin, master string, nodes []string) {
	t.Helper()
	load := startWriteLoad(nodes, 4)
	d := startClusterNode(t, bin)
	redisCli(t, "--cluster", "add-node", d, master)
	all := append(slices.Clone(nodes), d)
	waitClusterAgrees(t, all...)

	start := time.Now()
	redisCli(t, "--cluster", "reshard", master, "--cluster-from", nodeID(t, master), "--cluster-to", nodeID(t, d),
		"--cluster-slots", "300", "--cluster-yes")
	t.Logf("reshard of 300 slots under load: %v", time.Since(start))
	waitClusterAgrees(t, all...)
	if r, err := difftest.Inline(d, "DBSIZE"); err != nil || r.Int == 0 {
		t.Errorf("the new node holds no keys after the reshard: %v %v", r, err)
	}

	redisCli(t, "--cluster", "rebalance", master, "--cluster-weight", nodeID(t, d)+"=0")
	waitClusterAgrees(t, all...)
	if r, err := difftest.Inline(d, "DBSIZE"); err != nil || r.Int != 0 {
		t.Errorf("the emptied node still holds keys: %v %v", r, err)
	}
	// The load stops before del-node: the removed node forgets the cluster,
	// and a client whose slot map still names it would get its
	// CLUSTERDOWN, with redis-server nodes as with Keyhive's.
	load.stopWrites(t)
	redisCli(t, "--cluster", "del-node", master, nodeID(t, d))
	waitClusterAgrees(t, nodes...)
	load.check(t)
	if known := inlineText(master, "CLUSTER INFO"); !strings.Contains(known, "cluster_known_nodes:"+strconv.Itoa(len(nodes))+"\r\n") {
		t.Errorf("after del-node:\n%s", known)
	}
}

// TestClusterMixedWithRedis: one cluster of two Keyhive nodes and a
// redis-server 7.0.15 node, created by redis-cli; slots with keys are
// resharded from the Redis node to a Keyhive node and back (the bus and
// MIGRATE interoperate both ways), PUBLISH crosses the bus both ways, the
// announced hostname reaches Redis, and when a Keyhive master dies, the
// Redis node and the Keyhive node agree through their failure reports that
// it failed.
func TestClusterMixedWithRedis(t *testing.T) {
	slowTest(t, "a cluster of Keyhive and redis-server processes")
	bin := buildKeyhiveBinary(t)
	k1, _ := startClusterNodeStop(t, bin, "--cluster-announce-hostname", "keyhive-one")
	k2, stopK2 := startClusterNodeStop(t, bin)
	r := startClusterNode(t, "")
	redisCli(t, "--cluster", "create", r, k1, k2, "--cluster-replicas", "0", "--cluster-yes")
	waitClusterAgrees(t, r, k1, k2)

	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{k1, k2, r}})
	defer client.Close()
	ctx := context.Background()
	const keys = 2000
	for i := range keys {
		if err := client.Set(ctx, "mixed:"+strconv.Itoa(i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	load := startWriteLoad([]string{k1, k2, r}, 2)
	rID, k1ID := nodeID(t, r), nodeID(t, k1)
	redisCli(t, "--cluster", "reshard", r, "--cluster-from", rID, "--cluster-to", k1ID, "--cluster-slots", "200", "--cluster-yes")
	waitClusterAgrees(t, r, k1, k2)
	redisCli(t, "--cluster", "reshard", r, "--cluster-from", k1ID, "--cluster-to", rID, "--cluster-slots", "400", "--cluster-yes")
	waitClusterAgrees(t, r, k1, k2)
	load.finish(t)
	for i := range keys {
		if got, err := client.Get(ctx, "mixed:"+strconv.Itoa(i)).Int(); err != nil || got != i {
			t.Fatalf("mixed:%d = %d, %v", i, got, err)
		}
	}

	// PUBLISH on one kind of node reaches a subscriber on the other.
	for _, pair := range [][2]string{{k1, r}, {r, k2}} {
		sub := redis.NewClient(&redis.Options{Addr: pair[1]})
		ps := sub.Subscribe(ctx, "mixed-news")
		if _, err := ps.Receive(ctx); err != nil {
			t.Fatal(err)
		}
		pub := redis.NewClient(&redis.Options{Addr: pair[0]})
		if err := pub.Publish(ctx, "mixed-news", "from "+pair[0]).Err(); err != nil {
			t.Fatal(err)
		}
		select {
		case m := <-ps.Channel():
			if m.Payload != "from "+pair[0] {
				t.Errorf("received %q", m.Payload)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("a message published on %s did not reach %s", pair[0], pair[1])
		}
		ps.Close()
		sub.Close()
		pub.Close()
	}

	// The hostname Keyhive announces on the bus reaches the Redis node, and
	// so does a new one set with CONFIG SET.
	if nodes := inlineText(r, "CLUSTER NODES"); !strings.Contains(nodes, ",keyhive-one ") {
		t.Errorf("the Redis node does not show k1's hostname:\n%s", nodes)
	}
	if r, _ := difftest.Inline(k1, "CONFIG SET cluster-announce-hostname keyhive-uno"); r.Str != "OK" {
		t.Fatalf("CONFIG SET: %q", r.Raw)
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(inlineText(r, "CLUSTER NODES"), ",keyhive-uno "); {
		if time.Now().After(deadline) {
			t.Fatalf("the Redis node does not show k1's new hostname:\n%s", inlineText(r, "CLUSTER NODES"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A killed Keyhive master: the Redis node and the other Keyhive node
	// report it to each other in their gossip, and both flag it fail (the
	// two of three masters needed).
	k2ID := nodeID(t, k2)
	stopK2()
	killed := time.Now()
	for _, addr := range []string{r, k1} {
		for {
			nodes := inlineText(addr, "CLUSTER NODES")
			i := strings.Index(nodes, k2ID)
			if i >= 0 && strings.Contains(strings.SplitN(nodes[i:], "\n", 2)[0], "master,fail ") {
				break
			}
			if time.Since(killed) > 15*time.Second {
				t.Fatalf("%s does not flag the killed node fail:\n%s", addr, nodes)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	t.Logf("the killed Keyhive node flagged fail by the Redis and the Keyhive node after %v", time.Since(killed))
}

// TestClusterCommandsDiff: a one-node cluster of each (redis-server
// 7.0.15 and an in-process Keyhive, slots 0-8000, full coverage not
// required) gives the same replies to the cluster commands, the
// redirects that need no other node, and the commands cluster mode
// restricts.
func TestClusterCommandsDiff(t *testing.T) {
	redisAddr, stopRedis, err := difftest.StartRedis(append(clusterDirectives(t), "--cluster-require-full-coverage", "no")...)
	if err != nil {
		t.Skip(err)
	}
	defer stopRedis()
	keyhiveAddr, stopKeyhive, err := difftest.StartKeyhive(append(clusterDirectives(t), "--cluster-require-full-coverage", "no")...)
	if err != nil {
		t.Fatal(err)
	}
	defer stopKeyhive()
	dial := func(addr string) *difftest.Conn {
		c, err := difftest.Dial(addr)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	r, k := dial(redisAddr), dial(keyhiveAddr)
	defer r.Close()
	defer k.Close()
	compare := func(cmp func(redis, keyhive difftest.Reply) error, args ...any) {
		t.Helper()
		rr, err1 := r.Do(args...)
		kr, err2 := k.Do(args...)
		if err1 != nil || err2 != nil {
			t.Fatalf("%v: %v %v", args, err1, err2)
		}
		if err := cmp(rr, kr); err != nil {
			t.Errorf("%v: %v\nredis   %q\nkeyhive %q", args, err, rr.Raw, kr.Raw)
		}
	}
	same := func(args ...any) { t.Helper(); compare(difftest.Exact, args...) }
	unknown := strings.Repeat("0", 40)
	// Before any slot is assigned: the cluster is down.
	same("SET", "foo", "bar")
	same("CLUSTER", "ADDSLOTSRANGE", 0, 8000)
	same("CLUSTER", "ADDSLOTS", 8001, 8001)
	same("CLUSTER", "ADDSLOTS", 100)
	same("CLUSTER", "ADDSLOTS", 16384)
	same("CLUSTER", "ADDSLOTS", "x")
	same("CLUSTER", "ADDSLOTSRANGE", 9000, 8999)
	same("CLUSTER", "ADDSLOTSRANGE", 9000)
	same("CLUSTER", "DELSLOTS", 9000)
	same("CLUSTER", "DELSLOTSRANGE", 8001, 8001)
	same("CLUSTER", "ADDSLOTS", 8001)
	for range 50 { // the state turns ok on the next cron
		if strings.Contains(inlineText(keyhiveAddr, "CLUSTER INFO"), "cluster_state:ok") &&
			strings.Contains(inlineText(redisAddr, "CLUSTER INFO"), "cluster_state:ok") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, args := range [][]any{
		{"SET", "foo", "bar"}, // slot 12182: not served
		{"MSET", "foo", "1", "{b}:x", "2"},
		{"SET", "a", "1"}, // slot 15495
		{"SET", "{b}:x", "1"},
		{"SET", "{b}:y", "2"},
		{"MSET", "{b}:x", "1", "{c}:y", "2"},
		{"MGET", "{b}:x", "{b}:y", "{b}:x"},
		{"CLUSTER", "KEYSLOT", "{b}:x"},
		{"CLUSTER", "KEYSLOT", "foo{}{bar}"},
		{"CLUSTER", "COUNTKEYSINSLOT", 3300},
		{"CLUSTER", "COUNTKEYSINSLOT", 16384},
		{"CLUSTER", "COUNTKEYSINSLOT", "x"},
		{"CLUSTER", "GETKEYSINSLOT", 3300, -1},
		{"CLUSTER", "GETKEYSINSLOT", 100, 10},
		{"SELECT", 0}, {"SELECT", 1}, {"SELECT", "x"},
		{"MOVE", "{b}:x", 1},
		{"SWAPDB", 0, 1},
		{"COPY", "{b}:x", "{b}:z", "DB", 1},
		{"COPY", "{b}:x", "{b}:z"},
		{"CLUSTER", "SETSLOT", 100, "MIGRATING", unknown},
		{"CLUSTER", "SETSLOT", 100, "IMPORTING", unknown},
		{"CLUSTER", "SETSLOT", 100, "NODE", unknown},
		{"CLUSTER", "SETSLOT", 100, "BOGUS"},
		{"CLUSTER", "SETSLOT", 9000, "MIGRATING", unknown},
		{"CLUSTER", "SETSLOT", 100, "STABLE"},
		{"CLUSTER", "FORGET", unknown},
		{"CLUSTER", "COUNT-FAILURE-REPORTS", unknown},
		{"CLUSTER", "MEET", "not-an-ip", 7000},
		{"CLUSTER", "MEET", "127.0.0.1", "x"},
		{"CLUSTER", "MEET", "127.0.0.1", 7000, "y"},
		{"CLUSTER", "SET-CONFIG-EPOCH", -1},
		{"CLUSTER", "SET-CONFIG-EPOCH", 5},
		{"CLUSTER", "SET-CONFIG-EPOCH", 6},
		{"CLUSTER", "BUMPEPOCH"},
		{"CLUSTER", "BUMPEPOCH"},
		{"CLUSTER", "RESET", "BOGUS"},
		{"CLUSTER", "RESET"},
		{"CLUSTER", "FLUSHSLOTS"},
		{"ASKING"}, {"READONLY"}, {"READWRITE"},
		{"MULTI"}, {"SET", "{b}:x", "1"}, {"SET", "{c}:x", "1"}, {"EXEC"},
		{"MULTI"}, {"SET", "{b}:x", "1"}, {"SET", "foo", "1"}, {"EXEC"},
		{"MULTI"}, {"SET", "{b}:x", "3"}, {"GET", "{b}:x"}, {"EXEC"},
		{"MULTI"}, {"SET", "{b}:x", "4"}, {"CLUSTER", "COUNTKEYSINSLOT", 3300}, {"CLUSTER", "GETKEYSINSLOT", 3300, 0}, {"EXEC"},
		{"EVAL", "return redis.call('get', KEYS[1])", 1, "{b}:x"},
		{"EVAL", "return 1", 2, "{b}:x", "foo"},
		{"EVAL", "return redis.call('get', 'foo')", 0},
		{"EVAL", "return redis.call('get', '{b}:x')", 0},
		{"EVAL", "redis.call('get', '{b}:x'); return redis.call('get', '{c}:x')", 0},
		{"EVAL", "return redis.call('get', '{c}:x')", 1, "{b}:x"},
		{"EVAL", "#!lua flags=allow-cross-slot-keys\nredis.call('get', '{b}:x'); return redis.call('get', '{c}:x')", 0},
		{"EVAL", "#!lua flags=no-cluster\nreturn 1", 0},
		{"EVAL", "#!lua\nredis.call('get', '{b}:x'); return redis.call('get', '{c}:x')", 0},
		{"EVAL", "#!lua\nreturn redis.call('get', '{c}:x')", 1, "{b}:x"},
		{"EVAL", "#!lua\nreturn redis.call('get', KEYS[1])", 1, "{b}:x"},
		{"MIGRATE", "127.0.0.1", 1, "nokey-{b}", 0, 100},
		{"MIGRATE", "127.0.0.1", 1, "{b}:x", 0, 100, "KEYS", "{b}:y"},
		{"MIGRATE", "127.0.0.1", 1, "", 0, 100, "BOGUS"},
		{"MIGRATE", "127.0.0.1", 1, "", 0, 100, "KEYS", "{b}:x", "foo"},
		{"SPUBLISH", "{b}ch", "hi"},
		{"SPUBLISH", "foo", "hi"},
		{"CLUSTER", "MYID", "extra"},
		{"CLUSTER", "BOGUS"},
	} {
		same(args...)
	}
	compare(difftest.Unordered, "CLUSTER", "GETKEYSINSLOT", 3300, 10) // in no particular order
}

// TestClusterFailureDetection: a Keyhive master killed is flagged fail by
// the others (pfail, then fail once the masters agree) within a few node
// timeouts; its slots then answer CLUSTERDOWN, and the cluster is ok again
// once the node is forgotten and its slots given to a survivor.
func TestClusterFailureDetection(t *testing.T) {
	slowTest(t, "waits for a killed node to be flagged failing")
	bin := buildKeyhiveBinary(t)
	a, b := startClusterNode(t, bin), startClusterNode(t, bin)
	c, stopC := startClusterNodeStop(t, bin)
	redisCli(t, "--cluster", "create", a, b, c, "--cluster-replicas", "0", "--cluster-yes")
	waitClusterAgrees(t, a, b, c)
	cID := nodeID(t, c)
	stopC()
	killed := time.Now()
	for _, addr := range []string{a, b} {
		for {
			nodes := inlineText(addr, "CLUSTER NODES")
			if strings.Contains(nodes, cID) && strings.Contains(strings.SplitN(nodes[strings.Index(nodes, cID):], "\n", 2)[0], "master,fail ") {
				break
			}
			if time.Since(killed) > 15*time.Second {
				t.Fatalf("%s does not flag the killed node fail:\n%s", addr, nodes)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	t.Logf("the killed node flagged fail by both masters after %v (cluster-node-timeout %sms)", time.Since(killed), difftest.ClusterNodeTimeout)
	for !strings.Contains(inlineText(a, "CLUSTER INFO"), "cluster_state:fail") {
		if time.Since(killed) > 15*time.Second {
			t.Fatal("the cluster is still ok without the slots of the killed node")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if r, _ := difftest.Inline(a, "GET foo"); r.Str != "CLUSTERDOWN The cluster is down" {
		t.Errorf("GET with a slot lost: %q", r.Raw)
	}
	for _, addr := range []string{a, b} {
		if r, _ := difftest.Inline(addr, "CLUSTER FORGET "+cID); r.Str != "OK" {
			t.Fatalf("CLUSTER FORGET on %s: %q", addr, r.Raw)
		}
	}
	// Forgotten, its slots are nobody's: a survivor takes them.
	if r, _ := difftest.Inline(a, "CLUSTER ADDSLOTSRANGE 10923 16383"); r.Str != "OK" {
		t.Fatalf("ADDSLOTSRANGE: %q", r.Raw)
	}
	waitClusterAgrees(t, a, b)
}

// TestClusterSlotMigrationRedirects: while a slot moves from node A to
// node B, A answers -ASK for its keys already gone and -TRYAGAIN for a
// request split between the two, B serves the slot only after ASKING (for
// one command, or a whole transaction) or to RESTORE-ASKING, and -MOVED
// otherwise. The same expectations run on a pair of redis-server nodes and
// a pair of Keyhive nodes.
func TestClusterSlotMigrationRedirects(t *testing.T) {
	slowTest(t, "clusters of processes migrating slots")
	for _, kind := range []string{"redis", "keyhive"} {
		t.Run(kind, func(t *testing.T) {
			start := func() string {
				var addr string
				var stop func()
				var err error
				directives := append(clusterDirectives(t), "--cluster-require-full-coverage", "no")
				if kind == "redis" {
					addr, stop, err = difftest.StartRedis(directives...)
				} else {
					addr, stop, err = difftest.StartKeyhive(directives...)
				}
				if err != nil {
					t.Skip(err)
				}
				t.Cleanup(stop)
				return addr
			}
			a, b := start(), start()
			ca, cb := dial(t, a), dial(t, b)
			expect := func(c *difftest.Conn, want string, args ...any) {
				t.Helper()
				r, err := c.Do(args...)
				if err != nil {
					t.Fatal(err)
				}
				if got := strings.TrimSuffix(string(r.Raw), "\r\n"); got != want {
					t.Errorf("%v: %q, want %q", args, got, want)
				}
			}
			busPort := func(c *difftest.Conn) string {
				r, _ := c.Do("CONFIG", "GET", "cluster-port")
				return r.Elems[1].Str
			}
			_, bPort, _ := net.SplitHostPort(b)
			expect(ca, "+OK", "CLUSTER", "ADDSLOTSRANGE", 0, 16383)
			expect(ca, "+OK", "CLUSTER", "MEET", "127.0.0.1", bPort, busPort(cb))
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(inlineText(b, "CLUSTER INFO"), "cluster_state:ok") {
				if time.Now().After(deadline) {
					t.Fatalf("B never joins:\n%s", inlineText(b, "CLUSTER NODES"))
				}
				time.Sleep(50 * time.Millisecond)
			}
			aID, bID := nodeID(t, a), nodeID(t, b)
			const slot = 3300 // {b}
			expect(ca, "+OK", "MSET", "{b}1", "one", "{b}2", "two")
			expect(cb, "-MOVED 3300 "+a, "GET", "{b}1")
			expect(cb, "+OK", "CLUSTER", "SETSLOT", slot, "IMPORTING", aID)
			expect(ca, "+OK", "CLUSTER", "SETSLOT", slot, "MIGRATING", bID)
			expect(ca, "$3\r\none", "GET", "{b}1")
			expect(ca, "-ASK 3300 "+b, "GET", "{b}missing")
			expect(ca, "-TRYAGAIN Multiple keys request during rehashing of slot", "MGET", "{b}1", "{b}missing")
			expect(ca, "+OK", "MIGRATE", "127.0.0.1", bPort, "", 0, 5000, "KEYS", "{b}1")
			expect(ca, "-ASK 3300 "+b, "GET", "{b}1")
			expect(ca, "$3\r\ntwo", "GET", "{b}2")
			expect(cb, "-MOVED 3300 "+a, "GET", "{b}1")
			expect(cb, "+OK", "ASKING")
			expect(cb, "$3\r\none", "GET", "{b}1")
			expect(cb, "-MOVED 3300 "+a, "GET", "{b}1") // ASKING covered one command
			expect(cb, "+OK", "ASKING")
			expect(cb, "-TRYAGAIN Multiple keys request during rehashing of slot", "MGET", "{b}1", "{b}2")
			expect(cb, "+OK", "ASKING")
			expect(cb, "+OK", "MULTI")
			expect(cb, "+QUEUED", "SET", "{b}3", "three")
			expect(cb, "+QUEUED", "GET", "{b}3")
			expect(cb, "*2\r\n+OK\r\n$5\r\nthree", "EXEC")
			dump, err := ca.Do("DUMP", "{b}2")
			if err != nil {
				t.Fatal(err)
			}
			expect(cb, "+OK", "RESTORE-ASKING", "{b}2", 0, dump.Str) // no ASKING needed
			expect(ca, ":1", "DEL", "{b}2")
			expect(cb, "+OK", "CLUSTER", "SETSLOT", slot, "NODE", bID)
			expect(ca, "+OK", "CLUSTER", "SETSLOT", slot, "NODE", bID)
			expect(ca, "-MOVED 3300 "+b, "GET", "{b}1")
			expect(cb, "$5\r\nthree", "GET", "{b}3")
			expect(cb, ":3", "CLUSTER", "COUNTKEYSINSLOT", slot)
		})
	}
}
