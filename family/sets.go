package family

import (
	"math"

	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/hll"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/values"
)

func registerSets(bind binder) {
	bind("sadd", saddCommand)
	bind("srem", sremCommand)
	bind("sismember", sismemberCommand)
	bind("smismember", smismemberCommand)
	bind("smembers", smembersCommand)
	bind("scard", scardCommand)
	bind("spop", spopCommand)
	bind("srandmember", srandmemberCommand)
	bind("smove", smoveCommand)
	bind("sinter", func(x *command.Ctx) { sinterCommand(x, x.Args[1:], nil) })
	bind("sintercard", sintercardCommand)
	bind("sunioncard", func(x *command.Ctx) { setCardCommand(x, false) })
	bind("sdiffcard", func(x *command.Ctx) { setCardCommand(x, true) })
	bind("sinterstore", func(x *command.Ctx) { sinterCommand(x, x.Args[2:], x.Args[1]) })
	bind("sunion", func(x *command.Ctx) { sunionDiffCommand(x, x.Args[1:], nil, false) })
	bind("sunionstore", func(x *command.Ctx) { sunionDiffCommand(x, x.Args[2:], x.Args[1], false) })
	bind("sdiff", func(x *command.Ctx) { sunionDiffCommand(x, x.Args[1:], nil, true) })
	bind("sdiffstore", func(x *command.Ctx) { sunionDiffCommand(x, x.Args[2:], x.Args[1], true) })
	bind("sscan", sscanCommand)
}

var argSREM = []byte("SREM")

// store stores a built set at key, replacing a value of any type and its
// expire time, or deletes key when the set is empty; it replies with the
// set's size as the STORE commands do. The event is the command's name
// (sinterstore, sunionstore, sdiffstore).
func storeSet(x *command.Ctx, s *values.SetEdit, key []byte) {
	e, found := x.LookupWrite(key)
	was := e.Type()
	if x.Stored(s.StoreAt(&e, found, key), x.Name, found, was) {
		x.Dirty++
	}
	x.W.Int(int64(s.Len()))
}

// replySet writes a set reply (a RESP3 set) of every member.
func replySet(x *command.Ctx, s values.SetView) {
	x.W.Set(s.Len())
	s.Each(x.W.Bulk)
}

// replyWhole replies with a copy of the whole set, built as SUNION builds its
// result (as Redis does for an SPOP count beyond the size): a hashtable
// holding few integers comes back as an ascending intset.
func replyWhole(x *command.Ctx, s values.SetView) {
	var res values.SetEdit
	res.BeginNew(x.Env())
	s.Each(func(m []byte) { res.Add(m) })
	replySet(x, res.SetView)
}

func saddCommand(x *command.Ctx) {
	var s values.SetEdit
	if !command.EditAs(x, x.Args[1], &s) {
		return
	}
	s.Expect(x.Args[2], len(x.Args)-2)
	added := 0
	for _, m := range x.Args[2:] {
		if s.Add(m) {
			added++
		}
	}
	x.Committed(s.Commit(), command.EventIf(added > 0, "sadd"))
	x.Dirty += added
	x.W.Int(int64(added))
}

func sremCommand(x *command.Ctx) {
	var s values.SetEdit
	if !command.EditAs(x, x.Args[1], &s) {
		return
	}
	if !s.Found() {
		x.W.Int(0)
		return
	}
	removed := 0
	for _, m := range x.Args[2:] {
		if s.Remove(m) {
			removed++
			if s.Len() == 0 {
				break
			}
		}
	}
	x.Committed(s.Commit(), command.EventIf(removed > 0, "srem"))
	x.Dirty += removed
	x.W.Int(int64(removed))
}

func sismemberCommand(x *command.Ctx) {
	s, found, ok := command.ReadAs[values.SetView](x, x.Args[1])
	if !ok {
		return
	}
	if found && s.Has(x.Args[2]) {
		x.W.Int(1)
	} else {
		x.W.Int(0)
	}
}

func smismemberCommand(x *command.Ctx) {
	s, found, ok := command.ReadAs[values.SetView](x, x.Args[1])
	if !ok {
		return
	}
	x.W.Array(len(x.Args) - 2)
	for _, m := range x.Args[2:] {
		if found && s.Has(m) {
			x.W.Int(1)
		} else {
			x.W.Int(0)
		}
	}
}

