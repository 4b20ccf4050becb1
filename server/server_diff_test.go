package server_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// Differential tests of the server commands: TIME INFO CONFIG COMMAND DEBUG,
// and the errors for unknown commands, subcommands and wrong arity.

func TestTime(t *testing.T) {
	p := difftest.Start(t)
	r, k := p.DoDifferent("the clocks are read at different instants", "TIME")
	if k.Kind != difftest.KindArray || len(k.Elems) != 2 || r.Kind != k.Kind || len(r.Elems) != 2 {
		t.Fatalf("TIME: %q vs %q", r.Raw, k.Raw)
	}
	var vals [2][2]int64
	for i, reply := range []difftest.Reply{r, k} {
		for j, e := range reply.Elems {
			n, err := strconv.ParseInt(e.Str, 10, 64)
			if e.Kind != difftest.KindBulk || err != nil || n < 0 {
				t.Fatalf("TIME element %d: %q", j, e.Raw)
			}
			vals[i][j] = n
		}
	}
	if vals[1][1] >= 1e6 {
		t.Errorf("keyhive TIME microseconds %d >= 1e6", vals[1][1])
	}
	if d := vals[0][0] - vals[1][0]; d < -2 || d > 2 {
		t.Errorf("TIME seconds differ by %d", d)
	}
	p.Do("TIME", "x")
	p.Proto(3)
	p.DoDifferent("the clocks are read at different instants", "TIME")
}

// infoSections returns the "# Name" headers of an INFO reply, in order.
func infoSections(s string) []string {
	var out []string
	for _, line := range strings.Split(s, "\r\n") {
		if strings.HasPrefix(line, "# ") {
			out = append(out, line)
		}
	}
	return out
}

// infoFieldSet returns the field names of an INFO reply.
func infoFieldSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, line := range strings.Split(s, "\r\n") {
		if name, _, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") {
			m[name] = true
		}
	}
	return m
}

// sectionsCompare compares INFO replies by reply type and section headers,
// less Redis 8.0's threads and keysizes sections, which the 7.x oracles
// lack (TestInfoThreads and TestInfoKeysizes check where they show).
func sectionsCompare(r, k difftest.Reply) error {
	if r.Kind != k.Kind || r.IsError() || k.IsError() {
		return difftest.Exact(r, k)
	}
	rs := infoSections(r.Str)
	ks := slices.DeleteFunc(infoSections(k.Str), func(s string) bool { return s == "# Threads" || s == "# Keysizes" })
	if strings.Join(rs, ",") != strings.Join(ks, ",") {
		return fmt.Errorf("sections %v vs %v", rs, ks)
	}
	if strings.HasSuffix(r.Str, "\r\n") != strings.HasSuffix(k.Str, "\r\n") {
		return fmt.Errorf("trailing CRLF differs")
	}
	return nil
}

func TestInfoSections(t *testing.T) {
	p := difftest.Start(t)
	p.Do("SET", "k", "v") // a non-empty keyspace section
	for _, args := range [][]any{
		{"INFO"}, {"INFO", "default"}, {"INFO", "all"}, {"INFO", "everything"},
		{"INFO", "server"}, {"INFO", "SERVER"}, {"info", "Clients"}, {"INFO", "memory"},
		{"INFO", "persistence"}, {"INFO", "stats"}, {"INFO", "replication"}, {"INFO", "cpu"},
		{"INFO", "modules"}, {"INFO", "errorstats"}, {"INFO", "cluster"}, {"INFO", "keyspace"},
		{"INFO", "commandstats"}, {"INFO", "server", "clients"}, {"INFO", "keyspace", "server"},
		{"INFO", "server", "server"}, {"INFO", "default", "commandstats"},
	} {
		p.DoCompare(sectionsCompare, args...)
	}
	p.Do("INFO", "nosuchsection")
	p.Do("INFO", "nosuch", "other")
	p.Proto(3)
	p.DoCompare(sectionsCompare, "INFO", "server")
	p.Do("INFO", "nosuchsection")
}

