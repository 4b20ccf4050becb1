package server_test

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// TestReplWaitWakeUp: SET then WAIT 1 5000 with one healthy replica, in a
// loop. A WAIT whose ACK arrives between its first check and its
// registration must still be woken by it, not by the replica's next
// once-a-second ACK: no WAIT takes half a second, and none answers 0 (the
// replica had the write). The same loop against redis-server runs beside it
// for reference only: Debian's 7.0.15 shows the same one-second stalls
// under load (a WAIT of 0.99-1.06 s, one answering 0, seen here).
// KEYHIVE_WAIT_ROUNDS=10000 is the measurement, for a quiet
// machine, where no WAIT may take over 10 ms either.
func TestReplWaitWakeUp(t *testing.T) {
	rounds, strict := 3000, false
	if testing.Short() {
		rounds = 500
	}
	if n, err := strconv.Atoi(os.Getenv("KEYHIVE_WAIT_ROUNDS")); err == nil && n > 0 {
		rounds, strict = n, true
	}
	for _, redis := range []bool{false, true} {
		master := startReplNode(t, redis, "--repl-diskless-sync-delay", "0")
		replica := startReplNode(t, redis)
		replicate(t, master, replica)
		var late, zero int
		var worst time.Duration
		for i := range rounds {
			master.ok(t, "SET", "k", i)
			start := time.Now()
			r := master.ok(t, "WAIT", 1, 5000) // far beyond an ACK: a 0 is a lost wake-up
			took := time.Since(start)
			worst = max(worst, took)
			if took > 10*time.Millisecond {
				late++
			}
			if r.Int != 1 {
				zero++
			}
		}
		t.Logf("%s: %d WAITs, %d over 10 ms, worst %v, %d answered 0", master.name, rounds, late, worst, zero)
		if !redis && (zero > 0 || worst >= 500*time.Millisecond || strict && late > 0) {
			t.Errorf("%s: %d of %d WAITs answered 0, %d took over 10 ms, worst took %v", master.name, zero, rounds, late, worst)
		}
	}
}
