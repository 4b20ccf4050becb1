// Package command is the toolkit of a command handler: the Ctx a handler
// receives, and what a handler may do through it.
//
// A handler (func(x *Ctx)) reads its arguments in x.Args, replies through
// x.W exactly once (an aggregate counts as one reply), works on x.DB at
// time x.Now, and counts its changes in x.Dirty. Through x it may:
//   - look keys up (LookupRead, LookupWrite, ReadTyped) and read or edit
//     collections of package values (ReadAs, EditAs, ReadStream, ...);
//   - raise keyspace notifications (Notify, Committed, Stored, Overwrote);
//   - say what the command propagates (PropagateAs, PropagateNone,
//     AlsoPropagate, PropagateToReplicas; Propagating tells whether
//     anybody consumes it);
//   - block on keys (PopOrBlock, Block) with a BlockRequest;
//   - reuse the client's scratch buffers (NextScratch, Collect) and parse
//     SCAN's options (ParseScanOptions);
//   - reach the server's state through its Host and its client's through
//     its Conn, which the server implements: never the server itself.
//
// The dispatcher (package server) fills the fields and reads what the
// handler left (x.Args rewritten by the propagation verbs, Also,
// TakeToReplicas, x.Dirty);
// a handler never sees how commands nest (MULTI, scripts).
package command
