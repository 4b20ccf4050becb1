package server_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// sameSlowlog compares SLOWLOG GET replies entry by entry: ids relative to
// the newest entry's (servers count from their start), arguments and client
// names exactly, timestamps within 5 s; durations and client ports are the
// servers' own. Keyhive's entries have Redis 8.10's seventh field, which the
// 7.x oracles lack: the command's argument count before the cut
// (redis.io/docs/latest/commands/slowlog-get/), checked against the
// arguments the oracle logged.
func sameSlowlog(r, k difftest.Reply) error {
	if r.IsError() || k.IsError() {
		return difftest.Exact(r, k)
	}
	if len(r.Elems) != len(k.Elems) {
		return fmt.Errorf("%d entries, redis %d", len(k.Elems), len(r.Elems))
	}
	addr := regexp.MustCompile(`^127\.0\.0\.1:\d+$`)
	for i := range r.Elems {
		re, ke := r.Elems[i], k.Elems[i]
		if len(re.Elems) != 6 || len(ke.Elems) != 7 {
			return fmt.Errorf("entry %d: %d fields, redis %d (7 and 6 expected)", i, len(ke.Elems), len(re.Elems))
		}
		if argc := loggedArgc(re.Elems[3]); ke.Elems[6].Kind != difftest.KindInt || ke.Elems[6].Int != argc {
			return fmt.Errorf("entry %d: argument count %s, want %d", i, ke.Elems[6], argc)
		}
		switch {
		case re.Elems[0].Int-r.Elems[0].Elems[0].Int != ke.Elems[0].Int-k.Elems[0].Elems[0].Int:
			return fmt.Errorf("entry %d: id %d after the newest's, redis %d", i, ke.Elems[0].Int-k.Elems[0].Elems[0].Int, re.Elems[0].Int-r.Elems[0].Elems[0].Int)
		case ke.Elems[1].Int < re.Elems[1].Int-5 || ke.Elems[1].Int > re.Elems[1].Int+5:
			return fmt.Errorf("entry %d: timestamp %d, redis %d", i, ke.Elems[1].Int, re.Elems[1].Int)
		case ke.Elems[2].Kind != difftest.KindInt || ke.Elems[2].Int < 0:
			return fmt.Errorf("entry %d: duration %s", i, ke.Elems[2])
		case string(ke.Elems[3].Raw) != string(re.Elems[3].Raw):
			return fmt.Errorf("entry %d: arguments %q, redis %q", i, ke.Elems[3].Raw, re.Elems[3].Raw)
		case re.Elems[4].Str == "?:0" && ke.Elems[4].Str != "?:0", // a script's call
			re.Elems[4].Str != "?:0" && !addr.MatchString(ke.Elems[4].Str):
			return fmt.Errorf("entry %d: client address %q", i, ke.Elems[4].Str)
		case ke.Elems[5].Str != re.Elems[5].Str:
			return fmt.Errorf("entry %d: client name %q, redis %q", i, ke.Elems[5].Str, re.Elems[5].Str)
		}
	}
	return nil
}

// loggedArgc is the argument count of the command a slow log entry's
// arguments show: the cut's "... (N more arguments)" counts the rest.
func loggedArgc(args difftest.Reply) int64 {
	n := int64(len(args.Elems))
	if n > 0 {
		var more int64
		if _, err := fmt.Sscanf(args.Elems[n-1].Str, "... (%d more arguments)", &more); err == nil {
			return n - 1 + more
		}
	}
	return n
}

