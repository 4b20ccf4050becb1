package server_test

import (
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// Replication with real redis-server 7.0.15 processes on both sides, and
// Keyhive with itself: a full sync of a data set with every type, a mixed
// write load, the replica's DEBUG DIGEST equal to the master's, and a
// dropped link resumed with a partial resynchronization.

// replicate makes replica a replica of master and waits for the link.
func replicate(t *testing.T, master, replica *replNode) {
	t.Helper()
	host, port := master.hostPort()
	replica.ok(t, "REPLICAOF", host, port)
	waitUntil(t, replica.name+" linked to "+master.name, func() bool {
		return replica.info(t, "replication", "master_link_status") == "up"
	})
}

// fillAllTypes writes a data set with every type and encoding, in two
// databases, some keys with a TTL.
func fillAllTypes(t *testing.T, n *replNode) {
	for _, db := range []int{0, 3} {
		n.ok(t, "SELECT", db)
		for i := range 300 {
			k := fmt.Sprintf("db%d:%d", db, i)
			n.ok(t, "SET", "str:"+k, strings.Repeat("v", i%70))
			n.ok(t, "SET", "int:"+k, i*1000)
			n.ok(t, "RPUSH", "list:"+k, "a", "b", i)
			n.ok(t, "SADD", "iset:"+k, 1, 2, i)
			n.ok(t, "SADD", "set:"+k, "x", "y", k)
			n.ok(t, "ZADD", "zset:"+k, 1.5, "a", i, "b")
			n.ok(t, "HSET", "hash:"+k, "f", i, "g", k)
			if i%10 == 0 {
				n.ok(t, "SET", "ttl:"+k, i, "EX", 10000)
				n.ok(t, "PEXPIRE", "hash:"+k, 5000000)
			}
		}
		for i := range 600 { // large encodings
			n.ok(t, "RPUSH", "biglist", strings.Repeat("e", i%100))
			n.ok(t, "SADD", "bigset", "m"+strconv.Itoa(i))
			n.ok(t, "SADD", "bigintset", i*7)
			n.ok(t, "ZADD", "bigzset", i, "m"+strconv.Itoa(i))
			n.ok(t, "HSET", "bighash", "f"+strconv.Itoa(i), strings.Repeat("h", i%90))
			n.ok(t, "XADD", "stream", "*", "f", i, "g", "v")
		}
		n.ok(t, "XGROUP", "CREATE", "stream", "g1", "0")
		n.ok(t, "XGROUP", "CREATE", "stream", "g2", "$")
		n.ok(t, "XREADGROUP", "GROUP", "g1", "alice", "COUNT", 50, "STREAMS", "stream", ">")
		n.ok(t, "XREADGROUP", "GROUP", "g1", "bob", "COUNT", 20, "STREAMS", "stream", ">")
		n.ok(t, "SET", "counter", 0)
	}
	n.ok(t, "SELECT", 0)
}

// writeLoad runs a mixed write load of count commands, in two databases,
// with transactions and a script.
func writeLoad(t *testing.T, n *replNode, seed int64, count int) {
	rng := rand.New(rand.NewSource(seed))
	for i := range count {
		db := []int{0, 3}[rng.Intn(2)]
		n.ok(t, "SELECT", db)
		k := fmt.Sprintf("db%d:%d", db, rng.Intn(300))
		switch rng.Intn(14) {
		case 0:
			n.ok(t, "SET", "str:"+k, rng.Int63())
		case 1:
			n.ok(t, "INCRBY", "counter", rng.Intn(100))
		case 2:
			n.ok(t, "LPUSH", "list:"+k, i)
		case 3:
			n.ok(t, "RPOP", "biglist")
		case 4:
			n.ok(t, "SADD", "set:"+k, rng.Intn(1000))
		case 5:
			n.ok(t, "ZINCRBY", "bigzset", 2.5, "m"+strconv.Itoa(rng.Intn(700)))
		case 6:
			n.ok(t, "HSET", "hash:"+k, "n"+strconv.Itoa(rng.Intn(5)), i)
		case 7:
			n.ok(t, "HDEL", "bighash", "f"+strconv.Itoa(rng.Intn(600)))
		case 8:
			n.ok(t, "XADD", "stream", "MAXLEN", "~", 500, "*", "i", i)
		case 9:
			n.ok(t, "SET", "ttl:"+k, i, "PX", 1000000+rng.Intn(1000))
		case 10:
			n.ok(t, "DEL", "str:"+k)
		case 11:
			n.ok(t, "MULTI")
			n.ok(t, "INCR", "counter")
			n.ok(t, "RPUSH", "list:"+k, "tx")
			n.ok(t, "EXEC")
		case 12:
			n.ok(t, "EVAL", "redis.call('INCRBYFLOAT', KEYS[1], ARGV[1]) return redis.call('HINCRBY', KEYS[2], 'x', 1)", 2, "float:"+k, "hash:"+k, "0.25")
		case 13:
			n.ok(t, "XREADGROUP", "GROUP", "g2", "carol", "COUNT", 2, "STREAMS", "stream", ">")
		}
	}
	n.ok(t, "SELECT", 0)
}

// sameData waits until replica has master's offset and compares their
// DEBUG DIGEST.
func sameData(t *testing.T, master, replica *replNode) {
	t.Helper()
	if got := master.ok(t, "WAIT", 1, 10000).Int; got != 1 {
		t.Fatalf("WAIT 1 on %s: %d replicas", master.name, got)
	}
	off := master.infoInt(t, "replication", "master_repl_offset")
	waitUntil(t, "replica offset", func() bool {
		return replica.infoInt(t, "replication", "slave_repl_offset") >= off
	})
	m, r := master.ok(t, "DEBUG", "DIGEST").Str, replica.ok(t, "DEBUG", "DIGEST").Str
	if m != r || m == strings.Repeat("0", 40) {
		t.Fatalf("digest: %s master %s, %s replica %s; keys that differ: %v", master.name, m, replica.name, r, differentKeys(t, master, replica))
	}
}

// differentKeys lists the keys of databases 0 and 3 whose DEBUG
// DIGEST-VALUE differs between a and b, for a failure's message.
func differentKeys(t *testing.T, a, b *replNode) []string {
	var diff []string
	for _, db := range []int{0, 3} {
		a.ok(t, "SELECT", db)
		b.ok(t, "SELECT", db)
		for _, k := range a.ok(t, "KEYS", "*").Elems {
			if va, vb := a.ok(t, "DEBUG", "DIGEST-VALUE", k.Str), b.ok(t, "DEBUG", "DIGEST-VALUE", k.Str); string(va.Raw) != string(vb.Raw) {
				diff = append(diff, fmt.Sprintf("%d:%s", db, k.Str))
			}
		}
		if len(diff) > 10 {
			break
		}
	}
	a.ok(t, "SELECT", 0)
	b.ok(t, "SELECT", 0)
	return diff
}

// dropAndResume kills the replica's link to its master, writes meanwhile,
// and checks that the replica resumed with a partial resynchronization.
func dropAndResume(t *testing.T, master, replica *replNode) {
	t.Helper()
	full := master.infoInt(t, "stats", "sync_full")
	partial := master.infoInt(t, "stats", "sync_partial_ok")
	replica.ok(t, "CLIENT", "KILL", "TYPE", "master")
	writeLoad(t, master, 2, 200)
	waitUntil(t, "partial resync", func() bool {
		return master.infoInt(t, "stats", "sync_partial_ok") == partial+1 &&
			replica.info(t, "replication", "master_link_status") == "up"
	})
	if got := master.infoInt(t, "stats", "sync_full"); got != full {
		t.Fatalf("sync_full went from %d to %d: not a partial resync", full, got)
	}
	writeLoad(t, master, 3, 100)
	sameData(t, master, replica)
}

func replicationScenario(t *testing.T, master, replica *replNode) {
	fillAllTypes(t, master)
	replicate(t, master, replica)
	sameData(t, master, replica)
	writeLoad(t, master, 1, 1000)
	sameData(t, master, replica)
	dropAndResume(t, master, replica)
}

func TestReplKeyhiveToRedis(t *testing.T) {
	for _, diskless := range []string{"yes", "no"} {
		t.Run("diskless-"+diskless, func(t *testing.T) {
			master := startReplNode(t, false, "--repl-diskless-sync", diskless, "--repl-diskless-sync-delay", "0")
			replica := startReplNode(t, true)
			replicationScenario(t, master, replica)
		})
	}
}

func TestReplRedisToKeyhive(t *testing.T) {
	for _, diskless := range []string{"yes", "no"} {
		t.Run("diskless-"+diskless, func(t *testing.T) {
			master := startReplNode(t, true, "--repl-diskless-sync", diskless, "--repl-diskless-sync-delay", "0")
			replica := startReplNode(t, false)
			replicationScenario(t, master, replica)
		})
	}
}

func TestReplKeyhiveToKeyhive(t *testing.T) {
	master := startReplNode(t, false, "--repl-diskless-sync-delay", "0")
	replica := startReplNode(t, false)
	replicationScenario(t, master, replica)
}

// TestReplRedis74ToKeyhive: a redis-server 7.4.1 master, whose RDB is
// version 12 once a hash has field TTLs, and a Keyhive replica.
func TestReplRedis74ToKeyhive(t *testing.T) {
	path, err := difftest.Oracle74()
	if err != nil {
		t.Skip(err)
	}
	master := processNode(t, path, "redis 7.4")
	replica := startReplNode(t, false)
	fillAllTypes(t, master)
	master.ok(t, "HSET", "fieldttl", "a", 1, "b", 2, "c", 3)
	master.ok(t, "HEXPIRE", "fieldttl", 100000, "FIELDS", 2, "a", "b")
	replicate(t, master, replica)
	if ttl := replica.ok(t, "HTTL", "fieldttl", "FIELDS", 2, "a", "c"); len(ttl.Elems) != 2 || ttl.Elems[0].Int <= 0 || ttl.Elems[1].Int != -1 {
		t.Fatalf("field TTLs on the replica: %v", ttl)
	}
	// 7.4's DEBUG DIGEST covers field TTLs, Keyhive's (7.0's) does not.
	master.ok(t, "DEL", "fieldttl")
	sameData(t, master, replica)
	writeLoad(t, master, 1, 1000)
	sameData(t, master, replica)
	dropAndResume(t, master, replica)
}
