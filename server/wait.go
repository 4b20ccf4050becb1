package server

import (
	"slices"
	"sync"
	"time"

	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/resp"
)

// WAIT and WAITAOF (package replication counts the replicas'
// acknowledgements): a client waits until the changes it made are on enough
// replicas (WAIT) or fsynced to the AOF and to enough replicas' AOFs
// (WAITAOF). Both block as the blocking commands do (blocking.go), on no
// key, so a timeout, CLIENT UNBLOCK and a disconnect end the wait the same
// way; they are woken when a replica's ACK reaches the client's writes (a
// GETACK in the stream asks for one at once), WAITAOF also when the AOF's
// fsync advances.

func init() {
	bind("wait", waitCommand)
	bind("waitaof", waitAOFCommand)
}

// replWriteOffset is where the changes c made end in the replication
// stream.
func (c *Client) replWriteOffset() int64 {
	if c.wrote {
		return c.s.repl.Offset()
	}
	_, replEnd := c.peer.Ends()
	return replEnd
}

// writeOffset is where the changes c made end in the AOF's stream: the
// AOF's length after them (changes made since c's replies last left are
// all fed by now).
func (c *Client) writeOffset() int64 {
	if c.wrote {
		return c.s.aof.Fed()
	}
	aofEnd, _ := c.peer.Ends()
	return aofEnd
}

// timeoutMs parses a timeout in milliseconds as Redis's
// getTimeoutFromObjectOrReply does, replying its errors.
func (x *Ctx) timeoutMs(arg []byte) (int64, bool) {
	ms, ok := strnum.ParseInt(arg)
	switch {
	case !ok:
		x.W.Error("ERR timeout is not an integer or out of range")
	case ms < 0:
		x.W.Error("ERR timeout is negative")
	default:
		return ms, true
	}
	return 0, false
}

func deadlineAfter(ms int64) time.Time {
	if ms == 0 || ms >= int64(time.Duration(1<<62)/time.Millisecond) {
		return time.Time{} // none, or centuries
	}
	return time.Now().Add(time.Duration(ms) * time.Millisecond)
}

// waitCommand is WAIT numreplicas timeout: at once when enough replicas
// acknowledged (0 asks for none) or inside MULTI, else blocked until they
// do or the timeout passes, replying how many did.
func waitCommand(x *Ctx) {
	n, ok := strnum.ParseInt(x.Args[1])
	if !ok {
		x.W.Error(errNotInt)
		return
	}
	ms, ok := x.timeoutMs(x.Args[2])
	if !ok {
		return
	}
	s := x.s
	if s.IsReplica() {
		x.W.Error("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.")
		return
	}
	target := x.c.replWriteOffset()
	if acked := s.repl.ReplicasAt(target, false); acked >= n || x.blockingDenied() {
		x.W.Int(acked)
		return
	}
	reply := func(w *resp.Writer) { w.Int(s.repl.ReplicasAt(target, false)) }
	x.Block(command.BlockRequest{Deadline: deadlineAfter(ms), TimedOut: reply})
	w := x.c.blocked
	s.replWaiters.add(w, target, n, reply)
	s.repl.AskAcks()
	// An ACK that came between the first look and the registration woke
	// nobody: the command takes its wait back and replies now, still on
	// its own goroutine (a wake-up posted to the loop before it parks the
	// client would be lost).
	if s.repl.ReplicasAt(target, false) >= n && s.blocking.withdraw(w) {
		x.c.blocked = nil
		x.c.waiting.Store(nil)
		reply(x.W)
	}
}

// replWaiters are the WAIT clients waiting for replicas' ACKs.
type replWaiters struct {
	mu      sync.Mutex
	waiting []replWaiter
}

type replWaiter struct {
	w        *waiter
	offset   int64
	replicas int64
	reply    func(w *resp.Writer)
}

func (a *replWaiters) add(w *waiter, offset, replicas int64, reply func(*resp.Writer)) {
	a.mu.Lock()
	a.waiting = append(a.waiting, replWaiter{w, offset, replicas, reply})
	a.mu.Unlock()
}

