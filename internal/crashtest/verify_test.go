package crashtest

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestVerifierCatches runs the load on an embedded server without a kill,
// checks that the verifier finds every operation, then damages the data as
// a bad restart would and checks that each kind of damage is reported.
func TestVerifierCatches(t *testing.T) {
	addr, closeServer, err := difftest.StartKeyhive()
	if err != nil {
		t.Fatal(err)
	}
	defer closeServer()
	const seed, gen = 5, 1
	stop := make(chan struct{})
	var ops atomic.Int64
	ld := load{seed, true}
	logs, wait := runLoad(addr, ld, gen, 2, stop, &ops)
	for ops.Load() < 400 {
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wait()
	c, err := dial(addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	check := func(conn int) *findings {
		t.Helper()
		f, err := verifyConn(c, ld, gen, conn, logs[conn].sent)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	for conn := range logs {
		l := &logs[conn]
		if l.err != "" || l.sent != l.acked || l.sent < 100 {
			t.Fatalf("conn %d: %+v", conn, l)
		}
		f := check(conn)
		for i, ok := range f.present {
			if !ok {
				t.Fatalf("conn %d: op %d (%s) not found", conn, i+1, opNames[kindOf(ld, gen, conn, i+1)])
			}
		}
		if f.torn+f.broken+f.unexpected > 0 {
			t.Fatalf("conn %d: %+v", conn, f)
		}
	}
	// The first operation of a kind on connection 0.
	first := func(k opKind) int {
		for seq := 1; seq <= logs[0].sent; seq++ {
			if kindOf(ld, gen, 0, seq) == k {
				return seq
			}
		}
		t.Fatalf("no %s", opNames[k])
		return 0
	}
	p := prefix(gen, 0)
	// A lost SET: the operation is missing.
	set := first(opSet)
	c.do("DEL", p+"s"+strconv.Itoa(set))
	if f := check(0); f.present[set-1] {
		t.Errorf("deleted SET op %d still present", set)
	}
	// A torn hash value.
	hset := first(opHSet)
	c.do("HSET", p+"hash", "f"+strconv.Itoa(hset), value(seed, gen, 0, hset)[:20])
	if f := check(0); f.torn != 1 || f.present[hset-1] {
		t.Errorf("torn HSET: %+v", f.notes)
	}
	// A MULTI without its list element.
	multi := first(opMulti)
	c.do("LREM", p+"mlist", "0", strconv.Itoa(multi))
	if f := check(0); f.broken != 2 { // the operation, and mctr counting it
		t.Errorf("broken MULTI: %d, %v", f.broken, f.notes)
	}
	// An EVAL that never happened: more INCRs than EVALs were sent.
	c.do("INCR", p+"ectr")
	if f := check(0); f.unexpected != 1 {
		t.Errorf("extra EVAL counter: %+v", f.notes)
	}
	// A sketch counting more than was sent.
	c.do("CMS.INCRBY", p+"cms", "x", "5")
	if f := check(0); f.unexpected != 2 {
		t.Errorf("extra CMS count: %+v", f.notes)
	}
	c.do("DECR", p+"ectr") // the extra CMS count stays
	// A lost JSON.SET, a lost append, an increment of no operation.
	jset := first(opJSONSet)
	c.do("DEL", p+"j"+strconv.Itoa(jset))
	if f := check(0); f.present[jset-1] {
		t.Errorf("deleted JSON.SET op %d still present", jset)
	}
	appended := first(opJSONAppend)
	c.do("JSON.DEL", p+"jdoc", "$.l[0]")
	if f := check(0); f.present[appended-1] {
		t.Errorf("removed JSON.ARRAPPEND op %d still present", appended)
	}
	c.do("JSON.NUMINCRBY", p+"jdoc", "$.n", "1000000")
	if f := check(0); f.unexpected != 2 {
		t.Errorf("extra JSON.NUMINCRBY: %+v", f.notes)
	}
	torn := check(0).torn // the torn hash value above
	c.do("JSON.SET", p+"jdoc", "$.n", `"x"`)
	if f := check(0); f.torn != torn+1 {
		t.Errorf("torn JSON document: %+v", f.notes)
	}
	// A lost VADD, torn attributes, an element of no operation.
	vadd := first(opVAdd)
	c.do("VREM", p+"vs", "e"+strconv.Itoa(vadd))
	if f := check(0); f.present[vadd-1] {
		t.Errorf("removed VADD op %d still present", vadd)
	}
	c.do("VADD", p+"vs", "VALUES", "2", "1", "1", "e"+strconv.Itoa(vadd), "SETATTR", "torn")
	if f := check(0); f.torn != torn+2 || f.present[vadd-1] {
		t.Errorf("torn VADD attributes: %+v", f.notes)
	}
	unexpected := check(0).unexpected
	c.do("VADD", p+"vs", "VALUES", "2", "1", "1", "e0")
	if f := check(0); f.unexpected != unexpected+1 {
		t.Errorf("extra vector set element: %+v", f.notes)
	}
}
