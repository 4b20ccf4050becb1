package server

import (
	"net"
	"testing"

	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/resp"
)

// TestStreamCommandsDoNotAllocate: adding and reading entries allocates
// nothing per command once buffers have grown (a new node, every 100
// entries, is amortized).
func TestStreamCommandsDoNotAllocate(t *testing.T) {
	cfg, err := config.FromArgs([]string{"--port", "0"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	local, remote := net.Pipe()
	defer local.Close()
	defer remote.Close()
	c := s.newClient(local)
	for _, line := range []string{
		"XADD events * type click user 12345",
		"XADD events MAXLEN ~ 1000 * type click user 12345",
		"XLEN events",
		"XRANGE events - + COUNT 10",
		"XREVRANGE events + - COUNT 10",
		"XREAD COUNT 10 STREAMS events 0",
	} {
		args, _ := resp.SplitArgs([]byte(line), nil)
		for range 300 { // grow buffers and nodes
			c.execute(args)
			c.out.B = c.out.B[:0]
		}
		if n := testing.AllocsPerRun(300, func() {
			c.execute(args)
			c.out.B = c.out.B[:0]
		}); n > 0 {
			t.Errorf("%s: %v allocations per command", line, n)
		}
	}
}