// TestInfoFieldNames checks that every field Keyhive reports (except its own
// keyhive_* fields) is one redis reports in the same section.
func TestInfoFieldNames(t *testing.T) {
	// Isolated and reset: command statistics live in the package-wide command
	// table, so every in-process Keyhive shares them (see the report).
	p := difftest.StartIsolated(t)
	p.Do("CONFIG", "RESETSTAT")
	p.Do("SET", "k", "v")
	p.Do("GET", "k")
	for _, section := range []string{"server", "clients", "memory", "persistence", "stats", "replication", "cpu", "cluster", "keyspace", "commandstats"} {
		r, k := p.DoDifferent("INFO values differ; the field names are compared", "INFO", section)
		rf, kf := infoFieldSet(r.Str), infoFieldSet(k.Str)
		if len(kf) == 0 {
			t.Errorf("INFO %s: keyhive reports no fields", section)
		}
		for name := range kf {
			if !rf[name] && !strings.HasPrefix(name, "keyhive_") {
				t.Errorf("INFO %s: keyhive field %q is not a redis field", section, name)
			}
		}
	}
	// Fields clients and tools commonly read.
	_, k := p.DoDifferent("INFO values differ", "INFO")
	kf := infoFieldSet(k.Str)
	for _, name := range []string{"redis_version", "redis_mode", "os", "arch_bits", "process_id", "run_id", "tcp_port",
		"uptime_in_seconds", "uptime_in_days", "hz", "connected_clients", "maxclients", "blocked_clients", "used_memory",
		"used_memory_human", "used_memory_rss", "used_memory_peak", "maxmemory", "maxmemory_policy", "mem_fragmentation_ratio",
		"loading", "rdb_changes_since_last_save", "total_connections_received", "total_commands_processed",
		"instantaneous_ops_per_sec", "total_net_input_bytes", "total_net_output_bytes", "rejected_connections",
		"expired_keys", "evicted_keys", "keyspace_hits", "keyspace_misses", "total_error_replies", "role",
		"connected_slaves", "master_replid", "master_repl_offset", "used_cpu_sys", "used_cpu_user", "cluster_enabled", "db0"} {
		if !kf[name] {
			t.Errorf("keyhive INFO lacks %s", name)
		}
	}
}

func TestInfoKeyspaceExact(t *testing.T) {
	p := difftest.StartIsolated74(t) // Redis 7.4's subexpiry field
	p.Do("INFO", "keyspace")
	// avg_ttl is sampled by active expiry; without it both report 0.
	p.Do("DEBUG", "SET-ACTIVE-EXPIRE", "0")
	p.Do("SET", "a", "1")
	p.Do("SET", "b", "2", "EX", "1000")
	p.Do("SET", "c", "3")
	p.Do("SELECT", "3")
	p.Do("SET", "x", "1", "PX", "500000")
	p.Do("SET", "y", "1", "PX", "500000")
	p.Do("SELECT", "15")
	p.Do("SET", "z", "1")
	p.Do("INFO", "keyspace")
	p.Do("DEL", "z")
	p.Do("SELECT", "0")
	p.Do("PERSIST", "b")
	p.Do("INFO", "keyspace")
	p.Do("FLUSHALL")
	p.Do("INFO", "keyspace")
}

// cmdstatCompare compares INFO commandstats lines: the command names, calls,
// rejected_calls and failed_calls must match; the timings may not, and the
// line order follows each server's hash table.
func cmdstatCompare(r, k difftest.Reply) error {
	if r.Kind != k.Kind || r.IsError() || k.IsError() {
		return difftest.Exact(r, k)
	}
	norm := func(s string) string {
		var out []string
		for _, line := range strings.Split(s, "\r\n") {
			name, vals, ok := strings.Cut(line, ":")
			if !ok {
				out = append(out, line)
				continue
			}
			var kept []string
			for _, kv := range strings.Split(vals, ",") {
				key, v, _ := strings.Cut(kv, "=")
				if key == "usec" || key == "usec_per_call" {
					v = "*"
				}
				kept = append(kept, key+"="+v)
			}
			out = append(out, name+":"+strings.Join(kept, ","))
		}
		slices.Sort(out)
		return strings.Join(out, "\n")
	}
	if rn, kn := norm(r.Str), norm(k.Str); rn != kn {
		return fmt.Errorf("commandstats differ:\n%s\nvs\n%s", rn, kn)
	}
	return nil
}

