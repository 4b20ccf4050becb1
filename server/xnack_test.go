package server_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// XNACK (Redis 8.8), as https://redis.io/docs/latest/commands/xnack/
// documents it (its example first): a released entry stays in the group's
// PEL pending for no consumer (XPENDING shows "" and an idle time of -1),
// delivered at time 0 so any claim takes it at once, its delivery count
// one less (SILENT), kept (FAIL), LLONG_MAX (FATAL) or RETRYCOUNT's; FORCE
// adds an entry of the stream that is not pending. The reply counts the
// entries released; IDs not pending are ignored. go-redis v9.22.0's XNack
// specs run in TestGoRedisRedis8CommandSpecs. Where the page is silent
// Keyhive chose: a missing key or group is XCLAIM's NOGROUP error; an ID
// given twice counts once; the errors of the IDS block are XACKDEL's;
// XINFO STREAM FULL shows a group's nacked-count (the field go-redis
// reads) when it has NACKed entries, so a stream that never saw XNACK
// answers as Redis 7.4 does.

// xpendingExt is an extended XPENDING reply of (id, consumer, idle, count).
func xpendingExt(rows ...[4]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(rows))
	for _, r := range rows {
		fmt.Fprintf(&b, "*4\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n:%s\r\n:%s\r\n", len(r[0]), r[0], len(r[1]), r[1], r[2], r[3])
	}
	return b.String()
}

