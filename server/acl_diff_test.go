package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// Differential tests of AUTH and ACL. Every test changes users, so each runs
// on servers of its own (StartIsolated).

// normRules sorts each run of single-command rules (+cmd, -cmd|sub) in a
// rule string.
func normRules(s string) string {
	s = strings.NewReplacer("(", "( ", ")", " )").Replace(s)
	tokens := strings.Split(s, " ")
	isCmd := func(t string) bool {
		return len(t) > 1 && (t[0] == '+' || t[0] == '-') && t[1] != '@'
	}
	for i := 0; i < len(tokens); {
		j := i
		for j < len(tokens) && isCmd(tokens[j]) {
			j++
		}
		slices.Sort(tokens[i:j])
		i = max(j, i+1)
	}
	return strings.Join(tokens, " ")
}

// Command rules are compared by what they allow. Redis picks the categories
// of a description by how many of their commands a user has, and Keyhive
// lacks some commands (streams, geo, cluster), so the two may word the same
// permissions differently: Redis's rules, applied in Keyhive to a probe user
// (without the commands Keyhive lacks), must describe as Keyhive's do.
type ruleChecker struct {
	t *testing.T
	p *difftest.Pair
}

func (rc ruleChecker) known(rule string) bool {
	name := strings.TrimLeft(rule, "+-")
	if strings.HasPrefix(name, "@") {
		return true
	}
	base, _, _ := strings.Cut(name, "|")
	return !rc.p.Keyhive().Do("COMMAND", "INFO", base).Elems[0].Null
}

func (rc ruleChecker) sameCommands(redis, keyhive string) bool {
	if normRules(redis) == normRules(keyhive) {
		return true
	}
	kh := rc.p.Keyhive()
	var filtered []any
	for _, rule := range strings.Fields(redis) {
		if rc.known(rule) {
			filtered = append(filtered, rule)
		}
	}
	// And Keyhive's without allowing the commands Redis 7.0 lacks (WAITAOF,
	// 7.2), which its description may name.
	var newer []any
	for _, rule := range strings.Fields(keyhive) {
		if name, ok := strings.CutPrefix(rule, "+"); !ok || strings.HasPrefix(name, "@") || !rc.p.Redis().Do("COMMAND", "INFO", strings.Split(name, "|")[0]).Elems[0].Null {
			newer = append(newer, rule)
		}
	}
	kh.Do(append([]any{"ACL", "SETUSER", "probe-redis", "reset"}, filtered...)...)
	kh.Do(append([]any{"ACL", "SETUSER", "probe-keyhive", "reset"}, anys(strings.Fields(keyhive))...)...)
	// Commands newer than Redis 7.0 are left out of both: 7.0 cannot name them.
	for _, probe := range []string{"probe-redis", "probe-keyhive"} {
		kh.Do(append([]any{"ACL", "SETUSER", probe}, newerThan70Rules()...)...)
	}
	a := kh.Do("ACL", "GETUSER", "probe-redis").Elems[5].Str
	b := kh.Do("ACL", "GETUSER", "probe-keyhive").Elems[5].Str
	kh.Do("ACL", "DELUSER", "probe-redis", "probe-keyhive")
	return a == b
}

// user compares ACL GETUSER name.
func (rc ruleChecker) user(name string) {
	rc.t.Helper()
	r := rc.p.Redis().Do("ACL", "GETUSER", name)
	k := rc.p.Keyhive().Do("ACL", "GETUSER", name)
	if err := rc.compare(r, k); err != nil {
		rc.t.Errorf("ACL GETUSER %s: %v\n\tredis:   %s\n\tkeyhive: %s", name, err, r, k)
	}
}

func (rc ruleChecker) compare(r, k difftest.Reply) error {
	if r.Kind != k.Kind || len(r.Elems) != len(k.Elems) || !r.IsAggregate() {
		return difftest.Exact(r, k)
	}
	for i := 0; i < len(r.Elems); i++ {
		re, ke := r.Elems[i], k.Elems[i]
		if i%2 == 1 && r.Elems[i-1].Str == "commands" && !r.Elems[i-1].IsAggregate() {
			if !rc.sameCommands(re.Str, ke.Str) {
				return fmt.Errorf("commands %q and %q allow different commands", re.Str, ke.Str)
			}
			continue
		}
		if re.IsAggregate() {
			if err := rc.compare(re, ke); err != nil {
				return err
			}
		} else if !re.Equal(ke) {
			return fmt.Errorf("%s vs %s", re, ke)
		}
	}
	return nil
}

// all compares ACL USERS and every user, and ACL LIST with command rules
// left out (they are compared through GETUSER).
func (rc ruleChecker) all() {
	rc.t.Helper()
	users := rc.p.Do("ACL", "USERS")
	for _, u := range users.Elems {
		rc.user(u.Str)
	}
	strip := func(r difftest.Reply) string {
		var lines []string
		for _, e := range r.Elems {
			var kept []string
			for _, tok := range strings.Fields(strings.NewReplacer("(", "( ", ")", " )").Replace(e.Str)) {
				if len(tok) < 2 || (tok[0] != '+' && tok[0] != '-') {
					kept = append(kept, tok)
				}
			}
			lines = append(lines, strings.Join(kept, " "))
		}
		return strings.Join(lines, "\n")
	}
	r := rc.p.Redis().Do("ACL", "LIST")
	k := rc.p.Keyhive().Do("ACL", "LIST")
	if strip(r) != strip(k) {
		rc.t.Errorf("ACL LIST differs beyond command rules:\n\tredis:   %s\n\tkeyhive: %s", r, k)
	}
}

