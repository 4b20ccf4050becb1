package workloads_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestIORedisCluster runs ioredis/mixed.js, a mixed workload through
// ioredis's Cluster client (strings over many slots, pipelines of
// "{dnsmeta}:" keys on one slot, MULTI and multi-key commands on hash tags),
// on a cluster of three Keyhive masters and on one of three redis-server
// masters, and compares what it printed.
func TestIORedisCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("builds keyhive and starts six cluster nodes")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found: ioredis's cluster client needs Node.js")
	}
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Skip("redis-cli not found")
	}
	if _, err := os.Stat("ioredis/node_modules/ioredis"); err != nil {
		t.Fatal("ioredis is not installed: run `npm ci` in workloads/ioredis (test.sh does)")
	}
	bin, err := difftest.BuildKeyhive(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	runMixed := func(addrs []string) string {
		out, err := exec.Command(node, "ioredis/mixed.js", addrs[0]).CombinedOutput()
		if err != nil {
			t.Fatalf("node ioredis/mixed.js %s: %v\n%s", addrs[0], err, out)
		}
		return string(out)
	}
	redisOut := runMixed(startCluster(t, ""))
	keyhiveOut := runMixed(startCluster(t, bin))
	redisLines, keyhiveLines := strings.Split(redisOut, "\n"), strings.Split(keyhiveOut, "\n")
	for i := range max(len(redisLines), len(keyhiveLines)) {
		var r, k string
		if i < len(redisLines) {
			r = redisLines[i]
		}
		if i < len(keyhiveLines) {
			k = keyhiveLines[i]
		}
		if r != k {
			t.Fatalf("line %d differs:\n  redis:   %s\n  keyhive: %s", i+1, r, k)
		}
	}
	if !strings.Contains(keyhiveOut, `cross-slot mget: "CROSSSLOT"`) {
		t.Errorf("a cross-slot MGET did not get CROSSSLOT:\n%s", keyhiveOut)
	}
	t.Logf("%d lines identical", len(keyhiveLines))
}
