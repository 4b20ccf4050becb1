package server

import (
	"math"

	"github.com/keyhive/keyhive/internal/hll"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/values"
)

func init() {
	bind("sadd", saddCommand)
	bind("srem", sremCommand)
	bind("sismember", sismemberCommand)
	bind("smismember", smismemberCommand)
	bind("smembers", smembersCommand)
	bind("scard", scardCommand)
	bind("spop", spopCommand)
	bind("srandmember", srandmemberCommand)
	bind("smove", smoveCommand)
	bind("sinter", func(x *Ctx) { sinterCommand(x, x.Args[1:], nil) })
	bind("sintercard", sintercardCommand)
	bind("sunioncard", func(x *Ctx) { setCardCommand(x, false) })
	bind("sdiffcard", func(x *Ctx) { setCardCommand(x, true) })
	bind("sinterstore", func(x *Ctx) { sinterCommand(x, x.Args[2:], x.Args[1]) })
	bind("sunion", func(x *Ctx) { sunionDiffCommand(x, x.Args[1:], nil, false) })
	bind("sunionstore", func(x *Ctx) { sunionDiffCommand(x, x.Args[2:], x.Args[1], false) })
	bind("sdiff", func(x *Ctx) { sunionDiffCommand(x, x.Args[1:], nil, true) })
	bind("sdiffstore", func(x *Ctx) { sunionDiffCommand(x, x.Args[2:], x.Args[1], true) })
	bind("sscan", sscanCommand)
}

var argSREM = []byte("SREM")

// store stores a built set at key, replacing a value of any type and its
// expire time, or deletes key when the set is empty; it replies with the
// set's size as the STORE commands do. The event is the command's name
// (sinterstore, sunionstore, sdiffstore).
func (x *Ctx) storeSet(s *values.SetEdit, key []byte) {
	e, found := x.lookupWrite(key)
	was := e.Type()
	if x.stored(s.StoreAt(&e, found, key), x.cmd.Name, found, was) {
		x.dirty++
	}
	x.W.Int(int64(s.Len()))
}

// replySet writes a set reply (a RESP3 set) of every member.
func (x *Ctx) replySet(s values.SetView) {
	x.W.Set(s.Len())
	s.Each(x.W.Bulk)
}

// replyWhole replies with a copy of the whole set, built as SUNION builds its
// result (as Redis does for an SPOP count beyond the size): a hashtable
// holding few integers comes back as an ascending intset.
func (x *Ctx) replyWhole(s values.SetView) {
	var res values.SetEdit
	res.BeginNew(x.env())
	s.Each(func(m []byte) { res.Add(m) })
	x.replySet(res.SetView)
}

func saddCommand(x *Ctx) {
	var s values.SetEdit
	if !editAs(x, x.Args[1], &s) {
		return
	}
	added := 0
	for _, m := range x.Args[2:] {
		if s.Add(m) {
			added++
		}
	}
	x.committed(s.Commit(), eventIf(added > 0, "sadd"))
	x.dirty += added
	x.W.Int(int64(added))
}

