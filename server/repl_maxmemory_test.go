package server_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestReplReplicaMaxmemory: a replica over maxmemory, against redis-server.
// With replica-ignore-maxmemory yes (the default) it evicts nothing, neither
// the master's keys (it stays the master's copy) nor its own, and refuses no
// write of its own clients with OOM; with replica-ignore-maxmemory no it
// evicts before its clients' commands, as a master does, without telling
// its master.
func TestReplReplicaMaxmemory(t *testing.T) {
	const keys = 4000
	var got [2][]string
	for i, redis := range []bool{true, false} {
		master, replica := startReplNode(t, redis), startReplNode(t, redis)
		replicate(t, master, replica)
		note := func(what string, v any) { got[i] = append(got[i], fmt.Sprint(what, " ", v)) }
		value := strings.Repeat("v", 1000)
		for k := 0; k < keys; k += 100 {
			args := []any{"MSET"}
			for j := k; j < k+100; j++ {
				args = append(args, fmt.Sprint("key:", j), value)
			}
			master.ok(t, args...)
		}
		waitUntil(t, replica.name+" receiving the keys", func() bool { return replica.do(t, "DBSIZE").Int == keys })

		used := replica.infoInt(t, "memory", "used_memory")
		replica.ok(t, "CONFIG", "SET", "maxmemory", used-2<<20)
		replica.ok(t, "CONFIG", "SET", "replica-read-only", "no")
		note("own write under noeviction while ignoring maxmemory", string(replica.do(t, "SET", "own", "v").Raw))
		replica.ok(t, "CONFIG", "SET", "maxmemory-policy", "allkeys-random")
		replica.ok(t, "GET", "key:1")
		note("dbsize while ignoring maxmemory", replica.do(t, "DBSIZE").Int)
		note("evicted_keys while ignoring maxmemory", replica.info(t, "stats", "evicted_keys"))

		replica.ok(t, "CONFIG", "SET", "replica-ignore-maxmemory", "no")
		waitUntil(t, replica.name+" evicting", func() bool {
			replica.ok(t, "PING")
			return replica.infoInt(t, "memory", "used_memory") <= used-2<<20
		})
		note("evicted", replica.do(t, "DBSIZE").Int < keys)
		note("master's dbsize", master.do(t, "DBSIZE").Int)
	}
	sameSteps(t, got[0], got[1])
}
