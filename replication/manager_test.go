package replication

import (
	"io"
	"log"
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/keyhive/keyhive/changes"
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/resp"
)

// fakeHost is a Host with no data set: the Manager's decisions are
// tested without a server.
type fakeHost struct{ acks int }

func (h *fakeHost) Snapshot(io.Writer, func() []string, <-chan struct{}) error { return nil }
func (h *fakeHost) LoadSnapshot(string, func(name, value []byte)) error        { return nil }
func (h *fakeHost) MasterClient(net.Conn, int) MasterClient                    { return nil }
func (h *fakeHost) SetReplica(bool)                                            {}
func (h *fakeHost) PauseWrites(int64)                                          {}
func (h *fakeHost) ListenPort() int                                            { return 0 }
func (h *fakeHost) Acknowledged()                                              { h.acks++ }

type noAOF struct{}

func (noAOF) On() bool        { return false }
func (noAOF) Write() error    { return nil }
func (noAOF) Fed() int64      { return 0 }
func (noAOF) Synced() int64   { return 0 }
func (noAOF) BGRewrite() bool { return false }

// fakeConn is a replica's connection that is never served.
type fakeConn struct{}

func (fakeConn) Write(p []byte) (int, error) { return len(p), nil }
func (fakeConn) Sent(int)                    {}
func (fakeConn) Close()                      {}
func (fakeConn) RemoteAddr() string          { return "10.0.0.7:5000" }
func (fakeConn) ID() uint64                  { return 1 }
func (fakeConn) ReadCommands()               {}

func newTestManager(t *testing.T) (*Manager, *changes.Stream, *fakeHost) {
	stream := new(changes.Stream)
	host := new(fakeHost)
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	m := New(Options{Config: config.Default(), Log: log.New(io.Discard, "", 0), Changes: stream,
		AOF: noAOF{}, Instant: new(sync.Mutex), Done: done, Goroutines: new(sync.WaitGroup)}, host)
	return m, stream, host
}

func command(args ...string) [][]byte {
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	return argv
}

// TestFeedOnlyWithBacklog: a master without a backlog is not subscribed to
// the change stream (its offset stays); with one, each change is written
// as the replicas apply it, a SELECT first.
func TestFeedOnlyWithBacklog(t *testing.T) {
	m, stream, _ := newTestManager(t)
	set := command("SET", "k", "v")
	stream.Publish(0, set)
	if stream.Active() || m.Offset() != 0 {
		t.Fatalf("without a backlog: subscribed %v, offset %d", stream.Active(), m.Offset())
	}
	m.EnsureBacklog()
	stream.Publish(2, set)
	want := int64(len(appendSelect(nil, 2)) + len(resp.AppendCommand(nil, set)))
	if m.Offset() != want {
		t.Fatalf("offset %d after a SET in db 2, want %d", m.Offset(), want)
	}
}

// TestPsyncDecision: PSYNC continues the history it holds from an offset
// in the backlog (+CONTINUE with the ID to a psync2 replica), and is a
// full resynchronization otherwise; ACKs count for WAIT once online.
func TestPsyncDecision(t *testing.T) {
	m, stream, host := newTestManager(t)
	m.EnsureBacklog()
	stream.Publish(0, command("SET", "k", "v"))
	id, next := m.IDs().ID, strconv.FormatInt(m.Offset()+1, 10)

	var full Peer
	var w resp.Writer
	m.Psync(&w, command("PSYNC", "?", "-1"), &full, fakeConn{})
	if len(w.B) != 0 || !full.Serving() || !full.replica.full {
		t.Fatalf("PSYNC ? -1: reply %q, serving %v", w.B, full.Serving())
	}

	var cont Peer
	w.B = w.B[:0]
	m.Replconf(&w, command("REPLCONF", "capa", "psync2"), &cont, fakeConn{})
	w.B = w.B[:0]
	m.Psync(&w, command("PSYNC", id, next), &cont, fakeConn{})
	if string(w.B) != "+CONTINUE "+id+"\r\n" || cont.replica.full {
		t.Fatalf("PSYNC %s %s: reply %q", id, next, w.B)
	}
	if !cont.IsReplica() || m.ReplicasAt(m.Offset(), false) != 0 {
		t.Fatal("a replica that acknowledged nothing counts for WAIT")
	}
	m.Replconf(&w, command("REPLCONF", "ACK", strconv.FormatInt(m.Offset(), 10)), &cont, fakeConn{})
	if m.ReplicasAt(m.Offset(), false) != 1 || host.acks != 1 {
		t.Fatalf("after its ACK: %d replicas at the offset, host told %d times", m.ReplicasAt(m.Offset(), false), host.acks)
	}
}