func TestACLSetUserRules(t *testing.T) {
	p := difftest.StartIsolated74(t)
	p.Do("ACL", "SETUSER", "alice", "on", ">pw", "~foo*", "%R~bar*", "&ch*", "+get", "+@hash", "-hdel", "+client|id")
	rc := ruleChecker{t, p}
	rc.all()
	p.Do("ACL", "GETUSER", "nosuch")
	rules := [][]string{
		{"+get", "+get"}, {"+get", "-get"}, {"+@hash", "-@hash"}, {"+@hash", "+hget", "-@hash"},
		{"+client|id", "-client"}, {"-client", "+client|id"}, {"+client", "+client|id"},
		{"+@all", "-get", "+get"}, {"+@all", "-get"}, {"+select|0", "+select|1"}, {"+select|0", "+select"},
		{"+select|0", "-select"}, {"+get|x", "+get|y", "-get"}, {"+client|id", "+client|setname", "-client|id"},
		{"+GET", "+@HASH"}, {"+@all", "+get"}, {"-@all", "-get"}, {"nocommands", "+get", "allcommands"},
		{"+@all", "-@hash", "+hget"}, {"+client|id", "+@connection"}, {"+@connection", "-client|id"},
		{"+@write", "+set", "-set", "+set"}, {"-hdel", "+client|id", "+get", "+@hash"}, {"+@hash", "+@read"},
		{"+@read", "-get", "+@string"}, {"+@string", "-get", "+@read"}, {"+acl", "-acl|whoami"},
		{"+@all", "-@hash", "+hget", "-@hash"}, {"+@all", "-@dangerous", "-@slow", "+config|get"},
		{"+@fast", "+@keyspace", "-@write"}, {"+@pubsub", "+@scripting", "+@transaction", "-exec"},
		{"allcommands", "-@admin", "-flushall"}, {"+@sortedset", "+@list", "+@set", "+@blocking"},
		{"%R~r*", "%W~w*", "~b*", "%RW~x", "%R~", "~"}, {"~a", "%R~a", "%W~b", "%R~b"},
		{"allkeys"}, {"~*"}, {"%R~*"}, {"~a", "resetkeys", "~b"}, {"&a", "&b", "&a"}, {"allchannels"}, {"&*"},
		{"&a", "resetchannels", "&c"}, {">p1", ">p2", ">p1"}, {">p1", "<p1"}, {">p1", "nopass"}, {"nopass", ">p"},
		{"#" + strings.Repeat("ab", 32), "!" + strings.Repeat("ab", 32)}, {">x", "resetpass"},
		{"on", "off"}, {"off", "on"}, {"skip-sanitize-payload"}, {"sanitize-payload"},
		{"(~x* +get)", "(%W~y* +set)"}, {"(", "~x", ")"}, {"(~x", "+get)", "clearselectors", "(~z +@read)"},
		{"(~a &b +@all -get)"}, {"()"}, {"(allkeys allchannels allcommands)"}, {"(%R~a %W~b ~c resetkeys ~d)"},
		{"on", ">p", "~*", "&*", "+@all", "reset"}, {"reset", "on", "(~x +get)", "reset"},
	}
	for _, r := range rules {
		args := append([]any{"ACL", "SETUSER", "t", "reset"}, anys(r)...)
		p.Do(args...)
		rc.all()
	}
	// Invalid rules change nothing, whatever came before them.
	bad := [][]string{
		{"foo"}, {"+nosuch"}, {"+@nosuch"}, {"<nopw"}, {"#abc"}, {"!abc"}, {"#" + strings.Repeat("AB", 32)},
		{"~*", "~a"}, {"allkeys", "~b"}, {"&*", "&x"}, {"allchannels", "&y"}, {"+config|get|x"},
		{"+config|nosuch"}, {"-config|get|x"}, {"-select|0"}, {"+get|"}, {"+@hash|x"}, {"+acl|nosuch"},
		{"("}, {"(~x"}, {"~x", "(", "+get"}, {"(on)"}, {"(+nosuch)"}, {"(~a", "foo)"}, {"%~x"}, {"%X~x"},
		{"%"}, {"%Rx"}, {"%R"}, {"%RR~x"}, {"%WRW~x"}, {"on", ">p", "+get", "bad"}, {""},
		{"!" + strings.Repeat("ab", 32)},
	}
	p.Do("ACL", "SETUSER", "t", "reset", "on", ">keep", "~k", "+get")
	for _, r := range bad {
		if r[0] == "%" {
			// redis-server 7.4.1 accepts a bare "%" and then crashes on an
			// assertion (acl.c) describing the user; 7.0.15 refuses it.
			want := "ERR Error in ACL SETUSER modifier '%': Syntax error"
			if got := p.Keyhive().Do("ACL", "SETUSER", "t", "%"); got.Str != want {
				t.Errorf("ACL SETUSER t %%: %s, want %s", got, want)
			}
			continue
		}
		p.Do(append([]any{"ACL", "SETUSER", "t"}, anys(r)...)...)
		rc.user("t")
	}
	p.Do("ACL", "SETUSER", "a b")
	p.Do("ACL", "SETUSER", "a\x00b")
	p.Do("ACL", "SETUSER", "")
	p.Do("ACL", "SETUSER", "fresh")
	rc.user("fresh")
	p.Do("ACL", "SETUSER", "fresh2", "+nosuch")
	p.Do("ACL", "GETUSER", "fresh2")
	p.Do("ACL", "SETUSER")
	p.Do("ACL", "SETUSER", "x", "(", ")")
	rc.all()
	p.Proto(3)
	rc.user("x")
	rc.user("alice")
}

