package family

import (
	"bytes"
	"math"
	"math/big"
	"strconv"

	"github.com/zeebo/xxh3"

	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/values"
)

func registerStrings(bind binder) {
	bind("get", getCommand)
	bind("set", setCommand)
	bind("setnx", setnxCommand)
	bind("setex", func(x *command.Ctx) { setexCommand(x, 1000) })
	bind("psetex", func(x *command.Ctx) { setexCommand(x, 1) })
	bind("getset", getsetCommand)
	bind("getdel", getdelCommand)
	bind("getex", getexCommand)
	bind("mget", mgetCommand)
	bind("mset", msetCommand)
	bind("msetnx", msetnxCommand)
	bind("msetex", msetexCommand)
	bind("append", appendCommand)
	bind("strlen", strlenCommand)
	bind("incr", func(x *command.Ctx) { incrBy(x, 1) })
	bind("decr", func(x *command.Ctx) { incrBy(x, -1) })
	bind("incrby", incrbyCommand)
	bind("decrby", decrbyCommand)
	bind("incrbyfloat", incrbyfloatCommand)
	bind("increx", increxCommand)
	bind("getrange", getrangeCommand)
	bind("substr", getrangeCommand)
	bind("setrange", setrangeCommand)
	bind("digest", digestCommand)
}

// getString looks key up for reading as a string. It replies WRONGTYPE and
// reports ok=false for another type; found=false means no key.
func getString(x *command.Ctx, key []byte) (e keyspace.Entry, found, ok bool) {
	return x.ReadTyped(key, keyspace.TypeString)
}

// setString stores a string value from a client argument over whatever key
// held (dropping any TTL), as Redis's setKey: an overwrite is notified.
func setString(x *command.Ctx, key, value []byte, expireAt int64) {
	e, found := x.LookupWrite(key)
	was := e.Type()
	putString(x, &e, key, value, expireAt)
	if found {
		x.Overwrote(key, was, keyspace.TypeString)
	}
}

// putString is setString where a lookup of key already left e (found or a
// vacancy), so the key is not hashed and probed again.
func putString(x *command.Ctx, e *keyspace.Entry, key, value []byte, expireAt int64) {
	x.DB.Put(e, key, keyspace.TypeString, values.StringEncoding(value), value, expireAt, x.Now)
	x.Dirty++
}

func getCommand(x *command.Ctx) {
	e, found, ok := getString(x, x.Args[1])
	switch {
	case !ok:
	case !found:
		x.W.Null()
	default:
		x.W.Bulk(e.Value())
	}
}

// Option flags of SET and GETEX.
const (
	optNX = 1 << iota
	optXX
	optGet
	optKeepTTL
	optPersist
	optEX
	optPX
	optEXAT
	optPXAT
	optIfEq // Redis 8.4's compare-and-set conditions
	optIfNe
	optIfDeq
	optIfDne
	optExpire = optEX | optPX | optEXAT | optPXAT
	optIf     = optIfEq | optIfNe | optIfDeq | optIfDne
)

// stringOptions are the parsed options of SET or GETEX.
type stringOptions struct {
	flags    int
	expire   []byte // the argument of the expire option
	unitMs   int64  // 1000 for EX and EXAT
	absolute bool   // EXAT, PXAT
	match    []byte // the value or digest an IF condition compares with
}

// parseStringOptions parses SET's (set) or GETEX's options from x.Args[from:]
// as Redis does: an option may repeat (the last expire time wins) unless it
// conflicts with another one given. Options are compared as C strings, so
// "NX\x00junk" is NX. It replies with a syntax error and returns false on a bad
// option.
func parseStringOptions(x *command.Ctx, from int, set bool) (stringOptions, bool) {
	var o stringOptions
	for i := from; i < len(x.Args); i++ {
		opt := x.Args[i]
		hasNext := i+1 < len(x.Args)
		var flag int
		var allowed bool
		switch {
		case cstr.ArgIs(opt, "nx"):
			flag, allowed = optNX, set && o.flags&(optXX|optIf) == 0
		case cstr.ArgIs(opt, "xx"):
			flag, allowed = optXX, set && o.flags&(optNX|optIf) == 0
		case cstr.ArgIs(opt, "ifeq"):
			flag = optIfEq
		case cstr.ArgIs(opt, "ifne"):
			flag = optIfNe
		case cstr.ArgIs(opt, "ifdeq"):
			flag = optIfDeq
		case cstr.ArgIs(opt, "ifdne"):
			flag = optIfDne
		case cstr.ArgIs(opt, "get"):
			flag, allowed = optGet, set
		case cstr.ArgIs(opt, "keepttl"):
			flag, allowed = optKeepTTL, set && o.flags&(optPersist|optExpire) == 0
		case cstr.ArgIs(opt, "persist"):
			flag, allowed = optPersist, !set && o.flags&(optKeepTTL|optExpire) == 0
		case cstr.ArgIs(opt, "ex"):
			flag = optEX
		case cstr.ArgIs(opt, "px"):
			flag = optPX
		case cstr.ArgIs(opt, "exat"):
			flag = optEXAT
		case cstr.ArgIs(opt, "pxat"):
			flag = optPXAT
		}
		if flag&optExpire != 0 {
			// The same expire option may repeat; any other one conflicts.
			allowed = hasNext && o.flags&(optKeepTTL|optPersist|optExpire&^flag) == 0
		}
		if flag&optIf != 0 {
			// So may the same condition; it excludes NX, XX and the others.
			allowed = set && hasNext && o.flags&(optNX|optXX|optIf&^flag) == 0
		}
		if !allowed {
			x.W.Error(command.ErrSyntax)
			return o, false
		}
		o.flags |= flag
		if flag&optExpire != 0 {
			i++
			o.expire = x.Args[i]
			o.unitMs, o.absolute = 1, flag&(optEXAT|optPXAT) != 0
			if flag&(optEX|optEXAT) != 0 {
				o.unitMs = 1000
			}
		}
		if flag&optIf != 0 {
			i++
			o.match = x.Args[i]
		}
	}
	return o, true
}

