package server_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestReplReplicaExpiryScenarios: what a replica does with expired keys, against a
// redis-server 7.4.1 master and replica (the scenarios of Redis's own
// replication tests): keys written with a TTL on a writable replica are
// expired there by active expiry; an expired key from the master is not
// returned but not deleted on a replica (read-only or writable), INCR
// recreates it on a writable one; PFCOUNT on a read-only replica updates
// the HLL's cached cardinality and ignores an expired key.
func TestReplReplicaExpiryScenarios(t *testing.T) {
	oracle := difftest.Need74(t)
	var got [2][]string
	for i, redis := range []bool{true, false} {
		var master, replica *replNode
		if redis {
			addr, stop, err := difftest.StartProcess(oracle)
			master = openReplNode(t, "redis 7.4 master", addr, stop, err)
			addr, stop, err = difftest.StartProcess(oracle)
			replica = openReplNode(t, "redis 7.4 replica", addr, stop, err)
		} else {
			master, replica = startReplNode(t, false), startReplNode(t, false)
		}
		replicate(t, master, replica)
		note := func(what string, r difftest.Reply) { got[i] = append(got[i], what+" "+string(r.Raw)) }
		master.ok(t, "SELECT", 5)
		replica.ok(t, "SELECT", 5)

		// Keys a writable replica wrote itself expire there.
		replica.ok(t, "CONFIG", "SET", "replica-read-only", "no")
		for k := range 3 {
			replica.ok(t, "SET", fmt.Sprint("own", k), k, "PX", 100)
		}
		note("dbsize with own keys", replica.do(t, "DBSIZE"))
		waitUntil(t, replica.name+" expiring its own keys", func() bool { return replica.do(t, "DBSIZE").Int == 0 })
		replica.ok(t, "CONFIG", "SET", "replica-read-only", "yes")

		// The master's expired keys, active expiry off there.
		master.ok(t, "DEBUG", "SET-ACTIVE-EXPIRE", 0)
		master.ok(t, "SET", "key1", 5, "PX", 10)
		master.ok(t, "SET", "key2", 5, "PX", 10)
		waitUntil(t, replica.name+" receiving key1 and key2", func() bool { return replica.do(t, "DBSIZE").Int == 2 })
		time.Sleep(20 * time.Millisecond)
		note("exists", replica.do(t, "EXISTS", "key1", "key2"))
		replica.ok(t, "CONFIG", "SET", "replica-read-only", "no")
		note("dbsize", replica.do(t, "DBSIZE"))
		note("incr", replica.do(t, "INCR", "key1"))
		note("ttl", replica.do(t, "TTL", "key1"))
		note("get", replica.do(t, "GET", "key2"))
		note("dbsize after", replica.do(t, "DBSIZE"))
		replica.ok(t, "DEL", "key1", "key2")
		replica.ok(t, "CONFIG", "SET", "replica-read-only", "yes")
		master.ok(t, "DEL", "key1", "key2")
		master.ok(t, "DEBUG", "SET-ACTIVE-EXPIRE", 1)

		// PFCOUNT's cache on a read-only replica.
		master.ok(t, "PFADD", "hll", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q")
		before := master.ok(t, "GET", "hll").Str
		waitUntil(t, replica.name+" receiving hll", func() bool { return replica.do(t, "GET", "hll").Str == before })
		note("pfcount", replica.do(t, "PFCOUNT", "hll"))
		got[i] = append(got[i], fmt.Sprint("cache updated ", replica.ok(t, "GET", "hll").Str != before))
		master.ok(t, "DEL", "hll")

		master.ok(t, "DEBUG", "SET-ACTIVE-EXPIRE", 0)
		master.ok(t, "PFADD", "hll2", "a", "b", "c")
		master.ok(t, "PEXPIRE", "hll2", 10)
		waitUntil(t, replica.name+" receiving hll2", func() bool { return replica.do(t, "DBSIZE").Int == 1 })
		time.Sleep(20 * time.Millisecond)
		note("pfcount expired", replica.do(t, "PFCOUNT", "hll2"))
		note("dbsize with expired hll", replica.do(t, "DBSIZE"))
		master.ok(t, "DEBUG", "SET-ACTIVE-EXPIRE", 1)
	}
	sameSteps(t, got[0], got[1])
}
