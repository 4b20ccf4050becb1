package server_test

import (
	"fmt"
	"math/rand"
	"testing"
)

// TestReplSketches: a Keyhive replica of a Keyhive master holds the same
// probabilistic values, byte for byte (DEBUG DIGEST covers their bytes):
// after a full sync (the values in the RDB as module values) and after a
// stream of BF.ADD, CF.ADD, CMS.INCRBY, TOPK.ADD (whose decay draws from
// the value's own generator) and TDIGEST.ADD (whose compressions happen
// on both sides alike), and after a partial resync.
func TestReplSketches(t *testing.T) {
	master := startReplNode(t, false, "--repl-diskless-sync-delay", "0")
	replica := startReplNode(t, false)
	fillAllTypes(t, master) // dropAndResume's load writes every type
	sketchLoad(t, master, 1, 300)
	replicate(t, master, replica)
	sameData(t, master, replica)
	sketchLoad(t, master, 2, 2000)
	sameData(t, master, replica)
	dropAndResume(t, master, replica)
	sketchLoad(t, master, 3, 300)
	sameData(t, master, replica)
}

// sketchLoad writes count probabilistic commands over a few keys of each
// type, creating them first.
func sketchLoad(t *testing.T, n *replNode, seed int64, count int) {
	rng := rand.New(rand.NewSource(seed))
	n.ok(t, "SELECT", 0)
	for k := range 3 {
		for _, create := range [][]any{
			{"BF.RESERVE", fmt.Sprint("bf", k), 0.01, 50},
			{"CF.RESERVE", fmt.Sprint("cf", k), 64, "BUCKETSIZE", 2, "EXPANSION", 2},
			{"CMS.INITBYDIM", fmt.Sprint("cms", k), 64, 4},
			{"TOPK.RESERVE", fmt.Sprint("topk", k), 5, 16, 4, 0.9},
			{"TDIGEST.CREATE", fmt.Sprint("td", k), "COMPRESSION", 20},
		} {
			if n.do(t, "EXISTS", create[1]).Int == 0 {
				n.ok(t, create...)
			}
		}
	}
	for range count {
		k := rng.Intn(3)
		item := fmt.Sprint("item", rng.ExpFloat64()*20)
		switch rng.Intn(5) {
		case 0:
			n.ok(t, "BF.ADD", fmt.Sprint("bf", k), item)
		case 1:
			n.ok(t, "CF.ADD", fmt.Sprint("cf", k), item)
		case 2:
			n.ok(t, "CMS.INCRBY", fmt.Sprint("cms", k), item, 1+rng.Intn(5))
		case 3:
			n.ok(t, "TOPK.INCRBY", fmt.Sprint("topk", k), item, 1+rng.Intn(3))
		default:
			n.ok(t, "TDIGEST.ADD", fmt.Sprint("td", k), rng.NormFloat64()*10, rng.ExpFloat64())
		}
	}
}
