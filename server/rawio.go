package server

import (
	"io"
	"sync"
	"syscall"
	"unsafe"
)

// Client sockets are non-blocking, so a read or write never waits in the
// kernel; on EAGAIN the goroutine parks in Go's poller as usual. Issuing them
// as raw system calls keeps the runtime from treating them as blocking: with
// one P, a loopback write (which does the receiver's TCP work inline, 10-20 us)
// otherwise made sysmon hand the P to another thread and keep polling every
// 20 us, costing futex wake-ups and nanosleeps on the core the clients need.

// rawOp is the state of one raw read or write. Handing RawConn a method
// value of a pooled rawOp, instead of a closure over the call's variables,
// keeps every read and write from allocating.
type rawOp struct {
	buf         []byte
	n           int
	wait        bool
	errno       syscall.Errno
	read, write func(fd uintptr) bool
}

var rawOps = sync.Pool{New: func() any {
	op := &rawOp{}
	op.read, op.write = op.readFD, op.writeFD
	return op
}}

func getRawOp(buf []byte, wait bool) *rawOp {
	op := rawOps.Get().(*rawOp)
	op.buf, op.n, op.wait, op.errno = buf, 0, wait, 0
	return op
}

func putRawOp(op *rawOp) {
	op.buf = nil
	rawOps.Put(op)
}

// serveRaw is serve's loop on a raw socket: it stays in one RawConn.Read,
// whose callback (serveFD) reads, runs the commands and writes the replies,
// for as long as the client does not block. After a read that did not fill
// the buffer the socket was empty, so serveFD waits for it to become
// readable again without first reading EAGAIN, as a read per RawConn.Read
// would: Go's poller is edge-triggered and readiness is reset only when a
// RawConn.Read begins, so data arriving after that read wakes the wait. A
// blocking or postponed command leaves the call: waitBlocked reads in another goroutine
// (to see a disconnect), which would wait for this call's read lock.
func (c *Client) serveRaw() {
	for {
		c.ended = false
		if err := c.raw.Read(c.serveRead); err != nil || c.ended {
			return
		}
		keep := c.resume() && c.run()
		if !c.flush() || !keep || !c.prepareRead() {
			return
		}
	}
}

// serveFD serves the client from its socket fd; it returns false to wait
// for readability, true when the client blocks or the connection ends
// (c.ended).
func (c *Client) serveFD(fd uintptr) bool {
	for {
		buf := c.in[c.w:]
		n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		switch {
		case errno == syscall.EINTR:
			continue
		case errno == syscall.EAGAIN:
			return false
		case errno != 0 || n == 0:
			c.ended = true
			return true
		}
		c.w += int(n)
		c.traffic.read(int64(n))
		keep := c.process()
		if keep && (c.blocked != nil || c.postponed != nil) {
			return true
		}
		if !c.flush() || !keep || !c.prepareRead() {
			c.ended = true
			return true
		}
		if int(n) < len(buf) {
			return false
		}
	}
}

// rawRead reads into buf, parking until the socket is readable.
func (c *Client) rawRead(buf []byte) (int, error) {
	op := getRawOp(buf, true)
	err := c.raw.Read(op.read)
	n, errno := op.n, op.errno
	putRawOp(op)
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, errno
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (op *rawOp) readFD(fd uintptr) bool {
	for {
		n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&op.buf[0])), uintptr(len(op.buf)))
		if errno != syscall.EINTR {
			op.n, op.errno = int(n), errno
			return errno != syscall.EAGAIN
		}
	}
}

// rawWrite writes all of buf, parking while the socket buffer is full.
func (c *Client) rawWrite(buf []byte) (int, error) { return c.rawWriteSome(buf, true) }

// rawWriteSome writes buf; without wait it returns when the socket buffer is
// full, with what was written.
func (c *Client) rawWriteSome(buf []byte, wait bool) (int, error) {
	op := getRawOp(buf, wait)
	err := c.raw.Write(op.write)
	written, errno := op.n, op.errno
	putRawOp(op)
	if err == nil && errno != 0 {
		err = errno
	}
	return written, err
}

func (op *rawOp) writeFD(fd uintptr) bool {
	for op.n < len(op.buf) {
		rest := op.buf[op.n:]
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&rest[0])), uintptr(len(rest)))
		switch e {
		case 0:
			op.n += int(n)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return !op.wait
		default:
			op.errno = e
			return true
		}
	}
	return true
}
