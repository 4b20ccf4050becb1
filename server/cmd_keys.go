package server

import (
	"math"
	"strings"

	"github.com/keyhive/keyhive/glob"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/values"
)

func init() {
	bind("del", delCommand)
	bind("delex", delexCommand)
	bind("unlink", delCommand)
	bind("exists", existsCommand)
	bind("touch", touchCommand)
	bind("type", typeCommand)
	bind("rename", func(x *Ctx) { renameCommand(x, false) })
	bind("renamenx", func(x *Ctx) { renameCommand(x, true) })
	bind("copy", copyCommand)
	bind("move", moveCommand)
	bind("keys", keysCommand)
	bind("scan", scanCommand)
	bind("randomkey", randomkeyCommand)
	bind("expire", func(x *Ctx) { expireCommand(x, 1000, false) })
	bind("pexpire", func(x *Ctx) { expireCommand(x, 1, false) })
	bind("expireat", func(x *Ctx) { expireCommand(x, 1000, true) })
	bind("pexpireat", func(x *Ctx) { expireCommand(x, 1, true) })
	bind("ttl", func(x *Ctx) { ttlCommand(x, false, false) })
	bind("pttl", func(x *Ctx) { ttlCommand(x, true, false) })
	bind("expiretime", func(x *Ctx) { ttlCommand(x, false, true) })
	bind("pexpiretime", func(x *Ctx) { ttlCommand(x, true, true) })
	bind("persist", persistCommand)
	bind("dbsize", func(x *Ctx) { x.W.Int(x.DB.Len()) })
	bind("flushdb", flushdbCommand)
	bind("flushall", flushallCommand)
	bind("swapdb", swapdbCommand)
	bindSub("object", "encoding", func(x *Ctx) { objectCommand(x, "encoding") })
	bindSub("object", "idletime", func(x *Ctx) { objectCommand(x, "idletime") })
	bindSub("object", "freq", func(x *Ctx) { objectCommand(x, "freq") })
	bindSub("object", "refcount", func(x *Ctx) { objectCommand(x, "refcount") })
	bindSub("object", "help", objectHelp)
}

func delCommand(x *Ctx) {
	n := 0
	for _, key := range x.Args[1:] {
		if _, found := x.lookupWrite(key); found && x.DB.Delete(key) {
			x.notify(notifyGeneric, "del", key)
			n++
		}
	}
	x.dirty += n
	x.W.Int(int64(n))
}

// delexCommand is DELEX (Redis 8.4): DEL of one key, or, with an IFEQ,
// IFNE, IFDEQ or IFDNE condition, of a string key whose value (or digest)
// meets it (https://redis.io/docs/latest/commands/delex/), with Redis's
// checks in its order: the key, its type, then the condition. A deletion
// propagates as DEL.
func delexCommand(x *Ctx) {
	if len(x.Args) == 2 {
		delCommand(x)
		return
	}
	if len(x.Args) != 4 {
		x.W.Error(errArity(x.cmd.Name))
		return
	}
	key, match := x.Args[1], x.Args[3]
	e, found := x.lookupRead(key)
	switch {
	case !found:
		x.W.Int(0)
		return
	case e.Type() != keyspace.TypeString:
		x.W.Error("ERR Key should be of string type if conditions are specified")
		return
	}
	var cond int
	switch c := x.Args[2]; {
	case cArgIs(c, "ifeq"):
		cond = optIfEq
	case cArgIs(c, "ifne"):
		cond = optIfNe
	case cArgIs(c, "ifdeq"):
		cond = optIfDeq
	case cArgIs(c, "ifdne"):
		cond = optIfDne
	default:
		x.W.Error("ERR Invalid condition. Use IFEQ, IFNE, IFDEQ, or IFDNE")
		return
	}
	if x.badDigest(cond, match) {
		return
	}
	if !ifHolds(cond, match, true, e.Value()) {
		x.W.Int(0)
		return
	}
	x.DB.DeleteEntry(&e)
	x.notify(notifyGeneric, "del", key)
	x.dirty++
	x.W.Int(1)
	x.propagateAs(argDEL, key)
}