// smembersCommand is SINTER of one key, without SINTER's allocations.
func smembersCommand(x *command.Ctx) {
	s, found, ok := command.ReadAs[values.SetView](x, x.Args[1])
	switch {
	case !ok:
	case !found:
		x.W.Set(0)
	default:
		replySet(x, s)
	}
}

func scardCommand(x *command.Ctx) {
	s, found, ok := command.ReadAs[values.SetView](x, x.Args[1])
	if !ok {
		return
	}
	if !found {
		x.W.Int(0)
		return
	}
	x.W.Int(int64(s.Len()))
}

func spopCommand(x *command.Ctx) {
	if len(x.Args) > 3 {
		x.W.Error(command.ErrSyntax)
		return
	}
	if len(x.Args) == 3 {
		spopWithCount(x)
		return
	}
	key := x.Args[1]
	var s values.SetEdit
	if !command.EditAs(x, key, &s) {
		return
	}
	if !s.Found() {
		x.W.Null()
		return
	}
	var buf [20]byte
	m := s.Member(s.RandomPos(), &buf)
	x.W.Bulk(m)
	if x.Propagating() {
		m = append([]byte(nil), m...)
		x.PropagateAs(argSREM, key, m)
	}
	s.Remove(m)
	x.Committed(s.Commit(), "spop")
	x.Dirty++
}

func spopWithCount(x *command.Ctx) {
	l, ok := popCount(x, x.Args[2])
	if !ok {
		return
	}
	key := x.Args[1]
	var s values.SetEdit
	if !command.EditAs(x, key, &s) {
		return
	}
	if !s.Found() || l == 0 {
		x.W.Set(0)
		return
	}
	size := s.Len()
	if l >= int64(size) {
		// The whole set, and the key goes.
		replyWhole(x, s.SetView)
		x.DB.DeleteEntry(s.Entry())
		x.Notify(config.EventSet, "spop", key)
		x.Notify(config.EventGeneric, "del", key)
		x.Dirty++
		propagateDel(x, key, x.Config().LazyFreeLazyServerDel())
		return
	}
	// Collect the popped members first: removing changes the set's memory.
	x.Collect.Reset()
	remaining := int64(size) - l
	rebuilt := remaining*spopMoveStrategyMul <= l && !s.HasTTLs() // a rebuild would drop member TTLs
	if rebuilt {
		// As Redis does for a count near the size: the members that stay
		// are drawn into a new set, which replaces the key's (an intset
		// from an intset, else a listpack when they fit one), and the
		// others are popped.
		var keep values.SetEdit
		keep.BeginNewLike(x.Env(), s.SetView)
		s.RandomDistinct(int(remaining), func(m []byte) { keep.Add(m) })
		s.Each(func(m []byte) {
			if !keep.Has(m) {
				x.Collect.Add(m)
			}
		})
		s.ReplaceWith(keep.SetView)
	} else {
		s.RandomDistinct(int(l), x.Collect.Add)
	}
	x.W.Set(int(l))
	var argv [][]byte
	if x.Propagating() {
		argv = append(make([][]byte, 0, 2+l), argSREM, key)
	}
	for i := range x.Collect.Len() {
		m := x.Collect.At(i) // valid until the next command
		x.W.Bulk(m)
		if argv != nil {
			argv = append(argv, m)
		}
		if !rebuilt {
			s.Remove(m)
		}
	}
	x.Committed(s.Commit(), "spop")
	x.Dirty += int(l)
	if argv != nil {
		x.PropagateAs(argv...)
	}
}

// spopMoveStrategyMul is Redis's SPOP_MOVE_STRATEGY_MUL: an SPOP count of
// at least this many times the members that stay rebuilds the set from them.
const spopMoveStrategyMul = 5

func srandmemberCommand(x *command.Ctx) {
	if len(x.Args) > 3 {
		x.W.Error(command.ErrSyntax)
		return
	}
	if len(x.Args) == 3 {
		srandmemberWithCount(x)
		return
	}
	s, found, ok := command.ReadAs[values.SetView](x, x.Args[1])
	switch {
	case !ok:
	case !found:
		x.W.Null()
	default:
		var buf [20]byte
		x.W.Bulk(s.Member(s.RandomPos(), &buf))
	}
}

