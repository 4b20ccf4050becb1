package family

import (
	"strconv"

	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/values"
)

func registerHashes(bind binder) {
	bind("hset", func(x *command.Ctx) { hsetCommand(x, false) })
	bind("hmset", func(x *command.Ctx) { hsetCommand(x, true) })
	bind("hsetnx", hsetnxCommand)
	bind("hget", hgetCommand)
	bind("hmget", hmgetCommand)
	bind("hgetall", func(x *command.Ctx) { hgetallCommand(x, true, true) })
	bind("hkeys", func(x *command.Ctx) { hgetallCommand(x, true, false) })
	bind("hvals", func(x *command.Ctx) { hgetallCommand(x, false, true) })
	bind("hdel", hdelCommand)
	bind("hexists", hexistsCommand)
	bind("hlen", hlenCommand)
	bind("hstrlen", hstrlenCommand)
	bind("hincrby", hincrbyCommand)
	bind("hincrbyfloat", hincrbyfloatCommand)
	bind("hrandfield", hrandfieldCommand)
	bind("hscan", hscanCommand)
	bind("hexpire", func(x *command.Ctx) { hexpireCommand(x, 1000, false) })
	bind("hpexpire", func(x *command.Ctx) { hexpireCommand(x, 1, false) })
	bind("hexpireat", func(x *command.Ctx) { hexpireCommand(x, 1000, true) })
	bind("hpexpireat", func(x *command.Ctx) { hexpireCommand(x, 1, true) })
	bind("httl", func(x *command.Ctx) { httlCommand(x, 1000, false) })
	bind("hpttl", func(x *command.Ctx) { httlCommand(x, 1, false) })
	bind("hexpiretime", func(x *command.Ctx) { httlCommand(x, 1000, true) })
	bind("hpexpiretime", func(x *command.Ctx) { httlCommand(x, 1, true) })
	bind("hpersist", hpersistCommand)
	bind("hgetdel", hgetdelCommand)
	bind("hgetex", hgetexCommand)
	bind("hsetex", hsetexCommand)
}

var argHSET = []byte("HSET")

// hsetCommand is HSET, and HMSET, which replies OK instead of the count of
// new fields.
func hsetCommand(x *command.Ctx, replyOK bool) {
	if len(x.Args)%2 != 0 {
		x.W.Error(command.ErrArity(x.Name))
		return
	}
	var h values.HashEdit
	if !command.EditAs(x, x.Args[1], &h) {
		return
	}
	h.ConvertForArgs(x.Args[2:])
	added := 0
	for i := 2; i < len(x.Args); i += 2 {
		if h.Set(x.Args[i], x.Args[i+1]) {
			added++
		}
	}
	x.Committed(h.Commit(), "hset")
	notifyFields(x, "hset", x.Args[1], x.Args[2:], 2)
	x.Dirty += (len(x.Args) - 2) / 2
	if replyOK { // HMSET
		x.W.OK()
	} else {
		x.W.Int(int64(added))
	}
}

// notifyFields publishes event's subkey notification for key naming every
// step-th argument of args (the fields of field-value pairs: 2).
func notifyFields(x *command.Ctx, event string, key []byte, args [][]byte, step int) {
	if !x.SubkeysOn(config.EventHash) {
		return
	}
	for i := 0; i < len(args); i += step {
		x.AddSubkey(args[i])
	}
	x.NotifySubkeys(config.EventHash, event, key)
}

func hsetnxCommand(x *command.Ctx) {
	var h values.HashEdit
	if !command.EditAs(x, x.Args[1], &h) {
		return
	}
	expireFieldIn(x, &h, x.Args[1], x.Args[2])
	if _, exists := h.Get(x.Args[2]); exists {
		x.W.Int(0)
		return
	}
	h.Set(x.Args[2], x.Args[3])
	x.Committed(h.Commit(), "hset")
	notifyFields(x, "hset", x.Args[1], x.Args[2:3], 1)
	x.Dirty++
	x.W.Int(1)
}

func hgetCommand(x *command.Ctx) {
	h, found, ok := command.ReadAs[values.HashView](x, x.Args[1])
	if !ok {
		return
	}
	if !found {
		x.W.Null()
		return
	}
	v, at, exists := h.Lookup(x.Args[2])
	if exists && h.Expired(at) {
		expireFields(x, x.Args[1], x.Args[2:3])
		exists = false
	}
	if exists {
		x.W.Bulk(v)
		return
	}
	x.W.Null()
}

