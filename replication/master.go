package replication

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/resp"
)

// The master's side: SYNC and PSYNC make a connection a replica; its
// connection then leaves the server's loop for a goroutine of its own
// (Serve) that sends the snapshot, then the stream from the backlog,
// while another reads its acknowledgements.

// A replica's states, as INFO names them.
const (
	replicaWaitBgsave int32 = iota
	replicaSendBulk
	replicaOnline
)

var replicaStateNames = [...]string{"wait_bgsave", "send_bulk", "online"}

// Replica is what a master knows of a replica connection.
type Replica struct {
	conn       Conn
	port       atomic.Int64           // REPLCONF listening-port
	ip         atomic.Pointer[string] // REPLCONF ip-address
	capaEOF    bool                   // it reads a diskless transfer
	capaPsync2 bool                   // it understands +CONTINUE <new id>
	// Set by PSYNC: a full resynchronization (legacy: SYNC, no
	// +FULLRESYNC line), or reader is where the stream continues.
	full, legacy bool
	reader       atomic.Pointer[Reader] // the cron reads it (output limit)
	attached     bool                   // PSYNC or SYNC ran: it is in the master's list
	state        atomic.Int32
	ackOff       atomic.Int64 // the last offset it acknowledged
	aofAckOff    atomic.Int64 // the last offset it said its AOF fsynced (FACK)
	ackTime      atomic.Int64 // Unix ms of its last acknowledgement
	softSince    atomic.Int64 // Unix s it passed its soft output limit (0: under it)
	acked        chan struct{}
	ackOnce      sync.Once
}

// replicaOf returns p's replica state on conn, created by its first
// REPLCONF, SYNC or PSYNC.
func (p *Peer) replicaOf(conn Conn) *Replica {
	if p.replica == nil {
		p.replica = &Replica{conn: conn, acked: make(chan struct{})}
		p.replica.aofAckOff.Store(-1)
	}
	return p.replica
}

// name is the replica as Redis's log lines name it: ip:listening-port.
func (r *Replica) name() string {
	return net.JoinHostPort(r.addr(), strconv.FormatInt(r.port.Load(), 10))
}

// addr is its IP: the one it announced, else its connection's.
func (r *Replica) addr() string {
	if ip := r.ip.Load(); ip != nil {
		return *ip
	}
	host, _, err := net.SplitHostPort(r.conn.RemoteAddr())
	if err != nil {
		return "?"
	}
	return host
}

const (
	errSyntax = "ERR syntax error"
	errNotInt = "ERR value is not an integer or out of range"
)

// Psync is PSYNC replid offset [FAILOVER] and SYNC (args as sent) from the
// client p on conn: the stream continues from the backlog (+CONTINUE)
// when it holds the replica's history from its offset on, else a full
// resynchronization. Either way p is a replica from now on, to Serve.
func (m *Manager) Psync(w *resp.Writer, args [][]byte, p *Peer, conn Conn) {
	if p.Serving() {
		return // asked twice: ignored, as Redis does
	}
	if len(args) > 3 && cstr.ArgIs(args[3], "failover") {
		if refusal := m.takeOverFromMaster(string(args[1]), conn.RemoteAddr()); refusal != "" {
			w.Error(refusal)
			return
		}
	}
	if m.failoverState() != failoverNone {
		w.Error("NOMASTERLINK Can't SYNC while failing over")
		return
	}
	if m.isReplica.Load() && !m.linkUp() {
		w.Error("NOMASTERLINK Can't SYNC while not connected with my master")
		return
	}
	r := p.replicaOf(conn)
	r.legacy = len(args) == 1
	id, want := "", int64(-1)
	if !r.legacy {
		id = string(args[1])
		off, ok := strnum.ParseInt(args[2])
		if !ok {
			w.Error(errNotInt)
			return
		}
		want = off
	}
	m.mu.Lock()
	b := m.ensureBacklog()
	if !r.legacy && m.aheadOf(id, want, r.name()) {
		m.mu.Unlock()
		w.Error("NOMASTERLINK Can't SYNC while the promoted master takes the stream this replica has beyond it")
		return
	}
	if !r.legacy && m.ids.CanContinue(id, want) {
		r.reader.Store(b.NewReader(want - 1)) // want is the next byte's offset, counted from 1
	}
	ids := m.ids
	r.attached = true
	p.listed.Store(true)
	m.replicas = append(m.replicas, r)
	m.mu.Unlock()
	if r.reader.Load() != nil {
		m.partialOK.Add(1)
		r.state.Store(replicaOnline)
		r.ackTime.Store(time.Now().UnixMilli())
		if r.capaPsync2 {
			w.Simple("CONTINUE " + ids.ID)
		} else {
			w.Simple("CONTINUE")
		}
		m.opt.Log.Printf("Partial resynchronization request from %s accepted. Sending %d bytes of backlog starting from offset %d.", r.name(), b.End()-want+1, want)
		m.continued(r.name())
		return
	}
	if !r.legacy && id != "?" {
		m.partialErr.Add(1)
	}
	m.fullSyncs.Add(1)
	r.full = true
	m.opt.Log.Printf("Replica %s asks for synchronization; full resync", r.name())
}