// existsCommand counts existing keys without touching them, as Redis does.
func existsCommand(x *Ctx) { countKeys(x, false) }

func touchCommand(x *Ctx) { countKeys(x, x.touch()) }

func countKeys(x *Ctx, touch bool) {
	n := 0
	for _, key := range x.Args[1:] {
		if _, found := x.lookupReadTouch(key, touch); found {
			n++
		}
	}
	x.W.Int(int64(n))
}

func typeCommand(x *Ctx) {
	if e, found := x.lookupReadTouch(x.Args[1], false); found {
		x.W.Simple(e.Type().Name())
		return
	}
	x.W.Simple("none")
}

// moveEntry stores e under key in db, with its type, encoding, TTL and access
// clock: RENAME and MOVE keep the object itself in Redis. The caller deletes
// the source.
func (x *Ctx) moveEntry(db *keyspace.DB, key []byte, e *keyspace.Entry) {
	access := e.Access()
	moved := db.SetFrom(key, e, false, x.Now)
	db.SetAccess(&moved, access)
}

func renameCommand(x *Ctx, nx bool) {
	src, dst := x.Args[1], x.Args[2]
	e, found := x.lookupWrite(src)
	if !found {
		x.W.Error(errNoSuchKey)
		return
	}
	if string(src) == string(dst) {
		if nx {
			x.W.Int(0)
		} else {
			x.W.OK()
		}
		return
	}
	de, exists := x.lookupWrite(dst)
	was := de.Type()
	if exists {
		if nx {
			x.W.Int(0)
			return
		}
		// As Redis: the old key goes first, so dst is added anew ("new").
		x.DB.Delete(dst)
	}
	// Lookups above may have removed expired keys; look src up again (without
	// touching it twice) so its view is current, then copy before deleting it.
	e, _ = x.DB.Lookup(src, x.Now, false)
	typ := e.Type()
	x.moveEntry(x.DB, dst, &e)
	x.DB.Delete(src)
	x.notify(notifyGeneric, "rename_from", src)
	x.notify(notifyGeneric, "rename_to", dst)
	if exists {
		x.overwrote(dst, was, typ)
	}
	x.dirty++
	if nx {
		x.W.Int(1)
	} else {
		x.W.OK()
	}
}

func copyCommand(x *Ctx) {
	src, dst := x.Args[1], x.Args[2]
	target := x.DB
	replace := false
	for i := 3; i < len(x.Args); i++ {
		switch opt := strings.ToLower(string(x.Args[i])); {
		case opt == "replace":
			replace = true
		case opt == "db" && i+1 < len(x.Args):
			n, ok := x.dbIndex(x.Args[i+1])
			if !ok {
				return
			}
			target = x.s.ks.DB(n)
			i++
		default:
			x.W.Error(errSyntax)
			return
		}
	}
	if x.s.cluster != nil && (target != x.DB || x.DB != x.s.ks.DB(0)) {
		x.W.Error(errCopyDBCluster)
		return
	}
	if target == x.DB && string(src) == string(dst) {
		x.W.Error(errSameObject)
		return
	}
	e, found := x.lookupWrite(src)
	if !found {
		x.W.Int(0)
		return
	}
	de, exists := target.Lookup(dst, x.Now, x.touch())
	was := de.Type()
	if exists {
		if !replace {
			x.W.Int(0)
			return
		}
		target.Delete(dst) // the copy is a new object, with a fresh access clock
		// src may share dst's shard: deleting dst can move its index slot.
		e, _ = x.DB.Lookup(src, x.Now, false)
	}
	// The copy is a new object: it gets a fresh access clock.
	typ := e.Type()
	target.SetFrom(dst, &e, true, x.Now)
	x.s.notifyIn(x.c, notifyGeneric, "copy_to", dst, target.ID())
	if exists {
		x.overwroteIn(target.ID(), dst, was, typ)
	}
	x.dirty++
	x.W.Int(1)
}

