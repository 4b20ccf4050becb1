// Package replication holds the parts of Redis's replication protocol that
// need no server: the backlog, the replication IDs and offsets, and the
// replica's reader of what a master sends. The server (server/replication*.go)
// wires them to connections, the change stream and the keyspace.
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