// digestLen is the length of a DIGEST reply: XXH3's 64 bits in hex.
const digestLen = 16

// errDigestLen refuses an IFDEQ or IFDNE digest that is not 16 characters
// long (redis/redis#14502), checked only against a key that exists, as
// Redis does.
const errDigestLen = "ERR must be exactly 16 hexadecimal characters"

// badDigest reports (replying) an IFDEQ or IFDNE digest of the wrong length.
func badDigest(x *command.Ctx, flags int, match []byte) bool {
	if flags&(optIfDeq|optIfDne) != 0 && len(match) != digestLen {
		x.W.Error(errDigestLen)
		return true
	}
	return false
}

// appendDigest appends the digest of a string value as DIGEST gives it: the
// value's XXH3 64-bit hash as 16 lower-case hex digits, leading zeros kept
// (https://redis.io/docs/latest/commands/digest/).
func appendDigest(dst, value []byte) []byte {
	const hexDigits = "0123456789abcdef"
	h := xxh3.Hash(value)
	for shift := 60; shift >= 0; shift -= 4 {
		dst = append(dst, hexDigits[h>>uint(shift)&0xf])
	}
	return dst
}

// ifHolds reports whether the IF condition of o (flags and match) holds for
// the string value v of a key, found or not: IFEQ and IFDEQ need the key,
// IFNE and IFDNE hold when it is missing; digests compare case-insensitively
// (https://redis.io/docs/latest/commands/set/, redis/redis#14502).
func ifHolds(flags int, match []byte, found bool, v []byte) bool {
	var buf [digestLen]byte
	switch {
	case flags&optIfEq != 0:
		return found && bytes.Equal(v, match)
	case flags&optIfNe != 0:
		return !found || !bytes.Equal(v, match)
	case flags&optIfDeq != 0:
		return found && bytes.EqualFold(appendDigest(buf[:0], v), match)
	default: // IFDNE
		return !found || !bytes.EqualFold(appendDigest(buf[:0], v), match)
	}
}

// expireTime turns an expire argument into an absolute Unix ms time, replying
// with Redis's errors when it is not a positive integer or would overflow.
func expireTime(x *command.Ctx, arg []byte, unitMs int64, absolute bool) (int64, bool) {
	v, ok := strnum.ParseInt(arg)
	if !ok {
		x.W.Error(command.ErrNotInt)
		return 0, false
	}
	if v <= 0 || v > math.MaxInt64/unitMs {
		x.W.Error(errExpireTime(x.Name))
		return 0, false
	}
	ms := v * unitMs
	if !absolute {
		if ms > math.MaxInt64-x.Now {
			x.W.Error(errExpireTime(x.Name))
			return 0, false
		}
		ms += x.Now
	}
	return ms, true
}

func errExpireTime(cmd string) string {
	return "ERR invalid expire time in '" + cmd + "' command"
}

