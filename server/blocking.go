package server

import (
	"bytes"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/resp"
)

// Blocking commands (BLPOP, BZPOPMIN, BLMOVE, ...) run as in Redis. A client
// whose keys are all empty becomes a waiter queued on each key and waits on
// its event loop (a TLS client's goroutine parks). A command that changes a
// key somebody waits on serves the waiters before it releases the key's
// lock, oldest first, so no other client can take the element in between:
// the first client blocked is the first served, as in Redis. A waiter's
// reply goes into a buffer of its own, which the client appends to its
// output when its loop (or goroutine) learns the wait ended: while it
// waits, its connection state stays its own.

type waiter struct {
	c        *Client
	db       int
	keys     [][]byte // distinct, in the order given
	dst      []byte   // BLMOVE's destination: serving needs its lock too
	typ      keyspace.Type
	ctx      Ctx // serves the command, replying into reply
	reply    resp.Writer
	serve    func(x *command.Ctx, key []byte) // pops from key, holding typ, and replies
	timedOut func(w *resp.Writer)             // the reply on timeout
	deadline time.Time                        // zero: no timeout
	done     chan struct{}                    // closed once the reply is written
	// lc: the client waits on its event loop, which ended() tells;
	// timer ends the wait at the deadline there.
	lc      *loopConn
	timer   *time.Timer
	claimed bool // under blocking.mu: off the queues
	// closeAfter: the client's connection closes once the reply is sent
	// (set with the reply, before ended).
	closeAfter bool
	// The slow log records a command that blocked when its wait ends, as
	// Redis 7.0 does: served by a key, with its arguments, right after the
	// command that served it (logServed); ended by CLIENT UNBLOCK, with
	// none, before that command (clientUnblock). Not after a timeout or a disconnect.
	ran       atomic.Int64 // ns the command ran before it blocked
	serveTime int64        // ns serving it took

	ready func(e *keyspace.Entry, found bool) bool // the BlockRequest's
}

type blockKey struct {
	db  int
	key string
}

type blocking struct {
	mu      sync.Mutex
	waiting atomic.Int64 // waiters queued: writers look at nothing while it is 0
	queues  map[blockKey][]*waiter
	// served are the waiters served and not yet in the slow log (under mu),
	// unlogged their number.
	served   []*waiter
	unlogged atomic.Int64
}

// blockingDenied reports whether the running command may not make its
// client wait: inside EXEC or a script, or replayed from the AOF or a
// master, as Redis's clients that deny blocking. Block asks it; a command
// that would hold its client otherwise (WAIT, MONITOR, SSUBSCRIBE, a
// snapshot waiting for the exclusive lock) asks it too.
func (x *Ctx) blockingDenied() bool { return x.cannotBlock }

// Block makes x, the running command of c, wait for one of its keys to be
// ready. Inside MULTI or a script it replies at once instead, as Redis does.
func (c *Client) Block(x *command.Ctx, b command.BlockRequest) {
	sx := c.ctxOf(x)
	if sx.blockingDenied() {
		if b.Denied != nil {
			b.Denied(x.W)
		} else {
			b.TimedOut(x.W)
		}
		return
	}
	w := &waiter{c: c, db: x.DB.ID(), dst: bytes.Clone(b.Dst), typ: b.Type, ready: b.Ready, serve: b.Serve, timedOut: b.TimedOut, deadline: b.Deadline, done: make(chan struct{})}
	for _, k := range b.Keys {
		if !containsKey(w.keys, k) {
			w.keys = append(w.keys, bytes.Clone(k))
		}
	}
	w.reply.Proto = x.W.Proto
	w.reply.Errors = &c.s.stats.errors
	w.ctx = newCtx(c.s, c, &w.reply)
	w.ctx.setCommand(sx.cmd)
	w.ctx.Args = command.CloneArgs(x.Args)
	if c.onLoop {
		w.lc = c.lc
	}
	c.s.blocking.add(w)
	c.blocked = w
	c.waiting.Store(w)
}

func containsKey(keys [][]byte, k []byte) bool {
	for _, x := range keys {
		if string(x) == string(k) {
			return true
		}
	}
	return false
}

func (b *blocking) add(w *waiter) {
	b.mu.Lock()
	if b.queues == nil {
		b.queues = make(map[blockKey][]*waiter)
	}
	for _, k := range w.keys {
		bk := blockKey{w.db, string(k)}
		b.queues[bk] = append(b.queues[bk], w)
	}
	b.waiting.Add(1)
	b.mu.Unlock()
}

// remove takes w off its queues. Needs mu.
func (b *blocking) remove(w *waiter) {
	for _, k := range w.keys {
		removeFrom(b.queues, blockKey{w.db, string(k)}, w)
	}
	w.claimed = true
	b.waiting.Add(-1)
}

