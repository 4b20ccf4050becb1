//go:build linux

package server

import (
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// eventLoop serves TCP clients the way Redis does: one level-triggered epoll
// instance, one read per readiness event, replies written straight back. With
// a goroutine per connection Go's poller costs a second read per request (the
// one that returns EAGAIN before parking) and a goroutine switch; here a busy
// loop handles every ready client per wake-up.
//
// The loop is still an ordinary goroutine: its epoll descriptor is itself
// registered with Go's poller, so when nothing is ready the loop parks like
// any other goroutine instead of blocking a thread in epoll_wait.
type eventLoop struct {
	s        *Server
	epfd     int
	epoll    *os.File // epfd, for parking in Go's poller
	raw      syscall.RawConn
	wakeR    int // a pipe whose read end wakes the loop
	wakeW    int
	mu       sync.Mutex
	incoming []*Client // handed over by the accept goroutine
	stopping atomic.Bool
	clients  map[int]*Client // by descriptor; touched only by the loop
	events   [256]syscall.EpollEvent
}

func newEventLoop(s *Server) (*eventLoop, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_NONBLOCK|syscall.O_CLOEXEC); err != nil {
		syscall.Close(epfd)
		return nil, err
	}
	l := &eventLoop{s: s, epfd: epfd, wakeR: p[0], wakeW: p[1], clients: map[int]*Client{}}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(l.wakeR)}
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, l.wakeR, &ev); err != nil {
		l.closeFDs()
		return nil, err
	}
	if err := syscall.SetNonblock(epfd, true); err != nil {
		l.closeFDs()
		return nil, err
	}
	l.epoll = os.NewFile(uintptr(epfd), "epoll")
	if l.raw, err = l.epoll.SyscallConn(); err != nil {
		l.closeFDs()
		return nil, err
	}
	return l, nil
}

func (l *eventLoop) closeFDs() {
	if l.epoll != nil {
		l.epoll.Close()
	} else {
		syscall.Close(l.epfd)
	}
	syscall.Close(l.wakeR)
	syscall.Close(l.wakeW)
}

// adopt takes over conn's socket for the loop. It reports false when the
// socket cannot be taken over; the caller then serves conn with a goroutine.
func (l *eventLoop) adopt(c *Client, conn *net.TCPConn) bool {
	raw, err := conn.SyscallConn()
	if err != nil {
		return false
	}
	fd := -1
	raw.Control(func(s uintptr) { fd, err = syscall.Dup(int(s)) })
	if err != nil || fd < 0 {
		return false
	}
	syscall.CloseOnExec(fd)
	// The duplicate shares the socket, its options and O_NONBLOCK; closing the
	// original takes it out of Go's poller.
	c.conn = &fdConn{fd: fd, local: conn.LocalAddr(), remote: conn.RemoteAddr()}
	conn.Close()
	c.loop = l
	l.mu.Lock()
	l.incoming = append(l.incoming, c)
	l.mu.Unlock()
	l.wake()
	return true
}

func (l *eventLoop) wake() {
	syscall.Write(l.wakeW, []byte{1})
}

func (l *eventLoop) stop() {
	l.stopping.Store(true)
	l.wake()
}

func (l *eventLoop) run() {
	defer l.s.wg.Done()
	defer l.shutdown()
	for !l.stopping.Load() {
		n := 0
		err := l.raw.Read(func(uintptr) bool {
			var werr error
			n, werr = syscall.EpollWait(l.epfd, l.events[:], 0)
			return n > 0 || werr != nil && werr != syscall.EINTR
		})
		if err != nil {
			return
		}
		for i := range n {
			l.handle(&l.events[i])
		}
	}
}