func hmgetCommand(x *command.Ctx) {
	h, found, ok := command.ReadAs[values.HashView](x, x.Args[1])
	if !ok {
		return
	}
	x.W.Array(len(x.Args) - 2)
	expired := false
	for _, f := range x.Args[2:] {
		v, at, exists := h.Lookup(f)
		switch {
		case found && exists && h.Expired(at):
			expired = true
			x.W.Null()
		case found && exists:
			x.W.Bulk(v)
		default:
			x.W.Null()
		}
	}
	if expired { // removed after the reply, with one event, as Redis does
		expireFields(x, x.Args[1], x.Args[2:])
	}
}

func hgetallCommand(x *command.Ctx, withFields, withValues bool) {
	h, found, ok := command.ReadAs[values.HashView](x, x.Args[1])
	if !ok {
		return
	}
	n := 0
	if found {
		n = h.LiveLen()
	}
	if withFields && withValues {
		x.W.Map(n)
	} else {
		x.W.Array(n)
	}
	if !found {
		return
	}
	h.Each(func(f, v []byte) {
		if withFields {
			x.W.Bulk(f)
		}
		if withValues {
			x.W.Bulk(v)
		}
	})
}

func hdelCommand(x *command.Ctx) {
	var h values.HashEdit
	if !command.EditAs(x, x.Args[1], &h) {
		return
	}
	if !h.Found() {
		x.W.Int(0)
		return
	}
	fields := x.Args[2:]
	deleted := 0
	if x.SubkeysOn(config.EventHash) { // field by field, to name those deleted
		for _, f := range fields {
			if h.Delete([][]byte{f}) > 0 {
				x.AddSubkey(f)
				deleted++
			}
		}
	} else {
		deleted = h.Delete(fields)
	}
	x.Committed(h.Commit(), command.EventIf(deleted > 0, "hdel"))
	x.NotifySubkeys(config.EventHash, "hdel", x.Args[1])
	x.Dirty += deleted
	x.W.Int(int64(deleted))
}

func hexistsCommand(x *command.Ctx) {
	h, found, ok := command.ReadAs[values.HashView](x, x.Args[1])
	if !ok {
		return
	}
	if found && liveField(x, h, x.Args[1], x.Args[2]) {
		x.W.Int(1)
	} else {
		x.W.Int(0)
	}
}

func hlenCommand(x *command.Ctx) {
	h, found, ok := command.ReadAs[values.HashView](x, x.Args[1])
	if !ok {
		return
	}
	if !found {
		x.W.Int(0)
		return
	}
	x.W.Int(int64(h.Len()))
}

func hstrlenCommand(x *command.Ctx) {
	h, found, ok := command.ReadAs[values.HashView](x, x.Args[1])
	if !ok {
		return
	}
	var v []byte
	if found && liveField(x, h, x.Args[1], x.Args[2]) {
		v, _ = h.Get(x.Args[2])
	}
	x.W.Int(int64(len(v)))
}

func hincrbyCommand(x *command.Ctx) {
	incr, ok := strnum.ParseInt(x.Args[3])
	if !ok {
		x.W.Error(command.ErrNotInt)
		return
	}
	var h values.HashEdit
	if !command.EditAs(x, x.Args[1], &h) {
		return
	}
	expireFieldIn(x, &h, x.Args[1], x.Args[2])
	var cur int64
	if v, exists := h.Get(x.Args[2]); exists {
		if cur, ok = strnum.ParseInt(v); !ok {
			x.W.Error("ERR hash value is not an integer")
			return
		}
	}
	if cur, ok = addInt(cur, incr); !ok {
		x.W.Error(command.ErrOverflow)
		return
	}
	var buf [20]byte
	h.SetKeepTTL(x.Args[2], strconv.AppendInt(buf[:0], cur, 10))
	x.Committed(h.Commit(), "hincrby")
	notifyFields(x, "hincrby", x.Args[1], x.Args[2:3], 1)
	x.Dirty++
	x.W.Int(cur)
}

