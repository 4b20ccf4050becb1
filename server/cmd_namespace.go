package server

import (
	"fmt"
	"strings"

	"github.com/keyhive/keyhive/namespace"
)

// NAMESPACE, Keyhive's own command family: the key schema (namespace.go
// enforces its policies, package namespace keeps its counters).

func init() {
	bindSub("namespace", "define", namespaceDefine)
	bindSub("namespace", "drop", namespaceDrop)
	bindSub("namespace", "list", namespaceList)
	bindSub("namespace", "info", namespaceInfo)
	bindSub("namespace", "stats", namespaceStats)
	bindSub("namespace", "reset", namespaceReset)
	bindSub("namespace", "discover", namespaceDiscover)
	bindSub("namespace", "promote", namespacePromote)
	bindSub("namespace", "help", func(x *Ctx) {
		writeHelp(x, "NAMESPACE", []string{
			"DEFINE <name> PREFIX <prefix>|PATTERN <pattern> [MAX-KEYS <n>] [MAX-MEMORY <bytes>]",
			"    [REJECT|EVICT lru|lfu|ttl|random|lowest-hits-then-oldest|lrfu] [PROTECTED]",
			"    [REQUIRE-TTL] [DEFAULT-TTL <seconds>] [MAX-TTL <seconds>] [TYPES <type>[,<type>...]]",
			"    Declare a namespace (or replace the one of that name).",
			"DROP <name>", "    Remove a namespace declaration; its keys stay.",
			"LIST", "    List the declarations as DEFINE arguments.",
			"INFO <name>", "    Return a namespace's declaration and statistics.",
			"STATS", "    Return every namespace's statistics, the default one included.",
			"RESET [<name>]", "    Zero the hit, miss, write, eviction, expiration and refusal counters.",
			"DISCOVER [DEPTH <n>] [COUNT <k>] [BY keys|volatile|bytes|reads|writes|evictions|expirations]",
			"    List the top discovered key prefixes of depth n (default 1) by a figure (default bytes),",
			"    with each figure's estimate and error bound.",
			"PROMOTE <prefix> [NAME <name>] [<DEFINE's policy options>]",
			"    Declare a discovered prefix as a namespace (named after the prefix by default).",
		})
	})
}

// maxNamespaces bounds the declarations: each costs a row of counters per
// database and a trie walk is per key byte, not per declaration, but a
// schema is meant to be read by people.
const maxNamespaces = 1024

func stringArgs(args [][]byte) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = string(a)
	}
	return out
}

func namespaceDefine(x *Ctx) {
	if define(x, stringArgs(x.Args[2:])) {
		x.W.OK()
	}
}

// define adds or replaces the namespace NAMESPACE DEFINE's arguments
// declare, or replies with the error and returns false.
func define(x *Ctx, args []string) bool {
	d, err := namespace.Parse(args)
	if err != nil {
		x.W.Error(err.Error())
		return false
	}
	defs, err := withDef(x.s.schemaDefs(), d)
	if err != nil {
		x.W.Error(err.Error())
		return false
	}
	x.s.setSchema(defs)
	x.Dirty++
	return true
}

// withDef returns defs with d added, or replacing the declaration of its
// name.
func withDef(defs []namespace.Def, d namespace.Def) ([]namespace.Def, error) {
	out := make([]namespace.Def, 0, len(defs)+1)
	for _, o := range defs {
		if o.Name == d.Name {
			continue
		}
		if o.Prefix == d.Prefix && o.Pattern == d.Pattern {
			what := "prefix '" + d.Prefix + "'"
			if d.Pattern != "" {
				what = "pattern '" + d.Pattern + "'"
			}
			return nil, fmt.Errorf("ERR namespace '%s' already declares %s", o.Name, what)
		}
		out = append(out, o)
	}
	if len(out) >= maxNamespaces {
		return nil, fmt.Errorf("ERR too many namespaces (at most %d)", maxNamespaces)
	}
	return append(out, d), nil
}

