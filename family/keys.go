package family

import (
	"bytes"
	"math"
	"strings"

	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/glob"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/values"
)

func registerKeys(bind binder) {
	bind("del", delCommand)
	bind("delex", delexCommand)
	bind("unlink", delCommand)
	bind("exists", existsCommand)
	bind("touch", touchCommand)
	bind("type", typeCommand)
	bind("rename", func(x *command.Ctx) { renameCommand(x, false) })
	bind("renamenx", func(x *command.Ctx) { renameCommand(x, true) })
	bind("copy", copyCommand)
	bind("move", moveCommand)
	bind("keys", keysCommand)
	bind("scan", scanCommand)
	bind("randomkey", randomkeyCommand)
	bind("expire", func(x *command.Ctx) { expireCommand(x, 1000, false) })
	bind("pexpire", func(x *command.Ctx) { expireCommand(x, 1, false) })
	bind("expireat", func(x *command.Ctx) { expireCommand(x, 1000, true) })
	bind("pexpireat", func(x *command.Ctx) { expireCommand(x, 1, true) })
	bind("ttl", func(x *command.Ctx) { ttlCommand(x, false, false) })
	bind("pttl", func(x *command.Ctx) { ttlCommand(x, true, false) })
	bind("expiretime", func(x *command.Ctx) { ttlCommand(x, false, true) })
	bind("pexpiretime", func(x *command.Ctx) { ttlCommand(x, true, true) })
	bind("persist", persistCommand)
	bind("dbsize", func(x *command.Ctx) { x.W.Int(x.DB.Len()) })
	bind("flushdb", flushdbCommand)
	bind("flushall", flushallCommand)
	bind("swapdb", swapdbCommand)
	bind("object|encoding", func(x *command.Ctx) { objectCommand(x, "encoding") })
	bind("object|idletime", func(x *command.Ctx) { objectCommand(x, "idletime") })
	bind("object|freq", func(x *command.Ctx) { objectCommand(x, "freq") })
	bind("object|refcount", func(x *command.Ctx) { objectCommand(x, "refcount") })
	bind("object|help", objectHelp)
	bind("bless|set", func(x *command.Ctx) { blessCommand(x, true) })
	bind("bless|clear", func(x *command.Ctx) { blessCommand(x, false) })
	bind("bless|get", blessGetCommand)
	bind("bless|scan", blessScanCommand)
}

func delCommand(x *command.Ctx) {
	n := 0
	for _, key := range x.Args[1:] {
		if _, found := x.LookupWrite(key); found && x.DB.Delete(key) {
			x.Notify(config.EventGeneric, "del", key)
			n++
		}
	}
	x.Dirty += n
	x.W.Int(int64(n))
}

// delexCommand is DELEX (Redis 8.4): DEL of one key, or, with an IFEQ,
// IFNE, IFDEQ or IFDNE condition, of a string key whose value (or digest)
// meets it (https://redis.io/docs/latest/commands/delex/), with Redis's
// checks in its order: the key, its type, then the condition. A deletion
// propagates as DEL.
func delexCommand(x *command.Ctx) {
	if len(x.Args) == 2 {
		delCommand(x)
		return
	}
	if len(x.Args) != 4 {
		x.W.Error(command.ErrArity(x.Name))
		return
	}
	key, match := x.Args[1], x.Args[3]
	e, found := x.LookupRead(key)
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
	case cstr.ArgIs(c, "ifeq"):
		cond = optIfEq
	case cstr.ArgIs(c, "ifne"):
		cond = optIfNe
	case cstr.ArgIs(c, "ifdeq"):
		cond = optIfDeq
	case cstr.ArgIs(c, "ifdne"):
		cond = optIfDne
	default:
		x.W.Error("ERR Invalid condition. Use IFEQ, IFNE, IFDEQ, or IFDNE")
		return
	}
	if badDigest(x, cond, match) {
		return
	}
	if !ifHolds(cond, match, true, e.Value()) {
		x.W.Int(0)
		return
	}
	x.DB.DeleteEntry(&e)
	x.Notify(config.EventGeneric, "del", key)
	x.Dirty++
	x.W.Int(1)
	x.PropagateAs(argDEL, key)
}

