package server_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestReplMasterRestartPsync: a master shut down (saving its RDB file) and
// restarted continues its replication history from the file's aux fields
// as redis-server 7.4.1 does: a new replication ID that continues the old
// one (replid2, second_repl_offset), its replicas resynchronize partially;
// the keys it finds expired at load are not loaded, and their DELs go to
// its replicas; when they overflow the backlog, the replicas resynchronize
// fully. Both servers' observations are compared.
func TestReplMasterRestartPsync(t *testing.T) {
	slowTest(t, "restarts masters of both servers three times")
	oracle := difftest.Need74(t)
	keyhiveBin, err := difftest.BuildKeyhive(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var got [2][]string
	for i, bin := range []string{oracle, keyhiveBin} {
		port, dir := freePort(t), t.TempDir()
		addr := net.JoinHostPort("127.0.0.1", port)
		start := func() *replNode {
			kill := startDetached(t, addr, dir, bin, "--port", port, "--bind", "127.0.0.1", "--dir", dir,
				"--save", "3600 1", "--appendonly", "no", "--enable-debug-command", "yes",
				"--repl-diskless-sync-delay", "0", "--repl-backlog-size", "16384", "--logfile", filepath.Join(dir, "log"))
			return openReplNode(t, fmt.Sprintf("master (%s)", bin), addr, kill, nil)
		}
		master := start()
		var replica *replNode
		if bin == oracle {
			a, stop, err := difftest.StartProcess(oracle)
			replica = openReplNode(t, "redis replica", a, stop, err)
		} else {
			replica = startReplNode(t, false)
		}
		replicate(t, master, replica)
		note := func(format string, args ...any) { got[i] = append(got[i], fmt.Sprintf(format, args...)) }
		restart := func(what string) (offset int64, replid string) {
			sameData(t, master, replica)
			offset = master.infoInt(t, "replication", "master_repl_offset")
			waitUntil(t, replica.name+" at the master's offset", func() bool {
				return replica.infoInt(t, "replication", "master_repl_offset") == offset
			})
			replid = master.info(t, "replication", "master_replid")
			replica.ok(t, "CONFIG", "RESETSTAT")
			r, err := master.conn.Do("SHUTDOWN") // no reply: the server saves and exits
			if err == nil {
				t.Fatalf("%s: SHUTDOWN: %v", master.name, r)
			}
			waitUntil(t, master.name+" gone", func() bool {
				c, err := net.Dial("tcp", addr)
				if err == nil {
					c.Close()
				}
				return err != nil
			})
			master.stop()
			master = start()
			waitUntil(t, replica.name+" linked again", func() bool {
				return replica.info(t, "replication", "master_link_status") == "up"
			})
			if master.ok(t, "DBSIZE").Int == 0 {
				b, _ := os.ReadFile(filepath.Join(dir, "log"))
				t.Fatalf("%s came back empty (%s); its log:\n%s", master.name, what, b)
			}
			sameData(t, master, replica)
			note("%s: new replid %v, replid2 the old %v, partial %d/%d, full %d", what,
				master.info(t, "replication", "master_replid") != replid,
				master.info(t, "replication", "master_replid2") == replid,
				master.infoInt(t, "stats", "sync_partial_ok"), replica.infoInt(t, "stats", "sync_partial_ok"),
				master.infoInt(t, "stats", "sync_full"))
			return offset, replid
		}

		for k := range 300 {
			master.ok(t, "SET", fmt.Sprint("k", k), k)
		}
		offset, _ := restart("with data")
		note("offset kept %v, second %v, backlog from the next byte %v, empty %v",
			master.infoInt(t, "replication", "master_repl_offset") == offset,
			master.infoInt(t, "replication", "second_repl_offset") == offset+1,
			master.infoInt(t, "replication", "repl_backlog_first_byte_offset") == offset+1,
			master.infoInt(t, "replication", "repl_backlog_histlen") == 0)

		master.ok(t, "DEBUG", "SET-ACTIVE-EXPIRE", 0)
		for k := range 100 {
			master.ok(t, "SELECT", k%4)
			master.ok(t, "SET", fmt.Sprint("e", k), k, "PX", 10)
		}
		master.ok(t, "SELECT", 0)
		offset, _ = restart("with expired keys")
		note("expired at load %d, offset grew by the DELs %v", master.infoInt(t, "persistence", "rdb_last_load_keys_expired"),
			master.infoInt(t, "replication", "master_repl_offset") == offset+master.infoInt(t, "replication", "repl_backlog_histlen"))

		master.ok(t, "DEBUG", "SET-ACTIVE-EXPIRE", 0)
		for k := range 2048 {
			master.ok(t, "SELECT", k%16)
			master.ok(t, "SET", fmt.Sprint("x", k), k, "PX", 10)
		}
		master.ok(t, "SELECT", 0)
		restart("with more expired keys than the backlog holds")
		note("expired at load %d, backlog past the fork %v", master.infoInt(t, "persistence", "rdb_last_load_keys_expired"),
			master.infoInt(t, "replication", "repl_backlog_first_byte_offset") > master.infoInt(t, "replication", "second_repl_offset"))
	}
	for j := range max(len(got[0]), len(got[1])) {
		var r, k string
		if j < len(got[0]) {
			r = got[0][j]
		}
		if j < len(got[1]) {
			k = got[1][j]
		}
		if r != k {
			t.Errorf("step %d:\nredis   %s\nkeyhive %s", j, r, k)
		}
	}
}