// Replconf is REPLCONF option value ... (args as sent) from the client p
// on conn: a replica's listening port, address and capabilities before
// PSYNC; ACK offset, its acknowledgement (no reply); GETACK, a master
// asking for one.
func (m *Manager) Replconf(w *resp.Writer, args [][]byte, p *Peer, conn Conn) {
	args = args[1:]
	if len(args) == 3 && cstr.ArgIs(args[0], "get-tail") {
		m.serveTail(w, args[1], args[2])
		return
	}
	if len(args)%2 != 0 {
		w.Error(errSyntax)
		return
	}
	for i := 0; i < len(args); i += 2 {
		opt, val := args[i], args[i+1]
		switch {
		case cstr.ArgIs(opt, "listening-port"):
			port, ok := strnum.ParseInt(val)
			if !ok {
				w.Error(errNotInt)
				return
			}
			p.replicaOf(conn).port.Store(port)
		case cstr.ArgIs(opt, "ip-address"):
			ip := string(val)
			p.replicaOf(conn).ip.Store(&ip)
		case cstr.ArgIs(opt, "capa"):
			r := p.replicaOf(conn)
			switch {
			case cstr.ArgIs(val, "eof"):
				r.capaEOF = true
			case cstr.ArgIs(val, "psync2"):
				r.capaPsync2 = true
			}
		case cstr.ArgIs(opt, "ack"):
			if p.Serving() {
				if off, ok := strnum.ParseInt(val); ok {
					fack := int64(-1) // the offset its AOF has fsynced (Redis 7.2's FACK)
					if i+3 < len(args) && cstr.ArgIs(args[i+2], "fack") {
						if f, ok := strnum.ParseInt(args[i+3]); ok {
							fack = f
						}
					}
					p.replica.acknowledged(off, fack)
					m.host.Acknowledged()
					m.updateFailover()
				}
			}
			return // never a reply
		case cstr.ArgIs(opt, "getack"):
			if p.master {
				m.sendAck()
			}
			return
		case cstr.ArgIs(opt, "rdb-only"), cstr.ArgIs(opt, "rdb-filter-only"):
		default:
			w.Error("ERR Unrecognized REPLCONF option: " + string(cstr.Bytes(opt)))
			return
		}
	}
	w.OK()
}

// acknowledged records a replica's REPLCONF ACK: the offset it applied,
// and the one its AOF has fsynced (-1: not said).
func (r *Replica) acknowledged(off, fack int64) {
	if off > r.ackOff.Load() {
		r.ackOff.Store(off)
	}
	if fack > r.aofAckOff.Load() {
		r.aofAckOff.Store(fack)
	}
	r.ackTime.Store(time.Now().UnixMilli())
	r.ackOnce.Do(func() { close(r.acked) })
}

// Serve serves the connection of p, which SYNC or PSYNC made a replica:
// pending (the replies before) first, then the snapshot when it needs
// one, then the stream, until the connection ends. Another goroutine runs
// what the replica sends.
func (m *Manager) Serve(p *Peer, pending []byte) {
	r := p.replica
	done := make(chan struct{})
	defer func() {
		r.conn.Close()
		<-done
		m.removeReplica(r)
	}()
	if len(pending) > 0 {
		n, err := r.conn.Write(pending)
		r.conn.Sent(n)
		if err != nil {
			close(done)
			return
		}
	}
	go func() {
		defer close(done)
		defer r.conn.Close()
		r.conn.ReadCommands()
	}()
	if r.full && !m.sendSnapshot(r, done) {
		return
	}
	m.streamTo(r, done)
}

// removeReplica forgets a replica whose connection ended.
func (m *Manager) removeReplica(r *Replica) {
	m.mu.Lock()
	for i, x := range m.replicas {
		if x == r {
			m.replicas = append(m.replicas[:i], m.replicas[i+1:]...)
			break
		}
	}
	if len(m.replicas) == 0 {
		m.lonelySince = time.Now().Unix()
	}
	m.mu.Unlock()
	if rd := r.reader.Load(); rd != nil {
		rd.Close()
	}
	m.opt.Log.Printf("Connection with replica %s lost.", r.name())
}

