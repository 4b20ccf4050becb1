package server

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/keyhive/keyhive/resp"
)

// TestClusterRoutingAllocs: with cluster mode on, a command served here
// (one key, several keys of one slot, a transaction) allocates nothing
// more than with it off: the routing check allocates nothing.
func TestClusterRoutingAllocs(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	busPort := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	s := newTestServer(t, "--cluster-enabled", "yes", "--cluster-port", busPort, "--bind", "127.0.0.1")
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.cluster.AddSlots([][2]int{{0, 16383}}, false); err != nil {
		t.Fatal(err)
	}
	// A master turns ok a moment after it starts, as Redis's (cluster.State's rejoin delay).
	for deadline := time.Now().Add(time.Minute); !s.cluster.Routes().OK; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the cluster is not ok after a minute")
		}
	}
	c := pipeClient(t, s)
	expectNoAllocs(t, c, "SET k v", "GET k", "MSET {a}1 x {a}2 y", "MGET {a}1 {a}2", "INCR {a}n")
	args, _ := resp.SplitArgs([]byte("MGET {a}1 {b}2"), nil)
	c.execute(args)
	if got := string(c.out.B); got != "-"+errCrossSlot+"\r\n" {
		t.Errorf("MGET across slots: %q", got)
	}
}

// BenchmarkClusterRouting: a command's path with cluster mode off and on
// (the routing check's cost), and on with cluster-slot-stats-enabled (the
// per-slot counters' cost): go test ./server -run - -bench ClusterRouting.
func BenchmarkClusterRouting(b *testing.B) {
	for _, mode := range []string{"off", "on", "slot-stats"} {
		b.Run(mode, func(b *testing.B) {
			s := newTestServer(b)
			if mode != "off" {
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					b.Fatal(err)
				}
				busPort := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
				l.Close()
				s = newTestServer(b, "--cluster-enabled", "yes", "--cluster-port", busPort, "--bind", "127.0.0.1")
				if err := s.Start(); err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				s.cluster.AddSlots([][2]int{{0, 16383}}, false)
				if mode == "slot-stats" {
					s.cfg.Set([]string{"cluster-slot-stats-enabled", "yes"})
				}
			}
			c := pipeClient(b, s)
			for _, line := range []string{"GET {a}k", "MGET {a}1 {a}2 {a}3"} {
				args, _ := resp.SplitArgs([]byte(line), nil)
				b.Run(string(args[0]), func(b *testing.B) {
					for b.Loop() {
						c.execute(args)
						c.out.B = c.out.B[:0]
					}
				})
			}
		})
	}
}

// TestHotkeysSlotsInClusterMode: HOTKEYS START SLOTS on a cluster node is
// refused as Keyhive's limit (docs/differences.md), not with the text
// Redis gives outside cluster mode.
func TestHotkeysSlotsInClusterMode(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	busPort := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	s := newTestServer(t, "--cluster-enabled", "yes", "--cluster-port", busPort, "--bind", "127.0.0.1")
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := pipeClient(t, s)
	args, _ := resp.SplitArgs([]byte("HOTKEYS START METRICS 1 CPU SLOTS 1 0"), nil)
	c.execute(args)
	if got, want := string(c.out.B), "-ERR SLOTS parameter is not supported by this server\r\n"; got != want {
		t.Errorf("HOTKEYS START ... SLOTS in cluster mode: %q, want %q", got, want)
	}
}
