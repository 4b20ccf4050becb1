package server

import (
	"runtime"
	"sync"

	"github.com/keyhive/keyhive/config"
)

// outQueue is the output of a client that receives messages from other
// goroutines: its replies and the messages published to it, in order. One
// goroutine at a time writes it (writing); the others only append.
//
// The bytes are kept in segments of segSize, as Redis keeps a reply list of
// 16 KiB blocks: a backlog grows without copying what it holds, so a
// subscriber that falls behind costs what it is owed and no garbage. The
// segments come from a pool shared by all clients and go back once
// written, so an idle subscriber holds none.
type outQueue struct {
	mu        sync.Mutex
	pending   [][]byte // not yet handed to a writer
	size      int      // bytes in pending
	spareList [][]byte // the slice of segments a writer finished with
	inflight  int      // bytes a writer holds, counted against the limit
	writing   bool
	scheduled bool  // a publisher writes pending at its next flush
	closing   bool  // the client is gone: its writer closes the connection when done
	closed    bool  // dropped: nothing more is queued or written
	softSince int64 // Unix ms the soft limit was first exceeded; 0: under it
}

const segSize = 16 << 10

var segments = sync.Pool{New: func() any { return new([segSize]byte) }}

// add appends b, with its first byte replaced by first. Needs mu.
func (q *outQueue) add(b []byte, first byte) {
	q.size += len(b)
	for len(b) > 0 {
		n := len(q.pending)
		if n == 0 || len(q.pending[n-1]) == segSize {
			q.pending = append(q.pending, segments.Get().(*[segSize]byte)[:0])
			n++
		}
		seg := q.pending[n-1]
		k := min(len(b), segSize-len(seg))
		start := len(seg)
		seg = append(seg, b[:k]...)
		if first != 0 {
			seg[start] = first
			first = 0
		}
		q.pending[n-1] = seg
		b = b[k:]
	}
}

// used is what counts against client-output-buffer-limit. Needs mu.
func (q *outQueue) used() uint64 { return uint64(q.size + q.inflight) }

// take hands pending to the caller, which becomes the writer. Needs mu.
func (q *outQueue) take() [][]byte {
	segs := q.pending
	q.pending, q.spareList = q.spareList, nil
	q.inflight, q.size = q.size, 0
	q.writing = true
	return segs
}

// drop empties the queue for good. Needs mu.
func (q *outQueue) drop() {
	q.closed = true
	q.pending, q.spareList, q.size = nil, nil, 0
}

// queueReplies moves the replies of the commands run so far to the queue,
// behind the messages that arrived meanwhile, and then lets the client's new
// subscriptions receive messages.
func (c *Client) queueReplies() {
	if len(c.out.B) > 0 {
		q := &c.ps.q
		q.mu.Lock()
		over := false
		if !q.closed {
			q.add(c.out.B, 0)
			over = c.s.overLimit(c)
		}
		q.mu.Unlock()
		c.resetOut()
		if over {
			c.s.dropSlowClient(c)
		}
	}
	if len(c.ps.unregistered) > 0 {
		c.s.pubsub.register(c)
	}
}

// flushQueued is flush for a client whose output is queued: it never waits
// for the socket, so the client keeps reading while a subscriber's backlog
// drains, as in Redis. It reports whether the client is still connected.
func (c *Client) flushQueued() bool {
	c.queueReplies()
	c.writeQueue()
	q := &c.ps.q
	q.mu.Lock()
	defer q.mu.Unlock()
	return !q.closed
}

// writeQueue writes c's queued output unless another goroutine is writing
// it, without waiting: what the socket does not take now is left to a
// goroutine that waits for it.
func (c *Client) writeQueue() {
	q := &c.ps.q
	q.mu.Lock()
	q.scheduled = false
	if q.writing || q.closed || q.size == 0 {
		q.mu.Unlock()
		return
	}
	segs := q.take()
	q.mu.Unlock()
	for segs != nil {
		var err error
		i, off, n := 0, 0, 0
		for ; i < len(segs) && err == nil; i, off = i+1, 0 {
			n, err = c.tryWrite(segs[i])
			if err == nil && n < len(segs[i]) {
				off = n
				break
			}
		}
		if err == nil && i < len(segs) {
			c.s.wg.Add(1)
			go c.drain(segs, i, off)
			return
		}
		segs = c.written(segs, err)
	}
}

// drain writes segs from segment i, offset off, waiting for the socket, and
// then whatever was queued meanwhile.
func (c *Client) drain(segs [][]byte, i, off int) {
	defer c.s.wg.Done()
	for segs != nil {
		var err error
		for ; i < len(segs) && err == nil; i, off = i+1, 0 {
			_, err = c.write(segs[i][off:])
		}
		segs = c.written(segs, err)
		i = 0
	}
}