func srandmemberWithCount(x *command.Ctx) {
	l, _, ok := parseRandomCount(x, "")
	if !ok {
		return
	}
	s, _, ok := command.ReadAs[values.SetView](x, x.Args[1])
	if !ok {
		return
	}
	writeRandom(x, l, s.Len(), false, randomDraws{
		repeats: func(n int) {
			var buf [20]byte // a member is written before the next is formatted
			for range n {
				x.W.Bulk(s.Member(s.RandomPos(), &buf))
			}
		},
		all:      func() { s.Each(x.W.Bulk) }, // in the set's own order
		distinct: func(n int) { s.RandomDistinct(n, x.W.Bulk) },
	})
}

func smoveCommand(x *command.Ctx) {
	srcKey, dstKey, m := x.Args[1], x.Args[2], x.Args[3]
	var src values.SetEdit
	if !command.EditAs(x, srcKey, &src) {
		return
	}
	if !src.Found() {
		x.W.Int(0)
		return
	}
	if e, found := x.LookupWrite(dstKey); found && e.Type() != keyspace.TypeSet {
		x.W.Error(command.ErrWrongType)
		return
	}
	if string(srcKey) == string(dstKey) {
		if src.Has(m) {
			x.W.Int(1)
		} else {
			x.W.Int(0)
		}
		return
	}
	if !src.Remove(m) {
		x.W.Int(0)
		return
	}
	x.Committed(src.Commit(), "srem")
	var dst values.SetEdit
	command.EditAs(x, dstKey, &dst)
	if !dst.Found() {
		dst.Expect(m, 1)
	}
	if dst.Add(m) {
		// A member dst already has leaves it untouched, WATCH included.
		x.Committed(dst.Commit(), "sadd")
		x.Dirty++
	}
	x.Dirty++
	x.W.Int(1)
}

// readSets looks keys up as sets, replying WRONGTYPE (ok=false) if any is of
// another type; a missing key is an empty set (found false).
func readSets(x *command.Ctx, keys [][]byte) (sets []values.SetView, found []bool, ok bool) {
	sets, found = make([]values.SetView, len(keys)), make([]bool, len(keys))
	for i, k := range keys {
		if sets[i], found[i], ok = command.ReadAs[values.SetView](x, k); !ok {
			return nil, nil, false
		}
	}
	return sets, found, true
}

// sinterCommand is SINTER, and SINTERSTORE when dst is set.
func sinterCommand(x *command.Ctx, keys [][]byte, dst []byte) {
	sets, found, ok := readSets(x, keys)
	if !ok {
		return
	}
	if dst != nil {
		var res values.SetEdit
		res.BeginNew(x.Env())
		intersect(sets, found, 0, func(m []byte) { res.Add(m) })
		storeSet(x, &res, dst)
		return
	}
	// The members are replied in the smallest set's order, as Redis does; the
	// count is known only at the end, so they are collected first.
	x.Collect.Reset()
	intersect(sets, found, 0, x.Collect.Add)
	x.W.Set(x.Collect.Len())
	for i := range x.Collect.Len() {
		x.W.Bulk(x.Collect.At(i))
	}
}

// intersect calls fn (when not nil) for the members of every set, iterating
// the smallest, and returns how many there are, stopping at limit (0 for
// none).
func intersect(sets []values.SetView, found []bool, limit int, fn func(m []byte)) int {
	small := 0
	for i, s := range sets {
		if !found[i] {
			return 0
		}
		if s.Len() < sets[small].Len() {
			small = i
		}
	}
	n := 0
	done := false
	sets[small].Each(func(m []byte) {
		if done {
			return
		}
		for i, s := range sets {
			if i != small && !s.Has(m) {
				return
			}
		}
		n++
		if fn != nil {
			fn(m)
		}
		done = limit > 0 && n >= limit
	})
	return n
}

func sintercardCommand(x *command.Ctx) {
	keys, limit, _, ok := parseCardArgs(x, false)
	if !ok {
		return
	}
	sets, found, ok := readSets(x, keys)
	if !ok {
		return
	}
	x.W.Int(int64(intersect(sets, found, limit, nil)))
}

