package server

import (
	"strings"
	"time"

	"github.com/keyhive/keyhive/cmdspec"
	"github.com/keyhive/keyhive/keyspace"
)

// The one dispatch path. Every command, whoever sends it, runs through
// dispatch: a connection's command, a command EXEC runs from its queue, a
// script's redis.call, a command read back from the AOF, a command of a
// master's stream on a replica. dispatch resolves the command (subcommand
// included) and its arity once, applies the checks the caller's kind
// requires, and call runs the handler and does what follows every
// command: propagation, the clients blocked on what it wrote, tracking,
// MONITOR, command statistics and the slow log. EXEC's commands and a
// script's run in calls nested in the EXEC's or the script's (execution).
// Anything that must happen for every command (a cluster redirect, a
// namespace quota) is added here, once.

// caller is who runs a command through dispatch: it decides which checks
// apply, which error texts a refusal uses, and what holds the locks.
type caller uint8

const (
	// fromClient: a connection's command. Every check applies; inside
	// MULTI it is queued; call takes its keys' locks.
	fromClient caller = iota
	// fromExec: a command MULTI queued, run by EXEC in a nested call (the
	// EXEC holds the locks). Only the ACL is checked again (the rules may
	// have changed).
	fromExec
	// fromScript: a script's redis.call, run by the server's script
	// client in a call nested in the EVAL's or FCALL's (which holds the
	// exclusive lock), with Redis's checks and texts for scripts.
	fromScript
	// fromLoader: a command that already ran elsewhere (the AOF), replayed
	// as written by a client that obeys (Client.obeys) under the
	// exclusive lock or alone at start-up: no checks, no statistics, no
	// propagation.
	fromLoader
	// fromMaster: a command of the master's replication stream, run by
	// a replica as its master's client (Client.obeys): as a client's,
	// under its keys' locks, queued inside MULTI, propagated (to the
	// AOF) and counted, but without a client's checks.
	fromMaster
)

// resolution is what resolve found wrong with a command's name or arity.
type resolution uint8

const (
	resolved resolution = iota
	unknownCommand
	unknownSubcommand
	wrongArity
)

// resolve finds the command args names, descending into its subcommand, and
// checks its arity. The command is returned with wrongArity (for the error
// text) and, as the container, with unknownSubcommand.
func (c *Client) resolve(args [][]byte) (*Command, resolution) {
	cmd := c.command(args[0])
	if cmd == nil {
		return nil, unknownCommand
	}
	if cmd.Sub != nil && len(args) >= 2 {
		sub := lookupCommand(cmd.Sub, args[1])
		if sub == nil {
			return cmd, unknownSubcommand
		}
		cmd = sub
	}
	if !cmd.hasArity(len(args)) {
		return cmd, wrongArity
	}
	return cmd, resolved
}

// dispatch runs one command for c, sent by from. Its reply goes to c.ctx.W.
// It reports whether the command was run or queued (false: it was refused
// with an error reply, or, from the loader, not found).
func (c *Client) dispatch(args [][]byte, from caller) bool {
	cmd, res := c.resolve(args)
	if res != resolved {
		c.refuseUnresolved(cmd, res, args, from)
		return false
	}
	switch from {
	case fromClient, fromMaster:
		if from == fromClient && !c.admit(cmd, args) {
			return false
		}
		if c.multi != nil && !runsInMulti(cmd) {
			if cmd.Flags&cmdspec.FlagNoMulti != 0 {
				c.reject(cmd, "ERR Command not allowed inside a transaction")
				return false
			}
			c.queue(cmd, args)
			return true
		}
		c.lastCmd.Store(cmd)
	case fromExec:
		if c.ctx.execDenied(cmd, args) {
			return false
		}
	case fromScript:
		if !c.s.scriptHost.admit(cmd, args) {
			return false
		}
	}
	c.call(cmd, args, from)
	return true
}