func setCommand(x *command.Ctx) {
	o, ok := parseStringOptions(x, 3, true)
	if !ok {
		return
	}
	var expireAt int64
	if o.flags&optExpire != 0 {
		if expireAt, ok = expireTime(x, o.expire, o.unitMs, o.absolute); !ok {
			return
		}
	}
	get := o.flags&optGet != 0
	key, value := x.Args[1], x.Args[2]
	e, found := x.LookupWrite(key)
	if (get || o.flags&optIf != 0) && found && e.Type() != keyspace.TypeString {
		x.W.Error(command.ErrWrongType)
		return
	}
	// Redis checks the digest after GET's reply, answering twice; once here.
	if found && badDigest(x, o.flags, o.match) {
		return
	}
	if get {
		if found {
			x.W.Bulk(e.Value()) // written before the value is replaced
		} else {
			x.W.Null()
		}
	}
	var old []byte
	if found {
		old = e.Value()
	}
	if (o.flags&optNX != 0 && found) || (o.flags&optXX != 0 && !found) ||
		(o.flags&optIf != 0 && !ifHolds(o.flags, o.match, found, old)) {
		if !get {
			x.W.Null()
		}
		return
	}
	if o.flags&optKeepTTL != 0 && found {
		expireAt = e.ExpireAt()
	}
	was := e.Type()
	putString(x, &e, key, value, expireAt)
	if found {
		x.Overwrote(key, was, keyspace.TypeString)
	}
	x.Notify(config.EventString, "set", key)
	if o.flags&optExpire != 0 {
		x.Notify(config.EventGeneric, "expire", key)
	}
	if !get {
		x.W.OK()
	}
	if !x.Propagating() {
		return
	}
	// As Redis 7.0: with an expire time, SET key value PXAT <ms> and no other
	// option; without, as sent less any GET (an IF condition stays, as in 8.4).
	if o.flags&optExpire != 0 {
		x.PropagateAs(argSET, key, value, argPXAT, command.IntArg(expireAt))
	} else if get {
		argv := make([][]byte, 0, len(x.Args)-1)
		for i, a := range x.Args {
			if i < 3 || !cstr.ArgIs(a, "get") {
				argv = append(argv, a)
			}
		}
		x.PropagateAs(argv...)
	}
}

// digestCommand is DIGEST (Redis 8.4): the hash digest of a string value.
func digestCommand(x *command.Ctx) {
	e, found, ok := getString(x, x.Args[1])
	switch {
	case !ok:
	case !found:
		x.W.Null()
	default:
		var buf [digestLen]byte
		x.W.Bulk(appendDigest(buf[:0], e.Value()))
	}
}

func setnxCommand(x *command.Ctx) {
	e, found := x.LookupWrite(x.Args[1])
	if found {
		x.W.Int(0)
		return
	}
	putString(x, &e, x.Args[1], x.Args[2], 0)
	x.Notify(config.EventString, "set", x.Args[1])
	x.W.Int(1)
}

func setexCommand(x *command.Ctx, unitMs int64) {
	expireAt, ok := expireTime(x, x.Args[2], unitMs, false)
	if !ok {
		return
	}
	setString(x, x.Args[1], x.Args[3], expireAt)
	x.Notify(config.EventString, "set", x.Args[1])
	x.Notify(config.EventGeneric, "expire", x.Args[1])
	x.W.OK()
	if x.Propagating() {
		x.PropagateAs(argSET, x.Args[1], x.Args[3], argPXAT, command.IntArg(expireAt))
	}
}

func getsetCommand(x *command.Ctx) {
	e, found, ok := getString(x, x.Args[1])
	if !ok {
		return
	}
	if found {
		x.W.Bulk(e.Value())
	} else {
		x.W.Null()
	}
	putString(x, &e, x.Args[1], x.Args[2], 0)
	if found {
		x.Overwrote(x.Args[1], keyspace.TypeString, keyspace.TypeString)
	}
	x.Notify(config.EventString, "set", x.Args[1])
	x.PropagateAs(argSET, x.Args[1], x.Args[2])
}

func getdelCommand(x *command.Ctx) {
	e, found, ok := getString(x, x.Args[1])
	switch {
	case !ok:
	case !found:
		x.W.Null()
	default:
		x.W.Bulk(e.Value())
		x.DB.DeleteEntry(&e)
		x.Notify(config.EventGeneric, "del", x.Args[1])
		x.Dirty++
		if x.Propagating() {
			propagateDel(x, x.Args[1], x.Config().LazyFreeLazyUserDel())
		}
	}
}

