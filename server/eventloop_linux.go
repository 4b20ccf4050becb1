package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// Plain TCP and unix-socket clients are served by event loops, as Redis
// serves them. A loop is one goroutine waiting in an epoll set of its own
// (the sockets are not in Go's poller): at each wake-up it reads every ready
// socket in the order the kernel reports them (the order their data
// arrived) and runs the commands read, then writes all the replies. So a
// SUBSCRIBE that arrived before a PUBLISH on another connection runs first,
// and clients blocked by BLPOP are queued in the order they asked, as on
// Redis. With a goroutine per connection the Go scheduler chose the order
// (its network poller hands back ready goroutines last first), and a reply
// cost two goroutine switches.
//
// What would make the loop wait is done by a goroutine that holds the
// client meanwhile (the loop hands it its events): a blocked command, a
// command postponed by CLIENT PAUSE, a reply the socket does not take at
// once. The goroutine gives the client back when it is idle again. A
// script still running past busy-reply-threshold on the loop gets the loop
// taken over by a new goroutine, which serves the other clients (BUSY,
// SCRIPT KILL), and the old one finishes the script's client as its holder.
//
// io-threads sets the number of loops (default 1, Redis's main thread);
// clients are spread over them, and order holds among the clients of one
// loop.

// eventLoop is one loop and its clients.
type eventLoop struct {
	s      *Server
	epfd   int
	wakefd int // an eventfd other goroutines write to wake the loop

	// Touched only by the goroutine running the loop.
	conns        []*loopConn // by fd
	nconns       int
	events       []syscall.EpollEvent
	next, nready int       // the events of this wake-up: the next to handle
	pending      []*Client // replies to write at the end of the wake-up
	stopped      bool

	// serving numbers the client the loop serves now (0 between clients;
	// seq counts them). The takeover and the loop's end of serving both
	// swap it to 0: whichever does first decides whether the goroutine
	// serving is still the loop.
	serving atomic.Uint64
	seq     uint64
	current atomic.Pointer[loopConn]
	// watched is what watchLoops saw serving at its last tick.
	watched uint64

	// tasks are the posted tasks taken, taskNext the next to run.
	tasks    []loopTask
	taskNext int

	mu       sync.Mutex
	exited   bool // the loop has returned: posts are handled by the poster
	posted   []loopTask
	npost    atomic.Int32
	sleeping atomic.Bool
}

type taskKind uint8

const (
	taskAdd    taskKind = iota // serve a new connection
	taskResume                 // a goroutine gives its client back
	taskClose                  // close a connection
	taskWake                   // a blocked client's wait ended
	taskStop                   // the server closes
)

type loopTask struct {
	kind taskKind
	lc   *loopConn
}

// connState is a connection's state as its loop sees it.
type connState uint8

const (
	connLoop    connState = iota // the loop serves it
	connBlocked                  // its command waits for a key: the loop keeps reading it
	connHeld                     // a goroutine serves it: the loop hands it the events
	connEnded                    // closing: events are ignored
)

// loopConn is a client socket served by a loop: a non-blocking descriptor
// outside Go's poller. It is the client's net.Conn; reads and writes from
// goroutines other than the loop wait for the loop to report the socket
// ready.
type loopConn struct {
	fd            int
	loop          *eventLoop
	client        *Client
	local, remote net.Addr
	state         connState // the loop's only
	registered    bool      // the loop's only: added as a client
	leftBlocked   bool      // the loop's only: it left while blocked

	readable, writable chan struct{} // a token per readiness report
	gone               chan struct{} // closed with the descriptor
	readExpired        atomic.Bool   // SetReadDeadline in the past: waiting reads return
	// wantWrite: a writer waits for room, so the loop passes on the
	// writable reports (which come with every readable one otherwise).
	wantWrite atomic.Bool

	// mu guards the descriptor against reuse: a goroutine's system call
	// holds it shared, the close exclusively.
	mu     sync.RWMutex
	closed bool
}