// disconnectReplicas ends the replicas' connections: their history is
// gone or changed, they come back for the new one.
func (m *Manager) disconnectReplicas() {
	m.mu.Lock()
	replicas := append([]*Replica(nil), m.replicas...)
	m.mu.Unlock()
	for _, r := range replicas {
		r.conn.Close()
	}
}

// sendSnapshot sends the data set for a full resynchronization: diskless
// (streamed between markers) when the replica reads that and
// repl-diskless-sync is on, else written to a file first and sent as a
// bulk. The stream then continues from the snapshot's instant. It reports
// whether the replica is still there.
func (m *Manager) sendSnapshot(r *Replica, gone <-chan struct{}) bool {
	cfg, log := m.opt.Config, m.opt.Log
	r.state.Store(replicaWaitBgsave)
	var fullresync []byte
	atStart := func() []string {
		b := m.backlog.Load()
		off := b.End()
		r.reader.Store(b.NewReader(off))
		m.feed.owe()
		id := m.IDs().ID
		if !r.legacy {
			fullresync = fmt.Appendf(nil, "+FULLRESYNC %s %d\r\n", id, off)
		}
		return []string{"repl-stream-db", strconv.Itoa(m.streamDB()), "repl-id", id, "repl-offset", strconv.FormatInt(off, 10)}
	}
	stop := make(chan struct{})
	go func() {
		select {
		case <-gone:
		case <-m.opt.Done:
		}
		close(stop)
	}()
	if r.capaEOF && cfg.ReplDisklessSync() {
		if !m.disklessDelay(stop) {
			return false
		}
		log.Printf("Starting BGSAVE for SYNC with target: replicas sockets")
		w := &disklessWriter{m: m, r: r}
		w.header = func() []byte { return fmt.Appendf(fullresync, "$EOF:%s\r\n", w.mark()) }
		err := m.host.Snapshot(w, atStart, stop)
		if err == nil {
			_, err = w.Write(nil) // an empty data set still sends its header
		}
		if err == nil {
			_, err = r.conn.Write([]byte(w.mark()))
		}
		if err != nil {
			log.Printf("Diskless transfer to replica %s failed: %v", r.name(), err)
			return false
		}
		log.Printf("Synchronization with replica %s succeeded (diskless); waiting for its acknowledgement", r.name())
		// It cannot tell where the file ends but by the marker: the
		// stream starts once it has loaded the file and acknowledged.
		select {
		case <-r.acked:
		case <-stop:
			return false
		case <-time.After(time.Duration(cfg.ReplTimeout()) * time.Second):
			return false
		}
		r.state.Store(replicaOnline)
		return true
	}
	return m.sendSnapshotFile(r, atStart, &fullresync, stop)
}

// disklessDelay waits out repl-diskless-sync-delay before a diskless
// transfer, to let more replicas come as Redis's delay does for one shared
// transfer, or less once repl-diskless-sync-max-replicas replicas wait. It
// reports false when the replica went away meanwhile.
func (m *Manager) disklessDelay(stop <-chan struct{}) bool {
	cfg := m.opt.Config
	began := time.Now().UnixNano()
	deadline := time.After(time.Duration(cfg.ReplDisklessSyncDelay()) * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-deadline:
			return true
		case <-stop:
			return false
		case <-tick.C:
			// The replicas that were waiting when the count was reached go
			// together, as into one shared transfer.
			if m.disklessGo.Load() >= began {
				return true
			}
			if most := cfg.ReplDisklessSyncMaxReplicas(); most > 0 && m.waitingForSnapshot() >= most {
				m.disklessGo.Store(time.Now().UnixNano())
				return true
			}
		}
	}
}

// waitingForSnapshot counts the replicas waiting for a full sync's snapshot.
func (m *Manager) waitingForSnapshot() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, r := range m.replicas {
		if r.state.Load() == replicaWaitBgsave {
			n++
		}
	}
	return n
}