func getexCommand(x *command.Ctx) {
	o, ok := parseStringOptions(x, 2, false)
	if !ok {
		return
	}
	// As Redis: the key is looked up before the expire time is validated.
	e, found, ok := getString(x, x.Args[1])
	if !ok {
		return
	}
	if !found {
		x.W.Null()
		return
	}
	var expireAt int64
	if o.flags&optExpire != 0 {
		if expireAt, ok = expireTime(x, o.expire, o.unitMs, o.absolute); !ok {
			return
		}
	}
	x.W.Bulk(e.Value())
	key := x.Args[1]
	switch {
	case o.flags&optExpire != 0 && x.AlreadyExpired(expireAt):
		x.DB.DeleteEntry(&e) // a time in the past deletes, as Redis does
		x.Notify(config.EventGeneric, "del", key)
		x.Dirty++
		if x.Propagating() {
			propagateDel(x, key, x.Config().LazyFreeLazyExpire())
		}
	case o.flags&optExpire != 0:
		x.DB.SetExpire(&e, expireAt, x.Now)
		x.Notify(config.EventGeneric, "expire", key)
		x.Dirty++
		if x.Propagating() {
			x.PropagateAs(argPEXPIREAT, key, command.IntArg(expireAt))
		}
	case o.flags&optPersist != 0 && e.ExpireAt() != 0:
		x.DB.SetExpire(&e, 0, x.Now)
		x.Notify(config.EventGeneric, "persist", key)
		x.Dirty++
		x.PropagateAs(argPERSIST, key)
	}
}

func mgetCommand(x *command.Ctx) {
	x.W.Array(len(x.Args) - 1)
	for _, key := range x.Args[1:] {
		e, found := x.LookupRead(key)
		if found && e.Type() == keyspace.TypeString {
			x.W.Bulk(e.Value())
		} else {
			x.W.Null()
		}
	}
}

func msetCommand(x *command.Ctx) {
	if !checkPairs(x) {
		return
	}
	setPairs(x)
	x.W.OK()
}

func msetnxCommand(x *command.Ctx) {
	if !checkPairs(x) {
		return
	}
	for i := 1; i < len(x.Args); i += 2 {
		if _, found := x.LookupWrite(x.Args[i]); found {
			x.W.Int(0)
			return
		}
	}
	setPairs(x)
	x.W.Int(1)
}

// checkPairs checks that MSET's or MSETNX's arguments are key-value pairs,
// replying the arity error when not.
func checkPairs(x *command.Ctx) bool {
	if len(x.Args)%2 == 0 {
		x.W.Error(command.ErrArity(x.Name))
		return false
	}
	return true
}

// setPairs sets each key of MSET's or MSETNX's pairs to its value.
func setPairs(x *command.Ctx) {
	for i := 1; i < len(x.Args); i += 2 {
		setString(x, x.Args[i], x.Args[i+1], 0)
		x.Notify(config.EventString, "set", x.Args[i])
	}
}

// msetexCommand is MSETEX (Redis 8.4): MSET of numkeys pairs with SET's NX
// or XX (all keys missing, or all present) and one expiry for all
// (https://redis.io/docs/latest/commands/msetex/); 1 when it set them.
func msetexCommand(x *command.Ctx) {
	numkeys, ok := strnum.ParseInt(x.Args[1])
	switch {
	case !ok || numkeys < 1 || numkeys > math.MaxInt32:
		x.W.Error("ERR invalid numkeys value")
		return
	case numkeys > int64(len(x.Args)-2)/2:
		x.W.Error("ERR wrong number of key-value pairs")
		return
	}
	optsAt := 2 + 2*int(numkeys)
	o, ok := parseStringOptions(x, optsAt, true)
	if !ok {
		return
	}
	if o.flags&(optGet|optIf) != 0 {
		x.W.Error(command.ErrSyntax)
		return
	}
	var expireAt int64
	if o.flags&optExpire != 0 {
		if expireAt, ok = expireTime(x, o.expire, o.unitMs, o.absolute); !ok {
			return
		}
	}
	if o.flags&(optNX|optXX) != 0 {
		for i := 2; i < optsAt; i += 2 {
			if _, found := x.LookupWrite(x.Args[i]); found != (o.flags&optXX != 0) {
				x.W.Int(0)
				return
			}
		}
	}
	for i := 2; i < optsAt; i += 2 {
		key := x.Args[i]
		e, found := x.LookupWrite(key)
		keep := expireAt
		if o.flags&optKeepTTL != 0 && found {
			keep = e.ExpireAt()
		}
		was := e.Type()
		putString(x, &e, key, x.Args[i+1], keep)
		if found {
			x.Overwrote(key, was, keyspace.TypeString)
		}
		if o.flags&optExpire != 0 { // Redis's order: expire, then set
			x.Notify(config.EventGeneric, "expire", key)
		}
		x.Notify(config.EventString, "set", key)
	}
	x.W.Int(1)
	if o.flags&(optEX|optPX) != 0 && x.Propagating() {
		// As Redis: the last EX or PX and its time become PXAT and the
		// absolute time, so a replay sets the same one.
		argv := append([][]byte{}, x.Args...)
		for i := len(argv) - 2; i >= optsAt; i-- {
			if cstr.ArgIs(argv[i], "ex") || cstr.ArgIs(argv[i], "px") {
				argv[i], argv[i+1] = argPXAT, command.IntArg(expireAt)
				break
			}
		}
		x.PropagateAs(argv...)
	}
}