func namespaceDrop(x *Ctx) {
	name := string(x.Args[2])
	defs := x.s.schemaDefs()
	out := make([]namespace.Def, 0, len(defs))
	for _, d := range defs {
		if d.Name != name {
			out = append(out, d)
		}
	}
	if len(out) == len(defs) {
		x.W.Error(errNoNamespace(name))
		return
	}
	x.s.setSchema(out)
	x.Dirty++
	x.W.OK()
}

func errNoNamespace(name string) string { return "ERR no such namespace '" + name + "'" }

func namespaceList(x *Ctx) {
	defs := x.s.schemaDefs()
	x.W.Array(len(defs))
	for i := range defs {
		args := defs[i].Args()
		x.W.Array(len(args))
		for _, a := range args {
			x.W.BulkString(a)
		}
	}
}

// statFields are a namespace's statistics in the order they are shown.
var statFields = []string{"keys", "volatile", "bytes", "hits", "misses", "writes", "evictions", "expirations", "refused"}

func statValues(t namespace.Totals) []int64 {
	return []int64{t.Keys, t.Volatile, t.Bytes, t.Hits, t.Misses, t.Writes, t.Evictions, t.Expirations, t.Refused}
}

func writeStats(x *Ctx, t namespace.Totals) {
	x.W.Map(len(statFields))
	for i, v := range statValues(t) {
		x.W.BulkString(statFields[i])
		x.W.Int(v)
	}
}

// namedNamespace finds the namespace x.Args[2] names, replying an error
// when there is none.
func namedNamespace(x *Ctx) (*namespace.Table, int, bool) {
	t := x.s.schema.Load()
	name := string(x.Args[2])
	ns := -1
	if t != nil && t.Declared() {
		ns = t.Find(name)
	}
	if ns < 0 {
		x.W.Error(errNoNamespace(name))
	}
	return t, ns, ns >= 0
}

func namespaceInfo(x *Ctx) {
	t, ns, ok := namedNamespace(x)
	if !ok {
		return
	}
	d := t.Def(ns)
	x.W.Map(3 + len(statFields))
	x.W.BulkString("name")
	x.W.BulkString(d.Name)
	if d.Pattern != "" {
		x.W.BulkString("pattern")
		x.W.BulkString(d.Pattern)
	} else {
		x.W.BulkString("prefix")
		x.W.BulkString(d.Prefix)
	}
	x.W.BulkString("policy")
	x.W.BulkString(strings.Join(d.Args()[3:], " "))
	for i, v := range statValues(t.Totals(ns)) {
		x.W.BulkString(statFields[i])
		x.W.Int(v)
	}
}

func namespaceStats(x *Ctx) {
	t := x.s.schema.Load()
	if t == nil || !t.Declared() {
		x.W.Map(0)
		return
	}
	x.W.Map(t.Len())
	for i := 1; i <= t.Len(); i++ {
		ns := i % t.Len() // the declared ones, then the default one
		x.W.BulkString(t.Def(ns).Name)
		writeStats(x, t.Totals(ns))
	}
}

func namespaceReset(x *Ctx) {
	t := x.s.schema.Load()
	if len(x.Args) > 3 {
		x.W.Error(errArity("namespace|reset"))
		return
	}
	if len(x.Args) == 3 {
		t, ns, ok := namedNamespace(x)
		if !ok {
			return
		}
		t.ResetCounters(ns)
	} else if t != nil && t.Declared() {
		for ns := range t.Len() {
			t.ResetCounters(ns)
		}
	}
	x.W.OK()
}

// writeNamespacesInfo is INFO namespaces: a line per namespace, as INFO
// keyspace's, the default one last, then the discovered prefixes.
func (s *Server) writeNamespacesInfo(b *strings.Builder) {
	defer s.writeDiscoveredInfo(b)
	t := s.schema.Load()
	if t == nil || !t.Declared() {
		return
	}
	for i := 1; i <= t.Len(); i++ {
		ns := i % t.Len()
		fmt.Fprintf(b, "ns_%s:", t.Def(ns).Name)
		for j, v := range statValues(t.Totals(ns)) {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(b, "%s=%d", statFields[j], v)
		}
		b.WriteString("\r\n")
	}
}