func TestInfoCommandstats(t *testing.T) {
	p := difftest.StartIsolated(t)
	p.Do("CONFIG", "RESETSTAT")
	p.DoCompare(cmdstatCompare, "INFO", "commandstats")
	p.Do("SET", "k", "v")
	p.Do("GET", "k")
	p.Do("GET", "k")
	p.Do("GET")              // rejected: arity
	p.Do("INCR", "k")        // failed: not an integer
	p.Do("NOSUCHCOMMAND")    // not counted under any command
	p.Do("CONFIG", "GET")    // rejected subcommand
	p.Do("CONFIG", "NOSUCH") // rejected under the container
	p.Do("CLIENT", "SETNAME", "x")
	p.DoCompare(cmdstatCompare, "INFO", "commandstats")
	p.Do("CONFIG", "RESETSTAT")
	p.DoCompare(cmdstatCompare, "INFO", "commandstats")
}

func TestConfigGet(t *testing.T) {
	p := difftest.Start(t)
	for _, args := range [][]any{
		{"maxmemory"}, {"MAXMEMORY"}, {"maxmemory*"}, {"maxmemory-policy"}, {"hz"}, {"databases"},
		{"timeout"}, {"appendonly"}, {"save"}, {"notify-keyspace-events"}, {"maxclients"},
		{"proto-max-bulk-len"}, {"client-query-buffer-limit"}, {"requirepass"}, {"tcp-keepalive"},
		{"nosuchparam"}, {"nosuch*"}, {"hz", "maxmemory"}, {"hz", "hz"}, {"hz", "h?"},
		{"maxmemory*", "maxmemory-policy"}, {"hz", "nosuch", "databases"},
		{"lazyfree-lazy-*"}, {"slave-read-only"}, {"replica-read-only"},
	} {
		p.DoUnorderedPairs(append([]any{"CONFIG", "GET"}, args...)...)
	}
	p.Do("CONFIG", "GET")
	p.Proto(3)
	p.DoUnordered("CONFIG", "GET", "maxmemory*")
	p.DoUnordered("CONFIG", "GET", "nosuch")
}

