package server_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// Set member expiration (Redis 8.12). There is no 8.12 binary here: the
// expected replies are written from the redis.io pages each test names.

// setTTLConn is a connection to a fresh Keyhive speaking RESP proto, with
// active expiry off unless a test turns it on.
func setTTLConn(t *testing.T, proto int, directives ...string) (*difftest.Conn, string) {
	t.Helper()
	srv := startKeyhive(t, append([]string{"--enable-debug-command", "yes"}, directives...)...)
	c := dial(t, srv.Addr())
	if proto == 3 {
		do(t, c, "HELLO", "3")
	}
	do(t, c, "DEBUG", "SET-ACTIVE-EXPIRE", "0")
	return c, srv.Addr()
}

// wantRaw checks a command's exact reply bytes.
func wantRaw(t *testing.T, c *difftest.Conn, reply string, args ...any) {
	t.Helper()
	if r := do(t, c, args...); string(r.Raw) != reply {
		t.Errorf("%v: got %q, want %q", args, r.Raw, reply)
	}
}

// TestSetMemberExpireCommands follows the pages of SEXPIRE, SPEXPIRE,
// SEXPIREAT, SPEXPIREAT, STTL, SPTTL, SEXPIRETIME, SPEXPIRETIME and
// SPERSIST (https://redis.io/docs/latest/commands/sexpire/ and the others):
// their examples, the NX XX GT LT conditions, and the per-member codes
// -2 (no member), 0 (condition not met), 1 (set), 2 (removed), -1 (no TTL).
func TestSetMemberExpireCommands(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			c, _ := setTTLConn(t, proto)
			// SEXPIRETIME's example.
			wantRaw(t, c, ":2\r\n", "SADD", "myset", "member1", "member2")
			wantRaw(t, c, ints("1"), "SEXPIRE", "myset", "300", "MEMBERS", "1", "member1")
			r := do(t, c, "SEXPIRETIME", "myset", "MEMBERS", "3", "member1", "member2", "member3")
			if now := time.Now().Unix(); len(r.Elems) != 3 || r.Elems[0].Int < now+299 || r.Elems[0].Int > now+301 || r.Elems[1].Int != -1 || r.Elems[2].Int != -2 {
				t.Errorf("SEXPIRETIME: got %q", r.Raw)
			}
			wantRaw(t, c, ints("300", "-1", "-2"), "STTL", "myset", "MEMBERS", "3", "member1", "member2", "member3")
			// A set with member TTLs is a hashtable (Keyhive's choice: the
			// pages do not say).
			wantRaw(t, c, "$9\r\nhashtable\r\n", "OBJECT", "ENCODING", "myset")
			wantRaw(t, c, ints("1"), "SPEXPIREAT", "myset", farMs, "MEMBERS", "1", "member2")
			wantRaw(t, c, "*2\r\n:-2\r\n:"+farMs+"\r\n", "SPEXPIRETIME", "myset", "MEMBERS", "2", "nope", "member2")
			wantRaw(t, c, ints("1"), "SEXPIREAT", "myset", "4102444800", "MEMBERS", "1", "member2")
			wantRaw(t, c, ints("4102444800"), "SEXPIRETIME", "myset", "MEMBERS", "1", "member2")
			wantRaw(t, c, ints("1"), "SPEXPIRE", "myset", "100000", "MEMBERS", "1", "member2")
			wantRaw(t, c, ints("100"), "STTL", "myset", "MEMBERS", "1", "member2")
			// Conditions: NX only without a TTL, XX only with one, GT and LT
			// against the current TTL (none counts as infinite).
			wantRaw(t, c, ":2\r\n", "SADD", "myset", "a", "b")
			wantRaw(t, c, ints("1", "0", "-2"), "SEXPIRE", "myset", "100", "NX", "MEMBERS", "3", "a", "member1", "zz")
			wantRaw(t, c, ints("0", "1"), "SEXPIRE", "myset", "200", "XX", "MEMBERS", "2", "b", "a")
			wantRaw(t, c, ints("0", "0"), "SEXPIRE", "myset", "50", "GT", "MEMBERS", "2", "a", "b")
			wantRaw(t, c, ints("1"), "SEXPIRE", "myset", "400", "gt", "MEMBERS", "1", "a")
			wantRaw(t, c, ints("1", "1"), "SEXPIRE", "myset", "50", "LT", "MEMBERS", "2", "a", "b")
			wantRaw(t, c, ints("0"), "SEXPIRE", "myset", "500", "LT", "MEMBERS", "1", "a")
			wantRaw(t, c, ints("50", "50", "300", "100"), "STTL", "myset", "MEMBERS", "4", "a", "b", "member1", "member2")
			r = do(t, c, "SPTTL", "myset", "MEMBERS", "1", "a")
			if ms := r.Elems[0].Int; ms <= 49000 || ms > 50000 {
				t.Errorf("SPTTL: got %q", r.Raw)
			}
			// SPERSIST's codes.
			wantRaw(t, c, ints("1", "-1", "-2"), "SPERSIST", "myset", "MEMBERS", "3", "a", "a", "zz")
			wantRaw(t, c, ints("-1", "50"), "STTL", "myset", "MEMBERS", "2", "a", "b")
			// SADD of a member keeps its TTL; SREM drops it.
			wantRaw(t, c, ":0\r\n", "SADD", "myset", "b")
			wantRaw(t, c, ints("50"), "STTL", "myset", "MEMBERS", "1", "b")
			wantRaw(t, c, ":1\r\n", "SREM", "myset", "b")
			wantRaw(t, c, ":1\r\n", "SADD", "myset", "b")
			wantRaw(t, c, ints("-1"), "STTL", "myset", "MEMBERS", "1", "b")
			// A time already past removes the member (2), the last one the key.
			wantRaw(t, c, ints("2", "-2"), "SEXPIRE", "myset", "0", "MEMBERS", "2", "a", "zz")
			wantRaw(t, c, ":0\r\n", "SISMEMBER", "myset", "a")
			wantRaw(t, c, ":1\r\n", "SADD", "one", "m")
			wantRaw(t, c, ints("2"), "SPEXPIREAT", "one", "1", "MEMBERS", "1", "m")
			wantRaw(t, c, ":0\r\n", "EXISTS", "one")
			// A missing key: -2 for each member.
			for _, cmd := range []string{"SEXPIRE", "SPEXPIRE", "SEXPIREAT", "SPEXPIREAT"} {
				wantRaw(t, c, ints("-2", "-2"), cmd, "nokey", "100", "MEMBERS", "2", "a", "b")
			}
			for _, cmd := range []string{"STTL", "SPTTL", "SEXPIRETIME", "SPEXPIRETIME", "SPERSIST"} {
				wantRaw(t, c, ints("-2", "-2"), cmd, "nokey", "MEMBERS", "2", "a", "b")
			}
			wantRaw(t, c, ":0\r\n", "EXISTS", "nokey")
			// Errors.
			wantRaw(t, c, "+OK\r\n", "SET", "str", "v")
			wrongType := "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
			wantRaw(t, c, wrongType, "SEXPIRE", "str", "10", "MEMBERS", "1", "a")
			wantRaw(t, c, wrongType, "STTL", "str", "MEMBERS", "1", "a")
			wantRaw(t, c, wrongType, "SPERSIST", "str", "MEMBERS", "1", "a")
			wantRaw(t, c, "-ERR wrong number of arguments for 'sexpire' command\r\n", "SEXPIRE", "myset", "10", "MEMBERS", "1")
			wantRaw(t, c, "-ERR Mandatory argument MEMBERS is missing or not at the right position\r\n", "SEXPIRE", "myset", "10", "MEMBER", "1", "a")
			wantRaw(t, c, "-ERR Mandatory argument MEMBERS is missing or not at the right position\r\n", "SEXPIRE", "myset", "10", "BAD", "MEMBERS", "1", "a")
			wantRaw(t, c, "-ERR Number of members must be a positive integer\r\n", "SEXPIRE", "myset", "10", "MEMBERS", "0", "a")
			wantRaw(t, c, "-ERR The `nummembers` parameter must match the number of arguments\r\n", "SEXPIRE", "myset", "10", "MEMBERS", "2", "a")
			wantRaw(t, c, "-ERR value is not an integer or out of range\r\n", "SEXPIRE", "myset", "x", "MEMBERS", "1", "a")
			wantRaw(t, c, "-ERR invalid expire time, must be >= 0\r\n", "SEXPIRE", "myset", "-1", "MEMBERS", "1", "a")
			wantRaw(t, c, "-ERR invalid expire time in 'sexpire' command\r\n", "SEXPIRE", "myset", "99999999999999999", "MEMBERS", "1", "a")
			wantRaw(t, c, "-ERR Number of members must be a positive integer\r\n", "STTL", "myset", "MEMBERS", "-1", "a")
		})
	}
}