// TestXNack: the page's example and rules, RESP2 and RESP3.
func TestXNack(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.Start(t)
	k := p.Keyhive()
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		k.Do("XADD", "mystream", "1526569498055-0", "field", "value1")
		k.Do("XADD", "mystream", "1526569498056-0", "field", "value2")
		k.Do("XGROUP", "CREATE", "mystream", "mygroup", "0")
		k.Do("XREADGROUP", "GROUP", "mygroup", "consumer1", "STREAMS", "mystream", ">")
		docCase(t, p, ":2\r\n", "XNACK", "mystream", "mygroup", "FAIL", "IDS", "2", "1526569498055-0", "1526569498056-0")
		docCase(t, p, xpendingExt([4]string{"1526569498055-0", "", "-1", "1"}, [4]string{"1526569498056-0", "", "-1", "1"}),
			"XPENDING", "mystream", "mygroup", "-", "+", "10")
		// The summary counts them; no consumer has them.
		docCase(t, p, "*4\r\n:2\r\n$15\r\n1526569498055-0\r\n$15\r\n1526569498056-0\r\n*0\r\n", "XPENDING", "mystream", "mygroup")
		docCase(t, p, "*0\r\n", "XPENDING", "mystream", "mygroup", "-", "+", "10", "consumer1")
		// SILENT takes one delivery back (not below 0); FATAL marks it failed.
		docCase(t, p, ":1\r\n", "XNACK", "mystream", "mygroup", "SILENT", "IDS", "1", "1526569498055-0")
		docCase(t, p, ":1\r\n", "XNACK", "mystream", "mygroup", "SILENT", "IDS", "1", "1526569498055-0")
		docCase(t, p, ":1\r\n", "XNACK", "mystream", "mygroup", "FATAL", "IDS", "1", "1526569498056-0")
		docCase(t, p, xpendingExt([4]string{"1526569498055-0", "", "-1", "0"}, [4]string{"1526569498056-0", "", "-1", "9223372036854775807"}),
			"XPENDING", "mystream", "mygroup", "-", "+", "10")
		// A claim takes a released entry whatever its min-idle-time; the
		// claimer owns it again.
		docCase(t, p, "*1\r\n$15\r\n1526569498055-0\r\n", "XCLAIM", "mystream", "mygroup", "c2", "3600000", "1526569498055-0", "JUSTID")
		docCase(t, p, "*4\r\n:2\r\n$15\r\n1526569498055-0\r\n$15\r\n1526569498056-0\r\n*1\r\n*2\r\n$2\r\nc2\r\n$1\r\n1\r\n", "XPENDING", "mystream", "mygroup")
		// RETRYCOUNT sets the count whatever the mode; IDs not pending are
		// ignored, an ID given twice counts once.
		docCase(t, p, ":1\r\n", "XNACK", "mystream", "mygroup", "FATAL", "IDS", "3", "1526569498055-0", "9-9", "1526569498055-0", "RETRYCOUNT", "5")
		docCase(t, p, xpendingExt([4]string{"1526569498055-0", "", "-1", "5"}),
			"XPENDING", "mystream", "mygroup", "-", "1526569498055-0", "10")
		// FORCE adds an entry of the stream that is not pending (count 0,
		// RETRYCOUNT's, or LLONG_MAX with FATAL); never one the stream lacks.
		k.Do("XADD", "mystream", "1526569498057-0", "field", "value3")
		k.Do("XADD", "mystream", "1526569498058-0", "field", "value4")
		docCase(t, p, ":1\r\n", "XNACK", "mystream", "mygroup", "FAIL", "IDS", "2", "1526569498057-0", "1526569498059-0", "FORCE")
		docCase(t, p, ":1\r\n", "XNACK", "mystream", "mygroup", "FATAL", "IDS", "1", "1526569498058-0", "FORCE")
		docCase(t, p, ":0\r\n", "XNACK", "mystream", "mygroup", "FAIL", "IDS", "1", "1526569498059-0", "RETRYCOUNT", "3")
		docCase(t, p, xpendingExt([4]string{"1526569498057-0", "", "-1", "0"}, [4]string{"1526569498058-0", "", "-1", "9223372036854775807"}),
			"XPENDING", "mystream", "mygroup", "1526569498057-0", "+", "10")
		// XACK removes a released entry.
		docCase(t, p, ":1\r\n", "XACK", "mystream", "mygroup", "1526569498058-0")
		docCase(t, p, xpendingExt([4]string{"1526569498057-0", "", "-1", "0"}), "XPENDING", "mystream", "mygroup", "1526569498057-0", "+", "10")
		// Errors.
		k.Do("SET", "str", "v")
		docCase(t, p, wrongTypeReply, "XNACK", "str", "g", "FAIL", "IDS", "1", "1-0")
		docCase(t, p, "-NOGROUP No such key 'nokey' or consumer group 'g'\r\n", "XNACK", "nokey", "g", "FAIL", "IDS", "1", "1-0")
		docCase(t, p, "-NOGROUP No such key 'mystream' or consumer group 'nogroup'\r\n", "XNACK", "mystream", "nogroup", "FAIL", "IDS", "1", "1-0")
		for _, bad := range [][]any{
			{"XNACK", "mystream", "mygroup", "RETRY", "IDS", "1", "1-0"}, {"XNACK", "mystream", "mygroup", "FAIL", "ID", "1", "1-0"},
			{"XNACK", "mystream", "mygroup", "FAIL", "IDS", "1", "1-0", "FORCE", "FORCE"},
			{"XNACK", "mystream", "mygroup", "FAIL", "IDS", "1", "1-0", "RETRYCOUNT"},
			{"XNACK", "mystream", "mygroup", "FAIL", "IDS", "1", "1-0", "JUSTID"},
		} {
			docCase(t, p, "-ERR syntax error\r\n", bad...)
		}
		docCase(t, p, "-ERR Number of IDs must be a positive integer\r\n", "XNACK", "mystream", "mygroup", "FAIL", "IDS", "0", "1-0")
		docCase(t, p, "-ERR The `numids` parameter must match the number of arguments\r\n", "XNACK", "mystream", "mygroup", "FAIL", "IDS", "3", "1-0", "2-0")
		docCase(t, p, "-ERR Invalid RETRYCOUNT option argument for XNACK\r\n", "XNACK", "mystream", "mygroup", "FAIL", "IDS", "1", "1-0", "RETRYCOUNT", "-1")
		docCase(t, p, "-ERR Invalid stream ID specified as stream command argument\r\n", "XNACK", "mystream", "mygroup", "FAIL", "IDS", "1", "x")
		docCase(t, p, "-ERR wrong number of arguments for 'xnack' command\r\n", "XNACK", "mystream", "mygroup", "FAIL", "IDS", "1")
		k.Do("FLUSHALL")
	}
}

