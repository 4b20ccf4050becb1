package server_test

import (
	"context"
	"fmt"
	"math/rand"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/persistence"
)

// Arrays in files and on replicas: DUMP and RESTORE, DEBUG RELOAD (the
// RDB), the AOF and its rewrite, a restart, a replica; the cursor goes
// along with the elements (DEBUG DIGEST covers both).

// arrayLoad writes count random array commands over a few arrays: dense,
// sparse, far past 2^63, rings and cursors.
func arrayLoad(do func(args ...any), seed int64, count int) {
	rng := rand.New(rand.NewSource(seed))
	index := func(k int) uint64 {
		switch k {
		case 0:
			return uint64(rng.Intn(10000)) // dense pages
		case 1:
			return uint64(rng.Int63n(1<<40)) * 7919 // sparse pages
		default:
			return 1<<63 + uint64(rng.Intn(5000)) // past int64
		}
	}
	for range count {
		k := rng.Intn(3)
		key := fmt.Sprint("ar", k)
		switch rng.Intn(9) {
		case 0:
			do("ARDEL", key, index(k), index(k))
		case 1:
			lo := index(k)
			do("ARDELRANGE", key, lo, lo+uint64(rng.Intn(300)))
		case 2:
			do("ARINSERT", key, rng.Intn(1000), strings.Repeat("i", rng.Intn(30)))
		case 3:
			do("ARSEEK", key, index(k))
		case 4:
			do("ARRING", "ring", 1+rng.Intn(40), rng.Intn(100))
		case 5:
			do("ARMSET", key, index(k), "m", index(k), strings.Repeat("x", rng.Intn(200)))
		default:
			do("ARSET", key, index(k), rng.Intn(1000000), "v")
		}
	}
}

// badArrayDump is a DUMP payload with a valid footer holding an array whose
// data is cut short, which RESTORE must refuse.
func badArrayDump() string {
	b := []byte{persistence.TypeModule2}
	b = (&persistence.Encoder{}).AppendModuleValue(b, persistence.ModuleID("KH-array-", persistence.KeyhiveEncVer), []byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1})
	return string(persistence.AppendDumpFooter(b))
}

// TestArrayKeys: DUMP and RESTORE give back the same array (DEBUG
// DIGEST-VALUE, ARNEXT), a damaged payload is refused, MEMORY USAGE counts
// the values, COPY is independent, DEBUG RELOAD keeps everything, a TTL
// removes the array, MULTI and scripts run the commands, and writes raise
// events named after them (del when the array empties).
func TestArrayKeys(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.StartIsolated(t) // it changes notify-keyspace-events
	k := p.Keyhive()
	c := func(want string, args ...any) { t.Helper(); docCase(t, p, want, args...) }
	k.Do("FLUSHALL")
	arrayLoad(func(args ...any) { k.Do(args...) }, 1, 3000)
	for _, key := range []string{"ar0", "ar1", "ar2", "ring"} {
		c("+array\r\n", "TYPE", key)
		digest := k.Do("DEBUG", "DIGEST-VALUE", key).Raw
		next := k.Do("ARNEXT", key).Raw
		dump := k.Do("DUMP", key).Str
		c(":1\r\n", "DEL", key)
		c("+OK\r\n", "RESTORE", key, "0", dump)
		if got := k.Do("DEBUG", "DIGEST-VALUE", key).Raw; string(got) != string(digest) {
			t.Errorf("%s: digest %q after RESTORE, was %q", key, got, digest)
		}
		c(string(next), "ARNEXT", key)
	}
	c("-ERR Bad data format\r\n", "RESTORE", "x", "0", badArrayDump())
	count := k.Do("ARCOUNT", "ar0").Int
	if n := k.Do("MEMORY", "USAGE", "ar0").Int; n < count*6 {
		t.Errorf("MEMORY USAGE of %d values of 6 bytes or more: %d", count, n)
	}
	c(":1\r\n", "COPY", "ar0", "copy")
	k.Do("ARDELRANGE", "copy", "0", "5000")
	c(fmt.Sprintf(":%d\r\n", count), "ARCOUNT", "ar0")
	digest := k.Do("DEBUG", "DIGEST").Raw
	c("+OK\r\n", "DEBUG", "RELOAD")
	if got := k.Do("DEBUG", "DIGEST").Raw; string(got) != string(digest) {
		t.Errorf("DEBUG RELOAD changed the digest: %q, was %q", got, digest)
	}
	c(":1\r\n", "PEXPIRE", "copy", "50")
	time.Sleep(120 * time.Millisecond)
	c(":0\r\n", "EXISTS", "copy")
	c("+OK\r\n", "MULTI")
	c("+QUEUED\r\n", "ARINSERT", "m", "a", "b")
	c("+QUEUED\r\n", "ARCOUNT", "m")
	c("*2\r\n:1\r\n:2\r\n", "EXEC")
	c("$1\r\n2\r\n", "EVAL", "return tostring(redis.call('ARNEXT', KEYS[1]))", "1", "m")
	k.Do("ARSET", "m", "18446744073709551614", "last")
	c("$18\r\n1.844674407371e+19\r\n", "EVAL", "return tostring(redis.call('ARLEN', KEYS[1]))", "1", "m") // a Lua number
	c("+OK\r\n", "CONFIG", "SET", "notify-keyspace-events", "KEA")
	sub := p.NewConn().Keyhive()
	sub.Do("PSUBSCRIBE", "__keyevent@*__:*")
	expect := func(want []string, args ...any) {
		t.Helper()
		k.Do(args...)
		sub.Send("PING")
		if got := events(sub); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("events after %v:\ngot  %q\nwant %q", args, got, want)
		}
	}
	expect([]string{"__keyevent@0__:arset n"}, "ARSET", "n", "0", "a")
	expect([]string{"__keyevent@0__:armset n"}, "ARMSET", "n", "1", "b")
	expect([]string{"__keyevent@0__:arinsert n"}, "ARINSERT", "n", "c")
	expect([]string{"__keyevent@0__:arseek n"}, "ARSEEK", "n", "9")
	expect([]string{"__keyevent@0__:arring n"}, "ARRING", "n", "5", "d")
	expect(nil, "ARDEL", "n", "7")
	expect(nil, "ARSEEK", "nosuch", "1")
	expect([]string{"__keyevent@0__:ardel n"}, "ARDEL", "n", "4")
	expect([]string{"__keyevent@0__:ardelrange n", "__keyevent@0__:del n"}, "ARDELRANGE", "n", "0", "10")
}