// checkStringLength replies with Redis's error when a string of size+add bytes
// would exceed proto-max-bulk-len (or overflow int64).
func checkStringLength(x *command.Ctx, size, add int64) bool {
	if size > math.MaxInt64-add || size+add > x.Config().ProtoMaxBulkLen() {
		x.W.Error(command.ErrStringLimit)
		return false
	}
	return true
}

func appendCommand(x *command.Ctx) {
	key, arg := x.Args[1], x.Args[2]
	e, found := x.LookupWrite(key)
	if !found {
		putString(x, &e, key, arg, 0)
		x.Notify(config.EventString, "append", key)
		x.W.Int(int64(len(arg)))
		return
	}
	if e.Type() != keyspace.TypeString {
		x.W.Error(command.ErrWrongType)
		return
	}
	n := len(e.Value())
	if !checkStringLength(x, int64(n), int64(len(arg))) {
		return
	}
	// Grown where it is stored: no copy of a big value on the Go heap.
	copy(x.DB.Resize(&e, keyspace.EncRaw, n+len(arg), x.Now)[n:], arg)
	x.Notify(config.EventString, "append", key)
	x.Dirty++
	x.W.Int(int64(n + len(arg)))
}

func strlenCommand(x *command.Ctx) {
	e, found, ok := getString(x, x.Args[1])
	switch {
	case !ok:
	case !found:
		x.W.Int(0)
	default:
		x.W.Int(int64(len(e.Value())))
	}
}

func incrbyCommand(x *command.Ctx) {
	if by, ok := strnum.ParseInt(x.Args[2]); ok {
		incrBy(x, by)
		return
	}
	x.W.Error(command.ErrNotInt)
}

func decrbyCommand(x *command.Ctx) {
	by, ok := strnum.ParseInt(x.Args[2])
	switch {
	case !ok:
		x.W.Error(command.ErrNotInt)
	case by == math.MinInt64:
		x.W.Error("ERR decrement would overflow")
	default:
		incrBy(x, -by)
	}
}

// addInt adds b to a, reporting false when the sum would overflow int64.
func addInt(a, b int64) (int64, bool) {
	if (b > 0 && a > math.MaxInt64-b) || (b < 0 && a < math.MinInt64-b) {
		return 0, false
	}
	return a + b, true
}

func incrBy(x *command.Ctx, by int64) {
	key := x.Args[1]
	e, found := x.LookupWrite(key)
	var cur int64
	if found {
		if e.Type() != keyspace.TypeString {
			x.W.Error(command.ErrWrongType)
			return
		}
		var ok bool
		if cur, ok = strnum.ParseInt(e.Value()); !ok {
			x.W.Error(command.ErrNotInt)
			return
		}
	}
	cur, ok := addInt(cur, by)
	if !ok {
		x.W.Error(command.ErrOverflow)
		return
	}
	var buf [20]byte
	value := strconv.AppendInt(buf[:0], cur, 10)
	if found {
		x.DB.Replace(&e, keyspace.EncInt, value, e.ExpireAt(), x.Now)
	} else {
		x.DB.Put(&e, key, keyspace.TypeString, keyspace.EncInt, value, 0, x.Now)
	}
	x.Notify(config.EventString, "incrby", key)
	x.Dirty++
	x.W.Int(cur)
}

func incrbyfloatCommand(x *command.Ctx) {
	key := x.Args[1]
	e, found := x.LookupWrite(key)
	cur := []byte("0")
	if found {
		if e.Type() != keyspace.TypeString {
			x.W.Error(command.ErrWrongType)
			return
		}
		cur = e.Value()
	}
	a, ok1 := strnum.ParseLongDouble(cur)
	b, ok2 := strnum.ParseLongDouble(x.Args[2])
	if !ok1 || !ok2 {
		x.W.Error(command.ErrNotFloat)
		return
	}
	sum, ok := strnum.AddLongDouble(a, b)
	if !ok {
		x.W.Error("ERR increment would produce NaN or Infinity")
		return
	}
	enc := keyspace.EncEmbstr
	if len(sum) > 44 {
		enc = keyspace.EncRaw
	}
	if found {
		x.DB.Replace(&e, enc, sum, e.ExpireAt(), x.Now)
	} else {
		x.DB.Put(&e, key, keyspace.TypeString, enc, sum, 0, x.Now)
	}
	x.Notify(config.EventString, "incrbyfloat", key)
	x.Dirty++
	x.W.Bulk(sum)
	// The result, not the increment: float arithmetic may differ on replay.
	x.PropagateAs(argSET, key, sum, argKEEPTTL)
}