func hincrbyfloatCommand(x *command.Ctx) {
	incr, ok := strnum.ParseLongDouble(x.Args[3])
	if !ok {
		x.W.Error(command.ErrNotFloat)
		return
	}
	if incr.IsInf() {
		x.W.Error("ERR value is NaN or Infinity")
		return
	}
	key, field := x.Args[1], x.Args[2]
	var h values.HashEdit
	if !command.EditAs(x, key, &h) {
		return
	}
	expireFieldIn(x, &h, key, field)
	cur, _ := strnum.ParseLongDouble([]byte("0"))
	if v, exists := h.Get(field); exists {
		if cur, ok = strnum.ParseLongDouble(v); !ok {
			x.W.Error("ERR hash value is not a float")
			return
		}
	}
	sum, ok := strnum.AddLongDouble(cur, incr)
	if !ok {
		x.W.Error("ERR increment would produce NaN or Infinity")
		return
	}
	h.SetKeepTTL(field, sum)
	x.Committed(h.Commit(), "hincrbyfloat")
	notifyFields(x, "hincrbyfloat", key, x.Args[2:3], 1)
	x.Dirty++
	x.W.Bulk(sum)
	// The result, not the increment: float arithmetic may differ on replay.
	x.PropagateAs(argHSET, key, field, sum)
}

func hrandfieldCommand(x *command.Ctx) {
	if len(x.Args) >= 3 {
		hrandfieldWithCount(x)
		return
	}
	h, found, ok := command.ReadAs[values.HashView](x, x.Args[1])
	if found && ok && expireAllFields(x, &h) {
		found = false
	}
	switch {
	case !ok:
	case !found:
		x.W.Null()
	default:
		h.EachRandom(1, func(f, _ []byte) { x.W.Bulk(f) })
	}
}

func hrandfieldWithCount(x *command.Ctx) {
	l, withValues, ok := parseRandomCount(x, "withvalues")
	if !ok {
		return
	}
	h, found, ok := command.ReadAs[values.HashView](x, x.Args[1])
	if !ok {
		return
	}
	if found && expireAllFields(x, &h) {
		h = values.HashView{}
	}
	pair := func(f, v []byte) {
		if withValues && x.W.Proto >= 3 {
			x.W.Array(2)
		}
		x.W.Bulk(f)
		if withValues {
			x.W.Bulk(v)
		}
	}
	writeRandom(x, l, h.Len(), withValues, randomDraws{
		repeats:  func(n int) { h.EachRandom(n, pair) },
		all:      func() { h.Each(pair) },
		distinct: func(n int) { h.RandomDistinct(n, pair) },
	})
}

func hscanCommand(x *command.Ctx) {
	h, cursor, opts, ok := command.BeginScan[values.HashView](x)
	if !ok {
		return
	}
	add := func(f, v []byte) {
		if opts.Matches(f) {
			x.Collect.Add(f)
			if !opts.NoValues {
				x.Collect.Add(v)
			}
		}
	}
	var next uint64
	if h.Obj != nil {
		next = h.Obj.Scan(cursor, opts.Limit(), func(f, v []byte) {
			if _, at, _ := h.Lookup(f); !h.HasTTLs() || !h.Expired(at) {
				add(f, v)
			}
		})
	} else {
		h.Each(add) // a listpack is returned whole, as Redis does
	}
	x.WriteScanReply(next)
}

// Hash field expiration (Redis 7.4). A field past its expire time is unseen
// by reads; a command that looks a field up by name (HGET, HEXISTS, HSETNX,
// HINCRBY ...) deletes it when expired, propagating HDEL and emitting
// hexpired (and del when that emptied the hash); HRANDFIELD removes every
// expired field first; the active cycle removes them in the background
// (expireHashFields). HLEN still counts expired fields not yet removed.

var (
	argHDEL       = []byte("HDEL")
	argHPEXPIREAT = []byte("HPEXPIREAT")
	argHPERSIST   = []byte("HPERSIST")
	argFIELDS     = []byte("FIELDS")
)

// maxFieldExpire is the latest field expire time Redis accepts (ms).
const maxFieldExpire = (1<<48 - 1) >> 2

// expireFieldIn deletes field from the edit h of key when it is expired, as
// Redis's lazy field expiry; when that empties the hash, the key is deleted
// and h begins anew on the missing key.
func expireFieldIn(x *command.Ctx, h *values.HashEdit, key, field []byte) {
	if x.Host().IsReplica() {
		return // only the master's HDELs remove fields: its commands find them
	}
	if _, at, ok := h.Lookup(field); !ok || !h.Expired(at) {
		return
	}
	h.Delete([][]byte{field})
	x.Conn().ElementExpired(x, keyspace.TypeHash, key, field)
	if h.Len() > 0 {
		x.Notify(config.EventHash, "hexpired", key)
		notifyFields(x, "hexpired", key, [][]byte{field}, 1)
		return
	}
	x.Committed(h.Commit(), "hexpired")
	notifyFields(x, "hexpired", key, [][]byte{field}, 1)
	e, found := x.LookupWrite(key)
	h.Begin(x.Env(), key, &e, found)
}