// redis8ModuleCategories are the ACL categories of the Redis 8 module types
// Keyhive has, and Redis 8.8's array, which ACL CAT lists after Redis 7's
// own.
var redis8ModuleCategories = []string{"json", "bloom", "cuckoo", "cms", "topk", "tdigest", "vectorset", "array"}

// withModuleCategories compares ACL CAT's lists: Keyhive's is Redis 7's
// followed by redis8ModuleCategories.
func withModuleCategories(redis, keyhive difftest.Reply) error {
	want := make([]string, 0, len(redis.Elems)+len(redis8ModuleCategories))
	for _, e := range redis.Elems {
		want = append(want, e.Str)
	}
	want = append(want, redis8ModuleCategories...)
	got := make([]string, 0, len(keyhive.Elems))
	for _, e := range keyhive.Elems {
		got = append(got, e.Str)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		return fmt.Errorf("ACL CAT: keyhive %v, want redis's followed by %v: %v", got, redis8ModuleCategories, want)
	}
	return nil
}

func TestACLSubcommands(t *testing.T) {
	p := difftest.StartIsolated(t)
	p.Do("ACL")
	p.Do("ACL", "foo")
	p.Do("ACL", "HELP", "x")
	p.DoCompare(withModuleCategories, "ACL", "CAT")
	p.Do("ACL", "CAT", "a", "b")
	p.Do("ACL", "CAT", "nosuch")
	for _, c := range []string{"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
		"pubsub", "admin", "fast", "slow", "blocking", "dangerous", "connection", "transaction", "scripting"} {
		r, k := p.DoDifferent("Keyhive lacks stream, geo, hyperloglog, cluster and replication commands", "ACL", "CAT", strings.ToUpper(c))
		// Every command Keyhive has is listed in the same categories.
		have := map[string]bool{}
		for _, e := range k.Elems {
			have[e.Str] = true
		}
		all := p.Keyhive().Do("COMMAND", "LIST")
		exists := map[string]bool{}
		for _, e := range all.Elems {
			exists[e.Str] = true
		}
		for _, e := range r.Elems {
			if exists[e.Str] && !have[e.Str] && e.Str != "client|pause" && e.Str != "client|unpause" && e.Str != "script|debug" {
				t.Errorf("ACL CAT %s: keyhive lacks %s", c, e.Str)
			}
		}
	}
	p.Do("ACL", "GENPASS", "0")
	p.Do("ACL", "GENPASS", "4097")
	p.Do("ACL", "GENPASS", "-1")
	p.Do("ACL", "GENPASS", "x")
	p.Do("ACL", "GENPASS", "1", "2")
	for _, bits := range []string{"1", "4", "5", "8", "255", "4096"} {
		r, k := p.DoDifferent("random password", "ACL", "GENPASS", bits)
		if len(r.Str) != len(k.Str) || strings.Trim(k.Str, "0123456789abcdef") != "" {
			t.Errorf("ACL GENPASS %s: redis %q, keyhive %q", bits, r.Str, k.Str)
		}
	}
	r, k := p.DoDifferent("random password", "ACL", "GENPASS")
	if len(r.Str) != len(k.Str) {
		t.Errorf("ACL GENPASS: redis %q, keyhive %q", r.Str, k.Str)
	}
	p.Do("ACL", "WHOAMI")
	p.Do("ACL", "WHOAMI", "x")
	p.Do("ACL", "USERS", "x")
	p.Do("ACL", "LIST", "x")
	p.Do("ACL", "GETUSER")
	p.Do("ACL", "DELUSER")
	p.Do("ACL", "DELUSER", "default")
	p.Do("ACL", "DELUSER", "nouser")
	p.Do("ACL", "SETUSER", "a")
	p.Do("ACL", "SETUSER", "b")
	p.Do("ACL", "DELUSER", "a", "b", "a", "c")
	p.Do("ACL", "DELUSER", "x", "default")
	p.Do("ACL", "USERS")
	p.Do("ACL", "SAVE")
	p.Do("ACL", "LOAD")
	p.Do("ACL", "LOG", "x")
	p.Do("ACL", "LOG", "1", "2")
	p.Do("ACL", "LOG", "reset", "x")
	p.Do("ACL", "LOG", "RESET")
	p.Do("ACL", "LOG")
	p.Do("ACL", "LOG", "-1")
	p.Do("ACL", "DRYRUN", "default")
	p.Do("ACL", "DRYRUN", "default", "get")
	p.Do("ACL", "DRYRUN", "default", "nosuch")
	p.Do("ACL", "DRYRUN", "default", "config", "nosuch")
	p.Do("ACL", "DRYRUN", "nouser", "get", "x")
	p.Do("ACL", "DRYRUN", "default", "get", "x")
	p.DoCompare(commandInfoCompare, "COMMAND", "INFO", "acl", "acl|cat", "acl|deluser", "acl|dryrun", "acl|genpass",
		"acl|getuser", "acl|list", "acl|load", "acl|log", "acl|save", "acl|setuser", "acl|users", "acl|whoami", "acl|help", "auth")
}

