package server_test

// Redis 8.x stream commands, which the oracles (7.0, 7.4) lack: explicit
// expected replies, each case following the redis.io page cited above it
// and Redis's own tests of the command (tests/unit/type/stream.tcl).

import (
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// kh sends a command to Keyhive alone and checks the raw reply.
func kh(t *testing.T, c *difftest.Client, want string, args ...any) {
	t.Helper()
	if got := c.Do(args...).Raw; string(got) != want {
		t.Errorf("%v\n got:  %q\n want: %q", args, got, want)
	}
}

// ints is the RESP array of integers (the same in RESP2 and RESP3).
func ints(ns ...string) string {
	return "*" + itoa(len(ns)) + "\r\n:" + strings.Join(ns, "\r\n:") + "\r\n"
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// noPending is XPENDING's summary of an empty PEL, by protocol.
var noPending = map[int]string{2: "*4\r\n:0\r\n$-1\r\n$-1\r\n*-1\r\n", 3: "*4\r\n:0\r\n_\r\n_\r\n_\r\n"}

// https://redis.io/docs/latest/commands/xdelex/
func TestXdelex(t *testing.T) {
	p := difftest.Start(t)
	k := p.Keyhive()
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		k.Do("DEL", "s", "str")
		// A missing key: -1 per ID.
		kh(t, k, ints("-1", "-1"), "XDELEX", "s", "IDS", "2", "1-0", "2-0")
		k.Do("XADD", "s", "1-0", "f", "v")
		k.Do("XADD", "s", "2-0", "f", "v")
		k.Do("XADD", "s", "3-0", "f", "v")
		// KEEPREF (the default) is XDEL: -1 for IDs not in the stream.
		kh(t, k, ints("1", "-1"), "XDELEX", "s", "IDS", "2", "1-0", "9-0")
		kh(t, k, ":2\r\n", "XLEN", "s")
		// The IDS block may come first.
		kh(t, k, ints("-1"), "XDELEX", "s", "IDS", "1", "1-0", "KEEPREF")
		// ACKED with no consumer group deletes.
		kh(t, k, ints("1"), "XDELEX", "s", "ACKED", "IDS", "1", "2-0")
		k.Do("XADD", "s", "4-0", "f", "v")
		k.Do("XADD", "s", "5-0", "f", "v")
		k.Do("XGROUP", "CREATE", "s", "g1", "3-0")
		k.Do("XGROUP", "CREATE", "s", "g2", "0")
		k.Do("XREADGROUP", "GROUP", "g2", "c", "COUNT", "1", "STREAMS", "s", ">") // 3-0 pending in g2
		// ACKED: 3-0 is pending in g2, 4-0 not delivered to g2 yet; an ID
		// a group still needs answers 2 even when it is not in the stream.
		kh(t, k, ints("2", "2", "2"), "XDELEX", "s", "ACKED", "IDS", "3", "3-0", "4-0", "4-5")
		k.Do("XACK", "s", "g2", "3-0")
		kh(t, k, ints("1", "2"), "XDELEX", "s", "ACKED", "IDS", "2", "3-0", "4-0")
		// DELREF deletes and drops every group's PEL entry.
		k.Do("XREADGROUP", "GROUP", "g1", "c", "STREAMS", "s", ">")
		k.Do("XREADGROUP", "GROUP", "g2", "c", "STREAMS", "s", ">")
		kh(t, k, ints("1"), "XDELEX", "s", "DELREF", "IDS", "1", "4-0")
		kh(t, k, "*4\r\n:1\r\n$3\r\n5-0\r\n$3\r\n5-0\r\n*1\r\n*2\r\n$1\r\nc\r\n$1\r\n1\r\n", "XPENDING", "s", "g1")
		// KEEPREF leaves them.
		kh(t, k, ints("1"), "XDELEX", "s", "IDS", "1", "5-0")
		kh(t, k, "*4\r\n:1\r\n$3\r\n5-0\r\n$3\r\n5-0\r\n*1\r\n*2\r\n$1\r\nc\r\n$1\r\n1\r\n", "XPENDING", "s", "g1")
		// DELREF drops references to an entry no longer in the stream.
		kh(t, k, ints("-1"), "XDELEX", "s", "DELREF", "IDS", "1", "5-0")
		kh(t, k, noPending[proto], "XPENDING", "s", "g2")
		// Errors.
		kh(t, k, "-ERR Number of IDs must be a positive integer\r\n", "XDELEX", "s", "IDS", "0", "1-0")
		kh(t, k, "-ERR Number of IDs must be a positive integer\r\n", "XDELEX", "s", "IDS", "x", "1-0")
		kh(t, k, "-ERR The `numids` parameter must match the number of arguments\r\n", "XDELEX", "s", "IDS", "3", "1-0", "2-0")
		kh(t, k, "-ERR syntax error\r\n", "XDELEX", "s", "IDS", "1", "1-0", "2-0")
		kh(t, k, "-ERR syntax error\r\n", "XDELEX", "s", "KEEPREF", "ACKED", "IDS", "1", "1-0")
		kh(t, k, "-ERR syntax error\r\n", "XDELEX", "s", "IDS", "1", "1-0", "IDS", "1", "2-0")
		kh(t, k, "-ERR Invalid stream ID specified as stream command argument\r\n", "XDELEX", "s", "IDS", "1", "abc")
		kh(t, k, "-ERR wrong number of arguments for 'xdelex' command\r\n", "XDELEX", "s", "IDS", "1")
		k.Do("SET", "str", "x")
		kh(t, k, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "XDELEX", "str", "IDS", "1", "1-0")
	}
}

// https://redis.io/docs/latest/commands/xackdel/
func TestXackdel(t *testing.T) {
	p := difftest.Start(t)
	k := p.Keyhive()
	setup := func() {
		k.Do("DEL", "s")
		k.Do("XADD", "s", "1-0", "f", "v")
		k.Do("XADD", "s", "2-0", "f", "v")
		k.Do("XGROUP", "CREATE", "s", "g1", "0")
		k.Do("XGROUP", "CREATE", "s", "g2", "0")
		k.Do("XREADGROUP", "GROUP", "g1", "c1", "STREAMS", "s", ">")
		k.Do("XREADGROUP", "GROUP", "g2", "c2", "STREAMS", "s", ">")
	}
	const twoPendingC2 = "*4\r\n:2\r\n$3\r\n1-0\r\n$3\r\n2-0\r\n*1\r\n*2\r\n$2\r\nc2\r\n$1\r\n2\r\n"
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		nonePending := noPending[proto]
		k.Do("DEL", "s")
		// A missing key, or group: -1 per ID.
		kh(t, k, ints("-1", "-1"), "XACKDEL", "s", "g", "IDS", "2", "1-1", "2-2")
		k.Do("XADD", "s", "1-0", "f", "v")
		kh(t, k, ints("-1", "-1"), "XACKDEL", "s", "g", "IDS", "2", "1-1", "2-2")

		// KEEPREF: acknowledged in g1 and deleted; g2 keeps its PEL.
		setup()
		kh(t, k, ints("1", "1"), "XACKDEL", "s", "g1", "KEEPREF", "IDS", "2", "1-0", "2-0")
		kh(t, k, ":0\r\n", "XLEN", "s")
		kh(t, k, nonePending, "XPENDING", "s", "g1")
		kh(t, k, twoPendingC2, "XPENDING", "s", "g2")
		// Acknowledged in g2: the entries are gone already, still 1.
		kh(t, k, ints("1", "1"), "XACKDEL", "s", "g2", "IDS", "2", "1-0", "2-0")
		kh(t, k, nonePending, "XPENDING", "s", "g2")
		// Not pending in the group: -1.
		kh(t, k, ints("-1"), "XACKDEL", "s", "g2", "IDS", "1", "1-0")

		// DELREF: every group's PEL entry goes.
		setup()
		kh(t, k, ints("1", "1"), "XACKDEL", "s", "g1", "DELREF", "IDS", "2", "1-0", "2-0")
		kh(t, k, ":0\r\n", "XLEN", "s")
		kh(t, k, nonePending, "XPENDING", "s", "g2")
		kh(t, k, ints("-1", "-1"), "XACKDEL", "s", "g2", "DELREF", "IDS", "2", "1-0", "2-0")

		// ACKED: deleted only once every group has acknowledged.
		setup()
		kh(t, k, ints("2", "2"), "XACKDEL", "s", "g1", "ACKED", "IDS", "2", "1-0", "2-0")
		kh(t, k, ":2\r\n", "XLEN", "s")
		kh(t, k, nonePending, "XPENDING", "s", "g1")
		kh(t, k, twoPendingC2, "XPENDING", "s", "g2")
		kh(t, k, ints("1", "1"), "XACKDEL", "s", "g2", "ACKED", "IDS", "2", "1-0", "2-0")
		kh(t, k, ":0\r\n", "XLEN", "s")

		// Errors.
		kh(t, k, "-ERR Number of IDs must be a positive integer\r\n", "XACKDEL", "s", "g", "IDS", "abc", "1-1")
		kh(t, k, "-ERR Number of IDs must be a positive integer\r\n", "XACKDEL", "s", "g", "IDS", "-5", "1-1")
		kh(t, k, "-ERR The `numids` parameter must match the number of arguments\r\n", "XACKDEL", "s", "g", "IDS", "3", "1-1", "2-2")
		kh(t, k, "-ERR syntax error\r\n", "XACKDEL", "s", "g", "IDS", "1", "1-1", "2-2")
		kh(t, k, "-ERR syntax error\r\n", "XACKDEL", "s", "g", "KEEPREF", "DELREF", "IDS", "1", "1-1")
		kh(t, k, "-ERR syntax error\r\n", "XACKDEL", "s", "g", "DELREF", "ACKED", "IDS", "1", "1-1")
		kh(t, k, "-ERR wrong number of arguments for 'xackdel' command\r\n", "XACKDEL", "s", "g")
	}
}

