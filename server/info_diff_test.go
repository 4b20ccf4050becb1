package server_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// infoFieldOrder parses an INFO reply into its section headers and field
// names, in order, leaving out the per-command and per-error lines and
// the databases' (their presence follows the commands run).
func infoFieldOrder(r difftest.Reply) []string {
	var out []string
	perItem := regexp.MustCompile(`^(cmdstat_|errorstat_|latency_percentiles_usec_|db\d+$|db\d+_distrib_|io_thread_\d+$)`)
	for _, line := range strings.Split(r.Str, "\r\n") {
		name, _, _ := strings.Cut(line, ":")
		if name == "" || perItem.MatchString(name) {
			continue
		}
		out = append(out, name)
	}
	return out
}

// keyhiveOnlyFields are INFO fields the 7.x oracles do not have: the Go
// release Keyhive was built with, its own version and commit, the
// collector's cost, which its memory benchmark reads, and Redis 8.0's
// threads and keysizes sections (TestInfoThreads and TestInfoKeysizes
// check their lines).
var keyhiveOnlyFields = []string{
	"keyhive_go_version", "keyhive_version", "keyhive_git_sha1", "keyhive_gc_cycles", "keyhive_gc_pause_total_us",
	"keyhive_gc_cpu_percent", "keyhive_gc_cpu_seconds", "keyhive_process_cpu_seconds", "# Threads", "# Keysizes",
}

// sameInfoFields compares two INFO replies' sections and field names,
// in order, less Keyhive's own fields.
func sameInfoFields(r, k difftest.Reply) error {
	if r.IsError() || k.IsError() {
		return difftest.Exact(r, k)
	}
	rf := infoFieldOrder(r)
	kf := slices.DeleteFunc(infoFieldOrder(k), func(f string) bool { return slices.Contains(keyhiveOnlyFields, f) })
	if !slices.Equal(rf, kf) {
		return fmt.Errorf("fields differ:\nredis   %v\nkeyhive %v", rf, kf)
	}
	return nil
}

// TestInfoAllFieldNamesInOrder: INFO ALL, EVERYTHING, the default sections and each
// section alone have Redis 7.0's sections and fields in Redis's order
// (values are each server's own), in RESP2 and RESP3.
func TestInfoAllFieldNamesInOrder(t *testing.T) {
	p := difftest.Start(t)
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		p.DoCompare(sameInfoFields, "INFO", "ALL")
		p.DoCompare(sameInfoFields, "INFO", "EVERYTHING")
		p.DoCompare(sameInfoFields, "INFO")
		for _, sec := range []string{"server", "clients", "memory", "persistence", "stats", "replication",
			"cpu", "modules", "commandstats", "errorstats", "latencystats", "cluster", "keyspace"} {
			p.DoCompare(sameInfoFields, "INFO", sec)
		}
	}
}

// TestInfoErrorstats: every error reply is counted under its code, as
// Redis counts it: a handler's error, unknown commands and subcommands,
// wrong arity, refusals inside MULTI and the EXECABORT, errors of a
// script's redis.call (once, not again when the script relays them), a
// script's own error reply; commandstats' failed and rejected calls agree,
// and CONFIG RESETSTAT clears them all.
func TestInfoErrorstats(t *testing.T) {
	p := difftest.StartIsolated(t)
	usec := regexp.MustCompile(`usec=\d+,usec_per_call=[\d.]+,`)
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		p.Do("CONFIG", "RESETSTAT")
		p.Do("LPUSH", "list", "a")
		p.Do("GET", "list")
		p.Do("NOSUCH", "x")
		p.Do("GET")
		p.Do("CONFIG", "NOSUCH")
		p.Do("INCR", "list")
		p.Do("SET", "n", "x")
		p.Do("INCR", "n")
		p.Do("EVAL", "return redis.call('get', KEYS[1])", 1, "list")
		p.Do("EVAL", "return redis.error_reply('MY own error')", 0)
		p.Do("EVAL", "return redis.pcall('get', KEYS[1])", 1, "list")
		p.Do("EVAL", "redis.pcall('get', KEYS[1]) return 1", 1, "list")
		p.Do("EVAL", "return redis.error_reply('NOSPACE')", 0)
		p.Do("MULTI")
		p.Do("GET")
		p.Do("EXEC")
		p.Do("MULTI")
		p.Do("INCR", "n")
		p.Do("EXEC")
		p.DoCompare(sameInfoLines("errorstat_", nil), "INFO", "errorstats")
		p.DoCompare(sameInfoLines("total_error_replies", nil), "INFO", "stats")
		p.DoCompare(sameInfoLines("unexpected_error_replies", nil), "INFO", "stats")
		p.DoCompare(sameInfoLines("cmdstat_", usec), "INFO", "commandstats")
		// A script's refused commands: unknown, wrong arity, not allowed,
		// denied by the ACL.
		p.Do("CONFIG", "RESETSTAT")
		p.Do("EVAL", "return redis.call('nosuch')", 0)
		p.Do("EVAL", "return redis.call('get')", 0)
		p.Do("EVAL", "return redis.call('config', 'set', 'x', 'y')", 0)
		p.Do("ACL", "SETUSER", "noget", "on", ">pw", "+@all", "-get", "~*")
		q := p.NewConn()
		q.Do("AUTH", "noget", "pw")
		for _, args := range [][]any{{"EVAL", "return redis.call('get', 'x')", 0}, {"GET", "x"}} {
			r, k := q.DoDifferent("ACL errors are in Redis 7.2's words (acl_diff_test compares them with 7.4.1)", args...)
			if !r.IsError() || !k.IsError() || r.Str[:4] != k.Str[:4] {
				t.Errorf("%v: %s, redis %s", args, k, r)
			}
		}
		p.DoCompare(sameInfoLines("errorstat_", nil), "INFO", "errorstats")
		p.DoCompare(sameInfoLines("cmdstat_", usec), "INFO", "commandstats")
		p.Do("CONFIG", "RESETSTAT")
		p.DoCompare(sameInfoLines("errorstat_", nil), "INFO", "errorstats")
		p.DoCompare(sameInfoLines("total_error_replies", nil), "INFO", "stats")
	}
}