// Options of INCREX, as bits of increxOptions.seen.
const (
	ixBy = 1 << iota
	ixLBound
	ixUBound
	ixSaturate
	ixExpire
	ixPersist
	ixENX
)

// increxOptions are INCREX's parsed options.
type increxOptions struct {
	seen     int
	float    bool   // BYFLOAT, else integer mode
	by       []byte // BYINT's or BYFLOAT's argument
	lo, hi   []byte // LBOUND's and UBOUND's
	expire   []byte // EX's, PX's, EXAT's or PXAT's
	unitMs   int64
	absolute bool
}

// parseIncrexOptions reads INCREX's options from x.Args[2:]. Each may be
// given once, in any order; BYINT and BYFLOAT exclude each other, as the
// expiration options do, and ENX needs EX, PX, EXAT or PXAT. Anything else
// is a syntax error.
func parseIncrexOptions(x *command.Ctx) (o increxOptions, ok bool) {
	for i := 2; i < len(x.Args); i++ {
		a := x.Args[i]
		var flag int
		var val *[]byte
		switch {
		case cstr.ArgIs(a, "byint"):
			flag, val = ixBy, &o.by
		case cstr.ArgIs(a, "byfloat"):
			flag, val, o.float = ixBy, &o.by, true
		case cstr.ArgIs(a, "lbound"):
			flag, val = ixLBound, &o.lo
		case cstr.ArgIs(a, "ubound"):
			flag, val = ixUBound, &o.hi
		case cstr.ArgIs(a, "saturate"):
			flag = ixSaturate
		case cstr.ArgIs(a, "ex"):
			flag, val, o.unitMs, o.absolute = ixExpire, &o.expire, 1000, false
		case cstr.ArgIs(a, "px"):
			flag, val, o.unitMs, o.absolute = ixExpire, &o.expire, 1, false
		case cstr.ArgIs(a, "exat"):
			flag, val, o.unitMs, o.absolute = ixExpire, &o.expire, 1000, true
		case cstr.ArgIs(a, "pxat"):
			flag, val, o.unitMs, o.absolute = ixExpire, &o.expire, 1, true
		case cstr.ArgIs(a, "persist"):
			flag = ixPersist
		case cstr.ArgIs(a, "enx"):
			flag = ixENX
		}
		exclusive := flag
		if flag&(ixExpire|ixPersist) != 0 {
			exclusive = ixExpire | ixPersist
		}
		if flag == 0 || o.seen&exclusive != 0 || (val != nil && i+1 == len(x.Args)) {
			x.W.Error(command.ErrSyntax)
			return o, false
		}
		o.seen |= flag
		if val != nil {
			i++
			*val = x.Args[i]
		}
	}
	if o.seen&ixENX != 0 && o.seen&ixExpire == 0 {
		x.W.Error(command.ErrSyntax)
		return o, false
	}
	return o, true
}

const errIncrexBounds = "ERR LBOUND must not be greater than UBOUND"

// increxCommand is INCREX (Redis 8.8), as
// https://redis.io/docs/latest/commands/increx/ documents it: INCRBY (or,
// with BYFLOAT, INCRBYFLOAT) kept within LBOUND and UBOUND, with an
// expiration option. It replies the value and the increment applied. A
// result past a bound, or past the type's range when no bound is given,
// changes nothing and replies [current, 0], unless SATURATE stops it at
// the bound. ENX sets the expiry only on a key without one. The page names
// neither events nor error texts: the events are INCRBY's or INCRBYFLOAT's,
// then expire or persist; the errors are Redis's usual texts.
func increxCommand(x *command.Ctx) {
	o, ok := parseIncrexOptions(x)
	if !ok {
		return
	}
	if o.float {
		increxFloat(x, &o)
	} else {
		increxInt(x, &o)
	}
}

// increxExpire is the expire time INCREX gives a key that has expireAt
// now, and whether it is a new one (an expiration option that applies).
func increxExpire(o *increxOptions, expireAt, given int64) (int64, bool) {
	switch {
	case o.seen&ixExpire != 0 && (o.seen&ixENX == 0 || expireAt == 0):
		return given, true
	case o.seen&ixPersist != 0:
		return 0, false
	}
	return expireAt, false
}

