package server

import (
	"strconv"
	"testing"

	"github.com/keyhive/keyhive/resp"
)

// BenchmarkStreams measures the stream commands bench/throughput.sh runs
// (XADD to a capped stream, XRANGE_10, XREAD_10, XREAD_100) on the command
// path without the network, for profiling: go test ./server -run - -bench
// Streams -cpuprofile.
func BenchmarkStreams(b *testing.B) {
	c := pipeClient(b, newTestServer(b))
	for i := range 10000 {
		args, _ := resp.SplitArgs([]byte("XADD s * f "+strconv.Itoa(i*7919%1000000)+" g v"), nil)
		c.execute(args)
		c.out.B = c.out.B[:0]
	}
	for _, line := range []string{
		"XADD x MAXLEN ~ 100000 * f 123456 g v",
		"XRANGE s - + COUNT 10",
		"XREAD COUNT 10 STREAMS s 0",
		"XREAD COUNT 100 STREAMS s 0",
	} {
		args, _ := resp.SplitArgs([]byte(line), nil)
		b.Run(line, func(b *testing.B) {
			for b.Loop() {
				c.execute(args)
				c.out.B = c.out.B[:0]
			}
		})
	}
}
