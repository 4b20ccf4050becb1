//go:build linux

package main

import (
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// stalls is how often this machine stops a running thread for long: the
// floor under any p99 measured here. One thread per CPU, pinned to it, reads
// the clock in a loop with nothing else running; a gap between two readings
// is time the thread did not run (hypervisor, other tenants, interrupts).
type stalls struct {
	perSecond float64       // gaps longer than stallGap, per second and CPU
	share     float64       // of the time, in those gaps
	longest   time.Duration // the longest gap on any CPU
}

const stallGap = time.Millisecond

func measureStalls(d time.Duration) stalls {
	cpus := runtime.NumCPU()
	var (
		mu      sync.Mutex
		res     stalls
		count   int
		stalled time.Duration
		threads sync.WaitGroup
	)
	for cpu := range cpus {
		threads.Go(func() {
			// Never unlocked: the thread, pinned to one CPU below, ends with
			// the goroutine. Handed back to the scheduler it ran other
			// goroutines pinned, and the servers, started from such threads,
			// inherited the pin: each ran on one CPU, a different one.
			runtime.LockOSThread()
			var mask [16]uint64 // a cpu_set_t of 1024 CPUs
			mask[cpu/64] = 1 << (cpu % 64)
			syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, unsafe.Sizeof(mask), uintptr(unsafe.Pointer(&mask)))
			n, longest, sum := 0, time.Duration(0), time.Duration(0)
			start := time.Now()
			last := start
			for last.Sub(start) < d {
				now := time.Now()
				if gap := now.Sub(last); gap > stallGap {
					n++
					sum += gap
					longest = max(longest, gap)
				}
				last = now
			}
			mu.Lock()
			count += n
			stalled += sum
			res.longest = max(res.longest, longest)
			mu.Unlock()
		})
	}
	threads.Wait()
	res.perSecond = float64(count) / float64(cpus) / d.Seconds()
	res.share = stalled.Seconds() / float64(cpus) / d.Seconds()
	return res
}