func (l *eventLoop) handle(ev *syscall.EpollEvent) {
	fd := int(ev.Fd)
	if fd == l.wakeR {
		var buf [64]byte
		for {
			if n, _ := syscall.Read(l.wakeR, buf[:]); n <= 0 {
				break
			}
		}
		l.takeIncoming()
		return
	}
	c := l.clients[fd]
	if c == nil {
		return
	}
	if ev.Events&(syscall.EPOLLIN|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 && !l.read(c) {
		l.drop(c)
		return
	}
	if ev.Events&syscall.EPOLLOUT != 0 && !c.flush() {
		l.drop(c)
	}
}

func (l *eventLoop) takeIncoming() {
	l.mu.Lock()
	list := l.incoming
	l.incoming = nil
	l.mu.Unlock()
	for _, c := range list {
		fc := c.conn.(*fdConn)
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fc.fd)}
		if err := syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_ADD, fc.fd, &ev); err != nil {
			l.drop(c)
			continue
		}
		c.in = make([]byte, initialReadBuf)
		l.clients[fc.fd] = c
	}
}

// read does one read (epoll is level-triggered: what is left is reported
// again) and runs the complete commands.
func (l *eventLoop) read(c *Client) bool {
	fd := c.conn.(*fdConn).fd
	n, err := syscall.Read(fd, c.in[c.w:])
	if err == syscall.EAGAIN || err == syscall.EINTR {
		return true
	}
	if n <= 0 {
		return false
	}
	c.w += n
	c.traffic.netIn.add(int64(n))
	keep := c.process()
	if !c.flush() || !keep {
		return false
	}
	return c.prepareRead()
}

// writeOut writes what it can of the pending replies without blocking and
// asks epoll for writability while some remain.
func (l *eventLoop) writeOut(c *Client) bool {
	fc := c.conn.(*fdConn)
	for c.sent < len(c.out.B) {
		n, err := syscall.Write(fc.fd, c.out.B[c.sent:])
		if n > 0 {
			c.sent += n
			c.traffic.netOut.add(int64(n))
		}
		if err == syscall.EAGAIN {
			c.omem.Store(int64(len(c.out.B) - c.sent))
			return l.watchWritable(c, true)
		}
		if err != nil && err != syscall.EINTR {
			return false
		}
	}
	c.sent = 0
	c.omem.Store(0)
	c.resetOut()
	return l.watchWritable(c, false)
}

func (l *eventLoop) watchWritable(c *Client, on bool) bool {
	if c.writable == on {
		return true
	}
	c.writable = on
	fd := c.conn.(*fdConn).fd
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}
	if on {
		ev.Events |= syscall.EPOLLOUT
	}
	return syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_MOD, fd, &ev) == nil
}

func (l *eventLoop) drop(c *Client) {
	fc := c.conn.(*fdConn)
	delete(l.clients, fc.fd)
	fc.release()
	c.s.removeClient(c)
}

func (l *eventLoop) shutdown() {
	l.takeIncoming()
	for _, c := range l.clients {
		l.drop(c)
	}
	l.closeFDs()
}

// fdConn is a loop client's socket. The loop reads and writes the descriptor
// directly; other goroutines (CLIENT KILL, Server.Close) only shut it down, and
// the loop closes it when it sees the hang-up, so a descriptor number is never
// reused while someone can still act on it.
type fdConn struct {
	mu            sync.Mutex
	fd            int
	closed        bool
	local, remote net.Addr
}

func (f *fdConn) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		syscall.Shutdown(f.fd, syscall.SHUT_RDWR)
	}
	return nil
}

func (f *fdConn) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.closed = true
		syscall.Close(f.fd)
	}
}

func (f *fdConn) LocalAddr() net.Addr  { return f.local }
func (f *fdConn) RemoteAddr() net.Addr { return f.remote }

// The loop does its own I/O; these complete net.Conn for code that only needs
// addresses and Close.
func (f *fdConn) Read([]byte) (int, error)         { return 0, errors.ErrUnsupported }
func (f *fdConn) Write([]byte) (int, error)        { return 0, errors.ErrUnsupported }
func (f *fdConn) SetDeadline(time.Time) error      { return errors.ErrUnsupported }
func (f *fdConn) SetReadDeadline(time.Time) error  { return errors.ErrUnsupported }
func (f *fdConn) SetWriteDeadline(time.Time) error { return errors.ErrUnsupported }
