package server_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// Idempotent production (Redis 8.6), as documented by
// https://redis.io/docs/latest/commands/xadd/ (IDMP producer-id
// idempotent-id, IDMPAUTO producer-id: a pair already used answers the ID
// of the entry it added instead of adding one; only with the ID *),
// https://redis.io/docs/latest/commands/xcfgset/ (IDMP-DURATION 1-86400
// seconds, IDMP-MAXSIZE 1-10000 iids per producer, defaults 100 and 100,
// at least one given, the stream must exist, it clears the producers'
// iids) and https://redis.io/docs/latest/commands/xinfo-stream/ (the
// idmp-duration, idmp-maxsize, pids-tracked, iids-tracked, iids-added and
// iids-duplicates fields). The pages give no error texts: Keyhive's are
// checked here as its own. go-redis v9.22.0's IDMP, IDMPAUTO and XCfgSet
// specs run in TestGoRedisRedis8CommandSpecs.

// idmpInfo is the part of an XINFO STREAM reply holding the idmp fields.
func idmpInfo(duration, maxSize, pids, iids, added, duplicates int) string {
	return fmt.Sprintf("$13\r\nidmp-duration\r\n:%d\r\n$12\r\nidmp-maxsize\r\n:%d\r\n$12\r\npids-tracked\r\n:%d\r\n"+
		"$12\r\niids-tracked\r\n:%d\r\n$10\r\niids-added\r\n:%d\r\n$15\r\niids-duplicates\r\n:%d\r\n",
		duration, maxSize, pids, iids, added, duplicates)
}

func bulk(s string) string { return fmt.Sprintf("$%d\r\n%s\r\n", len(s), s) }

