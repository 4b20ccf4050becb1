package replication

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/keyhive/keyhive/resp"
)

// Manager is a server's replication: its history, the backlog and the
// feed that writes the change stream into it, the replicas it serves and,
// on a replica, the link to its master.
//
// One change stream: the feed is a subscriber of the change stream, as the
// AOF is, so a replica receives exactly what the AOF is written. A replica
// applies its master's commands through the server's dispatch
// (MasterClient); they reach its own change stream and so its AOF, but its
// feed ignores them: its backlog and its own replicas get the master's
// bytes as received, so that offsets are the same along a chain of
// replicas.
type Manager struct {
	opt  Options
	host Host

	mu  sync.Mutex
	ids IDs // guarded by mu
	// backlog exists from the first replica on (or, on a replica, the
	// first sync) until repl-backlog-ttl passes without replicas.
	backlog atomic.Pointer[Backlog]
	// offset is the stream's length while there is no backlog.
	offset      atomic.Int64
	unsubscribe func() // the feed's subscription to the change stream; guarded by mu
	feed        feed
	replicas    []*Replica // guarded by mu
	// lonelySince is when the last replica left (Unix s; repl-backlog-ttl).
	lonelySince int64
	// goodReplicas are the replicas whose last ACK is within
	// min-replicas-max-lag seconds, as of the last cron.
	goodReplicas atomic.Int32
	// disklessGo is when repl-diskless-sync-max-replicas waiting replicas
	// ended the diskless delay (Unix ns): those waiting then start too.
	disklessGo atomic.Int64
	lastPing   int64 // Unix s of the last PING in the stream
	// pingsHeldUntil (Unix ms) keeps PINGs out of the stream while a
	// cluster manual failover pauses the writers (HoldPings).
	pingsHeldUntil atomic.Int64

	failover failover // guarded by mu
	// restored is the history the RDB file loaded at start-up recorded.
	restored restoredHistory

	isReplica atomic.Bool // REPLICAOF host port
	link      *link       // guarded by mu: the link to the master while a replica
	// reconciling: promoted in durable mode, it waits for its replicas
	// (reconcile.go).
	reconciling atomic.Bool
	rec         reconcile // guarded by mu

	fullSyncs, partialOK, partialErr atomic.Int64
	netIn, netOut                    atomic.Int64
}

// New returns a master's replication with a fresh history and no backlog.
func New(opt Options, host Host) *Manager {
	m := &Manager{opt: opt, host: host, ids: FreshIDs()}
	m.feed.m = m
	m.feed.db = -1
	m.lonelySince = time.Now().Unix()
	opt.Config.OnChange("repl-backlog-size", func() {
		if b := m.backlog.Load(); b != nil {
			b.SetSize(opt.Config.ReplBacklogSize())
		}
	})
	return m
}

// IsReplica reports whether the server replicates a master (REPLICAOF
// host port).
func (m *Manager) IsReplica() bool { return m.isReplica.Load() }

// IDs returns the history's replication IDs.
func (m *Manager) IDs() IDs {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ids
}

// ChangeID is DEBUG CHANGE-REPL-ID: a new ID, and no second one.
func (m *Manager) ChangeID() {
	m.mu.Lock()
	m.ids = FreshIDs()
	m.mu.Unlock()
}

// Offset is the stream's length: the master's replication offset, or
// what a replica has applied of its master's.
func (m *Manager) Offset() int64 {
	if b := m.backlog.Load(); b != nil {
		return b.End()
	}
	return m.offset.Load()
}

// BufferBytes is the stream the backlog holds, which is also the replicas'
// shared output, split as Redis 7 reports its replication buffer (INFO
// mem_replication_backlog and mem_clients_slaves, MEMORY STATS): beyond
// repl-backlog-size, what is held for replicas that have not read it is
// theirs.
func (m *Manager) BufferBytes() (backlog, replicas int64) {
	b := m.backlog.Load()
	if b == nil {
		return 0, 0
	}
	start, end := b.Offsets()
	held, size := end-start, m.opt.Config.ReplBacklogSize()
	m.mu.Lock()
	attached := len(m.replicas) > 0
	m.mu.Unlock()
	if attached && held > size {
		return size, held - size
	}
	return held, 0
}