func TestACLAuth(t *testing.T) {
	p := difftest.StartIsolated74(t)
	p.Do("AUTH", "x")
	p.Do("AUTH", "default", "x")
	p.Do("AUTH", "nouser", "x")
	p.Do("AUTH", "a", "b", "c")
	p.Do("ACL", "SETUSER", "u", "on", ">pw", "+@all", "~*")
	p.Do("ACL", "SETUSER", "off", "off", ">pw", "+@all", "~*")
	p.Do("ACL", "SETUSER", "np", "on", "nopass", "+acl|whoami")
	q := p.NewConn()
	q.Do("AUTH", "u", "bad")
	q.Do("AUTH", "off", "pw")
	q.Do("AUTH", "u", "pw")
	q.Do("ACL", "WHOAMI")
	q.Do("AUTH", "np", "anything")
	q.Do("ACL", "WHOAMI")
	q.Do("PING")
	q.Do("HELLO", "2", "AUTH", "u", "bad")
	q.Do("HELLO", "2", "AUTH", "u", "pw")
	q.Do("ACL", "WHOAMI")

	// requirepass is the default user's password.
	p.Do("CONFIG", "SET", "requirepass", "secret")
	ruleChecker{t, p}.user("default")
	r := p.NewConn()
	r.Do("PING")
	r.Do("ACL", "WHOAMI")
	r.Do("AUTH", "wrong")
	r.Do("AUTH", "secret")
	r.Do("PING")
	r.Do("RESET")
	r.Do("PING")
	r.Do("AUTH", "default", "secret")
	r.Do("ACL", "SETUSER", "default", ">other")
	r.Do("CONFIG", "GET", "requirepass")
	s := p.NewConn()
	s.Do("AUTH", "other")
	s.Do("HELLO", "3", "AUTH", "default", "nope")
	s.Do("HELLO", "3")
	s.Do("HELLO", "3", "AUTH", "default", "secret")
	p.Do("CONFIG", "SET", "requirepass", "")
	ruleChecker{t, p}.user("default")
	p.NewConn().Do("PING")
	// A disabled default user needs authentication as another user.
	p.Do("ACL", "SETUSER", "default", "off")
	d := p.NewConn()
	d.Do("PING")
	d.Do("AUTH", "u", "pw")
	d.Do("PING")
	d.Do("ACL", "SETUSER", "default", "on")
}

// asUser opens a connection authenticated as user (password pw).
func asUser(p *difftest.Pair, user string) *difftest.Pair {
	q := p.NewConn()
	q.Do("AUTH", user, "pw")
	return q
}