// TestXAddIDMP: the XADD and XCFGSET pages' rules, RESP2 and RESP3.
func TestXAddIDMP(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.Start(t)
	k := p.Keyhive()
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		infoHead := map[int]string{2: "*32\r\n", 3: "%16\r\n"}[proto]
		checkInfo := func(key, want string) {
			t.Helper()
			got := string(k.Do("XINFO", "STREAM", key).Raw)
			if !strings.HasPrefix(got, infoHead) || !strings.Contains(got, want) {
				t.Errorf("RESP%d XINFO STREAM %s: %q, want header %q and %q", proto, key, got, infoHead, want)
			}
		}
		// A stream that never used IDMP answers as Redis 7.4 does.
		k.Do("XADD", "plain", "1-0", "f", "v")
		if got := string(k.Do("XINFO", "STREAM", "plain").Raw); strings.Contains(got, "idmp") {
			t.Errorf("XINFO STREAM of a stream without IDMP: %q", got)
		}
		id1 := k.Do("XADD", "s", "IDMP", "p1", "m1", "*", "f", "v1").Str
		docCase(t, p, bulk(id1), "XADD", "s", "IDMP", "p1", "m1", "*", "f", "v2")
		docCase(t, p, ":1\r\n", "XLEN", "s")
		id2 := k.Do("XADD", "s", "IDMP", "p1", "m2", "*", "f", "v3").Str
		if id2 == id1 {
			t.Errorf("a new iid answered the first entry's ID %s", id1)
		}
		// The same iid from another producer is another message.
		id3 := k.Do("XADD", "s", "IDMP", "p2", "m1", "*", "f", "v4").Str
		docCase(t, p, ":3\r\n", "XLEN", "s")
		checkInfo("s", idmpInfo(100, 100, 2, 3, 3, 1))
		// IDMPAUTO: the iid is the pairs' content, whatever their order.
		a1 := k.Do("XADD", "s", "IDMPAUTO", "p3", "*", "a", "1", "b", "2").Str
		docCase(t, p, bulk(a1), "XADD", "s", "IDMPAUTO", "p3", "*", "b", "2", "a", "1")
		if a2 := k.Do("XADD", "s", "IDMPAUTO", "p3", "*", "a", "1", "b", "3").Str; a2 == a1 {
			t.Errorf("IDMPAUTO answered %s for other content", a2)
		}
		checkInfo("s", idmpInfo(100, 100, 3, 5, 5, 2))
		// FULL has them too, after recorded-first-entry-id.
		full := string(k.Do("XINFO", "STREAM", "s", "FULL").Raw)
		if !strings.HasPrefix(full, map[int]string{2: "*30\r\n", 3: "%15\r\n"}[proto]) || !strings.Contains(full, idmpInfo(100, 100, 3, 5, 5, 2)+"$7\r\nentries\r\n") {
			t.Errorf("RESP%d XINFO STREAM FULL: %q", proto, full)
		}
		// With the other options, in any order before the ID; NOMKSTREAM
		// on a missing key still answers null.
		docCase(t, p, bulk(id3), "XADD", "s", "MAXLEN", "~", "100", "IDMP", "p2", "m1", "*", "f", "x")
		docCase(t, p, map[int]string{2: "$-1\r\n", 3: "_\r\n"}[proto], "XADD", "nokey", "NOMKSTREAM", "IDMP", "p", "i", "*", "f", "v")
		// A duplicate answers its entry's ID even once the entry is deleted.
		docCase(t, p, ":1\r\n", "XDEL", "s", id2)
		docCase(t, p, bulk(id2), "XADD", "s", "IDMP", "p1", "m2", "*", "f", "v")

		// XCFGSET: sets the configuration and clears the iids.
		docCase(t, p, "+OK\r\n", "XCFGSET", "s", "IDMP-DURATION", "200", "IDMP-MAXSIZE", "2")
		checkInfo("s", idmpInfo(200, 2, 0, 0, 5, 4))
		if again := k.Do("XADD", "s", "IDMP", "p1", "m1", "*", "f", "v").Str; again == id1 {
			t.Errorf("XCFGSET kept the iid m1 (answered %s)", again)
		}
		// IDMP-MAXSIZE: the producer's oldest iid goes past the maximum.
		k.Do("XADD", "s", "IDMP", "p1", "m2", "*", "f", "v")
		m3 := k.Do("XADD", "s", "IDMP", "p1", "m3", "*", "f", "v").Str
		checkInfo("s", idmpInfo(200, 2, 1, 2, 8, 4))
		docCase(t, p, bulk(m3), "XADD", "s", "IDMP", "p1", "m3", "*", "f", "v")
		n := k.Do("XLEN", "s").Int
		k.Do("XADD", "s", "IDMP", "p1", "m1", "*", "f", "v")
		docCase(t, p, fmt.Sprintf(":%d\r\n", n+1), "XLEN", "s")
		// One option alone keeps the other.
		docCase(t, p, "+OK\r\n", "XCFGSET", "s", "IDMP-MAXSIZE", "500")
		checkInfo("s", idmpInfo(200, 500, 0, 0, 9, 5))
		// XCFGSET alone on a plain stream makes the fields appear.
		docCase(t, p, "+OK\r\n", "XCFGSET", "plain", "IDMP-DURATION", "300")
		checkInfo("plain", idmpInfo(300, 100, 0, 0, 0, 0))

		// Errors.
		docCase(t, p, "-ERR IDMP and IDMPAUTO can be used only with an auto-generated ID (*)\r\n", "XADD", "s", "IDMP", "p", "i", "9999999999999-0", "f", "v")
		docCase(t, p, "-ERR IDMP and IDMPAUTO can be used only with an auto-generated ID (*)\r\n", "XADD", "s", "IDMPAUTO", "p", "9999999999999-0", "f", "v")
		docCase(t, p, "-ERR IDMP producer ID and idempotent ID must not be empty\r\n", "XADD", "s", "IDMP", "", "i", "*", "f", "v")
		docCase(t, p, "-ERR IDMP producer ID and idempotent ID must not be empty\r\n", "XADD", "s", "IDMP", "p", "", "*", "f", "v")
		docCase(t, p, "-ERR IDMP producer ID and idempotent ID must not be empty\r\n", "XADD", "s", "IDMPAUTO", "", "*", "f", "v")
		docCase(t, p, "-ERR Invalid stream ID specified as stream command argument\r\n", "XADD", "s", "IDMP", "p", "i", "IDMPAUTO", "p", "*", "f", "v")
		docCase(t, p, "-ERR no such key\r\n", "XCFGSET", "nokey", "IDMP-DURATION", "10")
		docCase(t, p, "-ERR at least one of IDMP-DURATION or IDMP-MAXSIZE must be specified\r\n", "XCFGSET", "s")
		docCase(t, p, "-ERR IDMP-DURATION must be between 1 and 86400 seconds\r\n", "XCFGSET", "s", "IDMP-DURATION", "0")
		docCase(t, p, "-ERR IDMP-DURATION must be between 1 and 86400 seconds\r\n", "XCFGSET", "s", "IDMP-DURATION", "86401")
		docCase(t, p, "-ERR IDMP-MAXSIZE must be between 1 and 10000\r\n", "XCFGSET", "s", "IDMP-MAXSIZE", "10001")
		docCase(t, p, "-ERR value is not an integer or out of range\r\n", "XCFGSET", "s", "IDMP-MAXSIZE", "x")
		docCase(t, p, "-ERR syntax error\r\n", "XCFGSET", "s", "IDMP-MAXSIZE")
		docCase(t, p, "-ERR syntax error\r\n", "XCFGSET", "s", "DURATION", "10")
		k.Do("SET", "str", "v")
		docCase(t, p, wrongTypeReply, "XCFGSET", "str", "IDMP-DURATION", "10")
		docCase(t, p, wrongTypeReply, "XADD", "str", "IDMP", "p", "i", "*", "f", "v")
		k.Do("FLUSHALL")
	}
}

