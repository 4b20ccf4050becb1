package server_test

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/server"
)

// The helpers that more than one test file of package server_test uses.
// One way to start each kind of server, one dial, one waitUntil; a test
// that needs a variant passes directives (--dir, --appendonly, ...), not a
// new start function. Differential tests reach their servers through
// package difftest (see its doc for what belongs there); helpers that know
// the server's unexported fields are in helpers_internal_test.go.

// startKeyhive runs an in-process Keyhive on a free port of 127.0.0.1, in
// a directory of its own unless directives name one (a SAVE or
// BGREWRITEAOF must not leave files where other tests' servers would load
// them), with no save points; it is closed when the test ends.
func startKeyhive(t testing.TB, directives ...string) *server.Server {
	t.Helper()
	srv, err := newKeyhive(t, directives...)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// newKeyhive is startKeyhive returning Start's error, for tests of a start
// that fails (an AOF that does not load, a port taken).
func newKeyhive(t testing.TB, directives ...string) (*server.Server, error) {
	t.Helper()
	cfg, err := config.FromArgs(append([]string{"--port", "0", "--bind", "127.0.0.1", "--save", "", "--dir", t.TempDir()}, directives...))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		return nil, err
	}
	t.Cleanup(func() { srv.Close() })
	return srv, nil
}

// dial connects to addr, closed when the test ends.
func dial(t testing.TB, addr string) *difftest.Conn {
	t.Helper()
	c, err := difftest.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitUntil polls cond until it holds, and fails the test after 30 s,
// naming what it waited for.
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for pause := 5 * time.Millisecond; !cond(); pause = min(2*pause, 20*time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(pause)
	}
}

// Replication tests' servers.

// replNode is one server of a replication test.
type replNode struct {
	name string
	addr string
	conn *difftest.Conn
	stop func()
}

// startReplNode starts a Keyhive (in-process) or, with redis, a
// redis-server as a replNode.
func startReplNode(t *testing.T, redis bool, directives ...string) *replNode {
	t.Helper()
	start, name := difftest.StartKeyhive, "keyhive"
	if redis {
		start, name = difftest.StartRedis, "redis"
	}
	addr, stop, err := start(directives...)
	return openReplNode(t, name, addr, stop, err)
}

// processNode starts the server binary bin (a built Keyhive, or a
// redis-server such as the 7.4 oracle) as a replNode, to be killed with
// SIGKILL; it syncs without a diskless delay.
func processNode(t *testing.T, bin, name string, directives ...string) *replNode {
	t.Helper()
	addr, stop, err := difftest.StartProcess(bin, append([]string{"--repl-diskless-sync-delay", "0"}, directives...)...)
	return openReplNode(t, name, addr, stop, err)
}

// openReplNode connects to a server just started (what a Start function
// returned) as a replNode, stopped at the test's end.
func openReplNode(t *testing.T, name, addr string, stop func(), err error) *replNode {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := difftest.Dial(addr)
	if err != nil {
		stop()
		t.Fatal(err)
	}
	n := &replNode{name: name, addr: addr, conn: conn, stop: stop}
	t.Cleanup(func() { conn.Close(); stop() })
	return n
}

func (n *replNode) do(t *testing.T, args ...any) difftest.Reply {
	t.Helper()
	r, err := n.conn.Do(args...)
	if err != nil { // killed (Sentinel's CLIENT KILL TYPE normal): once more
		n.conn.Close()
		if n.conn, err = difftest.Dial(n.addr); err == nil {
			r, err = n.conn.Do(args...)
		}
	}
	if err != nil {
		t.Fatalf("%s %v: %v", n.name, args, err)
	}
	return r
}

func (n *replNode) ok(t *testing.T, args ...any) difftest.Reply {
	t.Helper()
	r := n.do(t, args...)
	if r.IsError() {
		t.Fatalf("%s %v: %s", n.name, args, r.Str)
	}
	return r
}

// info returns one field of INFO section.
func (n *replNode) info(t *testing.T, section, name string) string {
	t.Helper()
	for _, line := range strings.Split(n.ok(t, "INFO", section).Str, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v
		}
	}
	return ""
}

func (n *replNode) infoInt(t *testing.T, section, name string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(n.info(t, section, name), 10, 64)
	if err != nil {
		t.Fatalf("%s INFO %s: %v", n.name, name, err)
	}
	return v
}

func (n *replNode) hostPort() (string, string) {
	host, port, _ := net.SplitHostPort(n.addr)
	return host, port
}
