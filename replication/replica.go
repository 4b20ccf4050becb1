package replication

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/resp"
)

// The replica's side: REPLICAOF starts a link to the master, a goroutine
// that connects, shakes hands, loads the master's RDB on a full
// resynchronization and applies the stream through the server's dispatch
// as the master's client, reconnecting with PSYNC after a dropped link.

// A link's states.
const (
	linkConnect    int32 = iota // waiting to connect (again)
	linkConnecting              // connecting
	linkHandshake               // shaking hands: PING, AUTH, REPLCONF, PSYNC
	linkTransfer                // receiving the master's RDB
	linkConnected               // applying the stream
)

// linkStateNames are the states as ROLE names them.
var linkStateNames = [...]string{"connect", "connecting", "handshake", "sync", "connected"}

// link is a replica's link to its master.
type link struct {
	host string
	port int
	// ctx ends when REPLICAOF changes the master or the server closes.
	ctx    context.Context
	cancel context.CancelFunc
	state  atomic.Int32
	client atomic.Pointer[MasterClient] // the master's client while connected
	lastIO atomic.Int64                 // Unix ms the master last sent anything
	// downSince is the Unix time the link went down (0: it never was up).
	downSince atomic.Int64
	// upSince is the Unix time the link came up (0: it is not up).
	upSince atomic.Int64
	// Redis 8.2's INFO figures: the attempts to sync since the link was
	// last up and in all, and the seconds of the down periods that ended.
	currentAttempts, totalAttempts atomic.Int64
	downSeconds                    atomic.Int64
	syncRead                       atomic.Int64 // bytes of the RDB being received
	fsynced                        atomic.Int64 // the offset the AOF had fsynced at the last ACK
	// db is the master's client's database, kept across a dropped link:
	// a continued stream goes on in it.
	db int
	// connMu guards conn, written by the link and the ACKs.
	connMu sync.Mutex
	conn   net.Conn
}

// ReplicaOf is REPLICAOF host port and REPLICAOF NO ONE (args as sent)
// from the client p at addr.
func (m *Manager) ReplicaOf(w *resp.Writer, args [][]byte, p *Peer, addr string) {
	if m.failoverState() != failoverNone {
		w.Error("ERR REPLICAOF not allowed while failing over.")
		return
	}
	if cstr.ArgIs(args[1], "no") && cstr.ArgIs(args[2], "one") {
		if m.BecomeMaster() {
			m.opt.Log.Printf("MASTER MODE enabled (user request from '%s')", addr)
		}
		w.OK()
		return
	}
	if p.Serving() {
		w.Error("ERR Command is not valid when client is a replica.")
		return
	}
	port, ok := strnum.ParseInt(args[2])
	if !ok || port < 0 || port > 65535 {
		w.Error("ERR Invalid master port")
		return
	}
	host := string(args[1])
	if !m.Follow(host, int(port)) {
		w.Simple("OK Already connected to specified master")
		return
	}
	m.opt.Log.Printf("REPLICAOF %s:%d enabled (user request from '%s')", host, port, addr)
	w.OK()
}

// currentLink is the link to the master, nil on a master.
func (m *Manager) currentLink() *link {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.link
}

// masterClient is the master's client, nil unless the link is up.
func (m *Manager) masterClient() MasterClient {
	if l := m.currentLink(); l != nil {
		if mc := l.client.Load(); mc != nil {
			return *mc
		}
	}
	return nil
}

// linkUp reports whether a replica applies its master's stream.
func (m *Manager) linkUp() bool {
	l := m.currentLink()
	return l != nil && l.state.Load() == linkConnected
}

// LinkDown reports whether this replica's link to its master is down,
// and since when (Unix s; 0: it never was up). A master's is not.
func (m *Manager) LinkDown() (down bool, since int64) {
	l := m.currentLink()
	if l == nil || l.state.Load() == linkConnected {
		return false, 0
	}
	return true, l.downSince.Load()
}

// Follow makes the server a replica of host:port, unless it is already:
// it reports whether it changed master.
func (m *Manager) Follow(host string, port int) bool {
	if l := m.currentLink(); l != nil && l.host == host && l.port == port {
		return false
	}
	m.replicaOf(host, port)
	return true
}

// replicaOf makes the server a replica of host:port: the old link ends,
// its own replicas are dropped (they resynchronize with the new history),
// and a new link starts with this server's history as the one to continue.
func (m *Manager) replicaOf(host string, port int) {
	m.mu.Lock()
	if m.link != nil {
		m.link.cancel()
	}
	m.isReplica.Store(true)
	m.stopReconcile()
	m.host.SetReplica(true)
	m.opt.Config.SetReplicaOf(host, port)
	m.ensureBacklog()
	ctx, cancel := context.WithCancel(context.Background())
	l := &link{host: host, port: port, ctx: ctx, cancel: cancel, db: m.restored.db}
	m.link = l
	m.mu.Unlock()
	m.disconnectReplicas()
	m.opt.Goroutines.Add(1)
	go m.runLink(l)
}

