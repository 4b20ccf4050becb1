// Package replication runs both sides of Redis's replication for a server:
// the backlog and the feed that writes the change stream into it, serving
// replicas (SYNC, PSYNC, REPLCONF, snapshot transfers), the replica's link
// to its master and its apply loop, FAILOVER, the acknowledgements WAIT
// and WAITAOF count, and what INFO replication and ROLE report. Its pure
// parts (Backlog, IDs, the stream reader) need nothing else.
//
// The server is its Host, as it is cluster.Host's. A Manager is built from
// Options (the config, the log, the change stream, the AOF, the lock a
// snapshot's instant takes, the server's done channel and goroutine count)
// and a Host that does what only the server can: take and load snapshots
// of the data set, make the client that runs the master's stream (through
// the server's one dispatch path: replication never runs a command
// itself), switch expiry between a master's and a replica's, pause
// writers, say its port, and wake WAIT's clients when a replica
// acknowledges. The server keeps the glue: the Host, the command bindings
// (each hands its arguments and reply writer to a Manager method), and a
// replica's connection (Conn), which leaves the server's event loop for
// Serve after SYNC or PSYNC. Each client holds a Peer: its part in
// replication, and where its writes ended when its replies last left.
//
// The stream. A master's replication stream is the change stream (package
// changes) written as RESP commands: a SELECT when the database changes, each
// write as it is propagated to the AOF, a PING every repl-ping-replica-period
// seconds and a REPLCONF GETACK when a WAIT needs fresh acknowledgements.
// Every byte of it has an offset: the master's replication offset is the
// number of bytes written to the stream so far, and a replica's is the number
// of bytes it has applied. A replica acknowledges its offset with REPLCONF
// ACK once a second and when asked (GETACK); WAIT counts the replicas whose
// acknowledged offset has reached the client's writes.
//
// The backlog keeps the last repl-backlog-size bytes of the stream (and more
// while a replica still has to be sent them, up to its output buffer limit),
// in fixed blocks reused as the stream advances, so appending a command
// allocates nothing. Every replica reads the stream from the backlog at its
// own position: a replica is a cursor, not a copy of the stream.
//
// Replication IDs. A data set's history is named by a replication ID (40 hex
// characters) and located by an offset in it. A master keeps its ID while it
// runs; a replica takes its master's. When a replica is promoted it gets a
// new ID and keeps the old one as its second ID, valid up to the second
// offset (its offset at promotion + 1), so that its former siblings, which
// ask for the old ID, can continue from its backlog.
//
// The handshake, from the replica: PING; AUTH when masterauth is set;
// REPLCONF listening-port (and ip-address); REPLCONF capa eof capa psync2;
// then PSYNC with the ID and offset+1 of the data it has (the cached master
// after a dropped link) or "? -1". The master answers +CONTINUE [newid]
// when it holds that ID (as its ID, or as its second ID up to the second
// offset) and the offset is in its backlog: the stream goes on from there.
// Otherwise +FULLRESYNC id offset, then its data set as an RDB file,
// either as a bulk of known length ($len, disk-based: written to a file
// first) or, when the replica said capa eof and repl-diskless-sync is on,
// streamed from the point-in-time snapshot between two copies of a random
// 40-byte marker ($EOF:marker ... marker). While the RDB is prepared the
// master sends newlines, which keep the link alive. The stream follows
// from the offset given.
package replication
