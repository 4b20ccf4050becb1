package partition

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// The trials: a shard of a master and two replicas (managed by three
// Sentinels, or one of a cluster's three shards) goes through a scenario
// while a client writes to its master, then the network heals; every
// write the client saw acknowledged must be on the shard's master at the
// end. Each runs against Keyhive with Redis's defaults, Keyhive in durable
// mode (min-replicas-to-ack 1: a majority of the shard's three copies;
// 2: every replica) and redis-server with its defaults. Keyhive in
// durable mode must lose nothing in every scenario; the others' figures
// are logged (docs/durability.md says what each mode guarantees).
// KEYHIVE_PARTITION_TRIALS=N runs N trials of each scenario and variant;
// by default one trial of each scenario, in durable mode with a majority
// only (the suite's time).

// group is a shard under test: hosts shard[0] (its first master),
// shard[1] and shard[2] (its replicas) in net, whose processes procs has
// by host index.
type group struct {
	net   *Net
	hosts []*Host
	procs []*Proc
	shard [3]int
	key   string // written keys start with it: they go to the shard
	// restart starts a killed host's server again (nil: it stays dead).
	restart func(i int) error
	// close kills the processes and removes the net.
	close func()
	// settle waits, after every link healed, until the shard has one
	// master that its live replicas follow, and returns its address.
	settle func() (string, error)
}

// promoted reports whether one of the shard's first replicas is a master.
func (g *group) promoted() bool {
	return Role(g.procs[g.shard[1]].Addr) == "master" || Role(g.procs[g.shard[2]].Addr) == "master"
}

// stuck is the whole log of each server that does not answer PING, after
// a SIGQUIT if it runs (a Go server writes its goroutines' stacks there).
func (g *group) stuck() string {
	var b strings.Builder
	for _, p := range g.procs {
		if _, err := difftest.Inline(p.Addr, "PING"); err == nil {
			continue
		}
		if proc, err := os.FindProcess(p.pid); err == nil && alive(p) {
			proc.Signal(syscall.SIGQUIT)
		}
		<-p.exited
		log, _ := os.ReadFile(p.logPath)
		fmt.Fprintf(&b, "\n--- %s does not answer PING; its log:\n%s", p.Addr, log)
	}
	return b.String()
}

// cutPeers cuts host i from every other host (its clients still reach it).
func (g *group) cutPeers(i int) error {
	for j := range g.hosts {
		if j != i {
			if err := g.net.CutPair(g.hosts[i], g.hosts[j]); err != nil {
				return err
			}
		}
	}
	return nil
}

func (g *group) healAll() error {
	for _, h := range g.hosts {
		if err := g.net.Heal(h); err != nil {
			return err
		}
	}
	return nil
}

// A scenario acts on the group while the writer runs; every link is healed
// after it.
type scenario struct {
	name string
	run  func(g *group, rng *rand.Rand) error
}

// failoverWait bounds the wait for a promotion.
const failoverWait = 30 * time.Second

var scenarios = []scenario{
	{"master isolated", func(g *group, rng *rand.Rand) error {
		// From its replicas (and the Sentinels beside them, or the rest of
		// the cluster), its clients on its side, until a replica took over.
		m := g.shard[0]
		if err := g.cutPeers(m); err != nil {
			return err
		}
		if !waitFor(failoverWait, g.promoted) {
			return errors.New("no replica promoted")
		}
		time.Sleep(time.Second) // the old master's clients go on writing
		return nil
	}},
	{"replica isolated", func(g *group, rng *rand.Rand) error {
		// Long enough to be flagged down: no failover is due.
		if err := g.net.Cut(g.hosts[g.shard[1]]); err != nil {
			return err
		}
		time.Sleep(3 * time.Second)
		return nil
	}},
	{"partition during failover", func(g *group, rng *rand.Rand) error {
		// The master is cut off; while the failover runs, the partition
		// moves: the master gets one replica back and the other replica
		// (its ahead or behind) is cut off from everyone.
		m, r1, r2 := g.shard[0], g.shard[1], g.shard[2]
		if err := g.cutPeers(m); err != nil {
			return err
		}
		time.Sleep(time.Second + time.Duration(rng.IntN(1500))*time.Millisecond)
		if err := g.net.HealPair(g.hosts[m], g.hosts[r2]); err != nil {
			return err
		}
		if err := g.cutPeers(r1); err != nil {
			return err
		}
		time.Sleep(3 * time.Second)
		return nil
	}},
	{"flapping link", func(g *group, rng *rand.Rand) error {
		// The master's links to every peer go down and up together, each
		// state for 0.2-1.5 s, for 8 s: some outages outlast the failure
		// detection.
		m := g.shard[0]
		for end := time.Now().Add(8 * time.Second); time.Now().Before(end); {
			if err := g.cutPeers(m); err != nil {
				return err
			}
			time.Sleep(time.Duration(200+rng.IntN(1300)) * time.Millisecond)
			if err := g.healAll(); err != nil {
				return err
			}
			time.Sleep(time.Duration(200+rng.IntN(1300)) * time.Millisecond)
		}
		return nil
	}},
	{"kill -9 during a partition", func(g *group, rng *rand.Rand) error {
		// One replica is cut off from the master and falls behind; the
		// master is killed; the replica that kept up must be the one
		// promoted. A cluster node comes back (empty) once a replica took
		// its slots.
		m, r2 := g.shard[0], g.shard[2]
		if err := g.net.CutPair(g.hosts[m], g.hosts[r2]); err != nil {
			return err
		}
		time.Sleep(time.Duration(500+rng.IntN(1500)) * time.Millisecond)
		g.procs[m].Kill()
		if !waitFor(failoverWait, g.promoted) {
			return errors.New("no replica promoted")
		}
		if g.restart != nil {
			return g.restart(m)
		}
		return nil
	}},
}