// TestXAddIDMPDuration: an iid older than IDMP-DURATION is forgotten, its
// pair adding a new entry.
func TestXAddIDMPDuration(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.Start(t)
	k := p.Keyhive()
	k.Do("XADD", "s", "*", "f", "v")
	docCase(t, p, "+OK\r\n", "XCFGSET", "s", "IDMP-DURATION", "1")
	id := k.Do("XADD", "s", "IDMP", "p", "i", "*", "f", "v").Str
	docCase(t, p, bulk(id), "XADD", "s", "IDMP", "p", "i", "*", "f", "v")
	time.Sleep(1100 * time.Millisecond)
	if got := k.Do("XADD", "s", "IDMP", "p", "i", "*", "f", "v").Str; got == id {
		t.Errorf("an iid past IDMP-DURATION still answered %s", id)
	}
	docCase(t, p, ":3\r\n", "XLEN", "s")
}

// TestXAddIDMPPersistence: the iids, the configuration (both in DEBUG
// DIGEST-VALUE) and the counters survive DEBUG RELOAD (Keyhive's own RDB type for a stream with IDMP
// state) and DUMP/RESTORE; the iids and configuration survive an AOF
// rewritten to commands (XCFGSET, XIDMPRECORD) and loaded back.
func TestXAddIDMPPersistence(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.StartIsolated(t, "--appendonly", "yes", "--aof-use-rdb-preamble", "no")
	k := p.Keyhive()
	k.Do("XADD", "s", "*", "f", "v")
	k.Do("XCFGSET", "s", "IDMP-DURATION", "500", "IDMP-MAXSIZE", "50")
	id1 := k.Do("XADD", "s", "IDMP", "p1", "m1", "*", "f", "v").Str
	id2 := k.Do("XADD", "s", "IDMPAUTO", "p2", "*", "a", "1").Str
	k.Do("XADD", "s", "IDMP", "p1", "m1", "*", "f", "v")
	digest := k.Do("DEBUG", "DIGEST-VALUE", "s").Raw
	check := func(when string, added, duplicates int) {
		t.Helper()
		if got := k.Do("DEBUG", "DIGEST-VALUE", "s").Raw; string(got) != string(digest) {
			t.Errorf("DEBUG DIGEST-VALUE %s: %q, want %q", when, got, digest)
		}
		if got := string(k.Do("XINFO", "STREAM", "s").Raw); !strings.Contains(got, idmpInfo(500, 50, 2, 2, added, duplicates)) {
			t.Errorf("XINFO STREAM %s: %q", when, got)
		}
		for _, c := range []struct {
			id   string
			args []any
		}{{id1, []any{"XADD", "s", "IDMP", "p1", "m1", "*", "f", "v"}}, {id2, []any{"XADD", "s", "IDMPAUTO", "p2", "*", "a", "1"}}} {
			if got := k.Do(c.args...).Str; got != c.id {
				t.Errorf("%v %s: %s, want %s", c.args, when, got, c.id)
			}
		}
		docCase(t, p, ":3\r\n", "XLEN", "s")
	}
	check("before", 2, 1)
	docCase(t, p, "+OK\r\n", "DEBUG", "RELOAD")
	check("after DEBUG RELOAD", 2, 3)
	dump := k.Do("DUMP", "s")
	docCase(t, p, "+OK\r\n", "RESTORE", "s", "0", dump.Str, "REPLACE")
	check("after DUMP and RESTORE", 2, 5)
	if r := k.Do("BGREWRITEAOF"); !strings.HasPrefix(r.Str, "Background append only file rewriting") {
		t.Fatalf("BGREWRITEAOF: %v", r)
	}
	waitInfo(t, k, "aof_rewrite_in_progress:0")
	loadAOF(t, k)
	// No command carries the counters: the XIDMPRECORDs count none.
	check("after the rewritten AOF's load", 0, 0)
}

