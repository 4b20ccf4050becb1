package server

import (
	"strconv"

	"github.com/keyhive/keyhive/changes"
)

// OnPropagate registers fn to receive every change to the data set in order,
// as a subscriber of the change stream (package changes). argv is valid
// only during the call and must not be modified. fn runs with the changed
// keys locked and must not call into the server.
func (s *Server) OnPropagate(fn func(db int, argv [][]byte)) {
	s.stream.Subscribe(changes.SubscriberFunc(fn))
}

// A write command propagates as the client sent it unless its handler says
// otherwise, as Redis's rewriteClientCommandVector does: the handler replaces
// x.Args with the command to propagate (propagateAs), or with nothing
// (propagateNone), and execute hands the client's own arguments to publish,
// which propagates x.Args when the handler made changes (x.dirty > 0) and then
// restores them.
//
// Building a replacement allocates, so handlers build it only when propagating
// reports a consumer: without an AOF or a replica, a write allocates nothing
// for propagation.

// Arguments of rewritten commands. Shared: consumers must not modify argv.
var (
	argDEL       = []byte("DEL")
	argUNLINK    = []byte("UNLINK")
	argSET       = []byte("SET")
	argPXAT      = []byte("PXAT")
	argKEEPTTL   = []byte("KEEPTTL")
	argPEXPIREAT = []byte("PEXPIREAT")
	argPERSIST   = []byte("PERSIST")
)

// propagating reports whether anything consumes the propagated commands.
func (x *Ctx) propagating() bool { return x.s.stream.Active() }

// propagateAs makes the command propagate as argv instead of as the client
// sent it. Like Redis's argv rewrite it replaces x.Args, so a handler calls it
// after its last use of x.Args. argv's elements must stay valid until the
// command returns (the client's arguments and the arg* values do). Without a
// consumer it does nothing.
func (x *Ctx) propagateAs(argv ...[]byte) {
	if x.propagating() {
		x.Args = append([][]byte(nil), argv...)
	}
}

// propagateNone makes a command that changed the data set propagate nothing
// (x.dirty still counts its changes).
func (x *Ctx) propagateNone() { x.Args = x.Args[:0] }

// propagateDel makes the command propagate as the deletion of key: UNLINK when
// Redis would have freed it lazily (lazy is the lazyfree-lazy-* option that
// applies), DEL otherwise.
func (x *Ctx) propagateDel(key []byte, lazy bool) {
	if lazy {
		x.propagateAs(argUNLINK, key)
	} else {
		x.propagateAs(argDEL, key)
	}
}

// intArg formats v as a command argument. It allocates: call it only when
// propagating.
func intArg(v int64) []byte { return strconv.AppendInt(nil, v, 10) }

// publish propagates the command that just ran and changed the data set: as
// its handler rewrote it, or as args, and puts args back in x.Args. args must
// be the client's own arguments (not x.Args, which the handler may have
// replaced). The command propagates in x.DB's database: after SWAPDB that is
// still the client's database number. execute calls publish after the handler,
// with the keys still locked, when x.dirty > 0.
func (x *Ctx) publish(args [][]byte) {
	argv := x.Args
	x.Args = args
	if len(x.also) > 0 {
		x.publishAlso()
		return
	}
	switch {
	case len(argv) == 0:
	case x.inExec:
		if x.propagating() {
			x.execProp = append(x.execProp, propagated{DB: x.DB.ID(), Argv: argv})
		}
	default:
		x.s.stream.Publish(x.DB.ID(), argv)
	}
}

// alsoPropagate adds argv to what the command propagates instead of itself,
// as Redis's alsoPropagate (XREADGROUP and XCLAIM propagate an XCLAIM per
// entry); the handler also calls propagateNone. argv is copied (not its
// elements). Without a consumer it does nothing.
func (x *Ctx) alsoPropagate(argv ...[]byte) {
	if x.propagating() {
		x.also = append(x.also, append([][]byte(nil), argv...))
	}
}

// publishAlso propagates what alsoPropagate collected as one block, through
// the collection EXEC and scripts use (empty outside them), or into that
// collection inside EXEC or a script.
func (x *Ctx) publishAlso() {
	db := x.DB.ID()
	for _, op := range x.also {
		x.execProp = append(x.execProp, propagated{DB: db, Argv: op})
	}
	x.also = x.also[:0]
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