// EnsureBacklog creates the backlog and subscribes the feed to the change
// stream, when there is none, and returns it: what a replica's PSYNC does
// first, for a test that measures the feed without a replica.
func (m *Manager) EnsureBacklog() *Backlog {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ensureBacklog()
}

// ensureBacklog is EnsureBacklog under mu.
func (m *Manager) ensureBacklog() *Backlog {
	if b := m.backlog.Load(); b != nil {
		return b
	}
	b := NewBacklog(m.opt.Config.ReplBacklogSize(), m.offset.Load())
	m.backlog.Store(b)
	m.unsubscribe = m.opt.Changes.SubscribeReplicas(&m.feed)
	return b
}

// dropBacklog frees the backlog of a master that had no replica for
// repl-backlog-ttl, and starts a new history: without the backlog no
// replica could continue the old one. Needs mu.
func (m *Manager) dropBacklog() {
	b := m.backlog.Load()
	if b == nil {
		return
	}
	m.unsubscribe()
	m.offset.Store(b.End())
	m.backlog.Store(nil)
	m.ids = FreshIDs()
}

// feed writes the change stream into the backlog, as the stream a
// replica applies: a SELECT when the database changes, then the command.
type feed struct {
	m   *Manager
	mu  sync.Mutex
	db  int    // the database of the stream's last command; -1: a SELECT is owed
	buf []byte // reused: a command is written whole, then appended
	// askedAt is the stream's end after AskAcksOnce's last GETACK.
	askedAt int64
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
func (f *feed) Receive(db int, argv [][]byte) {
	if f.m.isReplica.Load() {
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
func (f *feed) add(argv ...[]byte) {
	f.mu.Lock()
	f.flush(resp.AppendCommand(f.buf[:0], argv))
	f.mu.Unlock()
}

// flush appends the command written in b to the backlog; nothing while
// the server reconciles, whose stream is its old master's until it ends.
// Needs mu.
func (f *feed) flush(b []byte) {
	if bl := f.m.backlog.Load(); bl != nil && !f.m.reconciling.Load() {
		bl.Append(b)
	}
	f.buf = b
}

// owe makes the next command start with a SELECT: a replica that starts
// from a snapshot does not know the stream's database.
func (f *feed) owe() {
	f.mu.Lock()
	f.db = -1
	f.mu.Unlock()
}

func appendSelect(b []byte, db int) []byte {
	var num [20]byte
	return resp.AppendCommand(b, [][]byte{argSELECT, strconv.AppendInt(num[:0], int64(db), 10)})
}

// CatchUp gives the replicas up to timeout to acknowledge the whole
// stream, as Redis's SHUTDOWN does before it exits so that a planned stop
// loses nothing a replica could have had; the caller pauses writes first.
// It logs the replicas still behind when it gives up. It returns false at
// once when abort is closed (SHUTDOWN ABORT).
func (m *Manager) CatchUp(timeout time.Duration, abort <-chan struct{}) bool {
	if m.inSync() == len(m.replicaList()) {
		return true
	}
	m.AskAcks()
	m.opt.Log.Printf("Waiting for replicas before shutting down.")
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline) && m.inSync() < len(m.replicaList()); {
		select {
		case <-abort:
			return false
		case <-tick.C:
		}
	}
	end := m.Offset()
	replicas := m.replicaList()
	for _, r := range replicas {
		if acked := r.ackOff.Load(); acked != end {
			m.opt.Log.Printf("Lagging replica %s reported offset %d behind master, lag=%d, state=%s.",
				r.name(), end-acked, (time.Now().UnixMilli()-r.ackTime.Load())/1000, replicaStateNames[r.state.Load()])
		}
	}
	if len(replicas) > 0 {
		m.opt.Log.Printf("%d of %d replicas are in sync when shutting down.", m.inSync(), len(replicas))
	}
	return true
}

// inSync counts the replicas that acknowledged the whole stream.
func (m *Manager) inSync() int {
	end := m.Offset()
	n := 0
	for _, r := range m.replicaList() {
		if r.ackOff.Load() == end {
			n++
		}
	}
	return n
}

func (m *Manager) replicaList() []*Replica {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*Replica(nil), m.replicas...)
}

// AskAcks writes REPLCONF GETACK * into the stream: every replica
// acknowledges its offset at once (WAIT, WAITAOF, FAILOVER).
func (m *Manager) AskAcks() { m.feed.add(argREPLCONF, argGETACK, argStar) }

// AskAcksOnce is AskAcks unless the stream ends with a GETACK already:
// the ACKs that one brings cover everything before it. The feed's lock
// keeps other writes out between the look at the stream's end and the
// GETACK.
func (m *Manager) AskAcksOnce() {
	f := &m.feed
	f.mu.Lock()
	if m.Offset() != f.askedAt {
		f.flush(resp.AppendCommand(f.buf[:0], [][]byte{argREPLCONF, argGETACK, argStar}))
		f.askedAt = m.Offset()
	}
	f.mu.Unlock()
}

// DropOverLimit disconnects the replicas whose unsent stream passed
// client-output-buffer-limit replica while their writer waits on a replica
// that does not read. The server's cron calls it at every tick (hz), so a
// stalled replica holds at most a tick of writes beyond its limit (Redis
// checks at each write).
func (m *Manager) DropOverLimit() {
	m.mu.Lock()
	replicas := append([]*Replica(nil), m.replicas...)
	m.mu.Unlock()
	for _, r := range replicas {
		if m.overLimit(r) {
			r.conn.Close()
		}
	}
}

// Cron runs once a second: PINGs in the stream, replicas' and the
// master's timeouts, the count of good replicas and the backlog's time to
// live.
func (m *Manager) Cron() {
	cfg := m.opt.Config
	now := time.Now()
	m.mu.Lock()
	replicas := append([]*Replica(nil), m.replicas...)
	if len(replicas) > 0 {
		m.lonelySince = now.Unix()
	} else if ttl := cfg.ReplBacklogTTL(); ttl > 0 && !m.isReplica.Load() && now.Unix()-m.lonelySince > ttl {
		m.dropBacklog()
	}
	m.mu.Unlock()
	good := 0
	maxLag := int64(cfg.MinReplicasMaxLag())
	timeout := int64(cfg.ReplTimeout()) * 1000
	for _, r := range replicas {
		if r.state.Load() != replicaOnline {
			continue
		}
		lag := now.UnixMilli() - r.ackTime.Load()
		if lag > timeout {
			m.opt.Log.Printf("Disconnecting timedout replica (streaming sync): %s", r.name())
			r.conn.Close()
			continue
		}
		if lag/1000 <= maxLag {
			good++
		}
	}
	m.goodReplicas.Store(int32(good))
	m.updateFailover()
	// A failover waits for a replica's offset to equal the paused master's:
	// a PING would move the master's, as Redis, none is sent meanwhile.
	failingOver := now.UnixMilli() < m.pingsHeldUntil.Load() || m.failoverState() != failoverNone
	if len(replicas) > 0 && !m.isReplica.Load() && !failingOver && now.Unix()-m.lastPing >= int64(cfg.ReplPingReplicaPeriod()) {
		m.lastPing = now.Unix()
		m.feed.add(argPING)
	}
}

// HoldPings keeps the stream's PINGs out until untilMs (Unix ms), or lets
// them in again when it is 0: the cluster's manual failover pauses the
// writers and waits for the replica to reach the master's offset.
func (m *Manager) HoldPings(untilMs int64) { m.pingsHeldUntil.Store(untilMs) }

// Refusal is why a client's command may not run now, in Redis's order
// and texts: too few good replicas for a write on a master
// (min-replicas-to-write), a write on a read-only replica, a command that
// needs fresh data (not stale) while the link is down and
// replica-serve-stale-data is off. Empty when it may.
func (m *Manager) Refusal(write, stale bool) string {
	cfg := m.opt.Config
	if !m.isReplica.Load() {
		if write && m.reconciling.Load() {
			return "NOREPLICAS Not enough good replicas to write."
		}
		if write && cfg.MinReplicasMaxLag() > 0 && int(m.goodReplicas.Load()) < cfg.MinReplicasToWrite() {
			return "NOREPLICAS Not enough good replicas to write."
		}
		return ""
	}
	if write && cfg.ReplicaReadOnly() {
		return "READONLY You can't write against a read only replica."
	}
	if !stale && !cfg.ReplicaServeStaleData() && !m.linkUp() {
		return "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
	}
	return ""
}

// Aux is what a saved RDB file records of the replication history, so
// that the server, restarted, continues it (its replicas, or itself as a
// replica, resynchronize partially): nothing without a backlog.
func (m *Manager) Aux() []string {
	b := m.backlog.Load()
	if b == nil {
		return nil
	}
	return []string{"repl-stream-db", strconv.Itoa(m.streamDB()), "repl-id", m.IDs().ID,
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

// LoadedAux collects the history from the AUX fields of the RDB file
// loaded at start-up.
func (m *Manager) LoadedAux(name, value []byte) {
	h := &m.restored
	switch string(name) {
	case "repl-id":
		if len(value) == IDLen {
			h.id = string(value)
		}
	case "repl-offset":
		if off, err := strconv.ParseInt(string(value), 10, 64); err == nil && off >= 0 {
			h.offset, h.hasOffset = off, true
		}
	case "repl-stream-db":
		if db, err := strconv.Atoi(string(value)); err == nil && db >= 0 && db < m.opt.Config.Databases() {
			h.db = db
		}
	}
}

// RestoreHistory continues the history the loaded file recorded, before
// any replica or master is reached: its offset, an empty backlog from
// there. A replica goes on under its ID (it asks its master to continue
// it); a master starts a new ID that continues the old one, as Redis's
// does, so that its replicas resynchronize partially while nobody takes
// the restarted master's new writes for the old history's.
func (m *Manager) RestoreHistory() {
	h := m.restored
	if h.id == "" || !h.hasOffset {
		return
	}
	m.mu.Lock()
	m.ids = IDs{ID: h.id, ID2: NoID, Second: -1}
	if _, _, replica := m.opt.Config.ReplicaOf(); !replica {
		m.ids = m.ids.Promote(h.offset)
	}
	m.offset.Store(h.offset)
	m.ensureBacklog()
	m.mu.Unlock()
	m.opt.Log.Printf("Continuing replication history %s from offset %d", h.id, h.offset)
}

// EmptyBacklog drops what the backlog holds: no replica continues the
// history from before here, it resynchronizes fully (a restarted master
// whose backlog cannot hold the DELs of every key it found expired).
func (m *Manager) EmptyBacklog() {
	if b := m.backlog.Load(); b != nil {
		b.Reset(b.End())
	}
}

// Stats are the counters INFO stats reports.
type Stats struct {
	NetIn, NetOut                    int64 // bytes read from the master, sent to replicas
	FullSyncs, PartialOK, PartialErr int64 // resynchronizations served
}

// Stats returns the counters.
func (m *Manager) Stats() Stats {
	return Stats{NetIn: m.netIn.Load(), NetOut: m.netOut.Load(),
		FullSyncs: m.fullSyncs.Load(), PartialOK: m.partialOK.Load(), PartialErr: m.partialErr.Load()}
}
