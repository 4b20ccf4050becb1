package server

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/keyhive/keyhive/cmdspec"
	"github.com/keyhive/keyhive/replication"
	"github.com/keyhive/keyhive/resp"
)

// Replication, the server's side (package replication holds the protocol's
// pure parts and its model). This file: the state both roles share, the
// feed that writes the change stream into the backlog, and the cron.
// replication_master.go serves replicas (SYNC, PSYNC, REPLCONF, WAIT's
// count), replication_replica.go is the link to a master (REPLICAOF),
// replication_info.go reports (INFO replication, ROLE).
//
// One change stream: the feed is a subscriber of the change stream, as the
// AOF is, so a replica receives exactly what the AOF is written. A replica
// applies its master's commands through dispatch (fromMaster); they reach
// its own change stream and so its AOF, but its feed ignores them: its
// backlog and its own replicas get the master's bytes as received, so that
// offsets are the same along a chain of replicas.

type replState struct {
	mu  sync.Mutex
	ids replication.IDs // guarded by mu
	// backlog exists from the first replica on (or, on a replica, the
	// first sync) until repl-backlog-ttl passes without replicas.
	backlog atomic.Pointer[replication.Backlog]
	// offset is the stream's length while there is no backlog.
	offset      atomic.Int64
	unsubscribe func() // the feed's subscription to the change stream; guarded by mu
	feed        replFeed
	replicas    []*replicaConn // guarded by mu
	// lonelySince is when the last replica left (Unix s; repl-backlog-ttl).
	lonelySince int64
	// goodReplicas are the replicas whose last ACK is within
	// min-replicas-max-lag seconds, as of the last cron.
	goodReplicas atomic.Int32
	lastPing     int64 // Unix s of the last PING in the stream

	// applying is held by a replica while it applies a command of its
	// master's and forwards its bytes, and around a snapshot's instant.
	applying sync.Mutex

	failover failoverState // guarded by mu
	// restored is the history the RDB file loaded at start-up recorded.
	restored restoredHistory

	isReplica atomic.Bool // REPLICAOF host port
	link      *masterLink // guarded by mu: the link to the master while a replica

	fullSyncs, partialOK, partialErr atomic.Int64
	netIn, netOut                    atomic.Int64
}

// initReplication gives the server its first replication ID.
func (s *Server) initReplication() {
	s.repl.ids = replication.FreshIDs()
	s.repl.feed.s = s
	s.repl.feed.db = -1
	s.repl.lonelySince = time.Now().Unix()
	s.cfg.OnChange("repl-backlog-size", func() {
		if b := s.repl.backlog.Load(); b != nil {
			b.SetSize(s.cfg.ReplBacklogSize())
		}
	})
}

// replIDs returns the replication IDs.
func (s *Server) replIDs() replication.IDs {
	s.repl.mu.Lock()
	defer s.repl.mu.Unlock()
	return s.repl.ids
}

// replOffset is the stream's length: the master's replication offset, or
// what a replica has applied of its master's.
func (s *Server) replOffset() int64 {
	if b := s.repl.backlog.Load(); b != nil {
		return b.End()
	}
	return s.repl.offset.Load()
}

// ensureBacklog creates the backlog and subscribes the feed, when there is
// none. Needs repl.mu.
func (s *Server) ensureBacklog() *replication.Backlog {
	r := &s.repl
	if b := r.backlog.Load(); b != nil {
		return b
	}
	b := replication.NewBacklog(s.cfg.ReplBacklogSize(), r.offset.Load())
	r.backlog.Store(b)
	r.unsubscribe = s.stream.Subscribe(&r.feed)
	return b
}

// dropBacklog frees the backlog of a master that had no replica for
// repl-backlog-ttl, and starts a new history: without the backlog no
// replica could continue the old one. Needs repl.mu.
func (s *Server) dropBacklog() {
	r := &s.repl
	b := r.backlog.Load()
	if b == nil {
		return
	}
	r.unsubscribe()
	r.offset.Store(b.End())
	r.backlog.Store(nil)
	r.ids = replication.FreshIDs()
}

// replFeed writes the change stream into the backlog, as the stream a
// replica applies: a SELECT when the database changes, then the command.
type replFeed struct {
	s   *Server
	mu  sync.Mutex
	db  int    // the database of the stream's last command; -1: a SELECT is owed
	buf []byte // reused: a command is written whole, then appended
}

var (
	argSELECT   = []byte("SELECT")
	argPING     = []byte("PING")
	argREPLCONF = []byte("REPLCONF")
	argGETACK   = []byte("GETACK")
	argStar     = []byte("*")
	argACK      = []byte("ACK")
	argFACK     = []byte("FACK")
)

// Receive is the change stream's subscriber.
func (f *replFeed) Receive(db int, argv [][]byte) {
	if f.s.repl.isReplica.Load() {
		return // the master's bytes are forwarded as they came (applyStream)
	}
	f.mu.Lock()
	b := f.buf[:0]
	if db != f.db {
		b = appendSelect(b, db)
		f.db = db
	}
	b = resp.AppendCommand(b, argv)
	f.flush(b)
	f.mu.Unlock()
}

// add writes a command that belongs to no database (PING, REPLCONF
// GETACK) into the stream.
func (f *replFeed) add(argv ...[]byte) {
	f.mu.Lock()
	f.flush(resp.AppendCommand(f.buf[:0], argv))
	f.mu.Unlock()
}

