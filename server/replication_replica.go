package server

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
	"sync"
	"sync/atomic"
	"time"

	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/replication"
	"github.com/keyhive/keyhive/resp"
)

// The replica's side: REPLICAOF starts a link to the master, a goroutine
// that connects, shakes hands, loads the master's RDB on a full
// resynchronization and applies the stream through dispatch as the
// master's client, reconnecting with PSYNC after a dropped link.

func init() {
	bind("replicaof", replicaofCommand)
	bind("slaveof", replicaofCommand)
}

// A link's states.
const (
	linkConnect    int32 = iota // waiting to connect (again)
	linkConnecting              // connecting and shaking hands
	linkTransfer                // receiving the master's RDB
	linkConnected               // applying the stream
)

// masterLink is a replica's link to its master.
type masterLink struct {
	host string
	port int
	// ctx ends when REPLICAOF changes the master or the server closes.
	ctx    context.Context
	cancel context.CancelFunc
	state  atomic.Int32
	client atomic.Pointer[Client] // the master's client while connected
	lastIO atomic.Int64           // Unix ms the master last sent anything
	// downSince is the Unix time the link went down (0: it never was up).
	downSince atomic.Int64
	syncRead  atomic.Int64 // bytes of the RDB being received
	fsynced   atomic.Int64 // the offset the AOF had fsynced at the last ACK
	// db is the master's client's database, kept across a dropped link:
	// a continued stream goes on in it.
	db int
	// connMu guards conn, written by the link and the ACKs.
	connMu sync.Mutex
	conn   net.Conn
}

// replicaofCommand is REPLICAOF host port and REPLICAOF NO ONE.
func replicaofCommand(x *Ctx) {
	s := x.s
	if s.cluster != nil {
		x.W.Error("ERR REPLICAOF not allowed in cluster mode.")
		return
	}
	if s.failoverState() != failoverNone {
		x.W.Error("ERR REPLICAOF not allowed while failing over.")
		return
	}
	if cArgIs(x.Args[1], "no") && cArgIs(x.Args[2], "one") {
		if s.repl.isReplica.Load() {
			s.becomeMaster()
			s.log.Printf("MASTER MODE enabled (user request from '%s')", x.c.peerAddr())
		}
		x.W.OK()
		return
	}
	if x.c.servesReplica() {
		x.W.Error("ERR Command is not valid when client is a replica.")
		return
	}

	port, ok := strnum.ParseInt(x.Args[2])
	if !ok || port < 0 || port > 65535 {
		x.W.Error("ERR Invalid master port")
		return
	}
	host := string(x.Args[1])
	if l := s.currentLink(); l != nil && l.host == host && l.port == int(port) {
		x.W.Simple("OK Already connected to specified master")
		return
	}
	s.replicaOf(host, int(port))
	s.log.Printf("REPLICAOF %s:%d enabled (user request from '%s')", host, port, x.c.peerAddr())
	x.W.OK()
}

// currentLink is the link to the master, nil on a master.
func (s *Server) currentLink() *masterLink {
	s.repl.mu.Lock()
	defer s.repl.mu.Unlock()
	return s.repl.link
}

// masterClientNow is the master's client, nil unless the link is up.
func (s *Server) masterClientNow() *Client {
	if l := s.currentLink(); l != nil {
		return l.client.Load()
	}
	return nil
}

// masterLinkUp reports whether a replica applies its master's stream.
func (s *Server) masterLinkUp() bool {
	l := s.currentLink()
	return l != nil && l.state.Load() == linkConnected
}

// replicaOf makes the server a replica of host:port: the old link ends,
// its own replicas are dropped (they resynchronize with the new history),
// and a new link starts with this server's history as the one to continue.
func (s *Server) replicaOf(host string, port int) {
	r := &s.repl
	r.mu.Lock()
	if r.link != nil {
		r.link.cancel()
	}
	r.isReplica.Store(true)
	s.ks.SetReplica(true, nil)
	s.cfg.SetReplicaOf(host, port)
	s.ensureBacklog()
	ctx, cancel := context.WithCancel(context.Background())
	l := &masterLink{host: host, port: port, ctx: ctx, cancel: cancel, db: r.restored.db}
	r.link = l
	replicas := append([]*replicaConn(nil), r.replicas...)
	r.mu.Unlock()
	for _, rc := range replicas {
		rc.c.disconnect()
	}
	s.wg.Add(1)
	go s.runMasterLink(l)
}

