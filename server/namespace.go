package server

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

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
		case d.Types != 0 && cmd.spec.Writes != cmdspec.Untyped && d.Types&namespaceType[cmd.spec.Writes] == 0:
			msg = fmt.Sprintf("WRONGTYPE namespace '%s' holds only %s values", d.Name, joinNames(namespace.TypeNames(d.Types)))
		case k.Flags&(cmdspec.Insert|cmdspec.Update|cmdspec.OW) == 0:
			continue // it only reads or deletes
		default:
			e, found := x.DB.LookupIn(&x.Locks, key, x.Now, false)
			switch {
			case d.RequireTTL && d.DefaultTTL == 0 && d.MaxTTL == 0 && !x.leavesTTL(cmd, args, k, found && e.ExpireAt() != 0):
				msg = fmt.Sprintf("ERR namespace '%s' requires a TTL: write its keys with EX, PX, EXAT or PXAT (or SETEX), or give the key one first", d.Name)
			case d.Evict == namespace.OrderNone && !found && t.WouldExceed(ns):
				msg = fmt.Sprintf("NSQUOTA namespace '%s' is at its MAX-KEYS quota of %d keys", d.Name, d.MaxKeys)
			case d.Evict == namespace.OrderNone && cmd.Flags&cmdspec.FlagDenyOOM != 0 && t.OverMemory(ns):
				msg = fmt.Sprintf("NSQUOTA namespace '%s' is at its MAX-MEMORY quota of %d bytes", d.Name, d.MaxMemory)
			}
		}
		if msg != "" {
			t.Count(x.DB.ID(), key, namespace.Refused)
			return msg
		}
	}
	return ""
}

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

// namespaceType is the namespace type bit of each value type a command
// writes.
var namespaceType = [...]uint8{
	cmdspec.TypeString: namespace.TypeString, cmdspec.TypeList: namespace.TypeList,
	cmdspec.TypeSet: namespace.TypeSet, cmdspec.TypeZSet: namespace.TypeZSet,
	cmdspec.TypeHash: namespace.TypeHash, cmdspec.TypeStream: namespace.TypeStream,
	cmdspec.TypeJSON: namespace.TypeJSON,
}

// leavesTTL reports whether the write cmd leaves the key k with a TTL;
// hadTTL is whether it has one now.
func (x *Ctx) leavesTTL(cmd *Command, args [][]byte, k cmdspec.KeyRef, hadTTL bool) bool {
	effect, from := cmd.spec.TTLEffectOn(args, k)
	switch effect {
	case cmdspec.TTLGiven:
		return true
	case cmdspec.TTLKept:
		return hadTTL
	case cmdspec.TTLOfSource:
		e, found := x.DB.LookupIn(&x.Locks, args[from], x.Now, false)
		return found && e.ExpireAt() != 0
	}
	return false
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
		e, found := x.DB.LookupIn(&x.Locks, key, x.Now, false)
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
		x.Notify(notifyGeneric, "expire", key)
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
		_, found, spared := s.ks.EvictFrom(db, key, e.onEvict)
		switch {
		case spared:
			return // a blessed key comes first: the quota waits for its BLESS CLEAR or deletion
		case !found:
			t.Drop(db, key)
		}
	}
}

// evictOverQuota is maxmemory eviction's first choice: a key of a
// namespace over its quota. It reports false when no namespace is over.
func (s *Server) evictOverQuota() (int64, bool) {
	t := s.schema.Load()
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
	freed, found, spared := s.ks.EvictFrom(db, key, s.evict.onEvict)
	if !found {
		t.Drop(db, key)
	}
	return freed, found && !spared // a blessed victim: sampling eviction, which spares it, takes over
}

// setSchema replaces the declared namespaces with defs, keeping the
// counters of those that stay and the discovered prefixes' events. The
// caller holds the exclusive lock, or the server has not started serving.
func (s *Server) setSchema(defs []namespace.Def) {
	// A table even with nothing declared nor discovered: it keeps INFO
	// keysizes' histograms.
	if disc := s.discovery; disc != nil {
		disc.Reset() // the keyspace reports every key again
	}
	t := namespace.NewTable(defs, s.ks.Len(), s.discovery)
	if old := s.schema.Load(); old != nil {
		t.KeepCounters(old)
	}
	s.ks.SetSchema(t)
	s.schema.Store(t)
}

// schemaDefs returns the declared namespaces.
func (s *Server) schemaDefs() []namespace.Def {
	if t := s.schema.Load(); t != nil {
		return t.Defs()
	}
	return nil
}

// initSchema applies the config file's namespace directives.
func (s *Server) initSchema() error {
	s.discovery = s.newDiscovery()
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
