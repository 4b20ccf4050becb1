package server

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
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/replication"
)

// The master's side: SYNC and PSYNC make a connection a replica; its
// connection then leaves the loop for a goroutine of its own
// (serveReplica) that sends the snapshot, then the stream from the
// backlog, while another reads its acknowledgements.

func init() {
	bind("sync", psyncCommand)
	bind("psync", psyncCommand)
	bind("replconf", replconfCommand)
}

// A replica's states, as INFO names them.
const (
	replicaWaitBgsave int32 = iota
	replicaSendBulk
	replicaOnline
)

var replicaStateNames = [...]string{"wait_bgsave", "send_bulk", "online"}

// replicaConn is what a master knows of a replica connection.
type replicaConn struct {
	c          *Client
	port       atomic.Int64           // REPLCONF listening-port
	ip         atomic.Pointer[string] // REPLCONF ip-address
	capaEOF    bool                   // it reads a diskless transfer
	capaPsync2 bool                   // it understands +CONTINUE <new id>
	// Set by PSYNC: a full resynchronization (legacy: SYNC, no
	// +FULLRESYNC line), or reader is where the stream continues.
	full, legacy bool
	reader       atomic.Pointer[replication.Reader] // the cron reads it (output limit)
	attached     bool                               // PSYNC or SYNC ran: it is in the server's list
	state        atomic.Int32
	ackOff       atomic.Int64 // the last offset it acknowledged
	aofAckOff    atomic.Int64 // the last offset it said its AOF fsynced (FACK)
	ackTime      atomic.Int64 // Unix ms of its last acknowledgement
	softSince    atomic.Int64 // Unix s it passed its soft output limit (0: under it)
	acked        chan struct{}
	ackOnce      sync.Once
}

// replicaConn returns c's replica state, created by its first REPLCONF,
// SYNC or PSYNC.
func (c *Client) replicaConn() *replicaConn {
	if c.replica == nil {
		c.replica = &replicaConn{c: c, acked: make(chan struct{})}
		c.replica.aofAckOff.Store(-1)
	}
	return c.replica
}

// servesReplica reports whether c became a replica: its connection is to
// be served by serveReplica.
func (c *Client) servesReplica() bool { return c.replica != nil && c.replica.attached }

// name is the replica as Redis's log lines name it: ip:listening-port.
func (rc *replicaConn) name() string {
	return net.JoinHostPort(rc.addr(), strconv.FormatInt(rc.port.Load(), 10))
}

// addr is its IP: the one it announced, else its connection's.
func (rc *replicaConn) addr() string {
	if ip := rc.ip.Load(); ip != nil {
		return *ip
	}
	host, _, err := net.SplitHostPort(rc.c.peerAddr())
	if err != nil {
		return "?"
	}
	return host
}

// psyncCommand is PSYNC replid offset and SYNC: the stream continues
// from the backlog (+CONTINUE) when it holds the replica's history from
// its offset on, else a full resynchronization.
func psyncCommand(x *Ctx) {
	s, c := x.s, x.c
	if c.servesReplica() {
		return // asked twice: ignored, as Redis does
	}
	if len(x.Args) > 3 && cArgIs(x.Args[3], "failover") {
		if refusal := s.takeOverFromMaster(x); refusal != "" {
			x.W.Error(refusal)
			return
		}
	}
	if s.failoverState() != failoverNone {
		x.W.Error("NOMASTERLINK Can't SYNC while failing over")
		return
	}
	if s.repl.isReplica.Load() && !s.masterLinkUp() {
		x.W.Error("NOMASTERLINK Can't SYNC while not connected with my master")
		return
	}
	rc := c.replicaConn()
	rc.legacy = len(x.Args) == 1
	id, want := "", int64(-1)
	if !rc.legacy {
		id = string(x.Args[1])
		off, ok := strnum.ParseInt(x.Args[2])
		if !ok {
			x.W.Error(errNotInt)
			return
		}
		want = off
	}
	r := &s.repl
	r.mu.Lock()
	b := s.ensureBacklog()
	if !rc.legacy && r.ids.CanContinue(id, want) {
		rc.reader.Store(b.NewReader(want - 1)) // want is the next byte's offset, counted from 1
	}
	ids := r.ids
	rc.attached = true
	c.listedReplica.Store(true)
	r.replicas = append(r.replicas, rc)
	r.mu.Unlock()
	if rc.reader.Load() != nil {
		r.partialOK.Add(1)
		rc.state.Store(replicaOnline)
		rc.ackTime.Store(time.Now().UnixMilli())
		if rc.capaPsync2 {
			x.W.Simple("CONTINUE " + ids.ID)
		} else {
			x.W.Simple("CONTINUE")
		}
		s.log.Printf("Partial resynchronization request from %s accepted. Sending %d bytes of backlog starting from offset %d.", rc.name(), b.End()-want+1, want)
		return
	}
	if !rc.legacy && id != "?" {
		r.partialErr.Add(1)
	}
	r.fullSyncs.Add(1)
	rc.full = true
	s.log.Printf("Replica %s asks for synchronization; full resync", rc.name())
}

