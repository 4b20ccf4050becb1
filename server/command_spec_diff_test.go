package server_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/cmdspec"
	"github.com/keyhive/keyhive/internal/difftest"
)

// Differential tests of what the command spec (package cmdspec) gives
// COMMAND: INFO on every field, DOCS' structure, GETKEYS and
// GETKEYSANDFLAGS.
//
// Intended differences: COMMAND DOCS has no history and no per-argument
// since (Redis's release notes, not the interface); summaries,
// complexities and key spec notes are Keyhive's own words.

// commandEntries maps every command and subcommand of a COMMAND INFO reply
// to its entry.
func commandEntries(r difftest.Reply) map[string]difftest.Reply {
	m := map[string]difftest.Reply{}
	var add func(e difftest.Reply)
	add = func(e difftest.Reply) {
		m[e.Elems[0].Str] = e
		for _, sub := range e.Elems[9].Elems {
			add(sub)
		}
	}
	for _, e := range r.Elems {
		add(e)
	}
	return m
}

func subcommandNames(r difftest.Reply) []string {
	var names []string
	for _, sub := range r.Elems {
		names = append(names, sub.Elems[0].Str)
	}
	slices.Sort(names)
	return names
}

// TestCommandInfoSpec: every command and subcommand both servers have has
// the same COMMAND INFO entry: name, arity, flags, key range, ACL
// categories, tips, key specs and subcommands, in RESP2 and RESP3.
func TestCommandInfoSpec(t *testing.T) {
	p := difftest.Start74(t)
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		redis := commandEntries(p.Redis().Do("COMMAND", "INFO"))
		keyhive := commandEntries(p.Keyhive().Do("COMMAND", "INFO"))
		checked := 0
		for name, k := range keyhive {
			r, ok := redis[name]
			if !ok || newerInterface[name] {
				continue // a Redis 7.2 subcommand (CLIENT SETINFO, CLIENT NO-TOUCH), or newer
			}
			checked++
			for i := range 8 {
				if canon(r.Elems[i], nil) != canon(k.Elems[i], nil) {
					t.Errorf("RESP%d %s field %d: keyhive %s, redis %s", proto, name, i, k.Elems[i], r.Elems[i])
				}
			}
			if rs, ks := keySpecsCanon(r.Elems[8]), keySpecsCanon(k.Elems[8]); rs != ks {
				t.Errorf("RESP%d %s key specs:\nkeyhive %s\nredis   %s", proto, name, ks, rs)
			}
			if r.Elems[9].Kind != k.Elems[9].Kind || !subset(subcommandNames(k.Elems[9]), subcommandNames(r.Elems[9])) {
				t.Errorf("RESP%d %s subcommands: keyhive %s, redis %s", proto, name, k.Elems[9], r.Elems[9])
			}
		}
		if checked < 300 {
			t.Errorf("RESP%d: only %d commands compared", proto, checked)
		}
	}
	p.Do("COMMAND", "INFO", "get", "lmove", "xread", "nosuch", "client|kill")
}

// subset reports whether every name in a is in b: Keyhive has fewer
// subcommands than Redis (or Redis 7.2's, which are compared by hand, or
// Redis 8.x's, which the 7.4.1 oracle lacks).
func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) && x != "client|setinfo" && x != "client|no-touch" && !sinceRedis8(x) {
			return false
		}
	}
	return true
}

// sinceRedis8 reports whether a command or subcommand came with Redis 8.x
// by its spec.
func sinceRedis8(name string) bool {
	s := cmdspec.Lookup(name)
	return s != nil && strings.HasPrefix(s.Since, "8.")
}

