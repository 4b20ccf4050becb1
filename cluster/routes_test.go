package cluster

import (
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// checkRoutes compares every slot of the published routes with the node
// table they are built from.
func checkRoutes(t *testing.T, s *State, step string) {
	t.Helper()
	r := s.Routes()
	s.lock()
	defer s.unlock()
	addr := func(n *Node) string { return net.JoinHostPort(s.endpoint(n), strconv.Itoa(n.Port)) }
	bad := 0
	for slot := range SlotCount {
		owner, migrating, importing := s.slots[slot], s.migrating[slot], s.importing[slot]
		mine, assigned, to := r.Owner(slot)
		ok := mine == (owner == s.myself) && assigned == (owner != nil) && (owner == nil || to == addr(owner))
		mto, isMigrating := r.Migrating(slot)
		ok = ok && isMigrating == (migrating != nil) && (migrating == nil || mto == addr(migrating))
		ok = ok && r.Importing(slot) == (importing != nil)
		if !ok && bad < 5 {
			t.Errorf("%s: slot %d routes (mine %v, assigned %v, %q; migrating %v %q; importing %v), table: owner %v, migrating %v, importing %v",
				step, slot, mine, assigned, to, isMigrating, mto, r.Importing(slot), owner, migrating, importing)
		}
		if !ok {
			bad++
		}
	}
}

// addTestMaster puts a master at 127.0.0.1:port in s's table.
func addTestMaster(s *State, name string, port int) {
	s.lock()
	defer s.unlock()
	n := s.newNode(name, FlagMaster)
	n.IP, n.Port, n.CPort = "127.0.0.1", port, port+10000
	s.addNode(n)
	s.changed()
}

// TestRoutesFollowTheTable: the routes, rebuilt chunk by chunk as slots
// change, always say what the table says, also once a deleted node's index
// went to a new node.
func TestRoutesFollowTheTable(t *testing.T) {
	s, err := Open(testOptions(t, t.TempDir()), nopHost{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b, c, d := "b000000000000000000000000000000000000000", "c000000000000000000000000000000000000000", "d000000000000000000000000000000000000000"
	addTestMaster(s, b, 7001)
	addTestMaster(s, c, 7002)
	must := func(step string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		checkRoutes(t, s, step)
	}
	checkRoutes(t, s, "open")
	must("addslots", s.AddSlots([][2]int{{0, 10000}}, false))
	must("b takes 300", s.SetSlot(300, "node", b, 0))
	must("c takes 10001-10002", s.SetSlot(10001, "node", c, 0))
	must("", s.SetSlot(10002, "node", c, 0))
	must("5 migrating to b", s.SetSlot(5, "migrating", b, 0))
	must("600 migrating to b", s.SetSlot(600, "migrating", b, 0))
	must("10001 importing from c", s.SetSlot(10001, "importing", c, 0))
	must("10002 importing from b", s.SetSlot(10002, "importing", b, 0))
	must("10001 mine", s.SetSlot(10001, "node", s.MyName(), 0))
	must("600 stable", s.SetSlot(600, "stable", "", 0))
	must("forget b", s.Forget(b))
	addTestMaster(s, d, 7003) // takes b's index
	checkRoutes(t, s, "d added")
	must("d takes 7", s.SetSlot(7, "node", d, 0))
	if _, migrating := s.Routes().Migrating(5); migrating {
		t.Error("slot 5 still migrating to the forgotten node")
	}
	if _, err := s.Reset(false, false); err != nil {
		t.Fatal(err)
	}
	checkRoutes(t, s, "reset")
}

// TestSetSlotGarbage: a SETSLOT leaves a few KB of garbage, not a whole
// slot table: resharding 1000 slots is about 5000 of them, and with
// Keyhive's GOGC of 25 96 KB each ran a collection every few commands.
func TestSetSlotGarbage(t *testing.T) {
	s, err := Open(testOptions(t, t.TempDir()), nopHost{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.AddSlots([][2]int{{0, SlotCount - 1}}, false); err != nil {
		t.Fatal(err)
	}
	const n = 200
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range n {
		if err := s.SetSlot(i*37%SlotCount, "node", s.MyName(), 0); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if perOp := (after.TotalAlloc - before.TotalAlloc) / n; perOp > 8<<10 {
		t.Errorf("a SETSLOT allocates %d bytes", perOp)
	}
}

// TestConfigSavesCoalesce: a burst of SETSLOTs is written in a few saves,
// not one each, and the last change is on disk soon after, and at Close.
func TestConfigSavesCoalesce(t *testing.T) {
	opt := testOptions(t, t.TempDir())
	s, err := Open(opt, nopHost{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if err := s.AddSlots([][2]int{{0, SlotCount - 1}}, false); err != nil {
		t.Fatal(err)
	}
	s.lock()
	before := s.saver.seq
	s.unlock()
	const n = 500
	start := time.Now()
	for i := range n {
		action := "migrating"
		if i%2 == 1 {
			action = "stable"
		}
		if err := s.SetSlot(100, action, s.MyName(), 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetSlot(200, "migrating", s.MyName(), 0); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	want := "[200->-" + s.MyName() + "]"
	deadline := time.Now().Add(5 * time.Second)
	for {
		data, _ := os.ReadFile(opt.ConfigFile)
		if strings.Contains(string(data), want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the last change is not on disk after 5 s:\n%s", data)
		}
		time.Sleep(time.Millisecond)
	}
	s.lock()
	saves := s.saver.seq - before
	s.unlock()
	// At most one save per saveInterval, and the one of the last change.
	if limit := uint64(took/saveInterval) + 3; saves > limit {
		t.Errorf("%d SETSLOTs in %v took %d saves, want at most %d", n+1, took, saves, limit)
	}

	// A change the saver has not written yet is written at Close.
	if err := s.SetSlot(300, "migrating", s.MyName(), 0); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if data, _ := os.ReadFile(opt.ConfigFile); !strings.Contains(string(data), "[300->-") {
		t.Errorf("the change before Close is not on disk:\n%s", data)
	}
}
