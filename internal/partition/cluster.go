package partition

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// clusterPort is every node's client port (each host has its own address).
const clusterPort = 7000

// Cluster is a Redis Cluster of one node per host, created with
// `redis-cli --cluster create`.
type Cluster struct {
	Net   *Net
	Hosts []*Host
	Procs []*Proc
}

// StartCluster starts masters*(1+replicas) nodes of bin (directories
// under dir) with the given node timeout and extra arguments, and makes
// them one cluster.
func StartCluster(bin, dir string, masters, replicas int, nodeTimeout time.Duration, args ...string) (*Cluster, error) {
	n, err := New()
	if err != nil {
		return nil, err
	}
	c := &Cluster{Net: n}
	var addrs []string
	for i := range masters * (1 + replicas) {
		h, err := n.AddHost()
		if err != nil {
			c.Close()
			return nil, err
		}
		nodeDir := filepath.Join(dir, strconv.Itoa(i))
		if err := os.MkdirAll(nodeDir, 0o755); err != nil {
			c.Close()
			return nil, err
		}
		p, err := h.Start(bin, nodeDir, clusterPort, append([]string{"--cluster-enabled", "yes",
			"--cluster-node-timeout", strconv.FormatInt(nodeTimeout.Milliseconds(), 10)}, args...)...)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.Hosts, c.Procs = append(c.Hosts, h), append(c.Procs, p)
		addrs = append(addrs, p.Addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	create := append(append([]string{"--cluster", "create"}, addrs...), "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	if out, err := difftest.RedisCli(ctx, "", create...); err != nil {
		c.Close()
		return nil, fmt.Errorf("redis-cli %s: %v\n%s", strings.Join(create, " "), err, out)
	}
	if err := c.WaitStable(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// WaitStable waits until every node agrees on the configuration and every
// replica's link to its master is up (a replica that never synced cannot
// be failed over to).
func (c *Cluster) WaitStable() error {
	var addrs []string
	for _, p := range c.Procs {
		addrs = append(addrs, p.Addr)
	}
	if err := difftest.WaitClusterAgrees(addrs...); err != nil {
		return err
	}
	for _, a := range addrs {
		deadline := time.Now().Add(30 * time.Second)
		for {
			r, err := difftest.Inline(a, "INFO replication")
			if err == nil && (strings.Contains(r.Str, "role:master") || strings.Contains(r.Str, "master_link_status:up")) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s: replication not up after 30 s:\n%s", a, r.Str)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

// Close kills the nodes and removes the network.
func (c *Cluster) Close() {
	for _, p := range c.Procs {
		p.Kill()
	}
	c.Net.Close()
}

// Host returns the index of the node listening on addr (-1 if none).
func (c *Cluster) Host(addr string) int {
	for i, p := range c.Procs {
		if p.Addr == addr {
			return i
		}
	}
	return -1
}

// Node is one line of CLUSTER NODES.
type Node struct {
	ID, Addr, MasterID string
	Master, Failing    bool
	Slots              [][2]int // ranges, both ends included
}

// Nodes is CLUSTER NODES as node i sees it.
func (c *Cluster) Nodes(i int) ([]Node, error) {
	r, err := difftest.Inline(c.Procs[i].Addr, "CLUSTER NODES")
	if err != nil {
		return nil, err
	}
	if r.IsError() {
		return nil, errors.New(r.Str)
	}
	var nodes []Node
	for _, line := range strings.Split(strings.TrimSpace(r.Str), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			return nil, fmt.Errorf("CLUSTER NODES line %q", line)
		}
		addr, _, _ := strings.Cut(f[1], "@")
		n := Node{ID: f[0], Addr: addr, MasterID: f[3]}
		for _, flag := range strings.Split(f[2], ",") {
			n.Master = n.Master || flag == "master"
			n.Failing = n.Failing || flag == "fail" || flag == "fail?"
		}
		for _, s := range f[8:] {
			if strings.HasPrefix(s, "[") { // a slot being migrated
				continue
			}
			lo, hi, found := strings.Cut(s, "-")
			a, _ := strconv.Atoi(lo)
			b := a
			if found {
				b, _ = strconv.Atoi(hi)
			}
			n.Slots = append(n.Slots, [2]int{a, b})
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// Owns reports whether slot is in n's ranges.
func (n Node) Owns(slot int) bool {
	for _, r := range n.Slots {
		if slot >= r[0] && slot <= r[1] {
			return true
		}
	}
	return false
}

// Role is INFO replication's role line of the node at addr ("" when it
// cannot be asked).
func Role(addr string) string {
	r, err := difftest.Inline(addr, "INFO replication")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(r.Str, "\r\n") {
		if v, ok := strings.CutPrefix(line, "role:"); ok {
			return v
		}
	}
	return ""
}

// Dump is node i's CLUSTER NODES and the end of its log, for a failure's
// message.
func (c *Cluster) Dump(i int) string {
	nodes := ""
	if r, err := difftest.Inline(c.Procs[i].Addr, "CLUSTER NODES"); err == nil {
		nodes = r.Str
	}
	return fmt.Sprintf("--- node %d (%s): CLUSTER NODES\n%s--- its log\n%s", i, c.Procs[i].Addr, nodes, c.Procs[i].Log())
}