// dbIndex parses a database number argument as Redis does (an int, then a
// database that exists), replying with its errors.
func (x *Ctx) dbIndex(arg []byte) (int, bool) {
	n, ok := strnum.ParseInt(arg)
	switch {
	case !ok:
		x.W.Error(errNotInt)
	case n < math.MinInt32 || n > math.MaxInt32:
		x.W.Error(errIntRange)
	case n < 0 || n >= int64(x.s.ks.Len()):
		x.W.Error(errDBIndex)
	default:
		return int(n), true
	}
	return 0, false
}

// errIntRange is Redis's error for an integer argument outside a C int.
const errIntRange = "ERR value is out of range, value must between -2147483648 and 2147483647"

func moveCommand(x *Ctx) {
	if x.s.cluster != nil {
		x.W.Error(errMoveCluster)
		return
	}
	n, ok := x.dbIndex(x.Args[2])
	if !ok {
		return
	}
	target := x.s.ks.DB(n)
	if target == x.DB {
		x.W.Error(errSameObject)
		return
	}
	key := x.Args[1]
	e, found := x.lookupWrite(key)
	if !found {
		x.W.Int(0)
		return
	}
	if _, exists := target.Lookup(key, x.Now, x.touch()); exists {
		x.W.Int(0)
		return
	}
	x.moveEntry(target, key, &e)
	x.DB.Delete(key)
	x.notify(notifyGeneric, "move_from", key)
	x.s.notifyIn(x.c, notifyGeneric, "move_to", key, target.ID())
	x.dirty++
	x.W.Int(1)
}

func keysCommand(x *Ctx) {
	pattern := x.Args[1]
	all := len(pattern) == 1 && pattern[0] == '*'
	x.collect.reset()
	x.DB.Keys(x.Now, func(key []byte) {
		if all || glob.Match(pattern, key, false) {
			x.collect.add(key)
		}
	})
	x.collect.writeArray(x.W)
}

func scanCommand(x *Ctx) {
	cursor, ok := strnum.ParseCursor(x.Args[1])
	if !ok {
		x.W.Error("ERR invalid cursor")
		return
	}
	opts, ok := x.parseScanOptions(x.Args[2:], true)
	if !ok {
		return
	}
	var match func(key []byte) bool
	if opts.pattern != nil {
		match = opts.matches
	}
	x.collect.reset()
	next := x.DB.Scan(cursor, opts.limit(), x.Now, match, func(key []byte, t keyspace.Type) {
		if !opts.hasType || cArgIs(opts.typeName, t.Name()) {
			x.collect.add(key)
		}
	})
	x.writeScanReply(next)
}

func randomkeyCommand(x *Ctx) {
	if key, ok := x.DB.RandomKey(x.Now); ok {
		x.W.Bulk(key)
		return
	}
	x.W.Null()
}

func expireCommand(x *Ctx, unitMs int64, absolute bool) {
	// As Redis: the options are checked before the time.
	var nx, xx, gt, lt bool
	for _, a := range x.Args[3:] {
		switch {
		case cArgIs(a, "nx"):
			nx = true
		case cArgIs(a, "xx"):
			xx = true
		case cArgIs(a, "gt"):
			gt = true
		case cArgIs(a, "lt"):
			lt = true
		default:
			x.W.Error("ERR Unsupported option " + cString(a))
			return
		}
	}
	if nx && (xx || gt || lt) {
		x.W.Error("ERR NX and XX, GT or LT options at the same time are not compatible")
		return
	}
	if gt && lt {
		x.W.Error("ERR GT and LT options at the same time are not compatible")
		return
	}
	v, ok := strnum.ParseInt(x.Args[2])
	if !ok {
		x.W.Error(errNotInt)
		return
	}
	// Overflow checks as Redis: the unit conversion, then adding the base time.
	if v > math.MaxInt64/unitMs || v < math.MinInt64/unitMs {
		x.W.Error(errExpireTime(x.cmd.Name))
		return
	}
	when := v * unitMs
	if !absolute {
		var ok bool
		if when, ok = addInt(x.Now, when); !ok {
			x.W.Error(errExpireTime(x.cmd.Name))
			return
		}
	}
	e, found := x.lookupWrite(x.Args[1])
	if !found {
		x.W.Int(0)
		return
	}
	cur := e.ExpireAt()
	switch {
	case nx && cur != 0, xx && cur == 0,
		gt && (cur == 0 || when <= cur),
		lt && cur != 0 && when >= cur:
		x.W.Int(0)
		return
	}
	if when <= x.Now {
		x.DB.DeleteEntry(&e)
		x.notify(notifyGeneric, "del", x.Args[1])
	} else {
		x.DB.SetExpire(&e, when, x.Now)
		x.notify(notifyGeneric, "expire", x.Args[1])
	}
	x.dirty++
	x.W.Int(1)
	switch {
	case !x.propagating():
	case when <= x.Now:
		x.propagateDel(x.Args[1], x.s.cfg.LazyFreeLazyExpire())
	case unitMs != 1 || !absolute:
		// PEXPIREAT with the absolute time; the options are kept as sent.
		// PEXPIREAT itself propagates as sent.
		argv := make([][]byte, 0, len(x.Args))
		argv = append(argv, argPEXPIREAT, x.Args[1], intArg(when))
		x.propagateAs(append(argv, x.Args[3:]...)...)
	}
}

