package server_test

import (
	"testing"
)

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