func TestACLCommandAndKeyChecks(t *testing.T) {
	p := difftest.StartIsolated74(t)
	p.Do("ACL", "SETUSER", "v", "on", ">pw", "%R~r*", "%W~w*", "~b*", "&c*", "+@all", "-ping", "-config|set", "-@dangerous", "+select|0")
	p.Do("SET", "r1", "x")
	p.Do("SET", "b1", "y")
	p.Do("RPUSH", "bl", "3", "1", "2")
	q := asUser(p, "v")
	cmds := [][]any{
		{"GET", "r1"}, {"GET", "w1"}, {"GET", "x"}, {"SET", "w1", "v"}, {"SET", "r1", "v"}, {"SET", "w1", "v", "GET"},
		{"SET", "b1", "v", "GET"}, {"LPUSH", "w1l", "a"}, {"INCR", "w1"}, {"INCR", "b1n"}, {"MGET", "r1", "b1"},
		{"MGET", "r1", "w1"}, {"MSET", "w1", "a", "w2", "b"}, {"MSET", "w1", "a", "r2", "b"}, {"EXISTS", "r1", "w1", "x"},
		{"EXISTS", "r1", "w1"}, {"DEL", "w1"}, {"DEL", "r1"}, {"COPY", "r1", "w9"}, {"COPY", "w9", "r9"},
		{"RENAME", "b1", "w3"}, {"RENAME", "r1", "w3"}, {"LMOVE", "bl", "w4", "LEFT", "LEFT"}, {"LMOVE", "w4", "bl", "LEFT", "LEFT"},
		{"SINTERSTORE", "w5", "r1", "b1"}, {"SINTERSTORE", "r5", "r1"}, {"ZUNIONSTORE", "w6", "2", "r1", "b1"},
		{"ZUNIONSTORE", "w6", "2", "r1", "w1"}, {"BITOP", "AND", "w7", "r1", "b1"}, {"BITOP", "AND", "r7", "r1"},
		{"BITFIELD", "w1", "GET", "u8", "0"}, {"BITFIELD", "r1", "GET", "u8", "0"}, {"BITFIELD", "r1", "SET", "u8", "0", "1"},
		{"BITFIELD", "b1", "INCRBY", "u8", "0", "1"}, {"BITFIELD_RO", "r1", "GET", "u8", "0"}, {"OBJECT", "ENCODING", "w1"},
		{"OBJECT", "ENCODING", "x"}, {"TYPE", "w1"}, {"TTL", "w1"}, {"EXPIRE", "w1", "100"}, {"EXPIRE", "r1", "100"},
		{"PING"}, {"CONFIG", "SET", "maxclients", "100"}, {"CONFIG", "GET", "maxclients"}, {"FLUSHALL"}, {"KEYS", "*"},
		{"SELECT", "0"}, {"SELECT", "1"}, {"SELECT", "0"}, {"HSET", "w8", "f", "v"}, {"HGET", "w8", "f"}, {"HINCRBY", "w8", "f", "1"},
		{"SADD", "w9s", "a"}, {"SMOVE", "bs", "w9s", "a"}, {"SMOVE", "w9s", "bs", "a"}, {"ZADD", "wz", "1", "a"},
		{"ZRANGESTORE", "wz2", "r1", "0", "-1"}, {"ZRANGESTORE", "rz2", "wz", "0", "-1"}, {"LMPOP", "2", "bl", "r1", "LEFT"},
		{"LMPOP", "1", "w1", "LEFT"}, {"BLPOP", "b0", "0.01"}, {"GETDEL", "w1"}, {"GETEX", "b1"}, {"APPEND", "w1", "x"},
		{"STRLEN", "w1"}, {"SETRANGE", "w1", "0", "x"}, {"GETRANGE", "w1", "0", "1"}, {"LCS", "r1", "b1"}, {"LCS", "r1", "w1"},
		{"SPUBLISH", "c1", "x"}, {"SPUBLISH", "b1", "x"}, {"WATCH", "x"}, {"WATCH", "b1"}, {"UNWATCH"},
		{"SORT", "bl"}, {"SORT", "bl", "BY", "nosort"}, {"SORT", "bl", "BY", "x"}, {"SORT", "bl", "BY", "w*"},
		{"SORT", "bl", "GET", "#"}, {"SORT_RO", "bl", "GET", "w*"}, {"SORT", "bl", "STORE", "w10"}, {"SORT", "bl", "STORE", "r10"},
		{"SORT", "x"}, {"MEMORY", "USAGE", "x"}, {"CLIENT", "ID", "extra"}, {"GET"}, {"NOSUCH"},
	}
	for _, c := range cmds {
		q.Do(c...)
	}
	// DRYRUN answers the same checks for another user without running anything.
	for _, c := range cmds {
		p.Do(append([]any{"ACL", "DRYRUN", "v"}, c...)...)
	}
	// A user granted all keys for reading may SORT BY and GET.
	p.Do("ACL", "SETUSER", "sr", "on", ">pw", "%R~*", "+@all")
	sr := asUser(p, "sr")
	sr.Do("SORT", "bl", "BY", "w*", "GET", "#")
	sr.Do("SORT", "bl", "STORE", "dst")
	p.Do("ACL", "SETUSER", "ss", "on", ">pw", "~bl", "+sort", "(%R~* +sort_ro)")
	ss := asUser(p, "ss")
	ss.Do("SORT", "bl", "GET", "#")
	ss.Do("SORT_RO", "bl", "GET", "#")
	// Selectors: one selector allowing the command is enough; the error
	// reported is the most relevant one (channel over key over command).
	p.Do("ACL", "SETUSER", "sel", "on", ">pw", "resetchannels", "~a*", "+get", "(~b* +set)", "(&x +publish)")
	s := asUser(p, "sel")
	for _, c := range [][]any{{"GET", "a1"}, {"GET", "b1"}, {"SET", "b1", "v"}, {"SET", "a1", "v"}, {"PUBLISH", "x", "m"},
		{"PUBLISH", "y", "m"}, {"MSET", "a", "1"}, {"GET", "c"}} {
		s.Do(c...)
		p.Do(append([]any{"ACL", "DRYRUN", "sel"}, c...)...)
	}
	// Losing a permission applies to the next command; a deleted user's
	// clients are disconnected.
	p.Do("ACL", "SETUSER", "v", "-get")
	q.Do("GET", "r1")
	p.Do("ACL", "SETUSER", "v", "+get", "resetkeys")
	q.Do("GET", "r1")
	p.Do("CLIENT", "LIST", "ID", "0")
	p.Do("ACL", "DELUSER", "v")
	q.RawExpectClose([]byte{})
}