// TestSADDEX follows https://redis.io/docs/latest/commands/saddex/: MNX
// and MXX test every member; EX PX EXAT PXAT give the members added or
// updated that time; KEEPTTL keeps existing members' TTLs; without an
// option a member set loses its TTL. The page shows no reply: Keyhive
// replies as SADD, the number of members added.
func TestSADDEX(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			c, _ := setTTLConn(t, proto)
			wantRaw(t, c, ":2\r\n", "SADDEX", "s", "EX", "100", "MEMBERS", "2", "a", "b")
			wantRaw(t, c, ints("100", "100"), "STTL", "s", "MEMBERS", "2", "a", "b")
			wantRaw(t, c, ":0\r\n", "SADDEX", "s", "MNX", "EX", "10", "MEMBERS", "2", "a", "c")
			wantRaw(t, c, ":0\r\n", "SADDEX", "s", "MXX", "EX", "10", "MEMBERS", "2", "a", "c")
			wantRaw(t, c, ints("100", "-2"), "STTL", "s", "MEMBERS", "2", "a", "c")
			wantRaw(t, c, ":0\r\n", "SADDEX", "s", "MXX", "PX", "200000", "MEMBERS", "1", "a")
			wantRaw(t, c, ints("200", "100"), "STTL", "s", "MEMBERS", "2", "a", "b")
			wantRaw(t, c, ":1\r\n", "SADDEX", "s", "KEEPTTL", "MEMBERS", "2", "a", "c")
			wantRaw(t, c, ints("200", "-1"), "STTL", "s", "MEMBERS", "2", "a", "c")
			wantRaw(t, c, ":0\r\n", "SADDEX", "s", "MEMBERS", "1", "a")
			wantRaw(t, c, ints("-1"), "STTL", "s", "MEMBERS", "1", "a")
			wantRaw(t, c, ":1\r\n", "SADDEX", "s", "EXAT", "4102444800", "MEMBERS", "1", "d")
			wantRaw(t, c, ints("4102444800"), "SEXPIRETIME", "s", "MEMBERS", "1", "d")
			wantRaw(t, c, ":1\r\n", "SADDEX", "s", "MNX", "PXAT", farMs, "MEMBERS", "1", "e")
			wantRaw(t, c, "*1\r\n:"+farMs+"\r\n", "SPEXPIRETIME", "s", "MEMBERS", "1", "e")
			// A time already past: the members are gone after the command.
			wantRaw(t, c, ":0\r\n", "SADDEX", "s", "PXAT", "1", "MEMBERS", "2", "a", "f")
			wantRaw(t, c, ints("-2", "-2"), "STTL", "s", "MEMBERS", "2", "a", "f")
			// Without a TTL a new set keeps SADD's compact form.
			wantRaw(t, c, ":2\r\n", "SADDEX", "plain", "MEMBERS", "2", "1", "2")
			wantRaw(t, c, "$6\r\nintset\r\n", "OBJECT", "ENCODING", "plain")
			// MXX on a missing key adds nothing and creates no key.
			wantRaw(t, c, ":0\r\n", "SADDEX", "nokey", "MXX", "MEMBERS", "1", "a")
			wantRaw(t, c, ":0\r\n", "EXISTS", "nokey")
			wantRaw(t, c, "-ERR Mandatory argument MEMBERS is missing or not at the right position\r\n", "SADDEX", "s", "EX", "10", "MEMBER", "1", "a")
			wantRaw(t, c, "-ERR value is not an integer or out of range\r\n", "SADDEX", "s", "EX", "x", "MEMBERS", "1", "a")
			wantRaw(t, c, "-ERR Number of members must be a positive integer\r\n", "SADDEX", "s", "MEMBERS", "0", "a")
		})
	}
}

