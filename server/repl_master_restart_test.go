package server_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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
				"--repl-diskless-sync-delay", "0", "--repl-backlog-size", "16384", "--logfile", filepath.Join(dir, "log"),
				// No PING of its own in the stream: the steps read the
				// offsets and the backlog, and a step that outlasted the
				// 10 s period on a loaded machine found one in redis's.
				"--repl-ping-replica-period", "3600")
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
		// held counts the keys the master holds, expired ones not yet
		// removed included: the load finds those beyond the 300 that stay.
		held := func() (n int64) {
			for _, line := range strings.Split(master.ok(t, "INFO", "keyspace").Str, "\r\n") {
				if _, stats, ok := strings.Cut(line, ":keys="); ok {
					k, _, _ := strings.Cut(stats, ",")
					v, _ := strconv.ParseInt(k, 10, 64)
					n += v
				}
			}
			return n
		}
		var expiring int64 // the keys held at the last shutdown beyond the 300
		// backlog is the master's replication figures read as soon as its
		// replica linked again: the comparison of data that follows sends
		// WAIT, whose GETACK goes into the backlog when the replica has
		// not acknowledged yet (on a loaded machine, redis's had not).
		var backlog struct{ offset, second, first, histlen int64 }
		restart := func(what string) (offset int64, replid string) {
			sameData(t, master, replica)
			expiring = held() - 300
			offset = master.infoInt(t, "replication", "master_repl_offset")
			waitUntil(t, replica.name+" at the master's offset", func() bool {
				return replica.infoInt(t, "replication", "master_repl_offset") == offset
			})
			replid = master.info(t, "replication", "master_replid")
			replica.ok(t, "CONFIG", "RESETSTAT")
			// SIGTERM, as Redis's own test of this: redis-server 7.4.1
			// sometimes crashes ending a SHUTDOWN command that waited for
			// its replicas ("Unknown btype in
			// replyToBlockedClientTimedOut()"), and SHUTDOWN NOW has it
			// save fewer of the expired keys it holds.
			p, err := os.FindProcess(int(master.infoInt(t, "server", "process_id")))
			if err == nil {
				err = p.Signal(syscall.SIGTERM)
			}
			if err != nil {
				t.Fatalf("%s: SIGTERM: %v", master.name, err)
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
			backlog.offset = master.infoInt(t, "replication", "master_repl_offset")
			backlog.second = master.infoInt(t, "replication", "second_repl_offset")
			backlog.first = master.infoInt(t, "replication", "repl_backlog_first_byte_offset")
			backlog.histlen = master.infoInt(t, "replication", "repl_backlog_histlen")
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
			backlog.offset == offset, backlog.second == offset+1, backlog.first == offset+1, backlog.histlen == 0)

		master.ok(t, "DEBUG", "SET-ACTIVE-EXPIRE", 0)
		for k := range 100 {
			master.ok(t, "SELECT", k%4)
			master.ok(t, "SET", fmt.Sprint("e", k), k, "PX", 10)
		}
		master.ok(t, "SELECT", 0)
		offset, _ = restart("with expired keys")
		note("expired at load all held %v, offset grew by the DELs %v", master.infoInt(t, "persistence", "rdb_last_load_keys_expired") == expiring,
			master.infoInt(t, "replication", "master_repl_offset") == offset+master.infoInt(t, "replication", "repl_backlog_histlen"))

		master.ok(t, "DEBUG", "SET-ACTIVE-EXPIRE", 0)
		for k := range 2048 {
			master.ok(t, "SELECT", k%16)
			master.ok(t, "SET", fmt.Sprint("x", k), k, "PX", 10)
		}
		master.ok(t, "SELECT", 0)
		restart("with more expired keys than the backlog holds")
		note("expired at load all held %v, backlog past the fork %v", master.infoInt(t, "persistence", "rdb_last_load_keys_expired") == expiring,
			master.infoInt(t, "replication", "repl_backlog_first_byte_offset") > master.infoInt(t, "replication", "second_repl_offset"))
	}
	sameSteps(t, got[0], got[1])
}
