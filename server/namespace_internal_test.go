package server

import (
	"testing"

	"github.com/keyhive/keyhive/resp"
)

// TestNamespaceHotPathAllocs: with namespaces declared, attributing a
// command's keys (matching, counters, the quota index, the pre-write
// checks) allocates nothing.
func TestNamespaceHotPathAllocs(t *testing.T) {
	s := newTestServer(t,
		"--namespace", "plain", "PREFIX", "key:",
		"--namespace", "capped", "PREFIX", "cap:", "MAX-KEYS", "100", "EVICT", "lru",
		"--namespace", "ttl", "PREFIX", "ttl:", "REQUIRE-TTL", "TYPES", "string",
		"--namespace", "waiting", "PATTERN", "q:*:waiting:*")
	c := pipeClient(t, s)
	for _, line := range []string{
		"SET key:1 0123456789abcdef", "GET key:1", "INCR key:n",
		"SET cap:1 0123456789abcdef", "GET cap:1",
		"SET ttl:1 0123456789abcdef EX 100", "GET ttl:1",
		"SET q:1:waiting:2 x", "GET q:1:waiting:2", "GET other",
	} {
		args, _ := resp.SplitArgs([]byte(line), nil)
		c.execute(args) // the first run creates the key
		if n := testing.AllocsPerRun(100, func() { c.execute(args); c.out.B = c.out.B[:0] }); n > 0 {
			t.Errorf("%s: %v allocations per command", line, n)
		}
	}
}
