package server

import (
	"github.com/keyhive/keyhive/changes"
	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/scripting"
)

// OnPropagate registers fn to receive every change to the data set in order,
// as a subscriber of the change stream (package changes). argv is valid
// only during the call and must not be modified. fn runs with the changed
// keys locked and must not call into the server.
func (s *Server) OnPropagate(fn func(db int, argv [][]byte)) {
	s.stream.Subscribe(changes.SubscriberFunc(fn))
}

// Handlers say what they propagate through package command's verbs, as
// Redis's rewriteClientCommandVector, alsoPropagate and
// forceCommandPropagation: PropagateAs replaces x.Args with the command to
// propagate, PropagateNone with nothing, AlsoPropagate adds the commands to
// propagate instead, PropagateToReplicas sends a command that changed
// nothing to replicas (propagateCallToReplicas). Handlers know only these
// four verbs. call hands the client's own arguments to
// propagateCall, which collects what the handler left when it made changes
// (x.Dirty > 0) and then restores x.Args; the outermost call of an
// execution publishes what it collected (execution, in dispatch.go).
//
// Building a replacement allocates, so handlers build it only when
// Propagating reports a consumer: without an AOF or a replica, a write
// allocates nothing for propagation.

// Arguments of rewritten commands. Shared: consumers must not modify argv.
var (
	argDEL       = []byte("DEL")
	argUNLINK    = []byte("UNLINK")
	argPEXPIREAT = []byte("PEXPIREAT")
)

// propagateDel makes the command propagate as the deletion of key: UNLINK when
// Redis would have freed it lazily (lazy is the lazyfree-lazy-* option that
// applies), DEL otherwise.
func (x *Ctx) propagateDel(key []byte, lazy bool) {
	if lazy {
		x.PropagateAs(argUNLINK, key)
	} else {
		x.PropagateAs(argDEL, key)
	}
}

// intArg formats v as a command argument. It allocates: call it only when
// propagating.
func intArg(v int64) []byte { return command.IntArg(v) }

// propagateCall adds what the command that just ran and changed the data
// set propagates to its execution's pending unit: the commands it also
// propagated, or itself as its handler rewrote it or as args, for the
// targets the running script's redis.set_repl left (all outside scripts);
// then it puts args back in x.Args. args must be the client's own arguments (not x.Args,
// which the handler may have replaced). The command propagates in x.DB's
// database: after SWAPDB that is still the client's database number. call
// calls it after the handler, with the keys still locked, when x.Dirty > 0.
func (x *Ctx) propagateCall(args [][]byte) {
	argv, also := x.Args, x.Also()
	x.Args = args
	x.ResetAlso()
	if !x.Propagating() {
		return
	}
	to := changes.Everyone
	if x.c == x.s.scriptClient {
		switch x.s.scriptHost.repl {
		case scripting.ReplNone:
			return
		case scripting.ReplAOF:
			to = changes.AOFOnly
		case scripting.ReplReplica:
			to = changes.ReplicasOnly
		}
	}
	e := x.c.execution()
	db := x.DB.ID()
	if len(also) > 0 {
		for _, op := range also {
			e.pending = append(e.pending, propagated{DB: db, Argv: op, To: to})
		}
		return
	}
	if len(argv) > 0 {
		e.pending = append(e.pending, propagated{DB: db, Argv: argv, To: to})
	}
}

// propagateCallToReplicas adds the command that just ran, changing nothing,
// to its execution's pending unit for replicas only (PropagateToReplicas),
// as the client sent it (args). Only a server that feeds replicas does: a
// master with a backlog, as Redis propagates to replicas only then; a
// replica forwards its master's stream instead.
func (x *Ctx) propagateCallToReplicas(args [][]byte) {
	if !x.s.stream.FeedsReplicas() || x.s.IsReplica() {
		return
	}
	e := x.c.execution()
	e.pending = append(e.pending, propagated{DB: x.DB.ID(), Argv: args, To: changes.ReplicasOnly})
}

// propagateEffect propagates argv, a change the running command made
// besides its own (an expired field's HDEL, a namespace's TTL). Inside
// EXEC or a script it joins their unit, copied since it must outlive the
// command, as in Redis; otherwise what the command propagated so far goes
// first and argv follows on its own, at once.
func (x *Ctx) propagateEffect(argv ...[]byte) {
	if !x.Propagating() {
		return
	}
	e := x.c.execution()
	if e.depth > 1 {
		e.pending = append(e.pending, propagated{DB: x.DB.ID(), Argv: cloneArgs(argv)})
		return
	}
	e.propagatePending(&x.s.stream)
	x.s.stream.Publish(x.DB.ID(), argv)
}

// propagated is one command of the unit an execution propagates.
type propagated = changes.Op

// propagatePending publishes what the execution's calls propagated as one
// unit: a single command as it is, several wrapped in MULTI/EXEC.
func (e *execution) propagatePending(stream *changes.Stream) {
	if len(e.pending) == 0 {
		return
	}
	stream.PublishBlock(e.pending)
	clear(e.pending)
	e.pending = e.pending[:0]
}

// propagateExpired propagates the removal of an expired key as Redis does: DEL,
// or UNLINK under lazyfree-lazy-expire.
func (s *Server) propagateExpired(db int, key []byte) {
	if !s.stream.Active() {
		return
	}
	verb := argDEL
	if s.cfg.LazyFreeLazyExpire() {
		verb = argUNLINK
	}
	s.stream.Publish(db, [][]byte{verb, key})
}