const (
	epollIn      = syscall.EPOLLIN | syscall.EPOLLRDHUP | syscall.EPOLLHUP | syscall.EPOLLERR
	epollOut     = syscall.EPOLLOUT | syscall.EPOLLHUP | syscall.EPOLLERR
	epollEdge    = 1 << 31 // EPOLLET, which package syscall declares negative
	loopMaxReady = 256
)

// startLoops starts io-threads event loops, unless KEYHIVE_PORTABLE_IO
// selects the portable path (Go's poller, a goroutine per client, as on
// other systems).
func (s *Server) startLoops() error {
	portable, err := portableIO()
	if err != nil || portable {
		return err
	}
	for range max(s.cfg.IOThreads(), 1) {
		l, err := newEventLoop(s)
		if err != nil {
			return fmt.Errorf("creating an event loop: %w", err)
		}
		s.loops = append(s.loops, l)
	}
	for _, l := range s.loops {
		l.start()
	}
	s.wg.Add(1)
	go s.watchLoops()
	return nil
}

// stopLoops has the loops end once their clients are gone.
func (s *Server) stopLoops() {
	for _, l := range s.loops {
		l.post(taskStop, nil)
	}
}

// portableIOVar names the environment variable that selects the portable
// path on Linux: yes, or no (the default, the event loops).
const portableIOVar = "KEYHIVE_PORTABLE_IO"

func portableIO() (bool, error) {
	switch v := os.Getenv(portableIOVar); v {
	case "", "no":
		return false, nil
	case "yes":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%q: want yes or no", portableIOVar, v)
	}
}

func newEventLoop(s *Server) (*eventLoop, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	wakefd, _, errno := syscall.RawSyscall(syscall.SYS_EVENTFD2, 0, syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if errno != 0 {
		syscall.Close(epfd)
		return nil, errno
	}
	l := &eventLoop{s: s, epfd: epfd, wakefd: int(wakefd), events: make([]syscall.EpollEvent, loopMaxReady)}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(wakefd)}
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, int(wakefd), &ev); err != nil {
		syscall.Close(epfd)
		syscall.Close(int(wakefd))
		return nil, err
	}
	return l, nil
}

// start runs the loop in a goroutine of its own, counted in the server's
// wait group until the loop stops.
func (l *eventLoop) start() {
	l.s.wg.Add(1)
	go l.run()
}

// post hands a task to the loop from any goroutine.
func (l *eventLoop) post(kind taskKind, lc *loopConn) {
	l.mu.Lock()
	if l.exited {
		// The server closed: what is left is a connection to close (one
		// accepted as it closed, or a rejected one).
		l.mu.Unlock()
		if kind != taskStop {
			lc.closeOffLoop(kind == taskAdd)
		}
		return
	}
	l.posted = append(l.posted, loopTask{kind, lc})
	l.npost.Add(1)
	l.mu.Unlock()
	if l.sleeping.Load() {
		one := uint64(1)
		syscall.Write(l.wakefd, (*[8]byte)(unsafe.Pointer(&one))[:])
	}
}

// run is the loop: wait, serve the ready sockets in order, run the posted
// tasks, write the replies. It returns when the server has closed and every
// client is gone, or when a takeover made another goroutine the loop.
func (l *eventLoop) run() {
	for {
		for l.next < l.nready {
			ev := l.events[l.next]
			l.next++
			if !l.handle(ev) {
				return // taken over
			}
		}
		if !l.runPosted() {
			return // taken over
		}
		l.writePending()
		if l.stopped && l.nconns == 0 {
			l.close()
			l.s.wg.Done()
			return
		}
		l.wait()
	}
}

