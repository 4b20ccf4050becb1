package server

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/clock"
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

// TestServedClientNotIdle: a client that waited long in BLPOP is not idle once
// served, as Redis counts the write of its reply as interaction; the idle
// check right after the reply must leave it open.
func TestServedClientNotIdle(t *testing.T) {
	clk := clock.NewManual(time.Now())
	s := newTestServerWith(t, []Option{WithClock(clk)}, "--save", "", "--timeout", "1")
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(10 * time.Second))
		return c, bufio.NewReader(c)
	}
	waiter, waiterReplies := dial()
	io.WriteString(waiter, "BLPOP q 0\r\n")
	for blocked, deadline := false, time.Now().Add(10*time.Second); !blocked; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("BLPOP did not block in 10 s")
		}
		s.mu.Lock()
		for _, c := range s.clients {
			blocked = blocked || c.waiting.Load() != nil
		}
		s.mu.Unlock()
	}
	clk.Advance(10 * time.Second)
	s.closeIdleClients(clk.UnixMilli()) // blocked: left alone
	pusher, pusherReplies := dial()
	io.WriteString(pusher, "RPUSH q job\r\n")
	pusherReplies.ReadString('\n')
	for _, want := range []string{"*2\r\n", "$1\r\n", "q\r\n", "$3\r\n", "job\r\n"} {
		if got, err := waiterReplies.ReadString('\n'); got != want {
			t.Fatalf("BLPOP reply: got %q (%v), want %q", got, err, want)
		}
	}
	s.closeIdleClients(clk.UnixMilli())
	io.WriteString(waiter, "PING\r\n")
	if got, err := waiterReplies.ReadString('\n'); got != "+PONG\r\n" {
		t.Fatalf("after its reply the served client was closed as idle: %q (%v)", got, err)
	}
}
