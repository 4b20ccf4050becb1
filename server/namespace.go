package server

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/keyhive/keyhive/cmdspec"
	"github.com/keyhive/keyhive/namespace"
)

// The namespace policies (package namespace holds the schema and its
// counters). Every check is one edit in the dispatch path, skipped at the
// cost of one atomic load when no namespace is declared:
//
//   - before a write runs, under its locks: allowed types, REQUIRE-TTL
//     without DEFAULT-TTL, and REJECT quotas refuse it (schemaRefusal);
//   - after it ran, under its locks: DEFAULT-TTL gives keys left without a
//     TTL one and MAX-TTL shortens longer ones, each propagated as
//     PEXPIREAT after the command (applyTTLRules);
//   - after its locks are released: namespaces over an EVICT quota evict,
//     lowest score first, until within it (enforceQuotas).
//
// A command replayed from the AOF or a master's stream is not checked: it
// already ran where the checks applied, and carries their effects.

// schemaRefusal returns why the schema refuses the write cmd, or "".
func (x *Ctx) schemaRefusal(t *namespace.Table, cmd *Command, args [][]byte) string {
	x.nsRefs = cmd.keyRefs(args, x.nsRefs[:0])
	for _, k := range x.nsRefs {
		key := args[k.Pos]
		ns := t.Match(key)
		d := t.Def(ns)
		if !d.Guards() {
			continue
		}
		msg := ""
		switch {
		case d.Types != 0 && !typeAllowed(cmd, d.Types):
			msg = fmt.Sprintf("WRONGTYPE namespace '%s' holds only %s values", d.Name, joinNames(namespace.TypeNames(d.Types)))
		case k.Flags&(cmdspec.Insert|cmdspec.Update|cmdspec.OW) == 0:
			continue // it only reads or deletes
		default:
			e, found := x.DB.LookupIn(&x.locks, key, x.Now, false)
			switch {
			case d.RequireTTL && d.DefaultTTL == 0 && d.MaxTTL == 0 && !setsTTL(cmd, args) && !(found && e.ExpireAt() != 0 && !clearsTTL(cmd, args, k.Flags)) && !x.carriesTTL(cmd, args, k.Pos):
				msg = fmt.Sprintf("ERR namespace '%s' requires a TTL: write its keys with EX, PX, EXAT or PXAT (or SETEX), or give the key one first", d.Name)
			case d.Evict == namespace.OrderNone && !found && t.WouldExceed(ns):
				msg = fmt.Sprintf("NSQUOTA namespace '%s' is at its MAX-KEYS quota of %d keys", d.Name, d.MaxKeys)
			case d.Evict == namespace.OrderNone && cmd.Flags&FlagDenyOOM != 0 && t.OverMemory(ns):
				msg = fmt.Sprintf("NSQUOTA namespace '%s' is at its MAX-MEMORY quota of %d bytes", d.Name, d.MaxMemory)
			}
		}
		if msg != "" {
			t.Count(x.DB.ID(), key, refusedCounter)
			return msg
		}
	}
	return ""
}

func refusedCounter(c *namespace.Counters) *atomic.Int64    { return &c.Refused }
func evictedCounter(c *namespace.Counters) *atomic.Int64    { return &c.Evictions }
func expirationCounter(c *namespace.Counters) *atomic.Int64 { return &c.Expirations }

func joinNames(names []string) string {
	var b bytes.Buffer
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n)
	}
	return b.String()
}

// typeAllowed reports whether cmd writes values of a type in allowed: by
// its group (geo commands write sorted sets, bitmap and HyperLogLog
// commands strings); generic commands (DEL, EXPIRE, RENAME) carry no type.
func typeAllowed(cmd *Command, allowed uint8) bool {
	var bit uint8
	switch cmd.spec.Group {
	case "string", "bitmap", "hyperloglog":
		bit = namespace.TypeString
	case "list":
		bit = namespace.TypeList
	case "set":
		bit = namespace.TypeSet
	case "sorted_set", "geo":
		bit = namespace.TypeZSet
	case "hash":
		bit = namespace.TypeHash
	case "stream":
		bit = namespace.TypeStream
	default:
		return true
	}
	return allowed&bit != 0
}

// setsTTL reports whether the command gives its key a TTL.
func setsTTL(cmd *Command, args [][]byte) bool {
	switch cmd.spec.FullName {
	case "setex", "psetex", "expire", "pexpire", "expireat", "pexpireat":
		return true
	case "set", "getex":
		for _, a := range args[2:] {
			switch {
			case bytes.EqualFold(a, []byte("ex")), bytes.EqualFold(a, []byte("px")),
				bytes.EqualFold(a, []byte("exat")), bytes.EqualFold(a, []byte("pxat")):
				return true
			}
		}
	case "restore":
		return len(args) > 2 && string(args[2]) != "0"
	}
	return false
}

// carriesTTL reports whether the key at pos is the destination of a
// command that gives it its source's TTL (RENAME, RENAMENX, COPY), and the
// source has one.
func (x *Ctx) carriesTTL(cmd *Command, args [][]byte, pos int) bool {
	switch cmd.spec.FullName {
	case "rename", "renamenx", "copy":
		if pos != 2 {
			return false
		}
		e, found := x.DB.LookupIn(&x.locks, args[1], x.Now, false)
		return found && e.ExpireAt() != 0
	}
	return false
}