// becomeMaster is REPLICAOF NO ONE: the link ends and a new history
// starts, continuing the master's, whose ID stays valid up to here.
func (s *Server) becomeMaster() {
	r := &s.repl
	r.mu.Lock()
	if r.link != nil {
		r.link.cancel()
		r.link = nil
	}
	r.ids = r.ids.Promote(s.replOffset())
	r.isReplica.Store(false)
	s.ks.SetReplica(false, nil)
	s.cfg.SetReplicaOf("", 0)
	r.mu.Unlock()
	r.feed.owe() // its own commands start with a SELECT
}

// runMasterLink connects to the master until the link is cancelled,
// reconnecting a second after each failure.
func (s *Server) runMasterLink(l *masterLink) {
	defer s.wg.Done()
	stop := context.AfterFunc(l.ctx, func() { l.setConn(nil) })
	defer stop()
	go func() {
		select {
		case <-s.done:
			l.cancel()
		case <-l.ctx.Done():
		}
	}()
	for {
		err := s.syncWithMaster(l)
		if l.ctx.Err() != nil {
			return
		}
		l.state.Store(linkConnect)
		l.downSince.Store(time.Now().Unix())
		s.log.Printf("Connection with master %s:%d lost: %v", l.host, l.port, err)
		select {
		case <-l.ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// setConn replaces the link's connection, closing the old one; after the
// link is cancelled any new one is closed at once.
func (l *masterLink) setConn(conn net.Conn) {
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
func (s *Server) syncWithMaster(l *masterLink) error {
	l.state.Store(linkConnecting)
	addr := net.JoinHostPort(l.host, strconv.Itoa(l.port))
	s.log.Printf("Connecting to MASTER %s", addr)
	timeout := time.Duration(s.cfg.ReplTimeout()) * time.Second
	d := net.Dialer{Timeout: timeout}
	nc, err := d.DialContext(l.ctx, "tcp", addr)
	if err != nil {
		return err
	}
	conn := &masterConn{Conn: nc, l: l, s: s, timeout: timeout}
	l.setConn(conn)
	defer l.setConn(nil)
	s.log.Printf("MASTER <-> REPLICA sync started")
	br := bufio.NewReaderSize(conn, 64<<10)
	ids, off, err := s.handshake(conn, br)
	if err != nil {
		return err
	}
	line, err := replication.ReadLine(br)
	if err != nil {
		return err
	}
	reply, err := replication.ParseSyncReply(line)
	if s.failingOver() {
		if err != nil || reply.Full {
			s.abortFailover("Failover target rejected psync request")
			return errors.New("failover target rejected psync request")
		}
		s.endFailover()
	}
	if err != nil {
		return err
	}
	if reply.Full {
		s.log.Printf("Full resync from master: %s:%d", reply.ID, reply.Offset)
		if err := s.fullSync(l, br, reply); err != nil {
			return err
		}
	} else {
		s.log.Printf("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.")
		if reply.ID != "" && reply.ID != ids.ID {
			s.repl.mu.Lock()
			s.repl.ids = replication.IDs{ID: reply.ID, ID2: ids.ID, Second: off + 1}
			replicas := append([]*replicaConn(nil), s.repl.replicas...)
			s.repl.mu.Unlock()
			for _, rc := range replicas { // they learn the new ID as they come back
				rc.c.disconnect()
			}
		}
	}
	mc := s.newMasterClient(conn, l.db)
	l.client.Store(mc)
	s.ks.SetReplica(true, mc)
	l.state.Store(linkConnected)
	defer func() {
		s.ks.SetReplica(s.repl.isReplica.Load(), nil)
		l.client.Store(nil)
		l.db = int(mc.db.Load())
		s.removeClient(mc)
	}()
	s.sendAck()
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
				s.sendAck()
			case <-done:
				return
			}
		}
	}()
	return s.applyStream(l, mc, br)
}

// handshake sends PING, AUTH, REPLCONF and PSYNC, and returns the history
// and offset PSYNC asked to continue.
func (s *Server) handshake(conn net.Conn, br *bufio.Reader) (replication.IDs, int64, error) {
	ask := func(args ...string) (string, error) {
		argv := make([][]byte, len(args))
		for i, a := range args {
			argv[i] = []byte(a)
		}
		if _, err := conn.Write(resp.AppendCommand(nil, argv)); err != nil {
			return "", err
		}
		return replication.ReadLine(br)
	}
	reply, err := ask("PING")
	if err != nil {
		return replication.IDs{}, 0, err
	}
	if reply[0] == '-' && !startsWithAny(reply, "-NOAUTH", "-NOPERM", "-ERR operation not permitted") {
		return replication.IDs{}, 0, fmt.Errorf("error reply to PING from master: '%s'", reply)
	}
	if pass := s.cfg.MasterAuth(); pass != "" {
		args := []string{"AUTH", pass}
		if user := s.cfg.MasterUser(); user != "" {
			args = []string{"AUTH", user, pass}
		}
		if reply, err = ask(args...); err != nil {
			return replication.IDs{}, 0, err
		}
		if reply[0] == '-' {
			return replication.IDs{}, 0, fmt.Errorf("unable to AUTH to MASTER: %s", reply)
		}
	}
	port := s.cfg.ReplicaAnnouncePort()
	if port == 0 {
		port = s.listenPort()
	}
	if _, err = ask("REPLCONF", "listening-port", strconv.Itoa(port)); err != nil {
		return replication.IDs{}, 0, err
	}
	if ip := s.cfg.ReplicaAnnounceIP(); ip != "" {
		if _, err = ask("REPLCONF", "ip-address", ip); err != nil {
			return replication.IDs{}, 0, err
		}
	}
	if _, err = ask("REPLCONF", "capa", "eof", "capa", "psync2"); err != nil {
		return replication.IDs{}, 0, err
	}
	ids := s.replIDs()
	off := s.replOffset()
	id, want := ids.ID, strconv.FormatInt(off+1, 10)
	if s.repl.backlog.Load() == nil {
		id, want = "?", "-1"
	}
	argv := [][]byte{[]byte("PSYNC"), []byte(id), []byte(want)}
	if s.failingOver() {
		argv = append(argv, []byte("FAILOVER"))
	}
	_, err = conn.Write(resp.AppendCommand(nil, argv))
	return ids, off, err
}

func startsWithAny(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if len(s) >= len(p) && s[:len(p)] == p {
			return true
		}
	}
	return false
}