// TestACLDryRunKeySpecs runs ACL DRYRUN for every command Keyhive has with
// users that may only read, only write, or touch one key: the read/write
// needs of each key argument follow Redis's key specs.
func TestACLDryRunKeySpecs(t *testing.T) {
	p := difftest.StartIsolated74(t)
	for _, u := range [][]any{{"ro", "%R~*"}, {"wo", "%W~*"}, {"k1", "~k1"}, {"none", "resetkeys"}, {"rk", "%R~k1", "%W~k3"}} {
		p.Do(append(append([]any{"ACL", "SETUSER"}, u...), "+@all", "allchannels")...)
	}
	fill := []string{"k1", "1", "k3", "v4", "v5", "v6", "v7"}
	list := p.Keyhive().Do("COMMAND", "LIST")
	n := 0
	for _, e := range list.Elems {
		name := e.Str
		info := p.Keyhive().Do("COMMAND", "INFO", name)
		names := []string{name}
		for _, sub := range info.Elems[0].Elems[9].Elems {
			names = append(names, sub.Elems[0].Str)
		}
		for _, full := range names {
			if p.Redis().Do("COMMAND", "INFO", full).Elems[0].Null || newerInterface[full] {
				continue // a Redis 7.2 command Keyhive has (CLIENT SETINFO), or a newer interface
			}
			args := strings.Split(full, "|")
			ci := p.Keyhive().Do("COMMAND", "INFO", full).Elems[0]
			arity := int(ci.Elems[1].Int)
			want := arity
			if arity < 0 {
				want = max(-arity, len(args)+3)
			}
			for i := 0; len(args) < want; i++ {
				args = append(args, fill[i%len(fill)])
			}
			for _, u := range []string{"ro", "wo", "k1", "none", "rk"} {
				p.Do(append([]any{"ACL", "DRYRUN", u}, anys(args)...)...)
				n++
			}
		}
	}
	t.Logf("%d DRYRUN checks", n)
}

func TestACLChannels(t *testing.T) {
	p := difftest.StartIsolated74(t)
	p.Do("ACL", "SETUSER", "ps", "on", ">pw", "+@all", "~*", "resetchannels", "&news.*", "&exact")
	q := asUser(p, "ps")
	q.Do("PUBLISH", "news.a", "m")
	q.Do("PUBLISH", "other", "m")
	q.Do("PUBLISH", "exact", "m")
	q.Do("SPUBLISH", "news.b", "m")
	q.Do("SPUBLISH", "x", "m")
	q.Do("SUBSCRIBE", "other")
	q.Do("PSUBSCRIBE", "news.a*")
	q.Do("PSUBSCRIBE", "news.*")
	q.Do("PUNSUBSCRIBE")
	q.Do("SUBSCRIBE", "exact", "other")
	q.Do("SUBSCRIBE", "news.x")
	q.Do("UNSUBSCRIBE")
	q.Do("SSUBSCRIBE", "nope")
	q.Do("PUBSUB", "CHANNELS")
	for _, c := range [][]any{{"PUBLISH", "news.a", "m"}, {"PUBLISH", "other", "m"}, {"PSUBSCRIBE", "news.*"},
		{"PSUBSCRIBE", "news.?"}, {"SUBSCRIBE", "exact", "nope"}, {"SSUBSCRIBE", "news.1"}, {"UNSUBSCRIBE", "nope"}} {
		p.Do(append([]any{"ACL", "DRYRUN", "ps"}, c...)...)
	}
	// acl-pubsub-default is resetchannels in 7.0; allchannels applies to
	// users created (or reset) after the change.
	p.Do("ACL", "SETUSER", "before", "on", "nopass", "+@all")
	p.Do("CONFIG", "SET", "acl-pubsub-default", "allchannels")
	p.Do("ACL", "SETUSER", "after", "on", "nopass", "+@all")
	p.Do("ACL", "SETUSER", "resetafter", "reset", "(+get)")
	ruleChecker{t, p}.all()
	p.Do("CONFIG", "SET", "acl-pubsub-default", "resetchannels")
	p.Do("ACL", "DRYRUN", "before", "PUBLISH", "x", "m")
	p.Do("ACL", "DRYRUN", "after", "PUBLISH", "x", "m")

	// Subscribers that lose the right to a channel they listen to are
	// disconnected; others stay.
	sub := asUser(p, "ps")
	sub.Do("SUBSCRIBE", "news.1")
	pat := asUser(p, "ps")
	pat.Do("PSUBSCRIBE", "news.*")
	p.Do("ACL", "SETUSER", "ps", "&more")
	sub.Do("PING")
	pat.Do("PING")
	p.Do("ACL", "SETUSER", "ps", "resetchannels", "&news.1")
	sub.Do("PING")
	pat.RawExpectClose([]byte{})
	p.Do("ACL", "SETUSER", "ps", "resetchannels")
	sub.RawExpectClose([]byte{})
}