// wait waits for ready sockets, or returns at once when tasks are posted.
func (l *eventLoop) wait() {
	timeout := 0
	if l.npost.Load() == 0 {
		l.sleeping.Store(true)
		if l.npost.Load() == 0 {
			timeout = -1
		}
	}
	var n int
	var err error
	switch {
	case timeout == 0:
		n, err = epollWaitRaw(l.epfd, l.events, 0)
	case rawSleepers.Add(1) < int32(runtime.GOMAXPROCS(0)):
		// The loop keeps its P while it sleeps, since another P is left
		// for the other goroutines: the scheduler neither hands the P on
		// (sysmon waking every 20 us to take it) nor takes it back at each
		// wake-up. A signal (the runtime wanting the P: a preemption, a
		// collection) ends the wait, and the loop yields.
		n, err = epollWaitRaw(l.epfd, l.events, timeout)
		rawSleepers.Add(-1)
		if err != nil {
			runtime.Gosched()
		}
	default:
		// Every other P is held by a sleeping loop (several servers in
		// one process): a system call the scheduler sees, so that while
		// the loop sleeps its P runs the other goroutines.
		rawSleepers.Add(-1)
		n, err = syscall.EpollWait(l.epfd, l.events, timeout)
	}
	l.sleeping.Store(false)
	if err != nil {
		n = 0 // EINTR
	}
	l.next, l.nready = 0, n
}

// rawSleepers counts the loops of the process (of every server in it)
// sleeping in a raw epoll_wait, each holding a P: at least one P stays free.
var rawSleepers atomic.Int32

func epollWaitRaw(epfd int, events []syscall.EpollEvent, timeout int) (int, error) {
	n, _, errno := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), uintptr(timeout), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// handle dispatches one readiness report. It returns false when the loop
// was taken over while it served the client: this goroutine then holds that
// client and is the loop no longer.
func (l *eventLoop) handle(ev syscall.EpollEvent) bool {
	fd := int(ev.Fd)
	if fd == l.wakefd {
		var buf [8]byte
		syscall.Read(l.wakefd, buf[:])
		return true
	}
	if fd >= len(l.conns) || l.conns[fd] == nil {
		return true
	}
	lc := l.conns[fd]
	if ev.Events&epollOut != 0 && lc.wantWrite.Load() {
		lc.signal(lc.writable)
	}
	if ev.Events&epollIn == 0 {
		return true
	}
	switch lc.state {
	case connHeld:
		lc.signal(lc.readable)
		return true
	case connBlocked:
		l.readBlocked(lc)
		return true
	case connEnded:
		return true
	}
	return l.serve(lc)
}

// serve reads lc's socket and runs its commands on the loop. It returns
// false when the loop was taken over meanwhile (see handle).
func (l *eventLoop) serve(lc *loopConn) bool {
	c := lc.client
	l.current.Store(lc)
	l.seq++
	seq := l.seq
	l.serving.Store(seq)
	res := c.serveOnLoop()
	if !l.serving.CompareAndSwap(seq, 0) {
		// Taken over, lc marked held: finish it as its holder.
		l.s.wg.Add(1)
		go c.serveHeld(res)
		return false
	}
	l.after(lc, res)
	return true
}

// after applies what serving lc came to.
func (l *eventLoop) after(lc *loopConn, res loopResult) {
	c := lc.client
	switch res {
	case loopServed:
		l.queueWrite(c)
	case loopBlocked:
		l.block(lc)
	case loopWait:
		l.hold(lc, res)
	case loopEnd:
		l.end(lc, false)
	case loopQuit:
		l.end(lc, true)
	}
}

// block keeps lc on the loop while its command waits: the replies before
// it are written now, as Redis writes them, with the lines its commands
// left for monitors and subscribers; its socket is still read (a client
// that leaves stops waiting, what it pipelines is kept), and the end of the
// wait is posted back (taskWake), so that clients woken together go on in
// the order they blocked. A socket that does not take the replies at once,
// or has failed, hands the client to a goroutine, which waits for the
// socket and then for the key.
func (l *eventLoop) block(lc *loopConn) {
	c := lc.client
	if c.hasOutput() && (!c.sendReplies(false) || c.outBlocked) {
		l.hold(lc, loopBlocked)
		return
	}
	w := c.blocked
	c.blocked = nil
	lc.state = connBlocked
	if !w.deadline.IsZero() {
		b := &l.s.blocking
		w.timer = time.AfterFunc(time.Until(w.deadline), func() { b.unblock(w, w.timedOut) })
	}
	c.waitingFor = w
}

