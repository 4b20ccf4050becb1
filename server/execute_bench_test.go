package server

import (
	"testing"

	"github.com/keyhive/keyhive/resp"
)

// BenchmarkExecute measures one command's path from parsed arguments to the
// reply bytes (locks, handler, propagation check, statistics), without the
// network, for profiling: go test ./server -run - -bench Execute -cpuprofile.
func BenchmarkExecute(b *testing.B) {
	c := pipeClient(b, newTestServer(b))
	for _, line := range []string{
		"SET ql:v1:link:abc 0123456789abcdef",
		"GET ql:v1:link:abc",
		"INCR counter",
		"LPUSH mylist 0123456789abcdef",
		"LPOP mylist",
		"SADD myset 0123456789abcdef",
		"HSET myhash field 0123456789abcdef",
		"ZADD myzset 1 member",
		"ZRANK myzset member",
	} {
		args, _ := resp.SplitArgs([]byte(line), nil)
		b.Run(string(args[0]), func(b *testing.B) {
			for b.Loop() {
				c.execute(args)
				c.out.B = c.out.B[:0]
			}
		})
	}
}
