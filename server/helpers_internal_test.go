package server

import (
	"net"
	"testing"

	"github.com/keyhive/keyhive/config"
)

// newTestServer makes a server that is not listening, in a directory of
// its own (SAVE, BGSAVE and BGREWRITEAOF write there), for driving its
// command path directly.
func newTestServer(tb testing.TB, directives ...string) *Server {
	tb.Helper()
	cfg, err := config.FromArgs(append([]string{"--port", "0", "--dir", tb.TempDir()}, directives...))
	if err != nil {
		tb.Fatal(err)
	}
	s, err := New(cfg)
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
