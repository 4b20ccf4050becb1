package server

import (
	"io"
	"syscall"
	"unsafe"
)

// Client sockets are non-blocking, so a read or write never waits in the
// kernel; on EAGAIN the goroutine parks in Go's poller as usual. Issuing them
// as raw system calls keeps the runtime from treating them as blocking: with
// one P, a loopback write (which does the receiver's TCP work inline, 10-20 us)
// otherwise made sysmon hand the P to another thread and keep polling every
// 20 us, costing futex wake-ups and nanosleeps on the core the clients need.

// rawRead reads into buf, parking until the socket is readable.
func (c *Client) rawRead(buf []byte) (int, error) {
	var n uintptr
	var errno syscall.Errno
	err := c.raw.Read(func(fd uintptr) bool {
		for {
			n, _, errno = syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
			if errno != syscall.EINTR {
				return errno != syscall.EAGAIN
			}
		}
	})
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, errno
	case n == 0:
		return 0, io.EOF
	}
	return int(n), nil
}

// rawWrite writes all of buf, parking while the socket buffer is full.
func (c *Client) rawWrite(buf []byte) (int, error) { return c.rawWriteSome(buf, true) }

// rawWriteSome writes buf; without wait it returns when the socket buffer is
// full, with what was written.
func (c *Client) rawWriteSome(buf []byte, wait bool) (int, error) {
	written := 0
	var errno syscall.Errno
	err := c.raw.Write(func(fd uintptr) bool {
		for written < len(buf) {
			rest := buf[written:]
			n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&rest[0])), uintptr(len(rest)))
			switch e {
			case 0:
				written += int(n)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return !wait
			default:
				errno = e
				return true
			}
		}
		return true
	})
	if err == nil && errno != 0 {
		err = errno
	}
	return written, err
}