func docKeys(f map[string]difftest.Reply) []string {
	var keys []string
	for k := range f {
		if k != "history" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// TestCommandDocsSpec: COMMAND DOCS gives every command and subcommand
// both servers have the same fields (but history), the same since, group,
// doc_flags, deprecated_since and replaced_by, the same arguments tree
// (name, type, key_spec_index, token, flags, nesting; not since) and the
// same subcommands; summary and complexity are Keyhive's own words.
func TestCommandDocsSpec(t *testing.T) {
	p := difftest.Start(t)
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		redis := docEntries(p.Redis().Do("COMMAND", "DOCS"))
		keyhive := docEntries(p.Keyhive().Do("COMMAND", "DOCS"))
		checked := 0
		for name, k := range keyhive {
			r, ok := redis[name]
			if !ok || newerInterface[name] {
				continue // Redis 7.2's, or newer
			}
			checked++
			if rk, kk := docKeys(r), docKeys(k); !slices.Equal(rk, kk) {
				t.Errorf("RESP%d %s fields: keyhive %v, redis %v", proto, name, kk, rk)
				continue
			}
			for _, f := range []string{"since", "group", "doc_flags", "deprecated_since", "replaced_by"} {
				if rv, ok := r[f]; ok && canon(rv, nil) != canon(k[f], nil) {
					t.Errorf("RESP%d %s %s: keyhive %s, redis %s", proto, name, f, k[f], rv)
				}
			}
			for _, f := range []string{"summary", "complexity"} {
				if v, ok := k[f]; ok && (v.Kind != difftest.KindBulk || len(v.Str) < 4) {
					t.Errorf("RESP%d %s %s: %s", proto, name, f, v)
				}
			}
			if rv, ok := r["arguments"]; ok {
				if ra, ka := argsCanon(rv), argsCanon(k["arguments"]); ra != ka {
					t.Errorf("RESP%d %s arguments:\nkeyhive %s\nredis   %s", proto, name, ka, ra)
				}
			}
		}
		if checked < 300 {
			t.Errorf("RESP%d: only %d commands compared", proto, checked)
		}
		for _, args := range [][]any{{"get"}, {"set", "nosuch", "CONFIG|GET"}, {"client|kill"}, {"nosuch"}} {
			rs, ks := p.Redis().Do(append([]any{"COMMAND", "DOCS"}, args...)...), p.Keyhive().Do(append([]any{"COMMAND", "DOCS"}, args...)...)
			if len(rs.Elems) != len(ks.Elems) || rs.Kind != ks.Kind {
				t.Errorf("RESP%d COMMAND DOCS %v: keyhive %d elements, redis %d", proto, args, len(ks.Elems), len(rs.Elems))
			}
		}
	}
}

// TestCommandGetKeysAndFlags: the keys and key flags COMMAND GETKEYS and
// GETKEYSANDFLAGS find, for typical and odd arguments, and for every
// command with keys called with filler arguments.
func TestCommandGetKeysAndFlags(t *testing.T) {
	p := difftest.Start74(t)
	cases := [][]any{
		{"lmove", "l1", "l2", "left", "left"}, {"blmove", "a", "b", "left", "right", "0"},
		{"set", "k", "v"}, {"set", "k", "v", "GET"}, {"set", "k", "v", "get", "EX", "1"}, {"set", "k", "v", "EX", "get"},
		{"set", "k", "v", "getx"}, {"set", "k", "v", "g"}, {"set", "k", "v", "get\x00x"},
		{"bitfield", "k", "GET", "u8", "0"}, {"bitfield", "k", "GET", "u8", "0", "SET", "u8", "0", "1"},
		{"bitfield", "k", "OVERFLOW", "SAT", "GET", "u8", "0"}, {"bitfield", "k", "GET", "u8"}, {"bitfield", "k"},
		{"bitfield", "k", "INCRBY", "u8", "0", "1"}, {"bitfield_ro", "k", "GET", "u8", "0"},
		{"sort", "k"}, {"sort", "k", "STORE", "d"}, {"sort", "k", "BY", "w*", "GET", "#", "STORE", "d"},
		{"sort", "k", "STORE", "d1", "STORE", "d2"}, {"sort", "k", "LIMIT", "0", "1", "STORE", "d"}, {"sort", "k", "STORE"},
		{"sort", "k", "store", "limit", "store", "x"}, {"sort_ro", "k", "BY", "w*"},
		{"eval", "s", "0"}, {"eval", "s", "2", "a", "b", "c"}, {"eval", "s", "3", "a"}, {"eval", "s", "-1", "a"},
		{"eval", "s", "x", "a"}, {"eval", "s", "1x", "a"}, {"eval", "s", " 1", "a"}, {"evalsha", "x", "1", "a"},
		{"eval_ro", "s", "1", "a"}, {"fcall", "f", "1", "a", "b"}, {"fcall_ro", "f", "2", "a", "b"},
		{"xread", "STREAMS", "s1", "s2", "0", "0"}, {"xread", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", "0"},
		{"xread", "STREAMS", "s1", "s2", "0"}, {"xread", "COUNT", "streams", "STREAMS", "s", "0"},
		{"xreadgroup", "GROUP", "g", "c", "STREAMS", "s", ">"}, {"xreadgroup", "GROUP", "streams", "c", "NOACK", "STREAMS", "a", "b", ">", ">"},
		{"georadius", "k", "1", "2", "3", "m"}, {"georadius", "k", "1", "2", "3", "m", "STORE", "d"},
		{"georadius", "k", "1", "2", "3", "m", "STOREDIST", "d"}, {"georadius", "k", "1", "2", "3", "m", "STORE", "a", "STOREDIST", "b"},
		{"georadius", "k", "1", "2", "3", "m", "STORE"}, {"georadiusbymember", "k", "m", "3", "km", "STORE", "d"},
		{"georadius_ro", "k", "1", "2", "3", "m"}, {"geosearchstore", "d", "s", "FROMMEMBER", "m", "BYRADIUS", "1", "m"},
		{"zunionstore", "d", "2", "a", "b"}, {"zunionstore", "d", "2", "a", "b", "WEIGHTS", "1", "2"}, {"zunionstore", "d", "3", "a", "b"},
		{"zunionstore", "d", "0", "a"}, {"zunionstore", "d", "x", "a"}, {"zinterstore", "d", "1", "a"}, {"zdiffstore", "d", "1", "a"},
		{"zunion", "2", "a", "b"}, {"zinter", "1", "a", "WITHSCORES"}, {"zdiff", "2", "a"}, {"zintercard", "2", "a", "b", "LIMIT", "1"},
		{"lmpop", "2", "a", "b", "LEFT"}, {"lmpop", "5", "a", "LEFT"}, {"lmpop", "0", "a", "LEFT"}, {"blmpop", "0", "2", "a", "b", "LEFT"},
		{"zmpop", "1", "a", "MIN"}, {"bzmpop", "1", "1", "a", "MAX", "COUNT", "2"},
		{"sintercard", "2", "a", "b"}, {"sintercard", "3", "a", "b"}, {"sintercard", "1", "a", "LIMIT", "5"},
		{"object", "encoding", "k"}, {"object", "freq", "k"}, {"object", "help"}, {"memory", "usage", "k"}, {"memory", "usage", "k", "SAMPLES", "5"},
		{"copy", "a", "b"}, {"copy", "a", "b", "DB", "1", "REPLACE"}, {"move", "a", "1"}, {"rename", "a", "b"}, {"renamenx", "a", "b"},
		{"mset", "a", "1", "b", "2"}, {"mset", "a", "1", "b"}, {"msetnx", "a", "1"}, {"mget", "a", "b"}, {"del", "a", "b", "c"},
		{"exists", "a"}, {"touch", "a", "b"}, {"unlink", "a"}, {"type", "a"}, {"dump", "a"}, {"restore", "a", "0", "x"},
		{"bitop", "AND", "d", "a", "b"}, {"bitcount", "k"}, {"lcs", "a", "b"}, {"smove", "a", "b", "m"}, {"sdiffstore", "d", "a", "b"},
		{"sinterstore", "d", "a"}, {"sunionstore", "d", "a", "b"}, {"sunion", "a", "b"}, {"pfmerge", "d", "a", "b"}, {"pfcount", "a", "b"},
		{"pfdebug", "GETREG", "k"}, {"zrangestore", "d", "s", "0", "1"}, {"rpoplpush", "a", "b"}, {"brpoplpush", "a", "b", "0"},
		{"blpop", "a", "b", "0"}, {"bzpopmin", "a", "0"}, {"xgroup", "create", "s", "g", "$"}, {"xinfo", "stream", "s"},
		{"xadd", "s", "*", "f", "v"}, {"xautoclaim", "s", "g", "c", "0", "0"}, {"getex", "k", "PERSIST"}, {"getdel", "k"},
		{"watch", "a", "b"}, {"ssubscribe", "c"}, {"spublish", "c", "m"}, {"sunsubscribe", "c"}, {"publish", "c", "m"},
		{"subscribe", "c"}, {"ping"}, {"config", "get", "x"}, {"eval"}, {"get"}, {"get", "a", "b"}, {"nosuch", "a"},
		{"object", "nosuch", "k"}, {"config"}, {"GET", "k"}, {"debug", "reload"},
	}
	for _, args := range cases {
		p.Do(append([]any{"COMMAND", "GETKEYSANDFLAGS"}, args...)...)
		p.Do(append([]any{"COMMAND", "GETKEYS"}, args...)...)
	}
	// Every command and subcommand both servers have, with filler
	// arguments to its arity and a few more.
	fill := []string{"k1", "1", "k3", "v4", "v5", "v6", "v7"}
	redis := commandEntries(p.Redis().Do("COMMAND", "INFO"))
	keyhive := commandEntries(p.Keyhive().Do("COMMAND", "INFO"))
	n := 0
	for name, k := range keyhive {
		if _, ok := redis[name]; !ok || newerInterface[name] {
			continue
		}
		arity := int(k.Elems[1].Int)
		for _, extra := range []int{0, 1, 3} {
			args := strings.Split(name, "|")
			want := arity
			if arity < 0 {
				want = -arity + extra
			} else if extra > 0 {
				continue
			}
			for i := 0; len(args) < want; i++ {
				args = append(args, fill[i%len(fill)])
			}
			p.Do(append([]any{"COMMAND", "GETKEYSANDFLAGS"}, anys(args)...)...)
			n++
		}
	}
	t.Logf("%d commands with filler arguments", n)
	p.Proto(3)
	p.Do("COMMAND", "GETKEYSANDFLAGS", "lmove", "l1", "l2", "left", "left")
	p.Do("COMMAND", "GETKEYSANDFLAGS", "set", "k", "v", "get")
}
