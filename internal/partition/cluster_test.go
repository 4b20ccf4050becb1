package partition

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/crashtest"
	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/keyspace"
)

// servers are the binaries a scenario runs against: a built keyhive, whose
// losses fail the test, and redis-server, whose figures are logged beside
// them (the 7.4.1 oracle when built, else Debian's).
func servers(t *testing.T) []struct{ name, bin string } {
	t.Helper()
	if why := Available(); why != "" {
		t.Skip(why)
	}
	if testing.Short() {
		t.Skip("slow, skipped with -short: partition trials")
	}
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Skip("redis-cli not found (apt-get install redis-tools)")
	}
	bin, err := crashtest.BuildKeyhive(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	list := []struct{ name, bin string }{{"keyhive", bin}}
	if redis, err := difftest.Oracle74(); err == nil {
		list = append(list, struct{ name, bin string }{"redis-server 7.4.1", redis})
	} else if redis, err := exec.LookPath("redis-server"); err == nil {
		list = append(list, struct{ name, bin string }{"redis-server", redis})
	}
	return list
}

// TestClusterHealWindow: a master cut off from the cluster and its
// clients long enough to be failed over, then plugged back in, must not
// acknowledge a write in the moment before it learns that its replica
// took its slots: such a write is thrown away when it resyncs as a
// replica. A client hammers it from the heal on; every write it saw
// acknowledged must be on the new master. The heal comes in two steps,
// the link to the new master last (two seconds later): the old master
// then sees a majority of masters again before the node that took its
// slots can tell it so. Each trial cuts the shard's current master, so
// the roles alternate.
func TestClusterHealWindow(t *testing.T) {
	for _, s := range servers(t) {
		t.Run(s.name, func(t *testing.T) {
			const nodeTimeout = time.Second
			c, err := StartCluster(s.bin, t.TempDir(), 3, 1, nodeTimeout)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			master := 0
			if nodes, err := c.Nodes(0); err != nil || !nodes[0].Master && !masterOf(nodes, c.Procs[0].Addr) {
				master = c.Host(firstMaster(t, c))
			}
			lostTotal := 0
			for trial := range 3 {
				next, lost := healTrial(t, c, master, trial, nodeTimeout)
				lostTotal += lost
				master = next
			}
			if s.name == "keyhive" && lostTotal > 0 {
				t.Errorf("%d acknowledged writes lost over 3 trials", lostTotal)
			}
		})
	}
}

func masterOf(nodes []Node, addr string) bool {
	for _, n := range nodes {
		if n.Addr == addr {
			return n.Master
		}
	}
	return false
}

func firstMaster(t *testing.T, c *Cluster) string {
	nodes, err := c.Nodes(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.Master && len(n.Slots) > 0 {
			return n.Addr
		}
	}
	t.Fatal("no master with slots")
	return ""
}

