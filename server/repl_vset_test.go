package server_test

import (
	"fmt"
	"math/rand"
	"testing"
)

// TestReplVectorSets: a Keyhive replica of a Keyhive master holds the same
// vector sets (DEBUG DIGEST covers names, attributes and stored vectors)
// and the same graphs (VLINKS agree: levels come from each set's own
// generator), after a full sync (the sets in the RDB, graph included),
// after a stream of VADD, VREM and VSETATTR, and after a partial resync.
func TestReplVectorSets(t *testing.T) {
	master := startReplNode(t, false, "--repl-diskless-sync-delay", "0")
	replica := startReplNode(t, false)
	fillAllTypes(t, master)
	vsetLoad(t, master, 1, 300)
	replicate(t, master, replica)
	sameData(t, master, replica)
	sameLinks(t, master, replica)
	vsetLoad(t, master, 2, 1500)
	sameData(t, master, replica)
	sameLinks(t, master, replica)
	dropAndResume(t, master, replica)
	vsetLoad(t, master, 3, 300)
	sameData(t, master, replica)
	sameLinks(t, master, replica)
}

// vsetKinds are the sets vsetLoad writes: how each is made.
var vsetKinds = [][]any{{"Q8"}, {"NOQUANT"}, {"BIN", "M", 6}, {"REDUCE", 3}}

// vsetLoad writes count vector set commands over a set of each kind.
func vsetLoad(t *testing.T, n *replNode, seed int64, count int) {
	rng := rand.New(rand.NewSource(seed))
	n.ok(t, "SELECT", 0)
	for range count {
		k := rng.Intn(len(vsetKinds))
		key, elem := fmt.Sprint("vs", k), fmt.Sprint("e", rng.Intn(150))
		switch rng.Intn(6) {
		case 0:
			n.do(t, "VREM", key, elem)
		case 1:
			n.do(t, "VSETATTR", key, elem, fmt.Sprintf(`{"n": %d}`, rng.Intn(100)))
		default:
			args := []any{"VADD", key}
			opts := vsetKinds[k]
			if opts[0] == "REDUCE" {
				args = append(args, opts...)
				opts = nil
			}
			args = append(args, "VALUES", 6)
			for range 6 {
				args = append(args, rng.NormFloat64())
			}
			args = append(args, elem)
			args = append(args, opts...)
			if rng.Intn(4) == 0 {
				args = append(args, "SETATTR", fmt.Sprintf(`{"n": %d}`, rng.Intn(100)))
			}
			n.ok(t, args...)
		}
	}
}

// sameLinks compares every element's VLINKS WITHSCORES on both nodes.
func sameLinks(t *testing.T, master, replica *replNode) {
	t.Helper()
	for k := range vsetKinds {
		key := fmt.Sprint("vs", k)
		for _, e := range master.do(t, "VRANGE", key, "-", "+").Elems {
			m, r := master.do(t, "VLINKS", key, e.Str, "WITHSCORES"), replica.do(t, "VLINKS", key, e.Str, "WITHSCORES")
			if m.String() != r.String() {
				t.Fatalf("VLINKS %s %s: master %s, replica %s", key, e.Str, m, r)
			}
		}
	}
}
