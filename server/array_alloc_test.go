package server

import (
	"strconv"
	"testing"
)

// TestArrayCommandsDoNotAllocate: reading and writing array slots, dense
// and sparse pages, the cursor commands and short scans allocate nothing
// per command once buffers have grown (the slab's chunk growth and its
// rebuilds are amortized below one per command).
func TestArrayCommandsDoNotAllocate(t *testing.T) {
	g := newGeoHLLBench(t, 0, 0)
	for i := range 3000 {
		g.run("ARSET", "dense", strconv.Itoa(i), "value"+strconv.Itoa(i%10))
		g.run("ARSET", "sparse", strconv.Itoa(i*100003), "value"+strconv.Itoa(i%10))
	}
	g.run("ARRING", "ring", "100", "x")
	cases := map[string][][]string{}
	for _, key := range []string{"dense", "sparse"} {
		for i := range 300 {
			index := strconv.Itoa(i * 7)
			if key == "sparse" {
				index = strconv.Itoa(i * 7 * 100003)
			}
			cases["ARGET "+key] = append(cases["ARGET "+key], []string{"ARGET", key, index})
			cases["ARSET "+key] = append(cases["ARSET "+key], []string{"ARSET", key, index, "value" + strconv.Itoa(i%10)})
			cases["ARDEL ARSET "+key] = append(cases["ARDEL ARSET "+key], []string{"ARDEL", key, index}, []string{"ARSET", key, index, "v" + strconv.Itoa(i)})
		}
		cases["ARMGET "+key] = [][]string{{"ARMGET", key, "0", "1", "700021", "5"}}
		cases["ARLEN "+key] = [][]string{{"ARLEN", key}, {"ARCOUNT", key}, {"ARNEXT", key}}
		cases["ARSCAN "+key] = [][]string{{"ARSCAN", key, "0", "20", "LIMIT", "5"}, {"ARSCAN", key, "5000000", "0", "LIMIT", "3"}}
		cases["AROP "+key] = [][]string{{"AROP", key, "0", "100", "USED"}, {"AROP", key, "0", "100", "MATCH", "value1"}}
	}
	for i := range 300 {
		cases["ARRING"] = append(cases["ARRING"], []string{"ARRING", "ring", "100", "r" + strconv.Itoa(i%10)})
	}
	cases["ARINSERT"] = [][]string{{"ARSEEK", "dense", "10"}, {"ARINSERT", "dense", "value1", "value2"}}
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
			if len(g.c.out.B) > 0 && g.c.out.B[0] == '-' {
				t.Fatalf("%s: %s", name, g.c.out.B)
			}
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