// TestXIDMPRecord: https://redis.io/docs/latest/commands/xidmprecord/'s
// cases: OK when recorded or already mapping to that entry; errors for a
// missing key, another type, an entry not in the stream, empty IDs, and a
// pair mapping to another entry.
func TestXIDMPRecord(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.Start(t)
	k := p.Keyhive()
	k.Do("XADD", "s", "1-0", "f", "v")
	k.Do("XADD", "s", "2-0", "f", "v")
	docCase(t, p, "+OK\r\n", "XIDMPRECORD", "s", "p", "i", "1-0")
	docCase(t, p, "+OK\r\n", "XIDMPRECORD", "s", "p", "i", "1-0")
	docCase(t, p, "$3\r\n1-0\r\n", "XADD", "s", "IDMP", "p", "i", "*", "f", "v")
	docCase(t, p, "-ERR the producer ID and idempotent ID already map to a different stream ID\r\n", "XIDMPRECORD", "s", "p", "i", "2-0")
	docCase(t, p, "-ERR the stream ID does not refer to an existing entry\r\n", "XIDMPRECORD", "s", "p", "j", "3-0")
	docCase(t, p, "-ERR no such key\r\n", "XIDMPRECORD", "nokey", "p", "i", "1-0")
	docCase(t, p, "-ERR IDMP producer ID and idempotent ID must not be empty\r\n", "XIDMPRECORD", "s", "", "i", "1-0")
	docCase(t, p, "-ERR Invalid stream ID specified as stream command argument\r\n", "XIDMPRECORD", "s", "p", "i", "x")
	k.Do("SET", "str", "v")
	docCase(t, p, wrongTypeReply, "XIDMPRECORD", "str", "p", "i", "1-0")
}

// TestXAddIDMPPropagation: a new entry propagates with its ID (IDMPAUTO
// as IDMP with the iid it computed); a duplicate propagates nothing.
func TestXAddIDMPPropagation(t *testing.T) {
	s := startKeyhiveProp(t)
	s.collect()
	for _, step := range []propStep{
		w("XADD s IDMP p i * f v", "XADD s IDMP p i {*} f v"),
		w("XADD s IDMP p i * f v"),
		w("XADD s IDMPAUTO p * f v", "XADD s IDMP p {*} {*} f v"),
		w("XADD s IDMPAUTO p * f v"),
		w("XCFGSET s IDMP-DURATION 10", "XCFGSET s IDMP-DURATION 10"),
	} {
		t0 := time.Now().UnixMilli()
		reply := s.conn.do(t, step.cmd...)
		t1 := time.Now().UnixMilli()
		if err := matchPropagated(s.collect(), step.want, 0, t0, t1); err != nil {
			t.Errorf("%q (reply %v): %v", step.cmd, reply, err)
		}
	}
}

// TestReplXAddIDMP: a replica holds the master's iids, fed XADD in the
// stream and after a full sync (the RDB); promoted, it still answers a
// duplicate with the original entry's ID.
func TestReplXAddIDMP(t *testing.T) {
	master := startReplNode(t, false)
	replica := startReplNode(t, false)
	master.ok(t, "XADD", "s", "*", "f", "v")
	master.ok(t, "XCFGSET", "s", "IDMP-MAXSIZE", "5")
	before := master.ok(t, "XADD", "s", "IDMP", "p", "before-sync", "*", "f", "v").Str
	replicate(t, master, replica)
	after := master.ok(t, "XADD", "s", "IDMPAUTO", "p", "*", "g", "w").Str
	master.ok(t, "XADD", "s", "IDMP", "p", "before-sync", "*", "f", "v")
	sameData(t, master, replica)
	info := func(n *replNode) string {
		r := string(n.ok(t, "XINFO", "STREAM", "s").Raw)
		return r[strings.Index(r, "$13\r\nidmp-duration"):strings.Index(r, "$15\r\niids-duplicates")]
	}
	if m, r := info(master), info(replica); m != r || !strings.Contains(m, ":5\r\n") {
		t.Errorf("XINFO STREAM idmp fields: master %q, replica %q", m, r)
	}
	replica.ok(t, "REPLICAOF", "NO", "ONE")
	if got := replica.ok(t, "XADD", "s", "IDMP", "p", "before-sync", "*", "f", "v").Str; got != before {
		t.Errorf("promoted replica: XADD IDMP p before-sync answered %s, want %s", got, before)
	}
	if got := replica.ok(t, "XADD", "s", "IDMPAUTO", "p", "*", "g", "w").Str; got != after {
		t.Errorf("promoted replica: XADD IDMPAUTO answered %s, want %s", got, after)
	}
	if n := replica.ok(t, "XLEN", "s").Int; n != 3 {
		t.Errorf("promoted replica XLEN: %d, want 3", n)
	}
}