// TestSetMemberLazyExpiry: a member past its TTL is returned by no read
// (https://redis.io/docs/latest/commands/sexpire/: "Redis removes each
// member from the set automatically when its TTL expires"), with active
// expiry off, and the first command that meets it removes it.
func TestSetMemberLazyExpiry(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			c, _ := setTTLConn(t, proto)
			set := func(members ...string) string { // a RESP set of one member, or empty
				if proto == 2 {
					if len(members) == 0 {
						return "*0\r\n"
					}
					return "*1\r\n$" + itoa(len(members[0])) + "\r\n" + members[0] + "\r\n"
				}
				if len(members) == 0 {
					return "~0\r\n"
				}
				return "~1\r\n$" + itoa(len(members[0])) + "\r\n" + members[0] + "\r\n"
			}
			reset := func() {
				do(t, c, "DEL", "s", "t")
				wantRaw(t, c, ":2\r\n", "SADD", "s", "keep", "gone")
				wantRaw(t, c, ints("1"), "SPEXPIRE", "s", "1", "MEMBERS", "1", "gone")
				wantRaw(t, c, ":1\r\n", "SADD", "t", "gone")
				time.Sleep(5 * time.Millisecond)
			}
			reads := []struct {
				reply string
				args  []any
			}{
				{":1\r\n", []any{"SCARD", "s"}},
				{":0\r\n", []any{"SISMEMBER", "s", "gone"}},
				{"*2\r\n:1\r\n:0\r\n", []any{"SMISMEMBER", "s", "keep", "gone"}},
				{set("keep"), []any{"SMEMBERS", "s"}},
				{"*2\r\n$1\r\n0\r\n" + "*1\r\n$4\r\nkeep\r\n", []any{"SSCAN", "s", "0"}},
				{"$4\r\nkeep\r\n", []any{"SRANDMEMBER", "s"}},
				{"*1\r\n$4\r\nkeep\r\n", []any{"SRANDMEMBER", "s", "5"}},
				{set(), []any{"SINTER", "s", "t"}},
				{":0\r\n", []any{"SINTERCARD", "2", "s", "t"}},
				{set("keep"), []any{"SDIFF", "s", "t"}},
				{":1\r\n", []any{"SINTERSTORE", "d", "s", "s"}},
				{"$4\r\nkeep\r\n", []any{"SPOP", "s"}},
				{"*1\r\n$4\r\nkeep\r\n", []any{"SORT", "s", "ALPHA"}},
				{"*1\r\n$4\r\nkeep\r\n", []any{"ZUNION", "1", "s"}},
				{":0\r\n", []any{"ZINTERCARD", "2", "s", "t"}},
			}
			for _, r := range reads {
				reset()
				wantRaw(t, c, r.reply, r.args...)
			}
			// A write meets the expired member as missing.
			reset()
			wantRaw(t, c, ":0\r\n", "SREM", "s", "gone")
			reset()
			wantRaw(t, c, ":1\r\n", "SADD", "s", "gone")
			wantRaw(t, c, ints("-1"), "STTL", "s", "MEMBERS", "1", "gone")
			reset()
			wantRaw(t, c, ":0\r\n", "SMOVE", "s", "t", "gone")
			// The last member going takes the key.
			do(t, c, "DEL", "s")
			wantRaw(t, c, ":1\r\n", "SADD", "s", "m")
			wantRaw(t, c, ints("1"), "SPEXPIRE", "s", "1", "MEMBERS", "1", "m")
			time.Sleep(5 * time.Millisecond)
			wantRaw(t, c, ":1\r\n", "EXISTS", "s") // EXISTS reads no member
			wantRaw(t, c, ":0\r\n", "SCARD", "s")
			wantRaw(t, c, ":0\r\n", "EXISTS", "s")
		})
	}
}

