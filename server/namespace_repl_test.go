package server_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestNamespaceStatsOnReplica: a Keyhive replica learns the master's
// namespaces from the full sync's RDB (one declared before the link) and
// from the stream (one declared after), and its statistics, kept by its
// own keyspace as it applies the stream, equal the master's and its own
// SCAN count.
func TestNamespaceStatsOnReplica(t *testing.T) {
	master := startReplNode(t, false, "--repl-diskless-sync-delay", "0")
	replica := startReplNode(t, false)
	master.ok(t, "NAMESPACE", "DEFINE", "users", "PREFIX", "user:", "DEFAULT-TTL", 3600)
	master.ok(t, "NAMESPACE", "DEFINE", "capped", "PREFIX", "cap:", "MAX-KEYS", 50, "EVICT", "lowest-hits-then-oldest")
	r := rand.New(rand.NewPCG(3, 4))
	load := func(n int) {
		for range n {
			k := fmt.Sprintf("%s%d", []string{"user:", "cap:", "q:", "other:"}[r.IntN(4)], r.IntN(200))
			switch r.IntN(6) {
			case 0:
				master.do(t, "DEL", k)
			case 1:
				master.do(t, "HSET", k, r.IntN(20), strings.Repeat("h", r.IntN(200)))
			case 2:
				master.do(t, "EXPIRE", k, 1+r.IntN(1000))
			case 3:
				master.do(t, "GET", k)
			default:
				master.do(t, "SET", k, strings.Repeat("s", r.IntN(500)))
			}
		}
	}
	load(2000)
	replicate(t, master, replica)
	master.ok(t, "NAMESPACE", "DEFINE", "waiting", "PATTERN", "q:*")
	load(2000)
	sameAs(t, master, replica)

	if m, rp := master.ok(t, "NAMESPACE", "LIST").Raw, replica.ok(t, "NAMESPACE", "LIST").Raw; string(m) != string(rp) {
		t.Fatalf("declarations: master %q, replica %q", m, rp)
	}
	ms, rs := replStats(t, master), replStats(t, replica)
	for _, ns := range []string{"users", "capped", "waiting", "default"} {
		for _, f := range []string{"keys", "volatile", "bytes"} {
			if ms[ns][f] != rs[ns][f] {
				t.Errorf("%s %s: master %d, replica %d", ns, f, ms[ns][f], rs[ns][f])
			}
		}
	}
	if ms["capped"]["keys"] > 50 || ms["users"]["volatile"] != ms["users"]["keys"] {
		t.Errorf("policies not in force on the master: %v", ms)
	}
	// The replica's own count of its keys agrees.
	scan := map[string]int64{}
	for _, k := range replica.ok(t, "KEYS", "*").Elems {
		ns := "default"
		switch {
		case strings.HasPrefix(k.Str, "user:"):
			ns = "users"
		case strings.HasPrefix(k.Str, "cap:"):
			ns = "capped"
		case strings.HasPrefix(k.Str, "q:"):
			ns = "waiting"
		}
		scan[ns]++
	}
	for ns, n := range scan {
		if rs[ns]["keys"] != n {
			t.Errorf("replica %s: %d keys counted, KEYS finds %d", ns, rs[ns]["keys"], n)
		}
	}
}

// replStats returns NAMESPACE STATS as name -> field -> value.
func replStats(t *testing.T, n *replNode) map[string]map[string]int64 {
	t.Helper()
	out := map[string]map[string]int64{}
	e := n.ok(t, "NAMESPACE", "STATS").Elems
	for i := 0; i+1 < len(e); i += 2 {
		f := map[string]int64{}
		for j := 0; j+1 < len(e[i+1].Elems); j += 2 {
			f[e[i+1].Elems[j].Str] = e[i+1].Elems[j+1].Int
		}
		out[e[i].Str] = f
	}
	return out
}