// sameLatencyStats compares INFO latencystats by shape: the same commands
// with the same percentile names, each a number with 3 decimals.
func sameLatencyStats(r, k difftest.Reply) error {
	shape := regexp.MustCompile(`=\d+\.\d{3}(,|$)`)
	rl, kl := infoLines(r, "latency_percentiles_usec_"), infoLines(k, "latency_percentiles_usec_")
	for i := range kl {
		if len(shape.FindAllString(kl[i], -1)) != strings.Count(kl[i], "=") {
			return fmt.Errorf("keyhive line %q: not all values are numbers with 3 decimals", kl[i])
		}
	}
	for _, l := range [][]string{rl, kl} {
		for i := range l {
			l[i] = shape.ReplaceAllString(l[i], "$1")
		}
	}
	if !slices.Equal(rl, kl) {
		return fmt.Errorf("lines differ:\nredis   %q\nkeyhive %q", rl, kl)
	}
	return nil
}

// TestInfoLatencystats: per-command percentiles, named as
// latency-tracking-info-percentiles asks, off with latency-tracking no,
// cleared by CONFIG RESETSTAT.
func TestInfoLatencystats(t *testing.T) {
	p := difftest.StartIsolated(t)
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		p.Do("CONFIG", "RESETSTAT")
		p.Do("SET", "k", "v")
		p.Do("GET", "k")
		p.Do("CONFIG", "GET", "latency-tracking")
		p.DoCompare(sameLatencyStats, "INFO", "latencystats")
		p.Do("CONFIG", "SET", "latency-tracking-info-percentiles", "0 50.5 99.99 100")
		p.DoCompare(sameLatencyStats, "INFO", "latencystats")
		p.Do("CONFIG", "SET", "latency-tracking-info-percentiles", "")
		p.DoCompare(sameLatencyStats, "INFO", "latencystats")
		p.Do("CONFIG", "SET", "latency-tracking-info-percentiles", "50 99 99.9")
		p.Do("CONFIG", "SET", "latency-tracking", "no")
		p.Do("INFO", "latencystats")
		p.Do("CONFIG", "SET", "latency-tracking", "yes")
		p.Do("CONFIG", "RESETSTAT")
		p.Do("PING")
		p.DoCompare(sameLatencyStats, "INFO", "latencystats")
	}
}