// withdraw takes w off the queues unless it was claimed, for the command
// that blocked it and is still running, and reports whether it did.
func (b *blocking) withdraw(w *waiter) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if w.claimed {
		return false
	}
	b.remove(w)
	return true
}

// claim takes the oldest waiter on bk that the key (e, or missing) can serve
// off the queues. If that waiter needs a lock outside locks, it returns nil
// and later: the caller must serve the key again holding every lock.
func (b *blocking) claim(bk blockKey, e *keyspace.Entry, found bool, locks *keyspace.LockSet) (w *waiter, later bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, w := range b.queues[bk] {
		if w.ready != nil && !w.ready(e, found) || w.ready == nil && (!found || w.typ != e.Type()) {
			continue // waits for another type: stays blocked, as in Redis
		}
		if w.dst != nil && !locks.Covers(w.dst) {
			return nil, true
		}
		b.remove(w)
		return w, false
	}
	return nil, false
}

// unblock ends w's wait unless a server already claimed it: reply (if not nil)
// writes its reply. It reports whether it did.
func (b *blocking) unblock(w *waiter, reply func(w *resp.Writer)) bool {
	b.mu.Lock()
	if w.claimed {
		b.mu.Unlock()
		return false
	}
	b.remove(w)
	b.mu.Unlock()
	if reply != nil {
		reply(&w.reply)
	}
	w.ended()
	return true
}

// unblockAllForReplica ends every blocked command with an error and closes
// its connection after it, as Redis does when a server starts following a
// master: a pop served later by the master's stream would take, on this
// server alone, what the master keeps.
func (s *Server) unblockAllForReplica() {
	for _, c := range s.clientsSnapshot() {
		if w := c.waiting.Load(); w != nil {
			s.blocking.unblock(w, func(rw *resp.Writer) {
				rw.Error("UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)")
				w.closeAfter = true
			})
		}
	}
}

// ended tells the waiting client that its reply is ready.
func (w *waiter) ended() {
	close(w.done)
	if w.lc != nil {
		w.lc.loop.post(taskWake, w.lc)
	}
}

// keys lists every key somebody waits on.
func (b *blocking) keys() []blockKey {
	b.mu.Lock()
	defer b.mu.Unlock()
	all := make([]blockKey, 0, len(b.queues))
	for bk := range b.queues {
		all = append(all, bk)
	}
	return all
}

// serveBlocked serves the waiters on the keys the command in x just changed,
// with its locks still held. It reports whether some must be served later under
// every lock (serveBlockedExclusive).
func (s *Server) serveBlocked(x *Ctx) (later bool) {
	if x.Locks.Whole() {
		s.serveAll(x.Now, &x.Locks)
		return false
	}
	for _, key := range x.keyBuf {
		if s.serveKey(x.DB, key, x.Now, &x.Locks) {
			later = true
		}
	}
	return later
}

// logServed puts the waiters served since the last call in the slow log,
// after the command that served them, as Redis logs them.
func (s *Server) logServed(nowMs int64) {
	b := &s.blocking
	b.mu.Lock()
	served := b.served
	b.served = nil
	b.unlogged.Add(-int64(len(served)))
	b.mu.Unlock()
	for _, w := range served {
		s.logIfSlow(w.c, w.ctx.cmd, w.ctx.Args, w.ran.Load()+w.serveTime, nowMs)
		if s.cfg.LatencyTracking() {
			s.cmdStats[w.ctx.cmd.id].latencyHistogram().record(w.ran.Load() + w.serveTime)
		}
	}
}

// serveBlockedExclusive serves every ready waiter holding every lock.
func (s *Server) serveBlockedExclusive(now int64) {
	var all keyspace.LockSet
	all.All()
	db := s.ks.Lock(0, &all)
	s.serveAll(now, &all)
	s.ks.Unlock(db, &all)
}

func (s *Server) serveAll(now int64, locks *keyspace.LockSet) {
	for _, bk := range s.blocking.keys() {
		s.serveKey(s.ks.DB(bk.db), []byte(bk.key), now, locks)
	}
}

// serveKey serves the waiters on key while it holds elements of their type,
// then those on the destinations BLMOVE pushed to, as Redis serves keys that
// became ready while serving.
func (s *Server) serveKey(db *keyspace.DB, key []byte, now int64, locks *keyspace.LockSet) (later bool) {
	for ready := [][]byte{key}; len(ready) > 0; {
		key, ready = ready[0], ready[1:]
		bk := blockKey{db.ID(), string(key)}
		for {
			e, found := db.Lookup(key, now, false)
			w, l := s.blocking.claim(bk, &e, found, locks)
			later = later || l
			if w == nil {
				break
			}
			// Its changes are its own, as Redis serves it as the current
			// client: its invalidations come after its reply.
			s.ks.Reown(db, locks, w.c)
			w.run(db, key, now)
			s.ks.Reown(db, locks, locks.Owner)
			if w.dst != nil {
				ready = append(ready, w.dst)
			}
		}
	}
	return later
}