// TestXNackInfoAndClaims: XINFO STREAM FULL's nacked-count and the
// released entries' owner and time there; XAUTOCLAIM and XREADGROUP CLAIM
// take them at once; XGROUP DELCONSUMER leaves them.
func TestXNackInfoAndClaims(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.Start(t)
	k := p.Keyhive()
	k.Do("XADD", "s", "1-0", "f", "a")
	k.Do("XADD", "s", "2-0", "f", "b")
	k.Do("XADD", "s", "3-0", "f", "c")
	k.Do("XGROUP", "CREATE", "s", "g", "0")
	k.Do("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">")
	full := func() map[string]string {
		r := k.Do("XINFO", "STREAM", "s", "FULL")
		group := r.Elems[len(r.Elems)-1].Elems[0]
		m := map[string]string{}
		for i := 0; i+1 < len(group.Elems); i += 2 {
			m[group.Elems[i].Str] = string(group.Elems[i+1].Raw)
		}
		return m
	}
	if _, ok := full()["nacked-count"]; ok {
		t.Errorf("XINFO STREAM FULL shows nacked-count before any XNACK: %v", full())
	}
	docCase(t, p, ":2\r\n", "XNACK", "s", "g", "FAIL", "IDS", "2", "1-0", "2-0")
	m := full()
	if m["nacked-count"] != ":2\r\n" || m["pel-count"] != ":3\r\n" ||
		!strings.HasPrefix(m["pending"], "*3\r\n*4\r\n$3\r\n1-0\r\n$0\r\n\r\n:0\r\n:1\r\n*4\r\n$3\r\n2-0\r\n$0\r\n\r\n:0\r\n:1\r\n") {
		t.Errorf("XINFO STREAM FULL group after XNACK: %q", m)
	}
	docCase(t, p, ":1\r\n", "XGROUP", "DELCONSUMER", "s", "g", "c1")
	docCase(t, p, "*4\r\n:2\r\n$3\r\n1-0\r\n$3\r\n2-0\r\n*0\r\n", "XPENDING", "s", "g")
	docCase(t, p, "*3\r\n$3\r\n2-0\r\n*1\r\n$3\r\n1-0\r\n*0\r\n", "XAUTOCLAIM", "s", "g", "c2", "3600000", "0", "COUNT", "1", "JUSTID")
	if m := full(); m["nacked-count"] != ":1\r\n" {
		t.Errorf("nacked-count after a claim: %q", m["nacked-count"])
	}
	if r := k.Do("XREADGROUP", "GROUP", "g", "c3", "CLAIM", "3600000", "STREAMS", "s", ">"); !strings.Contains(string(r.Raw), "$3\r\n2-0\r\n") {
		t.Errorf("XREADGROUP CLAIM did not take the released 2-0: %q", r.Raw)
	}
	if _, ok := full()["nacked-count"]; ok {
		t.Errorf("nacked-count after every released entry was claimed: %v", full())
	}
}

// TestXNackPersistence: released entries survive DEBUG RELOAD (an RDB file:
// a group PEL entry with no consumer, delivered at time 0), an AOF
// rewritten to commands (XNACK ... RETRYCOUNT n FORCE, in the order
// released) loaded back, and DUMP and RESTORE.
func TestXNackPersistence(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.StartIsolated(t, "--appendonly", "yes", "--aof-use-rdb-preamble", "no")
	k := p.Keyhive()
	for i := 1; i <= 5; i++ {
		k.Do("XADD", "s", fmt.Sprintf("%d-0", i), "f", i)
	}
	k.Do("XGROUP", "CREATE", "s", "g", "0")
	k.Do("XREADGROUP", "GROUP", "g", "c1", "COUNT", "3", "STREAMS", "s", ">")
	k.Do("XNACK", "s", "g", "FATAL", "IDS", "1", "3-0")
	k.Do("XNACK", "s", "g", "SILENT", "IDS", "1", "1-0")
	k.Do("XNACK", "s", "g", "FAIL", "IDS", "1", "5-0", "RETRYCOUNT", "7", "FORCE")
	want := xpendingExt([4]string{"1-0", "", "-1", "0"}, [4]string{"2-0", "c1", "*", "1"},
		[4]string{"3-0", "", "-1", "9223372036854775807"}, [4]string{"5-0", "", "-1", "7"})
	check := func(when string) {
		t.Helper()
		got := string(k.Do("XPENDING", "s", "g", "-", "+", "10").Raw)
		// 2-0's idle time is whatever passed.
		idle := strings.Index(got, "$2\r\nc1\r\n:") + len("$2\r\nc1\r\n:")
		if end := strings.Index(got[idle:], "\r\n"); idle > len("$2\r\nc1\r\n:") && end > 0 {
			got = got[:idle] + "*" + got[idle+end:]
		}
		if got != want {
			t.Errorf("XPENDING %s:\ngot  %q\nwant %q", when, got, want)
		}
		if d := k.Do("XINFO", "STREAM", "s", "FULL").Raw; !strings.Contains(string(d), "$12\r\nnacked-count\r\n:3\r\n") {
			t.Errorf("XINFO STREAM FULL %s: no nacked-count 3 in %q", when, d)
		}
	}
	check("before")
	docCase(t, p, "+OK\r\n", "DEBUG", "RELOAD")
	check("after DEBUG RELOAD")
	if r := k.Do("BGREWRITEAOF"); !strings.HasPrefix(r.Str, "Background append only file rewriting") {
		t.Fatalf("BGREWRITEAOF: %v", r)
	}
	waitInfo(t, k, "aof_rewrite_in_progress:0")
	loadAOF(t, k)
	check("after the rewritten AOF's load")
	// DUMP and RESTORE carry them too.
	dump := k.Do("DUMP", "s")
	docCase(t, p, "+OK\r\n", "RESTORE", "s", "0", dump.Str, "REPLACE")
	check("after DUMP and RESTORE")
	docCase(t, p, "*1\r\n$3\r\n5-0\r\n", "XCLAIM", "s", "g", "c2", "0", "5-0", "JUSTID")
}

// TestXNackPropagation: XNACK propagates as sent; nothing when it released
// nothing.
func TestXNackPropagation(t *testing.T) {
	s := startKeyhiveProp(t)
	s.collect()
	for _, step := range []propStep{
		w("XADD s 1-0 f v", "XADD s 1-0 f v"),
		w("XGROUP CREATE s g 0", "XGROUP CREATE s g 0"),
		w("XNACK s g FAIL IDS 1 1-0"),
		w("XNACK s g FATAL IDS 2 1-0 2-0 FORCE", "XNACK s g FATAL IDS 2 1-0 2-0 FORCE"),
		w("XNACK s g SILENT IDS 1 1-0 RETRYCOUNT 4", "XNACK s g SILENT IDS 1 1-0 RETRYCOUNT 4"),
	} {
		t0 := time.Now().UnixMilli()
		reply := s.conn.do(t, step.cmd...)
		t1 := time.Now().UnixMilli()
		if err := matchPropagated(s.collect(), step.want, 0, t0, t1); err != nil {
			t.Errorf("%q (reply %v): %v", step.cmd, reply, err)
		}
	}
}

// TestReplXNack: a replica holds the master's released entries (XPENDING
// alike), fed XNACK in the stream and after a full sync (the RDB).
func TestReplXNack(t *testing.T) {
	master := startReplNode(t, false)
	replica := startReplNode(t, false)
	for i := 1; i <= 6; i++ {
		master.ok(t, "XADD", "s", fmt.Sprintf("%d-0", i), "f", i)
	}
	master.ok(t, "XGROUP", "CREATE", "s", "g", "0")
	master.ok(t, "XREADGROUP", "GROUP", "g", "c1", "COUNT", "4", "STREAMS", "s", ">")
	master.ok(t, "XNACK", "s", "g", "FATAL", "IDS", "1", "2-0")
	replicate(t, master, replica)
	master.ok(t, "XNACK", "s", "g", "SILENT", "IDS", "2", "1-0", "6-0", "FORCE")
	sameData(t, master, replica)
	pending := func(n *replNode) string {
		r := n.ok(t, "XPENDING", "s", "g", "-", "+", "10")
		var rows []string
		for _, e := range r.Elems {
			rows = append(rows, e.Elems[0].Str+" "+e.Elems[1].Str+" "+fmt.Sprint(e.Elems[3].Int))
		}
		return strings.Join(rows, ", ")
	}
	want := "1-0  0, 2-0  9223372036854775807, 3-0 c1 1, 4-0 c1 1, 6-0  0"
	for _, n := range []*replNode{master, replica} {
		if got := pending(n); got != want {
			t.Errorf("%s XPENDING: %q, want %q", n.name, got, want)
		}
	}
}

// TestXNackClaimOrder: XREADGROUP CLAIM takes the NACKed entries first, in
// the order XNACK released them, then the other idle ones, longest idle
// first, as https://redis.io/docs/latest/commands/xreadgroup/ orders them.
func TestXNackClaimOrder(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.Start(t)
	k := p.Keyhive()
	for i := 1; i <= 4; i++ {
		k.Do("XADD", "s", fmt.Sprintf("%d-0", i), "f", i)
	}
	k.Do("XGROUP", "CREATE", "s", "g", "0")
	k.Do("XREADGROUP", "GROUP", "g", "c1", "COUNT", "2", "STREAMS", "s", ">")
	time.Sleep(20 * time.Millisecond)
	k.Do("XREADGROUP", "GROUP", "g", "c1", "COUNT", "2", "STREAMS", "s", ">")
	k.Do("XNACK", "s", "g", "FAIL", "IDS", "1", "4-0")
	k.Do("XNACK", "s", "g", "FAIL", "IDS", "1", "3-0")
	r := k.Do("XREADGROUP", "GROUP", "g", "c2", "CLAIM", "0", "STREAMS", "s", ">")
	var order []string
	for _, e := range r.Elems[0].Elems[1].Elems {
		order = append(order, e.Elems[0].Str)
	}
	if got := strings.Join(order, " "); got != "4-0 3-0 1-0 2-0" {
		t.Errorf("XREADGROUP CLAIM order: %s, want 4-0 3-0 1-0 2-0", got)
	}
}