// parseCardArgs parses SINTERCARD's, SUNIONCARD's and SDIFFCARD's arguments:
// numkeys, the keys, then LIMIT and, when approxOK (SUNIONCARD), APPROX, in
// any order; limit 0 is none.
func parseCardArgs(x *command.Ctx, approxOK bool) (keys [][]byte, limit int, approx, ok bool) {
	numkeys, ok := strnum.ParseInt(x.Args[1])
	if !ok || numkeys < 1 {
		x.W.Error("ERR numkeys should be greater than 0")
		return nil, 0, false, false
	}
	if numkeys > int64(len(x.Args)-2) {
		x.W.Error("ERR Number of keys can't be greater than number of args")
		return nil, 0, false, false
	}
	keys = x.Args[2 : 2+numkeys]
	for i := 2 + int(numkeys); i < len(x.Args); i++ {
		switch {
		case approxOK && cstr.ArgIs(x.Args[i], "approx"):
			approx = true
		case i+1 < len(x.Args) && cstr.ArgIs(x.Args[i], "limit"):
			i++
			n, ok := strnum.ParseInt(x.Args[i])
			if !ok || n < 0 {
				x.W.Error("ERR LIMIT can't be negative")
				return nil, 0, false, false
			}
			limit = int(min(n, math.MaxInt32))
		default:
			x.W.Error(command.ErrSyntax)
			return nil, 0, false, false
		}
	}
	return keys, limit, approx, true
}

// setCardCommand is SUNIONCARD and SDIFFCARD (diff) (Redis 8.10): the size
// of SUNION's or SDIFF's result, stopping at LIMIT; SUNIONCARD APPROX
// estimates it with a HyperLogLog instead of keeping the members seen
// (https://redis.io/docs/latest/commands/sunioncard/,
// https://redis.io/docs/latest/commands/sdiffcard/).
func setCardCommand(x *command.Ctx, diff bool) {
	keys, limit, approx, ok := parseCardArgs(x, !diff)
	if !ok {
		return
	}
	sets, found, ok := readSets(x, keys)
	if !ok {
		return
	}
	n := 0
	full := func() bool { return limit > 0 && n >= limit }
	switch {
	case diff:
		if !found[0] {
			break
		}
		sets[0].Each(func(m []byte) {
			if full() {
				return
			}
			for i := 1; i < len(sets); i++ {
				if found[i] && sets[i].Has(m) {
					return
				}
			}
			n++
		})
	case approx:
		sketch := hll.AppendEmpty(nil)
		maxBytes := x.Config().HLLSparseMaxBytes()
		for i, s := range sets {
			if found[i] {
				s.Each(func(m []byte) { sketch, _, _ = hll.Add(sketch, m, maxBytes) })
			}
		}
		card, _ := hll.Count(sketch)
		n = int(min(card, math.MaxInt32))
		if limit > 0 {
			n = min(n, limit)
		}
	default:
		var seen values.SetEdit
		seen.BeginNew(x.Env())
		for i, s := range sets {
			if !found[i] {
				continue
			}
			s.Each(func(m []byte) {
				if !full() && seen.Add(m) {
					n++
				}
			})
		}
	}
	x.W.Int(int64(n))
}

// sunionDiffCommand is SUNION and SDIFF (diff), with dst their STORE forms.
// The result is built as a set, as Redis does, so an intset result is
// replied in ascending order.
func sunionDiffCommand(x *command.Ctx, keys [][]byte, dst []byte, diff bool) {
	sets, found, ok := readSets(x, keys)
	if !ok {
		return
	}
	var res values.SetEdit
	res.BeginNew(x.Env())
	switch {
	case !diff:
		for i, s := range sets {
			if found[i] {
				s.Each(func(m []byte) { res.Add(m) })
			}
		}
	case found[0]:
		sets[0].Each(func(m []byte) {
			for i := 1; i < len(sets); i++ {
				if found[i] && sets[i].Has(m) {
					return
				}
			}
			res.Add(m)
		})
	}
	if dst != nil {
		storeSet(x, &res, dst)
		return
	}
	replySet(x, res.SetView)
}

func sscanCommand(x *command.Ctx) {
	s, cursor, opts, ok := command.BeginScan[values.SetView](x)
	if !ok {
		return
	}
	add := func(m []byte) {
		if opts.Matches(m) && !s.MemberGone(m) {
			x.Collect.Add(m)
		}
	}
	var next uint64
	if s.Obj != nil {
		next = s.Obj.Scan(cursor, opts.Limit(), func(m, _ []byte) { add(m) })
	} else {
		s.Each(add) // an intset or a listpack is returned whole, as Redis does
	}
	x.WriteScanReply(next)
}
