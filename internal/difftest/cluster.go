package difftest

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ClusterNodeTimeout is the cluster-node-timeout of the nodes
// StartClusterNode starts, in milliseconds: short, so failure detection and
// the tests are.
const ClusterNodeTimeout = "1000"

// ClusterDirectives are a cluster node's directives: cluster mode, the
// short node timeout and a bus port of its own (port+10000 may pass 65535
// for the kernel's free ports).
func ClusterDirectives() ([]string, error) {
	busPort, err := freePort()
	if err != nil {
		return nil, err
	}
	return []string{"--cluster-enabled", "yes", "--cluster-node-timeout", ClusterNodeTimeout,
		"--cluster-port", strconv.Itoa(busPort)}, nil
}

// StartClusterNode starts a cluster node process with ClusterDirectives and
// extra: bin is a built keyhive (BuildKeyhive), or "" for redis-server.
func StartClusterNode(bin string, extra ...string) (addr string, stop func(), err error) {
	// The bus port is free when chosen but may be taken (an outgoing
	// connection's ephemeral port) before the node binds it: the node then
	// exits at start, and another port is tried.
	for range 5 {
		var directives []string
		if directives, err = ClusterDirectives(); err != nil {
			return "", nil, err
		}
		directives = append(directives, extra...)
		if bin == "" {
			addr, stop, err = StartRedis(directives...)
		} else {
			addr, stop, err = StartProcess(bin, directives...)
		}
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), "address already in use") {
			return addr, stop, err
		}
	}
	return "", nil, err
}

// CreateCluster makes the nodes at addrs one cluster of masters with
// `redis-cli --cluster create` and waits until every node agrees.
func CreateCluster(addrs ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.CommandContext(ctx, "redis-cli", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("redis-cli %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return WaitClusterAgrees(addrs...)
}

// WaitClusterAgrees waits until every node at addrs knows the others and
// says the cluster is ok, and redis-cli --cluster check passes.
func WaitClusterAgrees(addrs ...string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok := true
		for _, a := range addrs {
			info := inlineText(a, "CLUSTER INFO")
			if !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(len(addrs))+"\r\n") {
				ok = false
			}
		}
		if ok {
			out, err := exec.Command("redis-cli", "--cluster", "check", addrs[0]).CombinedOutput()
			if err == nil && strings.Contains(string(out), "[OK] All nodes agree") && !strings.Contains(string(out), "[WARNING]") {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("cluster check:\n%s", out)
			}
		} else if time.Now().After(deadline) {
			var b strings.Builder
			for _, a := range addrs {
				fmt.Fprintf(&b, "--- %s\n%s\n%s\n", a, inlineText(a, "CLUSTER INFO"), inlineText(a, "CLUSTER NODES"))
			}
			return errors.New("the cluster is not ok on every node:\n" + b.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// inlineText is a command's bulk or status reply ("" on an error).
func inlineText(addr, command string) string {
	r, err := Inline(addr, command)
	if err != nil {
		return ""
	}
	return r.Str
}

// StartCluster starts masters node processes of bin (a built keyhive, or ""
// for redis-server) and makes them one cluster (CreateCluster); stop kills
// them all.
func StartCluster(bin string, masters int) (addrs []string, stop func(), err error) {
	var stops []func()
	stop = func() {
		for _, s := range stops {
			s()
		}
	}
	for range masters {
		addr, stopNode, err := StartClusterNode(bin)
		if err != nil {
			stop()
			return nil, nil, err
		}
		addrs = append(addrs, addr)
		stops = append(stops, stopNode)
	}
	if err := CreateCluster(addrs...); err != nil {
		stop()
		return nil, nil, err
	}
	return addrs, stop, nil
}