// expireFields deletes those of fields that are expired from the hash at
// key, with one hexpired event (HMGET's order: after its reply).
func expireFields(x *command.Ctx, key []byte, fields [][]byte) {
	if x.Host().IsReplica() {
		return // read as missing, removed by the master's HDEL
	}
	var h values.HashEdit
	if !command.EditAs(x, key, &h) || !h.Found() {
		return
	}
	n := 0
	gather := x.SubkeysOn(config.EventHash)
	for _, f := range fields {
		if _, at, ok := h.Lookup(f); ok && h.Expired(at) {
			h.Delete([][]byte{f})
			x.Conn().ElementExpired(x, keyspace.TypeHash, key, f)
			n++
			if gather {
				x.AddSubkey(f)
			}
		}
	}
	if n > 0 {
		x.Committed(h.Commit(), "hexpired")
		x.NotifySubkeys(config.EventHash, "hexpired", key)
	}
}

// liveField reports whether the hash h at key has field, deleting it when
// expired.
func liveField(x *command.Ctx, h values.HashView, key, field []byte) bool {
	_, at, ok := h.Lookup(field)
	if ok && h.Expired(at) {
		expireFields(x, key, [][]byte{field})
		return false
	}
	return ok
}

// expireAllFields removes every expired field of the hash h read at
// x.Args[1], as HRANDFIELD does first, and reports whether that deleted the
// key; otherwise h is read again.
func expireAllFields(x *command.Ctx, h *values.HashView) bool {
	if !h.HasTTLs() || h.MinExpire() == 0 || h.MinExpire() >= x.Now || x.Host().IsReplica() {
		return false
	}
	key := x.Args[1]
	var ed values.HashEdit
	e, found := x.LookupWrite(key)
	ed.Begin(x.Env(), key, &e, found)
	gather := x.SubkeysOn(config.EventHash)
	expired := func(f []byte) {
		x.Conn().ElementExpired(x, keyspace.TypeHash, key, f)
		if gather {
			x.AddSubkey(f)
		}
	}
	if ed.ExpireFields(x.Now, expired) == 0 {
		return false
	}
	c := ed.Commit()
	x.Committed(c, "hexpired")
	x.NotifySubkeys(config.EventHash, "hexpired", key)
	if c.Outcome == values.Deleted {
		return true
	}
	e, _ = x.LookupWrite(key)
	*h = values.ViewHash(&e)
	h.Now = x.Now
	return false
}

// elementBlock is how a command names its counted block of elements
// (HEXPIRE's FIELDS numfields ..., SEXPIRE's MEMBERS nummembers ...) and
// the errors for it.
type elementBlock struct {
	token, missing, mismatch string
}

var (
	fieldsBlock = elementBlock{"fields",
		"ERR Mandatory argument FIELDS is missing or not at the right position",
		"ERR The `numfields` parameter must match the number of arguments"}
	membersBlock = elementBlock{"members",
		"ERR Mandatory argument MEMBERS is missing or not at the right position",
		"ERR The `nummembers` parameter must match the number of arguments"}
)

// parseFieldsArg parses FIELDS numfields field ... starting at x.Args[at],
// replying Redis's errors (badCount for a count that is not positive).
func parseFieldsArg(x *command.Ctx, at int, badCount string) ([][]byte, bool) {
	return parseBlockArg(x, fieldsBlock, at, badCount)
}

// parseBlockArg parses the block b starting at x.Args[at].
func parseBlockArg(x *command.Ctx, b elementBlock, at int, badCount string) ([][]byte, bool) {
	if !cstr.ArgIs(x.Args[at], b.token) {
		x.W.Error(b.missing)
		return nil, false
	}
	if at+1 >= len(x.Args) {
		x.W.Error(command.ErrArity(x.Name))
		return nil, false
	}
	n, ok := strnum.ParseInt(x.Args[at+1])
	if !ok || n < 1 {
		x.W.Error(badCount)
		return nil, false
	}
	if n != int64(len(x.Args)-at-2) {
		x.W.Error(b.mismatch)
		return nil, false
	}
	return x.Args[at+2:], true
}