// flush appends the command written in b to the backlog. Needs mu.
func (f *replFeed) flush(b []byte) {
	if bl := f.s.repl.backlog.Load(); bl != nil {
		bl.Append(b)
	}
	f.buf = b
}

// owe makes the next command start with a SELECT: a replica that starts
// from a snapshot does not know the stream's database.
func (f *replFeed) owe() {
	f.mu.Lock()
	f.db = -1
	f.mu.Unlock()
}

func appendSelect(b []byte, db int) []byte {
	var num [20]byte
	return resp.AppendCommand(b, [][]byte{argSELECT, strconv.AppendInt(num[:0], int64(db), 10)})
}

// replicationCron runs once a second: PINGs in the stream, replicas'
// and the master's timeouts, the count of good replicas and the backlog's
// time to live.
func (s *Server) replicationCron() {
	r := &s.repl
	now := time.Now()
	r.mu.Lock()
	replicas := append([]*replicaConn(nil), r.replicas...)
	if len(replicas) > 0 {
		r.lonelySince = now.Unix()
	} else if ttl := s.cfg.ReplBacklogTTL(); ttl > 0 && !r.isReplica.Load() && now.Unix()-r.lonelySince > ttl {
		s.dropBacklog()
	}
	r.mu.Unlock()
	good := 0
	maxLag := int64(s.cfg.MinReplicasMaxLag())
	timeout := int64(s.cfg.ReplTimeout()) * 1000
	for _, rc := range replicas {
		if s.replicaOverLimit(rc) {
			rc.c.disconnect()
			continue
		}
		if rc.state.Load() != replicaOnline {
			continue
		}
		lag := now.UnixMilli() - rc.ackTime.Load()
		if lag > timeout {
			s.log.Printf("Disconnecting timedout replica (streaming sync): %s", rc.name())
			rc.c.disconnect()
			continue
		}
		if lag/1000 <= maxLag {
			good++
		}
	}
	r.goodReplicas.Store(int32(good))
	s.updateFailover()
	if len(replicas) > 0 && !r.isReplica.Load() && now.Unix()-r.lastPing >= int64(s.cfg.ReplPingReplicaPeriod()) {
		r.lastPing = now.Unix()
		r.feed.add(argPING)
	}
}

// replicationRefusal is why a client's command may not run now, in
// Redis's order and texts: too few good replicas for a write on a master
// (min-replicas-to-write), a write on a read-only replica, a command that
// needs fresh data while the link is down and replica-serve-stale-data is
// off. Empty when it may.
func (s *Server) replicationRefusal(cmd *Command) string {
	write := cmd.Flags&cmdspec.FlagWrite != 0
	if !s.repl.isReplica.Load() {
		if write && s.cfg.MinReplicasMaxLag() > 0 && int(s.repl.goodReplicas.Load()) < s.cfg.MinReplicasToWrite() {
			return "NOREPLICAS Not enough good replicas to write."
		}
		return ""
	}
	if write && s.cfg.ReplicaReadOnly() {
		return "READONLY You can't write against a read only replica."
	}
	if cmd.Flags&cmdspec.FlagStale == 0 && !s.cfg.ReplicaServeStaleData() && !s.masterLinkUp() {
		return "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
	}
	return ""
}

// changeReplID is DEBUG CHANGE-REPL-ID: a new ID, and no second one.
func (s *Server) changeReplID() {
	s.repl.mu.Lock()
	s.repl.ids = replication.FreshIDs()
	s.repl.mu.Unlock()
}

// replicationAux is what a saved RDB file records of the replication
// history, so that the server, restarted, continues it (its replicas, or
// itself as a replica, resynchronize partially): nothing without a
// backlog.
func (s *Server) replicationAux() []string {
	b := s.repl.backlog.Load()
	if b == nil {
		return nil
	}
	return []string{"repl-stream-db", strconv.Itoa(s.streamDB()), "repl-id", s.replIDs().ID,
		"repl-offset", strconv.FormatInt(b.End(), 10)}
}

// restoredHistory is the replication history the RDB file loaded at
// start-up recorded.
type restoredHistory struct {
	id        string
	offset    int64
	hasOffset bool
	db        int
}

// loadedReplicationAux collects the history from the AUX fields of the
// RDB file loaded at start-up.
func (s *Server) loadedReplicationAux(name, value []byte) {
	h := &s.repl.restored
	switch string(name) {
	case "repl-id":
		if len(value) == replication.IDLen {
			h.id = string(value)
		}
	case "repl-offset":
		if off, err := strconv.ParseInt(string(value), 10, 64); err == nil && off >= 0 {
			h.offset, h.hasOffset = off, true
		}
	case "repl-stream-db":
		if db, err := strconv.Atoi(string(value)); err == nil && db >= 0 && db < s.ks.Len() {
			h.db = db
		}
	}
}

// restoreHistory continues the history the loaded file recorded, before
// any replica or master is reached: its ID, its offset, an empty backlog
// from there.
func (s *Server) restoreHistory() {
	h := s.repl.restored
	if h.id == "" || !h.hasOffset {
		return
	}
	r := &s.repl
	r.mu.Lock()
	r.ids = replication.IDs{ID: h.id, ID2: replication.NoID, Second: -1}
	r.offset.Store(h.offset)
	s.ensureBacklog()
	r.mu.Unlock()
	s.log.Printf("Continuing replication history %s from offset %d", h.id, h.offset)
}