func TestConfigSet(t *testing.T) {
	p := difftest.StartIsolated(t)
	p.Do("CONFIG", "SET", "maxmemory", "100mb")
	p.Do("CONFIG", "GET", "maxmemory")
	p.Do("CONFIG", "SET", "maxmemory", "0")
	p.Do("CONFIG", "SET", "hz", "20")
	p.Do("CONFIG", "GET", "hz")
	p.Do("CONFIG", "SET", "HZ", "10")
	p.Do("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
	p.Do("CONFIG", "GET", "maxmemory-policy")
	p.Do("CONFIG", "SET", "maxmemory-policy", "noeviction")
	// Bad values.
	p.Do("CONFIG", "SET", "maxmemory", "abc")
	p.Do("CONFIG", "SET", "hz", "abc")
	p.Do("CONFIG", "SET", "hz", "")
	p.Do("CONFIG", "SET", "maxmemory-policy", "foo")
	p.Do("CONFIG", "SET", "appendonly", "maybe")
	p.Do("CONFIG", "SET", "timeout", "-1")
	// Unknown and immutable parameters.
	p.Do("CONFIG", "SET", "nosuchparam", "1")
	p.Do("CONFIG", "SET", "databases", "5")
	p.Do("CONFIG", "SET", "daemonize", "yes")
	// Arity and pairing.
	p.Do("CONFIG", "SET")
	p.Do("CONFIG", "SET", "hz")
	p.Do("CONFIG", "SET", "hz", "5", "maxmemory")
	// Several parameters are applied atomically: one bad value changes none.
	p.Do("CONFIG", "SET", "maxmemory", "10mb", "hz", "abc")
	p.Do("CONFIG", "GET", "maxmemory")
	p.Do("CONFIG", "SET", "maxmemory", "10mb", "nosuch", "1")
	p.Do("CONFIG", "SET", "maxmemory", "10mb", "databases", "3")
	p.Do("CONFIG", "SET", "hz", "5", "hz", "6")
	p.DoUnorderedPairs("CONFIG", "GET", "maxmemory", "hz")
	p.Do("CONFIG", "SET", "maxmemory", "10mb", "hz", "15")
	p.DoUnorderedPairs("CONFIG", "GET", "maxmemory", "hz")
}

func TestConfigResetstat(t *testing.T) {
	p := difftest.StartIsolated(t)
	p.Do("SET", "k", "v")
	p.Do("GET", "k")
	p.Do("GET", "nokey")
	p.Do("CONFIG", "RESETSTAT", "x")
	p.Do("CONFIG", "RESETSTAT")
	p.Do("GET", "k")
	p.Do("GET", "k")
	p.Do("GET", "nokey")
	p.Do("NOSUCH")
	stats := func(c *difftest.Client) map[string]string {
		m := map[string]string{}
		for _, line := range strings.Split(c.Do("INFO", "stats").Str, "\r\n") {
			if k, v, ok := strings.Cut(line, ":"); ok {
				m[k] = v
			}
		}
		return m
	}
	rs, ks := stats(p.Redis()), stats(p.Keyhive())
	for _, f := range []string{"keyspace_hits", "keyspace_misses", "total_error_replies", "expired_keys", "evicted_keys", "rejected_connections", "total_connections_received"} {
		if rs[f] != ks[f] {
			t.Errorf("after CONFIG RESETSTAT, %s: redis %q, keyhive %q", f, rs[f], ks[f])
		}
	}
	p.Do("CONFIG", "HELP", "x")
}

// TestCommandTips: every command and subcommand Keyhive has carries Redis
// 7.0's tips, in its order.
func TestCommandTips(t *testing.T) {
	p := difftest.Start74(t)
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		redis := commandInfoField(p.Redis().Do("COMMAND", "INFO"), 7)
		keyhive := commandInfoField(p.Keyhive().Do("COMMAND", "INFO"), 7)
		checked := 0
		for name, tips := range keyhive {
			if want, ok := redis[name]; ok { // else a Redis 7.2 subcommand (CLIENT SETINFO, CLIENT NO-TOUCH)
				if !tips.Equal(want) {
					t.Errorf("RESP%d %s: tips %s, redis %s", proto, name, tips, want)
				}
				checked++
			}
		}
		if checked < 200 {
			t.Errorf("only %d commands compared", checked)
		}
	}
}

func TestCommandInfo(t *testing.T) {
	p := difftest.Start74(t)
	p.DoCompare(commandInfoCompare, "COMMAND", "INFO", "get")
	p.DoCompare(commandInfoCompare, "COMMAND", "INFO", "GET", "set", "config|get", "CONFIG|SET", "nosuch", "config|nosuch", "get|x")
	// The commands of this package's connection and server files.
	for _, name := range []string{"ping", "echo", "quit", "reset", "hello", "auth", "select", "client",
		"client|id", "client|setname", "client|getname", "client|list", "client|info", "client|kill",
		"client|reply", "client|no-evict", "client|help", "time", "info", "shutdown", "config",
		"config|resetstat", "config|rewrite", "config|help", "debug", "command", "command|count",
		"command|info", "command|docs", "command|list", "command|getkeys", "command|getkeysandflags",
		"command|help", "mset", "del", "mget"} {
		p.DoCompare(commandInfoCompare, "COMMAND", "INFO", name)
	}
	p.Proto(3)
	p.DoCompare(commandInfoCompare, "COMMAND", "INFO", "get", "set", "config|get", "nosuch")
}