// fieldExpireTime parses a field expire time argument in unitMs (1000 for
// seconds) relative to now unless absolute, into Unix ms, replying Redis's
// errors for a bad one.
func fieldExpireTime(x *command.Ctx, arg []byte, unitMs int64, absolute bool) (int64, bool) {
	at, ok := strnum.ParseInt(arg)
	if !ok {
		x.W.Error(command.ErrNotInt)
		return 0, false
	}
	if at < 0 {
		x.W.Error("ERR invalid expire time, must be >= 0")
		return 0, false
	}
	if unitMs == 1000 {
		if at > maxFieldExpire/1000 {
			x.W.Error(errExpireTime(x.Name))
			return 0, false
		}
		at *= 1000
	}
	var base int64
	if !absolute {
		base = x.Now
	}
	if at > maxFieldExpire-base {
		x.W.Error(errExpireTime(x.Name))
		return 0, false
	}
	return at + base, true
}

// Field expire conditions (HEXPIRE's NX XX GT LT).
const (
	condNone = iota
	condNX
	condXX
	condGT
	condLT
)

// parseExpireCond reads NX, XX, GT or LT, condNone for another argument.
func parseExpireCond(arg []byte) int {
	switch {
	case cstr.ArgIs(arg, "nx"):
		return condNX
	case cstr.ArgIs(arg, "xx"):
		return condXX
	case cstr.ArgIs(arg, "gt"):
		return condGT
	case cstr.ArgIs(arg, "lt"):
		return condLT
	}
	return condNone
}

// expireCondMet reports whether an element whose expire time is prev (0
// for none, an infinite TTL) takes at under cond.
func expireCondMet(cond int, prev, at int64) bool {
	if prev == 0 {
		return cond != condXX && cond != condGT
	}
	return !(cond == condNX || cond == condGT && prev >= at || cond == condLT && prev <= at)
}

// hexpireCommand is HEXPIRE, HPEXPIRE, HEXPIREAT and HPEXPIREAT: per field
// -2 (no such field), 0 (condition not met), 1 (set) or 2 (deleted: the
// time has passed). It propagates as HPEXPIREAT with the fields it set.
func hexpireCommand(x *command.Ctx, unitMs int64, absolute bool) {
	key := x.Args[1]
	e, found := x.LookupWrite(key)
	if x.WrongType(&e, found, keyspace.TypeHash) {
		return
	}
	at, ok := fieldExpireTime(x, x.Args[2], unitMs, absolute)
	if !ok {
		return
	}
	cond, fieldsAt := parseExpireCond(x.Args[3]), 3
	if cond != condNone {
		fieldsAt++
	}
	fields, ok := parseFieldsArg(x, fieldsAt, "ERR Parameter `numFields` should be greater than 0")
	if !ok {
		return
	}
	x.W.Array(len(fields))
	if !found {
		for range fields {
			x.W.Int(-2)
		}
		return
	}
	var h values.HashEdit
	h.Begin(x.Env(), key, &e, found)
	h.PrepareTTL()
	var set [][]byte // the fields to propagate, when propagating
	updated, deleted := 0, 0
	gather := x.SubkeysOn(config.EventHash) // a time is past for all fields or for none
	for _, f := range fields {
		_, prev, exists := h.Lookup(f)
		switch {
		case !exists:
			x.W.Int(-2)
		case !expireCondMet(cond, prev, at):
			x.W.Int(0)
		case x.AlreadyExpired(at): // not on a replica: its master's HDEL follows
			x.Conn().ElementExpired(x, keyspace.TypeHash, key, f)
			h.Delete([][]byte{f})
			deleted++
			x.W.Int(2)
			if gather {
				x.AddSubkey(f)
			}
		default:
			h.SetExpire(f, at)
			updated++
			if x.Propagating() {
				set = append(set, f)
			}
			x.W.Int(1)
			if gather {
				x.AddSubkey(f)
			}
		}
	}
	event := ""
	switch {
	case deleted > 0:
		event = "hdel"
	case updated > 0:
		event = "hexpire"
	case h.Large():
		return // nothing changed: the key is not touched (WATCH)
	}
	x.Committed(h.Commit(), event)
	x.NotifySubkeys(config.EventHash, event, key)
	x.Dirty += updated + deleted
	propagateElementTTL(x, argHPEXPIREAT, argFIELDS, key, at, cond != condNone, unitMs == 1 && absolute && len(set) == len(fields), updated, set)
}

