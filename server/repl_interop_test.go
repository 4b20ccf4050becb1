package server_test

import (
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// Replication with real redis-server 7.0.15 processes on both sides, and
// Keyhive with itself: a full sync of a data set with every type, a mixed
// write load, the replica's DEBUG DIGEST equal to the master's, and a
// dropped link resumed with a partial resynchronization.

// dropAndResume kills the replica's link to its master, writes meanwhile,
// and checks that the replica resumed with a partial resynchronization.
func dropAndResume(t *testing.T, master, replica *replNode) {
	t.Helper()
	full := master.infoInt(t, "stats", "sync_full")
	partial := master.infoInt(t, "stats", "sync_partial_ok")
	replica.ok(t, "CLIENT", "KILL", "TYPE", "master")
	writeLoad(t, master, 2, 200)
	waitUntil(t, "partial resync", func() bool {
		return master.infoInt(t, "stats", "sync_partial_ok") == partial+1 &&
			replica.info(t, "replication", "master_link_status") == "up"
	})
	if got := master.infoInt(t, "stats", "sync_full"); got != full {
		t.Fatalf("sync_full went from %d to %d: not a partial resync", full, got)
	}
	writeLoad(t, master, 3, 100)
	sameData(t, master, replica)
}

func replicationScenario(t *testing.T, master, replica *replNode) {
	fillAllTypes(t, master)
	replicate(t, master, replica)
	sameData(t, master, replica)
	writeLoad(t, master, 1, 1000)
	sameData(t, master, replica)
	dropAndResume(t, master, replica)
}

// sets70 keeps a Keyhive master's sets in Redis 7.0's encodings (no
// listpack sets, which a 7.0 replica's full sync cannot load).
var sets70 = []string{"--set-max-listpack-entries", "0"}

func TestReplKeyhiveToRedis(t *testing.T) {
	for _, diskless := range []string{"yes", "no"} {
		t.Run("diskless-"+diskless, func(t *testing.T) {
			master := startReplNode(t, false, append([]string{"--repl-diskless-sync", diskless, "--repl-diskless-sync-delay", "0"}, sets70...)...)
			replica := startReplNode(t, true)
			replicationScenario(t, master, replica)
		})
	}
}

func TestReplRedisToKeyhive(t *testing.T) {
	slowTest(t, "full syncs from redis-server, disk and diskless")
	for _, diskless := range []string{"yes", "no"} {
		t.Run("diskless-"+diskless, func(t *testing.T) {
			master := startReplNode(t, true, "--repl-diskless-sync", diskless, "--repl-diskless-sync-delay", "0")
			replica := startReplNode(t, false)
			replicationScenario(t, master, replica)
		})
	}
}

func TestReplKeyhiveToKeyhive(t *testing.T) {
	master := startReplNode(t, false, "--repl-diskless-sync-delay", "0")
	replica := startReplNode(t, false)
	replicationScenario(t, master, replica)
}

// TestReplRedis74ToKeyhive: a redis-server 7.4.1 master, whose RDB is
// version 12 once a hash has field TTLs, and a Keyhive replica.
func TestReplRedis74ToKeyhive(t *testing.T) {
	path, err := difftest.Oracle74()
	if err != nil {
		t.Skip(err)
	}
	master := processNode(t, path, "redis 7.4")
	replica := startReplNode(t, false)
	fillAllTypes(t, master)
	master.ok(t, "HSET", "fieldttl", "a", 1, "b", 2, "c", 3)
	master.ok(t, "HEXPIRE", "fieldttl", 100000, "FIELDS", 2, "a", "b")
	replicate(t, master, replica)
	if ttl := replica.ok(t, "HTTL", "fieldttl", "FIELDS", 2, "a", "c"); len(ttl.Elems) != 2 || ttl.Elems[0].Int <= 0 || ttl.Elems[1].Int != -1 {
		t.Fatalf("field TTLs on the replica: %v", ttl)
	}
	// 7.4's DEBUG DIGEST covers field TTLs, Keyhive's (7.0's) does not.
	master.ok(t, "DEL", "fieldttl")
	sameData(t, master, replica)
	writeLoad(t, master, 1, 1000)
	sameData(t, master, replica)
	dropAndResume(t, master, replica)
}