// refuseUnresolved replies to a command that could not be resolved, with
// the text the caller's kind gets in Redis.
func (c *Client) refuseUnresolved(cmd *Command, res resolution, args [][]byte, from caller) {
	switch from {
	case fromScript:
		if res == wrongArity {
			c.s.scriptHost.reject(cmd, "ERR Wrong number of args calling Redis command from script")
			return
		}
		c.ctx.W.Error("ERR Unknown Redis command called from script")
	case fromLoader:
		c.ctx.W.Error("ERR unknown command or wrong number of arguments")
	default:
		switch res {
		case unknownCommand:
			c.reject(nil, errUnknownCommand(args))
		case unknownSubcommand:
			// Redis counts this under no command (the container never runs).
			c.reject(nil, errUnknownSubcommand(cmd.Name, args[1]))
		default:
			c.reject(cmd, errArity(cmd.Name))
		}
	}
}

// admit applies a connection's checks, in Redis's order, replying the
// refusal.
func (c *Client) admit(cmd *Command, args [][]byte) bool {
	s := c.s
	if c.out.Proto == 2 && c.ps.subscribed() && !allowedSubscribed(cmd) {
		c.reject(cmd, errSubscribedMode(cmd))
		return false
	}
	if c.authRequired() && cmd.Flags&cmdspec.FlagNoAuth == 0 {
		c.reject(cmd, errNoAuth)
		return false
	}
	if p := c.user.Load().Perms(); !p.Unrestricted() && !c.aclAllowed(p, cmd, args) {
		return false
	}
	if s.cluster != nil && !c.routed(cmd, args) {
		return false
	}
	if cmd.Flags&cmdspec.FlagAllowBusy == 0 {
		if busy, function := s.scriptBusy(); busy {
			c.reject(cmd, errBusy(function))
			return false
		}
	}
	if deniedByDiskError(cmd) {
		if msg := s.diskError(); msg != "" {
			c.reject(cmd, msg)
			return false
		}
	}
	if s.evict.limit.Load() != 0 && c.outOfMemory(cmd, args, c.mono, c.ctx.Now) {
		c.reject(cmd, errOOM)
		return false
	}
	if s.IsReplica() || s.cfg.MinReplicasToWrite() > 0 {
		if msg := c.replicationRefusal(cmd); msg != "" {
			c.reject(cmd, msg)
			return false
		}
	}
	if c.monitor.Load() && cmd.Flags&(cmdspec.FlagReadonly|cmdspec.FlagWrite|cmdspec.FlagMayReplicate) != 0 {
		c.reject(cmd, "ERR Replica can't interact with the keyspace")
		return false
	}
	if s.pause.kind.Load() != pauseOff && s.pauses(c, cmd, args) {
		c.lastCmd.Store(cmd) // run waits for the pause to end, then dispatches it again
		return false
	}
	return true
}

// execution is what a client's command shares with the calls nested in it,
// as Redis's execution nesting: the commands EXEC runs from its queue and a
// script's redis.call run nested in the EXEC or EVAL that started them
// (the script client's calls in the execution of the client running the
// script). Only call opens and closes a level; handlers never see it.
type execution struct {
	depth int // calls running: 1 for a command, more inside EXEC or a script
	// pending is what the calls propagated, published as one unit when the
	// outermost call ends (propagatePending).
	pending []propagated
	compat  compatCheck // the cluster compatibility check of its command (clustercompat.go)
}

// execution returns the execution c's commands run in.
func (c *Client) execution() *execution {
	if c == c.s.scriptClient {
		return &c.s.scriptHost.x.c.nesting
	}
	return &c.nesting
}