// healTrial cuts host m (a master), waits for its replica to take over,
// heals it while a writer targets it, and returns the new master's host
// and the writes acknowledged after the heal that it does not have.
func healTrial(t *testing.T, c *Cluster, m, trial int, nodeTimeout time.Duration) (next, lost int) {
	t.Helper()
	nodes, err := c.Nodes(m)
	if err != nil {
		t.Fatal(err)
	}
	var me Node
	for _, n := range nodes {
		if n.Addr == c.Procs[m].Addr {
			me = n
		}
	}
	replica := -1
	for _, n := range nodes {
		if n.MasterID == me.ID {
			replica = c.Host(n.Addr)
		}
	}
	if !me.Master || len(me.Slots) == 0 || replica < 0 {
		t.Fatalf("trial %d: %s is no master with slots and a replica:\n%v", trial, c.Procs[m].Addr, nodes)
	}
	tag := ""
	for i := 0; tag == ""; i++ {
		if me.Owns(keyspace.Slot([]byte(fmt.Sprint(i)))) {
			tag = fmt.Sprint(i)
		}
	}
	w := StartWriter(c.Procs[m].Addr, fmt.Sprintf("{%s}:%d:", tag, trial), 8)
	time.Sleep(500 * time.Millisecond)
	if err := c.Net.Cut(c.Hosts[m]); err != nil {
		t.Fatal(err)
	}
	cut := time.Now()
	if !waitFor(30*time.Second, func() bool { return Role(c.Procs[replica].Addr) == "master" }) {
		t.Fatalf("trial %d: the replica did not take over in 30 s\n%s\n%s", trial, c.Dump(replica), c.Dump(m))
	}
	time.Sleep(max(0, 3*nodeTimeout-time.Since(cut)))
	healed := w.NextPhase()
	if err := c.Net.HealExcept(c.Hosts[m], c.Hosts[replica]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if err := c.Net.Heal(c.Hosts[m]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	w.Stop()
	if !waitFor(30*time.Second, func() bool { return Role(c.Procs[m].Addr) == "slave" }) {
		t.Fatalf("trial %d: the old master does not follow the new one after 30 s\n%s\n%s", trial, c.Dump(m), c.Dump(replica))
	}
	if err := c.WaitStable(); err != nil {
		t.Fatal(err)
	}
	missing, checked, err := w.Lost(c.Procs[replica].Addr, healed)
	if err != nil {
		t.Fatal(err)
	}
	// It was heard after the heal (CLUSTERDOWN, MOVED or acknowledgements):
	// no acknowledgement lost means something.
	if w.Answered(healed) == 0 {
		t.Errorf("trial %d: the old master answered nothing after the heal: the trial checked nothing", trial)
	}
	t.Logf("trial %d: cut %s for %v; %s; %d acknowledged after the heal, %d of them lost %.5q",
		trial, c.Procs[m].Addr, time.Since(cut).Round(100*time.Millisecond), w.Summary(), checked, len(missing), strings.Join(missing, " "))
	return replica, len(missing)
}

// waitFor polls cond until it holds (true) or limit passes (false).
func waitFor(limit time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(limit); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// TestClusterTrials runs the scenarios on one shard of a cluster of three
// masters with two replicas each (node timeout 1 s).
func TestClusterTrials(t *testing.T) {
	runTrials(t, "cluster", startClusterGroup)
}

func startClusterGroup(t *testing.T, v variant) *group {
	t.Helper()
	const nodeTimeout = time.Second
	dir := t.TempDir()
	c, err := StartCluster(v.bin, dir, 3, 2, nodeTimeout, v.args...)
	if err != nil {
		t.Fatal(err)
	}
	ok := false
	defer func() {
		if !ok {
			c.Close()
		}
	}()
	nodes, err := c.Nodes(0)
	if err != nil {
		t.Fatal(err)
	}
	g := &group{net: c.Net, hosts: c.Hosts, procs: c.Procs, close: c.Close}
	var master Node
	for _, n := range nodes {
		if n.Master && len(n.Slots) > 0 {
			master = n
			break
		}
	}
	g.shard[0] = c.Host(master.Addr)
	r := 1
	for _, n := range nodes {
		if n.MasterID == master.ID && r < 3 {
			g.shard[r] = c.Host(n.Addr)
			r++
		}
	}
	if r != 3 {
		t.Fatalf("%s has %d replicas:\n%v", master.Addr, r-1, nodes)
	}
	for i := 0; g.key == ""; i++ {
		if tag := strconv.Itoa(i); master.Owns(keyspace.Slot([]byte(tag))) {
			g.key = "{" + tag + "}:"
		}
	}
	slot := keyspace.Slot([]byte(strings.Trim(g.key, "{}:")))
	g.restart = func(i int) error {
		p, err := c.Hosts[i].Start(v.bin, filepath.Join(dir, strconv.Itoa(i)), clusterPort, append([]string{"--cluster-enabled", "yes",
			"--cluster-node-timeout", strconv.FormatInt(nodeTimeout.Milliseconds(), 10)}, v.args...)...)
		if err != nil {
			return err
		}
		c.Procs[i] = p
		return nil
	}
	g.settle = func() (string, error) {
		if err := c.WaitStable(); err != nil {
			return "", err
		}
		nodes, err := c.Nodes(0)
		if err != nil {
			return "", err
		}
		for _, n := range nodes {
			if n.Master && n.Owns(slot) {
				return n.Addr, nil
			}
		}
		return "", fmt.Errorf("no master owns slot %d:\n%v", slot, nodes)
	}
	ok = true
	return g
}