func ttlCommand(x *Ctx, ms, absolute bool) {
	e, found := x.lookupReadTouch(x.Args[1], false)
	switch {
	case !found:
		x.W.Int(-2)
	case e.ExpireAt() == 0:
		x.W.Int(-1)
	case absolute && ms:
		x.W.Int(e.ExpireAt())
	case absolute:
		x.W.Int(roundSeconds(e.ExpireAt()))
	default:
		ttl := max(e.ExpireAt()-x.Now, 0)
		if !ms {
			ttl = roundSeconds(ttl)
		}
		x.W.Int(ttl)
	}
}

// roundSeconds rounds a non-negative ms count to seconds as Redis does, whose
// compiled (ms+500)/1000 is unsigned: the largest expire time rounds up
// rather than overflowing.
func roundSeconds(ms int64) int64 { return int64((uint64(ms) + 500) / 1000) }

func persistCommand(x *Ctx) {
	e, found := x.lookupWrite(x.Args[1])
	if !found || e.ExpireAt() == 0 {
		x.W.Int(0)
		return
	}
	x.DB.SetExpire(&e, 0, x.Now)
	x.notify(notifyGeneric, "persist", x.Args[1])
	x.dirty++
	x.W.Int(1)
}

// sharedIntegerRefcount is what OBJECT REFCOUNT reports for the small integers
// Redis shares between keys (0..9999) when no LRU/LFU maxmemory policy is set.
const sharedIntegerRefcount = math.MaxInt32

