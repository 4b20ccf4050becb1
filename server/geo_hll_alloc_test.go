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

func newGeoHLLBench(tb testing.TB, geoMembers, hllElements int) *geoHLLBench {
	g := &geoHLLBench{c: pipeClient(tb, newTestServer(tb)), rng: rand.New(rand.NewPCG(1, 2))}
	for i := range geoMembers {
		g.run("GEOADD", "kh:bench:geo", g.coord(13, 1), g.coord(38, 1), fmt.Sprintf("m:%012d", i))
	}
	for _, k := range []string{"kh:bench:hll1", "kh:bench:hll2"} {
		for range hllElements {
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

// TestGeoHLLCommandsDoNotAllocate: adding points and elements, searching
// and counting allocate nothing per command once buffers have grown, in the
// compact and the large form of a geo set, sparse and dense HLLs.
func TestGeoHLLCommandsDoNotAllocate(t *testing.T) {
	g := newGeoHLLBench(t, 0, 0)
	for i := range 2000 {
		g.run("GEOADD", "large", g.coord(13, 1), g.coord(38, 1), strconv.Itoa(i))
		g.run("PFADD", "dense", strconv.Itoa(i))
	}
	g.run("GEOADD", "small", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania")
	g.run("PFADD", "sparse", "a", "b")
	// Each case cycles through its commands, so that adds keep adding.
	cases := map[string][][]string{}
	for i := range 400 {
		cases["GEOADD large"] = append(cases["GEOADD large"], []string{"GEOADD", "large", g.coord(13, 1), g.coord(38, 1), "new" + strconv.Itoa(i)})
	}
	cases["GEOADD small"] = [][]string{{"GEOADD", "small", "13.5", "38.5", "tmp"}, {"ZREM", "small", "tmp"}} // stays compact
	for _, key := range []string{"small", "large"} {
		cases["GEOADD CH "+key] = [][]string{{"GEOADD", key, "CH", "13.361389", "38.115556", "Palermo"}, {"GEOADD", key, "CH", "13.4", "38.1", "Palermo"}}
		cases["GEOSEARCH "+key] = [][]string{
			{"GEOSEARCH", key, "FROMMEMBER", "Palermo", "BYRADIUS", "50", "km"},
			{"GEOSEARCH", key, "FROMLONLAT", "13.5", "38.5", "BYBOX", "100", "80", "km", "ASC", "COUNT", "5", "WITHDIST", "WITHCOORD", "WITHHASH"},
			{"GEORADIUS_RO", key, "13.5", "38.5", "30", "mi", "DESC", "WITHDIST"},
			{"GEORADIUSBYMEMBER_RO", key, "Palermo", "200", "km", "COUNT", "3", "ANY"},
		}
		cases["GEODIST "+key] = [][]string{{"GEODIST", key, "Palermo", "Catania", "km"}, {"GEOPOS", key, "Palermo", "nosuch"}, {"GEOHASH", key, "Catania"}}
	}
	for _, key := range []string{"sparse", "dense"} {
		for i := range 400 {
			cases["PFADD "+key] = append(cases["PFADD "+key], []string{"PFADD", key, "e" + strconv.Itoa(i%40)})
		}
		cases["PFCOUNT "+key] = [][]string{{"PFCOUNT", key}, {"PFADD", key, "a"}, {"PFCOUNT", key}, {"PFCOUNT", key, "sparse", "dense"}}
	}
	for name, lines := range cases {
		cmds := make([][][]byte, len(lines))
		for i, line := range lines {
			for _, a := range line {
				cmds[i] = append(cmds[i], []byte(a))
			}
		}
		i := 0
		run := func() {
			g.c.execute(cmds[i%len(cmds)])
			g.c.out.B = g.c.out.B[:0]
			i++
		}
		for range 100 { // grow buffers
			run()
		}
		if n := testing.AllocsPerRun(300, run); n > 0 {
			t.Errorf("%s: %v allocations per command", name, n)
		}
	}
}

// BenchmarkGeoHLL is bench/throughput.sh's geo and HyperLogLog tests without
// the network, for profiling: go test ./server -run - -bench GeoHLL -cpuprofile.
func BenchmarkGeoHLL(b *testing.B) {
	g := newGeoHLLBench(b, 100000, 100000)
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
