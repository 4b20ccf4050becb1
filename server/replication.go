package server

import (
	"bytes"
	"io"
	"net"

	"github.com/keyhive/keyhive/cmdspec"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/replication"
)

// Replication's glue: package replication runs both sides of it (the
// backlog and its feed, serving replicas, the link to a master, FAILOVER,
// WAIT's acknowledgements, INFO's figures); the server is its Host, binds
// its commands, and hands it a replica's connection (replicaConn) and the
// client a replica runs its master's stream as (replication_replica.go).

func init() {
	bind("sync", psyncCommand)
	bind("psync", psyncCommand)
	bind("replconf", replconfCommand)
	bind("replicaof", replicaofCommand)
	bind("slaveof", replicaofCommand)
	bind("failover", failoverCommand)
}

// initReplication starts a master's replication with a fresh history.
func (s *Server) initReplication() {
	s.repl = replication.New(replication.Options{
		Config:     s.cfg,
		Log:        s.log,
		Changes:    &s.stream,
		AOF:        s.aof,
		Instant:    &s.snapshotInstant,
		Done:       s.done,
		Goroutines: &s.wg,
	}, replHost{s})
}

// replicationRefusal is why replication refuses a client's command now
// (min-replicas-to-write, a read-only replica, a stale one), or "". An
// EXEC is a write when a command it runs is, as in Redis.
func (c *Client) replicationRefusal(cmd *Command) string {
	write := cmd.Flags&cmdspec.FlagWrite != 0 || cmd == cmdExec && c.multi != nil && c.multi.flags&cmdspec.FlagWrite != 0
	return c.s.repl.Refusal(write, cmd.Flags&cmdspec.FlagStale != 0)
}

func psyncCommand(x *Ctx) { x.s.repl.Psync(x.W, x.Args, &x.c.peer, replicaConn{x.c}) }

func replconfCommand(x *Ctx) { x.s.repl.Replconf(x.W, x.Args, &x.c.peer, replicaConn{x.c}) }

func failoverCommand(x *Ctx) { x.s.repl.Failover(x.W, x.Args) }

func roleCommand(x *Ctx) { x.s.repl.Role(x.W) }

// replicaofCommand is REPLICAOF host port and REPLICAOF NO ONE; a cluster
// node's master is the cluster's choice.
func replicaofCommand(x *Ctx) {
	if x.s.cluster != nil {
		x.W.Error("ERR REPLICAOF not allowed in cluster mode.")
		return
	}
	x.s.repl.ReplicaOf(x.W, x.Args, &x.c.peer, x.c.peerAddr())
}

// replHost is the server as replication's host.
type replHost struct{ s *Server }

func (h replHost) Snapshot(w io.Writer, atStart func() []string, stop <-chan struct{}) error {
	return h.s.saver.Replicate(w, atStart, stop)
}

// LoadSnapshot empties the data set and loads the master's file, under
// the exclusive lock: clients wait meanwhile.
func (h replHost) LoadSnapshot(path string, aux func(name, value []byte)) error {
	s := h.s
	var locks keyspace.LockSet
	locks.All()
	db := s.ks.Lock(0, &locks)
	defer s.ks.Unlock(db, &locks)
	for i := range s.ks.Len() {
		s.ks.DB(i).Flush()
	}
	s.scripts.FlushFunctions()
	return s.saver.LoadFromMaster(path, aux)
}

func (h replHost) MasterClient(conn net.Conn, db int) replication.MasterClient {
	return masterClient{h.s.newMasterClient(conn, db)}
}

// SetReplica also sets the log's role mark, when the logger's sink has one
// (package internal/logging's): Redis marks a replica's lines S, a master's M.
func (h replHost) SetReplica(on bool) {
	h.s.ks.SetReplica(on, nil)
	if on {
		h.s.unblockAllForReplica()
	}
	if l, ok := h.s.log.Writer().(interface{ SetRole(mark byte) }); ok {
		mark := byte('M')
		if on {
			mark = 'S'
		}
		l.SetRole(mark)
	}
}

func (h replHost) PauseWrites(untilMs int64) {
	if untilMs == 0 {
		h.s.unpauseClients()
		return
	}
	h.s.pauseClients(pauseWrite, untilMs)
}

func (h replHost) ListenPort() int { return h.s.listenPort() }

// Acknowledged serves the WAIT and WAITAOF clients a replica's ACK
// satisfied.
func (h replHost) Acknowledged() {
	h.s.serveReplWaiters()
	h.s.serveAOFWaiters()
}

// replicaConn is a client's connection as replication serves a replica.
type replicaConn struct{ c *Client }

func (r replicaConn) Write(p []byte) (int, error) { return r.c.write(p) }
func (r replicaConn) Sent(n int)                  { r.c.traffic.wrote(int64(n)) }
func (r replicaConn) Close()                      { r.c.disconnect() }
func (r replicaConn) RemoteAddr() string          { return r.c.peerAddr() }
func (r replicaConn) ID() uint64                  { return r.c.id }

// ReadCommands runs what a replica sends (REPLCONF ACK), replying
// nothing, until its connection ends.
func (r replicaConn) ReadCommands() {
	c := r.c
	for {
		// process stops after each command of a replica's connection:
		// run every complete one read (a periodic ACK and the one a
		// GETACK asked for may come in one read) before reading again.
		for c.r < c.w {
			before := c.r
			keep := c.process()
			c.out.B = c.out.B[:0]
			if !keep {
				return
			}
			if c.r == before {
				break // the rest of a command is still to come
			}
		}
		if !c.prepareRead() {
			return
		}
		n, err := c.read(c.in[c.w:])
		c.w += n
		c.traffic.read(int64(n))
		if err != nil {
			return
		}
	}
}

// serveReplica is the goroutine of a connection SYNC or PSYNC made a
// replica's: replication serves it, from the replies still unsent on,
// until it ends.
func (c *Client) serveReplica() {
	pending := c.out.B
	c.out.B = nil // its reader replies nothing: pending is replication's
	c.s.repl.Serve(&c.peer, pending)
	c.freeIn()
	c.close()
}

// loadExpired collects the keys a master's start-up load skipped because
// their time had passed: its replicas still hold them, so once the
// replication history the file recorded is restored, their DELs follow
// it, as Redis feeds them to its backlog. Past the backlog's size no
// replica could continue the history partially anyway: the rest are
// dropped, and so is the backlog, so that the replicas resynchronize fully.
type loadExpired struct {
	keys    []loadExpiredKey
	bytes   int64
	limit   int64
	dropped bool
}

type loadExpiredKey struct {
	db  int
	key []byte
}

// note runs during the start-up load, alone.
func (l *loadExpired) note(db int, key []byte) {
	const delOverhead = 16 // less than what a DEL's encoding adds to the key
	if l.dropped = l.dropped || l.bytes > l.limit; l.dropped {
		return
	}
	l.keys = append(l.keys, loadExpiredKey{db, bytes.Clone(key)})
	l.bytes += int64(len(key)) + delOverhead
}

// propagate sends the DELs into the change stream (nothing consumes it
// unless a history was restored) and forgets the keys.
func (l *loadExpired) propagate(s *Server) {
	for _, k := range l.keys {
		s.propagateExpired(k.db, k.key)
	}
	if l.dropped {
		s.repl.EmptyBacklog()
	}
	*l = loadExpired{}
}
