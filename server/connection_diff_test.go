package server_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// Differential tests of the connection commands: PING ECHO QUIT RESET HELLO
// AUTH SELECT CLIENT.

const redis72 = "Redis 7.2 feature that redis-server 7.0.15 lacks"

func TestPingEcho(t *testing.T) {
	p := difftest.Start(t)
	p.Do("PING")
	p.Do("ping", "hello")
	p.Do("PING", "")
	p.Do("PING", "a", "b")
	p.Do("PING", "a", "b", "c")
	p.Do("ECHO", "hello world")
	p.Do("ECHO", "")
	p.Do("ECHO")
	p.Do("ECHO", "a", "b")
	p.Do("echo", strings.Repeat("x", 100000))
	p.Proto(3)
	p.Do("PING")
	p.Do("PING", "x")
	p.Do("ECHO", "y")
}

func TestConnQuit(t *testing.T) {
	p := difftest.Start(t)
	p.SendRaw([]byte("SET k v\r\nQUIT\r\nSET k2 v2\r\n"))
	p.Read()
	p.RawExpectClose([]byte{})
	p.Do("GET", "k")
	p.Do("EXISTS", "k2") // never executed: QUIT closed the connection first
	p.RawExpectClose(difftest.EncodeCommand("QUIT", "extra", "args"))
	p.RawExpectClose([]byte("quit\r\n"))
}

func TestConnReset(t *testing.T) {
	p := difftest.Start(t)
	p.Do("RESET")
	p.Do("RESET", "x")
	p.Do("SELECT", "3")
	p.Do("SET", "k", "db3")
	p.Do("CLIENT", "SETNAME", "named")
	p.Proto(3)
	p.Do("GET", "nokey")
	p.Do("RESET")
	// Back to RESP2, database 0, no name.
	p.Do("GET", "nokey")
	p.Do("GET", "k")
	p.Do("CLIENT", "GETNAME")

	// RESET turns CLIENT REPLY OFF back on, and its own reply is sent.
	p.SendRaw([]byte("CLIENT REPLY OFF\r\nPING\r\nRESET\r\nPING\r\n"))
	p.Read()
	p.Read()
	// A pending SKIP still applies to RESET itself.
	p.SendRaw([]byte("CLIENT REPLY SKIP\r\nRESET\r\nPING x\r\n"))
	p.Read()
	p.NoReply(50 * time.Millisecond)

	// 7.0.15 keeps NO-EVICT across RESET; the RESET docs (7.2) turn it off.
	p.Do("CLIENT", "NO-EVICT", "on")
	p.Do("RESET")
	r, k := p.DoDifferent("RESET turns off NO-EVICT as documented since Redis 7.2; 7.0.15 keeps it", "CLIENT", "INFO")
	if got := infoFields(k.Str)["flags"]; got != "N" {
		t.Errorf("keyhive: flags after RESET = %q, want N (redis 7.0 has %q)", got, infoFields(r.Str)["flags"])
	}
}

func TestHello(t *testing.T) {
	p := difftest.Start74(t)
	hello := func(args ...any) {
		t.Helper()
		p.Do(append([]any{"HELLO"}, args...)...)
	}
	hello()
	hello("2")
	hello("3")
	p.Do("GET", "nokey") // RESP3 null
	hello()              // keeps the current protocol
	hello("2")
	hello("1")
	hello("4")
	hello("0")
	hello("-1")
	hello("abc")
	hello("3.0")
	hello("03")
	hello("99999999999999999999")
	hello("3", "foo")
	hello("3", "AUTH")
	hello("3", "AUTH", "default")
	hello("3", "SETNAME")
	hello("3", "SETNAME", "a b")
	hello("3", "SETNAME", "a\nb")
	hello("2", "SETNAME", "conn1")
	p.Do("CLIENT", "GETNAME")
	hello("2", "setname", "first", "SETNAME", "second")
	p.Do("CLIENT", "GETNAME")
	// No password configured: the default user accepts any password.
	hello("2", "AUTH", "default", "anything")
	hello("2", "AUTH", "nosuchuser", "pw")
	hello("2", "AUTH", "default", "x", "SETNAME", "bad name")
	// Options are all read before any is applied: the last AUTH wins.
	hello("2", "AUTH", "nosuchuser", "pw", "AUTH", "default", "x")
	hello("2", "SETNAME", "bad name", "AUTH", "nosuchuser", "pw")
	hello("2", "SETNAME", "ok", "bogus")
	p.Do("CLIENT", "GETNAME")
}

