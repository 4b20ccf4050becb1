package partition

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestSentinelMasterIsolated: a master with two replicas and a Sentinel on
// each of the three hosts is cut off from its replicas and their Sentinels
// while a client still reaches it (a partition with the client on the
// master's side). The Sentinels promote a replica; the old master takes
// writes until the heal, then becomes a replica and drops them. With
// Redis's defaults every write it acknowledged during the cut is lost, on
// redis-server as on Keyhive (logged beside each other); with
// min-replicas-to-ack 2 (every replica) Keyhive acknowledges none of them,
// so nothing acknowledged is lost. KEYHIVE_PARTITION_TRIALS sets the trials
// per variant (1).
func TestSentinelMasterIsolated(t *testing.T) {
	if _, err := exec.LookPath("redis-sentinel"); err != nil {
		t.Skip("redis-sentinel not found (apt-get install redis-sentinel)")
	}
	trials := 1
	if n, err := strconv.Atoi(os.Getenv("KEYHIVE_PARTITION_TRIALS")); err == nil && n > 0 {
		trials = n
	}
	for _, s := range servers(t) {
		variants := []struct {
			name    string
			args    []string
			durable bool
		}{{"defaults", nil, false}}
		if s.name == "keyhive" {
			variants = append(variants, struct {
				name    string
				args    []string
				durable bool
			}{"min-replicas-to-ack 2", []string{"--min-replicas-to-ack", "2", "--min-replicas-ack-timeout", "2000"}, true})
		}
		for _, v := range variants {
			t.Run(s.name+"/"+v.name, func(t *testing.T) {
				acked, lost := 0, 0
				for trial := range trials {
					a, l := isolatedMasterTrial(t, s.bin, trial, v.args)
					acked, lost = acked+a, lost+l
				}
				t.Logf("%s, %s: %d of %d acknowledged writes lost over %d trials", s.name, v.name, lost, acked, trials)
				if v.durable && lost > 0 {
					t.Errorf("%d acknowledged writes lost with min-replicas-to-ack", lost)
				}
			})
		}
	}
}

// isolatedMasterTrial runs one trial on a fresh net and returns the writes
// acknowledged and those of them the new master does not have.
func isolatedMasterTrial(t *testing.T, bin string, trial int, args []string) (acked, lost int) {
	t.Helper()
	n, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	var hosts []*Host
	var nodes, sentinels []*Proc
	defer func() {
		for _, p := range append(nodes, sentinels...) {
			p.Kill()
		}
	}()
	dir := t.TempDir()
	start := func(h *Host, name string, f func(dir string) (*Proc, error)) *Proc {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		p, err := f(d)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	const port, sentinelPort = 6379, 26379
	for i := range 3 {
		h, err := n.AddHost()
		if err != nil {
			t.Fatal(err)
		}
		hosts = append(hosts, h)
		nodeArgs := args
		if i > 0 {
			nodeArgs = append([]string{"--replicaof", hosts[0].IP, strconv.Itoa(port)}, args...)
		}
		nodes = append(nodes, start(h, "node"+strconv.Itoa(i), func(d string) (*Proc, error) {
			return h.Start(bin, d, port, append([]string{"--repl-diskless-sync-delay", "0"}, nodeArgs...)...)
		}))
	}
	master := nodes[0]
	for i, h := range hosts {
		sentinels = append(sentinels, start(h, "sentinel"+strconv.Itoa(i), func(d string) (*Proc, error) {
			return h.StartSentinel(d, sentinelPort, master.Addr)
		}))
	}
	if !waitFor(time.Minute, func() bool {
		for _, s := range sentinels {
			if count(s.Addr, "REPLICAS") != 2 || count(s.Addr, "SENTINELS") != 2 {
				return false
			}
		}
		return infoField(master.Addr, "connected_slaves") == "2"
	}) {
		t.Fatalf("trial %d: the Sentinels do not see the replicas and each other:\n%s", trial, sentinels[0].Log())
	}

	w := StartWriter(master.Addr, "t"+strconv.Itoa(trial)+":", 4)
	defer func() {
		if w != nil {
			w.Stop()
		}
	}()
	time.Sleep(time.Second)
	w.NextPhase()
	for _, h := range hosts[1:] {
		if err := n.CutPair(hosts[0], h); err != nil {
			t.Fatal(err)
		}
	}
	var promoted *Proc
	if !waitFor(time.Minute, func() bool {
		for _, p := range nodes[1:] {
			if Role(p.Addr) == "master" {
				promoted = p
				return true
			}
		}
		return false
	}) {
		t.Fatalf("trial %d: no replica promoted:\n%s", trial, sentinels[1].Log())
	}
	time.Sleep(2 * time.Second) // the old master goes on taking writes
	w.NextPhase()
	for _, h := range hosts[1:] {
		if err := n.HealPair(hosts[0], h); err != nil {
			t.Fatal(err)
		}
	}
	if !waitFor(time.Minute, func() bool {
		return Role(master.Addr) == "slave" && infoField(master.Addr, "master_link_status") == "up"
	}) {
		t.Fatalf("trial %d: the old master does not rejoin as a replica:\n%s", trial, sentinels[0].Log())
	}
	w.Stop()
	summary := w.Summary()
	missing, checked, err := w.Lost(promoted.Addr, 0)
	w = nil
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("trial %d: %d of %d acknowledged writes missing on the new master (%s)", trial, len(missing), checked, summary)
	return checked, len(missing)
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
