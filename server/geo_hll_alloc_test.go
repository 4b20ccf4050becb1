package server

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
)

// geoHLLBench is the data of bench/throughput.sh's GEOADD, GEOSEARCH, PFADD
// and PFCOUNT tests, and one command of each with fresh random arguments.
type geoHLLBench struct {
	c    *Client
	rng  *rand.Rand
	args [][]byte
}

func newGeoHLLBench(tb testing.TB, geoMembers int) *geoHLLBench {
	g := &geoHLLBench{c: pipeClient(tb, newTestServer(tb)), rng: rand.New(rand.NewPCG(1, 2))}
	for i := range geoMembers {
		g.run("GEOADD", "kh:bench:geo", g.coord(13, 1), g.coord(38, 1), fmt.Sprintf("m:%012d", i))
	}
	for _, k := range []string{"kh:bench:hll1", "kh:bench:hll2"} {
		for range 100000 {
			g.run("PFADD", k, g.randInt("e:", 1000000))
		}
	}
	return g
}

func (g *geoHLLBench) coord(from, span float64) string {
	return strconv.FormatFloat(from+span*g.rng.Float64(), 'f', 6, 64)
}

func (g *geoHLLBench) randInt(prefix string, n int) string {
	return fmt.Sprintf("%s%012d", prefix, g.rng.IntN(n))
}

// run executes a command, keeping its arguments for the next runs.
func (g *geoHLLBench) run(args ...string) {
	g.args = g.args[:0]
	for _, a := range args {
		g.args = append(g.args, []byte(a))
	}
	g.again()
}

func (g *geoHLLBench) again() {
	g.c.execute(g.args)
	g.c.out.B = g.c.out.B[:0]
}

// BenchmarkGeoHLL is bench/throughput.sh's geo and HyperLogLog tests without
// the network, for profiling: go test ./server -run - -bench GeoHLL -cpuprofile.
func BenchmarkGeoHLL(b *testing.B) {
	g := newGeoHLLBench(b, 100000)
	// Arguments are made before the timer runs.
	cases := []struct {
		name string
		args func() []string
	}{
		{"GEOADD", func() []string {
			return []string{"GEOADD", "kh:bench:geoadd", g.coord(0, 85), g.coord(0, 85), g.randInt("m:", 850000)}
		}},
		{"GEOSEARCH", func() []string {
			return []string{"GEOSEARCH", "kh:bench:geo", "FROMMEMBER", g.randInt("m:", 100000), "BYRADIUS", "1", "km"}
		}},
		{"PFADD", func() []string { return []string{"PFADD", "kh:bench:hll", g.randInt("e:", 1000000)} }},
		{"PFCOUNT", func() []string { return []string{"PFCOUNT", "kh:bench:hll1", "kh:bench:hll2"} }},
	}
	for _, bc := range cases {
		cmds := make([][][]byte, 1<<17)
		for i := range cmds {
			for _, a := range bc.args() {
				cmds[i] = append(cmds[i], []byte(a))
			}
		}
		b.Run(bc.name, func(b *testing.B) {
			// The process's CPU time per command, besides the wall time:
			// it holds on a machine shared with other work.
			var before, after syscallRusage
			selfRusage(&before)
			i := 0
			for b.Loop() {
				g.c.execute(cmds[i%len(cmds)])
				g.c.out.B = g.c.out.B[:0]
				i++
			}
			selfRusage(&after)
			cpu := after.user + after.sys - before.user - before.sys
			b.ReportMetric(cpu*1e9/float64(b.N), "cpu-ns/op")
		})
	}
}