func TestCommandCountListGetkeys(t *testing.T) {
	p := difftest.Start74(t)
	// TestCommandListCoverage checks the names themselves.
	r, k := p.DoDifferent("Keyhive lacks replication's and cluster's commands and adds Redis 7.2-8.x's", "COMMAND", "COUNT")
	if k.Kind != difftest.KindInt || k.Int-redis8ModuleCommands()-redis8CoreCommands() < r.Int-20 || k.Int-redis8ModuleCommands()-redis8CoreCommands() > r.Int+30 {
		t.Errorf("COMMAND COUNT: redis %s, keyhive %s", r, k)
	}
	p.Do("COMMAND", "COUNT", "x")

	for _, pat := range []string{"config*", "CONFIG|*", "ech?", "*|resetstat", "nosuch*", "[pq]ing", "getrange"} {
		p.DoUnordered("COMMAND", "LIST", "FILTERBY", "PATTERN", pat)
	}
	p.Do("COMMAND", "LIST", "FILTERBY")
	p.Do("COMMAND", "LIST", "FILTERBY", "PATTERN")
	p.Do("COMMAND", "LIST", "FILTERBY", "nosuch", "x")
	p.Do("COMMAND", "LIST", "FILTERBY", "PATTERN", "a", "b")
	p.Do("COMMAND", "LIST", "foo")
	p.Do("COMMAND", "LIST", "FILTERBY", "ACLCAT", "nosuchcategory")
	p.Do("COMMAND", "LIST", "FILTERBY", "MODULE", "nosuchmodule")
	// Every name Keyhive lists is one redis lists.
	r, k = p.DoDifferent("Keyhive implements fewer commands than Redis", "COMMAND", "LIST")
	have := map[string]bool{}
	for _, e := range r.Elems {
		have[e.Str] = true
	}
	for _, e := range k.Elems {
		if !have[e.Str] && !sinceAfter70(e.Str) && !keyhiveOnly(e.Str) { // NAMESPACE is Keyhive's own
			t.Errorf("COMMAND LIST: keyhive lists %q, redis does not", e.Str)
		}
	}

	for _, args := range [][]any{
		{"get", "k"}, {"set", "k", "v"}, {"set", "k", "v", "EX", "10"}, {"mset", "a", "1", "b", "2"},
		{"mset", "a", "1", "b"}, {"mget", "a", "b", "c"}, {"del", "a", "b"}, {"copy", "a", "b", "DB", "1"},
		{"object", "encoding", "k"}, {"rename", "a", "b"}, {"GET", "k"},
		{"config", "get", "x"}, {"ping", "x"}, {"nosuch", "a"}, {"object", "nosuch", "k"},
		{"get", "a", "b"}, {"set", "k"}, {"config"},
	} {
		p.Do(append([]any{"COMMAND", "GETKEYS"}, args...)...)
	}
	p.Do("COMMAND", "GETKEYS")
	p.Do("COMMAND", "GETKEYS", "get")
	p.Do("COMMAND", "GETKEYS", "ping")
	p.Do("COMMAND", "NOSUCH")
}

func TestDebug(t *testing.T) {
	p := difftest.StartIsolated(t)
	p.Do("DEBUG")
	p.Do("DEBUG", "nosuch")
	p.Do("debug", "NoSuch", "a", "b")
	p.Do("DEBUG", "SLEEP")
	p.Do("DEBUG", "SLEEP", "0")
	p.Do("DEBUG", "SLEEP", "0.01")
	p.Do("DEBUG", "SLEEP", "abc") // strtod: not a number sleeps 0
	p.Do("DEBUG", "SLEEP", "0", "1")
	p.Do("DEBUG", "SET-ACTIVE-EXPIRE")
	p.Do("DEBUG", "SET-ACTIVE-EXPIRE", "1", "2")
	p.Do("DEBUG", "SET-ACTIVE-EXPIRE", "abc") // atoi: 0
	p.Do("DEBUG", "set-active-expire", "1")
	p.Do("DEBUG", "SET-ACTIVE-EXPIRE", "0")

	// With active expiry off, an expired key stays counted until touched.
	p.Do("SET", "k", "v", "PX", "1")
	time.Sleep(250 * time.Millisecond)
	p.Do("DBSIZE")
	p.Do("GET", "k")
	p.Do("DBSIZE")

	// Back on, expired keys go away without being touched.
	p.Do("SET", "k", "v", "PX", "1")
	p.Do("DEBUG", "SET-ACTIVE-EXPIRE", "1")
	deadline := time.Now().Add(3 * time.Second)
	for p.Keyhive().Do("DBSIZE").Int != 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	for p.Redis().Do("DBSIZE").Int != 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	p.Do("DBSIZE")
	r, k := p.DoDifferent("Keyhive lists the DEBUG subcommands it implements", "DEBUG", "HELP")
	// The last line is 7.2's "Print this help." (TestHelpTexts).
	if k.Kind != difftest.KindArray || len(k.Elems) < 3 || !k.Elems[0].Equal(r.Elems[0]) || k.Elems[len(k.Elems)-1].Str != "    Print this help." {
		t.Errorf("DEBUG HELP layout:\n\tredis:   %q\n\tkeyhive: %q", r.Raw, k.Raw)
	}
}

