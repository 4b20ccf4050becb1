package family

import (
	"fmt"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/resp"
)

// The families run without a server: a fake Host and Conn stand for it, so
// a handler's replies, events, propagation and block requests can be
// checked here; server/*_diff_test.go compare them with redis-server.

type fakeHost struct {
	cfg         *config.Config
	ks          *keyspace.Keyspace
	propagating bool
	subkeys     bool // a subkey channel is enabled
}

func (h *fakeHost) Config() *config.Config                   { return h.cfg }
func (h *fakeHost) Keyspace() *keyspace.Keyspace             { return h.ks }
func (h *fakeHost) Propagating() bool                        { return h.propagating }
func (h *fakeHost) IsReplica() bool                          { return false }
func (h *fakeHost) LRM() bool                                { return false }
func (h *fakeHost) ClusterEnabled() bool                     { return false }
func (h *fakeHost) TouchWatched(int, int64, ...*keyspace.DB) {}
func (h *fakeHost) FlushedAll(int64) bool                    { return false }
func (h *fakeHost) SharedIntegerPolicy() string              { return "" }
func (h *fakeHost) SubkeyEvents(config.KeyspaceEvents) bool  { return h.subkeys }

type fakeConn struct {
	events  []string // "event key"
	subkeys []string // "event key payload"
	blocked *command.BlockRequest
}

func (c *fakeConn) NoTouch() bool                       { return false }
func (c *fakeConn) CountLookup(int, []byte, bool, bool) {}
func (c *fakeConn) ByScript() bool                      { return false }
func (c *fakeConn) Obeys() bool                         { return false }
func (c *fakeConn) InvalidateAll()                      {}
func (c *fakeConn) ReadsAllKeys(*command.Ctx) bool      { return true }
func (c *fakeConn) ClusterIncompatible()                {}
func (c *fakeConn) Notify(_ config.KeyspaceEvents, event string, key []byte, _ int) {
	c.events = append(c.events, event+" "+string(key))
}
func (c *fakeConn) NotifySubkeys(_ config.KeyspaceEvents, event string, key []byte, s *command.Subkeys, _ int) {
	c.subkeys = append(c.subkeys, event+" "+string(key)+" "+string(s.Payload()))
}
func (c *fakeConn) Block(_ *command.Ctx, b command.BlockRequest)               { c.blocked = &b }
func (c *fakeConn) ElementExpired(*command.Ctx, keyspace.Type, []byte, []byte) {}

// handlers are the package's commands as Register binds them.
var handlers = func() map[string]func(*command.Ctx) {
	m := map[string]func(*command.Ctx){}
	Register(func(name string, run func(x *command.Ctx)) { m[name] = run })
	return m
}()

type fixture struct {
	host *fakeHost
	conn *fakeConn
	x    command.Ctx
	out  resp.Writer
	now  int64 // the commands' time, 1,000,000 ms unless set
}

func newFixture(t *testing.T) *fixture {
	cfg := config.Default()
	f := &fixture{host: &fakeHost{cfg: cfg, ks: keyspace.New(cfg.Databases(), keyspace.Hooks{})}, conn: &fakeConn{}}
	f.x.Attach(f.host, f.conn)
	f.x.W = &f.out
	return f
}

// run runs one command holding every lock, as the dispatcher would, and
// returns its reply.
func (f *fixture) run(t *testing.T, args ...string) string {
	t.Helper()
	run := handlers[strings.ToLower(args[0])]
	if run == nil {
		t.Fatalf("%s: not bound", args[0])
	}
	f.x.Args = f.x.Args[:0]
	for _, a := range args {
		f.x.Args = append(f.x.Args, []byte(a))
	}
	f.x.Name, f.x.Now, f.x.Dirty = strings.ToLower(args[0]), 1_000_000, 0
	if f.now != 0 {
		f.x.Now = f.now
	}
	f.out.B = f.out.B[:0]
	f.x.Locks.Reset()
	f.x.Locks.All()
	f.x.DB = f.host.ks.Lock(0, &f.x.Locks)
	run(&f.x)
	f.host.ks.Unlock(f.x.DB, &f.x.Locks)
	return string(f.out.B)
}

func TestEveryHandlerBoundOnce(t *testing.T) {
	if _, ok := handlers["xgroup|create"]; !ok || handlers["get"] == nil || handlers["del"] == nil {
		t.Fatalf("%d handlers, without GET, DEL or XGROUP CREATE", len(handlers))
	}
}

// TestStringCommands: replies, dirty counts and events of a write and a read.
func TestStringCommands(t *testing.T) {
	f := newFixture(t)
	if got := f.run(t, "SET", "k", "v"); got != "+OK\r\n" || f.x.Dirty != 1 {
		t.Fatalf("SET: %q, dirty %d", got, f.x.Dirty)
	}
	if got := f.run(t, "GET", "k"); got != "$1\r\nv\r\n" {
		t.Errorf("GET: %q", got)
	}
	if got := f.run(t, "INCR", "k"); got != "-"+command.ErrNotInt+"\r\n" {
		t.Errorf("INCR of a non-integer: %q", got)
	}
	if got := fmt.Sprint(f.conn.events); got != "[set k]" {
		t.Errorf("events: %s", got)
	}
}

// TestRelativeExpiryPropagatesAbsolute: SET ... EX propagates as SET ...
// PXAT when something consumes the propagation, and as sent otherwise.
func TestRelativeExpiryPropagatesAbsolute(t *testing.T) {
	f := newFixture(t)
	f.run(t, "SET", "k", "v", "EX", "100")
	if got := fmt.Sprintf("%q", f.x.Args); got != `["SET" "k" "v" "EX" "100"]` {
		t.Errorf("without a consumer: propagates %s", got)
	}
	f.host.propagating = true
	f.run(t, "SET", "k", "v", "EX", "100")
	if got := fmt.Sprintf("%q", f.x.Args); got != `["SET" "k" "v" "PXAT" "1100000"]` {
		t.Errorf("with a consumer: propagates %s", got)
	}
}

// TestBlockingPop: BLPOP pops at once from a list that has elements, and
// otherwise asks its client to block on the keys.
func TestBlockingPop(t *testing.T) {
	f := newFixture(t)
	f.run(t, "RPUSH", "l", "a")
	if got := f.run(t, "BLPOP", "none", "l", "0"); got != "*2\r\n$1\r\nl\r\n$1\r\na\r\n" || f.conn.blocked != nil {
		t.Fatalf("BLPOP of a list with an element: %q, blocked %v", got, f.conn.blocked != nil)
	}
	if got := f.run(t, "BLPOP", "none", "l", "0"); got != "" || f.conn.blocked == nil {
		t.Fatalf("BLPOP of empty keys: %q, blocked %v", got, f.conn.blocked != nil)
	}
	if got := fmt.Sprintf("%q", f.conn.blocked.Keys); got != `["none" "l"]` || f.conn.blocked.Type != keyspace.TypeList {
		t.Errorf("blocked on %s of type %v", got, f.conn.blocked.Type)
	}
}
