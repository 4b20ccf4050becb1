package server

import (
	"net"
	"syscall"
	"time"
	"unsafe"
)

// waitReadable blocks the calling thread in ppoll until conn has bytes to
// read or deadline passes, as Redis's MIGRATE waits for its target. A read
// on a Go connection with nothing there parks the goroutine on the
// runtime's poller instead, and the event loop that runs MIGRATE then
// waits for the scheduler to give it a thread again, after whatever else
// was ready: in a resharding that cost about as much as the target's work.
// Errors are left to the read that follows.
func waitReadable(conn net.Conn, deadline time.Time) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return
	}
	raw.Control(func(fd uintptr) {
		pfd := struct {
			fd              int32
			events, revents int16
		}{fd: int32(fd), events: 0x1} // POLLIN
		for {
			left := time.Until(deadline)
			if left <= 0 {
				return
			}
			ts := syscall.NsecToTimespec(left.Nanoseconds())
			_, _, errno := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd)), 1, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
			if errno != syscall.EINTR {
				return
			}
		}
	})
}
