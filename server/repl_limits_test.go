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