// readBlocked reads what a blocked client sends, until the buffer is full.
func (l *eventLoop) readBlocked(lc *loopConn) {
	c := lc.client
	for c.w < len(c.in) {
		buf := c.in[c.w:]
		n, errno := lc.readNow(buf)
		switch {
		case errno == syscall.EAGAIN:
			return
		case errno != 0 || n == 0:
			// Gone: it stops waiting (or a writer claimed it meanwhile);
			// either way the wake-up posted ends it.
			lc.leftBlocked = true
			l.s.blocking.unblock(c.waitingFor, nil)
			return
		}
		c.w += n
		c.traffic.read(int64(n))
		c.lastSeen.Store(l.s.clock.UnixMilli()) // Redis counts any read as interaction
		if n < len(buf) {
			return
		}
	}
}

// wake goes on with a blocked client whose wait ended: its reply, then
// the commands it sent meanwhile. It returns false when the loop was taken
// over meanwhile (see handle).
func (l *eventLoop) wake(lc *loopConn) bool {
	c := lc.client
	w := c.waitingFor
	if lc.state != connBlocked || w == nil {
		return true
	}
	c.waitingFor = nil
	if w.timer != nil {
		w.timer.Stop()
	}
	c.woken(w)
	lc.state = connLoop
	if lc.leftBlocked || c.closeAfterReply {
		l.end(lc, c.closeAfterReply)
		return true
	}
	return l.serve(lc)
}

// queueWrite has c's replies written at the end of the wake-up, once.
func (l *eventLoop) queueWrite(c *Client) {
	if !c.pendingWrite && c.hasOutput() {
		c.pendingWrite = true
		l.pending = append(l.pending, c)
	}
}

// hold hands lc to a goroutine until it is idle again.
func (l *eventLoop) hold(lc *loopConn, res loopResult) {
	lc.state = connHeld
	l.s.wg.Add(1)
	go lc.client.serveHeld(res)
}

// end closes a client the loop served: after QUIT (quit) its replies go
// first, as far as the socket takes them at once.
func (l *eventLoop) end(lc *loopConn, quit bool) {
	c := lc.client
	lc.state = connEnded
	if quit {
		c.release()
		c.sendReplies(false)
	}
	c.freeIn()
	c.close() // posts the close of the descriptor
}

// writePending writes the replies of the clients served in this wake-up.
func (l *eventLoop) writePending() {
	for i, c := range l.pending {
		l.pending[i] = nil
		c.pendingWrite = false
		if c.lc.state != connLoop {
			continue
		}
		switch {
		case !c.sendReplies(false):
			l.end(c.lc, false)
		case c.outBlocked:
			l.hold(c.lc, loopWait)
		}
	}
	l.pending = l.pending[:0]
}

// runPosted runs the tasks other goroutines posted. It returns false when
// the loop was taken over while it served a woken client (see handle).
func (l *eventLoop) runPosted() bool {
	if l.taskNext == len(l.tasks) {
		if l.npost.Load() == 0 {
			return true
		}
		l.mu.Lock()
		clear(l.tasks)
		l.tasks, l.posted = l.posted, l.tasks[:0]
		l.npost.Store(0)
		l.mu.Unlock()
		l.taskNext = 0
	}
	for l.taskNext < len(l.tasks) {
		t := l.tasks[l.taskNext]
		l.taskNext++
		switch t.kind {
		case taskAdd:
			l.add(t.lc)
		case taskResume:
			// Registering the socket again reports it if data came while
			// it was held: the next wait serves it.
			t.lc.state = connLoop
			l.register(t.lc, syscall.EPOLL_CTL_MOD)
		case taskClose:
			l.closeConn(t.lc)
		case taskWake:
			if !l.wake(t.lc) {
				return false
			}
		case taskStop:
			l.stopped = true
		}
	}
	return true
}

// add registers a new connection and serves what it sent already.
func (l *eventLoop) add(lc *loopConn) {
	if l.stopped {
		lc.client.disconnect()
	}
	if err := l.register(lc, syscall.EPOLL_CTL_ADD); err != nil {
		l.s.log.Printf("epoll_ctl: %v", err)
		lc.state = connEnded
		lc.client.close() // posts the close, which ends the client
		lc.registered = true
		return
	}
	for lc.fd >= len(l.conns) {
		l.conns = append(l.conns, nil)
	}
	l.conns[lc.fd] = lc
	l.nconns++
	lc.registered = true
	// Edge-triggered: data that arrived before the registration is
	// reported now, so the loop's next wait serves it.
}