// TestArrayPropagation: writes propagate as they are, nothing when they
// changed nothing or were refused.
func TestArrayPropagation(t *testing.T) {
	s := startKeyhiveProp(t)
	s.collect()
	for _, step := range []propStep{
		w("ARSET a 0 x y", "ARSET a 0 x y"),
		w("ARSET a 18446744073709551614 x y"),
		w("ARMSET a 5 z", "ARMSET a 5 z"),
		w("ARINSERT a i", "ARINSERT a i"),
		w("ARSEEK a 18446744073709551615", "ARSEEK a 18446744073709551615"),
		w("ARINSERT a j"),
		w("ARSEEK nosuch 3"),
		w("ARRING r 2 p q s", "ARRING r 2 p q s"),
		w("ARDEL a 7"),
		w("ARDEL a 0 1", "ARDEL a 0 1"),
		w("ARGET a 5"),
		w("ARDELRANGE a 9 0", "ARDELRANGE a 9 0"),
		w("ARDELRANGE a 9 0"),
	} {
		t0 := time.Now().UnixMilli()
		reply := s.conn.do(t, step.cmd...)
		t1 := time.Now().UnixMilli()
		if err := matchPropagated(s.collect(), step.want, 0, t0, t1); err != nil {
			t.Errorf("%q (reply %v): %v", step.cmd, reply, err)
		}
	}
}

// TestArrayAOF: arrays survive an AOF rewrite (RESTORE in the base without
// the RDB preamble, the RDB form with it) and the commands after it,
// through a restart, and a restart from an RDB snapshot: the same data and
// cursors (DEBUG DIGEST).
func TestArrayAOF(t *testing.T) {
	for _, preamble := range []string{"yes", "no"} {
		t.Run("aof-use-rdb-preamble "+preamble, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			args := []string{"--dir", dir, "--appendonly", "yes", "--enable-debug-command", "yes", "--aof-use-rdb-preamble", preamble}
			srv := startKeyhive(t, args...)
			rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: 2})
			do := func(args ...any) {
				t.Helper()
				// An error reply fails; go-redis's generic reply reader
				// refusing an index past 2^63-1 does not.
				if err, ok := rdb.Do(ctx, args...).Err().(redis.Error); ok && err != redis.Nil {
					t.Fatal(args, err)
				}
			}
			arrayLoad(do, 2, 1500)
			if err := rdb.Do(ctx, "BGREWRITEAOF").Err(); err != nil {
				t.Fatal(err)
			}
			waitAOFRewrite(t, rdb)
			arrayLoad(do, 3, 500)
			digest := rdb.Do(ctx, "DEBUG", "DIGEST").Val()
			rdb.Close()
			srv.Close()
			if preamble == "no" {
				base, _ := filepath.Glob(filepath.Join(dir, "appendonlydir", "*.base.aof"))
				if b, err := os.ReadFile(base[0]); err != nil || !strings.Contains(string(b), "RESTORE\r\n$3\r\nar0\r\n") {
					t.Errorf("the rewritten AOF %s lacks RESTORE ar0: %v", base, err)
				}
			}
			srv = startKeyhive(t, args...)
			rdb = redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: 2})
			if got := rdb.Do(ctx, "DEBUG", "DIGEST").Val(); got != digest {
				t.Errorf("DEBUG DIGEST after the restart: %v, was %v", got, digest)
			}
			if err := rdb.Do(ctx, "SAVE").Err(); err != nil {
				t.Fatal(err)
			}
			rdb.Close()
			srv.Close()
			rdbArgs := []string{"--dir", dir, "--enable-debug-command", "yes"}
			srv = startKeyhive(t, rdbArgs...)
			rdb = redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: 2})
			defer rdb.Close()
			if got := rdb.Do(ctx, "DEBUG", "DIGEST").Val(); got != digest {
				t.Errorf("DEBUG DIGEST after a restart from dump.rdb: %v, was %v", got, digest)
			}
		})
	}
}