func TestACLMultiAndScripts(t *testing.T) {
	p := difftest.StartIsolated74(t)
	p.Do("ACL", "SETUSER", "m", "on", ">pw", "~b*", "&c*", "+@all", "-ping")
	q := asUser(p, "m")
	q.Do("MULTI")
	q.Do("GET", "x")
	q.Do("PING")
	q.Do("GET", "b")
	q.Do("EXEC")
	q.Do("MULTI")
	q.Do("GET", "b")
	q.Do("SET", "b2", "v")
	q.Do("EXEC")
	// Permissions lost while queued fail those commands at EXEC.
	q.Do("MULTI")
	q.Do("GET", "b")
	q.Do("SET", "b2", "v")
	q.Do("PUBLISH", "c1", "m")
	q.Do("INCR", "b3")
	p.Do("ACL", "SETUSER", "m", "resetkeys", "~b3", "-get", "resetchannels")
	q.Do("EXEC")
	p.Do("ACL", "SETUSER", "m", "~b*", "+get", "&c*")

	q.Do("EVAL", "return redis.call('get','x')", "0")
	q.Do("EVAL", "return redis.call('ping')", "0")
	q.Do("EVAL", "return redis.pcall('get','x')", "0")
	q.Do("EVAL", "return redis.pcall('ping')", "0")
	q.Do("EVAL", "return redis.call('get',KEYS[1])", "1", "x")
	q.Do("EVAL", "return redis.call('get',KEYS[1])", "1", "b1")
	q.Do("EVAL", "return redis.call('publish','dd','x')", "0")
	q.Do("EVAL", "return redis.call('publish','c1','x')", "0")
	q.Do("EVAL", "return redis.call('set','b1','v')", "0")
	q.Do("EVAL_RO", "return redis.call('set','x','v')", "0")
	q.Do("EVAL", "return redis.call('sort','b1','by','x*')", "0")
	q.Do("EVAL", "return redis.acl_check_cmd('get','x')", "0")
	q.Do("EVAL", "return redis.acl_check_cmd('get','b')", "0")
	q.Do("EVAL", "return redis.acl_check_cmd('ping')", "0")
	q.Do("EVAL", "return redis.acl_check_cmd('nosuch')", "0")
	q.Do("MULTI")
	q.Do("EVAL", "return redis.call('get','x')", "0")
	q.Do("EXEC")
	p.Do("ACL", "SETUSER", "m", "-eval")
	q.Do("EVAL", "return 1", "0")
	q.Do("FCALL", "nosuch", "0")
}

// aclLogCompare compares ACL LOG replies: age-seconds within a second,
// client-info on its user= field (the line's other fields are Keyhive's own),
// and the entry-id and timestamp fields Redis 7.2 added only on Keyhive.
func aclLogCompare(r, k difftest.Reply) error {
	if r.IsError() || k.IsError() || len(r.Elems) != len(k.Elems) {
		return difftest.Exact(r, k)
	}
	for i := range r.Elems {
		re, ke := r.Elems[i].Elems, k.Elems[i].Elems
		if len(ke) != len(re) {
			return fmt.Errorf("entry %d: %d fields, redis %d", i, len(ke)/2, len(re)/2)
		}
		for j := 0; j < len(re); j += 2 {
			name := re[j].Str
			if ke[j].Str != name {
				return fmt.Errorf("entry %d: field %q vs %q", i, name, ke[j].Str)
			}
			rv, kv := re[j+1], ke[j+1]
			switch name {
			case "age-seconds":
				rf, _ := strconv.ParseFloat(rv.Str, 64)
				kf, _ := strconv.ParseFloat(kv.Str, 64)
				if kf < 0 || kf-rf > 1 || rf-kf > 1 {
					return fmt.Errorf("entry %d: age-seconds %s vs %s", i, rv.Str, kv.Str)
				}
			case "client-info":
				if field(rv.Str, "user") != field(kv.Str, "user") || field(rv.Str, "cmd") != field(kv.Str, "cmd") {
					return fmt.Errorf("entry %d: client-info %q vs %q", i, rv.Str, kv.Str)
				}
			case "timestamp-created", "timestamp-last-updated":
				if kv.Kind != difftest.KindInt || kv.Int-rv.Int > 1000 || rv.Int-kv.Int > 1000 {
					return fmt.Errorf("entry %d: %s %s vs %s", i, name, rv, kv)
				}
			default:
				if !rv.Equal(kv) {
					return fmt.Errorf("entry %d: %s %s vs %s", i, name, rv, kv)
				}
			}
		}
	}
	return nil
}

func field(line, name string) string {
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, name+"="); ok {
			return v
		}
	}
	return ""
}

func TestACLLog(t *testing.T) {
	p := difftest.StartIsolated74(t)
	p.Do("ACL", "SETUSER", "l", "on", ">pw", "~b*", "&c*", "+@all", "-ping")
	p.Do("ACL", "LOG", "RESET")
	q := p.NewConn()
	q.Do("AUTH", "l", "wrong")
	q.Do("AUTH", "nouser", "x")
	q.Do("AUTH", "l", "wrong")
	q.Do("AUTH", "l", "pw")
	q.Do("PING")
	q.Do("PING")
	q.Do("GET", "x")
	q.Do("PUBLISH", "d", "m")
	q.Do("MULTI")
	q.Do("PING")
	q.Do("DISCARD")
	q.Do("EVAL", "return redis.pcall('get','y')", "0")
	q.Do("EVAL", "return redis.pcall('publish','z','m')", "0")
	q.Do("HELLO", "2", "AUTH", "l", "bad")
	p.DoCompare(aclLogCompare, "ACL", "LOG")
	p.DoCompare(aclLogCompare, "ACL", "LOG", "2")
	p.DoCompare(aclLogCompare, "ACL", "LOG", "0")
	p.DoCompare(aclLogCompare, "ACL", "LOG", "100")
	p.Do("CONFIG", "SET", "acllog-max-len", "3")
	q.Do("GET", "x1")
	p.DoCompare(aclLogCompare, "ACL", "LOG")
	p.Do("ACL", "LOG", "RESET")
	p.Do("ACL", "LOG")
	p.Proto(3)
	q.Do("GET", "x1")
	p.DoCompare(func(r, k difftest.Reply) error {
		if len(r.Elems) != 1 || len(k.Elems) != 1 || k.Elems[0].Kind != difftest.KindMap {
			return difftest.Exact(r, k)
		}
		return nil
	}, "ACL", "LOG")
}

