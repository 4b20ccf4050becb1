package server

import (
	"fmt"
	"testing"

	"github.com/keyhive/keyhive/resp"
)

// TestDiscoveryDoesNotAllocate runs SET, GET, EXPIRE and PERSIST over
// enough keys that some are in discovery's sample (one key in 16, one
// event in 64) and some events are: the sampled path allocates nothing
// either.
func TestDiscoveryDoesNotAllocate(t *testing.T) {
	c := pipeClient(t, newTestServer(t))
	var cmds [][][]byte
	for i := range 512 {
		for _, line := range []string{"SET ql:v1:link:%d 0123456789abcdef", "GET ql:v1:link:%d", "EXPIRE ql:v1:link:%d 100", "PERSIST ql:v1:link:%d"} {
			args, _ := resp.SplitArgs(fmt.Appendf(nil, line, i), nil)
			cmds = append(cmds, args)
		}
	}
	run := func() {
		for _, args := range cmds {
			c.execute(args)
			c.out.B = c.out.B[:0]
		}
	}
	run() // grows buffers
	if n := testing.AllocsPerRun(20, run); n != 0 {
		t.Fatalf("%.1f allocations per %d commands", n, len(cmds))
	}
}