// replconfCommand is REPLCONF option value ...: a replica's listening
// port, address and capabilities before PSYNC; ACK offset, its
// acknowledgement (no reply); GETACK, a master asking for one.
func replconfCommand(x *Ctx) {
	s, c := x.s, x.c
	args := x.Args[1:]
	if len(args)%2 != 0 {
		x.W.Error(errSyntax)
		return
	}
	for i := 0; i < len(args); i += 2 {
		opt, val := args[i], args[i+1]
		switch {
		case cArgIs(opt, "listening-port"):
			port, ok := strnum.ParseInt(val)
			if !ok {
				x.W.Error(errNotInt)
				return
			}
			c.replicaConn().port.Store(port)
		case cArgIs(opt, "ip-address"):
			ip := string(val)
			c.replicaConn().ip.Store(&ip)
		case cArgIs(opt, "capa"):
			rc := c.replicaConn()
			switch {
			case cArgIs(val, "eof"):
				rc.capaEOF = true
			case cArgIs(val, "psync2"):
				rc.capaPsync2 = true
			}
		case cArgIs(opt, "ack"):
			if c.servesReplica() {
				if off, ok := strnum.ParseInt(val); ok {
					fack := int64(-1) // the offset its AOF has fsynced (Redis 7.2's FACK)
					if i+3 < len(args) && cArgIs(args[i+2], "fack") {
						if f, ok := strnum.ParseInt(args[i+3]); ok {
							fack = f
						}
					}
					c.replica.acknowledged(off, fack)
					s.serveReplWaiters()
					s.serveAOFWaiters()
					s.updateFailover()
				}
			}
			return // never a reply
		case cArgIs(opt, "getack"):
			if c.masterClient {
				s.sendAck()
			}
			return
		case cArgIs(opt, "rdb-only"), cArgIs(opt, "rdb-filter-only"):
		default:
			x.W.Error("ERR Unrecognized REPLCONF option: " + cString(opt))
			return
		}
	}
	x.W.OK()
}

// acknowledged records a replica's REPLCONF ACK: the offset it applied,
// and the one its AOF has fsynced (-1: not said).
func (rc *replicaConn) acknowledged(off, fack int64) {
	if off > rc.ackOff.Load() {
		rc.ackOff.Store(off)
	}
	if fack > rc.aofAckOff.Load() {
		rc.aofAckOff.Store(fack)
	}
	rc.ackTime.Store(time.Now().UnixMilli())
	rc.ackOnce.Do(func() { close(rc.acked) })
}

// serveReplica is the goroutine of a replica connection, from PSYNC or
// SYNC on: the snapshot when it needs one, then the stream, until the
// connection ends. Another goroutine reads what the replica sends.
func (c *Client) serveReplica() {
	s, rc := c.s, c.replica
	done := make(chan struct{})
	defer func() {
		c.disconnect()
		<-done
		s.removeReplica(rc)
		c.freeIn()
		c.close()
	}()
	if len(c.out.B) > 0 {
		n, err := c.write(c.out.B)
		c.traffic.wrote(int64(n))
		c.resetOut()
		if err != nil {
			close(done)
			return
		}
	}
	go c.readReplica(done)
	if rc.full && !s.sendSnapshot(c, rc, done) {
		return
	}
	s.streamTo(c, rc, done)
}