// call runs a resolved and admitted command. The outermost call of an
// execution takes the command's keys' locks and, once the command and
// those nested in it ran, publishes what they propagated, then unlocks and
// serves the clients blocked on what they wrote. Every call feeds MONITOR
// and counts the command; a loaded command only runs.
func (c *Client) call(cmd *Command, args [][]byte, from caller) {
	s := c.s
	x := &c.ctx
	e := c.execution()
	e.depth++
	outermost := e.depth == 1
	// The loader holds the exclusive lock or runs alone; a command with no
	// keyspace takes none (SCRIPT KILL while a script holds them all).
	locked := outermost && from != fromLoader && cmd.Flags&cmdspec.FlagNoKeyspace == 0
	x.setCommand(cmd)
	x.Args, x.Dirty, x.scriptErrorCounted = args, 0, false
	// Inside EXEC or a script, or replaying what ran elsewhere, a blocking
	// command replies as on timeout.
	x.cannotBlock = !outermost || c.obeys
	start := c.mono
	if from != fromClient {
		start = monoNow()
	}
	mark := len(x.W.B)
	var db *keyspace.DB
	var keys [][]byte // the command's keys, when it names them
	if locked {
		db, keys = c.lock(cmd, args)
		x.DB = db
	} else {
		x.DB = s.ks.DB(int(c.db.Load())) // a SELECT before switched
	}
	schema := s.schema.Load()
	if c.obeys {
		schema = nil // it ran under the schema where it came from: the stream carries its effects
	}
	if schema != nil && schema.Guarded() && cmd.Flags&cmdspec.FlagWrite != 0 {
		if msg := x.schemaRefusal(schema, cmd, args); msg != "" {
			x.W.Error(msg)
			s.cmdStats[cmd.id].rejected.Add(1)
			if locked {
				s.ks.Unlock(db, &x.Locks)
			}
			e.depth--
			return
		}
	}
	pendingMark := len(e.pending)
	slot, bytesIn := -1, 0 // the command's slot and request bytes, for CLUSTER SLOT-STATS
	if outermost {
		e.compat = compatCheck{}
		if from == fromClient {
			stats, compat := s.slotStats.On(), s.compat.ratio.Load() > 0
			if stats || compat {
				named := c.namedKeys(cmd, args, keys)
				if stats {
					slot, bytesIn = c.commandSlot(cmd, args, named)
				}
				if compat {
					c.checkCompat(cmd, args, named)
				}
			}
		}
	}
	cmd.Run(x)
	toReplicas := x.TakeToReplicas()
	if from == fromLoader {
		e.depth--
		return
	}
	by := c // the client whose command this is, for tracking and MONITOR
	switch from {
	case fromScript:
		h := &s.scriptHost
		by = h.x.c
		s.trackInner(by, cmd, h.x.cmd, h.x.Args) // Redis 7.0 remembers the script's declared keys
		if x.Dirty > 0 {
			h.dirty += x.Dirty
			h.wrote.Store(true)
		}
	case fromExec:
		s.trackInner(c, cmd, cmd, args)
		c.confirming = false // CLIENT REPLY applies to the EXEC as a whole
	}
	if x.Dirty > 0 {
		if outermost {
			c.wrote = true
			s.stats.dirty.Add(int64(x.Dirty))
		}
		if s.isClosed() && cmd.spec.Runs != cmdspec.RunsNothing && s.scripts.WasKilled() {
			// Shutdown stopped the script (SHUTDOWN NOSAVE during a busy
			// script, or Close): as in Redis, which exits without
			// returning to it, none of its writes reach the AOF or a
			// replica.
			clear(e.pending[pendingMark:])
			e.pending = e.pending[:pendingMark]
		}
		x.propagateCall(args)
		if schema != nil && schema.TTLRules() {
			x.applyTTLRules(schema, cmd, args)
		}
	} else if toReplicas {
		x.propagateCallToReplicas(args)
	}
	if outermost {
		e.propagatePending(&s.stream)
	}
	serveLater := false
	if locked && x.Dirty > 0 && s.blocking.waiting.Load() > 0 {
		serveLater = s.serveBlocked(x)
	}
	if locked && s.tracking.clients.Load() > 0 {
		s.trackAfter(c, cmd)
	}
	if s.monitors.count.Load() > 0 {
		s.feedMonitors(c, by, cmd, args)
	}
	// A write's reply waits for the replicas (min-replicas-to-ack): taken
	// back before it can be queued, the client blocked once it is counted.
	var held *unacked
	if outermost && from == fromClient && x.Dirty > 0 && c.blocked == nil {
		held = c.takeUnacked(x, mark)
	}
	reply := x.W.B[mark:]
	if held != nil {
		reply = held.reply
	}
	if locked {
		if c.ps.queued && c.reply == replyOn {
			// Queued before the keys are unlocked, so an invalidation of a
			// key this command read cannot overtake its reply.
			c.queueReplies()
		}
		s.ks.Unlock(db, &x.Locks)
	}
	e.depth--
	if locked && schema != nil && x.Dirty > 0 && schema.AnyOver() {
		s.enforceQuotas(schema, c)
	}
	if serveLater {
		s.serveBlockedExclusive(x.Now)
	}
	c.mono = monoNow()
	s.recordCall(c, cmd, args, c.mono-start, x.Now, reply)
	if slot >= 0 {
		s.slotStats.Record(slot, c.mono-start, bytesIn, len(reply))
	}
	if locked && s.hotkeys.active.Load() {
		s.hotkeyRecord(keys, args, c.mono-start, len(reply), x.Now)
	}
	if locked && x.Dirty > 0 && s.blocking.unlogged.Load() > 0 {
		s.logServed(x.Now)
	}
	if held != nil {
		c.awaitAcks(x, held)
	}
}