// run serves w from key and wakes it.
func (w *waiter) run(db *keyspace.DB, key []byte, now int64) {
	x := &w.ctx
	x.DB, x.Now, x.Dirty = db, now, 0
	args := x.Args
	start := monoNow()
	w.serve(&x.Ctx, key)
	if x.Dirty > 0 {
		x.s.stats.dirty.Add(int64(x.Dirty))
		x.propagateCall(args) // served outside any call of its client: an execution of its own
		x.c.execution().propagatePending(&x.s.stream)
	}
	w.serveTime = monoNow() - start
	b := &x.s.blocking
	b.mu.Lock()
	b.served = append(b.served, w)
	b.mu.Unlock()
	b.unlogged.Add(1)
	w.ended()
}

type readResult struct {
	n   int
	err error
}

// waitBlocked parks the client until its blocked command is served, times
// out, or the connection or server closes, then appends the reply. Meanwhile
// it keeps reading, as Redis does, so that a client that disconnects stops
// waiting (and is never handed an element) and what it pipelined after the
// blocking command is kept. It reports whether the connection is still good.
func (c *Client) waitBlocked() bool {
	w := c.blocked
	c.blocked = nil
	b := &c.s.blocking
	var expired <-chan time.Time
	if !w.deadline.IsZero() {
		t := time.NewTimer(time.Until(w.deadline))
		defer t.Stop()
		expired = t.C
	}
	alive := c.flush()
	if alive {
		alive = c.park(w.done, expired, func() { b.unblock(w, w.timedOut) }, func() { b.unblock(w, nil) })
	} else {
		b.unblock(w, nil)
		<-w.done // a server that claimed it first is serving it
	}
	// Its reply counts as interaction, set before the client stops waiting so
	// that the idle check cannot close it with the reply (and a popped
	// element) still unsent, which Redis's cron can.
	c.woken(w)
	return alive
}

// woken takes the reply of a command whose wait ended, after its
// replies before it.
func (c *Client) woken(w *waiter) {
	c.lastSeen.Store(c.s.clock.UnixMilli())
	c.waiting.Store(nil)
	c.out.B = append(c.out.B, w.reply.B...)
	if w.closeAfter {
		c.closeAfterReply = true
	}
	if len(w.reply.B) > 0 && w.reply.B[0] == '-' { // CLIENT UNBLOCK ... ERROR, as Redis counts it
		c.s.cmdStats[w.ctx.cmd.id].failed.Add(1)
	}
	if !w.claimed && c.s.cfg.LatencyTracking() {
		// Timed out or unblocked (a served one is counted by logServed):
		// its latency is the time it ran before it blocked, as in Redis.
		c.s.cmdStats[w.ctx.cmd.id].latencyHistogram().record(w.ran.Load())
	}
	if c.s.tracking.queued.Load() {
		c.s.flushBroadcasts(c) // its own invalidations, after the reply
	}
	if w.ctx.Dirty > 0 { // served by a pop (w.done was closed after it)
		c.wrote = true
	}
}

// park waits until wake is closed, reading the socket meanwhile, as Redis
// reads from a blocked client: what it pipelines is kept, and a disconnect
// (or the server closing) calls gone, which must see that wake gets
// closed. expired (nil: never) calls timedOut. It reports whether the
// connection is still good.
func (c *Client) park(wake <-chan struct{}, expired <-chan time.Time, timedOut, gone func()) bool {
	alive := true
	reads := make(chan readResult, 1)
	reading := false
	read := func() {
		if c.w < len(c.in) {
			reading = true
			go func() {
				n, err := c.read(c.in[c.w:])
				reads <- readResult{n, err}
			}()
		}
	}
	read()
	for waiting := true; waiting; {
		select {
		case <-wake:
			waiting = false
		case <-expired:
			timedOut()
		case r := <-reads:
			reading = false
			c.w += r.n
			c.traffic.read(int64(r.n))
			if r.n > 0 { // Redis counts any read as interaction, blocked or not
				c.lastSeen.Store(c.s.clock.UnixMilli())
			}
			if r.err != nil {
				alive = false
				gone()
			} else {
				read()
			}
		case <-c.s.done:
			if alive {
				alive = false
				gone()
			}
		}
	}
	if reading {
		// Interrupt the read: the goroutine owns c.in until it returns.
		c.conn.SetReadDeadline(time.Unix(1, 0))
		r := <-reads
		c.conn.SetReadDeadline(time.Time{})
		c.w += r.n
		c.traffic.read(int64(r.n))
		if r.err != nil && !errors.Is(r.err, os.ErrDeadlineExceeded) {
			alive = false
		}
	}
	return alive
}
