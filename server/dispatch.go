package server

import (
	"strings"
	"time"

	"github.com/keyhive/keyhive/cmdspec"
)

// The one dispatch path. Every command, whoever sends it, runs through
// dispatch: a connection's command, a command EXEC runs from its queue, a
// script's redis.call, a command read back from the AOF, a command of a
// master's stream on a replica. dispatch resolves the command (subcommand
// included) and its arity once, applies the checks the caller's kind
// requires, and call runs the handler and does what follows every
// command: propagation, the clients blocked on what it wrote, tracking,
// MONITOR, command statistics and the slow log. Anything that must happen
// for every command (a cluster redirect, a namespace quota) is added here,
// once.

// caller is who runs a command through dispatch: it decides which checks
// apply, which error texts a refusal uses, and what holds the locks.
type caller uint8

const (
	// fromClient: a connection's command. Every check applies; inside
	// MULTI it is queued; call takes its keys' locks.
	fromClient caller = iota
	// fromExec: a command MULTI queued, run by EXEC, which holds the
	// locks. Only the ACL is checked again (the rules may have changed).
	fromExec
	// fromScript: a script's redis.call, run by the server's script
	// client under the script's exclusive lock, with Redis's checks and
	// texts for scripts.
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
	if s.aof.WriteFailed() && deniedByDiskError(cmd) {
		c.reject(cmd, s.aof.WriteError())
		return false
	}
	if s.evict.limit.Load() != 0 && c.outOfMemory(cmd, args, c.mono, c.ctx.Now) {
		c.reject(cmd, errOOM)
		return false
	}
	if s.IsReplica() || s.cfg.MinReplicasToWrite() > 0 {
		if msg := s.replicationRefusal(cmd); msg != "" {
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

// call runs a resolved and admitted command: under its keys' locks for a
// connection's command (the other callers hold theirs), then propagates
// what it changed, serves the clients blocked on it, feeds MONITOR and
// counts it.
func (c *Client) call(cmd *Command, args [][]byte, from caller) {
	s := c.s
	x := &c.ctx
	x.setCommand(cmd)
	x.Args, x.Dirty, x.scriptErrorCounted = args, 0, false
	start := c.mono
	if from != fromClient {
		start = monoNow()
	}
	mark := len(x.W.B)
	if from != fromClient && from != fromMaster || cmd.Flags&cmdspec.FlagNoKeyspace != 0 {
		// The caller holds the locks (EXEC, a script, the loader), or the
		// command needs none (SCRIPT KILL while a script holds them all).
		x.DB = s.ks.DB(int(c.db.Load())) // a SELECT before switched
		if t := s.schema.Load(); t != nil && t.Guarded() && from != fromLoader && cmd.Flags&cmdspec.FlagWrite != 0 {
			if msg := x.schemaRefusal(t, cmd, args); msg != "" {
				x.W.Error(msg)
				s.cmdStats[cmd.id].rejected.Add(1)
				return
			}
		}
		cmd.Run(x)
		c.ran(cmd, args, from, start, mark)
		return
	}

	x.Locks.Reset()
	keys := x.keyBuf[:0] // the command's keys, when it names them
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
	db := s.ks.Lock(int(c.db.Load()), &x.Locks)
	x.DB = db
	schema := s.schema.Load()
	if from == fromMaster {
		schema = nil // the master enforced its schema: its stream carries the effects
	}
	if schema != nil && schema.Guarded() && cmd.Flags&cmdspec.FlagWrite != 0 {
		if msg := x.schemaRefusal(schema, cmd, args); msg != "" {
			x.W.Error(msg)
			s.cmdStats[cmd.id].rejected.Add(1)
			s.ks.Unlock(db, &x.Locks)
			return
		}
	}
	cmd.Run(x)
	serveLater := false
	if x.Dirty > 0 {
		c.wrote = true
		s.stats.dirty.Add(int64(x.Dirty))
		x.publish(args)
		if schema != nil && schema.TTLRules() {
			x.applyTTLRules(schema, cmd, args)
		}
		if s.blocking.waiting.Load() > 0 {
			serveLater = s.serveBlocked(x)
		}
	}
	if s.tracking.clients.Load() > 0 {
		s.trackAfter(c, cmd)
	}
	if s.monitors.count.Load() > 0 {
		s.feedMonitors(c, c, cmd, args)
	}
	reply := c.out.B[mark:]
	if c.ps.queued && c.reply == replyOn {
		// Queued before the keys are unlocked, so an invalidation of a key
		// this command read cannot overtake its reply.
		c.queueReplies()
	}
	s.ks.Unlock(db, &x.Locks)
	if schema != nil && x.Dirty > 0 && schema.AnyOver() {
		s.enforceQuotas(schema, c)
	}
	if serveLater {
		s.serveBlockedExclusive(x.Now)
	}
	c.mono = monoNow()
	s.recordCall(c, cmd, args, c.mono-start, x.Now, reply)
	if s.hotkeys.active.Load() {
		s.hotkeyRecord(keys, args, c.mono-start, len(reply), x.Now)
	}
	if x.Dirty > 0 && s.blocking.unlogged.Load() > 0 {
		s.logServed(x.Now)
	}
}

// ran finishes a command that ran under its caller's locks: propagation
// into the caller's block (EXEC's or the script's), tracking of what it
// read, MONITOR, statistics. A loaded command has none of these.
func (c *Client) ran(cmd *Command, args [][]byte, from caller, start int64, mark int) {
	s := c.s
	x := &c.ctx
	if from == fromLoader {
		return
	}
	by := c // the client whose command this is, for tracking and MONITOR
	if from == fromScript {
		h := &s.scriptHost
		by = h.x.c
		s.trackInner(by, cmd, h.x.cmd, h.x.Args) // Redis 7.0 remembers the script's declared keys
		if x.Dirty > 0 {
			h.dirty += x.Dirty
			h.wrote.Store(true)
		}
	} else if from == fromExec {
		s.trackInner(c, cmd, cmd, args)
		c.confirming = false // CLIENT REPLY applies to the EXEC as a whole
	}
	if x.Dirty > 0 && from != fromClient {
		x.publish(args)
		if t := s.schema.Load(); t != nil && t.TTLRules() {
			x.applyTTLRules(t, cmd, args)
		}
	}
	if s.monitors.count.Load() > 0 {
		s.feedMonitors(c, by, cmd, args)
	}
	elapsed := monoNow() - start
	if from == fromClient {
		c.mono = start + elapsed
	}
	s.recordCall(c, cmd, args, elapsed, x.Now, x.W.B[mark:])
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
