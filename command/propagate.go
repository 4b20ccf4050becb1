package command

// A write command propagates as the client sent it unless its handler says
// otherwise, as Redis's rewriteClientCommandVector does: the handler replaces
// x.Args with the command to propagate (PropagateAs), or with nothing
// (PropagateNone), or lists commands to propagate instead of itself
// (AlsoPropagate). The dispatcher propagates what the handler left when it
// made changes (x.Dirty > 0) and then restores x.Args. A command that
// changes nothing may still go to replicas (PropagateToReplicas).
//
// Building a replacement allocates, so handlers build it only when
// Propagating reports a consumer: without an AOF or a replica, a write
// allocates nothing for propagation.

// Propagating reports whether anything consumes the propagated commands.
func (x *Ctx) Propagating() bool { return x.host.Propagating() }

// PropagateAs makes the command propagate as argv instead of as the client
// sent it. Like Redis's argv rewrite it replaces x.Args, so a handler calls
// it after its last use of x.Args. argv's elements must stay valid until the
// command returns (the client's arguments and constant arguments do).
// Without a consumer it does nothing.
func (x *Ctx) PropagateAs(argv ...[]byte) {
	if x.Propagating() {
		x.Args = append([][]byte(nil), argv...)
	}
}

// PropagateNone makes a command that changed the data set propagate nothing
// (x.Dirty still counts its changes).
func (x *Ctx) PropagateNone() { x.Args = x.Args[:0] }

// AlsoPropagate adds argv to what the command propagates instead of itself,
// as Redis's alsoPropagate (XREADGROUP and XCLAIM propagate an XCLAIM per
// entry); the handler also calls PropagateNone. argv is copied (not its
// elements). Without a consumer it does nothing.
func (x *Ctx) AlsoPropagate(argv ...[]byte) {
	if x.Propagating() {
		x.also = append(x.also, append([][]byte(nil), argv...))
	}
}

// PropagateToReplicas makes a command that changed nothing propagate as it
// is to replicas, not to the AOF, as Redis's forceCommandPropagation with
// PROPAGATE_REPL: PUBLISH, whose message then reaches the subscribers on
// replicas. Inside a transaction or a script it joins their block.
func (x *Ctx) PropagateToReplicas() { x.toReplicas = true }

// TakeToReplicas reports whether the handler called PropagateToReplicas,
// and clears it: the dispatcher takes it as each handler returns, so that
// a command run nested in EXEC does not pass it on to the EXEC.
func (x *Ctx) TakeToReplicas() bool {
	r := x.toReplicas
	x.toReplicas = false
	return r
}

// Also is what AlsoPropagate collected, for the dispatcher.
func (x *Ctx) Also() [][][]byte { return x.also }

// ResetAlso empties what AlsoPropagate collected, once the dispatcher
// propagated it.
func (x *Ctx) ResetAlso() { x.also = x.also[:0] }