// https://redis.io/docs/latest/commands/xtrim/ and .../xadd/: KEEPREF,
// DELREF and ACKED for the entries a trim removes.
func TestTrimRefPolicies(t *testing.T) {
	p := difftest.Start(t)
	k := p.Keyhive()
	// setup: 1-0..5-0; g1 has read everything and acknowledged 1-0 and 3-0;
	// g2 has been delivered up to 2-0 (none pending).
	setup := func() {
		k.Do("DEL", "s")
		for _, id := range []string{"1-0", "2-0", "3-0", "4-0", "5-0"} {
			k.Do("XADD", "s", id, "f", "v")
		}
		k.Do("XGROUP", "CREATE", "s", "g1", "0")
		k.Do("XGROUP", "CREATE", "s", "g2", "2-0")
		k.Do("XREADGROUP", "GROUP", "g1", "c", "STREAMS", "s", ">")
		k.Do("XACK", "s", "g1", "1-0", "3-0")
	}
	ids := func(want ...string) string {
		b := "*" + itoa(len(want)) + "\r\n"
		for _, id := range want {
			b += "*2\r\n$3\r\n" + id + "\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"
		}
		return b
	}
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		// Without groups a policy changes nothing.
		k.Do("DEL", "s")
		k.Do("XADD", "s", "1-0", "f", "v")
		k.Do("XADD", "s", "2-0", "f", "v")
		kh(t, k, ":1\r\n", "XTRIM", "s", "MAXLEN", "1", "ACKED")

		// KEEPREF (the default): trimmed entries stay pending.
		setup()
		kh(t, k, ":3\r\n", "XTRIM", "s", "MAXLEN", "2", "KEEPREF")
		kh(t, k, "*4\r\n:3\r\n$3\r\n2-0\r\n$3\r\n5-0\r\n*1\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n", "XPENDING", "s", "g1")

		// DELREF: the trimmed entries leave every PEL.
		setup()
		kh(t, k, ":3\r\n", "XTRIM", "s", "MINID", "4-0", "DELREF")
		kh(t, k, "*4\r\n:2\r\n$3\r\n4-0\r\n$3\r\n5-0\r\n*1\r\n*2\r\n$1\r\nc\r\n$1\r\n2\r\n", "XPENDING", "s", "g1")

		// ACKED: 1-0 is done for both groups; 2-0 is pending in g1; 3-0 is
		// acknowledged by g1 but not yet delivered to g2.
		setup()
		kh(t, k, ":1\r\n", "XTRIM", "s", "MAXLEN", "0", "ACKED")
		kh(t, k, ids("2-0", "3-0", "4-0", "5-0"), "XRANGE", "s", "-", "+")
		k.Do("XREADGROUP", "GROUP", "g2", "c2", "STREAMS", "s", ">")
		k.Do("XACK", "s", "g2", "3-0", "4-0", "5-0")
		// Now 3-0 is needed by nobody: an exact trim deletes it past 2-0.
		kh(t, k, ":1\r\n", "XTRIM", "s", "MINID", "5-0", "ACKED")
		kh(t, k, ids("2-0", "4-0", "5-0"), "XRANGE", "s", "-", "+")
		// An approximate trim stops at the first entry still needed.
		kh(t, k, ":0\r\n", "XTRIM", "s", "MAXLEN", "~", "0", "ACKED")

		// XADD takes the policy too, anywhere before the ID.
		setup()
		k.Do("XREADGROUP", "GROUP", "g2", "c2", "STREAMS", "s", ">")
		kh(t, k, "$3\r\n6-0\r\n", "XADD", "s", "DELREF", "MAXLEN", "3", "6-0", "f", "v")
		kh(t, k, "*4\r\n:2\r\n$3\r\n4-0\r\n$3\r\n5-0\r\n*1\r\n*2\r\n$1\r\nc\r\n$1\r\n2\r\n", "XPENDING", "s", "g1")
		kh(t, k, "$3\r\n7-0\r\n", "XADD", "s", "MAXLEN", "1", "ACKED", "7-0", "f", "v")
		kh(t, k, ":4\r\n", "XLEN", "s")

		kh(t, k, "-ERR syntax error\r\n", "XTRIM", "s", "MAXLEN", "1", "ACKED", "DELREF")
	}
}

