// Package keyhivetest runs a real Keyhive server inside a Go test, for code
// that talks to Redis: point any client at Addr, move time forward with
// FastForward instead of sleeping, and check keys directly.
//
//	func TestCache(t *testing.T) {
//		srv := keyhivetest.Run(t) // closed when the test ends
//		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
//		... the code under test, using rdb ...
//		srv.CheckGet(t, "user:1:name", "ada")
//		srv.FastForward(time.Hour) // keys with a TTL of an hour or less are gone
//		if srv.Exists("user:1:name") { ... }
//	}
//
// The server is the same library cmd/keyhive runs, in-process on a free
// loopback port, with every command and Redis's behaviour: there is no
// emulation to fall out of step with. RunWith and Start take config
// directives as name, value pairs (RunWith(t, "maxmemory", "64mb",
// "maxmemory-policy", "allkeys-lru")); snapshots are off and the data
// directory is a temporary one.
//
// Time is a manual clock: it starts at the wall-clock time of Run (or
// Start) and moves only by FastForward. Keys past their TTL then expire as
// on Redis when that much time passes: at once for any command that
// reaches them (lazy expiry) and, for the rest, within a tick of the
// server's active expiry cycle (100 ms at the default hz 10), so counts
// such as DBSIZE can lag that long.
//
// The direct checks (Get, Exists, TTL, Keys, CheckGet, ...) run real
// commands through the server, on database 0, over a connection of their
// own opened at first use (named keyhivetest in CLIENT LIST). Anything
// unexpected (a key of another type, a lost connection) fails the test, or
// panics for a server made by Start, and the check returns zero values. A
// Server is safe for use by any number of goroutines.
package keyhivetest

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/keyhive/keyhive/clock"
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/server"
)

// Server is a running Keyhive server with a manual clock.
type Server struct {
	srv   *server.Server
	clock *clock.Manual
	dir   string
	tb    testing.TB // nil for Start: failures panic
	auth  string     // the requirepass directive, for the checks' connection

	mu     sync.Mutex // the checks' connection, one command at a time
	conn   *difftest.Conn
	closed bool
}

// Run starts a server for the test and closes it when the test ends. It
// fails the test if the server cannot start.
func Run(tb testing.TB) *Server {
	tb.Helper()
	return RunWith(tb)
}

// RunWith is Run with config directives as name, value pairs, as CONFIG SET
// takes them: RunWith(t, "maxmemory", "64mb").
func RunWith(tb testing.TB, directives ...string) *Server {
	tb.Helper()
	s, err := Start(directives...)
	if err != nil {
		tb.Fatal(err)
	}
	s.tb = tb
	tb.Cleanup(s.Close)
	return s
}

// Start starts a server outside a test's lifetime (TestMain, examples); the
// caller closes it. Its checks panic where Run's fail the test.
func Start(directives ...string) (*Server, error) {
	if len(directives)%2 != 0 {
		return nil, fmt.Errorf("keyhivetest: directives are name, value pairs; %q has no value", directives[len(directives)-1])
	}
	dir, err := os.MkdirTemp("", "keyhivetest")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, clock: clock.NewManual(time.Now())}
	// Later directives win, so the caller's replace these defaults.
	args := []string{"--port", "0", "--bind", "127.0.0.1", "--save", "", "--dir", dir}
	for i := 0; i < len(directives); i += 2 {
		args = append(args, "--"+directives[i], directives[i+1])
		if strings.EqualFold(directives[i], "requirepass") {
			s.auth = directives[i+1]
		}
	}
	cfg, err := config.FromArgs(args)
	if err == nil {
		s.srv, err = server.New(cfg, server.WithClock(s.clock))
	}
	if err == nil {
		err = s.srv.Start()
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("keyhivetest: %w", err)
	}
	return s, nil
}

// Close stops the server and removes its data directory. Run's servers are
// closed when the test ends; closing twice is harmless.
func (s *Server) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	if s.conn != nil {
		s.conn.Close()
	}
	s.srv.Close()
	os.RemoveAll(s.dir)
}

// Addr is the server's address, "127.0.0.1:port".
func (s *Server) Addr() string { return s.srv.Addr() }

// Now is the server's time.
func (s *Server) Now() time.Time { return time.UnixMilli(s.clock.UnixMilli()) }

// FastForward moves the server's clock forward by d (whole milliseconds).
func (s *Server) FastForward(d time.Duration) { s.clock.Advance(d) }

// FlushAll deletes every key of every database.
func (s *Server) FlushAll() { s.do("FLUSHALL") }

// Get returns key's string value; ok is false when the key does not exist.
func (s *Server) Get(key string) (value string, ok bool) {
	r, done := s.do("GET", key)
	return r.Str, done && !r.Null
}

// Set sets key to value, with no TTL.
func (s *Server) Set(key, value string) { s.do("SET", key, value) }

// Del deletes key and reports whether it existed.
func (s *Server) Del(key string) bool {
	r, _ := s.do("DEL", key)
	return r.Int == 1
}

// Exists reports whether key exists.
func (s *Server) Exists(key string) bool {
	r, _ := s.do("EXISTS", key)
	return r.Int == 1
}