func sremCommand(x *Ctx) {
	var s values.SetEdit
	if !editAs(x, x.Args[1], &s) {
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
	x.committed(s.Commit(), eventIf(removed > 0, "srem"))
	x.dirty += removed
	x.W.Int(int64(removed))
}

func sismemberCommand(x *Ctx) {
	s, found, ok := readAs[values.SetView](x, x.Args[1])
	if !ok {
		return
	}
	if found && s.Has(x.Args[2]) {
		x.W.Int(1)
	} else {
		x.W.Int(0)
	}
}

func smismemberCommand(x *Ctx) {
	s, found, ok := readAs[values.SetView](x, x.Args[1])
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
func smembersCommand(x *Ctx) {
	s, found, ok := readAs[values.SetView](x, x.Args[1])
	switch {
	case !ok:
	case !found:
		x.W.Set(0)
	default:
		x.replySet(s)
	}
}

func scardCommand(x *Ctx) {
	s, found, ok := readAs[values.SetView](x, x.Args[1])
	if !ok {
		return
	}
	if !found {
		x.W.Int(0)
		return
	}
	x.W.Int(int64(s.Len()))
}

func spopCommand(x *Ctx) {
	if len(x.Args) > 3 {
		x.W.Error(errSyntax)
		return
	}
	if len(x.Args) == 3 {
		spopWithCount(x)
		return
	}
	key := x.Args[1]
	var s values.SetEdit
	if !editAs(x, key, &s) {
		return
	}
	if !s.Found() {
		x.W.Null()
		return
	}
	var buf [20]byte
	m := s.Member(s.RandomPos(), &buf)
	x.W.Bulk(m)
	if x.propagating() {
		m = append([]byte(nil), m...)
		x.propagateAs(argSREM, key, m)
	}
	s.Remove(m)
	x.committed(s.Commit(), "spop")
	x.dirty++
}

func spopWithCount(x *Ctx) {
	l, ok := x.popCount(x.Args[2])
	if !ok {
		return
	}
	key := x.Args[1]
	var s values.SetEdit
	if !editAs(x, key, &s) {
		return
	}
	if !s.Found() || l == 0 {
		x.W.Set(0)
		return
	}
	size := s.Len()
	if l >= int64(size) {
		// The whole set, and the key goes.
		x.replyWhole(s.SetView)
		x.DB.DeleteEntry(s.Entry())
		x.notify(notifySet, "spop", key)
		x.notify(notifyGeneric, "del", key)
		x.dirty++
		x.propagateDel(key, x.s.cfg.LazyFreeLazyServerDel())
		return
	}
	// Collect the popped members first: removing changes the set's memory.
	x.collect.reset()
	remaining := int64(size) - l
	rebuilt := remaining*spopMoveStrategyMul <= l
	if rebuilt {
		// As Redis does for a count near the size: the members that stay
		// are drawn into a new set, which replaces the key's (so an intset
		// again when they are all integers), and the others are popped.
		var keep values.SetEdit
		keep.BeginNew(x.env())
		s.RandomDistinct(int(remaining), func(m []byte) { keep.Add(m) })
		s.Each(func(m []byte) {
			if !keep.Has(m) {
				x.collect.add(m)
			}
		})
		s.ReplaceWith(keep.SetView)
	} else {
		s.RandomDistinct(int(l), x.collect.add)
	}
	x.W.Set(int(l))
	var argv [][]byte
	if x.propagating() {
		argv = append(make([][]byte, 0, 2+l), argSREM, key)
	}
	start := 0
	for _, end := range x.collect.spans {
		m := x.collect.buf[start:end:end] // valid until the next command
		start = end
		x.W.Bulk(m)
		if argv != nil {
			argv = append(argv, m)
		}
		if !rebuilt {
			s.Remove(m)
		}
	}
	x.committed(s.Commit(), "spop")
	x.dirty += int(l)
	if argv != nil {
		x.propagateAs(argv...)
	}
}

// spopMoveStrategyMul is Redis's SPOP_MOVE_STRATEGY_MUL: an SPOP count of
// at least this many times the members that stay rebuilds the set from them.
const spopMoveStrategyMul = 5

func srandmemberCommand(x *Ctx) {
	if len(x.Args) > 3 {
		x.W.Error(errSyntax)
		return
	}
	if len(x.Args) == 3 {
		srandmemberWithCount(x)
		return
	}
	s, found, ok := readAs[values.SetView](x, x.Args[1])
	switch {
	case !ok:
	case !found:
		x.W.Null()
	default:
		var buf [20]byte
		x.W.Bulk(s.Member(s.RandomPos(), &buf))
	}
}

func srandmemberWithCount(x *Ctx) {
	l, _, ok := x.parseRandomCount("")
	if !ok {
		return
	}
	s, _, ok := readAs[values.SetView](x, x.Args[1])
	if !ok {
		return
	}
	x.writeRandom(l, s.Len(), false, randomDraws{
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

func smoveCommand(x *Ctx) {
	srcKey, dstKey, m := x.Args[1], x.Args[2], x.Args[3]
	var src values.SetEdit
	if !editAs(x, srcKey, &src) {
		return
	}
	if !src.Found() {
		x.W.Int(0)
		return
	}
	if e, found := x.lookupWrite(dstKey); found && e.Type() != keyspace.TypeSet {
		x.W.Error(errWrongType)
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
	x.committed(src.Commit(), "srem")
	var dst values.SetEdit
	editAs(x, dstKey, &dst)
	if dst.Add(m) {
		// A member dst already has leaves it untouched, WATCH included.
		x.committed(dst.Commit(), "sadd")
		x.dirty++
	}
	x.dirty++
	x.W.Int(1)
}

// readSets looks keys up as sets, replying WRONGTYPE (ok=false) if any is of
// another type; a missing key is an empty set (found false).
func (x *Ctx) readSets(keys [][]byte) (sets []values.SetView, found []bool, ok bool) {
	sets, found = make([]values.SetView, len(keys)), make([]bool, len(keys))
	for i, k := range keys {
		if sets[i], found[i], ok = readAs[values.SetView](x, k); !ok {
			return nil, nil, false
		}
	}
	return sets, found, true
}

// sinterCommand is SINTER, and SINTERSTORE when dst is set.
func sinterCommand(x *Ctx, keys [][]byte, dst []byte) {
	sets, found, ok := x.readSets(keys)
	if !ok {
		return
	}
	if dst != nil {
		var res values.SetEdit
		res.BeginNew(x.env())
		intersect(sets, found, 0, func(m []byte) { res.Add(m) })
		x.storeSet(&res, dst)
		return
	}
	// The members are replied in the smallest set's order, as Redis does; the
	// count is known only at the end, so they are collected first.
	x.collect.reset()
	intersect(sets, found, 0, x.collect.add)
	x.W.Set(len(x.collect.spans))
	start := 0
	for _, end := range x.collect.spans {
		x.W.Bulk(x.collect.buf[start:end])
		start = end
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

func sintercardCommand(x *Ctx) {
	keys, limit, _, ok := x.parseCardArgs(false)
	if !ok {
		return
	}
	sets, found, ok := x.readSets(keys)
	if !ok {
		return
	}
	x.W.Int(int64(intersect(sets, found, limit, nil)))
}

// parseCardArgs parses SINTERCARD's, SUNIONCARD's and SDIFFCARD's arguments:
// numkeys, the keys, then LIMIT and, when approxOK (SUNIONCARD), APPROX, in
// any order; limit 0 is none.
func (x *Ctx) parseCardArgs(approxOK bool) (keys [][]byte, limit int, approx, ok bool) {
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
		case approxOK && cArgIs(x.Args[i], "approx"):
			approx = true
		case i+1 < len(x.Args) && cArgIs(x.Args[i], "limit"):
			i++
			n, ok := strnum.ParseInt(x.Args[i])
			if !ok || n < 0 {
				x.W.Error("ERR LIMIT can't be negative")
				return nil, 0, false, false
			}
			limit = int(min(n, math.MaxInt32))
		default:
			x.W.Error(errSyntax)
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
func setCardCommand(x *Ctx, diff bool) {
	keys, limit, approx, ok := x.parseCardArgs(!diff)
	if !ok {
		return
	}
	sets, found, ok := x.readSets(keys)
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
		maxBytes := x.s.cfg.HLLSparseMaxBytes()
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
		seen.BeginNew(x.env())
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
func sunionDiffCommand(x *Ctx, keys [][]byte, dst []byte, diff bool) {
	sets, found, ok := x.readSets(keys)
	if !ok {
		return
	}
	var res values.SetEdit
	res.BeginNew(x.env())
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
		x.storeSet(&res, dst)
		return
	}
	x.replySet(res.SetView)
}

func sscanCommand(x *Ctx) {
	s, cursor, opts, ok := beginScan[values.SetView](x)
	if !ok {
		return
	}
	add := func(m []byte) {
		if opts.matches(m) {
			x.collect.add(m)
		}
	}
	var next uint64
	if s.Obj != nil {
		next = s.Obj.Scan(cursor, opts.limit(), func(m, _ []byte) { add(m) })
	} else {
		s.Each(add) // an intset is returned whole, as Redis does
	}
	x.writeScanReply(next)
}