// propagateElementTTL propagates a TTL command of a collection's elements
// (HEXPIRE's family, SEXPIRE's) as its absolute-milliseconds form (cmd,
// with the block token): nothing when it set none, as sent when it was
// that form and set every element named, else naming the elements set
// (set holds them when propagating).
func propagateElementTTL(x *command.Ctx, cmd, block, key []byte, at int64, withCond, asSent bool, updated int, set [][]byte) {
	switch {
	case updated == 0:
		x.PropagateNone()
	case asSent:
	case x.Propagating():
		argv := make([][]byte, 0, 6+len(set))
		argv = append(argv, cmd, key, command.IntArg(at))
		if withCond {
			argv = append(argv, x.Args[3])
		}
		argv = append(argv, block, command.IntArg(int64(len(set))))
		x.PropagateAs(append(argv, set...)...)
	}
}

// httlCommand is HTTL, HPTTL, HEXPIRETIME and HPEXPIRETIME: per field -2
// (no such field, or expired), -1 (no TTL) or the time.
func httlCommand(x *command.Ctx, unitMs int64, absolute bool) {
	h, found, ok := command.ReadAs[values.HashView](x, x.Args[1])
	if !ok {
		return
	}
	fields, ok := parseFieldsArg(x, 2, "ERR Number of fields must be a positive integer")
	if !ok {
		return
	}
	var base int64
	if !absolute {
		base = x.Now
	}
	x.W.Array(len(fields))
	for _, f := range fields {
		var at int64
		exists := false
		if found {
			_, at, exists = h.Lookup(f)
		}
		switch {
		case !exists:
			x.W.Int(-2)
		case at == 0:
			x.W.Int(-1)
		case at < x.Now || h.Ex && at == x.Now: // the listpackex form counts "now" as gone
			x.W.Int(-2)
		case unitMs == 1000:
			x.W.Int((at + 999 - base) / 1000)
		default:
			x.W.Int(at - base)
		}
	}
}

// hpersistCommand is HPERSIST: per field -2 (no such field, or expired), -1
// (no TTL) or 1 (TTL removed).
func hpersistCommand(x *command.Ctx) {
	key := x.Args[1]
	e, found := x.LookupWrite(key)
	if x.WrongType(&e, found, keyspace.TypeHash) {
		return
	}
	fields, ok := parseFieldsArg(x, 2, "ERR Number of fields must be a positive integer")
	if !ok {
		return
	}
	x.W.Array(len(fields))
	var h values.HashEdit
	if found {
		h.Begin(x.Env(), key, &e, found)
	}
	changed := false
	for _, f := range fields {
		var at int64
		exists := false
		if found {
			_, at, exists = h.Lookup(f)
		}
		switch {
		case !exists || at != 0 && at < x.Now:
			x.W.Int(-2)
		case at == 0:
			x.W.Int(-1)
		default:
			h.SetExpire(f, 0)
			changed = true
			x.W.Int(1)
			if x.SubkeysOn(config.EventHash) {
				x.AddSubkey(f)
			}
		}
	}
	if changed {
		x.Committed(h.Commit(), "hpersist")
		x.NotifySubkeys(config.EventHash, "hpersist", key)
		x.Dirty++
	}
}

// Redis 8.0's hash commands, from redis.io's pages (there is no 8.0 binary
// to compare with): HGETDEL, HGETEX and HSETEX.

// expiryOption reads EX, PX, EXAT or PXAT: the unit and whether the time
// is absolute.
func expiryOption(arg []byte) (unitMs int64, absolute, ok bool) {
	switch {
	case cstr.ArgIs(arg, "ex"):
		return 1000, false, true
	case cstr.ArgIs(arg, "px"):
		return 1, false, true
	case cstr.ArgIs(arg, "exat"):
		return 1000, true, true
	case cstr.ArgIs(arg, "pxat"):
		return 1, true, true
	}
	return 0, false, false
}

// readFieldsForWrite looks the hash at x.Args[1] up for HGETDEL and
// HGETEX, deleting the requested fields that expired (one hexpired event),
// and begins h on it (found reports whether it exists then).
func readFieldsForWrite(x *command.Ctx, h *values.HashEdit, fields [][]byte) (found, ok bool) {
	key := x.Args[1]
	e, found := x.LookupWrite(key)
	if x.WrongType(&e, found, keyspace.TypeHash) {
		return false, false
	}
	if found {
		expireFields(x, key, fields)
		e, found = x.LookupWrite(key)
	}
	h.Begin(x.Env(), key, &e, found)
	return found, true
}

