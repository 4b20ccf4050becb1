package server_test

import (
	"testing"
	"time"
)

// sameAs waits until replica has applied master's whole stream and
// compares their DEBUG DIGEST (no WAIT: the replica may be a replica's).
func sameAs(t *testing.T, master, replica *replNode) {
	t.Helper()
	off := master.infoInt(t, "replication", "master_repl_offset")
	for deadline := time.Now().Add(30 * time.Second); replica.infoInt(t, "replication", "master_repl_offset") < off; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not reach offset %d of %s:\n%s\n%s", replica.name, off, master.name,
				master.ok(t, "INFO", "replication").Str, replica.ok(t, "INFO", "replication").Str)
		}
	}
	if m, r := master.ok(t, "DEBUG", "DIGEST").Str, replica.ok(t, "DEBUG", "DIGEST").Str; m != r {
		t.Fatalf("digest: master %s, replica %s", m, r)
	}
}

// TestReplChainAndPromotion: a replica's replica gets the stream forwarded
// (same offsets along the chain); after the middle one is promoted
// (REPLICAOF NO ONE) its replica goes on with it, and the old master,
// made its replica, continues with a partial resync: the promoted one
// still knows the old history as its second ID.
func TestReplChainAndPromotion(t *testing.T) {
	a := startReplNode(t, false, "--repl-diskless-sync-delay", "0")
	b := startReplNode(t, false, "--repl-diskless-sync-delay", "0")
	c := startReplNode(t, false)
	a.name, b.name, c.name = "a", "b", "c"
	fillAllTypes(t, a)
	replicate(t, a, b)
	writeLoad(t, a, 4, 200) // b's stream does not start with a SELECT
	replicate(t, b, c)
	writeLoad(t, a, 5, 500)
	sameAs(t, a, b)
	sameAs(t, a, c)
	if ao, co := a.infoInt(t, "replication", "master_repl_offset"), c.infoInt(t, "replication", "master_repl_offset"); ao != co {
		t.Fatalf("offsets along the chain: a %d, c %d", ao, co)
	}

	b.ok(t, "REPLICAOF", "NO", "ONE")
	if got := b.info(t, "replication", "master_replid2"); got != a.info(t, "replication", "master_replid") {
		t.Fatalf("b's replid2 %s is not a's replid", got)
	}
	writeLoad(t, b, 6, 300)
	sameAs(t, b, c)
	partial := b.infoInt(t, "stats", "sync_partial_ok")
	replicate(t, b, a)
	if got := b.infoInt(t, "stats", "sync_partial_ok"); got != partial+1 {
		t.Fatalf("old master's resync with the promoted replica: sync_partial_ok %d, want %d", got, partial+1)
	}
	writeLoad(t, b, 7, 300)
	sameAs(t, b, a)
	sameAs(t, b, c)
	if got := b.ok(t, "WAIT", 2, 10000).Int; got != 2 {
		t.Fatalf("WAIT 2 with two replicas: %d", got)
	}
}