// TestSlowlog: what SLOWLOG records with slowlog-log-slower-than 0 (every
// command): long arguments and argument lists cut as Redis cuts them,
// credentials redacted, EXEC's commands one by one and not EXEC, a script's
// calls and then the script, failed commands but not rejected ones; then GET's
// count, LEN, RESET, the length limit and the switch.
func TestSlowlog(t *testing.T) {
	p := difftest.StartIsolated(t)
	p.Do("CONFIG", "SET", "slowlog-log-slower-than", "0")
	p.Do("SLOWLOG", "RESET")
	p.Do("SET", strings.Repeat("k", 200), "v")
	many := []any{"DEL"}
	for i := range 40 {
		many = append(many, fmt.Sprint("key", i))
	}
	p.Do(many...)
	p.Do("CLIENT", "SETNAME", "bob")
	p.Do("AUTH", "someone", "secret")
	p.DoCompare(func(r, k difftest.Reply) error { // its reply holds the client id
		if r.IsError() != k.IsError() {
			return difftest.Exact(r, k)
		}
		return nil
	}, "HELLO", "2", "AUTH", "default", "anything", "SETNAME", "alice")
	p.Do("MULTI")
	p.Do("SET", "a", "1")
	p.Do("INCR", "a")
	p.Do("EXEC")
	p.Do("EVAL", "return redis.call('GET', KEYS[1])", "1", "a")
	p.Do("INCR", "nosuchcommand", "x")                       // wrong arity: rejected, not logged
	p.Do("LPUSH", "a", "x")                                  // WRONGTYPE: ran, logged
	p.Do("ACL", "SETUSER", "someone", "on", ">secret", "~*") // the name and rules redacted
	p.Do("ACL", "DELUSER", "someone")
	p.DoCompare(sameSlowlog, "SLOWLOG", "GET", "-1")
	p.DoCompare(sameSlowlog, "SLOWLOG", "GET")
	p.DoCompare(sameSlowlog, "SLOWLOG", "GET", "2")
	p.DoCompare(sameSlowlog, "SLOWLOG", "GET", "0")
	p.Do("SLOWLOG", "GET", "-2")
	p.Do("SLOWLOG", "GET", "many")
	p.Do("SLOWLOG", "LEN")
	p.Do("SLOWLOG", "NOSUCH")
	p.Do("CONFIG", "SET", "slowlog-max-len", "3")
	p.Do("PING")
	p.Do("SLOWLOG", "LEN")
	p.DoCompare(sameSlowlog, "SLOWLOG", "GET", "-1")
	p.Do("CONFIG", "SET", "slowlog-log-slower-than", "-1")
	p.Do("PING")
	p.DoCompare(sameSlowlog, "SLOWLOG", "GET", "-1")
	p.Do("SLOWLOG", "RESET")
	p.Do("SLOWLOG", "LEN")
	p.Do("CONFIG", "SET", "slowlog-log-slower-than", "10000")
	p.Do("SLOWLOG", "LEN")
}

// TestSlowlogBlocked: a command that blocked is logged when its wait ends,
// as Redis 7.0 logs it: served by a push, with its arguments, after the push;
// ended by CLIENT UNBLOCK, without arguments, before that command; not after
// a timeout.
func TestSlowlogBlocked(t *testing.T) {
	p := difftest.StartIsolated(t)
	p.Do("CONFIG", "SET", "slowlog-log-slower-than", "0")
	a := p.NewConn()
	ids := [2]difftest.Reply{a.Redis().Do("CLIENT", "ID"), a.Keyhive().Do("CLIENT", "ID")}
	p.Do("SLOWLOG", "RESET")
	a.Do("BLPOP", "q", "0.05")
	a.Send("BLPOP", "q", 0)
	a.NoReply(stillBlocked)
	p.Do("RPUSH", "q", "x")
	a.Read()
	for _, mode := range []string{"TIMEOUT", "ERROR"} {
		a.Send("BZPOPMIN", "z", 0)
		a.NoReply(stillBlocked)
		for i, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
			if r := c.Do("CLIENT", "UNBLOCK", ids[i].Int, mode); r.Int != 1 {
				t.Errorf("%s: CLIENT UNBLOCK %s: %v", c.Name(), mode, r)
			}
		}
		a.Read()
	}
	p.DoCompare(func(r, k difftest.Reply) error { // CLIENT UNBLOCK's id argument differs
		for _, reply := range []*difftest.Reply{&r, &k} {
			for i := range reply.Elems {
				if args := reply.Elems[i].Elems[3].Elems; len(args) == 4 && strings.EqualFold(args[1].Str, "unblock") {
					reply.Elems[i].Elems[3].Raw = nil
				}
			}
		}
		return sameSlowlog(r, k)
	}, "SLOWLOG", "GET", "-1")
}

