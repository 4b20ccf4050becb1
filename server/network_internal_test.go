package server

import (
	"io"
	"net"
	"strings"
	"testing"
)

// remoteConn is one end of an in-memory connection that claims to come from
// another host, since tests talk only to 127.0.0.1.
type remoteConn struct{ net.Conn }

func (remoteConn) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 40000}
}

// acceptRemote hands s a connection from a non-loopback address and returns
// what the server wrote before closing it.
func acceptRemote(t *testing.T, s *Server) string {
	t.Helper()
	local, remote := net.Pipe()
	defer remote.Close()
	go s.accept(remoteConn{local}) // a pipe has no buffer: the refusal waits for the read
	got, _ := io.ReadAll(io.LimitReader(remote, 2000))
	return string(got)
}

func TestProtectedMode(t *testing.T) {
	s := newTestServer(t)
	defer s.Close()
	cfg := s.cfg
	if got := acceptRemote(t, s); got != errProtectedMode {
		t.Errorf("no password, remote client: got %q", got)
	}
	if err := cfg.Set([]string{"requirepass", "secret"}); err != nil {
		t.Fatal(err)
	}
	// With a password the client is let in (and must authenticate).
	local, remote := net.Pipe()
	s.accept(remoteConn{local})
	go remote.Write([]byte("PING\r\n"))
	buf := make([]byte, 100)
	n, _ := remote.Read(buf)
	if got := string(buf[:n]); !strings.HasPrefix(got, "-NOAUTH") {
		t.Errorf("with requirepass: got %q", got)
	}
	remote.Close()
	if err := cfg.Set([]string{"requirepass", "", "protected-mode", "no"}); err != nil {
		t.Fatal(err)
	}
	local, remote = net.Pipe()
	s.accept(remoteConn{local})
	go remote.Write([]byte("PING\r\n"))
	n, _ = remote.Read(buf)
	if got := string(buf[:n]); got != "+PONG\r\n" {
		t.Errorf("protected-mode no: got %q", got)
	}
	remote.Close()
}