func TestCommandUnknownErrors(t *testing.T) {
	p := difftest.Start(t)
	long := strings.Repeat("x", 200)
	p.Do("NOSUCH")
	p.Do("nosuch", "a", "b", "c")
	p.Do("NoSuch", "")
	p.Do(long)
	p.Do(long, long)
	p.Do("nosuch", strings.Repeat("a", 126), "b")
	p.Do("nosuch", strings.Repeat("a", 125), "bcd", "efg")
	p.Do("nosuch", strings.Repeat("a", 124), "bcd")
	many := []any{"nosuch"}
	for i := range 100 {
		many = append(many, fmt.Sprintf("arg%d", i))
	}
	p.Do(many...)
	p.Do("no\r\nsuch", "a\nb", "c\rd")
	p.Do("nosuch", "a\x00b", "c")
	p.Do("nos\x00uch", "x")
	p.Do("", "x")
	// Unknown subcommands.
	p.Do("CONFIG", "NOSUCH")
	p.Do("config", "nosuch", "a", "b")
	p.Do("Config", "NoSuch")
	p.Do("CONFIG", long)
	p.Do("CONFIG", "")
	p.Do("CONFIG", "a\x00b")
	p.Do("CLIENT", "nosuch")
	p.Do("COMMAND", "NOSUCH", "x")
	p.Do("OBJECT", "nosuch", "k")
	// Wrong arity: the full name of a subcommand.
	p.Do("CONFIG")
	p.Do("CONFIG", "GET")
	p.Do("config", "set", "x")
	p.Do("CONFIG", "RESETSTAT", "x")
	p.Do("CONFIG", "HELP", "x")
	p.Do("CLIENT", "SETNAME")
	p.Do("CLIENT", "GETNAME", "x")
	p.Do("COMMAND", "COUNT", "x")
	p.Do("COMMAND", "GETKEYS")
	p.Do("OBJECT")
	p.Do("OBJECT", "ENCODING")
	p.Do("GET")
	p.Do("SET", "k")
	p.Do("ECHO")
	p.Do("SELECT")
	p.Proto(3)
	p.Do("NOSUCH", "a")
	p.Do("CONFIG", "GET")
}

// TestRole: ROLE of a master without replicas, from a client, inside MULTI
// and refused from a script (noscript).
func TestRole(t *testing.T) {
	p := difftest.StartIsolated(t)
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		p.Do("ROLE")
		p.Do("ROLE", "extra")
		p.Do("MULTI")
		p.Do("ROLE")
		p.Do("EXEC")
		p.Do("EVAL", "return redis.pcall('role')", "0")
	}
}

