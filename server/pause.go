package server

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/keyhive/keyhive/cmdspec"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/scripting"
)

// CLIENT PAUSE and UNPAUSE, as Redis 7.0 runs them. While a pause is on,
// admit (dispatch.go) postpones the commands it covers: under ALL every
// command, under WRITE those that may change the data set or feed the
// replication stream (write and may_replicate commands, a script that may
// write, an EXEC of a transaction holding one). A postponed client waits,
// still reading its socket so that a disconnect drops it, and when the
// pause ends the postponed clients run their commands again from the
// start (they may be postponed again), one after the other in the order
// they were postponed, as Redis reprocesses its postponed list. The data
// set stays still meanwhile: keys are not expired (a lookup reports an
// expired key missing without deleting it) and nothing is evicted.

const (
	pauseOff int32 = iota
	pauseWrite
	pauseAll
)

type pauseState struct {
	// kind is read by admit for every command: pauseOff, one atomic load.
	kind atomic.Int32

	mu    sync.Mutex
	endMs int64       // Unix ms the pause ends
	timer *time.Timer // ends it
	// queue holds the clients postponed, in order; releasing those let go
	// by the last unpause, woken one at a time (the first is running).
	queue, releasing []*postponed
}

// postponed is a client waiting for the pause to end. resume is closed when
// its turn to run again comes, or when it gives up (its connection or the
// server ends).
type postponed struct {
	resume chan struct{}
}

// pauses reports whether the pause postpones cmd (with args), and if so
// queues c (admit's gate).
func (s *Server) pauses(c *Client, cmd *Command, args [][]byte) bool {
	switch s.pause.kind.Load() {
	case pauseOff:
		return false
	case pauseWrite:
		if !mayReplicate(s, cmd, args) && (cmd != cmdExec || c.multi == nil || !c.multi.mayReplicate(s)) {
			return false
		}
	}
	return s.postpone(c)
}

// mayReplicate reports whether a command may change the data set or
// propagate, as Redis derives it for the pause: a script command's from the
// flags its script declares (a script without any may write).
func mayReplicate(s *Server, cmd *Command, args [][]byte) bool {
	flags, declared := s.declaredFlags(cmd, args)
	if declared {
		return flags&scripting.FlagNoWrites == 0
	}
	return cmd.Flags&(cmdspec.FlagWrite|cmdspec.FlagMayReplicate) != 0
}

// mayReplicate reports whether a queued command may write, which makes the
// EXEC wait for a WRITE pause to end.
func (t *transaction) mayReplicate(s *Server) bool {
	for _, q := range t.cmds {
		if mayReplicate(s, q.cmd, q.args) {
			return true
		}
	}
	return false
}

// pauseRunning reports whether a pause is on at nowMs, ending it when its
// time has come (the timer may not have fired yet).
func (s *Server) pauseRunning(nowMs int64) bool {
	p := &s.pause
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.kind.Load() != pauseOff && nowMs > p.endMs {
		s.endPauseLocked()
	}
	return p.kind.Load() != pauseOff
}

// paused reports whether a pause keeps the data set still (no expiry, no
// eviction).
func (s *Server) paused() bool {
	return s.pause.kind.Load() != pauseOff && s.pauseRunning(time.Now().UnixMilli())
}

// pauseClients starts a pause of kind until endMs, or extends the one
// running: as Redis, the more restrictive kind and the later end win.
func (s *Server) pauseClients(kind int32, endMs int64) {
	p := &s.pause
	p.mu.Lock()
	defer p.mu.Unlock()
	if old := p.kind.Load(); old != pauseOff {
		kind = max(kind, old)
		endMs = max(endMs, p.endMs)
	}
	if endMs < time.Now().UnixMilli() {
		return // already over (a timeout of 0)
	}
	p.kind.Store(kind)
	s.ks.Still.Store(true)
	p.endMs = endMs
	if p.timer != nil {
		p.timer.Stop()
	}
	p.timer = time.AfterFunc(time.Until(time.UnixMilli(endMs+1)), func() { s.pauseRunning(time.Now().UnixMilli()) })
}

// unpauseClients ends the pause.
func (s *Server) unpauseClients() {
	p := &s.pause
	p.mu.Lock()
	s.endPauseLocked()
	p.mu.Unlock()
}

