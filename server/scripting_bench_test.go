package server

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/scripting"
)

// BenchmarkEvalsha runs bench/throughput.sh's EVALSHA_ENQUEUE and
// EVALSHA_RATELIMIT through the real dispatch path, with keys varying as
// redis-benchmark's -r varies them.
func BenchmarkEvalsha(b *testing.B) {
	for _, bench := range []struct {
		name, file string
		keyspace   int
		args       func(sha string, r int) string
	}{
		{"enqueue", "../workloads/seed002/enqueue.lua", 1000000, func(sha string, r int) string {
			n := strconv.Itoa(r)
			return "EVALSHA " + sha + " 5 queue:{b}:waiting:0 queue:{b}:positions position:" + n + " ipmap:{b}:" + n +
				" heartbeat:active pos:" + n + ` 1704067200000000 ip 1800 {"ua":"bench"}`
		}},
		{"ratelimit", "testdata/scripts/sliding_window.lua", 10000, func(sha string, r int) string {
			n := strconv.Itoa(r)
			return "EVALSHA " + sha + " 2 rl:{" + n + "}:1 rl:{" + n + "}:0 100 1704067230000 60000 1"
		}},
	} {
		b.Run(bench.name, func(b *testing.B) {
			body, err := os.ReadFile(bench.file)
			if err != nil {
				b.Fatal(err)
			}
			c := pipeClient(b, newTestServer(b))
			sha := scripting.SHA1Hex(body)
			c.execute([][]byte{[]byte("SCRIPT"), []byte("LOAD"), body})
			c.out.B = c.out.B[:0]
			// Pre-built commands, so the loop measures the server alone.
			cmds := make([][][]byte, 4096)
			for i := range cmds {
				for _, f := range strings.Fields(bench.args(sha, (i*7919)%bench.keyspace)) {
					cmds[i] = append(cmds[i], []byte(f))
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c.execute(cmds[i%len(cmds)])
				if c.out.B[0] == '-' {
					b.Fatal(string(c.out.B))
				}
				c.out.B = c.out.B[:0]
			}
		})
	}
}
