//go:build unix

package server_test

import (
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestReplShutdownWaitsForReplicas: SHUTDOWN (without NOW) pauses writes
// and gives a lagging replica up to shutdown-timeout to take every write
// before the master exits, as redis-server does: a replica stopped
// (SIGSTOP) while 20 MB were written, resumed after the SHUTDOWN, has them
// all.
func TestReplShutdownWaitsForReplicas(t *testing.T) {
	for _, redis := range []bool{false, true} {
		master := startReplNode(t, redis, "--repl-diskless-sync-delay", "0", "--shutdown-timeout", "20")
		replica := startReplNode(t, true) // a process, to stop
		replicate(t, master, replica)
		pid, _ := strconv.Atoi(replica.info(t, "server", "process_id"))
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		value := strings.Repeat("v", 100_000)
		for i := range 200 {
			master.ok(t, "SET", "k"+strconv.Itoa(i), value)
		}
		c, err := difftest.Dial(master.addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Timeout = time.Minute
		c.Send("SHUTDOWN", "NOSAVE")
		time.Sleep(500 * time.Millisecond)
		syscall.Kill(pid, syscall.SIGCONT)
		if err := c.WaitClosed(); err != nil { // the master exits, without a reply
			t.Fatalf("%s: SHUTDOWN: %v", master.name, err)
		}
		c.Close()
		waitUntil(t, "the replica to see its master gone", func() bool {
			return replica.info(t, "replication", "master_link_status") == "down"
		})
		if n := replica.ok(t, "DBSIZE").Int; n != 200 {
			t.Errorf("%s master: the replica has %d of the 200 keys written before SHUTDOWN", master.name, n)
		}
	}
}