// BecomeMaster is REPLICAOF NO ONE: the link ends and a new history
// starts, continuing the master's, whose ID stays valid up to here. It
// reports whether the server was a replica (else nothing changes).
func (m *Manager) BecomeMaster() bool {
	if !m.isReplica.Load() {
		return false
	}
	m.becomeMaster()
	return true
}

// becomeMaster ends the link and starts a new history.
func (m *Manager) becomeMaster() {
	m.mu.Lock()
	db := 0 // the database its master's stream was in
	if l := m.link; l != nil {
		db = l.db
		if mc := l.client.Load(); mc != nil {
			db = (*mc).DB()
		}
		l.cancel()
		m.link = nil
	}
	m.ids = m.ids.Promote(m.Offset())
	m.isReplica.Store(false)
	if !m.startReconcile(db) {
		m.host.SetReplica(false)
	}
	m.opt.Config.SetReplicaOf("", 0)
	m.mu.Unlock()
	m.feed.owe() // its own commands start with a SELECT
}

// runLink connects to the master until the link is cancelled,
// reconnecting a second after each failure.
func (m *Manager) runLink(l *link) {
	defer m.opt.Goroutines.Done()
	stop := context.AfterFunc(l.ctx, func() { l.setConn(nil) })
	defer stop()
	go func() {
		select {
		case <-m.opt.Done:
			l.cancel()
		case <-l.ctx.Done():
		}
	}()
	for {
		err := m.syncWithMaster(l)
		if l.ctx.Err() != nil {
			return
		}
		if errors.Is(err, errMasterTimeout) && l.state.Load() < linkTransfer {
			m.opt.Log.Printf("Timeout connecting to the MASTER...")
		}
		if l.state.Load() == linkConnected {
			l.currentAttempts.Store(0) // the next attempt is the first since this disconnection
		}
		l.upSince.Store(0)
		l.state.Store(linkConnect)
		l.downSince.Store(time.Now().Unix())
		m.opt.Log.Printf("Connection with master %s:%d lost: %v", l.host, l.port, err)
		select {
		case <-l.ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// setConn replaces the link's connection, closing the old one; after the
// link is cancelled any new one is closed at once.
func (l *link) setConn(conn net.Conn) {
	l.connMu.Lock()
	defer l.connMu.Unlock()
	if l.conn != nil {
		l.conn.Close()
	}
	if conn != nil && l.ctx.Err() != nil {
		conn.Close()
		conn = nil
	}
	l.conn = conn
}

// syncWithMaster runs one connection to the master: the handshake, a full
// or partial resynchronization, then the stream until the link drops.
func (m *Manager) syncWithMaster(l *link) error {
	log := m.opt.Log
	l.currentAttempts.Add(1)
	l.totalAttempts.Add(1)
	l.state.Store(linkConnecting)
	addr := net.JoinHostPort(l.host, strconv.Itoa(l.port))
	log.Printf("Connecting to MASTER %s", addr)
	timeout := time.Duration(m.opt.Config.ReplTimeout()) * time.Second
	d := net.Dialer{Timeout: timeout}
	nc, err := d.DialContext(l.ctx, "tcp", addr)
	if err != nil {
		return err
	}
	conn := &masterConn{Conn: nc, l: l, m: m, timeout: timeout}
	l.state.Store(linkHandshake)
	l.setConn(conn)
	defer l.setConn(nil)
	log.Printf("MASTER <-> REPLICA sync started")
	br := bufio.NewReaderSize(conn, 64<<10)
	ids, off, err := m.handshake(conn, br)
	if err != nil {
		return err
	}
	line, err := ReadLine(br)
	if err != nil {
		return err
	}
	reply, err := ParseSyncReply(line)
	if m.failingOver() {
		if err != nil || reply.Full {
			m.abortFailover("Failover target rejected psync request")
			return errors.New("failover target rejected psync request")
		}
		m.endFailover()
	}
	if err != nil {
		return err
	}
	if reply.Full {
		log.Printf("Full resync from master: %s:%d", reply.ID, reply.Offset)
		if err := m.fullSync(l, br, reply); err != nil {
			return err
		}
	} else {
		log.Printf("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.")
		if reply.ID != "" && reply.ID != ids.ID {
			m.mu.Lock()
			m.ids = IDs{ID: reply.ID, ID2: ids.ID, Second: off + 1}
			m.mu.Unlock()
			m.disconnectReplicas() // they learn the new ID as they come back
		}
	}
	mc := m.host.MasterClient(conn, l.db)
	l.client.Store(&mc)
	now := time.Now().Unix()
	if down := l.downSince.Load(); down != 0 {
		l.downSeconds.Add(now - down)
	}
	l.upSince.Store(now)
	l.state.Store(linkConnected)
	defer func() {
		l.client.Store(nil)
		l.db = mc.DB()
		mc.Close()
	}()
	m.sendAck()
	acks := time.NewTicker(time.Second)
	done := make(chan struct{})
	defer func() {
		acks.Stop()
		close(done)
	}()
	go func() {
		for {
			select {
			case <-acks.C:
				m.sendAck()
			case <-done:
				return
			}
		}
	}()
	return m.applyStream(l, mc, br)
}

// handshake sends PING, AUTH, REPLCONF and PSYNC, and returns the history
// and offset PSYNC asked to continue.
func (m *Manager) handshake(conn net.Conn, br *bufio.Reader) (IDs, int64, error) {
	cfg := m.opt.Config
	ask := func(args ...string) (string, error) { return ask(conn, br, args...) }
	reply, err := ask("PING")
	if err != nil {
		return IDs{}, 0, err
	}
	if reply[0] == '-' && !startsWithAny(reply, "-NOAUTH", "-NOPERM", "-ERR operation not permitted") {
		return IDs{}, 0, fmt.Errorf("error reply to PING from master: '%s'", reply)
	}
	if err := m.authenticate(conn, br); err != nil {
		return IDs{}, 0, err
	}
	port := cfg.ReplicaAnnouncePort()
	if port == 0 {
		port = m.host.ListenPort()
	}
	if _, err = ask("REPLCONF", "listening-port", strconv.Itoa(port)); err != nil {
		return IDs{}, 0, err
	}
	if ip := cfg.ReplicaAnnounceIP(); ip != "" {
		if _, err = ask("REPLCONF", "ip-address", ip); err != nil {
			return IDs{}, 0, err
		}
	}
	if _, err = ask("REPLCONF", "capa", "eof", "capa", "psync2"); err != nil {
		return IDs{}, 0, err
	}
	ids := m.IDs()
	off := m.Offset()
	id, want := ids.ID, strconv.FormatInt(off+1, 10)
	if m.backlog.Load() == nil {
		id, want = "?", "-1"
	}
	argv := [][]byte{[]byte("PSYNC"), []byte(id), []byte(want)}
	if m.failingOver() {
		argv = append(argv, []byte("FAILOVER"))
	}
	_, err = conn.Write(resp.AppendCommand(nil, argv))
	return ids, off, err
}

// ask sends a command and reads its one-line reply.
func ask(conn net.Conn, br *bufio.Reader, args ...string) (string, error) {
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	if _, err := conn.Write(resp.AppendCommand(nil, argv)); err != nil {
		return "", err
	}
	return ReadLine(br)
}

// authenticate sends AUTH with masteruser and masterauth, when set: what
// this server says to a server whose stream it reads.
func (m *Manager) authenticate(conn net.Conn, br *bufio.Reader) error {
	cfg := m.opt.Config
	pass := cfg.MasterAuth()
	if pass == "" {
		return nil
	}
	args := []string{"AUTH", pass}
	if user := cfg.MasterUser(); user != "" {
		args = []string{"AUTH", user, pass}
	}
	reply, err := ask(conn, br, args...)
	if err != nil {
		return err
	}
	if reply[0] == '-' {
		return fmt.Errorf("unable to AUTH to MASTER: %s", reply)
	}
	return nil
}

func startsWithAny(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// fullSync receives the master's RDB into a file, replaces the data set
// with it (the host holds the exclusive lock: clients wait meanwhile), and
// starts its history at the master's offset.
func (m *Manager) fullSync(l *link, br *bufio.Reader, reply SyncReply) error {
	log := m.opt.Log
	l.state.Store(linkTransfer)
	path := filepath.Join(m.opt.Config.Dir(), fmt.Sprintf("temp-%d.%d.rdb", time.Now().Unix(), os.Getpid()))
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("opening the temp file needed for MASTER <-> REPLICA synchronization: %w", err)
	}
	defer os.Remove(path)
	l.syncRead.Store(0)
	n, err := ReadRDB(br, &countingWriter{w: f, n: &l.syncRead})
	if err == nil {
		err = f.Sync()
	}
	f.Close()
	if err != nil {
		return fmt.Errorf("MASTER <-> REPLICA sync: reading the RDB: %w", err)
	}
	log.Printf("MASTER <-> REPLICA sync: received %d bytes from master to disk", n)
	m.disconnectReplicas() // their history is gone
	log.Printf("MASTER <-> REPLICA sync: Flushing old data")
	log.Printf("MASTER <-> REPLICA sync: Loading DB in memory")
	streamDB := 0
	err = m.host.LoadSnapshot(path, func(name, value []byte) {
		if string(name) == "repl-stream-db" {
			if v, ok := strnum.ParseInt(value); ok && v >= 0 && int(v) < m.opt.Config.Databases() {
				streamDB = int(v)
			}
		}
	})
	if err != nil {
		return fmt.Errorf("failed trying to load the MASTER synchronization DB from disk: %w", err)
	}
	m.mu.Lock()
	m.ids = IDs{ID: reply.ID, ID2: NoID, Second: -1}
	m.ensureBacklog().Reset(reply.Offset)
	m.mu.Unlock()
	l.db = streamDB
	if m.opt.AOF.On() {
		m.opt.AOF.BGRewrite() // the AOF holds the old data set
	}
	log.Printf("MASTER <-> REPLICA sync: Finished with success")
	return nil
}

type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (cw *countingWriter) Write(p []byte) (int, error) {
	n, err := cw.w.Write(p)
	cw.n.Add(int64(n))
	return n, err
}

// applyStream applies the master's commands as they come, each through
// the server's dispatch, and forwards their bytes to this server's backlog
// (its own replicas, a later promotion). A transaction's bytes go at its
// EXEC, as it is applied. Holding the Instant lock for each keeps a
// snapshot for a replica of this one from falling between a command and
// its bytes.
func (m *Manager) applyStream(l *link, mc MasterClient, br *bufio.Reader) error {
	cr := NewCommandReader(br, m.opt.Config.ProtoMaxBulkLen())
	a := applier{m: m, mc: mc}
	for {
		args, raw, err := cr.Next()
		if err != nil {
			return err
		}
		if l.ctx.Err() != nil {
			return l.ctx.Err()
		}
		a.apply(args, raw)
	}
}

// applier applies a master's stream as its client and forwards its bytes
// to the backlog, a transaction's at its EXEC.
type applier struct {
	m       *Manager
	mc      MasterClient
	pending []byte
	inMulti bool // a new master's client has no transaction open
}

// apply runs one command of the stream and forwards raw, its bytes.
func (a *applier) apply(args [][]byte, raw []byte) {
	a.m.opt.Instant.Lock()
	a.pending = append(a.pending, raw...)
	if len(args) > 0 {
		a.inMulti = a.mc.Apply(args)
	}
	if !a.inMulti {
		a.m.backlog.Load().Append(a.pending)
		a.pending = a.pending[:0]
	}
	a.m.opt.Instant.Unlock()
}

// sendAck sends REPLCONF ACK with the replica's offset to its master, and
// with the AOF on, FACK and the offset its AOF has fsynced (WAITAOF).
func (m *Manager) sendAck() {
	l := m.currentLink()
	if l == nil {
		return
	}
	off := m.Offset() // read before the AOF: what it fsynced then covers off
	argv := [][]byte{argREPLCONF, argACK, strconv.AppendInt(nil, off, 10)}
	if aof := m.opt.AOF; aof.On() {
		// The master's commands have no replies to wait for the AOF: it
		// is written (and under appendfsync always fsynced) here.
		if aof.Write() == nil && aof.Synced() >= aof.Fed() {
			l.fsynced.Store(off)
		}
		argv = append(argv, argFACK, strconv.AppendInt(nil, l.fsynced.Load(), 10))
	}
	ack := resp.AppendCommand(nil, argv)
	l.connMu.Lock()
	if l.conn != nil {
		l.conn.Write(ack)
	}
	l.connMu.Unlock()
}

// masterConn is the connection to the master: every read must come within
// repl-timeout (the master PINGs meanwhile), and counts as I/O.
type masterConn struct {
	net.Conn
	l       *link
	m       *Manager
	timeout time.Duration
}

var errMasterTimeout = errors.New("MASTER timeout: no data nor PING received")

func (mc *masterConn) Read(p []byte) (int, error) {
	mc.Conn.SetReadDeadline(time.Now().Add(mc.timeout))
	n, err := mc.Conn.Read(p)
	if n > 0 {
		mc.l.lastIO.Store(time.Now().UnixMilli())
		mc.m.netIn.Add(int64(n))
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		err = errMasterTimeout
	}
	return n, err
}