func TestAuthNoPassword(t *testing.T) {
	p := difftest.Start(t)
	p.Do("AUTH")
	p.Do("AUTH", "pw")
	p.Do("AUTH", "default", "pw")
	p.Do("AUTH", "nosuchuser", "pw")
	p.Do("AUTH", "a", "b", "c")
	p.Do("auth", "default", "")
}

func TestAuthRequirePass(t *testing.T) {
	p := startWithPassword(t)
	p.Do("GET", "k")
	p.Do("SET", "k", "v")
	p.Do("SELECT", "1")
	p.Do("CLIENT", "ID")
	p.Do("CLIENT", "NOSUCH")
	p.Do("NOSUCHCOMMAND", "a")
	p.Do("GET") // arity is checked before authentication
	p.Do("PING")
	p.Do("ECHO", "x")
	p.Do("HELLO")
	p.Do("HELLO", "3")
	p.Do("HELLO", "3", "AUTH", "default", "wrong")
	p.Do("HELLO", "3", "SETNAME", "n")
	p.Do("AUTH", "wrong")
	p.Do("AUTH", "default", "wrong")
	p.Do("AUTH", "other", "secret")
	p.Do("AUTH", "a", "b", "c")
	p.Do("GET", "k")
	p.Do("AUTH", "secret")
	p.Do("SET", "k", "v")
	p.Do("GET", "k")
	// A failed AUTH does not log an authenticated client out.
	p.Do("AUTH", "wrong")
	p.Do("GET", "k")
	// RESET logs the client out.
	p.Do("RESET")
	p.Do("GET", "k")
	p.Do("AUTH", "default", "secret")
	p.Do("GET", "k")

	p.Reconnect()
	p.Do("HELLO", "3", "AUTH", "default", "secret", "SETNAME", "authed")
	p.Do("GET", "k")
	p.Do("CLIENT", "GETNAME")

	p.Reconnect()
	p.Do("HELLO", "2", "AUTH", "default", "secret")
	p.Do("GET", "k")

	// QUIT works without authentication.
	p.Reconnect()
	p.RawExpectClose([]byte("QUIT\r\n"))

	// AUTH and the next command in one write: the second one runs authenticated.
	p.SendRaw([]byte("AUTH secret\r\nGET k\r\n"))
	p.Read()
	p.Read()
}

func TestConnSelect(t *testing.T) {
	p := difftest.Start(t)
	p.Do("SELECT")
	p.Do("SELECT", "a")
	p.Do("SELECT", "")
	p.Do("SELECT", "1.5")
	p.Do("SELECT", "01")
	p.Do("SELECT", " 1")
	p.Do("SELECT", "16")
	p.Do("SELECT", "-1")
	p.Do("SELECT", "2147483647")
	p.Do("SELECT", "2147483648")
	p.Do("SELECT", "-2147483649")
	p.Do("SELECT", "99999999999999999999")
	p.Do("SELECT", "1", "2")
	p.Do("SELECT", "15")
	p.Do("SET", "k", "in15")
	p.Do("SELECT", "0")
	p.Do("GET", "k")
	p.Do("SELECT", "15")
	p.Do("GET", "k")
}

// doSides sends different commands to the two servers (e.g. their own client
// ids) and requires identical replies.
func doSides(t *testing.T, p *difftest.Pair, cmp func(r, k difftest.Reply) error, rargs, kargs []any) difftest.Reply {
	t.Helper()
	r := p.Redis().Do(rargs...)
	k := p.Keyhive().Do(kargs...)
	if cmp == nil {
		cmp = difftest.Exact
	}
	if err := cmp(r, k); err != nil {
		t.Errorf("%v / %v: %v\n\tredis:   %q\n\tkeyhive: %q", rargs, kargs, err, r.Raw, k.Raw)
	}
	return r
}

