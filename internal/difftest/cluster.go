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
	if out, err := RedisCli(ctx, "", args...); err != nil {
		return fmt.Errorf("redis-cli %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return WaitClusterAgrees(addrs...)
}

// RedisCli runs redis-cli with args and input on its standard input. For
// `--cluster create`, it repeats the CLUSTER MEET of two nodes that do not
// know each other a few seconds after redis-cli's own: a handshake that
// takes longer than the node timeout (a loaded machine) is dropped, by
// redis-server as by Keyhive, and the two nodes then never meet, while
// redis-cli waits for them to for ever.
func RedisCli(ctx context.Context, input string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "redis-cli", args...)
	cmd.Stdin = strings.NewReader(input)
	if len(args) > 2 && args[0] == "--cluster" && args[1] == "create" {
		var addrs []string
		for _, a := range args[2:] {
			if strings.HasPrefix(a, "--") {
				break
			}
			addrs = append(addrs, a)
		}
		done := make(chan struct{})
		defer close(done)
		go meetAgain(addrs, done)
	}
	return cmd.CombinedOutput()
}

// meetAgain sends CLUSTER MEET, once a second, to each node at addrs that
// does not know one of the others, from 3 s after the first node knows
// another (redis-cli's MEETs went out) until done is closed.
func meetAgain(addrs []string, done <-chan struct{}) {
	var since time.Time
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		self := map[string]string{}  // addr -> its ip:port@bus
		known := map[string]string{} // addr -> its CLUSTER NODES
		for _, a := range addrs {
			r, _ := Inline(a, "CLUSTER NODES")
			nodes := r.Str
			known[a] = nodes
			for _, line := range strings.Split(nodes, "\n") {
				if f := strings.Fields(line); len(f) > 2 && strings.Contains(f[2], "myself") {
					self[a] = f[1]
				}
			}
		}
		if since.IsZero() {
			for _, nodes := range known {
				if strings.Count(strings.TrimSpace(nodes), "\n") > 0 {
					since = time.Now()
				}
			}
			continue
		}
		if time.Since(since) < 3*time.Second {
			continue
		}
		for _, a := range addrs {
			for _, b := range addrs {
				bus := self[b]
				if a == b || bus == "" || strings.Contains(known[a], " "+bus) {
					continue
				}
				hostPort, busPort, _ := strings.Cut(bus, "@")
				busPort, _, _ = strings.Cut(busPort, ",") // a hostname may follow
				host, port, _ := strings.Cut(hostPort, ":")
				Inline(a, "CLUSTER MEET "+host+" "+port+" "+busPort)
			}
		}
	}
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
