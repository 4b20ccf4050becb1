package server

import (
	"github.com/keyhive/keyhive/changes"
	"github.com/keyhive/keyhive/command"
)

// OnPropagate registers fn to receive every change to the data set in order,
// as a subscriber of the change stream (package changes). argv is valid
// only during the call and must not be modified. fn runs with the changed
// keys locked and must not call into the server.
func (s *Server) OnPropagate(fn func(db int, argv [][]byte)) {
	s.stream.Subscribe(changes.SubscriberFunc(fn))
}

// Handlers say what they propagate through package command's verbs
// (PropagateAs, PropagateNone, AlsoPropagate); execute hands the client's
// own arguments to publish, which propagates what the handler left when it
// made changes (x.Dirty > 0) and then restores x.Args.

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

// publish propagates the command that just ran and changed the data set: as
// its handler rewrote it, or as args, and puts args back in x.Args. args must
// be the client's own arguments (not x.Args, which the handler may have
// replaced). The command propagates in x.DB's database: after SWAPDB that is
// still the client's database number. execute calls publish after the handler,
// with the keys still locked, when x.Dirty > 0.
func (x *Ctx) publish(args [][]byte) {
	argv := x.Args
	x.Args = args
	if len(x.Also()) > 0 {
		x.publishAlso()
		return
	}
	switch {
	case len(argv) == 0:
	case x.inExec:
		if x.Propagating() {
			x.execProp = append(x.execProp, propagated{DB: x.DB.ID(), Argv: argv})
		}
	default:
		x.s.stream.Publish(x.DB.ID(), argv)
	}
}

// publishAlso propagates what AlsoPropagate collected as one block, through
// the collection EXEC and scripts use (empty outside them), or into that
// collection inside EXEC or a script.
func (x *Ctx) publishAlso() {
	db := x.DB.ID()
	for _, op := range x.Also() {
		x.execProp = append(x.execProp, propagated{DB: db, Argv: op})
	}
	x.ResetAlso()
	if !x.inExec {
		x.flushExecPropagation()
	}
}

// propagated is one command of the block an EXEC or a script propagates.
type propagated = changes.Op

// flushExecPropagation propagates what EXEC's commands (or a script's) did,
// as one block.
func (x *Ctx) flushExecPropagation() {
	x.s.stream.PublishBlock(x.execProp)
	clear(x.execProp)
	x.execProp = x.execProp[:0]
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