// endPauseLocked ends the pause and lets the postponed clients run again, in
// order. Needs mu.
func (s *Server) endPauseLocked() {
	p := &s.pause
	s.ks.Still.Store(false)
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	p.kind.Store(pauseOff)
	if len(p.queue) == 0 {
		return
	}
	idle := len(p.releasing) == 0
	p.releasing = append(p.releasing, p.queue...)
	p.queue = nil
	if idle {
		close(p.releasing[0].resume)
	}
}

// postpone queues c, whose command the pause covers, unless the pause
// ended meanwhile (checked under mu, so that an unpause cannot miss it).
func (s *Server) postpone(c *Client) bool {
	p := &s.pause
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.kind.Load() != pauseOff && time.Now().UnixMilli() > p.endMs {
		s.endPauseLocked()
	}
	if p.kind.Load() == pauseOff {
		return false
	}
	w := &postponed{resume: make(chan struct{})}
	p.queue = append(p.queue, w)
	c.postponed = w
	c.paused.Store(true)
	return true
}

// ranAfterPause hands the turn to the next client the last unpause
// released, once the one whose turn it was has run its command (or was
// postponed again, or blocked).
func (p *pauseState) ranAfterPause() {
	p.mu.Lock()
	p.releasing = p.releasing[1:]
	if len(p.releasing) > 0 {
		close(p.releasing[0].resume)
	} else {
		p.releasing = nil
	}
	p.mu.Unlock()
}

// giveUp takes w off the queues when its client goes before its turn. It
// reports whether the turn was w's already (the caller passes it on).
func (p *pauseState) giveUp(w *postponed) (hadTurn bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.releasing) > 0 && p.releasing[0] == w {
		return true
	}
	for _, q := range []*[]*postponed{&p.queue, &p.releasing} {
		if i := slices.Index(*q, w); i >= 0 {
			*q = slices.Delete(*q, i, i+1)
		}
	}
	close(w.resume)
	return false
}

// waiting is the number of postponed clients, for INFO's blocked_clients.
func (p *pauseState) waiting() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return int64(len(p.queue) + len(p.releasing))
}

// waitPaused parks c, whose command was postponed, until its turn comes,
// having sent the replies of the commands before it. It reports false when
// the connection or the server ended meanwhile: the command is dropped.
func (c *Client) waitPaused() bool {
	w := c.postponed
	c.postponed = nil
	p := &c.s.pause
	gone, passTurn := false, false
	giveUp := func() { gone, passTurn = true, p.giveUp(w) }
	alive := c.flush()
	if alive {
		alive = c.park(w.resume, nil, nil, giveUp)
	}
	if !alive && !gone {
		giveUp()
	}
	if passTurn {
		p.ranAfterPause()
	}
	c.paused.Store(false)
	return alive
}

// resumePaused waits for the pause that postponed c's command to end and
// runs the command again, with all its checks, as Redis does (a new pause
// may postpone it again). It reports false when the connection or the
// server ended meanwhile: the command is dropped.
func (c *Client) resumePaused() bool {
	args := c.parser.Args // still in the read buffer: nothing was parsed since
	for c.postponed != nil {
		if !c.waitPaused() {
			return false
		}
		c.startBatch()
		c.ctx.Now = c.commandTime()
		mark := len(c.out.B)
		c.dispatch(args, fromClient)
		c.s.pause.ranAfterPause()
		if c.postponed == nil {
			c.applyReplyMode(mark)
			c.appendOwnMessages()
		}
	}
	return true
}

// clientPause is CLIENT PAUSE timeout [WRITE|ALL].
func clientPause(x *Ctx) {
	kind := pauseAll
	switch {
	case len(x.Args) > 4:
		x.W.Error("ERR unknown subcommand or wrong number of arguments for '" + cstr.String(x.Args[1]) + "'. Try CLIENT HELP.")
		return
	case len(x.Args) == 4 && cstr.ArgIs(x.Args[3], "write"):
		kind = pauseWrite
	case len(x.Args) == 4 && !cstr.ArgIs(x.Args[3], "all"):
		x.W.Error("ERR CLIENT PAUSE mode must be WRITE or ALL")
		return
	}
	ms, ok := strnum.ParseInt(x.Args[2])
	switch {
	case !ok:
		x.W.Error("ERR timeout is not an integer or out of range")
		return
	case ms < 0:
		x.W.Error("ERR timeout is negative")
		return
	}
	end := int64(0)
	if ms > 0 {
		end = time.Now().UnixMilli() + min(ms, 1<<62)
	}
	x.s.pauseClients(kind, end)
	x.W.OK()
}