// TestSetMemberActiveExpiry: the active cycle removes due members of sets
// no command touches, visiting only sets with a member due (the keyspace's
// subexpiry record, as for hash fields), with one sexpired event per set
// and del when it empties.
func TestSetMemberActiveExpiry(t *testing.T) {
	c, addr := setTTLConn(t, 2, "--notify-keyspace-events", "KEA")
	sub := dial(t, addr)
	do(t, sub, "PSUBSCRIBE", "__keyevent@0__:*")
	wantRaw(t, c, ":3\r\n", "SADD", "s", "a", "b", "c")
	wantRaw(t, c, ints("1", "1"), "SPEXPIRE", "s", "1", "MEMBERS", "2", "a", "b")
	wantRaw(t, c, ":1\r\n", "SADD", "gone", "x")
	wantRaw(t, c, ints("1"), "SPEXPIRE", "gone", "1", "MEMBERS", "1", "x")
	wantRaw(t, c, ":2\r\n", "DBSIZE")
	time.Sleep(5 * time.Millisecond)
	do(t, c, "DEBUG", "SET-ACTIVE-EXPIRE", "1")
	waitUntil(t, "gone removed by the active cycle", func() bool { return do(t, c, "DBSIZE").Int == 1 })
	var events []string
	for len(events) < 7 {
		r, err := sub.Read()
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, r.Elems[2].Str+" "+r.Elems[3].Str)
	}
	got := strings.Join(events, ",")
	for _, want := range []string{"__keyevent@0__:sexpired s", "__keyevent@0__:sexpired gone", "__keyevent@0__:del gone"} {
		if !strings.Contains(got, want) {
			t.Errorf("events %s: no %s", got, want)
		}
	}
	do(t, c, "DEBUG", "SET-ACTIVE-EXPIRE", "0")
	wantRaw(t, c, "*1\r\n$1\r\nc\r\n", "SMEMBERS", "s")
}