// hgetdelCommand is HGETDEL key FIELDS numfields field ...: the values
// (nil for missing fields), and the fields deleted; the key goes with its
// last field. It propagates as HDEL of the fields it deleted.
// https://redis.io/docs/latest/commands/hgetdel/
func hgetdelCommand(x *command.Ctx) {
	key := x.Args[1]
	if e, found := x.LookupWrite(key); x.WrongType(&e, found, keyspace.TypeHash) {
		return
	}
	fields, ok := parseFieldsArg(x, 2, "ERR Number of fields must be a positive integer")
	if !ok {
		return
	}
	var h values.HashEdit
	found, ok := readFieldsForWrite(x, &h, fields)
	if !ok {
		return
	}
	x.W.Array(len(fields))
	deleted := 0
	var gone [][]byte // the deleted fields, when propagating
	for _, f := range fields {
		v, exists := h.Get(f)
		if !found || !exists {
			x.W.Null()
			continue
		}
		x.W.Bulk(v)
		h.Delete([][]byte{f})
		deleted++
		if x.Propagating() {
			gone = append(gone, f)
		}
		if x.SubkeysOn(config.EventHash) {
			x.AddSubkey(f)
		}
	}
	if deleted == 0 {
		return
	}
	x.Committed(h.Commit(), "hdel")
	x.NotifySubkeys(config.EventHash, "hdel", key)
	x.Dirty += deleted
	if x.Propagating() {
		x.PropagateAs(append([][]byte{argHDEL, key}, gone...)...)
	}
}

// hgetexCommand is HGETEX key [EX|PX|EXAT|PXAT time | PERSIST] FIELDS
// numfields field ...: HMGET that also sets (or with PERSIST removes) the
// TTL of the fields that exist. A time already past deletes them. It
// propagates as HPEXPIREAT, HPERSIST or HDEL of the fields it changed.
// https://redis.io/docs/latest/commands/hgetex/
func hgetexCommand(x *command.Ctx) {
	key := x.Args[1]
	if e, found := x.LookupWrite(key); x.WrongType(&e, found, keyspace.TypeHash) {
		return
	}
	fieldsAt, at, persist, setTTL := 2, int64(0), false, false
	if unitMs, absolute, isExpiry := expiryOption(x.Args[2]); isExpiry {
		var ok bool
		if at, ok = fieldExpireTime(x, x.Args[3], unitMs, absolute); !ok {
			return
		}
		fieldsAt, setTTL = 4, true
	} else if cstr.ArgIs(x.Args[2], "persist") {
		fieldsAt, persist = 3, true
	}
	fields, ok := parseFieldsArg(x, fieldsAt, "ERR Number of fields must be a positive integer")
	if !ok {
		return
	}
	var h values.HashEdit
	found, ok := readFieldsForWrite(x, &h, fields)
	if !ok {
		return
	}
	x.W.Array(len(fields))
	var changed [][]byte
	n, deleted := 0, false
	for _, f := range fields {
		v, prev, exists := h.Lookup(f)
		if !found || !exists {
			x.W.Null()
			continue
		}
		x.W.Bulk(v)
		switch {
		case setTTL && x.AlreadyExpired(at):
			x.Conn().ElementExpired(x, keyspace.TypeHash, key, f)
			h.Delete([][]byte{f})
			deleted = true
		case setTTL:
			h.SetExpire(f, at)
		case persist && prev != 0:
			h.SetExpire(f, 0)
		default:
			continue
		}
		n++
		if x.Propagating() {
			changed = append(changed, f)
		}
		if x.SubkeysOn(config.EventHash) { // a time is past for all fields or for none
			x.AddSubkey(f)
		}
	}
	if n == 0 {
		return
	}
	event := "hexpire"
	switch {
	case deleted:
		event = "hdel"
	case persist:
		event = "hpersist"
	}
	x.Committed(h.Commit(), event)
	x.NotifySubkeys(config.EventHash, event, key)
	x.Dirty += n
	switch {
	case deleted:
		x.PropagateNone() // each deletion went as HDEL
	case x.Propagating():
		argv := [][]byte{argHPERSIST, key}
		if setTTL {
			argv = [][]byte{argHPEXPIREAT, key, command.IntArg(at)}
		}
		argv = append(argv, argFIELDS, command.IntArg(int64(len(changed))))
		x.PropagateAs(append(argv, changed...)...)
	}
}

