package server

import (
	"net"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/resp"
)

// BenchmarkExecuteACL is BenchmarkExecute's path for the default user and
// for a restricted one (key patterns, a category removed), to see what the
// checks cost: go test ./server -run - -bench ExecuteACL.
func BenchmarkExecuteACL(b *testing.B) {
	cfg, err := config.FromArgs([]string{"--port", "0"})
	if err != nil {
		b.Fatal(err)
	}
	s, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.acl.Set("app", strings.Fields("on nopass ~sessions:* ~cache:* %R~config:* +@all -@dangerous")); err != nil {
		b.Fatal(err)
	}
	local, remote := net.Pipe()
	defer local.Close()
	defer remote.Close()
	c := s.newClient(local)
	for _, user := range []string{"default", "app"} {
		c.setUser(s.user(user))
		for _, line := range []string{"SET cache:v1:link:abc 0123456789abcdef", "GET cache:v1:link:abc", "MGET sessions:1 cache:2 config:3"} {
			args, _ := resp.SplitArgs([]byte(line), nil)
			b.Run(user+"/"+string(args[0]), func(b *testing.B) {
				for b.Loop() {
					c.execute(args)
					c.out.B = c.out.B[:0]
				}
			})
		}
	}
}