// TestSetMemberTTLPropagation: the SEXPIRE family propagates as SPEXPIREAT
// with the members it set (as HEXPIRE as HPEXPIREAT), a member removed by
// a past time or found expired as SREM (as a field's HDEL), SADDEX with a
// relative time as SADDEX PXAT.
func TestSetMemberTTLPropagation(t *testing.T) {
	ms := 10 * time.Millisecond
	checkPropagationWith(t, []propStep{
		w("SADD s a b c", "SADD s a b c"),
		w("SEXPIRE s 100 MEMBERS 2 a zz", "SPEXPIREAT s {+100000} MEMBERS 1 a"),
		w("SPEXPIRE s 100000 NX MEMBERS 2 a b", "SPEXPIREAT s {+100000} NX MEMBERS 1 b"),
		w("SEXPIREAT s 9999999999 MEMBERS 1 c", "SPEXPIREAT s 9999999999000 MEMBERS 1 c"),
		w("spexpireat s 9999999999000 xx members 1 c", "spexpireat s 9999999999000 xx members 1 c"),
		w("SEXPIRE s 100 NX MEMBERS 1 a"),
		w("SPERSIST s MEMBERS 2 a zz", "SPERSIST s MEMBERS 2 a zz"),
		w("SPERSIST s MEMBERS 1 a"),
		w("SEXPIRE s 0 MEMBERS 2 a zz", "SREM s a"),
		w("STTL s MEMBERS 1 b"),
		{cmd: strings.Fields("SPEXPIRE s 1 MEMBERS 1 b"), want: []string{"SPEXPIREAT s {+1} MEMBERS 1 b"}, sleep: ms},
		w("SISMEMBER s b", "SREM s b"),
		{cmd: strings.Fields("SPEXPIRE s 1 MEMBERS 1 c"), want: []string{"SPEXPIREAT s {+1} MEMBERS 1 c"}, sleep: ms},
		w("SADD s d", "SREM s c", "SADD s d"),
		w("SADDEX s EX 100 MEMBERS 2 d e", "SADDEX s PXAT {+100000} MEMBERS 2 d e"),
		w("SADDEX s KEEPTTL MEMBERS 1 f", "SADDEX s KEEPTTL MEMBERS 1 f"),
		w("SADDEX s PXAT 1 MEMBERS 1 f", "SREM s f"),
		// Inside EXEC the SREM joins the transaction.
		{cmd: strings.Fields("SPEXPIRE s 1 MEMBERS 1 d"), want: []string{"SPEXPIREAT s {+1} MEMBERS 1 d"}, sleep: ms},
		w("MULTI"), w("SISMEMBER s d"), w("SADD s g"),
		w("EXEC", "MULTI", "SREM s d", "SADD s g", "EXEC"),
	}, nil)
}

