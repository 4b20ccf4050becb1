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

// holdForReplicas runs after a client's command that wrote (its reply
// from mark on in x.W): unless enough replicas already have the write, it
// takes the reply back and blocks the client until they do.
func (c *Client) holdForReplicas(x *Ctx, mark int, n int64) {
	s := c.s
	target := s.repl.Offset()
	if s.repl.ReplicasAt(target, false) >= n {
		return
	}
	held := bytes.Clone(x.W.B[mark:])
	x.W.B = x.W.B[:mark]
	release := func(w *resp.Writer) { w.B = append(w.B, held...) }
	refuse := func(w *resp.Writer) { w.Error(errNotAcked) }
	ms := time.Duration(s.cfg.MinReplicasAckTimeout()) * time.Millisecond
	x.Block(command.BlockRequest{Deadline: time.Now().Add(ms), TimedOut: refuse, Denied: release})
	w := c.blocked
	if w == nil { // not a client that can wait (a replica's link): as it was
		return
	}
	s.replWaiters.add(w, target, n, release)
	s.repl.AskAcksOnce()
	// An ACK that came in between woke nobody (see waitCommand).
	if s.repl.ReplicasAt(target, false) >= n && s.blocking.withdraw(w) {
		c.blocked = nil
		c.waiting.Store(nil)
		release(x.W)
	}
}