// readReplica runs what a replica sends (REPLCONF ACK), replying nothing,
// until its connection ends; then it closes done.
func (c *Client) readReplica(done chan struct{}) {
	defer close(done)
	defer c.disconnect()
	for {
		if c.r < c.w {
			keep := c.process()
			c.out.B = c.out.B[:0]
			if !keep {
				return
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

// removeReplica forgets a replica whose connection ended.
func (s *Server) removeReplica(rc *replicaConn) {
	r := &s.repl
	r.mu.Lock()
	for i, x := range r.replicas {
		if x == rc {
			r.replicas = append(r.replicas[:i], r.replicas[i+1:]...)
			break
		}
	}
	if len(r.replicas) == 0 {
		r.lonelySince = time.Now().Unix()
	}
	r.mu.Unlock()
	if rd := rc.reader.Load(); rd != nil {
		rd.Close()
	}
	s.log.Printf("Connection with replica %s lost.", rc.name())
}

// sendSnapshot sends the data set for a full resynchronization: diskless
// (streamed between markers) when the replica reads that and
// repl-diskless-sync is on, else written to a file first and sent as a
// bulk. The stream then continues from the snapshot's instant. It reports
// whether the replica is still there.
func (s *Server) sendSnapshot(c *Client, rc *replicaConn, gone <-chan struct{}) bool {
	rc.state.Store(replicaWaitBgsave)
	var fullresync []byte
	atStart := func() []string {
		b := s.repl.backlog.Load()
		off := b.End()
		rc.reader.Store(b.NewReader(off))
		s.repl.feed.owe()
		id := s.replIDs().ID
		if !rc.legacy {
			fullresync = fmt.Appendf(nil, "+FULLRESYNC %s %d\r\n", id, off)
		}
		return []string{"repl-stream-db", strconv.Itoa(s.streamDB()), "repl-id", id, "repl-offset", strconv.FormatInt(off, 10)}
	}
	stop := make(chan struct{})
	go func() {
		select {
		case <-gone:
		case <-s.done:
		}
		close(stop)
	}()
	if rc.capaEOF && s.cfg.ReplDisklessSync() {
		select { // let more replicas come, as Redis's delay does for one shared transfer
		case <-time.After(time.Duration(s.cfg.ReplDisklessSyncDelay()) * time.Second):
		case <-stop:
			return false
		}
		s.log.Printf("Starting BGSAVE for SYNC with target: replicas sockets")
		w := &disklessWriter{c: c, rc: rc, s: s}
		w.header = func() []byte { return fmt.Appendf(fullresync, "$EOF:%s\r\n", w.mark()) }
		err := s.saver.Replicate(w, atStart, stop)
		if err == nil {
			_, err = w.Write(nil) // an empty data set still sends its header
		}
		if err == nil {
			_, err = c.write([]byte(w.mark()))
		}
		if err != nil {
			s.log.Printf("Diskless transfer to replica %s failed: %v", rc.name(), err)
			return false
		}
		s.log.Printf("Synchronization with replica %s succeeded (diskless); waiting for its acknowledgement", rc.name())
		// It cannot tell where the file ends but by the marker: the
		// stream starts once it has loaded the file and acknowledged.
		select {
		case <-rc.acked:
		case <-stop:
			return false
		case <-time.After(time.Duration(s.cfg.ReplTimeout()) * time.Second):
			return false
		}
		rc.state.Store(replicaOnline)
		return true
	}
	return s.sendSnapshotFile(c, rc, atStart, &fullresync, stop)
}

// sendSnapshotFile is the disk-based transfer: +FULLRESYNC as the snapshot
// begins, newlines while the file is written, then the file as a bulk.
func (s *Server) sendSnapshotFile(c *Client, rc *replicaConn, atStart func() []string, fullresync *[]byte, stop <-chan struct{}) bool {
	path := filepath.Join(s.cfg.Dir(), fmt.Sprintf("temp-repl-%d-%d.rdb", os.Getpid(), c.id))
	f, err := os.Create(path)
	if err != nil {
		s.log.Printf("Can't create the RDB file for replica %s: %v", rc.name(), err)
		return false
	}
	defer os.Remove(path)
	defer f.Close()
	s.log.Printf("Starting BGSAVE for SYNC with target: disk")
	began := make(chan struct{})
	saved := make(chan error, 1)
	go func() {
		saved <- s.saver.Replicate(f, func() []string {
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
	if _, err := c.write(*fullresync); err != nil {
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
			c.write([]byte("\n")) // keeps the link alive while the file is written
		}
	}
	if err != nil {
		s.log.Printf("BGSAVE for replica %s failed: %v", rc.name(), err)
		return false
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		return false
	}
	rc.state.Store(replicaSendBulk)
	if _, err := c.write(fmt.Appendf(nil, "$%d\r\n", size)); err != nil {
		return false
	}
	n, err := io.Copy(writerFunc(c.write), bufio.NewReaderSize(f, 1<<20))
	s.repl.netOut.Add(n)
	if err != nil {
		return false
	}
	s.log.Printf("Synchronization with replica %s succeeded", rc.name())
	rc.state.Store(replicaOnline)
	rc.ackTime.Store(time.Now().UnixMilli())
	return true
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// disklessWriter sends the snapshot as it is written, after the header
// (+FULLRESYNC, $EOF:marker) known only at the snapshot's instant.
type disklessWriter struct {
	s      *Server
	c      *Client
	rc     *replicaConn
	header func() []byte
	marker string
	sent   bool
}

func (w *disklessWriter) mark() string {
	if w.marker == "" {
		var b [replication.EOFMarkLen / 2]byte
		rand.Read(b[:])
		w.marker = hex.EncodeToString(b[:])
	}
	return w.marker
}

func (w *disklessWriter) Write(p []byte) (int, error) {
	if !w.sent {
		w.sent = true
		w.rc.state.Store(replicaSendBulk)
		if _, err := w.c.write(w.header()); err != nil {
			return 0, err
		}
	}
	if w.s.replicaOverLimit(w.rc) {
		return 0, errOutputLimit
	}
	n, err := w.c.write(p)
	w.s.repl.netOut.Add(int64(n))
	w.c.traffic.wrote(int64(n))
	return n, err
}

var errOutputLimit = fmt.Errorf("output buffer limit reached")

// streamTo sends the stream from the replica's position as it grows,
// until its connection ends or it falls behind past its output buffer
// limit.
func (s *Server) streamTo(c *Client, rc *replicaConn, gone <-chan struct{}) {
	buf := make([]byte, 64<<10)
	reader := rc.reader.Load()
	for {
		n := reader.Read(buf)
		if n > 0 {
			if _, err := c.write(buf[:n]); err != nil {
				return
			}
			s.repl.netOut.Add(int64(n))
			c.traffic.wrote(int64(n))
			if s.replicaOverLimit(rc) {
				return
			}
			continue
		}
		select {
		case <-reader.Ready:
		case <-gone:
			return
		case <-s.done:
			return
		}
	}
}

// replicaOverLimit reports whether the stream a replica has not been sent
// passes client-output-buffer-limit replica (hard, or soft for its
// seconds), logging as Redis does. Its writer checks after each write, the
// cron while the writer waits for a replica that does not read.
func (s *Server) replicaOverLimit(rc *replicaConn) bool {
	reader := rc.reader.Load()
	if reader == nil {
		return false
	}
	lim := s.cfg.ClientOutputBufferLimit(config.ClassReplica)
	lag := uint64(reader.Lag())
	over := lim.Hard > 0 && lag > lim.Hard
	if lim.Soft > 0 && lag > lim.Soft {
		now := time.Now().Unix()
		if since := rc.softSince.Load(); since == 0 {
			rc.softSince.Store(now)
		} else if now-since > lim.SoftSeconds {
			over = true
		}
	} else {
		rc.softSince.Store(0)
	}
	if over {
		s.log.Printf("Client %s scheduled to be closed ASAP for overcoming of output buffer limits.", rc.name())
	}
	return over
}

// streamDB is the database the stream's next command runs in when the
// stream is a master's that a replica forwards: its master client's.
// A master owes a SELECT instead (feed.owe), and says 0.
func (s *Server) streamDB() int {
	if mc := s.masterClientNow(); mc != nil {
		return int(mc.db.Load())
	}
	return 0
}