// populateMemberTTLs writes sets with member TTLs: one far ahead, one
// soon to pass, one without.
func populateMemberTTLs(t *testing.T, c *difftest.Conn) {
	t.Helper()
	wantRaw(t, c, ":3\r\n", "SADD", "s", "far", "soon", "none")
	wantRaw(t, c, ints("1"), "SPEXPIREAT", "s", farMs, "MEMBERS", "1", "far")
	wantRaw(t, c, ints("1"), "SPEXPIRE", "s", "300", "MEMBERS", "1", "soon")
	wantRaw(t, c, ":2\r\n", "SADDEX", "n", "PXAT", farMs, "MEMBERS", "2", "1", "2")
}

// checkMemberTTLs checks what populateMemberTTLs wrote, after soon's time
// passed.
func checkMemberTTLs(t *testing.T, c *difftest.Conn, what string) {
	t.Helper()
	r := do(t, c, "SPEXPIRETIME", "s", "MEMBERS", "3", "far", "soon", "none")
	if string(r.Raw) != "*3\r\n:"+farMs+"\r\n:-2\r\n:-1\r\n" {
		t.Errorf("%s: SPEXPIRETIME s: %q", what, r.Raw)
	}
	if r := do(t, c, "SPEXPIRETIME", "n", "MEMBERS", "2", "1", "2"); string(r.Raw) != "*2\r\n:"+farMs+"\r\n:"+farMs+"\r\n" {
		t.Errorf("%s: SPEXPIRETIME n: %q", what, r.Raw)
	}
	if r := do(t, c, "SCARD", "s"); r.Int != 2 {
		t.Errorf("%s: SCARD s: %q", what, r.Raw)
	}
}

// TestSetMemberTTLPersistence: member TTLs survive DEBUG RELOAD, a
// restart from the RDB file and from a rewritten AOF, and DUMP/RESTORE.
// The file form is Keyhive's own (values/setttl.go, a module value of
// type KH-SETTTL); a member whose time passed is not loaded.
func TestSetMemberTTLPersistence(t *testing.T) {
	dir := t.TempDir()
	srv := startKeyhive(t, "--dir", dir, "--enable-debug-command", "yes")
	c := dial(t, srv.Addr())
	populateMemberTTLs(t, c)
	time.Sleep(400 * time.Millisecond)
	wantRaw(t, c, "+OK\r\n", "DEBUG", "RELOAD")
	checkMemberTTLs(t, c, "DEBUG RELOAD")
	payload := do(t, c, "DUMP", "s").Str
	wantRaw(t, c, "+OK\r\n", "RESTORE", "copy", "0", payload)
	if r := do(t, c, "SPEXPIRETIME", "copy", "MEMBERS", "2", "far", "none"); string(r.Raw) != "*2\r\n:"+farMs+"\r\n:-1\r\n" {
		t.Errorf("RESTORE: %q", r.Raw)
	}
	wantRaw(t, c, "+OK\r\n", "SAVE")
	srv.Close()
	srv = startKeyhive(t, "--dir", dir)
	checkMemberTTLs(t, dial(t, srv.Addr()), "restart from the RDB file")
	srv.Close()

	aofDir := t.TempDir()
	srv = startKeyhive(t, "--dir", aofDir, "--appendonly", "yes", "--aof-use-rdb-preamble", "no")
	c = dial(t, srv.Addr())
	populateMemberTTLs(t, c)
	time.Sleep(400 * time.Millisecond)
	do(t, c, "BGREWRITEAOF")
	waitUntil(t, "AOF rewritten", func() bool {
		return strings.Contains(do(t, c, "INFO", "persistence").Str, "aof_rewrite_in_progress:0") &&
			strings.Contains(do(t, c, "INFO", "persistence").Str, "aof_last_bgrewrite_status:ok")
	})
	srv.Close()
	srv = startKeyhive(t, "--dir", aofDir, "--appendonly", "yes")
	checkMemberTTLs(t, dial(t, srv.Addr()), "restart from the rewritten AOF")
}

