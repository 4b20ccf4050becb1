package durability

import (
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// idleSaverThread locks the calling goroutine to its thread and runs that
// thread at the OS's idle priority (SCHED_IDLE) where the process may raise
// it again, until restore: on a busy machine the save then takes CPU time
// that commands and their clients leave unused, instead of a core from them
// (under redis-benchmark that tripled p99; README, Persistence). A command
// that waits for a shard lock it holds waits for a core to fall idle; a
// save starved by other processes (less than a fiftieth of a CPU over a
// quarter second) gets normal priority, so that it finishes and lets go
// of locks. nil: the process could not raise it again, the thread keeps
// normal priority.
func idleSaverThread() (restore func()) {
	if !idlePriorityAllowed() {
		return nil
	}
	runtime.LockOSThread()
	tid := syscall.Gettid()
	setSchedPolicy(tid, schedIdle)
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		watchStarvation(tid, stop)
	}()
	return func() {
		close(stop)
		<-watched
		if setSchedPolicy(tid, schedOther) == nil {
			runtime.UnlockOSThread()
		} // else the thread ends with its goroutine rather than serve others at idle priority
	}
}

// Scheduling policies (sched_setscheduler(2)).
const (
	schedOther = 0
	schedIdle  = 5
)

// setSchedPolicy sets the scheduling policy of thread tid (0: the calling
// thread).
func setSchedPolicy(tid, policy int) error {
	var priority int32 // sched_param: 0 for both policies
	if _, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, uintptr(tid), uintptr(policy), uintptr(unsafe.Pointer(&priority))); e != 0 {
		return e
	}
	return nil
}

// idlePriorityAllowed reports whether a thread of this process may go back
// from SCHED_IDLE to normal priority (root with CAP_SYS_NICE, or a high
// enough RLIMIT_NICE): it tries on a thread of its own, which ends with the
// try.
var idlePriorityAllowed = sync.OnceValue(func() bool {
	ok := make(chan bool)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		ok <- setSchedPolicy(0, schedIdle) == nil && setSchedPolicy(0, schedOther) == nil
	}()
	return <-ok
})

// starvationWindow is how often the watchdog reads the saver's CPU time.
const starvationWindow = time.Second / 4

// watchStarvation gives thread tid normal priority once it got less than a
// fiftieth of a CPU over a starvationWindow, until stop is closed. (An idle
// thread that only other processes keep from running gets about a
// three-hundredth; one on a machine as busy as redis-benchmark makes it, a
// tenth to a half. A saver blocked on I/O looks starved too, and loses
// nothing by normal priority.)
func watchStarvation(tid int, stop <-chan struct{}) {
	tick := time.NewTicker(starvationWindow)
	defer tick.Stop()
	last := threadCPU(tid)
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		used := threadCPU(tid)
		if used-last < starvationWindow/50 {
			setSchedPolicy(tid, schedOther)
			return
		}
		last = used
	}
}

// threadCPU returns the CPU time thread tid has used, from its CPU clock
// (clock id ^tid<<3 | CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED, as
// pthread_getcpuclockid builds it).
func threadCPU(tid int) time.Duration {
	var ts syscall.Timespec
	clock := int32(^tid<<3 | 6)
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, uintptr(clock), uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}