func objectCommand(x *Ctx, sub string) {
	e, found := x.DB.Lookup(x.Args[2], x.Now, false)
	if !found {
		x.W.Null()
		return
	}
	lfu := strings.Contains(x.s.cfg.MaxMemoryPolicy(), "lfu")
	switch sub {
	case "encoding":
		x.W.BulkString(e.Encoding().Name())
	case "refcount":
		if isSharedInteger(&e, x.s.sharedIntegerPolicy()) {
			x.W.Int(sharedIntegerRefcount)
		} else {
			x.W.Int(1)
		}
	case "idletime":
		if lfu {
			x.W.Error("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
			return
		}
		x.W.Int(values.IdleSeconds(e.Access(), x.Now))
	case "freq":
		if !lfu {
			x.W.Error("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
			return
		}
		x.W.Int(keyspace.LFUCounter(e.Access(), x.Now, x.s.cfg.LFUDecayTime()))
	}
}

// watchAccessPolicy keeps the keyspace's access clocks (LRU or LFU) in step
// with maxmemory-policy, lfu-log-factor and lfu-decay-time. The server calls it
// once, after creating the keyspace.
func (s *Server) watchAccessPolicy() {
	sync := func() {
		s.ks.SetLFU(strings.Contains(s.cfg.MaxMemoryPolicy(), "lfu"), s.cfg.LFULogFactor(), s.cfg.LFUDecayTime())
	}
	sync()
	for _, name := range []string{"maxmemory-policy", "lfu-log-factor", "lfu-decay-time"} {
		s.cfg.OnChange(name, sync)
	}
}

// sharedIntegerPolicy is the maxmemory policy as far as shared integers go:
// Redis shares them unless maxmemory is set with an LRU or LFU policy.
func (s *Server) sharedIntegerPolicy() string {
	if s.cfg.MaxMemory() == 0 {
		return ""
	}
	return s.cfg.MaxMemoryPolicy()
}

// isSharedInteger reports whether Redis would store e's value as one of its
// shared integers under policy (see sharedIntegerPolicy).
func isSharedInteger(e *keyspace.Entry, policy string) bool {
	if e.Encoding() != keyspace.EncInt || strings.Contains(policy, "lru") || strings.Contains(policy, "lfu") || strings.Contains(policy, "lrm") {
		return false
	}
	v, _ := strnum.ParseInt(e.Value())
	return v >= 0 && v < 10000
}

func objectHelp(x *Ctx) {
	writeHelp(x, "OBJECT", []string{
		"ENCODING <key>", "    Return the kind of internal representation used in order to store the value",
		"    associated with a <key>.",
		"FREQ <key>", "    Return the access frequency index of the <key>. The returned integer is",
		"    proportional to the logarithm of the recent access frequency of the key.",
		"IDLETIME <key>", "    Return the idle time of the <key>, that is the approximated number of",
		"    seconds elapsed since the last access to the key.",
		"REFCOUNT <key>", "    Return the number of references of the value associated with the specified",
		"    <key>.",
	})
}

// flushMode checks the optional ASYNC|SYNC at args[at] of FLUSHDB, FLUSHALL,
// SCRIPT FLUSH and FUNCTION FLUSH, replying errText when it is wrong.
func flushMode(x *Ctx, at int, errText string) bool {
	if len(x.Args) > at+1 || (len(x.Args) == at+1 && !cArgIs(x.Args[at], "async") && !cArgIs(x.Args[at], "sync")) {
		x.W.Error(errText)
		return false
	}
	return true
}

func flushdbCommand(x *Ctx) {
	if !flushMode(x, 1, errSyntax) {
		return
	}
	x.dirty += int(x.DB.Len()) + 1
	x.s.watches.touchedExisting(x.DB.ID(), x.Now, x.DB)
	x.s.invalidateAll(x.c)
	x.DB.Flush()
	x.W.OK()
}

func flushallCommand(x *Ctx) {
	if !flushMode(x, 1, errSyntax) {
		return
	}
	x.s.invalidateAll(x.c)
	for i := range x.s.ks.Len() {
		db := x.s.ks.DB(i)
		x.dirty += int(db.Len())
		x.s.watches.touchedExisting(i, x.Now, db)
		db.Flush()
	}
	x.dirty++
	x.W.OK()
}

func swapdbCommand(x *Ctx) {
	if x.s.cluster != nil {
		x.W.Error(errSwapdbCluster)
		return
	}
	a, ok1 := strnum.ParseInt(x.Args[1])
	if !ok1 || a < math.MinInt32 || a > math.MaxInt32 {
		x.W.Error("ERR invalid first DB index")
		return
	}
	b, ok2 := strnum.ParseInt(x.Args[2])
	if !ok2 || b < math.MinInt32 || b > math.MaxInt32 {
		x.W.Error("ERR invalid second DB index")
		return
	}
	n := int64(x.s.ks.Len())
	if a < 0 || b < 0 || a >= n || b >= n {
		x.W.Error(errDBIndex)
		return
	}
	id := x.DB.ID()
	da, db := x.s.ks.DB(int(a)), x.s.ks.DB(int(b))
	x.s.watches.touchedExisting(int(a), x.Now, da, db)
	x.s.watches.touchedExisting(int(b), x.Now, da, db)
	x.s.ks.SwapDB(int(a), int(b))
	// The client stays on its database number, which now holds the other
	// database's keys; SWAPDB propagates under that number, as in Redis.
	x.DB = x.s.ks.DB(id)
	x.dirty++
	x.W.OK()
}
