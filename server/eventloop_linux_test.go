package server

import (
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
