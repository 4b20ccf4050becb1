//go:build unix

package server_test

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// shutdownMaster starts a master process, redis-server or the Keyhive
// binary bin, whose shutdown waits up to timeout seconds for its replicas.
func shutdownMaster(t *testing.T, redis bool, bin, timeout string) *replNode {
	if redis {
		return startReplNode(t, true, "--repl-diskless-sync-delay", "0", "--shutdown-timeout", timeout)
	}
	return processNode(t, bin, "keyhive", "--shutdown-timeout", timeout)
}

// stoppedReplica starts a replica process of master, lets it sync, and
// stops it (SIGSTOP; continued when the test ends): a lagging replica.
func stoppedReplica(t *testing.T, master *replNode) (*replNode, int) {
	t.Helper()
	replica := startReplNode(t, true)
	replicate(t, master, replica)
	pid, _ := strconv.Atoi(replica.info(t, "server", "process_id"))
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
	return replica, pid
}

// TestReplShutdownWaitsForReplicas: SHUTDOWN (without NOW) pauses writes
// and gives a lagging replica up to shutdown-timeout to take every write
// before the master exits, as redis-server does: a replica stopped
// (SIGSTOP) while 20 MB were written, resumed after the SHUTDOWN, has them
// all.
func TestReplShutdownWaitsForReplicas(t *testing.T) {
	for _, redis := range []bool{false, true} {
		master := startReplNode(t, redis, "--repl-diskless-sync-delay", "0", "--shutdown-timeout", "20")
		replica, pid := stoppedReplica(t, master)
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

// TestReplShutdownAbort: SHUTDOWN ABORT cancels a shutdown waiting for a
// lagging replica, whether a client's SHUTDOWN or SIGTERM started it, as in
// redis-server: the waiting SHUTDOWN fails, writes go on, and a second
// ABORT finds no shutdown in progress.
func TestReplShutdownAbort(t *testing.T) {
	bin, err := difftest.BuildKeyhive(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var got [2][]string
	for i, redis := range []bool{true, false} {
		master := shutdownMaster(t, redis, bin, "20")
		stoppedReplica(t, master)
		steps := &got[i]
		step := func(what string, r difftest.Reply) {
			*steps = append(*steps, what+": "+strings.TrimSpace(string(r.Raw)))
		}
		step("SET while the replica is stopped", master.do(t, "SET", "a", "1"))
		step("SHUTDOWN ABORT with none", master.do(t, "SHUTDOWN", "ABORT"))
		step("SHUTDOWN NOSAVE ABORT", master.do(t, "SHUTDOWN", "NOSAVE", "ABORT"))

		waiting, err := difftest.Dial(master.addr)
		if err != nil {
			t.Fatal(err)
		}
		waiting.Timeout = time.Minute
		waiting.Send("SHUTDOWN", "NOSAVE")
		time.Sleep(300 * time.Millisecond)
		step("SHUTDOWN ABORT", master.do(t, "SHUTDOWN", "ABORT"))
		r, err := waiting.Read()
		if err != nil {
			t.Fatalf("%s: the aborted SHUTDOWN: %v", master.name, err)
		}
		step("the aborted SHUTDOWN", r)
		waiting.Close()
		step("SET after", master.do(t, "SET", "b", "1"))

		pid, _ := strconv.Atoi(master.info(t, "server", "process_id"))
		syscall.Kill(pid, syscall.SIGTERM)
		time.Sleep(300 * time.Millisecond)
		step("SHUTDOWN ABORT of SIGTERM's", master.do(t, "SHUTDOWN", "ABORT"))
		step("SET after SIGTERM's", master.do(t, "SET", "c", "1"))
		step("SHUTDOWN ABORT again", master.do(t, "SHUTDOWN", "ABORT"))
	}
	sameSteps(t, got[0], got[1])
}

// TestReplShutdownAbortsEveryWaiter: two SHUTDOWNs waiting for a lagging
// replica both count as blocked clients, INFO server shows the time left
// (shutdown_in_milliseconds) while they wait, and one SHUTDOWN ABORT fails both,
// the server running on, as in redis-server (shutdown.tcl's "waits for
// replica then aborted").
func TestReplShutdownAbortsEveryWaiter(t *testing.T) {
	var got [2][]string
	for i, redis := range []bool{true, false} {
		master := startReplNode(t, redis, "--repl-diskless-sync-delay", "0", "--shutdown-timeout", "20")
		stoppedReplica(t, master)
		step := func(what string, v any) { got[i] = append(got[i], what+": "+strings.TrimSpace(fmt.Sprint(v))) }
		master.ok(t, "INCR", "k")
		var waiting [2]*difftest.Conn
		for j := range waiting {
			c, err := difftest.Dial(master.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.Timeout = time.Minute
			c.Send("SHUTDOWN")
			waiting[j] = c
		}
		waitUntil(t, master.name+" blocking both SHUTDOWNs", func() bool {
			return master.info(t, "clients", "blocked_clients") == "2"
		})
		left, _ := strconv.Atoi(master.info(t, "server", "shutdown_in_milliseconds"))
		step("INFO shutdown_in_milliseconds within the timeout", left > 0 && left <= 20000)
		step("SHUTDOWN ABORT", string(master.do(t, "SHUTDOWN", "ABORT").Raw))
		step("INFO shutdown_in_milliseconds after", master.info(t, "server", "shutdown_in_milliseconds"))
		for j, c := range waiting {
			r, err := c.Read()
			if err != nil {
				t.Fatalf("%s: SHUTDOWN %d: %v", master.name, j, err)
			}
			step(fmt.Sprint("SHUTDOWN ", j), string(r.Raw))
		}
		step("INCR after", string(master.do(t, "INCR", "k").Raw))
		time.Sleep(time.Second) // a waiter the ABORT missed would go on to exit
		step("PING a second later", string(master.do(t, "PING").Raw))
	}
	sameSteps(t, got[0], got[1])
}

// TestReplShutdownSecondSigint: a SIGINT while a shutdown waits for a
// lagging replica makes the server exit at once, as redis-server's "You
// insist... exiting now.".
func TestReplShutdownSecondSigint(t *testing.T) {
	bin, err := difftest.BuildKeyhive(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var got [2][]string
	for i, redis := range []bool{true, false} {
		master := shutdownMaster(t, redis, bin, "60")
		stoppedReplica(t, master)
		master.ok(t, "INCR", "k")
		pid, _ := strconv.Atoi(master.info(t, "server", "process_id"))
		st := &shutdownSteps{t: t, n: master, scenario: "lagging replica", got: &got[i]}
		for range 2 {
			syscall.Kill(pid, syscall.SIGINT)
			st.exited = st.goneWithin(5 * time.Second)
			st.note("SIGINT", fmt.Sprint("exited ", st.exited))
		}
	}
	sameSteps(t, got[0], got[1])
}

// TestReplShutdownTimeoutRunsOut: a replica that stays stopped past
// shutdown-timeout does not keep the master up: SHUTDOWN waits about that
// long, then the master exits anyway, as redis-server does.
func TestReplShutdownTimeoutRunsOut(t *testing.T) {
	bin, err := difftest.BuildKeyhive(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, redis := range []bool{true, false} {
		master := shutdownMaster(t, redis, bin, "1")
		stoppedReplica(t, master)
		master.ok(t, "SET", "behind", "1")
		c, err := difftest.Dial(master.addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Timeout = time.Minute
		start := time.Now()
		c.Send("SHUTDOWN", "NOSAVE")
		if err := c.WaitClosed(); err != nil {
			t.Fatalf("%s: SHUTDOWN: %v", master.name, err)
		}
		took := time.Since(start)
		c.Close()
		if took < 900*time.Millisecond || took > 10*time.Second {
			t.Errorf("%s: exited %v after SHUTDOWN with a stopped replica and shutdown-timeout 1, want about 1 s", master.name, took)
		}
	}
}