// TestSetMemberTTLReplication: a replica holds the master's members and
// member TTLs, by full sync (the RDB form) and by the command stream
// (SPEXPIREAT), and removes an expired member by the master's SREM: equal
// data by DEBUG DIGEST and equal SPEXPIRETIME replies.
func TestSetMemberTTLReplication(t *testing.T) {
	master := startReplNode(t, false)
	replica := startReplNode(t, false)
	populateMemberTTLs(t, master.conn)
	replicate(t, master, replica) // full sync
	master.ok(t, "SADD", "later", "a", "b", "c")
	master.ok(t, "SEXPIRE", "later", "1000", "MEMBERS", "1", "a")
	master.ok(t, "SPEXPIRE", "later", "50", "MEMBERS", "1", "b")
	master.ok(t, "SADDEX", "later", "EX", "500", "MEMBERS", "1", "d")
	waitUntil(t, "b expired on the master", func() bool { return master.ok(t, "SCARD", "later").Int == 3 })
	sameData(t, master, replica)
	for _, args := range [][]any{
		{"SPEXPIRETIME", "s", "MEMBERS", "3", "far", "soon", "none"},
		{"SPEXPIRETIME", "n", "MEMBERS", "2", "1", "2"},
		{"SPEXPIRETIME", "later", "MEMBERS", "4", "a", "b", "c", "d"},
		{"SCARD", "later"},
	} {
		if m, r := master.ok(t, args...), replica.ok(t, args...); string(m.Raw) != string(r.Raw) {
			t.Errorf("%v: master %q, replica %q", args, m.Raw, r.Raw)
		}
	}
}

// TestSetMemberTTLEvents: the keyspace events of the set TTL commands,
// named after the hash field ones (the pages name none): sexpire when a
// time is set, spersist when one is removed, srem when a past time removes
// members, sexpired when members are found expired (then del for the last).
func TestSetMemberTTLEvents(t *testing.T) {
	c, addr := setTTLConn(t, 2, "--notify-keyspace-events", "KEA")
	expect := keyEvents(t, c, addr)
	expect("sadd s", "SADD", "s", "a", "b", "c")
	expect("sexpire s", "SEXPIRE", "s", "100", "MEMBERS", "2", "a", "zz")
	expect("", "SEXPIRE", "s", "100", "NX", "MEMBERS", "1", "a")
	expect("spersist s", "SPERSIST", "s", "MEMBERS", "1", "a")
	expect("", "SPERSIST", "s", "MEMBERS", "1", "a")
	expect("srem s", "SEXPIRE", "s", "0", "MEMBERS", "1", "a")
	expect("sexpire s", "SADDEX", "s", "PX", "1", "MEMBERS", "1", "b")
	time.Sleep(5 * time.Millisecond)
	expect("sexpired s", "SISMEMBER", "s", "b")
	expect("sexpire s", "SPEXPIRE", "s", "1", "MEMBERS", "1", "c")
	time.Sleep(5 * time.Millisecond)
	expect("sexpired s,del s", "SCARD", "s")
	expect("sadd t", "SADDEX", "t", "MEMBERS", "1", "x")
}

