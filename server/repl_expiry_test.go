package server_test

import (
	"testing"
	"time"
)

// TestReplReplicaExpiry: a replica never expires keys itself: a key whose
// time passed reads as missing there but stays until the master's DEL,
// and the master's commands still find it (Redis 7.0's behaviour).
func TestReplReplicaExpiry(t *testing.T) {
	master := startReplNode(t, false, "--repl-diskless-sync-delay", "0")
	replica := startReplNode(t, false)
	master.ok(t, "DEBUG", "SET-ACTIVE-EXPIRE", 0)
	replicate(t, master, replica)
	master.ok(t, "SET", "k", "v", "PX", 100)
	master.ok(t, "SET", "other", "x")
	sameData(t, master, replica)
	time.Sleep(300 * time.Millisecond)
	if r := replica.do(t, "GET", "k"); !r.Null {
		t.Fatalf("replica GET of an expired key: %v", r)
	}
	if n := replica.ok(t, "DBSIZE").Int; n != 2 {
		t.Fatalf("replica DBSIZE %d: it removed the expired key itself", n)
	}
	master.do(t, "GET", "k") // expires it: DEL to the replica
	sameData(t, master, replica)
	if n := replica.ok(t, "DBSIZE").Int; n != 1 {
		t.Fatalf("replica DBSIZE %d after the master's DEL", n)
	}
}

// TestReplReplicaFieldExpiry: a hash field whose TTL passed reads as
// missing on a replica but stays until the master's HDEL.
func TestReplReplicaFieldExpiry(t *testing.T) {
	master := startReplNode(t, false, "--repl-diskless-sync-delay", "0")
	replica := startReplNode(t, false)
	master.ok(t, "DEBUG", "SET-ACTIVE-EXPIRE", 0)
	replicate(t, master, replica)
	master.ok(t, "HSET", "h", "a", 1, "b", 2)
	master.ok(t, "HPEXPIRE", "h", 100, "FIELDS", 1, "a")
	sameData(t, master, replica)
	time.Sleep(300 * time.Millisecond)
	if r := replica.do(t, "HGET", "h", "a"); !r.Null {
		t.Fatalf("replica HGET of an expired field: %v", r)
	}
	if n := replica.ok(t, "HLEN", "h").Int; n != 2 {
		t.Fatalf("replica HLEN %d: it removed the expired field itself", n)
	}
	master.do(t, "HGET", "h", "a") // expires it: HDEL to the replica
	sameData(t, master, replica)
	if n := replica.ok(t, "HLEN", "h").Int; n != 1 {
		t.Fatalf("replica HLEN %d after the master's HDEL", n)
	}
}