// TestSlowlogArgc: SLOWLOG GET's seventh field (Redis 8.10,
// redis.io/docs/latest/commands/slowlog-get/) is the command's argument
// count, command name included, before the logged arguments are cut: the
// page's example, SADD with 33 arguments logged as 32, reports 33.
func TestSlowlogArgc(t *testing.T) {
	srv, err := newKeyhive(t, "--slowlog-log-slower-than", "0")
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, srv.Addr())
	args := []any{"SADD", "myset"}
	for i := 3; i <= 33; i++ {
		args = append(args, i)
	}
	for _, proto := range []string{"2", "3"} {
		c.Do("HELLO", proto)
		c.Do("SLOWLOG", "RESET")
		c.Do(args...)
		c.Do("GET", "k")
		r, err := c.Do("SLOWLOG", "GET", 3)
		if err != nil {
			t.Fatal(err)
		}
		// Newest first: GET k, SADD, SLOWLOG RESET.
		for i, want := range []struct {
			argc   int64
			logged int
			last   string
		}{{2, 2, "k"}, {33, 32, "... (2 more arguments)"}, {2, 2, "RESET"}} {
			e := r.Elems[i]
			if len(e.Elems) != 7 || e.Elems[6].Int != want.argc || len(e.Elems[3].Elems) != want.logged ||
				e.Elems[3].Elems[want.logged-1].Str != want.last {
				t.Errorf("RESP%s entry %d: %v, want argc %d, %d arguments ending %q", proto, i, e, want.argc, want.logged, want.last)
			}
		}
	}
}

// TestSlowlogMaxArgc: the slowlog-max-argc directive (Redis 8.10, 32 by
// default; the SLOWLOG GET page) bounds the logged arguments: past it the
// last one logged says how many more there were, and the seventh field
// keeps the count before the cut.
func TestSlowlogMaxArgc(t *testing.T) {
	srv := startKeyhive(t, "--slowlog-log-slower-than", "0", "--slowlog-max-argc", "4")
	c := dial(t, srv.Addr())
	expectOK := func(args ...any) {
		t.Helper()
		if r, err := c.Do(args...); err != nil || r.Str != "OK" {
			t.Fatalf("%v: %v %v", args, r, err)
		}
	}
	for _, n := range []int{4, 3} {
		if n == 3 {
			expectOK("CONFIG", "SET", "slowlog-max-argc", "3")
		}
		expectOK("SLOWLOG", "RESET")
		c.Do("SADD", "s", "a", "b", "c", "d")
		c.Do("SADD", "s", "a", "b")
		r, err := c.Do("SLOWLOG", "GET", 2)
		if err != nil {
			t.Fatal(err)
		}
		last := fmt.Sprintf("... (%d more arguments)", 6-(n-1))
		logged := func(e int) string {
			var args []string
			for _, a := range r.Elems[e].Elems[3].Elems {
				args = append(args, a.Str)
			}
			return fmt.Sprint(args)
		}
		got := []string{logged(1), logged(0)}
		want := []string{fmt.Sprint(append([]string{"SADD", "s", "a", "b"}[:n-1], last)), "[SADD s a b]"}
		if n == 3 {
			want[1] = "[SADD s ... (2 more arguments)]"
		}
		if strings.Join(got, " ") != strings.Join(want, " ") || r.Elems[1].Elems[6].Int != 6 {
			t.Errorf("slowlog-max-argc %d: logged %q (argc %d), want %q", n, got, r.Elems[1].Elems[6].Int, want)
		}
	}
	for _, bad := range []string{"0", "-1", "x"} {
		if r, _ := c.Do("CONFIG", "SET", "slowlog-max-argc", bad); r.Kind != '-' {
			t.Errorf("CONFIG SET slowlog-max-argc %s: %v, want an error", bad, r)
		}
	}
}
