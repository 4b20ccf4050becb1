package server_test

import (
	"strconv"
	"testing"
)

// TestReplFailover: FAILOVER hands the master's role to its replica
// (Keyhive or redis-server) with no write lost: the old master becomes the
// new one's replica, continuing the same history (a partial resync).
func TestReplFailover(t *testing.T) {
	slowTest(t, "FAILOVER between server processes")
	for _, redisReplica := range []bool{false, true} {
		name := "keyhive"
		if redisReplica {
			name = "redis"
		}
		t.Run("to-"+name, func(t *testing.T) {
			directives := []string{"--repl-diskless-sync-delay", "0"}
			if redisReplica {
				directives = append(directives, sets70...)
			}
			master := startReplNode(t, false, directives...)
			replica := startReplNode(t, redisReplica)
			if r := master.do(t, "FAILOVER"); r.Str != "ERR FAILOVER requires connected replicas." {
				t.Fatalf("FAILOVER without replicas: %v", r)
			}
			fillAllTypes(t, master)
			replicate(t, master, replica)
			writeLoad(t, master, 8, 300)
			if r := master.do(t, "FAILOVER", "TO", "127.0.0.1", 1); r.Str != "ERR FAILOVER target HOST and PORT is not a replica." {
				t.Fatalf("FAILOVER to a stranger: %v", r)
			}
			host, port := replica.hostPort()
			master.ok(t, "FAILOVER", "TO", host, port, "TIMEOUT", 10000)
			waitUntil(t, "the roles swapped", func() bool {
				return master.info(t, "replication", "role") == "slave" &&
					master.info(t, "replication", "master_link_status") == "up" &&
					replica.info(t, "replication", "role") == "master" &&
					master.info(t, "replication", "master_failover_state") == "no-failover"
			})
			if got := master.info(t, "replication", "master_port"); got != port {
				t.Fatalf("old master replicates %s, want %s", got, port)
			}
			if n := replica.infoInt(t, "stats", "sync_full"); n != 0 {
				t.Fatalf("the new master made %d full syncs", n)
			}
			writeLoad(t, replica, 9, 200)
			sameData(t, replica, master)
			if r := replica.ok(t, "GET", "counter"); r.Str == "" {
				t.Fatal("counter lost")
			} else if _, err := strconv.Atoi(r.Str); err != nil {
				t.Fatal(err)
			}
		})
	}
}
