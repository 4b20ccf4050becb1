package server

import (
	"strings"
	"testing"

	"github.com/keyhive/keyhive/resp"
)

// TestACLCheckDoesNotAllocate: a restricted user's commands are checked
// (command bit, key patterns with read/write, channels) without allocating.
func TestACLCheckDoesNotAllocate(t *testing.T) {
	s := newTestServer(t)
	rules := strings.Fields("on nopass %R~application:sessions:readonly:* ~application:sessions:cache:* &notifications:application:* +@all -flushall")
	if err := s.acl.Set("app", rules); err != nil {
		t.Fatal(err)
	}
	c := pipeClient(t, s)
	c.setUser(s.user("app"))
	for _, line := range []string{
		"GET application:sessions:readonly:0123456789",
		"SET application:sessions:cache:0123456789 value",
		"MGET application:sessions:cache:0123456789 application:sessions:readonly:x",
		"PUBLISH notifications:application:user:42 hello",
	} {
		args, _ := resp.SplitArgs([]byte(line), nil)
		c.execute(args)
		if len(c.out.B) > 0 && c.out.B[0] == '-' {
			t.Fatalf("%s: %s", line, c.out.B)
		}
		c.out.B = c.out.B[:0]
		if n := testing.AllocsPerRun(100, func() { c.execute(args); c.out.B = c.out.B[:0] }); n > 0 {
			t.Errorf("%s: %.1f allocations per command", line, n)
		}
	}
}