// Type is key's type as TYPE names it ("string", "hash", ...; "none" when
// it does not exist).
func (s *Server) Type(key string) string {
	r, _ := s.do("TYPE", key)
	return r.Str
}

// TTL is the time key has left; 0 when it has no TTL or does not exist.
func (s *Server) TTL(key string) time.Duration {
	r, _ := s.do("PTTL", key)
	return time.Duration(max(r.Int, 0)) * time.Millisecond
}

// SetTTL gives an existing key a TTL of d (whole milliseconds).
func (s *Server) SetTTL(key string, d time.Duration) { s.do("PEXPIRE", key, d.Milliseconds()) }

// Keys returns every key, sorted.
func (s *Server) Keys() []string {
	r, _ := s.do("KEYS", "*")
	return sortedStrings(r)
}

// HGet returns a hash field's value; ok is false when the key or the field
// does not exist.
func (s *Server) HGet(key, field string) (value string, ok bool) {
	r, done := s.do("HGET", key, field)
	return r.Str, done && !r.Null
}

// HSet sets fields of a hash, given as field, value pairs.
func (s *Server) HSet(key string, fieldValues ...string) {
	args := []any{"HSET", key}
	for _, v := range fieldValues {
		args = append(args, v)
	}
	s.do(args...)
}

// Members returns a set's members, sorted.
func (s *Server) Members(key string) []string {
	r, _ := s.do("SMEMBERS", key)
	return sortedStrings(r)
}

// List returns a list's elements in order.
func (s *Server) List(key string) []string {
	r, _ := s.do("LRANGE", key, 0, -1)
	return elements(r)
}

// CheckGet fails the test unless key holds the string want.
func (s *Server) CheckGet(t testing.TB, key, want string) {
	t.Helper()
	if got, ok := s.Get(key); !ok {
		t.Errorf("%s: no such key, want %q", key, want)
	} else if got != want {
		t.Errorf("%s: got %q, want %q", key, got, want)
	}
}

// CheckList fails the test unless key is the list want.
func (s *Server) CheckList(t testing.TB, key string, want ...string) {
	t.Helper()
	if got := s.List(key); !slices.Equal(got, want) {
		t.Errorf("%s: got list %q, want %q", key, got, want)
	}
}

// CheckMembers fails the test unless key is the set of want (in any order).
func (s *Server) CheckMembers(t testing.TB, key string, want ...string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	if got := s.Members(key); !slices.Equal(got, want) {
		t.Errorf("%s: got members %q, want %q", key, got, want)
	}
}

// do runs one command on the checks' connection, opening it at first use.
// ok is false, and the failure reported, when the command could not run or
// replied with an error.
func (s *Server) do(args ...any) (r difftest.Reply, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		s.fail("%v: the server is closed", args)
		return r, false
	}
	r, err := s.roundTrip(args)
	if err == nil && r.IsError() {
		err = fmt.Errorf("%s", r.Str)
	}
	if err != nil {
		s.fail("%v: %v", args, err)
		return difftest.Reply{}, false
	}
	return r, true
}

// roundTrip sends args and reads the reply, connecting first if needed;
// s.mu is held. A connection the server closed (a FastForward past the
// timeout directive makes it idle) is replaced once.
func (s *Server) roundTrip(args []any) (difftest.Reply, error) {
	reused := s.conn != nil
	if !reused {
		if err := s.connect(); err != nil {
			return difftest.Reply{}, err
		}
	}
	r, err := s.conn.Do(args...)
	if err != nil { // the reply stream is lost
		s.conn.Close()
		s.conn = nil
		if reused {
			return s.roundTrip(args)
		}
	}
	return r, err
}

// connect opens the checks' connection; s.mu is held.
func (s *Server) connect() error {
	c, err := difftest.Dial(s.Addr())
	if err != nil {
		return err
	}
	if s.auth != "" {
		err = expectOK(c, "AUTH", s.auth)
	}
	if err == nil {
		err = expectOK(c, "CLIENT", "SETNAME", "keyhivetest")
	}
	if err != nil {
		c.Close()
		return err
	}
	s.conn = c
	return nil
}

// expectOK runs a command that must reply +OK.
func expectOK(c *difftest.Conn, args ...any) error {
	r, err := c.Do(args...)
	if err == nil && r.IsError() {
		err = fmt.Errorf("%v: %s", args, r.Str)
	}
	return err
}

// fail reports what a check did not expect: to the test, or by a panic
// without one.
func (s *Server) fail(format string, args ...any) {
	if s.tb == nil {
		panic(fmt.Sprintf("keyhivetest: "+format, args...))
	}
	s.tb.Errorf("keyhivetest: "+format, args...)
}

// elements is an array reply's elements as strings.
func elements(r difftest.Reply) []string {
	out := make([]string, len(r.Elems))
	for i, e := range r.Elems {
		out[i] = e.Str
	}
	return out
}

// sortedStrings is elements, sorted.
func sortedStrings(r difftest.Reply) []string {
	out := elements(r)
	slices.Sort(out)
	return out
}
