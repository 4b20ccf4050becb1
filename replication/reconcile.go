package replication

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/resp"
)

// Reconciling. A replica promoted in durable mode (min-replicas-to-ack N)
// may lack writes its old master acknowledged: those reached N replicas,
// not necessarily this one. So before it takes a write of its own it
// hears from N replicas that continue its history, and a replica that is
// ahead of it first gives it the stream it lacks (REPLCONF GET-TAIL).
// With N at least half the replicas, every acknowledged write is then
// here: the N replicas heard and the N that acknowledged it share one, or
// this server is one of them (the old master, when it comes back as a
// replica, has them all). Meanwhile the server is a replica in all but
// name: writes are refused (-NOREPLICAS), it expires and evicts nothing
// of its own and adds nothing of its own to the stream; ROLE and INFO say
// master, so that Sentinel and the cluster's replicas follow it.

// reconcile is a promoted master's wait; guarded by mu.
type reconcile struct {
	need    int             // replicas to hear from
	heard   map[string]bool // replicas (ip:port) that continued this history
	db      int             // the stream's database at the promotion: a tail starts there
	pulling bool            // a tail is being taken
}

// Reconciling reports whether a promoted master still waits for its
// replicas before it takes writes.
func (m *Manager) Reconciling() bool { return m.reconciling.Load() }

// startReconcile begins the wait of a master just promoted from a replica
// whose stream was in database db; false when durable replies are off.
// Needs mu.
func (m *Manager) startReconcile(db int) bool {
	need := m.opt.Config.MinReplicasToAck()
	if need == 0 {
		return false
	}
	m.rec = reconcile{need: need, heard: map[string]bool{}, db: db}
	m.reconciling.Store(true)
	m.opt.Log.Printf("Promoted with min-replicas-to-ack %d: no writes until %d replicas continue this history (those ahead give theirs first)", need, need)
	return true
}

// stopReconcile ends the wait without its end (the server follows a
// master again). Needs mu.
func (m *Manager) stopReconcile() {
	m.rec = reconcile{}
	m.reconciling.Store(false)
}

// aheadOf reports, for a reconciling master, whether a replica asking to
// continue history id from want (PSYNC's next byte) has more of the old
// master's stream than this server: it must give it before it follows.
// It starts taking that stream from addr unless a take is running. Needs
// mu.
func (m *Manager) aheadOf(id string, want int64, addr string) bool {
	if !m.reconciling.Load() || id != m.ids.ID2 || want-1 <= m.Offset() {
		return false
	}
	if !m.rec.pulling {
		m.rec.pulling = true
		go m.takeTail(addr, id, m.rec.db)
	}
	return true
}

// continued counts a replica (by name) that continued this history; the
// wait ends with the last one needed.
func (m *Manager) continued(name string) {
	m.mu.Lock()
	if !m.reconciling.Load() || m.rec.heard[name] {
		m.mu.Unlock()
		return
	}
	m.rec.heard[name] = true
	heard := len(m.rec.heard)
	if heard < m.rec.need {
		m.mu.Unlock()
		return
	}
	// Its own stream starts with a SELECT, before any of its writes.
	m.feed.owe()
	m.stopReconcile()
	m.mu.Unlock()
	m.host.SetReplica(false)
	m.opt.Log.Printf("Replica %s continued this history, the last of %d needed: taking writes", name, heard)
}

// takeTail connects to the replica at addr, takes the stream of history
// id it has beyond this server's offset, and applies it, as its master's
// client, starting in database db.
func (m *Manager) takeTail(addr, id string, db int) {
	defer func() {
		m.mu.Lock()
		m.rec.pulling = false
		m.mu.Unlock()
	}()
	n, err := m.fetchTail(addr, id, db)
	if err != nil {
		m.opt.Log.Printf("Taking the stream replica %s has beyond offset %d failed: %v", addr, m.Offset(), err)
		return
	}
	m.opt.Log.Printf("Took %d bytes of the old master's stream from replica %s: offset %d", n, addr, m.Offset())
}

func (m *Manager) fetchTail(addr, id string, db int) (int, error) {
	timeout := time.Duration(m.opt.Config.ReplTimeout()) * time.Second
	nc, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return 0, err
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(timeout))
	br := bufio.NewReader(nc)
	if err := m.authenticate(nc, br); err != nil {
		return 0, err
	}
	from := m.Offset()
	tail, err := getTail(nc, br, id, from)
	if err != nil {
		return 0, err
	}
	mc := m.host.MasterClient(nc, db)
	defer mc.Close()
	cr := NewCommandReader(bytes.NewReader(tail), m.opt.Config.ProtoMaxBulkLen())
	a := applier{m: m, mc: mc}
	for read := from; ; {
		args, raw, err := cr.Next()
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrNoProgress) {
			break
		}
		if err != nil {
			return 0, err
		}
		// Nothing but the tail may have moved the stream meanwhile.
		if !m.reconciling.Load() || m.Offset() != read-int64(len(a.pending)) {
			return 0, errors.New("the server is no longer waiting for it")
		}
		a.apply(args, raw)
		read += int64(len(raw))
	}
	if len(a.pending) > 0 {
		return 0, errors.New("the stream ends inside a transaction")
	}
	m.mu.Lock()
	m.ids.Second = m.Offset() + 1 // its history continues the old one up to here
	m.mu.Unlock()
	return len(tail), nil
}

// getTail asks for the stream of history id from offset from on, as
// REPLCONF GET-TAIL answers it.
func getTail(nc net.Conn, br *bufio.Reader, id string, from int64) ([]byte, error) {
	req := resp.AppendCommand(nil, [][]byte{argREPLCONF, []byte("GET-TAIL"), []byte(id), strconv.AppendInt(nil, from, 10)})
	if _, err := nc.Write(req); err != nil {
		return nil, err
	}
	line, err := ReadLine(br)
	if err != nil {
		return nil, err
	}
	if line[0] != '$' {
		return nil, fmt.Errorf("REPLCONF GET-TAIL: %s", line)
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil || n < 0 {
		return nil, fmt.Errorf("REPLCONF GET-TAIL: bad length %q", line)
	}
	tail := make([]byte, n+2)
	if _, err := io.ReadFull(br, tail); err != nil {
		return nil, err
	}
	return tail[:n], nil
}

// serveTail is REPLCONF GET-TAIL id offset: the stream of history id this
// server holds from offset on, for a replica promoted meanwhile that
// lacks it.
func (m *Manager) serveTail(w *resp.Writer, id, offset []byte) {
	from, ok := strnum.ParseInt(offset)
	if !ok {
		w.Error(errNotInt)
		return
	}
	b := m.backlog.Load()
	if b == nil || string(id) != m.IDs().ID {
		w.Error("ERR GET-TAIL: this server's history is another")
		return
	}
	r := b.NewReader(from)
	if r == nil {
		w.Error("ERR GET-TAIL: the backlog does not hold that offset")
		return
	}
	defer r.Close()
	tail := make([]byte, r.Lag())
	w.Bulk(tail[:r.Read(tail)])
}