// clearsTTL reports whether the command leaves a key it writes (with key
// spec flags) without the TTL it had.
func clearsTTL(cmd *Command, args [][]byte, flags cmdspec.KeyFlags) bool {
	switch cmd.spec.FullName {
	case "persist", "getset", "mset", "msetnx", "setnx":
		return true
	case "getex":
		for _, a := range args[2:] {
			if bytes.EqualFold(a, []byte("persist")) {
				return true
			}
		}
		return false
	case "set":
		for _, a := range args[3:] {
			if bytes.EqualFold(a, []byte("keepttl")) {
				return false
			}
		}
		return true
	}
	return flags&cmdspec.OW != 0
}

// applyTTLRules gives the keys cmd wrote in namespaces with DEFAULT-TTL or
// MAX-TTL the TTL those require, propagating each as PEXPIREAT after the
// command.
func (x *Ctx) applyTTLRules(t *namespace.Table, cmd *Command, args [][]byte) {
	x.nsRefs = cmd.keyRefs(args, x.nsRefs[:0])
	for _, k := range x.nsRefs {
		key := args[k.Pos]
		d := t.Def(t.Match(key))
		if d.DefaultTTL == 0 && d.MaxTTL == 0 {
			continue
		}
		e, found := x.DB.LookupIn(&x.locks, key, x.Now, false)
		if !found {
			continue
		}
		at := e.ExpireAt()
		switch {
		case at == 0 && d.DefaultTTL > 0:
			at = x.Now + d.DefaultTTL
		case d.MaxTTL > 0 && (at == 0 || at > x.Now+d.MaxTTL):
			at = x.Now + d.MaxTTL
		default:
			continue
		}
		x.DB.SetExpire(&e, at, x.Now)
		x.notify(notifyGeneric, "expire", key)
		x.propagateEffect(argPEXPIREAT, key, strconv.AppendInt(nil, at, 10))
	}
}

// enforceQuotas evicts from the namespaces over an EVICT quota until each
// is within it. by is the client whose write put them over.
func (s *Server) enforceQuotas(t *namespace.Table, by *Client) {
	e := &s.evict
	e.mu.Lock()
	defer e.mu.Unlock()
	e.by = by
	defer func() { e.by = nil }()
	for {
		ns := t.Over()
		if ns < 0 {
			return
		}
		db, key, ok := t.Victim(ns, s.evict.victim)
		s.evict.victim = key
		if !ok {
			return
		}
		if _, found := s.ks.EvictFrom(db, key, e.onEvict); !found {
			t.Drop(db, key)
		}
	}
}

// evictOverQuota is maxmemory eviction's first choice: a key of a
// namespace over its quota. It reports false when no namespace is over.
func (s *Server) evictOverQuota() (int64, bool) {
	t := s.ks.Schema()
	if t == nil || !t.AnyOver() {
		return 0, false
	}
	ns := t.Over()
	if ns < 0 {
		return 0, false
	}
	db, key, ok := t.Victim(ns, s.evict.victim)
	s.evict.victim = key
	if !ok {
		return 0, false
	}
	freed, found := s.ks.EvictFrom(db, key, s.evict.onEvict)
	if !found {
		t.Drop(db, key)
	}
	return freed, found
}

// setSchema replaces the declared namespaces with defs, keeping the
// counters of those that stay. The caller holds the exclusive lock, or
// the server has not started serving.
func (s *Server) setSchema(defs []namespace.Def) {
	var t *namespace.Table
	if len(defs) > 0 {
		t = namespace.NewTable(defs, s.ks.Len())
		if old := s.ks.Schema(); old != nil {
			t.KeepCounters(old)
		}
	}
	s.ks.SetSchema(t)
}

// schemaDefs returns the declared namespaces.
func (s *Server) schemaDefs() []namespace.Def {
	if t := s.ks.Schema(); t != nil {
		return t.Defs()
	}
	return nil
}

// initSchema applies the config file's namespace directives.
func (s *Server) initSchema() error {
	var defs []namespace.Def
	for _, args := range s.cfg.Namespaces() {
		d, err := namespace.Parse(args)
		if err == nil {
			defs, err = withDef(defs, d)
		}
		if err != nil {
			return fmt.Errorf("namespace %s: %s", strings.Join(args, " "), strings.TrimPrefix(err.Error(), "ERR "))
		}
	}
	s.setSchema(defs)
	return nil
}

// loadSchema adds the declarations a data file holds to those in force:
// a name the config file declares keeps the config's declaration, so
// editing the file and restarting changes a policy.
func (s *Server) loadSchema(defs []namespace.Def) {
	merged := s.schemaDefs()
	for _, d := range defs {
		taken := false
		for _, o := range merged {
			taken = taken || o.Name == d.Name || (o.Prefix == d.Prefix && o.Pattern == d.Pattern)
		}
		if !taken {
			merged = append(merged, d)
		}
	}
	s.setSchema(merged)
}
