package server_test

import (
	"testing"

	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/server"
)

// startInDir starts an in-process Keyhive on dir, so that a restart finds
// the files it saved.
func startInDir(t *testing.T, dir string, directives ...string) (*server.Server, *replNode) {
	t.Helper()
	cfg, err := config.FromArgs(append([]string{"--port", "0", "--save", "", "--enable-debug-command", "yes", "--dir", dir}, directives...))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	conn, err := difftest.Dial(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	n := &replNode{name: "restarted", addr: srv.Addr(), conn: conn, stop: func() { conn.Close(); srv.Close() }}
	t.Cleanup(n.stop)
	return srv, n
}

// TestReplReplicaRestart: a replica saved and restarted continues its
// master's history with a partial resync, from the replication ID and
// offset its RDB file recorded.
func TestReplReplicaRestart(t *testing.T) {
	master := startReplNode(t, false, "--repl-diskless-sync-delay", "0")
	fillAllTypes(t, master)
	dir := t.TempDir()
	_, replica := startInDir(t, dir)
	replicate(t, master, replica)
	writeLoad(t, master, 10, 300)
	sameData(t, master, replica)
	replica.ok(t, "SAVE")
	replica.stop()
	writeLoad(t, master, 11, 200) // while it is down
	full := master.infoInt(t, "stats", "sync_full")
	partial := master.infoInt(t, "stats", "sync_partial_ok")
	host, port := master.hostPort()
	_, replica = startInDir(t, dir, "--replicaof", host, port)
	waitUntil(t, "the restarted replica linked", func() bool {
		return replica.info(t, "replication", "master_link_status") == "up"
	})
	if f, p := master.infoInt(t, "stats", "sync_full"), master.infoInt(t, "stats", "sync_partial_ok"); f != full || p != partial+1 {
		t.Fatalf("after the restart: sync_full %d (was %d), sync_partial_ok %d (was %d)", f, full, p, partial)
	}
	writeLoad(t, master, 12, 100)
	sameData(t, master, replica)
}
