package server_test

import (
	"strconv"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/keyspace"
)

// TestClusterSlotStatsShards: on a Keyhive cluster of three masters and a
// replica of the first, CLUSTER SLOT-STATS (Redis 8.2,
// https://redis.io/docs/latest/commands/cluster-slot-stats/) lists the
// slots of the node's shard: each master its own, the three together every
// slot once, the replica its master's with the same key counts; with
// cluster-slot-stats-enabled a write counts its bytes on its key's slot on
// the master that ran it.
func TestClusterSlotStatsShards(t *testing.T) {
	slowTest(t, "a four-process cluster")
	bin := buildKeyhiveBinary(t)
	n := startPubSubCluster(t, bin)
	slotsOf := func(addr string) []int {
		t.Helper()
		r, err := difftest.Inline(addr, "CLUSTER SLOT-STATS SLOTSRANGE 0 16383")
		if err != nil || r.IsError() {
			t.Fatalf("SLOT-STATS on %s: %v %v", addr, r.Raw, err)
		}
		var slots []int
		for _, e := range r.Elems {
			slots = append(slots, int(e.Elems[0].Int))
		}
		return slots
	}
	seen := make([]int, keyspace.SlotCount)
	for _, m := range []string{n.a, n.b, n.c} {
		slots := slotsOf(m)
		for i, s := range slots {
			seen[s]++
			if i > 0 && slots[i-1] >= s {
				t.Fatalf("SLOTSRANGE on %s out of slot order at %d", m, i)
			}
		}
		r, _ := difftest.Inline(m, "CLUSTER SLOT-STATS ORDERBY key-count")
		if len(r.Elems) != len(slots) {
			t.Errorf("ORDERBY key-count on %s: %d slots, SLOTSRANGE %d", m, len(r.Elems), len(slots))
		}
	}
	for s, times := range seen {
		if times != 1 {
			t.Fatalf("slot %d listed by %d masters", s, times)
		}
	}
	aSlots := slotsOf(n.a)
	if r := slotsOf(n.r); len(r) != len(aSlots) || r[0] != aSlots[0] || r[len(r)-1] != aSlots[len(aSlots)-1] {
		t.Errorf("the replica lists %d slots (%d..%d), its master %d", len(r), r[0], r[len(r)-1], len(aSlots))
	}

	// A key on one of A's slots, written with the counters on.
	slot := aSlots[len(aSlots)/2]
	key := keyOnSlot(slot)
	difftest.Inline(n.a, "CONFIG SET cluster-slot-stats-enabled yes")
	if r, _ := difftest.Inline(n.a, "SET "+key+" hello"); r.Str != "OK" {
		t.Fatalf("SET %s on A: %q", key, r.Raw)
	}
	difftest.Inline(n.a, "WAIT 1 5000")
	range1 := "CLUSTER SLOT-STATS SLOTSRANGE " + strconv.Itoa(slot) + " " + strconv.Itoa(slot)
	r, _ := difftest.Inline(n.a, range1)
	stats := statsMap(r)
	in := len("*3\r\n$3\r\nSET\r\n$" + strconv.Itoa(len(key)) + "\r\n" + key + "\r\n$5\r\nhello\r\n")
	if stats["key-count"] != 1 || stats["network-bytes-in"] != int64(in) || stats["network-bytes-out"] != int64(len("+OK\r\n")) || stats["memory-bytes"] <= 0 {
		t.Errorf("A's slot %d: %v (want key-count 1, network-bytes-in %d, network-bytes-out 5)", slot, stats, in)
	}
	// The replica counts the key once its stream brought it (WAIT's 5 s
	// can pass on a loaded machine while the replica still syncs).
	var replicaStats map[string]int64
	waitUntil(t, "the replica to hold the key", func() bool {
		r, _ := difftest.Inline(n.r, range1)
		replicaStats = statsMap(r)
		return replicaStats["key-count"] == 1
	})
	if len(replicaStats) != 1 {
		t.Errorf("the replica's slot %d: %v (want key-count 1 alone: its counters are off)", slot, replicaStats)
	}
}

// statsMap is the metrics of a SLOT-STATS reply's first slot.
func statsMap(r difftest.Reply) map[string]int64 {
	m := map[string]int64{}
	if len(r.Elems) == 0 {
		return m
	}
	pairs := r.Elems[0].Elems[1].Elems
	for i := 0; i+1 < len(pairs); i += 2 {
		m[pairs[i].Str] = pairs[i+1].Int
	}
	return m
}

// keyOnSlot finds a key that hashes to slot.
func keyOnSlot(slot int) string {
	for i := 0; ; i++ {
		k := "k" + strconv.Itoa(i)
		if keyspace.Slot([]byte(k)) == slot {
			return k
		}
	}
}