// existsCommand counts existing keys without touching them, as Redis does.
func existsCommand(x *command.Ctx) { countKeys(x, false) }

func touchCommand(x *command.Ctx) { countKeys(x, x.Touch()) }

func countKeys(x *command.Ctx, touch bool) {
	n := 0
	for _, key := range x.Args[1:] {
		if _, found := x.LookupReadTouch(key, touch); found {
			n++
		}
	}
	x.W.Int(int64(n))
}

func typeCommand(x *command.Ctx) {
	if e, found := x.LookupReadTouch(x.Args[1], false); found {
		x.W.Simple(e.Type().Name())
		return
	}
	x.W.Simple("none")
}

// moveEntry stores e under key in db, with its type, encoding and TTL, and
// the access clock of a new key: RENAME and MOVE keep the object itself in
// Redis, and Redis 7.2+ starts its LRU clock or LFU counter over (7.0 kept
// them). The caller deletes the source.
func moveEntry(x *command.Ctx, db *keyspace.DB, key []byte, e *keyspace.Entry) {
	moved := db.SetFrom(key, e, false, x.Now)
	db.ResetAccess(&moved, x.Now)
}

func renameCommand(x *command.Ctx, nx bool) {
	src, dst := x.Args[1], x.Args[2]
	e, found := x.LookupWrite(src)
	if !found {
		x.W.Error(command.ErrNoSuchKey)
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
	de, exists := x.LookupWrite(dst)
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
	moveEntry(x, x.DB, dst, &e)
	x.DB.Delete(src)
	x.Notify(config.EventGeneric, "rename_from", src)
	x.Notify(config.EventGeneric, "rename_to", dst)
	if exists {
		x.Overwrote(dst, was, typ)
	}
	x.Dirty++
	if nx {
		x.W.Int(1)
	} else {
		x.W.OK()
	}
}

func copyCommand(x *command.Ctx) {
	src, dst := x.Args[1], x.Args[2]
	target := x.DB
	replace := false
	for i := 3; i < len(x.Args); i++ {
		switch opt := strings.ToLower(string(x.Args[i])); {
		case opt == "replace":
			replace = true
		case opt == "db" && i+1 < len(x.Args):
			n, ok := dbIndex(x, x.Args[i+1])
			if !ok {
				return
			}
			target = x.Host().Keyspace().DB(n)
			i++
		default:
			x.W.Error(command.ErrSyntax)
			return
		}
	}
	if x.Host().ClusterEnabled() && (target != x.DB || x.DB != x.Host().Keyspace().DB(0)) {
		x.W.Error(errCopyDBCluster)
		return
	}
	if target != x.DB {
		x.Conn().ClusterIncompatible()
	}
	if target == x.DB && string(src) == string(dst) {
		x.W.Error(command.ErrSameObject)
		return
	}
	e, found := x.LookupWrite(src)
	if !found {
		x.W.Int(0)
		return
	}
	de, exists := target.Lookup(dst, x.Now, x.Touch())
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
	x.NotifyIn(target.ID(), config.EventGeneric, "copy_to", dst)
	if exists {
		x.OverwroteIn(target.ID(), dst, was, typ)
	}
	x.Dirty++
	x.W.Int(1)
}

// dbIndex parses a database number argument as Redis does (an int, then a
// database that exists), replying with its errors.
func dbIndex(x *command.Ctx, arg []byte) (int, bool) {
	n, ok := strnum.ParseInt(arg)
	switch {
	case !ok:
		x.W.Error(command.ErrNotInt)
	case n < math.MinInt32 || n > math.MaxInt32:
		x.W.Error(errIntRange)
	case n < 0 || n >= int64(x.Host().Keyspace().Len()):
		x.W.Error(command.ErrDBIndex)
	default:
		return int(n), true
	}
	return 0, false
}

// errIntRange is Redis's error for an integer argument outside a C int.
const errIntRange = "ERR value is out of range, value must between -2147483648 and 2147483647"

func moveCommand(x *command.Ctx) {
	if x.Host().ClusterEnabled() {
		x.W.Error(errMoveCluster)
		return
	}
	n, ok := dbIndex(x, x.Args[2])
	if !ok {
		return
	}
	target := x.Host().Keyspace().DB(n)
	if target == x.DB {
		x.W.Error(command.ErrSameObject)
		return
	}
	x.Conn().ClusterIncompatible()
	key := x.Args[1]
	e, found := x.LookupWrite(key)
	if !found {
		x.W.Int(0)
		return
	}
	if _, exists := target.Lookup(key, x.Now, x.Touch()); exists {
		x.W.Int(0)
		return
	}
	moveEntry(x, target, key, &e)
	x.DB.Delete(key)
	x.Notify(config.EventGeneric, "move_from", key)
	x.NotifyIn(target.ID(), config.EventGeneric, "move_to", key)
	x.Dirty++
	x.W.Int(1)
}

func keysCommand(x *command.Ctx) {
	pattern := x.Args[1]
	all := len(pattern) == 1 && pattern[0] == '*'
	x.Collect.Reset()
	x.DB.Keys(x.Now, func(key []byte) {
		if all || glob.Match(pattern, key, false) {
			x.Collect.Add(key)
		}
	})
	x.Collect.WriteArray(x.W)
}

func scanCommand(x *command.Ctx) {
	cursor, ok := strnum.ParseCursor(x.Args[1])
	if !ok {
		x.W.Error("ERR invalid cursor")
		return
	}
	opts, ok := x.ParseScanOptions(x.Args[2:], true)
	if !ok {
		return
	}
	var match func(key []byte) bool
	if opts.Pattern != nil {
		match = opts.Matches
	}
	x.Collect.Reset()
	next := x.DB.Scan(cursor, opts.Limit(), x.Now, match, func(key []byte, t keyspace.Type) {
		// Compared as strcasecmp does: a module type's name has capitals.
		if !opts.HasType || bytes.EqualFold(cstr.Bytes(opts.TypeName), []byte(t.Name())) {
			x.Collect.Add(key)
		}
	})
	x.WriteScanReply(next)
}

func randomkeyCommand(x *command.Ctx) {
	if key, ok := x.DB.RandomKey(x.Now); ok {
		x.W.Bulk(key)
		return
	}
	x.W.Null()
}

func expireCommand(x *command.Ctx, unitMs int64, absolute bool) {
	// As Redis: the options are checked before the time.
	var nx, xx, gt, lt bool
	for _, a := range x.Args[3:] {
		switch {
		case cstr.ArgIs(a, "nx"):
			nx = true
		case cstr.ArgIs(a, "xx"):
			xx = true
		case cstr.ArgIs(a, "gt"):
			gt = true
		case cstr.ArgIs(a, "lt"):
			lt = true
		default:
			x.W.Error("ERR Unsupported option " + cstr.String(a))
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
		x.W.Error(command.ErrNotInt)
		return
	}
	// Overflow checks as Redis: the unit conversion, then adding the base time.
	if v > math.MaxInt64/unitMs || v < math.MinInt64/unitMs {
		x.W.Error(errExpireTime(x.Name))
		return
	}
	when := v * unitMs
	if !absolute {
		var ok bool
		if when, ok = addInt(x.Now, when); !ok {
			x.W.Error(errExpireTime(x.Name))
			return
		}
	}
	e, found := x.LookupWrite(x.Args[1])
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
	expired := x.AlreadyExpired(when)
	if expired {
		x.DB.DeleteEntry(&e)
		x.Notify(config.EventGeneric, "del", x.Args[1])
	} else {
		x.DB.SetExpire(&e, when, x.Now)
		x.Notify(config.EventGeneric, "expire", x.Args[1])
	}
	x.Dirty++
	x.W.Int(1)
	switch {
	case !x.Propagating():
	case expired:
		propagateDel(x, x.Args[1], x.Config().LazyFreeLazyExpire())
	case unitMs != 1 || !absolute:
		// PEXPIREAT with the absolute time; the options are kept as sent.
		// PEXPIREAT itself propagates as sent.
		argv := make([][]byte, 0, len(x.Args))
		argv = append(argv, argPEXPIREAT, x.Args[1], command.IntArg(when))
		x.PropagateAs(append(argv, x.Args[3:]...)...)
	}
}

func ttlCommand(x *command.Ctx, ms, absolute bool) {
	e, found := x.LookupReadTouch(x.Args[1], false)
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

func persistCommand(x *command.Ctx) {
	e, found := x.LookupWrite(x.Args[1])
	if !found || e.ExpireAt() == 0 {
		x.W.Int(0)
		return
	}
	x.DB.SetExpire(&e, 0, x.Now)
	x.Notify(config.EventGeneric, "persist", x.Args[1])
	x.Dirty++
	x.W.Int(1)
}

// SharedIntegerRefcount is what OBJECT REFCOUNT reports for the small integers
// Redis shares between keys (0..9999) when no LRU/LFU maxmemory policy is set.
const SharedIntegerRefcount = math.MaxInt32

func objectCommand(x *command.Ctx, sub string) {
	e, found := x.DB.Lookup(x.Args[2], x.Now, false)
	if !found {
		x.W.Null()
		return
	}
	policy := x.Config().MaxMemoryPolicy()
	lfu, lrfu := strings.HasSuffix(policy, "-lfu"), strings.HasSuffix(policy, "-lrfu")
	switch sub {
	case "encoding":
		x.W.BulkString(e.Encoding().Name())
	case "refcount":
		if IsSharedInteger(&e, x.Host().SharedIntegerPolicy()) {
			x.W.Int(SharedIntegerRefcount)
		} else {
			x.W.Int(1)
		}
	case "idletime":
		if lrfu {
			x.W.Error("ERR An LRFU maxmemory policy is selected, idle time not tracked in seconds.")
			return
		}
		if lfu {
			x.W.Error("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
			return
		}
		x.W.Int(values.IdleSeconds(e.Access(), x.Now))
	case "freq":
		if lrfu {
			x.W.Int(x.DB.LRFUHits(&e)) // its hits, aged
			return
		}
		if !lfu {
			x.W.Error("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
			return
		}
		x.W.Int(keyspace.LFUCounter(e.Access(), x.Now, x.Config().LFUDecayTime()))
	}
}

// IsSharedInteger reports whether Redis would store e's value as one of its
// shared integers under policy (see sharedIntegerPolicy).
func IsSharedInteger(e *keyspace.Entry, policy string) bool {
	if e.Encoding() != keyspace.EncInt || strings.Contains(policy, "lru") || strings.Contains(policy, "lfu") || strings.Contains(policy, "lrm") || strings.Contains(policy, "lrfu") {
		return false
	}
	v, _ := strnum.ParseInt(e.Value())
	return v >= 0 && v < 10000
}

func objectHelp(x *command.Ctx) {
	x.WriteHelp("OBJECT", []string{
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

func flushdbCommand(x *command.Ctx) {
	if !x.FlushMode(1, command.ErrSyntax) {
		return
	}
	x.Dirty += int(x.DB.Len()) + 1
	x.Host().TouchWatched(x.DB.ID(), x.Now, x.DB)
	x.Conn().InvalidateAll()
	x.DB.Flush()
	x.W.OK()
}

func flushallCommand(x *command.Ctx) {
	if !x.FlushMode(1, command.ErrSyntax) {
		return
	}
	x.Conn().InvalidateAll()
	for i := range x.Host().Keyspace().Len() {
		db := x.Host().Keyspace().DB(i)
		x.Dirty += int(db.Len())
		x.Host().TouchWatched(i, x.Now, db)
		db.Flush()
	}
	if x.Host().FlushedAll(x.Now) {
		x.Dirty = 0 // the save took the flushed keys' changes
	}
	x.Dirty++
	x.W.OK()
}

func swapdbCommand(x *command.Ctx) {
	if x.Host().ClusterEnabled() {
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
	n := int64(x.Host().Keyspace().Len())
	if a < 0 || b < 0 || a >= n || b >= n {
		x.W.Error(command.ErrDBIndex)
		return
	}
	x.Conn().ClusterIncompatible()
	id := x.DB.ID()
	da, db := x.Host().Keyspace().DB(int(a)), x.Host().Keyspace().DB(int(b))
	x.Host().TouchWatched(int(a), x.Now, da, db)
	x.Host().TouchWatched(int(b), x.Now, da, db)
	x.Host().Keyspace().SwapDB(int(a), int(b))
	// The client stays on its database number, which now holds the other
	// database's keys; SWAPDB propagates under that number, as in Redis.
	x.DB = x.Host().Keyspace().DB(id)
	x.Dirty++
	x.W.OK()
}

// Errors of the commands that work across databases, which a cluster has
// only one of.
const (
	errMoveCluster   = "ERR MOVE is not allowed in cluster mode"
	errSwapdbCluster = "ERR SWAPDB is not allowed in cluster mode"
	errCopyDBCluster = "ERR Copying to another database is not allowed in cluster mode"
)

// BLESS (Redis 8.12, https://redis.io/docs/latest/commands/bless/): a key
// protected from eviction (NO-EVICT, the only flag) is never chosen by any
// maxmemory policy (keyspace/bless.go). The flag persists in files and
// replicates as the command itself, but DUMP leaves it out. The pages give
// no text for an unknown flag: Keyhive answers a syntax error, before it
// looks at the key.
const blessNoEvict = "NO-EVICT"

var argNoEvict = []byte(blessNoEvict)

// blessCommand is BLESS SET (on) and BLESS CLEAR: 1 when the key's flag
// changed, 0 when it already was so, an error for a missing key. Only a
// change is dirty, propagates and raises its event (bless, unbless).
func blessCommand(x *command.Ctx, on bool) {
	if !cstr.ArgIs(x.Args[3], "no-evict") {
		x.W.Error(command.ErrSyntax)
		return
	}
	e, found := x.LookupWrite(x.Args[2])
	if !found {
		x.W.Error(command.ErrNoSuchKey)
		return
	}
	if !x.DB.SetBlessed(&e, on) {
		x.W.Int(0)
		return
	}
	x.Dirty++
	event := "bless"
	if !on {
		event = "unbless"
	}
	x.Notify(config.EventGeneric, event, x.Args[2])
	x.W.Int(1)
}

// blessGetCommand is BLESS GET: the key's flags, an empty array when it
// has none. Like TTL, it leaves the key's access clock alone.
func blessGetCommand(x *command.Ctx) {
	e, found := x.LookupReadTouch(x.Args[2], false)
	switch {
	case !found:
		x.W.Error(command.ErrNoSuchKey)
	case e.Blessed():
		x.W.Array(1)
		x.W.Bulk(argNoEvict)
	default:
		x.W.Array(0)
	}
}

// blessScanCommand is BLESS SCAN cursor NO-EVICT [COUNT count]: SCAN's
// cursor and guarantees over the blessed keys, COUNT 1024 by default.
func blessScanCommand(x *command.Ctx) {
	cursor, ok := strnum.ParseCursor(x.Args[2])
	if !ok {
		x.W.Error("ERR invalid cursor")
		return
	}
	if !cstr.ArgIs(x.Args[3], "no-evict") {
		x.W.Error(command.ErrSyntax)
		return
	}
	count := int64(1024)
	switch rest := x.Args[4:]; {
	case len(rest) == 0:
	case len(rest) == 2 && cstr.ArgIs(rest[0], "count"):
		n, ok := strnum.ParseInt(rest[1])
		if !ok {
			x.W.Error(command.ErrNotInt)
			return
		}
		if n < 1 {
			x.W.Error(command.ErrSyntax)
			return
		}
		count = min(n, math.MaxInt32)
	default:
		x.W.Error(command.ErrSyntax)
		return
	}
	x.Collect.Reset()
	next := x.DB.BlessScan(cursor, int(count), x.Now, x.Collect.Add)
	x.WriteScanReply(next)
}