// sendSnapshotFile is the disk-based transfer: +FULLRESYNC as the snapshot
// begins, newlines while the file is written, then the file as a bulk.
func (m *Manager) sendSnapshotFile(r *Replica, atStart func() []string, fullresync *[]byte, stop <-chan struct{}) bool {
	log := m.opt.Log
	path := filepath.Join(m.opt.Config.Dir(), fmt.Sprintf("temp-repl-%d-%d.rdb", os.Getpid(), r.conn.ID()))
	f, err := os.Create(path)
	if err != nil {
		log.Printf("Can't create the RDB file for replica %s: %v", r.name(), err)
		return false
	}
	defer os.Remove(path)
	defer f.Close()
	log.Printf("Starting BGSAVE for SYNC with target: disk")
	began := make(chan struct{})
	saved := make(chan error, 1)
	go func() {
		saved <- m.host.Snapshot(f, func() []string {
			aux := atStart()
			close(began)
			return aux
		}, stop)
	}()
	select {
	case <-began:
	case err = <-saved:
		return false
	}
	if _, err := r.conn.Write(*fullresync); err != nil {
		<-saved
		return false
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for waiting := true; waiting; {
		select {
		case err = <-saved:
			waiting = false
		case <-tick.C:
			r.conn.Write([]byte("\n")) // keeps the link alive while the file is written
		}
	}
	if err != nil {
		log.Printf("BGSAVE for replica %s failed: %v", r.name(), err)
		return false
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		return false
	}
	r.state.Store(replicaSendBulk)
	if _, err := r.conn.Write(fmt.Appendf(nil, "$%d\r\n", size)); err != nil {
		return false
	}
	n, err := io.Copy(r.conn, bufio.NewReaderSize(f, 1<<20))
	m.netOut.Add(n)
	if err != nil {
		return false
	}
	log.Printf("Synchronization with replica %s succeeded", r.name())
	r.state.Store(replicaOnline)
	r.ackTime.Store(time.Now().UnixMilli())
	return true
}

// disklessWriter sends the snapshot as it is written, after the header
// (+FULLRESYNC, $EOF:marker) known only at the snapshot's instant.
type disklessWriter struct {
	m      *Manager
	r      *Replica
	header func() []byte
	marker string
	sent   bool
}

func (w *disklessWriter) mark() string {
	if w.marker == "" {
		var b [EOFMarkLen / 2]byte
		rand.Read(b[:])
		w.marker = hex.EncodeToString(b[:])
	}
	return w.marker
}

func (w *disklessWriter) Write(p []byte) (int, error) {
	if !w.sent {
		w.sent = true
		w.r.state.Store(replicaSendBulk)
		if _, err := w.r.conn.Write(w.header()); err != nil {
			return 0, err
		}
	}
	if w.m.overLimit(w.r) {
		return 0, errOutputLimit
	}
	n, err := w.r.conn.Write(p)
	w.m.netOut.Add(int64(n))
	w.r.conn.Sent(n)
	return n, err
}

var errOutputLimit = fmt.Errorf("output buffer limit reached")

// streamTo sends the stream from the replica's position as it grows,
// until its connection ends or it falls behind past its output buffer
// limit.
func (m *Manager) streamTo(r *Replica, gone <-chan struct{}) {
	buf := make([]byte, 64<<10)
	reader := r.reader.Load()
	for {
		n := reader.Read(buf)
		if n > 0 {
			if _, err := r.conn.Write(buf[:n]); err != nil {
				return
			}
			m.netOut.Add(int64(n))
			r.conn.Sent(n)
			if m.overLimit(r) {
				return
			}
			continue
		}
		select {
		case <-reader.Ready:
		case <-gone:
			return
		case <-m.opt.Done:
			return
		}
	}
}

// overLimit reports whether the stream a replica has not been sent
// passes client-output-buffer-limit replica (hard, or soft for its
// seconds), logging as Redis does. Its writer checks after each write, the
// cron while the writer waits for a replica that does not read.
func (m *Manager) overLimit(r *Replica) bool {
	reader := r.reader.Load()
	if reader == nil {
		return false
	}
	lim := m.opt.Config.ClientOutputBufferLimit(config.ClassReplica)
	lag := uint64(reader.Lag())
	over := lim.Hard > 0 && lag > lim.Hard
	if lim.Soft > 0 && lag > lim.Soft {
		now := time.Now().Unix()
		if since := r.softSince.Load(); since == 0 {
			r.softSince.Store(now)
		} else if now-since > lim.SoftSeconds {
			over = true
		}
	} else {
		r.softSince.Store(0)
	}
	if over {
		m.opt.Log.Printf("Client %s scheduled to be closed ASAP for overcoming of output buffer limits.", r.name())
	}
	return over
}

// streamDB is the database the stream's next command runs in when the
// stream is a master's that a replica forwards: its master client's.
// A master owes a SELECT instead (feed.owe), and says 0.
func (m *Manager) streamDB() int {
	if mc := m.masterClient(); mc != nil {
		return mc.DB()
	}
	return 0
}
