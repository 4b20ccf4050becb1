package cluster

import (
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

type nopHost struct{}

func (nopHost) DeleteKeysInSlot(int)         {}
func (nopHost) Deliver([]byte, []byte, bool) {}
func (nopHost) Replicate(string, int)        {}
func (nopHost) ReplicationOffset() int64     { return 0 }
func (nopHost) ReplicationDataAge() int64    { return 0 }
func (nopHost) PauseWrites(int64)            {}
func (nopHost) UnsubscribeSlots(*Slots)      {}
func quietLogger() *log.Logger               { return log.New(io.Discard, "", 0) }
func testOptions(t testing.TB, dir string) Options {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return Options{ConfigFile: filepath.Join(dir, "nodes.conf"), Port: port - 1, BusPort: port,
		NodeTimeout: 500 * time.Millisecond, BindAddresses: []string{"127.0.0.1"}, Logger: quietLogger()}
}

// withoutTimes drops CLUSTER NODES's ping and pong times, which a reload
// does not keep.
func withoutTimes(nodes string) string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(nodes), "\n") {
		f := strings.Fields(line)
		f[4], f[5] = "-", "-"
		out = append(out, strings.Join(f, " "))
	}
	return strings.Join(out, "\n")
}

// TestClusterConfigReload: a node's name, slots, epochs and open slots
// survive a restart through nodes.conf.
func TestClusterConfigReload(t *testing.T) {
	dir := t.TempDir()
	opt := testOptions(t, dir)
	s, err := Open(opt, nopHost{})
	if err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(opt.ConfigFile); err != nil || !strings.Contains(string(data), fmt.Sprintf(":%d@%d myself,master", opt.Port, opt.BusPort)) {
		t.Errorf("nodes.conf lacks myself's address:\n%s", data)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if err := s.AddSlots([][2]int{{0, 99}, {200, 200}}, false); err != nil {
		t.Fatal(err)
	}
	if err := s.SetConfigEpoch(7); err != nil {
		t.Fatal(err)
	}
	if err := s.SetSlot(50, "migrating", s.MyName(), 0); err != nil {
		t.Fatal(err)
	}
	before, name, shard := s.Nodes(), s.MyName(), s.MyShardID()
	s.Close()

	again, err := Open(opt, nopHost{})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again.MyName() != name || again.MyShardID() != shard {
		t.Errorf("reloaded as %s (shard %s), was %s (shard %s)", again.MyName(), again.MyShardID(), name, shard)
	}
	if got, want := withoutTimes(again.Nodes()), withoutTimes(before); got != want {
		t.Errorf("reloaded:\n%s\nwas:\n%s", got, want)
	}
	if mine, _, _ := again.Routes().Owner(200); !mine {
		t.Error("slot 200 is not mine after the reload")
	}
	if !strings.Contains(again.Info(), "cluster_current_epoch:7\r\n") {
		t.Errorf("current epoch lost:\n%s", again.Info())
	}
}

// TestClusterEpochCollision: three masters that meet with the same config
// epoch end with three different ones, and all know each other.
func TestClusterEpochCollision(t *testing.T) {
	var nodes []*State
	for range 3 {
		s, err := Open(testOptions(t, t.TempDir()), nopHost{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		nodes = append(nodes, s)
	}
	for _, s := range nodes[1:] {
		if err := nodes[0].Meet("127.0.0.1", s.opt.Port, s.opt.BusPort); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		epochs := map[uint64]bool{}
		known := true
		for _, s := range nodes {
			s.mu.Lock()
			epochs[s.myself.ConfigEpoch] = true
			known = known && len(s.nodes) == 3
			for _, n := range s.nodes {
				known = known && n.Flags&FlagHandshake == 0
			}
			s.mu.Unlock()
		}
		if len(epochs) == 3 && known {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("epochs %v, every node known: %v\n%s", epochs, known, nodes[0].Nodes())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestClusterBusBadInput: a peer sending what is no bus message, or a
// message cut short, has its link dropped; the node keeps serving.
func TestClusterBusBadInput(t *testing.T) {
	s, err := Open(testOptions(t, t.TempDir()), nopHost{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.opt.BusPort))
	ping := (&Message{Header: Header{Type: TypePing, Sender: randomName()}}).Encode(nil)
	huge := append([]byte("RCmb\x3f\xff\xff\xff"), ping[8:]...) // announces a gigabyte, sends 2 KB
	for _, input := range [][]byte{
		[]byte("GET foo\r\n"),
		[]byte("RCmb\x00\x00\x00\x01"),
		huge,
		append(ping[:100:100], make([]byte, 10)...),
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conn.Write(input)
		if len(input) < 100 {
			// No message: the node drops the link at once.
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.ReadAll(conn); err != nil {
				t.Errorf("%q: the link was not dropped: %v", input[:8], err)
			}
		} else {
			// A message announced but not all sent: the node waits for the
			// rest, holding no more than what arrived, until the peer goes.
			time.Sleep(100 * time.Millisecond)
		}
		conn.Close()
	}
	// A well-formed PING from an unknown node is answered.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write(ping)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	head := make([]byte, 8)
	if _, err := io.ReadFull(conn, head); err != nil || string(head[:4]) != "RCmb" {
		t.Fatalf("no PONG: %v", err)
	}
}

// TestClusterRejoinDelay: a master that saw itself in a minority stays
// down for the node timeout after the majority is back in sight, and a
// restarted one for two seconds: time for the cluster to tell it that its
// slots moved before it acknowledges a write it would lose.
func TestClusterRejoinDelay(t *testing.T) {
	now := int64(1_000_000)
	opt := testOptions(t, t.TempDir())
	opt.NodeTimeout = 3 * time.Second
	opt.Now = func() int64 { return now }
	s, err := Open(opt, nopHost{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.lock()
	defer s.unlock()
	others := []*Node{s.newNode(randomName(), FlagMaster), s.newNode(randomName(), FlagMaster)}
	for i, n := range append([]*Node{s.myself}, others...) {
		if n != s.myself {
			s.addNode(n)
		}
		for slot := i * SlotCount / 3; slot < (i+1)*SlotCount/3; slot++ {
			s.addSlot(n, slot)
		}
	}
	step := func(ms int64, want bool) {
		t.Helper()
		now += ms
		s.updateState()
		if s.ok != want {
			t.Fatalf("at +%d ms: ok %v, want %v", now-1_000_000, s.ok, want)
		}
	}
	step(1999, false) // restarted: writableDelay
	step(1, false)    // Open saw an empty table, a minority: the node timeout from then
	step(3000, true)
	for _, n := range others {
		n.Flags |= FlagPFail
	}
	step(100, false) // cut off: a minority of one
	step(15000, false)
	for _, n := range others {
		n.Flags &^= FlagPFail
	}
	step(100, false) // healed, waiting
	step(2899, false)
	step(1, true) // the node timeout after the last minority view
	// The bounds: a 100 ms node timeout still waits 500 ms, 60 s only 5 s.
	for _, c := range []struct{ timeout, wait int64 }{{100, 500}, {60000, 5000}} {
		s.opt.NodeTimeout = time.Duration(c.timeout) * time.Millisecond
		others[0].Flags |= FlagPFail
		others[1].Flags |= FlagPFail
		step(100, false)
		others[0].Flags &^= FlagPFail
		others[1].Flags &^= FlagPFail
		step(c.wait-1, false)
		step(1, true)
	}
}

type offsetHost struct {
	nopHost
	offset int64
}

func (h offsetHost) ReplicationOffset() int64 { return h.offset }

// TestClusterElectionRank: a replica of a failed master whose sibling
// reported a greater replication offset waits a second more before asking
// for votes, and another second whenever one more sibling gets ahead
// while it waits, so that the replica holding the most of its master's
// writes (those min-replicas-to-ack had acknowledged) is elected first.
func TestClusterElectionRank(t *testing.T) {
	for _, c := range []struct {
		sibling, raisedTo uint64
		rank, later       int
	}{{50, 50, 0, 0}, {100, 100, 0, 0}, {200, 200, 1, 1}, {50, 150, 0, 1}} {
		now := int64(1_000_000)
		opt := testOptions(t, t.TempDir())
		opt.Now = func() int64 { return now }
		s, err := Open(opt, offsetHost{offset: 100})
		if err != nil {
			t.Fatal(err)
		}
		s.lock()
		master, sibling := s.newNode(randomName(), FlagMaster|FlagFail), s.newNode(randomName(), FlagReplica)
		s.addNode(master)
		s.addNode(sibling)
		s.addSlot(master, 0)
		s.myself.Flags = s.myself.Flags&^FlagMaster | FlagReplica
		s.myself.Master, sibling.Master = master, master
		sibling.replOffset = c.sibling
		s.handleReplicaFailover()
		delay := s.election.start - now
		if s.election.rank != c.rank || delay < 500+int64(c.rank)*1000 || delay >= 1000+int64(c.rank)*1000 {
			t.Errorf("sibling at %d, mine 100: rank %d, delay %d ms; want rank %d", c.sibling, s.election.rank, delay, c.rank)
		}
		sibling.replOffset = c.raisedTo
		now += 100
		s.handleReplicaFailover()
		if got := s.election.start - now + 100 - delay; s.election.rank != c.later || got != int64(c.later-c.rank)*1000 {
			t.Errorf("sibling raised from %d to %d: rank %d, delay grew by %d ms; want rank %d", c.sibling, c.raisedTo, s.election.rank, got, c.later)
		}
		s.unlock()
		s.Close()
	}
}

// deletesHost records the slots whose keys the node deletes.
type deletesHost struct {
	nopHost
	deleted *[]int
}

func (h deletesHost) DeleteKeysInSlot(slot int) { *h.deleted = append(*h.deleted, slot) }

// TestClusterLostSlotsKeys: a master whose slots a newer master takes
// deletes the keys of those slots, unless it took them all, the new master
// being its replica that won an election: it then follows it, keys
// untouched (as Redis), and no DEL enters its stream.
func TestClusterLostSlotsKeys(t *testing.T) {
	for _, c := range []struct {
		taken       []int
		wantDeleted []int
		follows     bool
	}{{[]int{0, 1}, nil, true}, {[]int{1}, []int{1}, false}} {
		var deleted []int
		s, err := Open(testOptions(t, t.TempDir()), deletesHost{deleted: &deleted})
		if err != nil {
			t.Fatal(err)
		}
		s.lock()
		s.addSlot(s.myself, 0)
		s.addSlot(s.myself, 1)
		s.myself.ConfigEpoch = 1
		winner := s.newNode(randomName(), FlagMaster)
		s.addNode(winner)
		var claim Slots
		for _, slot := range c.taken {
			claim.Set(slot)
		}
		s.updateSlotsWith(winner, 2, &claim)
		follows := s.myself.Master == winner
		s.unlock()
		s.Close()
		if follows != c.follows || fmt.Sprint(deleted) != fmt.Sprint(c.wantDeleted) {
			t.Errorf("slots %v taken: follows the winner %v, deleted %v; want %v, %v", c.taken, follows, deleted, c.follows, c.wantDeleted)
		}
	}
}
