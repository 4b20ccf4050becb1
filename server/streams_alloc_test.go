package server

import (
	"testing"

	"github.com/keyhive/keyhive/resp"
)

// TestStreamCommandsDoNotAllocate: adding and reading entries allocates
// nothing per command once buffers have grown (a new node, every 100
// entries, is amortized).
func TestStreamCommandsDoNotAllocate(t *testing.T) {
	c := pipeClient(t, newTestServer(t))
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
