package server

import (
	"bufio"
	"net"
	"strings"
	"testing"
)

// TestPortableIOSwitch: KEYHIVE_PORTABLE_IO=yes serves the clients on Go's
// network poller as other systems do; no (or unset) keeps the event loops;
// another value fails to start, naming the variable.
func TestPortableIOSwitch(t *testing.T) {
	for _, c := range []struct{ value, api string }{{"", "epoll"}, {"no", "epoll"}, {"yes", "go-netpoll"}} {
		t.Setenv(portableIOVar, c.value)
		s := newTestServer(t)
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		if got := s.multiplexingAPI(); got != c.api {
			t.Errorf("%s=%q: multiplexing_api %s, want %s", portableIOVar, c.value, got, c.api)
		}
		s.Close()
	}
	t.Setenv(portableIOVar, "on")
	s := newTestServer(t)
	if err := s.Start(); err == nil || !strings.Contains(err.Error(), portableIOVar) {
		t.Errorf("%s=on: Start returned %v", portableIOVar, err)
		s.Close()
	}
}

// TestWokenClientsReadBufferReused: a client whose commands each block and
// are woken (a BLPOP that times out, a write waiting for its replicas'
// acknowledgements under min-replicas-to-ack) gets its whole read buffer
// back after each: the loop read after the last one into what was left of
// it, and when a command ended at the buffer's last byte the wake-up found
// nothing left and the server crashed (index out of range in readNow).
func TestWokenClientsReadBufferReused(t *testing.T) {
	s := newTestServer(t)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	in := bufio.NewReader(c)
	// 64 bytes: the buffer ends where a command does.
	const blpop = "*3\r\n$5\r\nBLPOP\r\n$32\r\nno-such-list-no-such-list-no-suc\r\n$4\r\n0.01\r\n"
	if initialReadBuf%len(blpop) != 0 {
		t.Fatalf("a BLPOP of %d bytes", len(blpop))
	}
	for i := range 2 * initialReadBuf / len(blpop) {
		if _, err := c.Write([]byte(blpop)); err != nil {
			t.Fatalf("BLPOP #%d: %v", i, err)
		}
		if line, err := in.ReadString('\n'); err != nil || line != "*-1\r\n" {
			t.Fatalf("BLPOP #%d: %q %v", i, line, err)
		}
	}
}
