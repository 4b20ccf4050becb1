//go:build unix

package server_test

import (
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestReplOutputLimit: a replica that stops reading is dropped once the
// stream it owes passes client-output-buffer-limit replica, and resyncs
// when it comes back.
func TestReplOutputLimit(t *testing.T) {
	master := startReplNode(t, false, "--repl-diskless-sync-delay", "0",
		"--client-output-buffer-limit", "replica 1mb 0 0", "--repl-backlog-size", "1mb")
	replica := startReplNode(t, true)
	replicate(t, master, replica)
	pid, _ := strconv.Atoi(replica.info(t, "server", "process_id"))
	syscall.Kill(pid, syscall.SIGSTOP)
	value := strings.Repeat("x", 64<<10)
	for i := 0; master.info(t, "replication", "connected_slaves") != "0"; i++ {
		if i == 2000 { // 128 MB
			syscall.Kill(pid, syscall.SIGCONT)
			t.Fatal("a replica that does not read is still connected")
		}
		master.ok(t, "SET", "big"+strconv.Itoa(i%100), value)
	}
	syscall.Kill(pid, syscall.SIGCONT)
	waitUntil(t, "the replica back", func() bool {
		return master.info(t, "replication", "connected_slaves") == "1"
	})
	sameData(t, master, replica)
}

// TestReplMinReplicas: min-replicas-to-write counts the replicas whose last
// ACK is within min-replicas-max-lag seconds; writes are refused with
// NOREPLICAS while too few are.
func TestReplMinReplicas(t *testing.T) {
	slowTest(t, "waits for a stopped replica to lag")
	master := startReplNode(t, false, "--repl-diskless-sync-delay", "0",
		"--min-replicas-to-write", "1", "--min-replicas-max-lag", "1")
	if r := master.do(t, "SET", "k", "v"); r.Str != "NOREPLICAS Not enough good replicas to write." {
		t.Fatalf("SET without replicas: %v", r)
	}
	replica := startReplNode(t, true)
	replicate(t, master, replica)
	waitUntil(t, "a good replica", func() bool {
		return master.info(t, "replication", "min_slaves_good_slaves") == "1"
	})
	master.ok(t, "SET", "k", "v")
	pid, _ := strconv.Atoi(replica.info(t, "server", "process_id"))
	syscall.Kill(pid, syscall.SIGSTOP) // no more ACKs
	waitUntil(t, "the replica lagging", func() bool {
		return master.info(t, "replication", "min_slaves_good_slaves") == "0"
	})
	if r := master.do(t, "SET", "k", "v2"); r.Str != "NOREPLICAS Not enough good replicas to write." {
		syscall.Kill(pid, syscall.SIGCONT)
		t.Fatalf("SET with a lagging replica: %v", r)
	}
	syscall.Kill(pid, syscall.SIGCONT)
	waitUntil(t, "the replica good again", func() bool {
		return master.info(t, "replication", "min_slaves_good_slaves") == "1"
	})
	master.ok(t, "SET", "k", "v3")
}