func TestClientIDNameInfo(t *testing.T) {
	p := difftest.Start74(t)
	r, k := p.DoDifferent("client ids depend on each server's history", "CLIENT", "ID")
	if r.Kind != difftest.KindInt || k.Kind != difftest.KindInt || k.Int <= 0 {
		t.Errorf("CLIENT ID: %s vs %s", r, k)
	}
	p.Do("CLIENT", "ID", "x")
	p.Do("CLIENT", "GETNAME")
	p.Do("CLIENT", "GETNAME", "x")
	p.Do("CLIENT", "SETNAME")
	p.Do("CLIENT", "SETNAME", "a", "b")
	p.Do("CLIENT", "SETNAME", "with space")
	p.Do("CLIENT", "SETNAME", "new\nline")
	p.Do("CLIENT", "SETNAME", "caf\xc3\xa9")
	p.Do("CLIENT", "SETNAME", "myname")
	p.Do("CLIENT", "GETNAME")
	p.Do("client", "setname", "")
	p.Do("CLIENT", "GETNAME")
	p.Do("CLIENT", "SETNAME", "again")
	p.DoCompare(clientLinesCompare, "CLIENT", "INFO")
	p.Do("CLIENT", "INFO", "x")
	info := p.Keyhive().Do("CLIENT", "INFO").Str
	f := infoFields(info)
	if f["name"] != "again" || f["cmd"] != "client|info" || f["db"] != "0" || f["resp"] != "2" {
		t.Errorf("keyhive CLIENT INFO: %q", info)
	}
	p.Do("SELECT", "2")
	p.Proto(3)
	p.DoCompare(clientLinesCompare, "CLIENT", "INFO")
	p.Do("CLIENT", "GETNAME")
	p.Do("CLIENT", "SETNAME", "")
	p.Do("CLIENT", "GETNAME")
	f = infoFields(p.Keyhive().Do("CLIENT", "INFO").Str)
	if f["db"] != "2" || f["resp"] != "3" || f["name"] != "" {
		t.Errorf("keyhive CLIENT INFO after SELECT 2, HELLO 3: %v", f)
	}
}

func TestClientList(t *testing.T) {
	p := difftest.StartIsolated74(t)
	q := p.NewConn()
	q.Do("CLIENT", "SETNAME", "second")
	p.DoCompare(clientLinesCompare, "CLIENT", "LIST")
	p.DoCompare(clientLinesCompare, "CLIENT", "LIST", "TYPE", "normal")
	p.Do("CLIENT", "LIST", "TYPE", "master")
	p.Do("CLIENT", "LIST", "TYPE", "replica")
	p.Do("CLIENT", "LIST", "TYPE", "pubsub")
	p.Do("CLIENT", "LIST", "TYPE", "bogus")
	p.Do("CLIENT", "LIST", "TYPE")
	p.Do("CLIENT", "LIST", "TYPE", "normal", "ID", "1")
	p.Do("CLIENT", "LIST", "ID")
	p.Do("CLIENT", "LIST", "ID", "abc")
	p.Do("CLIENT", "LIST", "ID", "1", "abc")
	p.Do("CLIENT", "LIST", "ID", "0")
	p.Do("CLIENT", "LIST", "ID", "-5")
	p.Do("CLIENT", "LIST", "ID", "999999")
	p.Do("CLIENT", "LIST", "foo")
	p.Do("CLIENT", "LIST", "foo", "bar")

	rq, kq := q.Redis().Do("CLIENT", "ID").Int, q.Keyhive().Do("CLIENT", "ID").Int
	rp, kp := p.Redis().Do("CLIENT", "ID").Int, p.Keyhive().Do("CLIENT", "ID").Int
	// IDs are listed in the order given, repeated ones repeated, unknown ones skipped.
	r := doSides(t, p, clientLinesCompare,
		[]any{"CLIENT", "LIST", "ID", rq, rp, 999999, rq},
		[]any{"CLIENT", "LIST", "ID", kq, kp, 999999, kq})
	k := p.Keyhive().Do("CLIENT", "LIST", "ID", kq, kp, 999999, kq)
	lines := strings.Split(strings.TrimSuffix(k.Str, "\n"), "\n")
	if len(lines) != 3 || infoFields(lines[0])["name"] != "second" || infoFields(lines[1])["id"] != fmt.Sprint(kp) || infoFields(lines[2])["id"] != fmt.Sprint(kq) {
		t.Errorf("keyhive CLIENT LIST ID %d %d 999999 %d:\n%s\nredis:\n%s", kq, kp, kq, k.Str, r.Str)
	}
	p.Proto(3)
	p.DoCompare(clientLinesCompare, "CLIENT", "LIST")
}

// addrOf returns a connection's own address as its server reports it.
func addrOf(c *difftest.Client) string {
	return infoFields(c.Do("CLIENT", "INFO").Str)["addr"]
}