// fullSync receives the master's RDB into a file, empties the data set
// and loads it, under the exclusive lock (clients wait meanwhile), and
// starts its history at the master's offset.
func (s *Server) fullSync(l *masterLink, br *bufio.Reader, reply replication.SyncReply) error {
	l.state.Store(linkTransfer)
	path := filepath.Join(s.cfg.Dir(), fmt.Sprintf("temp-%d.%d.rdb", time.Now().Unix(), os.Getpid()))
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("opening the temp file needed for MASTER <-> REPLICA synchronization: %w", err)
	}
	defer os.Remove(path)
	l.syncRead.Store(0)
	n, err := replication.ReadRDB(br, &countingWriter{w: f, n: &l.syncRead})
	if err == nil {
		err = f.Sync()
	}
	f.Close()
	if err != nil {
		return fmt.Errorf("MASTER <-> REPLICA sync: reading the RDB: %w", err)
	}
	s.log.Printf("MASTER <-> REPLICA sync: received %d bytes from master to disk", n)
	s.repl.mu.Lock()
	replicas := append([]*replicaConn(nil), s.repl.replicas...)
	s.repl.mu.Unlock()
	for _, rc := range replicas { // their history is gone
		rc.c.disconnect()
	}
	s.log.Printf("MASTER <-> REPLICA sync: Flushing old data")
	var locks keyspace.LockSet
	locks.All()
	db := s.ks.Lock(0, &locks)
	for i := range s.ks.Len() {
		s.ks.DB(i).Flush()
	}
	s.scripts.FlushFunctions()
	streamDB := 0
	s.log.Printf("MASTER <-> REPLICA sync: Loading DB in memory")
	err = s.saver.LoadFromMaster(path, func(name, value []byte) {
		if string(name) == "repl-stream-db" {
			if v, ok := strnum.ParseInt(value); ok && v >= 0 && int(v) < s.ks.Len() {
				streamDB = int(v)
			}
		}
	})
	s.ks.Unlock(db, &locks)
	if err != nil {
		return fmt.Errorf("failed trying to load the MASTER synchronization DB from disk: %w", err)
	}
	s.repl.mu.Lock()
	s.repl.ids = replication.IDs{ID: reply.ID, ID2: replication.NoID, Second: -1}
	s.ensureBacklog().Reset(reply.Offset)
	s.repl.mu.Unlock()
	l.db = streamDB
	if s.aof.On() {
		s.aof.BGRewrite() // the AOF holds the old data set
	}
	s.log.Printf("MASTER <-> REPLICA sync: Finished with success")
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
// dispatch, and forwards their bytes to this server's backlog (its own
// replicas, a later promotion). A transaction's bytes go at its EXEC, as
// it is applied. Holding repl.applying for each keeps a snapshot for a
// replica of this one from falling between a command and its bytes.
func (s *Server) applyStream(l *masterLink, mc *Client, br *bufio.Reader) error {
	cr := replication.NewCommandReader(br, s.cfg.ProtoMaxBulkLen())
	var pending []byte
	for {
		args, raw, err := cr.Next()
		if err != nil {
			return err
		}
		if l.ctx.Err() != nil {
			return l.ctx.Err()
		}
		s.repl.applying.Lock()
		pending = append(pending, raw...)
		if len(args) > 0 {
			s.applyFromMaster(mc, args)
		}
		if mc.multi == nil {
			s.repl.backlog.Load().Append(pending)
			pending = pending[:0]
		}
		s.repl.applying.Unlock()
	}
}

