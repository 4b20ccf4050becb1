package server

import "sync"

// outQueue is the output of a client that receives messages from other
// goroutines: its replies and the messages published to it, in order. One
// goroutine at a time writes it (writing); the others only append.
type outQueue struct {
	mu        sync.Mutex
	pending   []byte // not yet handed to a writer
	spare     []byte // the buffer the last write finished with, for reuse
	inflight  int    // bytes a writer holds, counted against the limit
	writing   bool
	scheduled bool  // a publisher writes pending at its next flush
	closing   bool  // the client is gone: its writer closes the connection when done
	closed    bool  // dropped: nothing more is queued or written
	softSince int64 // Unix ms the soft limit was first exceeded; 0: under it
}

// take hands pending to the caller, which becomes the writer. Needs mu.
func (q *outQueue) take() []byte {
	buf := q.pending
	q.pending, q.spare = q.spare[:0], nil
	q.inflight = len(buf)
	q.writing = true
	return buf
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
			if len(q.pending) == 0 {
				q.pending, c.out.B = c.out.B, q.pending[:0]
			} else {
				q.pending = append(q.pending, c.out.B...)
				c.resetOut()
			}
			over = c.s.overLimit(c)
		} else {
			c.resetOut()
		}
		q.mu.Unlock()
		if over {
			c.s.dropSlowClient(c)
		}
	}
	if c.ps.unregistered {
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
	if q.writing || q.closed || len(q.pending) == 0 {
		q.mu.Unlock()
		return
	}
	buf := q.take()
	q.mu.Unlock()
	for buf != nil {
		n, err := c.tryWrite(buf)
		if err == nil && n < len(buf) {
			c.s.wg.Add(1)
			go c.drain(buf, n)
			return
		}
		buf = c.written(buf, n, err)
	}
}

// drain writes buf from off, waiting for the socket, and then whatever was
// queued meanwhile.
func (c *Client) drain(buf []byte, off int) {
	defer c.s.wg.Done()
	for buf != nil {
		n, err := c.write(buf[off:])
		buf = c.written(buf, off+n, err)
		off = 0
	}
}

// tryWrite writes as much of buf as the socket takes now.
func (c *Client) tryWrite(buf []byte) (int, error) {
	if c.raw == nil {
		return 0, nil // no non-blocking write: drain waits instead
	}
	return c.rawWriteSome(buf, false)
}

// written ends the write of buf, of which n bytes went out, and returns the
// next buffer to write, or nil when the writer is done.
func (c *Client) written(buf []byte, n int, err error) []byte {
	c.traffic.netOut.v.Add(int64(n))
	q := &c.ps.q
	q.mu.Lock()
	q.inflight = 0
	if err != nil {
		q.closed, q.pending = true, nil
	}
	if !q.closed {
		if cap(buf) <= idleWriteMax {
			q.spare = buf[:0]
		}
		if len(q.pending) > 0 {
			next := q.take()
			q.mu.Unlock()
			return next
		}
	}
	q.writing = false
	closing := q.closing
	if closing {
		q.closed = true
	}
	q.mu.Unlock()
	if closing {
		c.s.removeClient(c)
	}
	if closing || err != nil {
		c.conn.Close()
	}
	return nil
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
	buf := q.pending
	q.closed, q.pending, q.spare = true, nil, nil
	q.mu.Unlock()
	if len(buf) > 0 {
		c.write(buf)
	}
	return false
}