// hsetexCommand is HSETEX key [FNX|FXX] [EX|PX|EXAT|PXAT time | KEEPTTL]
// FIELDS numfields field value ...: HSET with a TTL for the fields set (or
// KEEPTTL keeping theirs), only when none (FNX) or all (FXX) of them exist.
// It replies 1 when the fields were set, 0 when the condition failed, and
// propagates with the time made absolute (PXAT).
// https://redis.io/docs/latest/commands/hsetex/
func hsetexCommand(x *command.Ctx) {
	key := x.Args[1]
	e, found := x.LookupWrite(key)
	if x.WrongType(&e, found, keyspace.TypeHash) {
		return
	}
	fnx, fxx, keepTTL, setTTL := false, false, false, false
	var at int64
	timeAt := -1 // the time argument's index, for propagation
	i := 2
	for ; i < len(x.Args) && !cstr.ArgIs(x.Args[i], "fields"); i++ {
		arg := x.Args[i]
		unitMs, absolute, isExpiry := expiryOption(arg)
		switch {
		case cstr.ArgIs(arg, "fnx") || cstr.ArgIs(arg, "fxx"):
			if fnx || fxx {
				x.W.Error("ERR Only one of FXX or FNX arguments can be specified")
				return
			}
			fnx, fxx = cstr.ArgIs(arg, "fnx"), cstr.ArgIs(arg, "fxx")
		case isExpiry || cstr.ArgIs(arg, "keepttl"):
			if setTTL || keepTTL {
				x.W.Error("ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified")
				return
			}
			if !isExpiry {
				keepTTL = true
				continue
			}
			if i+1 >= len(x.Args) {
				x.W.Error(command.ErrArity(x.Name))
				return
			}
			var ok bool
			if at, ok = fieldExpireTime(x, x.Args[i+1], unitMs, absolute); !ok {
				return
			}
			setTTL, timeAt = true, i
			i++
		default:
			x.W.Error("ERR unknown argument: " + string(arg))
			return
		}
	}
	if i+1 >= len(x.Args) {
		x.W.Error(command.ErrArity(x.Name))
		return
	}
	n, ok := strnum.ParseInt(x.Args[i+1])
	if !ok || n < 1 {
		x.W.Error("ERR invalid number of fields")
		return
	}
	pairs := x.Args[i+2:]
	if n > int64(len(pairs)) || 2*n != int64(len(pairs)) {
		x.W.Error(command.ErrArity(x.Name))
		return
	}
	var h values.HashEdit
	h.Begin(x.Env(), key, &e, found)
	if fnx || fxx {
		for j := 0; j < len(pairs); j += 2 {
			expireFieldIn(x, &h, key, pairs[j])
		}
		for j := 0; j < len(pairs); j += 2 {
			if _, exists := h.Get(pairs[j]); exists != fxx {
				x.W.Int(0)
				return
			}
		}
	}
	if setTTL && x.AlreadyExpired(at) {
		// Set and expired at once: the fields that existed go.
		deleted := 0
		for j := 0; j < len(pairs); j += 2 {
			if _, _, exists := h.Lookup(pairs[j]); exists {
				x.Conn().ElementExpired(x, keyspace.TypeHash, key, pairs[j])
				h.Delete(pairs[j : j+1])
				deleted++
				if x.SubkeysOn(config.EventHash) {
					x.AddSubkey(pairs[j])
				}
			}
		}
		x.Committed(h.Commit(), command.EventIf(deleted > 0, "hdel"))
		x.NotifySubkeys(config.EventHash, "hdel", key)
		x.Dirty += deleted
		x.PropagateNone()
		x.W.Int(1)
		return
	}
	h.ConvertForArgs(pairs)
	for j := 0; j < len(pairs); j += 2 {
		if keepTTL {
			h.SetKeepTTL(pairs[j], pairs[j+1])
		} else {
			h.Set(pairs[j], pairs[j+1])
		}
		if setTTL {
			h.SetExpire(pairs[j], at)
		}
	}
	x.Committed(h.Commit(), "hset")
	notifyFields(x, "hset", key, pairs, 2)
	if setTTL {
		x.Notify(config.EventHash, "hexpire", key)
		notifyFields(x, "hexpire", key, pairs, 2)
	}
	x.Dirty += len(pairs) / 2
	x.W.Int(1)
	if setTTL && x.Propagating() && !cstr.ArgIs(x.Args[timeAt], "pxat") {
		argv := append([][]byte(nil), x.Args...)
		argv[timeAt], argv[timeAt+1] = argPXAT, command.IntArg(at)
		x.PropagateAs(argv...)
	}
}
