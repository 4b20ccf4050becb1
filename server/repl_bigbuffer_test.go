package server_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestReplSyncWithLargeBuffer: writes made while a replica's full sync runs
// (a megabyte, far beyond repl-backlog-size, with no output limit for
// replicas) are held for it and sent after the snapshot: the replica ends
// in sync with its master within Redis's test bound (5 s), as redis-server
// does (Redis's replication-buffer.tcl).
func TestReplSyncWithLargeBuffer(t *testing.T) {
	for _, diskless := range []string{"no", "yes"} {
		for _, redis := range []bool{true, false} {
			master := startReplNode(t, redis, "--repl-backlog-size", "16384", "--client-output-buffer-limit", "replica 0 0 0",
				"--repl-diskless-sync", diskless, "--repl-diskless-sync-delay", "0")
			replica := startReplNode(t, redis)
			master.ok(t, "DEBUG", "POPULATE", 10000, "key", 10)
			master.ok(t, "CONFIG", "SET", "rdb-key-save-delay", 100)
			host, port := master.hostPort()
			replica.ok(t, "REPLICAOF", host, port)
			waitUntil(t, master.name+" starting the sync", func() bool {
				return master.info(t, "persistence", "rdb_bgsave_in_progress") == "1"
			})
			value := strings.Repeat("x", 10000)
			for i := range 100 {
				master.ok(t, "SET", fmt.Sprint("big", i), value)
			}
			master.ok(t, "CONFIG", "SET", "rdb-key-save-delay", 0)
			start := time.Now()
			want := master.ok(t, "DEBUG", "DIGEST").Str
			for replica.info(t, "replication", "master_link_status") != "up" || replica.do(t, "DEBUG", "DIGEST").Str != want {
				// The bound is Keyhive's: redis-server 7.0.15 takes 2-3 s here, near
				// it beside a CPU hog, and only has to get there.
				if bound := 5 * time.Second; time.Since(start) > bound && !redis || time.Since(start) > 12*bound {
					t.Errorf("%s (diskless %s): replica not in sync %v after the writes (link %s, dbsize %d)", master.name, diskless, time.Since(start).Round(time.Second),
						replica.info(t, "replication", "master_link_status"), replica.do(t, "DBSIZE").Int)
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			t.Logf("%s diskless %s: in sync %v after the writes", master.name, diskless, time.Since(start))
		}
	}
}