// TestReplArrays: a Keyhive replica of a Keyhive master holds the same
// arrays and cursors (DEBUG DIGEST) after a full sync (the arrays in the
// RDB), after a stream of array writes, and after a partial resync.
func TestReplArrays(t *testing.T) {
	master := startReplNode(t, false, "--repl-diskless-sync-delay", "0")
	replica := startReplNode(t, false)
	fillAllTypes(t, master)
	load := func(seed int64, count int) {
		master.ok(t, "SELECT", 0)
		arrayLoad(func(args ...any) { master.do(t, args...) }, seed, count)
	}
	load(1, 1000)
	replicate(t, master, replica)
	sameData(t, master, replica)
	load(2, 2000)
	sameData(t, master, replica)
	dropAndResume(t, master, replica)
	load(3, 500)
	sameData(t, master, replica)
}

// TestClusterArrays: in a cluster of two Keyhive nodes, array commands are
// routed by their key (-MOVED from the other node), and arrays move
// between the nodes with a slot (MIGRATE: the same array and cursor on the
// target, DEBUG DIGEST-VALUE).
func TestClusterArrays(t *testing.T) {
	slowTest(t, "a cluster of processes migrating a slot")
	start := func() string {
		addr, stop, err := difftest.StartKeyhive(append(clusterDirectives(t), "--cluster-require-full-coverage", "no", "--enable-debug-command", "yes")...)
		if err != nil {
			t.Skip(err)
		}
		t.Cleanup(stop)
		return addr
	}
	a, b := start(), start()
	ca, cb := dial(t, a), dial(t, b)
	do := func(c *difftest.Conn, args ...any) difftest.Reply {
		t.Helper()
		r, err := c.Do(args...)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	expect := func(c *difftest.Conn, want string, args ...any) {
		t.Helper()
		if got := strings.TrimSuffix(string(do(c, args...).Raw), "\r\n"); got != want {
			t.Errorf("%v: %q, want %q", args, got, want)
		}
	}
	_, bPort, _ := net.SplitHostPort(b)
	expect(ca, "+OK", "CLUSTER", "ADDSLOTSRANGE", 0, 16383)
	expect(ca, "+OK", "CLUSTER", "MEET", "127.0.0.1", bPort, do(cb, "CONFIG", "GET", "cluster-port").Elems[1].Str)
	waitUntil(t, "B to join", func() bool { return strings.Contains(inlineText(b, "CLUSTER INFO"), "cluster_state:ok") })
	const slot = 3300 // {b}
	arrayLoad(func(args ...any) {
		args[1] = "{b}" + args[1].(string)
		do(ca, args...)
	}, 4, 2000)
	keys := []string{"{b}ar0", "{b}ar1", "{b}ar2", "{b}ring"}
	digests := map[string]string{}
	for _, k := range keys {
		digests[k] = do(ca, "DEBUG", "DIGEST-VALUE", k).String()
	}
	expect(cb, "-MOVED 3300 "+a, "ARGET", "{b}ar0", 0)
	expect(cb, "-MOVED 3300 "+a, "ARSET", "{b}new", 0, "x")
	expect(cb, "+OK", "CLUSTER", "SETSLOT", slot, "IMPORTING", nodeID(t, a))
	expect(ca, "+OK", "CLUSTER", "SETSLOT", slot, "MIGRATING", nodeID(t, b))
	expect(ca, "+OK", "MIGRATE", "127.0.0.1", bPort, "", 0, 5000, "KEYS", keys[0], keys[1], keys[2], keys[3])
	expect(ca, "-ASK 3300 "+b, "ARLEN", "{b}ar0")
	expect(cb, "+OK", "CLUSTER", "SETSLOT", slot, "NODE", nodeID(t, b))
	expect(ca, "+OK", "CLUSTER", "SETSLOT", slot, "NODE", nodeID(t, b))
	for _, k := range keys {
		if got := do(cb, "DEBUG", "DIGEST-VALUE", k).String(); got != digests[k] {
			t.Errorf("%s on B: digest %s, was %s on A", k, got, digests[k])
		}
	}
	expect(ca, "-MOVED 3300 "+b, "ARCOUNT", "{b}ar0")
	expect(cb, "+array", "TYPE", "{b}ring")
}