func TestACLClients(t *testing.T) {
	p := difftest.StartIsolated74(t)
	p.Do("ACL", "SETUSER", "k", "on", ">pw", "+@all", "~*")
	a := asUser(p, "k")
	b := asUser(p, "k")
	r, k := p.DoDifferent("addresses and ids differ", "CLIENT", "LIST")
	count := func(list, user string) int {
		n := 0
		for _, l := range strings.Split(strings.TrimSpace(list), "\n") {
			if field(l, "user") == user {
				n++
			}
		}
		return n
	}
	if count(r.Str, "k") != 2 || count(k.Str, "k") != 2 {
		t.Errorf("CLIENT LIST users: redis %d, keyhive %d clients of k", count(r.Str, "k"), count(k.Str, "k"))
	}
	a.DoCompare(func(r, k difftest.Reply) error {
		if field(r.Str, "user") != field(k.Str, "user") {
			return fmt.Errorf("user= %q vs %q", field(r.Str, "user"), field(k.Str, "user"))
		}
		return nil
	}, "CLIENT", "INFO")
	p.Do("CLIENT", "KILL", "USER", "nouser")
	p.Do("CLIENT", "KILL", "USER", "k")
	a.RawExpectClose([]byte{})
	b.RawExpectClose([]byte{})
	// Deleting the user of the connection itself closes it after the reply.
	p.Do("ACL", "SETUSER", "self", "on", ">pw", "+@all")
	s := asUser(p, "self")
	s.Do("ACL", "DELUSER", "self")
	s.RawExpectClose([]byte{})
}

func TestACLFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "users.acl")
	content := "\nuser alice on >pw ~a* &c* +@read -keys\nuser default on nopass ~* &* +@all\nuser sel off (~x +get) (%R~y +@hash)\n"
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	p := difftest.StartIsolated74(t, "--aclfile", file)
	ruleChecker{t, p}.all()
	q := asUser(p, "alice")
	q.Do("GET", "a1")
	q.Do("GET", "b1")
	// Both servers write the same file; their descriptions only differ in rule order.
	p.Do("ACL", "SETUSER", "bob", "on", ">pw", "+get", "~b*")
	p.Do("ACL", "SAVE")
	p.Do("ACL", "DELUSER", "bob")
	p.Do("ACL", "LOAD")
	ruleChecker{t, p}.all()
	// A bad line makes LOAD change nothing.
	for _, bad := range []string{
		"user alice on +nosuch\n", "alice on\n", "user\n", "user a on\nuser a off\n", "user a (~x +get\n",
		"user a ~* ~b\n", "user a #abc\n", "user a on  >x\n", "user default off\nuser b &* &x\n",
	} {
		if err := os.WriteFile(file, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		p.Do("ACL", "LOAD")
	}
	ruleChecker{t, p}.all()
	// A file without the default user gives it Redis's defaults; a client
	// of a user the file redefines goes on with the new permissions.
	q2 := asUser(p, "alice")
	q2.Do("GET", "zz")
	os.WriteFile(file, []byte("user alice on >pw ~* +@all\n"), 0o644)
	p.Do("ACL", "LOAD")
	ruleChecker{t, p}.all()
	q2.Do("GET", "zz")
	os.Remove(file)
	p.DoCompare(func(r, k difftest.Reply) error {
		if !r.IsError() || !k.IsError() || !strings.HasPrefix(k.Str, "ERR Error loading ACLs, opening file") {
			return difftest.Exact(r, k)
		}
		return nil
	}, "ACL", "LOAD")
}

func TestACLConfigUsers(t *testing.T) {
	p := difftest.StartIsolated74(t, "--user", "cfg", "on", ">pw", "~c*", "+@all", "--user", "default", "on", "nopass", "~*", "&*", "+@all", "-keys", "--requirepass", "rp")
	ruleChecker{t, p}.all()
	q := asUser(p, "cfg")
	q.Do("GET", "c1")
	q.Do("GET", "d1")
}

// TestACLCategoriesMatchRedis: every command and subcommand Keyhive has is
// in the ACL categories Redis 7.0 puts it in (COMMAND INFO), since +@category
// rules and ACL CAT are built from them.
func TestACLCategoriesMatchRedis(t *testing.T) {
	p := difftest.Start74(t)
	redis := commandInfoField(p.Redis().Do("COMMAND", "INFO"), 6)
	keyhive := commandInfoField(p.Keyhive().Do("COMMAND", "INFO"), 6)
	checked := 0
	for name, cats := range keyhive {
		want, ok := redis[name]
		if !ok {
			continue // a Redis 7.2 subcommand (CLIENT SETINFO, CLIENT NO-TOUCH)
		}
		got, exp := []string{}, []string{}
		for _, c := range cats.Elems {
			got = append(got, c.Str)
		}
		for _, c := range want.Elems {
			exp = append(exp, c.Str)
		}
		slices.Sort(got)
		slices.Sort(exp)
		if !slices.Equal(got, exp) {
			t.Errorf("%s: categories %v, redis %v", name, got, exp)
		}
		checked++
	}
	if checked < 200 {
		t.Errorf("only %d commands compared", checked)
	}
}