// TestModule: MODULE with no module loaded, refused by enable-module-command
// as in Redis, and failing to load when allowed.
func TestModule(t *testing.T) {
	p := difftest.StartIsolated(t)
	allowed := difftest.StartIsolated(t, "--enable-module-command", "yes")
	for _, proto := range []int{2, 3} {
		for _, q := range []*difftest.Pair{p, allowed} {
			q.Proto(proto)
			q.Do("MODULE", "LIST")
			q.Do("MODULE", "LOAD", "/nonexistent/module.so", "arg")
			q.Do("MODULE", "LOADEX", "/nonexistent/module.so", "CONFIG", "name", "value", "ARGS", "a")
			q.Do("MODULE", "UNLOAD", "nosuchmodule")
			q.Do("MODULE", "NOSUCH")
			q.Do("MODULE")
			q.Do("MODULE", "LIST", "extra")
			q.Do("EVAL", "return redis.pcall('module', 'list')", "0")
		}
	}
}

// TestHotkeys: HOTKEYS (Redis 8.6), as https://redis.io/docs/latest/commands/hotkeys/
// and its subcommands' pages document it, with the error texts of Redis's
// hotkeys.c: a session charges each command's CPU time and bytes to its
// keys; GET lists the heaviest keys per metric, and the session's figures.
func TestHotkeys(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.StartIsolated(t)
	k := p.Keyhive()
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		null := "$-1\r\n"
		if proto == 3 {
			null = "_\r\n"
		}
		docCase(t, p, null, "HOTKEYS", "GET") // no session yet
		docCase(t, p, null, "HOTKEYS", "STOP")
		for want, args := range map[string][]any{
			"-ERR METRICS parameter is required\r\n":                                {"HOTKEYS", "START"},
			"-ERR METRICS count must be > 0 and <= 2\r\n":                           {"HOTKEYS", "START", "METRICS", "3", "CPU"},
			"-ERR METRICS count does not match number of metric types provided\r\n": {"HOTKEYS", "START", "METRICS", "2", "CPU"},
			"-ERR METRICS no valid metrics passed. Supported: CPU|NET\r\n":          {"HOTKEYS", "START", "METRICS", "1", "RAM"},
			"-ERR METRICS CPU defined more than once!\r\n":                          {"HOTKEYS", "START", "METRICS", "2", "CPU", "cpu"},
			"-ERR COUNT must be between 1 and 64\r\n":                               {"HOTKEYS", "START", "METRICS", "1", "NET", "COUNT", "65"},
			"-ERR DURATION must be between 1 and 1000000\r\n":                       {"HOTKEYS", "START", "METRICS", "1", "NET", "DURATION", "0"},
			"-ERR SAMPLE ratio must be positive\r\n":                                {"HOTKEYS", "START", "METRICS", "1", "NET", "SAMPLE", "x"},
			"-ERR syntax error\r\n":                                                 {"HOTKEYS", "START", "METRICS", "1", "NET", "COUNT"},
			"-ERR SLOTS parameter cannot be used in non-cluster mode\r\n":           {"HOTKEYS", "START", "METRICS", "1", "NET", "SLOTS", "1", "0"},
			"-ERR wrong number of arguments for 'hotkeys|get' command\r\n":          {"HOTKEYS", "GET", "x"},
		} {
			docCase(t, p, want, args...)
		}
		docCase(t, p, "+OK\r\n", "HOTKEYS", "START", "METRICS", "2", "CPU", "NET", "COUNT", "2")
		docCase(t, p, "-ERR hotkey tracking session already in progress\r\n", "HOTKEYS", "START", "METRICS", "1", "CPU")
		docCase(t, p, "-ERR hotkey tracking session in progress, stop tracking first\r\n", "HOTKEYS", "RESET")
		for range 20 {
			k.Do("SET", "hot", strings.Repeat("v", 1000))
		}
		k.Do("SET", "warm", "v")
		k.Do("MSET", "warm", "v", "cold", "v")
		k.Do("MULTI")
		k.Do("SET", "hidden", strings.Repeat("v", 100000)) // inside EXEC: not tracked
		k.Do("EXEC")
		if info := k.Do("INFO", "hotkeys").Str; !strings.Contains(info, "# Hotkeys\r\ntracking_active:1\r\nused_memory:") || !strings.Contains(info, "cpu_time:") {
			t.Errorf("INFO hotkeys while tracking: %q", info)
		}
		docCase(t, p, "+OK\r\n", "HOTKEYS", "STOP")
		docCase(t, p, null, "HOTKEYS", "STOP")
		r := k.Do("HOTKEYS", "GET")
		if len(r.Elems) != 1 || len(r.Elems[0].Elems) != 24 {
			t.Fatalf("HOTKEYS GET: %s", r)
		}
		f := fieldsOf(r.Elems[0])
		if f["tracking-active"].Int != 0 || f["sample-ratio"].Int != 1 || f["selected-slots"].String() == "" {
			t.Errorf("HOTKEYS GET: %s", r)
		}
		net := f["by-net-bytes"]
		// 20 SETs of 1000 bytes and their replies: hot first, then warm; K=2.
		if len(net.Elems) != 4 || net.Elems[0].Str != "hot" || net.Elems[2].Str != "warm" || net.Elems[1].Int < 20*1000 {
			t.Errorf("by-net-bytes: %s", net)
		}
		if cpu := f["by-cpu-time-us"]; len(cpu.Elems) == 0 || len(cpu.Elems)%2 != 0 || len(cpu.Elems) > 4 {
			t.Errorf("by-cpu-time-us: %s", cpu)
		}
		if f["total-net-bytes"].Int < net.Elems[1].Int || f["net-bytes-all-commands-all-slots"].Int < f["total-net-bytes"].Int {
			t.Errorf("HOTKEYS GET totals: %s", r)
		}
		for _, name := range []string{"collection-start-time-unix-ms", "collection-duration-ms", "all-commands-all-slots-us", "total-cpu-time-user-ms", "total-cpu-time-sys-ms"} {
			if f[name].Kind != difftest.KindInt {
				t.Errorf("HOTKEYS GET %s: %s", name, f[name])
			}
		}
		docCase(t, p, "+OK\r\n", "HOTKEYS", "RESET")
		docCase(t, p, null, "HOTKEYS", "GET")
		// One metric: only its fields; DURATION ends the session by itself.
		docCase(t, p, "+OK\r\n", "HOTKEYS", "START", "METRICS", "1", "NET", "DURATION", "1", "SAMPLE", "1")
		k.Do("GET", "hot")
		time.Sleep(1100 * time.Millisecond)
		k.Do("GET", "late")
		r = k.Do("HOTKEYS", "GET")
		f = fieldsOf(r.Elems[0])
		if len(r.Elems[0].Elems) != 18 || f["tracking-active"].Int != 0 || f["collection-duration-ms"].Int != 1000 ||
			len(f["by-net-bytes"].Elems) != 2 || f["by-net-bytes"].Elems[0].Str != "hot" {
			t.Errorf("HOTKEYS GET after DURATION 1: %s", r)
		}
		docCase(t, p, "+OK\r\n", "HOTKEYS", "RESET")
	}
	docCase(t, p, "-ERR This Redis command is not allowed from script script: 45c2662542707537aa24bb6fc42cd747318affb6, on @user_script:1.\r\n", "EVAL", "return redis.call('HOTKEYS', 'GET')", "0")
	if r := k.Do("HOTKEYS", "HELP"); len(r.Elems) < 5 {
		t.Errorf("HOTKEYS HELP: %s", r)
	}
}

// TestConfigLoadingEventsInterval: loading-process-events-interval-bytes,
// a directive of Redis's own test configurations, is taken from the command
// line and by CONFIG SET with Redis's bounds, and shown only when named.
func TestConfigLoadingEventsInterval(t *testing.T) {
	p := difftest.StartIsolated(t, "--loading-process-events-interval-bytes", "1048576")
	p.DoUnorderedPairs("CONFIG", "GET", "loading-process-events-interval-bytes")
	p.Do("CONFIG", "SET", "loading-process-events-interval-bytes", "4096")
	p.DoUnorderedPairs("CONFIG", "GET", "loading-process-events-interval-bytes")
	p.Do("CONFIG", "SET", "loading-process-events-interval-bytes", "1023")
	p.Do("CONFIG", "SET", "loading-process-events-interval-bytes", "abc")
	p.DoUnorderedPairs("CONFIG", "GET", "loading-process-*")
}