// TestInfoAvgTTL: the keyspace line's avg_ttl is estimated from the keys
// the expiry cycle samples, as in Redis: near the keys' TTL once a cycle
// ran, 0 without volatile keys.
func TestInfoAvgTTL(t *testing.T) {
	p := difftest.StartIsolated(t)
	for i := range 50 {
		p.Do("SET", fmt.Sprint("k", i), "v", "EX", 1000)
	}
	p.Do("SET", "plain", "v")
	avg := regexp.MustCompile(`avg_ttl=(\d+)`)
	for _, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
		ok := false
		for range 50 {
			m := avg.FindStringSubmatch(c.Do("INFO", "keyspace").Str)
			var ms int64
			if m != nil {
				fmt.Sscan(m[1], &ms)
			}
			if ms > 900_000 && ms <= 1_000_000 {
				ok = true
				break
			}
			c.Do("DEBUG", "SLEEP", "0.1")
		}
		if !ok {
			t.Fatalf("%s: avg_ttl not near 1000 s: %q", c.Name(), c.Do("INFO", "keyspace").Str)
		}
	}
}

// sameMapShape compares two maps (MEMORY STATS) by their keys in order and
// their values' kinds, nested maps included; the values are each server's.
func sameMapShape(r, k difftest.Reply) error {
	if r.Kind != k.Kind || len(r.Elems) != len(k.Elems) {
		var rk, kk []string
		for i := 0; i < len(r.Elems); i += 2 {
			rk = append(rk, r.Elems[i].Str)
		}
		for i := 0; i < len(k.Elems); i += 2 {
			kk = append(kk, k.Elems[i].Str)
		}
		return fmt.Errorf("kind %c with keys %v, redis %c with %v", k.Kind, kk, r.Kind, rk)
	}
	for i := 0; i+1 < len(r.Elems); i += 2 {
		if r.Elems[i].Str != k.Elems[i].Str {
			return fmt.Errorf("key %d: %q, redis %q", i/2, k.Elems[i].Str, r.Elems[i].Str)
		}
		rv, kv := r.Elems[i+1], k.Elems[i+1]
		if rv.IsAggregate() {
			if err := sameMapShape(rv, kv); err != nil {
				return fmt.Errorf("%s: %v", r.Elems[i].Str, err)
			}
		} else if rv.Kind != kv.Kind {
			return fmt.Errorf("%s: kind %c, redis %c", r.Elems[i].Str, kv.Kind, rv.Kind)
		}
	}
	return nil
}

// TestMemoryStatsFields: MEMORY STATS has Redis 7.0's fields in its order,
// a db.N map per database with keys, in RESP2 and RESP3.
func TestMemoryStatsFields(t *testing.T) {
	p := difftest.StartIsolated(t)
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		p.Do("FLUSHALL")
		p.DoCompare(sameMapShape, "MEMORY", "STATS")
		p.Do("SET", "k", "v", "EX", 100)
		p.Do("SELECT", 3)
		p.Do("SET", "k", "v")
		p.Do("SELECT", 0)
		p.DoCompare(sameMapShape, "MEMORY", "STATS")
	}
}

// TestClientInfoMemoryFields: about itself, a client sees its query buffer
// (the command being run) and its arguments' bytes as Redis counts them.
func TestClientInfoMemoryFields(t *testing.T) {
	p := difftest.Start(t)
	fields := regexp.MustCompile(` (qbuf|argv-mem|multi-mem|oll|omem)=\d+`)
	same := func(r, k difftest.Reply) error {
		rf, kf := fields.FindAllString(r.Str, -1), fields.FindAllString(k.Str, -1)
		if !slices.Equal(rf, kf) {
			return fmt.Errorf("%v, redis %v", kf, rf)
		}
		return nil
	}
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		p.DoCompare(same, "CLIENT", "INFO")
		p.Do("SET", "k", "v")
		p.DoCompare(same, "CLIENT", "INFO")
	}
}

// TestInfoErrorstatsUnblocked: a blocked command ended by CLIENT UNBLOCK
// ... ERROR counts its error and a failed call, as in Redis.
func TestInfoErrorstatsUnblocked(t *testing.T) {
	p := difftest.StartIsolated(t)
	usec := regexp.MustCompile(`usec=\d+,usec_per_call=[\d.]+,`)
	p.Do("CONFIG", "RESETSTAT")
	b := p.NewConn()
	rid, kid := b.Redis().Do("CLIENT", "ID").Int, b.Keyhive().Do("CLIENT", "ID").Int
	b.Send("BLPOP", "nolist", 0)
	for _, c := range []struct {
		cl *difftest.Client
		id int64
	}{{p.Redis(), rid}, {p.Keyhive(), kid}} {
		for c.cl.Do("CLIENT", "UNBLOCK", c.id, "ERROR").Int != 1 {
		}
	}
	b.Read()
	p.DoCompare(sameInfoLines("errorstat_", nil), "INFO", "errorstats")
	p.DoCompare(sameInfoLines("cmdstat_blpop", usec), "INFO", "commandstats")
}