// variant is a server and its settings.
type variant struct {
	name  string
	bin   string
	args  []string
	gated bool // a lost acknowledged write fails the test
	inCI  bool // run once per scenario without KEYHIVE_PARTITION_TRIALS
}

func variants(t *testing.T) []variant {
	list := servers(t)
	keyhive := list[0].bin
	vs := []variant{
		{name: "keyhive min-replicas-to-ack 1", bin: keyhive, args: []string{"--min-replicas-to-ack", "1", "--min-replicas-ack-timeout", "2000"}, gated: true, inCI: true},
		{name: "keyhive min-replicas-to-ack 2", bin: keyhive, args: []string{"--min-replicas-to-ack", "2", "--min-replicas-ack-timeout", "2000"}, gated: true},
		{name: "keyhive defaults", bin: keyhive},
	}
	for _, s := range list[1:] {
		vs = append(vs, variant{name: s.name + " defaults", bin: s.bin})
	}
	return vs
}

// trialsPerCase is KEYHIVE_PARTITION_TRIALS, 0 when unset.
func trialsPerCase() int {
	n, err := strconv.Atoi(os.Getenv("KEYHIVE_PARTITION_TRIALS"))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// runTrials runs every scenario against every variant on groups made by
// start, and logs a table of the losses.
func runTrials(t *testing.T, topology string, start func(t *testing.T, v variant) *group) {
	n := trialsPerCase()
	var table []string
	for _, v := range variants(t) {
		trials := n
		if n == 0 {
			if !v.inCI {
				continue
			}
			trials = 1
		}
		for _, sc := range scenarios {
			t.Run(v.name+"/"+sc.name, func(t *testing.T) {
				acked, lost, failed := 0, 0, 0
				for trial := range trials {
					a, l, err := oneTrial(t, start, v, sc, trial)
					if err != nil {
						failed++
						t.Logf("trial %d: %v", trial, err)
						continue
					}
					acked, lost = acked+a, lost+l
				}
				line := fmt.Sprintf("%s | %s | %s | %d | %d | %d | %d", topology, sc.name, v.name, trials-failed, acked, lost, failed)
				table = append(table, line)
				t.Log(line)
				if failed > 0 {
					t.Errorf("%d of %d trials did not run to the end", failed, trials)
				}
				if v.gated && lost > 0 {
					t.Errorf("%d acknowledged writes lost", lost)
				}
			})
		}
	}
	t.Logf("topology | scenario | server | trials | acknowledged | lost | failed trials\n%s", strings.Join(table, "\n"))
}

// oneTrial starts a group, writes to its master through the scenario and
// the heal, and returns the writes acknowledged and those of them the
// shard's final master lacks.
func oneTrial(t *testing.T, start func(t *testing.T, v variant) *group, v variant, sc scenario, trial int) (acked, lost int, err error) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 0))
	g := start(t, v)
	defer g.close()
	w := StartWriter(g.procs[g.shard[0]].Addr, fmt.Sprintf("%s%d:", g.key, trial), 4)
	stopped := false
	defer func() {
		if !stopped {
			w.Stop()
		}
	}()
	time.Sleep(time.Second)
	if err := sc.run(g, rng); err != nil {
		return 0, 0, fmt.Errorf("seed %d: %v", seed, err)
	}
	if err := g.healAll(); err != nil {
		return 0, 0, err
	}
	time.Sleep(time.Second) // the client meets the healed network too
	w.Stop()
	stopped = true
	master, err := g.settle()
	if err != nil {
		return 0, 0, fmt.Errorf("seed %d: after the heal: %v%s", seed, err, g.stuck())
	}
	missing, checked, err := w.Lost(master, 0)
	if err != nil {
		return 0, 0, err
	}
	t.Logf("trial %d (seed %d): %d of %d acknowledged writes missing on the final master %s (%s) %.3q",
		trial, seed, len(missing), checked, master, w.Summary(), missing)
	return checked, len(missing), nil
}
