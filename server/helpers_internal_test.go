package server

import (
	"net"
	"testing"

	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/resp"
)

// The helpers that more than one test file of package server uses (those
// of package server_test are in helpers_test.go).

// newTestServer makes a server that is not listening, in a directory of
// its own (SAVE, BGSAVE and BGREWRITEAOF write there), for driving its
// command path directly.
func newTestServer(tb testing.TB, directives ...string) *Server {
	tb.Helper()
	return newTestServerWith(tb, nil, directives...)
}

// newTestServerWith is newTestServer with options, e.g. a manual clock.
func newTestServerWith(tb testing.TB, opts []Option, directives ...string) *Server {
	tb.Helper()
	// The slow log is off: a command slowed past its threshold (under -race
	// on a busy machine) would be logged, allocating, and the allocation
	// tests would count that.
	cfg, err := config.FromArgs(append([]string{"--port", "0", "--dir", tb.TempDir(), "--slowlog-log-slower-than", "-1"}, directives...))
	if err != nil {
		tb.Fatal(err)
	}
	s, err := New(cfg, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// pipeClient is a client of s on an in-memory connection.
func pipeClient(tb testing.TB, s *Server) *Client {
	local, remote := net.Pipe()
	tb.Cleanup(func() {
		local.Close()
		remote.Close()
	})
	return s.newClient(local)
}

// expectNoAllocs runs each command line on c once to warm up (an error
// reply fails the test), then checks that it allocates nothing.
func expectNoAllocs(t *testing.T, c *Client, lines ...string) {
	t.Helper()
	for _, line := range lines {
		args, _ := resp.SplitArgs([]byte(line), nil)
		c.execute(args) // warm up
		if c.out.B[0] == '-' {
			t.Fatalf("%s: %q", line, c.out.B)
		}
		c.out.B = c.out.B[:0]
		if n := testing.AllocsPerRun(100, func() { c.execute(args); c.out.B = c.out.B[:0] }); n > 0 {
			t.Errorf("%s: %.1f allocations per command", line, n)
		}
	}
}