// tryWrite writes as much of buf as the socket takes now.
func (c *Client) tryWrite(buf []byte) (int, error) {
	if c.lc == nil {
		return 0, nil // no non-blocking write: drain waits instead
	}
	return c.lc.writeSome(buf, false)
}

// written ends the write of segs and returns the next segments to write, or
// nil when the writer is done.
func (c *Client) written(segs [][]byte, err error) [][]byte {
	q := &c.ps.q
	q.mu.Lock()
	c.traffic.netOut.v.Add(int64(q.inflight))
	q.inflight = 0
	if err != nil {
		q.drop()
	}
	for _, seg := range segs {
		segments.Put((*[segSize]byte)(seg[:segSize]))
	}
	clear(segs)
	if !q.closed {
		q.spareList = segs[:0]
		if q.size > 0 {
			next := q.take()
			q.mu.Unlock()
			return next
		}
	}
	q.writing = false
	closing := q.closing
	if closing {
		q.drop()
	}
	q.mu.Unlock()
	switch {
	case closing: // its goroutine has gone
		c.s.removeClient(c)
		c.conn.Close()
	case err != nil:
		c.disconnect()
	}
	return nil
}

// disconnect ends c's connection from any goroutine, its own included: a
// loop's socket is shut down, which its loop or holder sees as the end and
// closes it (the descriptor is closed by its loop only, so no goroutine
// writes to a number reused meanwhile); a TLS connection is closed, which
// ends its goroutine's read.
func (c *Client) disconnect() {
	if c.lc != nil {
		c.lc.shutdown()
		return
	}
	c.conn.Close()
}

// closeQueued ends a queued client's output as it disconnects: what is
// queued (a reply to QUIT, say) is still written before the connection
// closes. It reports whether the goroutine writing it closes the connection.
func (c *Client) closeQueued() (later bool) {
	q := &c.ps.q
	q.mu.Lock()
	if q.writing {
		q.closing = true
		q.mu.Unlock()
		return true
	}
	segs := q.pending
	q.drop()
	q.mu.Unlock()
	for _, seg := range segs {
		write := c.write
		if c.onLoop { // the loop does not wait: what the socket takes now
			write = func(b []byte) (int, error) { return c.lc.writeSome(b, false) }
		}
		if _, err := write(seg); err != nil {
			break
		}
	}
	return false
}

// queueWriter writes the queues of subscribers that publishers left output
// for. It runs after the goroutines that were ready to run when it was woken
// (other publishers woken by the same network poll), so one write per
// subscriber carries all their messages, as Redis writes each client once
// per event-loop round: with 50 subscribers, a write per subscriber per
// publish made delivery cost several times Redis's.
type queueWriter struct {
	once  sync.Once
	wake  chan struct{}
	mu    sync.Mutex
	dirty []*Client
	spare []*Client
}

// schedule has the writer write ts's queues.
func (w *queueWriter) schedule(s *Server, ts []*Client) {
	w.once.Do(func() {
		w.wake = make(chan struct{}, 1)
		s.wg.Add(1)
		go w.run(s)
	})
	w.mu.Lock()
	w.dirty = append(w.dirty, ts...)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *queueWriter) run(s *Server) {
	defer s.wg.Done()
	for {
		select {
		case <-s.done:
			return
		case <-w.wake:
		}
		// Woken, this goroutine runs next; yielding puts it behind the
		// goroutines already runnable.
		runtime.Gosched()
		w.mu.Lock()
		batch := w.dirty
		w.dirty, w.spare = w.spare, nil
		w.mu.Unlock()
		for _, t := range batch {
			t.writeQueue()
		}
		clear(batch)
		w.mu.Lock()
		w.spare = batch[:0]
		w.mu.Unlock()
	}
}

// repliesOverLimit applies client-output-buffer-limit's hard limit for
// normal clients to a client whose output is not queued. Such a client waits
// for its socket, so only one batch of replies (one huge reply, say) piles
// up; over the limit it is closed without them, as Redis does.
func (c *Client) repliesOverLimit() bool {
	lim := c.s.cfg.ClientOutputBufferLimit(config.ClassNormal)
	if lim.Hard == 0 || uint64(len(c.out.B)) < lim.Hard {
		return false
	}
	c.s.log.Printf("Client id=%d addr=%s closed for overcoming of output buffer limits.", c.id, c.peerAddr())
	c.resetOut()
	return true
}
