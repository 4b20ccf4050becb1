package server

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/keyhive/keyhive/resp"
)

// BenchmarkExecute measures one command's path from parsed arguments to the
// reply bytes (locks, handler, propagation check, statistics), without the
// network, for profiling: go test ./server -run - -bench Execute -cpuprofile.
func BenchmarkExecute(b *testing.B) {
	benchmarkExecute(b, pipeClient(b, newTestServer(b)))
}

// BenchmarkExecuteDiscoveryOff is BenchmarkExecute (prefix discovery on,
// the default) with discovery off: the difference is what discovery costs
// a command.
func BenchmarkExecuteDiscoveryOff(b *testing.B) {
	benchmarkExecute(b, pipeClient(b, newTestServer(b, "--namespace-discovery", "no")))
}

// BenchmarkExecuteNamespaces is BenchmarkExecute with 20 namespaces
// declared (bench/keyhive-namespaces.sh's), two covering its keys: what
// the key schema costs a command.
func BenchmarkExecuteNamespaces(b *testing.B) {
	var directives []string
	for i, p := range []string{"ql:v1:link:", "counter", "dns:", "dnsmeta:", "{dnsmeta}:", "sess:", "ql:v1:404:",
		"ql:v1:meta:", "queue:", "cache:project:", "cache:apikey:", "ratelimit:ipx:", "usage:", "ucg:entity:",
		"search:word:", "cache:page:", "session:", "lock:", "csrf:"} {
		directives = append(directives, "--namespace", fmt.Sprintf("ns%d", i), "PREFIX", p)
	}
	directives = append(directives, "--namespace", "waiting", "PATTERN", "queue:*:waiting:*")
	benchmarkExecute(b, pipeClient(b, newTestServer(b, directives...)))
}

func benchmarkExecute(b *testing.B, c *Client) {
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

// BenchmarkExecuteKeyMix is redis-benchmark's SET and GET of
// key:__rand_int__ (-r 1000000), one in two a write, through the same
// path, with prefix discovery on and off: what discovery costs where most
// writes create a key (each one feeds the sketch). For a paired timing:
// go test -c -o /tmp/server.test ./server, then farm-bench --vs with
// -test.bench 'KeyMix/discovery-on' against 'KeyMix/discovery-off'.
func BenchmarkExecuteKeyMix(b *testing.B) {
	const keys = 1 << 20
	lines := make([][][]byte, 2*keys)
	for i := range keys {
		k := fmt.Sprintf("key:%012d", (i*7919)%1000000)
		lines[2*i] = [][]byte{[]byte("SET"), []byte(k), []byte("xxxxxxxxxxxxxxxx")}
		lines[2*i+1] = [][]byte{[]byte("GET"), []byte(k)}
	}
	for _, mode := range []string{"on", "off"} {
		b.Run("discovery-"+mode, func(b *testing.B) {
			discovery := "yes"
			if mode == "off" {
				discovery = "no"
			}
			c := pipeClient(b, newTestServer(b, "--namespace-discovery", discovery))
			i := 0
			for b.Loop() {
				c.execute(lines[i%len(lines)])
				c.out.B = c.out.B[:0]
				i++
			}
		})
	}
}

// BenchmarkExecuteEvicting is what an eviction policy costs a command:
// SET of key:<n> and GET of another key:<m> over 1M keys with maxmemory
// 4 MB above the server's use at start, so that each SET of a new key
// evicts one and most GETs miss, under allkeys-lru and allkeys-lrfu
// (tenacity 100: every eviction in the command's own path). For
// instructions per command (callgrind, operations.md), count two numbers
// of commands: their difference leaves out the filling.
func BenchmarkExecuteEvicting(b *testing.B) {
	for _, policy := range []string{"allkeys-lru", "allkeys-lrfu"} {
		b.Run(policy, func(b *testing.B) {
			s := newTestServer(b, "--maxmemory-policy", policy, "--maxmemory-eviction-tenacity", "100")
			c := pipeClient(b, s)
			limit := strconv.FormatInt(s.usedMemory(monoNow(), 0)+4<<20, 10)
			c.execute([][]byte{[]byte("CONFIG"), []byte("SET"), []byte("maxmemory"), []byte(limit)})
			c.out.B = c.out.B[:0]
			set := [][]byte{[]byte("SET"), make([]byte, 0, 16), []byte("xxxxxxxxxxxxxxxx")}
			get := [][]byte{[]byte("GET"), make([]byte, 0, 16)}
			before := s.evict.evicted.Load()
			i := 0
			for b.Loop() {
				if i%2 == 0 {
					set[1] = strconv.AppendInt(append(set[1][:0], "key:"...), int64(i*7919%1000000), 10)
					c.execute(set)
				} else {
					get[1] = strconv.AppendInt(append(get[1][:0], "key:"...), int64((i*104729+500000)%1000000), 10)
					c.execute(get)
				}
				c.out.B = c.out.B[:0]
				i++
			}
			b.ReportMetric(float64(s.evict.evicted.Load()-before)/float64(b.N), "evictions/op")
		})
	}
}
