package server_test

import (
	"testing"
)

// startInDir starts an in-process Keyhive on dir, so that a restart finds
// the files it saved.
func startInDir(t *testing.T, dir string, directives ...string) *replNode {
	t.Helper()
	srv := startKeyhive(t, append([]string{"--enable-debug-command", "yes", "--dir", dir}, directives...)...)
	n := openReplNode(t, "restarted", srv.Addr(), func() { srv.Close() }, nil)
	stop := n.stop
	n.stop = func() { n.conn.Close(); stop() }
	return n
}

// TestReplReplicaRestart: a replica saved and restarted continues its
// master's history with a partial resync, from the replication ID and
// offset its RDB file recorded.
func TestReplReplicaRestart(t *testing.T) {
	master := startReplNode(t, false, "--repl-diskless-sync-delay", "0")
	fillAllTypes(t, master)
	dir := t.TempDir()
	replica := startInDir(t, dir)
	replicate(t, master, replica)
	writeLoad(t, master, 10, 300)
	sameData(t, master, replica)
	replica.ok(t, "SAVE")
	replica.stop()
	writeLoad(t, master, 11, 200) // while it is down
	full := master.infoInt(t, "stats", "sync_full")
	partial := master.infoInt(t, "stats", "sync_partial_ok")
	host, port := master.hostPort()
	replica = startInDir(t, dir, "--replicaof", host, port)
	waitUntil(t, "the restarted replica linked", func() bool {
		return replica.info(t, "replication", "master_link_status") == "up"
	})
	if f, p := master.infoInt(t, "stats", "sync_full"), master.infoInt(t, "stats", "sync_partial_ok"); f != full || p != partial+1 {
		t.Fatalf("after the restart: sync_full %d (was %d), sync_partial_ok %d (was %d)", f, full, p, partial)
	}
	writeLoad(t, master, 12, 100)
	sameData(t, master, replica)
}