func TestClientKill(t *testing.T) {
	p := difftest.StartIsolated(t)
	// Errors and no-match replies.
	p.Do("CLIENT", "KILL")
	p.Do("CLIENT", "KILL", "1.2.3.4:5")
	p.Do("CLIENT", "KILL", "ID")
	p.Do("CLIENT", "KILL", "ID", "999999")
	p.Do("CLIENT", "KILL", "ID", "abc")
	p.Do("CLIENT", "KILL", "ID", "0")
	p.Do("CLIENT", "KILL", "ID", "-1")
	p.Do("CLIENT", "KILL", "ID", "99999999999999999999")
	p.Do("CLIENT", "KILL", "foo", "bar")
	p.Do("CLIENT", "KILL", "ID", "1", "SKIPME")
	p.Do("CLIENT", "KILL", "ID", "1", "SKIPME", "maybe")
	p.Do("CLIENT", "KILL", "ID", "1", "TYPE", "bogus")
	p.Do("CLIENT", "KILL", "ID", "abc", "FOO")
	p.Do("CLIENT", "KILL", "TYPE", "bogus", "ID", "abc")
	p.Do("CLIENT", "KILL", "TYPE", "master")
	p.Do("CLIENT", "KILL", "TYPE", "replica", "ID", "abc")
	p.Do("CLIENT", "KILL", "TYPE", "pubsub")
	p.Do("CLIENT", "KILL", "USER", "nosuchuser")
	p.Do("CLIENT", "KILL", "ADDR", "1.2.3.4:5")
	p.Do("CLIENT", "KILL", "LADDR", "1.2.3.4:5")
	p.Do("CLIENT", "KILL", "ADDR", "1.2.3.4:5", "SKIPME", "no")
	p.Do("client", "kill", "skipme", "yes")

	// Old form: CLIENT KILL addr.
	q := p.NewConn()
	q.Do("PING")
	doSides(t, p, nil, []any{"CLIENT", "KILL", addrOf(q.Redis())}, []any{"CLIENT", "KILL", addrOf(q.Keyhive())})
	expectClosed(t, q)

	// ID form.
	q = p.NewConn()
	doSides(t, p, nil,
		[]any{"CLIENT", "KILL", "ID", q.Redis().Do("CLIENT", "ID").Int},
		[]any{"CLIENT", "KILL", "ID", q.Keyhive().Do("CLIENT", "ID").Int})
	expectClosed(t, q)

	// ADDR filter, TYPE normal, USER default.
	q = p.NewConn()
	doSides(t, p, nil,
		[]any{"CLIENT", "KILL", "ADDR", addrOf(q.Redis()), "TYPE", "normal", "USER", "default"},
		[]any{"CLIENT", "KILL", "ADDR", addrOf(q.Keyhive()), "TYPE", "normal", "USER", "default"})
	expectClosed(t, q)

	// A client does not kill itself unless SKIPME no.
	doSides(t, p, nil,
		[]any{"CLIENT", "KILL", "ID", p.Redis().Do("CLIENT", "ID").Int},
		[]any{"CLIENT", "KILL", "ID", p.Keyhive().Do("CLIENT", "ID").Int})
	p.Do("PING")
	doSides(t, p, nil,
		[]any{"CLIENT", "KILL", "ADDR", addrOf(p.Redis()), "SKIPME", "no"},
		[]any{"CLIENT", "KILL", "ADDR", addrOf(p.Keyhive()), "SKIPME", "no"})
	expectClosed(t, p)
	p.Reconnect()

	// Old form on itself: replies OK, then closes.
	doSides(t, p, nil, []any{"CLIENT", "KILL", addrOf(p.Redis())}, []any{"CLIENT", "KILL", addrOf(p.Keyhive())})
	expectClosed(t, p)
	p.Reconnect()

	// Killing everyone else: two other clients.
	q1, q2 := p.NewConn(), p.NewConn()
	q1.Do("PING")
	q2.Do("PING")
	time.Sleep(20 * time.Millisecond) // let both servers notice the closes above
	p.Do("CLIENT", "KILL", "USER", "default")
	expectClosed(t, q1)
	expectClosed(t, q2)
	p.Do("PING")
}

// expectClosed checks that both servers closed q's connections.
func expectClosed(t *testing.T, q *difftest.Pair) {
	t.Helper()
	for _, c := range []*difftest.Client{q.Redis(), q.Keyhive()} {
		if err := c.Conn().WaitClosed(); err != nil {
			t.Errorf("%s: killed connection: %v", c.Name(), err)
		}
	}
}