func increxInt(x *command.Ctx, o *increxOptions) {
	by, lo, hi := int64(1), int64(math.MinInt64), int64(math.MaxInt64)
	ok := true
	if o.seen&ixBy != 0 {
		by, ok = strnum.ParseInt(o.by)
	}
	if ok && o.seen&ixLBound != 0 {
		lo, ok = strnum.ParseInt(o.lo)
	}
	if ok && o.seen&ixUBound != 0 {
		hi, ok = strnum.ParseInt(o.hi)
	}
	if !ok {
		x.W.Error(command.ErrNotInt)
		return
	}
	if lo > hi {
		x.W.Error(errIncrexBounds)
		return
	}
	var given int64
	if o.seen&ixExpire != 0 {
		if given, ok = expireTime(x, o.expire, o.unitMs, o.absolute); !ok {
			return
		}
	}
	key := x.Args[1]
	e, found := x.LookupWrite(key)
	var cur int64
	if found {
		if e.Type() != keyspace.TypeString {
			x.W.Error(command.ErrWrongType)
			return
		}
		if cur, ok = strnum.ParseInt(e.Value()); !ok {
			x.W.Error(command.ErrNotInt)
			return
		}
	}
	sum, inRange := addInt(cur, by)
	target, out := sum, true
	switch {
	case !inRange && by > 0, inRange && sum > hi:
		target = hi
	case !inRange, sum < lo:
		target = lo
	default:
		out = false
	}
	if out && o.seen&ixSaturate == 0 {
		x.W.Array(2)
		x.W.Int(cur)
		x.W.Int(0)
		return
	}
	if out {
		if by, ok = subInt(target, cur); !ok {
			x.W.Error(command.ErrOverflow)
			return
		}
	}
	var buf [20]byte
	value := strconv.AppendInt(buf[:0], target, 10)
	increxStore(x, o, &e, found, key, keyspace.EncInt, value, given, "incrby")
	x.W.Array(2)
	x.W.Int(target)
	x.W.Int(by)
}

// subInt returns a-b, reporting false when it would overflow int64.
func subInt(a, b int64) (int64, bool) {
	d := a - b
	if (b < 0 && d < a) || (b > 0 && d > a) {
		return 0, false
	}
	return d, true
}

// longDoubleMax is LDBL_MAX, the x87 long double's largest finite value:
// INCREX's bounds in BYFLOAT mode when LBOUND or UBOUND is not given.
var longDoubleMax = func() *big.Float {
	m := new(big.Float).SetPrec(64).SetInt64(1)
	m.Sub(m, new(big.Float).SetMantExp(big.NewFloat(1), -64)) // 64 one bits
	return m.SetMantExp(m, 16384)
}()

// errNaN is INCRBYFLOAT's error for a result that is not finite.
const errNaN = "ERR increment would produce NaN or Infinity"

func increxFloat(x *command.Ctx, o *increxOptions) {
	by, ok := strnum.ParseLongDouble(o.by)
	lo, hi := new(big.Float).Neg(longDoubleMax), longDoubleMax
	if ok && o.seen&ixLBound != 0 {
		lo, ok = strnum.ParseLongDouble(o.lo)
	}
	if ok && o.seen&ixUBound != 0 {
		hi, ok = strnum.ParseLongDouble(o.hi)
	}
	if !ok {
		x.W.Error(command.ErrNotFloat)
		return
	}
	if lo.Cmp(hi) > 0 {
		x.W.Error(errIncrexBounds)
		return
	}
	var given int64
	if o.seen&ixExpire != 0 {
		if given, ok = expireTime(x, o.expire, o.unitMs, o.absolute); !ok {
			return
		}
	}
	key := x.Args[1]
	e, found := x.LookupWrite(key)
	raw := []byte("0")
	if found {
		if e.Type() != keyspace.TypeString {
			x.W.Error(command.ErrWrongType)
			return
		}
		raw = e.Value()
	}
	cur, ok := strnum.ParseLongDouble(raw)
	if !ok {
		x.W.Error(command.ErrNotFloat)
		return
	}
	if cur.IsInf() || by.IsInf() {
		x.W.Error(errNaN)
		return
	}
	zero := new(big.Float)
	sum := new(big.Float).SetPrec(64).SetMode(big.ToNearestEven).Add(cur, by)
	var target *big.Float
	switch beyond := sum.MantExp(nil) > 16384; {
	case beyond && sum.Sign() > 0, !beyond && sum.Cmp(hi) > 0:
		target = hi
	case beyond, sum.Cmp(lo) < 0:
		target = lo
	}
	var value, delta []byte
	switch {
	case target == nil:
		value, ok = strnum.AddLongDouble(cur, by)
		delta, _ = strnum.AddLongDouble(by, zero)
	case o.seen&ixSaturate == 0:
		value, _ = strnum.AddLongDouble(cur, zero)
		x.W.Array(2)
		replyLongDouble(x, value)
		replyLongDouble(x, []byte("0"))
		return
	default:
		value, ok = strnum.AddLongDouble(target, zero)
		if ok {
			delta, ok = strnum.AddLongDouble(target, new(big.Float).Neg(cur))
		}
	}
	if !ok {
		x.W.Error(errNaN)
		return
	}
	enc := keyspace.EncEmbstr
	if len(value) > 44 {
		enc = keyspace.EncRaw
	}
	increxStore(x, o, &e, found, key, enc, value, given, "incrbyfloat")
	x.W.Array(2)
	replyLongDouble(x, value)
	replyLongDouble(x, delta)
}

