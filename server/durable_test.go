//go:build unix

package server_test

import (
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestDurableReplies: with min-replicas-to-ack 1 a write's reply leaves
// once a replica acknowledged it; with the replica stopped (SIGSTOP) the
// write's reply is an error after min-replicas-ack-timeout while other
// clients' reads go on, and once the replica runs again writes are
// acknowledged again and it holds every one of them.
func TestDurableReplies(t *testing.T) {
	master := startReplNode(t, false, "--repl-diskless-sync-delay", "0", "--min-replicas-to-ack", "1", "--min-replicas-ack-timeout", "500")
	replica := startReplNode(t, true) // a process, to stop
	replicate(t, master, replica)
	for i := range 100 {
		master.ok(t, "SET", "k"+strconv.Itoa(i), i)
		// Acknowledged means the replica has it: no WAIT needed.
		if r := replica.ok(t, "GET", "k"+strconv.Itoa(i)); r.Str != strconv.Itoa(i) {
			t.Fatalf("k%d acknowledged but the replica has %v", i, r)
		}
	}
	if r := master.ok(t, "GET", "k1"); r.Str != "1" { // a read is not held
		t.Fatalf("GET: %v", r)
	}
	// A client whose output is queued (RESP3 with tracking) waits the same.
	tracking, err := difftest.Dial(master.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer tracking.Close()
	for _, cmd := range [][]any{{"HELLO", 3}, {"CLIENT", "TRACKING", "ON", "NOLOOP"}, {"GET", "tracked"}} {
		if r, err := tracking.Do(cmd...); err != nil || r.IsError() {
			t.Fatalf("%v: %v %v", cmd, r, err)
		}
	}
	for i := range 20 {
		if r, err := tracking.Do("SET", "tracked", i); err != nil || r.Str != "OK" {
			t.Fatalf("SET tracked on a tracking client: %v %v", r, err)
		}
		if r := replica.ok(t, "GET", "tracked"); r.Str != strconv.Itoa(i) {
			t.Fatalf("tracked=%d acknowledged but the replica has %v", i, r)
		}
	}

	pid, _ := strconv.Atoi(replica.info(t, "server", "process_id"))
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	writer, err := difftest.Dial(master.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	writer.Timeout = 10 * time.Second
	start := time.Now()
	writer.Send("SET", "held", "1")
	// Meanwhile another client is served.
	if r := master.ok(t, "GET", "k2"); r.Str != "2" {
		t.Fatalf("GET while a write waits: %v", r)
	}
	r, err := writer.Read()
	if err != nil {
		t.Fatal(err)
	}
	if want := "NOREPLICAS Not enough replicas acknowledged the write within min-replicas-ack-timeout"; r.Str != want || !r.IsError() {
		t.Fatalf("SET with the replica stopped: %q, want the error %q", r.Raw, want)
	}
	if d := time.Since(start); d < 450*time.Millisecond || d > 5*time.Second {
		t.Errorf("the error came after %v, want about min-replicas-ack-timeout (500 ms)", d)
	}
	// A pipeline behind it waits in order.
	writer.Send("SET", "a", "1")
	writer.Send("GET", "a")
	syscall.Kill(pid, syscall.SIGCONT)
	for _, want := range []string{"OK", "1"} {
		if r, err := writer.Read(); err != nil || r.Str != want {
			t.Fatalf("after the replica resumed: %v %v, want %s", r, err, want)
		}
	}
	if r := replica.ok(t, "GET", "a"); r.Str != "1" {
		t.Fatalf("acknowledged a=1 but the replica has %v", r)
	}
}

// TestPromotedMasterTakesReplicasTail: in durable mode a replica promoted
// while it lacks writes the old master acknowledged (they reached the
// other replica) takes no write until a replica continued its history,
// and takes those writes from the replica that has them first
// (replication/reconcile.go).
func TestPromotedMasterTakesReplicasTail(t *testing.T) {
	bin := buildKeyhiveBinary(t)
	durable := []string{"--min-replicas-to-ack", "1", "--min-replicas-ack-timeout", "2000"}
	master := processNode(t, bin, "master", durable...)
	ahead := processNode(t, bin, "ahead", durable...)
	behind := processNode(t, bin, "behind", durable...)
	replicate(t, master, ahead)
	replicate(t, master, behind)
	master.ok(t, "SELECT", 3) // the tail goes on in the stream's database
	for i := range 20 {
		master.ok(t, "SET", "before"+strconv.Itoa(i), i)
	}
	waitUntil(t, "behind has the first writes", func() bool {
		return behind.do(t, "SELECT", 3).Str == "OK" && behind.do(t, "GET", "before19").Str == "19"
	})

	pid, _ := strconv.Atoi(behind.info(t, "server", "process_id"))
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// Its link ends while it is stopped (nothing more reaches it); ahead
	// links again.
	master.ok(t, "CLIENT", "KILL", "TYPE", "replica")
	waitUntil(t, "ahead linked again", func() bool {
		return ahead.info(t, "replication", "master_link_status") == "up"
	})
	for i := range 50 { // acknowledged by ahead alone
		if r := master.ok(t, "SET", "acked"+strconv.Itoa(i), i); r.Str != "OK" {
			t.Fatalf("SET acked%d: %v", i, r)
		}
	}
	mpid, _ := strconv.Atoi(master.info(t, "server", "process_id"))
	syscall.Kill(mpid, syscall.SIGKILL)
	syscall.Kill(pid, syscall.SIGCONT)

	behind.ok(t, "REPLICAOF", "NO", "ONE")
	if role := behind.info(t, "replication", "role"); role != "master" {
		t.Fatalf("the promoted replica reports role %s", role)
	}
	if r := behind.do(t, "SET", "early", 1); r.Str != "NOREPLICAS Not enough good replicas to write." {
		t.Fatalf("a write before any replica continued: %q, want -NOREPLICAS", r.Raw)
	}
	host, port := behind.hostPort()
	ahead.ok(t, "REPLICAOF", host, port)
	waitUntil(t, "ahead follows the promoted master", func() bool {
		return ahead.info(t, "replication", "master_link_status") == "up"
	})
	if full, partial := behind.infoInt(t, "stats", "sync_full"), behind.infoInt(t, "stats", "sync_partial_ok"); full != 0 || partial != 1 {
		t.Errorf("ahead's resynchronizations: %d full, %d partial; want it continued", full, partial)
	}
	behind.ok(t, "SELECT", 3)
	for i := range 50 {
		if r := behind.ok(t, "GET", "acked"+strconv.Itoa(i)); r.Str != strconv.Itoa(i) {
			t.Fatalf("acknowledged acked%d=%d is not on the promoted master: %q", i, i, r.Raw)
		}
	}
	if r := behind.ok(t, "SET", "after", 1); r.Str != "OK" {
		t.Fatalf("a write once a replica continued: %q", r.Raw)
	}
	ahead.ok(t, "SELECT", 3)
	if r := ahead.ok(t, "GET", "after"); r.Str != "1" { // acknowledged: ahead has it
		t.Fatalf("ahead lacks the acknowledged write: %q", r.Raw)
	}
}
