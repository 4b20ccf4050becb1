package partition

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestSentinelTrials runs the scenarios on a master and two replicas, a
// Sentinel beside each.
func TestSentinelTrials(t *testing.T) {
	if _, err := exec.LookPath("redis-sentinel"); err != nil {
		t.Skip("redis-sentinel not found (apt-get install redis-sentinel)")
	}
	runTrials(t, "sentinel", startSentinelGroup)
}

func startSentinelGroup(t *testing.T, v variant) *group {
	t.Helper()
	n, err := New()
	if err != nil {
		t.Fatal(err)
	}
	g := &group{net: n, shard: [3]int{0, 1, 2}, key: "k"}
	var sentinels []*Proc
	g.close = func() {
		for _, p := range append(g.procs, sentinels...) {
			p.Kill()
		}
		n.Close()
	}
	ok := false
	defer func() {
		if !ok {
			g.close()
		}
	}()
	dir := t.TempDir()
	const port, sentinelPort = 6379, 26379
	for i := range 3 {
		h, err := n.AddHost()
		if err != nil {
			t.Fatal(err)
		}
		g.hosts = append(g.hosts, h)
		args := append([]string{"--repl-diskless-sync-delay", "0"}, v.args...)
		if i > 0 {
			args = append(args, "--replicaof", g.hosts[0].IP, strconv.Itoa(port))
		}
		d := filepath.Join(dir, "node"+strconv.Itoa(i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		p, err := h.Start(v.bin, d, port, args...)
		if err != nil {
			t.Fatal(err)
		}
		g.procs = append(g.procs, p)
	}
	for i, h := range g.hosts {
		d := filepath.Join(dir, "sentinel"+strconv.Itoa(i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		p, err := h.StartSentinel(d, sentinelPort, g.procs[0].Addr)
		if err != nil {
			t.Fatal(err)
		}
		sentinels = append(sentinels, p)
	}
	if !waitFor(time.Minute, func() bool {
		for _, s := range sentinels {
			if count(s.Addr, "REPLICAS") != 2 || count(s.Addr, "SENTINELS") != 2 {
				return false
			}
		}
		return infoField(g.procs[0].Addr, "connected_slaves") == "2"
	}) {
		t.Fatalf("the Sentinels do not see the replicas and each other:\n%s", sentinels[0].Log())
	}
	ok = true
	g.settle = func() (string, error) {
		var master string
		ok := waitFor(time.Minute, func() bool {
			master = ""
			for _, s := range sentinels {
				r, err := difftest.Inline(s.Addr, "SENTINEL get-master-addr-by-name mymaster")
				if err != nil || len(r.Elems) != 2 {
					return false
				}
				addr := r.Elems[0].Str + ":" + r.Elems[1].Str
				if master != "" && addr != master {
					return false
				}
				master = addr
			}
			if Role(master) != "master" {
				return false
			}
			for _, p := range g.procs {
				if p.Addr != master && alive(p) && (Role(p.Addr) != "slave" || infoField(p.Addr, "master_link_status") != "up" ||
					infoField(p.Addr, "master_host")+":"+infoField(p.Addr, "master_port") != master) {
					return false
				}
			}
			return true
		})
		if !ok {
			return "", fmt.Errorf("no single master its replicas follow (Sentinels say %q):\n%s", master, sentinels[1].Log())
		}
		return master, nil
	}
	return g
}

func alive(p *Proc) bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// count is the length of a Sentinel's reply to SENTINEL what mymaster.
func count(sentinel, what string) int {
	r, err := difftest.Inline(sentinel, "SENTINEL "+what+" mymaster")
	if err != nil || r.IsError() {
		return -1
	}
	return len(r.Elems)
}

// infoField is an INFO replication field of the server at addr.
func infoField(addr, name string) string {
	r, err := difftest.Inline(addr, "INFO replication")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(r.Str, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v
		}
	}
	return ""
}