// TestSetMemberTTLReplicaReads: a replica keeps an expired member until
// its master's SREM (an SPEXPIREAT from its master already past when
// applied included), and no read shows it meanwhile (random draws
// included).
func TestSetMemberTTLReplicaReads(t *testing.T) {
	master := startReplNode(t, false, "--enable-debug-command", "yes")
	replica := startReplNode(t, false)
	replicate(t, master, replica)
	master.ok(t, "DEBUG", "SET-ACTIVE-EXPIRE", "0")
	master.ok(t, "SADD", "s", "keep", "gone", "gone2")
	master.ok(t, "SPEXPIRE", "s", "1", "MEMBERS", "2", "gone", "gone2")
	sameData(t, master, replica)
	time.Sleep(5 * time.Millisecond)
	for _, step := range []struct {
		reply string
		args  []any
	}{
		{":1\r\n", []any{"SCARD", "s"}},
		{"*1\r\n$4\r\nkeep\r\n", []any{"SMEMBERS", "s"}},
		{":0\r\n", []any{"SISMEMBER", "s", "gone"}},
		{"*1\r\n:-2\r\n", []any{"STTL", "s", "MEMBERS", "1", "gone"}},
		{"*1\r\n$4\r\nkeep\r\n", []any{"SRANDMEMBER", "s", "5"}},
		{"*3\r\n$4\r\nkeep\r\n$4\r\nkeep\r\n$4\r\nkeep\r\n", []any{"SRANDMEMBER", "s", "-3"}},
		{"*2\r\n$1\r\n0\r\n*1\r\n$4\r\nkeep\r\n", []any{"SSCAN", "s", "0"}},
	} {
		if r := replica.ok(t, step.args...); string(r.Raw) != step.reply {
			t.Errorf("replica %v: got %q, want %q", step.args, r.Raw, step.reply)
		}
	}
	for range 20 {
		if r := replica.ok(t, "SRANDMEMBER", "s"); r.Str != "keep" {
			t.Fatalf("replica SRANDMEMBER: %q", r.Raw)
		}
	}
	master.ok(t, "SCARD", "s") // removes them: SREM to the replica
	sameData(t, master, replica)
}

// TestSetMemberTTLKeyCommands: RENAME, COPY and MOVE keep member TTLs, and
// the active cycle still finds the set under its new name.
func TestSetMemberTTLKeyCommands(t *testing.T) {
	c, _ := setTTLConn(t, 2)
	wantRaw(t, c, ":2\r\n", "SADD", "s", "a", "b")
	wantRaw(t, c, ints("1"), "SPEXPIREAT", "s", farMs, "MEMBERS", "1", "a")
	wantRaw(t, c, ":1\r\n", "COPY", "s", "c")
	wantRaw(t, c, "+OK\r\n", "RENAME", "s", "r")
	wantRaw(t, c, ":1\r\n", "MOVE", "c", "1")
	wantRaw(t, c, "*2\r\n:"+farMs+"\r\n:-1\r\n", "SPEXPIRETIME", "r", "MEMBERS", "2", "a", "b")
	wantRaw(t, c, "+OK\r\n", "SELECT", "1")
	wantRaw(t, c, "*2\r\n:"+farMs+"\r\n:-1\r\n", "SPEXPIRETIME", "c", "MEMBERS", "2", "a", "b")
	wantRaw(t, c, ints("1"), "SPEXPIRE", "c", "1", "MEMBERS", "1", "a")
	wantRaw(t, c, "+OK\r\n", "RENAME", "c", "c2")
	do(t, c, "DEBUG", "SET-ACTIVE-EXPIRE", "1")
	waitUntil(t, "a expired actively in c2", func() bool {
		return strings.Contains(do(t, c, "INFO", "keyspace").Str, "db1:keys=1,expires=0,avg_ttl=0,subexpiry=0")
	})
	do(t, c, "DEBUG", "SET-ACTIVE-EXPIRE", "0")
	wantRaw(t, c, "*1\r\n$1\r\nb\r\n", "SMEMBERS", "c2")
}