// serveReplWaiters wakes the WAIT clients whose writes enough replicas
// have now acknowledged (a replica's ACK calls it), and forgets those
// that stopped waiting otherwise.
func (s *Server) serveReplWaiters() {
	a := &s.replWaiters
	a.mu.Lock()
	defer a.mu.Unlock()
	a.waiting = slices.DeleteFunc(a.waiting, func(q replWaiter) bool {
		if s.repl.ReplicasAt(q.offset, false) >= q.replicas {
			s.blocking.unblock(q.w, q.reply)
			return true
		}
		s.blocking.mu.Lock()
		gone := q.w.claimed
		s.blocking.mu.Unlock()
		return gone
	})
}

// waitAOFCommand is WAITAOF numlocal numreplicas timeout (Redis 7.2): waits
// until the client's changes are fsynced to the local AOF (numlocal 1)
// and to numreplicas replicas' AOFs, replying [local, replicas].
func waitAOFCommand(x *Ctx) {
	local, ok := strnum.ParseInt(x.Args[1])
	switch {
	case !ok:
		x.W.Error(errNotInt)
		return
	case local < 0 || local > 1:
		x.W.Error("ERR value is out of range, value must between 0 and 1")
		return
	}
	replicas, ok := strnum.ParseInt(x.Args[2])
	switch {
	case !ok, replicas < 0: // one text for both, as Redis
		x.W.Error("ERR value is out of range, must be positive")
		return
	}
	ms, ok := x.timeoutMs(x.Args[3])
	if !ok {
		return
	}
	s, c := x.s, x.c
	if local > 0 && !s.cfg.AppendOnly() {
		x.W.Error("ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.")
		return
	}
	target, rtarget := c.writeOffset(), c.replWriteOffset()
	reply := func(w *resp.Writer) {
		w.Array(2)
		w.Int(int64(boolInt(s.aofSynced(target))))
		w.Int(s.repl.ReplicasAt(rtarget, true))
	}
	ready := func() bool {
		return (local == 0 || s.aofSynced(target)) && s.repl.ReplicasAt(rtarget, true) >= replicas
	}
	if ready() || x.blockingDenied() {
		reply(x.W)
		return
	}
	x.Block(command.BlockRequest{Deadline: deadlineAfter(ms), TimedOut: reply})
	s.aofWaiters.add(x.c.blocked, ready, reply)
	if replicas > 0 {
		s.repl.AskAcks()
	}
	if ready() { // the fsync or an ACK came in between
		s.serveAOFWaiters()
	}
}

// aofSynced reports whether the AOF is on and fsynced up to offset.
func (s *Server) aofSynced(offset int64) bool {
	return s.aof.On() && s.aof.Synced() >= offset
}

// aofWaiters are the WAITAOF clients waiting for the AOF's fsync.
type aofWaiters struct {
	mu      sync.Mutex
	waiting []aofWaiter
}

type aofWaiter struct {
	w     *waiter
	ready func() bool // the fsync and the replicas' FACKs cover its changes
	reply func(w *resp.Writer)
}

func (a *aofWaiters) add(w *waiter, ready func() bool, reply func(*resp.Writer)) {
	a.mu.Lock()
	a.waiting = append(a.waiting, aofWaiter{w, ready, reply})
	a.mu.Unlock()
}

// serveAOFWaiters wakes the WAITAOF clients whose changes the AOF's fsync
// and the replicas' FACKs now cover (the AOF calls it as the fsync
// advances, a replica's ACK too), and forgets those that stopped waiting
// otherwise.
func (s *Server) serveAOFWaiters() {
	a := &s.aofWaiters
	a.mu.Lock()
	defer a.mu.Unlock()
	a.waiting = slices.DeleteFunc(a.waiting, func(q aofWaiter) bool {
		if q.ready() {
			s.blocking.unblock(q.w, q.reply)
			return true
		}
		s.blocking.mu.Lock()
		gone := q.w.claimed
		s.blocking.mu.Unlock()
		return gone
	})
}