// https://redis.io/docs/latest/commands/xreadgroup/ (The CLAIM option):
// entries idle for min-idle-time are claimed first, longest idle first,
// each with its idle time and delivery count; then new entries.
func TestXreadgroupClaim(t *testing.T) {
	p := difftest.Start(t)
	k := p.Keyhive()
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		k.Do("DEL", "s")
		k.Do("XADD", "s", "1-0", "f", "v1")
		k.Do("XADD", "s", "2-0", "f", "v2")
		k.Do("XGROUP", "CREATE", "s", "g", "0")
		k.Do("XREADGROUP", "GROUP", "g", "c1", "COUNT", "1", "STREAMS", "s", ">") // 1-0 to c1
		time.Sleep(20 * time.Millisecond)
		k.Do("XREADGROUP", "GROUP", "g", "c1", "COUNT", "1", "STREAMS", "s", ">") // 2-0 to c1
		time.Sleep(120 * time.Millisecond)
		k.Do("XADD", "s", "3-0", "f", "v3")
		// Nothing idle for an hour: only the new entry.
		r := k.Do("XREADGROUP", "GROUP", "g", "c2", "CLAIM", "3600000", "COUNT", "1", "STREAMS", "s", ">")
		entries := streamEntries(r, proto)
		if len(entries) != 1 || entries[0].Elems[0].Str != "3-0" || len(entries[0].Elems) != 2 {
			t.Fatalf("new entry only: %s", r)
		}
		// 1-0 and 2-0 are idle: claimed for c3, longest idle first, with
		// their idle times and delivery counts.
		k.Do("XADD", "s", "4-0", "f", "v4")
		r = k.Do("XREADGROUP", "GROUP", "g", "c3", "CLAIM", "100", "STREAMS", "s", ">")
		entries = streamEntries(r, proto)
		if len(entries) != 3 {
			t.Fatalf("two claimed and one new: %s", r)
		}
		for i, want := range []string{"1-0", "2-0"} {
			e := entries[i].Elems
			if len(e) != 4 || e[0].Str != want || e[1].Elems[1].Str != "v"+want[:1] || e[2].Int < 100 || e[3].Int != 1 {
				t.Errorf("claimed entry %d: %s", i, entries[i])
			}
		}
		if e := entries[2].Elems; len(e) != 2 || e[0].Str != "4-0" {
			t.Errorf("new entry: %s", entries[2])
		}
		// The claims moved the entries to c3 and counted a delivery.
		pending := k.Do("XPENDING", "s", "g", "-", "2-0", "10", "c3")
		if len(pending.Elems) != 2 {
			t.Fatalf("pending for c3: %s", pending)
		}
		for i, want := range []string{"1-0", "2-0"} {
			if e := pending.Elems[i].Elems; e[0].Str != want || e[1].Str != "c3" || e[2].Int > 100 || e[3].Int != 2 {
				t.Errorf("pending %s: %s", want, pending.Elems[i])
			}
		}
		// COUNT bounds claimed and new entries together; an ID other than
		// ">" ignores CLAIM.
		time.Sleep(120 * time.Millisecond)
		r = k.Do("XREADGROUP", "GROUP", "g", "c4", "CLAIM", "100", "COUNT", "1", "STREAMS", "s", "0")
		if history := streamEntries(r, proto); len(history) != 0 {
			t.Errorf("history of c4 (none): %s", r)
		}
		kh(t, k, "-ERR Invalid min-idle-time argument for XREADGROUP\r\n", "XREADGROUP", "GROUP", "g", "c", "CLAIM", "x", "STREAMS", "s", ">")
		kh(t, k, "-ERR syntax error\r\n", "XREAD", "CLAIM", "10", "STREAMS", "s", "0")
	}
}

// streamEntries is the entries of the one stream an XREADGROUP replied.
func streamEntries(r difftest.Reply, proto int) []difftest.Reply {
	if proto == 3 {
		return r.Elems[1].Elems // a map: key, entries
	}
	return r.Elems[0].Elems[1].Elems
}