// register adds lc's socket to the epoll set (op EPOLL_CTL_ADD), or
// registers it again (EPOLL_CTL_MOD), which reports it if it is ready:
// readable and writable, edge-triggered.
func (l *eventLoop) register(lc *loopConn, op int) error {
	ev := syscall.EpollEvent{Events: epollIn | epollOut | epollEdge, Fd: int32(lc.fd)}
	return syscall.EpollCtl(l.epfd, op, lc.fd, &ev)
}

// closeConn closes a connection's descriptor; the client is done.
func (l *eventLoop) closeConn(lc *loopConn) {
	if lc.closed { // read by its only writer
		return
	}
	if lc.fd < len(l.conns) && l.conns[lc.fd] == lc {
		syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_DEL, lc.fd, nil)
		l.conns[lc.fd] = nil
		l.nconns--
	}
	lc.state = connEnded
	lc.closeOffLoop(lc.registered)
}

// closeOffLoop closes the descriptor; client: it was a client's, whose end
// the server's wait group counts.
func (lc *loopConn) closeOffLoop(client bool) {
	lc.mu.Lock()
	if lc.closed {
		lc.mu.Unlock()
		return
	}
	lc.closed = true
	syscall.Close(lc.fd)
	close(lc.gone)
	lc.mu.Unlock()
	if client {
		lc.loop.s.wg.Done() // added at accept
	}
}

func (l *eventLoop) close() {
	l.mu.Lock()
	l.exited = true
	tasks := append(l.tasks[l.taskNext:], l.posted...)
	l.posted = nil
	l.mu.Unlock()
	for _, t := range tasks {
		if t.kind != taskStop {
			t.lc.closeOffLoop(t.kind == taskAdd)
		}
	}
	syscall.Close(l.epfd)
	syscall.Close(l.wakefd)
}

// takeOver makes a new goroutine the loop while the current one runs a
// script past busy-reply-threshold: the client it serves is held by the
// old goroutine from now on.
// watchLoops calls it at each tick: a loop serving the same client as at
// the last tick while a script has run past the threshold is stuck in it,
// or behind it. The loop goroutine's writes before it began serving are
// seen here through serving.
func (l *eventLoop) takeOver() {
	seq := l.serving.Load()
	stuck := seq != 0 && seq == l.watched
	l.watched = seq
	if !stuck {
		return
	}
	if busy, _ := l.s.scriptBusy(); !busy || !l.serving.CompareAndSwap(seq, 0) {
		return
	}
	lc := l.current.Load()
	go func() {
		// The old goroutine touches no loop state once its swap fails.
		lc.state = connHeld
		l.run()
	}()
}

// watchLoops takes over the loops stuck in a script, ticking at a quarter
// of busy-reply-threshold (at most 100 ms). It is not the cron's work: the
// cron waits for keyspace locks the script holds.
func (s *Server) watchLoops() {
	defer s.wg.Done()
	period := func() time.Duration {
		limit := time.Duration(s.cfg.BusyReplyThreshold()) * time.Millisecond / 4
		return min(max(limit, time.Millisecond), 100*time.Millisecond)
	}
	p := period()
	tick := time.NewTicker(p)
	defer tick.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-tick.C:
		}
		if q := period(); q != p { // CONFIG SET busy-reply-threshold
			p = q
			tick.Reset(p)
		}
		for _, l := range s.loops {
			l.takeOver()
		}
	}
}

// signal leaves a readiness token for a waiting goroutine.
func (lc *loopConn) signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func newLoopConn(fd int, local, remote net.Addr, l *eventLoop) *loopConn {
	return &loopConn{fd: fd, loop: l, local: local, remote: remote,
		readable: make(chan struct{}, 1), writable: make(chan struct{}, 1), gone: make(chan struct{})}
}

