package server

import (
	"bytes"
	"time"

	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/resp"
)

// Durable replies (min-replicas-to-ack). With it set, a write's reply
// leaves only once that many replicas acknowledged the stream up to the
// write, so that an acknowledged write survives the master's loss as long
// as one of them is promoted. Meanwhile the client waits as a WAIT does
// (blocked on no key, its event loop serving the others); after
// min-replicas-ack-timeout its reply is replaced by an error: the write
// was made on the master and may or may not survive, and nothing says it
// was replicated.

const errNotAcked = "NOREPLICAS Not enough replicas acknowledged the write within min-replicas-ack-timeout"

// unacked is a write's reply taken back until enough replicas have the
// stream up to offset.
type unacked struct {
	reply    []byte
	offset   int64
	replicas int64
}

// takeUnacked runs after a client's command that wrote (its reply from
// mark on in x.W), before anything may queue or send that reply: unless
// durable replies are off or enough replicas already have the write, it
// takes the reply out of x.W.
func (c *Client) takeUnacked(x *Ctx, mark int) *unacked {
	s := c.s
	n := int64(s.cfg.MinReplicasToAck())
	if n == 0 || c.obeys || s.IsReplica() {
		return nil
	}
	offset := s.repl.Offset()
	if s.repl.ReplicasAt(offset, false) >= n {
		return nil
	}
	u := &unacked{reply: bytes.Clone(x.W.B[mark:]), offset: offset, replicas: n}
	x.W.B = x.W.B[:mark]
	return u
}

// awaitAcks blocks the client until the replicas acknowledge u's write,
// then gives back its reply; at the timeout, the error instead.
func (c *Client) awaitAcks(x *Ctx, u *unacked) {
	s := c.s
	release := func(w *resp.Writer) { w.B = append(w.B, u.reply...) }
	refuse := func(w *resp.Writer) { w.Error(errNotAcked) }
	ms := time.Duration(s.cfg.MinReplicasAckTimeout()) * time.Millisecond
	x.Block(command.BlockRequest{Deadline: time.Now().Add(ms), TimedOut: refuse, Denied: release})
	w := c.blocked
	if w == nil { // a client that cannot wait: as it was
		return
	}
	s.replWaiters.add(w, u.offset, u.replicas, release)
	s.repl.AskAcksOnce()
	// An ACK that came in between woke nobody (see waitCommand).
	if s.repl.ReplicasAt(u.offset, false) >= u.replicas && s.blocking.withdraw(w) {
		c.blocked = nil
		c.waiting.Store(nil)
		release(x.W)
	}
}
