package durability

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/keyhive/keyhive/config"
)

// schedPolicy reads thread tid's scheduling policy from /proc (field 41 of
// its stat, the 39th after the command name's closing parenthesis).
func schedPolicy(t *testing.T, tid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/stat", tid))
	if err != nil {
		t.Fatal(err)
	}
	fields := bytes.Fields(b[bytes.LastIndexByte(b, ')')+1:])
	policy, err := strconv.Atoi(string(fields[38]))
	if err != nil {
		t.Fatal(err)
	}
	return policy
}

// TestSaverThread checks that a save gets one more thread than the
// commands' threads, at idle priority where normal priority can be
// restored, and that release gives both back.
func TestSaverThread(t *testing.T) {
	cfg := config.Default() // io-threads 1
	// As cmd/keyhive sets it for io-threads 1: the event loop and one more.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	release := saverThread(cfg) // locks this goroutine to its thread until release
	tid := syscall.Gettid()
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Errorf("GOMAXPROCS during the save %d, want 3", got)
	}
	if idlePriorityAllowed() {
		if got := schedPolicy(t, tid); got != schedIdle {
			t.Errorf("saver thread policy %d, want SCHED_IDLE", got)
		}
	} else {
		t.Log("this process may not leave SCHED_IDLE: the saver keeps normal priority")
	}
	release()
	if got := schedPolicy(t, tid); got != schedOther {
		t.Errorf("thread policy after release %d, want SCHED_OTHER", got)
	}
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Errorf("GOMAXPROCS after the save %d, want 2", got)
	}
}

// TestStarvedSaverRaised checks that a saver thread that gets no CPU time
// is given normal priority.
func TestStarvedSaverRaised(t *testing.T) {
	if !idlePriorityAllowed() {
		t.Skip("this process may not leave SCHED_IDLE")
	}
	tids := make(chan int)
	finish := make(chan struct{})
	go func() { // a saver that waits, as one the OS does not run
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		setSchedPolicy(0, schedIdle)
		tids <- syscall.Gettid()
		<-finish
	}()
	tid := <-tids
	defer close(finish)
	stop := make(chan struct{})
	defer close(stop)
	go watchStarvation(tid, stop)
	for deadline := time.Now().Add(10 * starvationWindow); schedPolicy(t, tid) != schedOther; {
		if time.Now().After(deadline) {
			t.Fatal("a starved saver thread still has idle priority")
		}
		time.Sleep(starvationWindow / 10)
	}
}