// applyFromMaster runs one command of the master's stream.
func (s *Server) applyFromMaster(mc *Client, args [][]byte) {
	mc.traffic.commands.add(1)
	mc.ctx.Now = s.clock.UnixMilli()
	mc.lastSeen.Store(mc.ctx.Now)
	mc.dispatch(args, fromMaster)
	if len(mc.out.B) > 0 && mc.out.B[0] == '-' {
		s.log.Printf("== CRITICAL == This replica is sending an error to its master: '%s' after processing the command '%s'",
			trimCRLF(string(mc.out.B)), args[0])
	}
	mc.out.B = mc.out.B[:0]
}

// newMasterClient is the client a replica runs its master's commands as:
// it obeys (no checks), starts in database db, and shows in CLIENT LIST
// with flag M.
func (s *Server) newMasterClient(conn net.Conn, db int) *Client {
	c := &Client{s: s, id: s.nextClientID.Add(1), conn: conn, created: time.Now(), authenticated: true, obeys: true, masterClient: true}
	c.out.Proto = 2
	c.out.Errors = &s.stats.errors
	c.proto.Store(2)
	c.setUser(s.acl.defaultUser)
	c.ctx = Ctx{s: s, c: c, W: &c.out}
	c.ctx.locks.Owner = c
	c.queued.Store(-1)
	c.db.Store(int32(db))
	c.lastSeen.Store(s.clock.UnixMilli())
	s.mu.Lock()
	s.clients[c.id] = c
	s.mu.Unlock()
	return c
}

// sendAck sends REPLCONF ACK with the replica's offset to its master, and
// with the AOF on, FACK and the offset its AOF has fsynced (WAITAOF).
func (s *Server) sendAck() {
	l := s.currentLink()
	if l == nil {
		return
	}
	off := s.replOffset() // read before the AOF: what it fsynced then covers off
	argv := [][]byte{argREPLCONF, argACK, strconv.AppendInt(nil, off, 10)}
	if s.aof.On() {
		// The master's commands have no replies to wait for the AOF: it
		// is written (and under appendfsync always fsynced) here.
		if s.aof.Write() == nil && s.aof.Synced() >= s.aof.Fed() {
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
	l       *masterLink
	s       *Server
	timeout time.Duration
}

var errMasterTimeout = errors.New("MASTER timeout: no data nor PING received")

func (mc *masterConn) Read(p []byte) (int, error) {
	mc.Conn.SetReadDeadline(time.Now().Add(mc.timeout))
	n, err := mc.Conn.Read(p)
	if n > 0 {
		mc.l.lastIO.Store(time.Now().UnixMilli())
		mc.s.repl.netIn.Add(int64(n))
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		err = errMasterTimeout
	}
	return n, err
}