// lock takes the locks cmd needs (EXEC's: its queue's and watched keys'),
// returning the database and the keys the command names, if it names them.
func (c *Client) lock(cmd *Command, args [][]byte) (*keyspace.DB, [][]byte) {
	x := &c.ctx
	x.Locks.Reset()
	keys := x.keyBuf[:0]
	switch {
	case cmd == cmdExec:
		c.multi.lockSet(x, c)
	case cmd.Flags&cmdspec.FlagAllKeys != 0:
		x.Locks.All()
	default:
		var all bool
		if x.keyBuf, all = cmd.keyArgs(args, x.keyBuf[:0]); all {
			x.Locks.All()
			break
		}
		for _, k := range x.keyBuf {
			x.Locks.Add(k)
		}
		keys = x.keyBuf
	}
	return c.s.ks.Lock(int(c.db.Load()), &x.Locks), keys
}

// recordCall counts a command that ran, for elapsed nanoseconds at nowMs
// with reply, in INFO commandstats and latencystats, the latency monitor,
// and the slow log unless it blocked (it has not run yet). Its error
// replies were counted as they were written.
func (s *Server) recordCall(c *Client, cmd *Command, args [][]byte, elapsed, nowMs int64, reply []byte) {
	st := &s.cmdStats[cmd.id]
	st.calls.Add(1)
	st.usec.Add(elapsed / int64(time.Microsecond))
	if len(reply) > 0 && reply[0] == '-' {
		st.failed.Add(1)
		if cmd.spec.Runs != cmdspec.RunsNothing && c.ctx.scriptErrorCounted {
			s.stats.errors.uncount(errorText(reply))
		}
	}
	s.commandRan(cmd, elapsed, c.blocked != nil)
	if c.blocked == nil {
		s.logIfSlow(c, cmd, args, elapsed, nowMs)
	} else {
		c.blocked.ran.Store(elapsed) // logged when the wait ends
	}
}

// reject refuses a connection's command before it runs; inside MULTI that
// makes EXEC fail. A refused EXEC discards the transaction, with the reason
// after EXECABORT, as Redis's execCommandAbort does (Redis's formatted
// reasons carry no "ERR ").
func (c *Client) reject(cmd *Command, msg string) {
	if cmd != nil {
		c.s.cmdStats[cmd.id].rejected.Add(1)
	}
	if cmd == cmdExec {
		c.setMulti(nil)
		c.s.watches.unwatchAll(c)
		c.out.Error("EXECABORT Transaction discarded because of: " + strings.TrimPrefix(msg, "ERR "))
		return
	}
	if c.multi != nil {
		c.multi.aborted = true
	}
	c.out.Error(msg)
}

// commandTime is the time of the command about to run on the connection:
// one clock read per batch, advanced by the monotonic clock (the manual
// clock of tests and embedders is read as it is).
func (c *Client) commandTime() int64 {
	if !c.s.wallClock {
		return c.s.clock.UnixMilli()
	}
	return c.batchWall + (c.mono-c.batchMono)/int64(time.Millisecond)
}