// replyLongDouble writes a formatted long double as Redis replies one: a
// bulk string in RESP2, a double in RESP3.
func replyLongDouble(x *command.Ctx, s []byte) {
	if x.W.Proto < 3 {
		x.W.Bulk(s)
		return
	}
	x.W.B = append(append(append(x.W.B, ','), s...), '\r', '\n')
}

// increxStore stores INCREX's result with the expire time its options give,
// notifies event and then expire or persist, and propagates a SET that
// replays it: the value is stored, not recomputed, and a relative expiry
// becomes the absolute one it gave (PXAT); a kept TTL is KEEPTTL.
func increxStore(x *command.Ctx, o *increxOptions, e *keyspace.Entry, found bool, key []byte, enc keyspace.Encoding, value []byte, given int64, event string) {
	var had int64
	if found {
		had = e.ExpireAt()
	}
	expireAt, expires := increxExpire(o, had, given)
	if found {
		x.DB.Replace(e, enc, value, expireAt, x.Now)
	} else {
		x.DB.Put(e, key, keyspace.TypeString, enc, value, expireAt, x.Now)
	}
	x.Dirty++
	x.Notify(config.EventString, event, key)
	switch {
	case expires:
		x.Notify(config.EventGeneric, "expire", key)
	case had != 0 && expireAt == 0:
		x.Notify(config.EventGeneric, "persist", key)
	}
	if !x.Propagating() {
		return
	}
	v := bytes.Clone(value)
	switch {
	case expires:
		x.PropagateAs(argSET, key, v, argPXAT, command.IntArg(expireAt))
	case expireAt != 0:
		x.PropagateAs(argSET, key, v, argKEEPTTL)
	default:
		x.PropagateAs(argSET, key, v)
	}
}

func getrangeCommand(x *command.Ctx) {
	start, ok1 := strnum.ParseInt(x.Args[2])
	end, ok2 := strnum.ParseInt(x.Args[3])
	if !ok1 || !ok2 {
		x.W.Error(command.ErrNotInt)
		return
	}
	e, found, ok := getString(x, x.Args[1])
	if !ok {
		return
	}
	var v []byte
	if found {
		v = e.Value()
	}
	if start < 0 && end < 0 && start > end {
		x.W.Bulk(nil)
		return
	}
	first, last, empty := stringRange(start, end, int64(len(v)))
	if empty {
		x.W.Bulk(nil)
		return
	}
	x.W.Bulk(v[first : last+1])
}

// stringRange resolves inclusive, possibly negative start and end offsets
// over n bytes (or bits) as GETRANGE, BITCOUNT and BITPOS clamp them; empty
// reports that nothing is left.
func stringRange(start, end, n int64) (first, last int64, empty bool) {
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start, end = max(start, 0), max(end, 0)
	if end >= n {
		end = n - 1
	}
	if start > end {
		return 0, 0, true
	}
	return start, end, false
}

func setrangeCommand(x *command.Ctx) {
	offset, ok := strnum.ParseInt(x.Args[2])
	if !ok {
		x.W.Error(command.ErrNotInt)
		return
	}
	if offset < 0 {
		x.W.Error("ERR offset is out of range")
		return
	}
	key, arg := x.Args[1], x.Args[3]
	e, found := x.LookupWrite(key)
	if found && e.Type() != keyspace.TypeString {
		x.W.Error(command.ErrWrongType)
		return
	}
	var old []byte
	if found {
		old = e.Value()
	}
	if len(arg) == 0 {
		x.W.Int(int64(len(old)))
		return
	}
	if !checkStringLength(x, offset, int64(len(arg))) {
		return
	}
	size := max(int64(len(old)), offset+int64(len(arg)))
	if found && size == int64(len(old)) {
		// Same length: patch the stored bytes in place, no copy of the value.
		copy(old[offset:], arg)
		x.DB.Replace(&e, keyspace.EncRaw, old, e.ExpireAt(), x.Now)
	} else {
		// Longer: grown where it is stored, zero-filled, no copy of the
		// value built on the Go heap first.
		var value []byte
		if found {
			value = x.DB.Resize(&e, keyspace.EncRaw, int(size), x.Now)
		} else {
			value = x.DB.PutSized(&e, key, keyspace.TypeString, keyspace.EncRaw, int(size), 0, x.Now)
		}
		copy(value[offset:], arg)
	}
	x.Notify(config.EventString, "setrange", key)
	x.Dirty++
	x.W.Int(size)
}