// readNow reads what the socket holds without waiting (EAGAIN: nothing).
// Goroutines other than the loop hold mu meanwhile (readShared).
func (lc *loopConn) readNow(buf []byte) (int, syscall.Errno) {
	for {
		n, _, errno := syscall.RawSyscall(syscall.SYS_READ, uintptr(lc.fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		if errno != syscall.EINTR {
			return int(n), errno
		}
	}
}

// readShared is readNow from a goroutine other than the loop, which may
// close the descriptor meanwhile.
func (lc *loopConn) readShared(buf []byte) (int, syscall.Errno) {
	lc.mu.RLock()
	defer lc.mu.RUnlock()
	if lc.closed {
		return 0, syscall.EBADF
	}
	return lc.readNow(buf)
}

// writeShared writes what the socket takes of buf without waiting, from
// any goroutine.
func (lc *loopConn) writeShared(buf []byte) (int, syscall.Errno) {
	lc.mu.RLock()
	defer lc.mu.RUnlock()
	if lc.closed {
		return 0, syscall.EBADF
	}
	return lc.writeNow(buf)
}

// writeNow writes what the socket takes of buf without waiting; as
// readNow, on the loop.
func (lc *loopConn) writeNow(buf []byte) (int, syscall.Errno) {
	written := 0
	for written < len(buf) {
		rest := buf[written:]
		n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(lc.fd), uintptr(unsafe.Pointer(&rest[0])), uintptr(len(rest)))
		switch errno {
		case 0:
			written += int(n)
		case syscall.EINTR:
		default:
			return written, errno
		}
	}
	return written, 0
}

// Read waits for data; only goroutines other than the loop call it.
func (lc *loopConn) Read(buf []byte) (int, error) {
	if len(buf) == 0 {
		return 0, nil
	}
	for {
		n, errno := lc.readShared(buf)
		switch {
		case errno == syscall.EAGAIN:
		case errno != 0:
			return 0, errno
		case n == 0:
			return 0, io.EOF
		default:
			return n, nil
		}
		if lc.readExpired.Load() {
			return 0, os.ErrDeadlineExceeded
		}
		select {
		case <-lc.readable:
		case <-lc.gone:
			return 0, net.ErrClosed
		}
	}
}

// Write writes all of buf, waiting while the socket is full; only
// goroutines other than the loop call it.
func (lc *loopConn) Write(buf []byte) (int, error) { return lc.writeSome(buf, true) }

// writeSome writes buf; without wait it returns what the socket took at once.
func (lc *loopConn) writeSome(buf []byte, wait bool) (int, error) {
	written := 0
	for {
		n, errno := lc.writeShared(buf[written:])
		written += n
		switch {
		case errno == 0:
			if wait {
				lc.wantWrite.Store(false)
			}
			return written, nil
		case errno != syscall.EAGAIN:
			return written, errno
		case !wait:
			return written, nil
		case !lc.wantWrite.Load():
			// Try once more with the flag up: a report that came before
			// it was not passed on.
			lc.wantWrite.Store(true)
			continue
		}
		select {
		case <-lc.writable:
		case <-lc.gone:
			return written, net.ErrClosed
		}
	}
}

// shutdown ends the connection from any goroutine: its holder or loop sees
// the end and closes it.
func (lc *loopConn) shutdown() {
	lc.mu.RLock()
	if !lc.closed {
		syscall.Shutdown(lc.fd, syscall.SHUT_RDWR)
	}
	lc.mu.RUnlock()
}

// Close has the loop close the descriptor.
func (lc *loopConn) Close() error {
	lc.loop.post(taskClose, lc)
	return nil
}

func (lc *loopConn) LocalAddr() net.Addr  { return lc.local }
func (lc *loopConn) RemoteAddr() net.Addr { return lc.remote }

// SetReadDeadline supports what park needs: a time in the past ends a
// waiting Read, zero clears that.
func (lc *loopConn) SetReadDeadline(t time.Time) error {
	expired := !t.IsZero() && !t.After(time.Now())
	lc.readExpired.Store(expired)
	if expired {
		lc.signal(lc.readable)
	}
	return nil
}

func (lc *loopConn) SetDeadline(t time.Time) error { return lc.SetReadDeadline(t) }
func (lc *loopConn) SetWriteDeadline(time.Time) error {
	return errors.ErrUnsupported
}

// loopConnOf takes conn, just accepted, out of Go's poller for a loop: its
// descriptor is duplicated and the original closed (which deregisters it).
// nil when conn is not a plain socket (TLS).
func (s *Server) loopConnOf(conn net.Conn) *loopConn {
	if len(s.loops) == 0 {
		return nil
	}
	var rc syscall.RawConn
	switch c := conn.(type) {
	case *net.TCPConn:
		rc, _ = c.SyscallConn()
	case *net.UnixConn:
		rc, _ = c.SyscallConn()
	}
	if rc == nil {
		return nil
	}
	nfd := -1
	rc.Control(func(fd uintptr) {
		if r, _, errno := syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_DUPFD_CLOEXEC, 0); errno == 0 {
			nfd = int(r)
		}
	})
	if nfd < 0 {
		return nil
	}
	lc := newLoopConn(nfd, conn.LocalAddr(), conn.RemoteAddr(), s.nextLoop())
	conn.Close()
	return lc
}

