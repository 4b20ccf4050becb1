package server_test

import (
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestReplWaitAOF: WAITAOF counts the replicas whose AOF has fsynced the
// client's writes (REPLCONF ACK ... FACK): a Keyhive replica and a
// redis-server 7.4.1 replica with appendonly on count, one without does
// not.
func TestReplWaitAOF(t *testing.T) {
	master := startReplNode(t, false, "--repl-diskless-sync-delay", "0")
	withAOF := startReplNode(t, false, "--appendonly", "yes", "--appendfsync", "always")
	replicate(t, master, withAOF)
	master.ok(t, "SET", "k", "v")
	if r := master.ok(t, "WAITAOF", 0, 1, 5000); len(r.Elems) != 2 || r.Elems[0].Int != 0 || r.Elems[1].Int != 1 {
		t.Fatalf("WAITAOF 0 1 with a replica fsyncing: %v", r)
	}
	without := startReplNode(t, false)
	replicate(t, master, without)
	master.ok(t, "SET", "k", "v2")
	if r := master.ok(t, "WAITAOF", 0, 2, 300); len(r.Elems) != 2 || r.Elems[1].Int != 1 {
		t.Fatalf("WAITAOF 0 2 with one replica fsyncing: %v", r)
	}
	if r := master.ok(t, "WAIT", 2, 5000); r.Int != 2 {
		t.Fatalf("WAIT 2: %v", r)
	}
	path, err := difftest.Oracle74()
	if err != nil {
		t.Skip(err)
	}
	addr, stop, err := difftest.StartProcess(path, "--appendonly", "yes", "--appendfsync", "always")
	redis74 := openReplNode(t, "redis 7.4", addr, stop, err)
	replicate(t, master, redis74)
	master.ok(t, "SET", "k", "v3")
	if r := master.ok(t, "WAITAOF", 0, 2, 5000); len(r.Elems) != 2 || r.Elems[1].Int != 2 {
		t.Fatalf("WAITAOF 0 2 with a Keyhive and a redis-server replica fsyncing: %v", r)
	}
}