func TestClientReply(t *testing.T) {
	p := difftest.Start(t)
	p.Do("CLIENT", "REPLY")
	p.Do("CLIENT", "REPLY", "bogus")
	p.Do("CLIENT", "REPLY", "on", "x")
	p.Do("CLIENT", "REPLY", "ON")

	// OFF: nothing until ON, whose +OK is sent.
	p.SendRaw([]byte("CLIENT REPLY OFF\r\nSET k v\r\nGET k\r\nNOSUCH\r\nCLIENT REPLY ON\r\nGET k\r\n"))
	p.Read()
	p.Read()
	p.NoReply(50 * time.Millisecond)

	// SKIP: only the next command's reply is dropped (errors included).
	p.SendRaw([]byte("CLIENT REPLY SKIP\r\nPING 1\r\nPING 2\r\nCLIENT REPLY SKIP\r\nNOSUCH\r\nPING 3\r\n"))
	p.Read()
	p.Read()
	p.NoReply(50 * time.Millisecond)

	// SKIP twice in a row, then SKIP under OFF.
	p.SendRaw([]byte("CLIENT REPLY SKIP\r\nCLIENT REPLY SKIP\r\nPING 1\r\nPING 2\r\n"))
	p.Read()
	p.SendRaw([]byte("CLIENT REPLY OFF\r\nCLIENT REPLY SKIP\r\nPING 1\r\nPING 2\r\nCLIENT REPLY ON\r\nPING 3\r\n"))
	p.Read()
	p.Read()
	p.NoReply(50 * time.Millisecond)

	// Replies of wrong-arity and unknown commands are dropped too.
	p.SendRaw([]byte("CLIENT REPLY OFF\r\nGET\r\nCLIENT REPLY bogus\r\nCLIENT REPLY ON\r\n"))
	p.Read()
	p.NoReply(50 * time.Millisecond)
}

func TestClientNoEvictHelpUnknown(t *testing.T) {
	p := difftest.Start74(t)
	p.Do("CLIENT", "NO-EVICT")
	p.Do("CLIENT", "NO-EVICT", "on")
	p.DoCompare(clientLinesCompare, "CLIENT", "INFO")
	if f := infoFields(p.Keyhive().Do("CLIENT", "INFO").Str); f["flags"] != "e" {
		t.Errorf("keyhive flags after NO-EVICT on: %q", f["flags"])
	}
	p.Do("CLIENT", "NO-EVICT", "OFF")
	p.Do("CLIENT", "NO-EVICT", "maybe")
	p.Do("CLIENT", "NO-EVICT", "on", "off")
	if f := infoFields(p.Keyhive().Do("CLIENT", "INFO").Str); f["flags"] != "N" {
		t.Errorf("keyhive flags after NO-EVICT off: %q", f["flags"])
	}

	p.Do("CLIENT")
	p.Do("CLIENT", "NOSUCH")
	p.Do("client", "nosuch", "a", "b")
	p.Do("CLIENT", strings.Repeat("x", 200))
	p.Do("CLIENT", "HELP", "extra")
	// CLIENT HELP itself: TestHelpTexts (Redis 7.4's text).
}

func TestClientRedis72Features(t *testing.T) {
	p := difftest.Start(t)
	_, k := p.DoDifferent(redis72, "CLIENT", "SETINFO", "lib-name", "mylib")
	expectReply(t, k, "+OK\r\n")
	_, k = p.DoDifferent(redis72, "CLIENT", "SETINFO", "LIB-VER", "1.2.3")
	expectReply(t, k, "+OK\r\n")
	_, k = p.DoDifferent(redis72, "CLIENT", "SETINFO", "lib-name", "my lib")
	expectReply(t, k, "-ERR lib-name cannot contain spaces, newlines or special characters.\r\n")
	_, k = p.DoDifferent(redis72, "CLIENT", "SETINFO", "bogus", "x")
	expectReply(t, k, "-ERR Unrecognized option 'bogus'\r\n")
	_, k = p.DoDifferent(redis72, "CLIENT", "SETINFO", "lib-name")
	expectReply(t, k, "-ERR wrong number of arguments for 'client|setinfo' command\r\n")
	f := infoFields(p.Keyhive().Do("CLIENT", "INFO").Str)
	if f["lib-name"] != "mylib" || f["lib-ver"] != "1.2.3" {
		t.Errorf("keyhive CLIENT INFO after SETINFO: %v", f)
	}

	_, k = p.DoDifferent(redis72, "CLIENT", "NO-TOUCH", "on")
	expectReply(t, k, "+OK\r\n")
	if f := infoFields(p.Keyhive().Do("CLIENT", "INFO").Str); f["flags"] != "T" {
		t.Errorf("keyhive flags after NO-TOUCH on: %q", f["flags"])
	}
	_, k = p.DoDifferent(redis72, "CLIENT", "NO-TOUCH", "maybe")
	expectReply(t, k, "-ERR syntax error\r\n")
	_, k = p.DoDifferent(redis72, "CLIENT", "NO-TOUCH", "off")
	expectReply(t, k, "+OK\r\n")
}

func expectReply(t *testing.T, r difftest.Reply, want string) {
	t.Helper()
	if string(r.Raw) != want {
		t.Errorf("keyhive replied %q, want %q", r.Raw, want)
	}
}