// nextLoop picks the loop for a new client, in turn.
func (s *Server) nextLoop() *eventLoop {
	n := s.loopTurn.Add(1)
	return s.loops[int(n)%len(s.loops)]
}

// loopResult is what serving a client on its loop came to.
type loopResult uint8

const (
	loopServed  loopResult = iota // idle: its replies are written at the end of the wake-up
	loopBlocked                   // its command waits for a key, on the loop
	loopWait                      // it waits (postponed, a full socket): a goroutine holds it
	loopQuit                      // it ends after its replies (QUIT, a protocol error)
	loopEnd                       // the connection ended
)

// serveOnLoop reads what the client's socket holds and runs the complete
// commands, on its loop.
func (c *Client) serveOnLoop() loopResult {
	c.onLoop = true
	switch {
	case c.r < c.w: // read while it was blocked
		if res, stop := c.runOnLoop(); stop {
			return res
		}
	case !c.prepareRead():
		// Woken from a wait that stopped its commands before prepareRead:
		// the buffer starts over, else a wait ending at its last byte
		// would leave nothing to read into.
		return loopEnd
	}
	for {
		buf := c.in[c.w:]
		n, errno := c.lc.readNow(buf)
		switch {
		case errno == syscall.EAGAIN:
			return loopServed
		case errno != 0 || n == 0:
			return loopEnd
		}
		c.w += n
		c.traffic.read(int64(n))
		if res, stop := c.runOnLoop(); stop {
			return res
		}
		if n < len(buf) {
			return loopServed // the socket is empty: its next data is reported
		}
	}
}

// runOnLoop runs the complete commands in the read buffer; stop says the
// client cannot go on reading (res says why).
func (c *Client) runOnLoop() (res loopResult, stop bool) {
	switch {
	case !c.process():
		return loopQuit, true
	case c.peer.Serving():
		return loopWait, true // its goroutine serves it from now on (serveHeld)
	case c.blocked != nil:
		return loopBlocked, true
	case c.postponed != nil || c.outBlocked:
		return loopWait, true
	case !c.prepareRead():
		return loopEnd, true
	}
	return loopServed, false
}

// serveHeld is the goroutine holding a client its loop handed over (res):
// it writes what the socket did not take, waits for what the client waits
// for, runs the commands read meanwhile, and gives the client back.
func (c *Client) serveHeld(res loopResult) {
	defer c.s.wg.Done()
	c.onLoop, c.outBlocked = false, false
	alive, keep := res != loopEnd, res != loopQuit
	if alive && keep {
		// resume writes the replies before a command that waits itself,
		// and stops the wait when they cannot be written.
		alive = c.resume() && c.flush()
		keep = alive && c.run()
	}
	if alive && keep && c.peer.Serving() {
		c.serveReplica() // until the replica's connection ends
		return
	}
	if alive && !keep {
		c.release() // QUIT: subscriptions go before the reply, as in serve
	}
	if alive {
		alive = c.flush() && keep && c.prepareRead()
	}
	if !alive {
		c.freeIn()
		c.close()
		return
	}
	c.lc.loop.post(taskResume, c.lc)
}
