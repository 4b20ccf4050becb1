package server

import (
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/keyhive/keyhive/internal/bytemap"
	"github.com/keyhive/keyhive/internal/intset"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
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
	bind("sinterstore", func(x *Ctx) { sinterCommand(x, x.Args[2:], x.Args[1]) })
	bind("sunion", func(x *Ctx) { sunionDiffCommand(x, x.Args[1:], nil, false) })
	bind("sunionstore", func(x *Ctx) { sunionDiffCommand(x, x.Args[2:], x.Args[1], false) })
	bind("sdiff", func(x *Ctx) { sunionDiffCommand(x, x.Args[1:], nil, true) })
	bind("sdiffstore", func(x *Ctx) { sunionDiffCommand(x, x.Args[2:], x.Args[1], true) })
	bind("sscan", sscanCommand)
}

var argSREM = []byte("SREM")

// setObject is the large form of a set (OBJECT ENCODING hashtable): a bytemap
// whose values are empty. Sets of few integers are inline intsets instead.
type setObject struct{ bytemap.Map }

func (s *setObject) Clone() keyspace.Object { return &setObject{*s.Map.Clone()} }

// setView is a stored set in either form: obj when a hashtable, else is, an
// intset encoding.
type setView struct {
	is  []byte
	obj *setObject
}

func viewSet(e *keyspace.Entry) setView {
	if o := e.Object(); o != nil {
		return setView{obj: o.(*setObject)}
	}
	return setView{is: e.Value()}
}

func (s setView) len() int {
	if s.obj != nil {
		return s.obj.Len()
	}
	return intset.Len(s.is)
}

func (s setView) has(m []byte) bool {
	if s.obj != nil {
		_, ok := s.obj.Get(m)
		return ok
	}
	v, ok := strnum.ParseInt(m)
	return ok && intset.Contains(s.is, v)
}

// each calls fn for every member: in ascending order for an intset, in table
// order for a hashtable. The member is valid only during the call.
func (s setView) each(fn func(m []byte)) {
	if s.obj != nil {
		for p := s.obj.Next(0); p >= 0; p = s.obj.Next(p + 1) {
			m, _ := s.obj.At(p)
			fn(m)
		}
		return
	}
	var buf [20]byte
	for i := range intset.Len(s.is) {
		fn(strconv.AppendInt(buf[:0], intset.At(s.is, i), 10))
	}
}

// member returns the member at a position of a non-empty set: an index for an
// intset, a bytemap position otherwise. buf holds a formatted integer.
func (s setView) member(pos int, buf *[20]byte) []byte {
	if s.obj != nil {
		m, _ := s.obj.At(pos)
		return m
	}
	return strconv.AppendInt(buf[:0], intset.At(s.is, pos), 10)
}

// randomPos returns a uniformly random position of a non-empty set.
func (s setView) randomPos() int {
	if s.obj != nil {
		return s.obj.RandomPos()
	}
	return rand.IntN(intset.Len(s.is))
}

// randomDistinct calls fn for count distinct random members (count < len).
func (s setView) randomDistinct(count int, fn func(m []byte)) {
	var buf [20]byte
	if s.obj == nil || count*3 > s.obj.Len() {
		// A partial Fisher-Yates shuffle of the positions.
		var pos []int
		if s.obj == nil {
			pos = make([]int, intset.Len(s.is))
			for i := range pos {
				pos[i] = i
			}
		} else {
			for p := s.obj.Next(0); p >= 0; p = s.obj.Next(p + 1) {
				pos = append(pos, p)
			}
		}
		for i := 0; i < count; i++ {
			j := i + rand.IntN(len(pos)-i)
			pos[i], pos[j] = pos[j], pos[i]
			fn(s.member(pos[i], &buf))
		}
		return
	}
	seen := make(map[int]struct{}, count)
	for len(seen) < count {
		p := s.obj.RandomPos()
		if _, dup := seen[p]; dup {
			continue
		}
		seen[p] = struct{}{}
		fn(s.member(p, &buf))
	}
}

// readSet looks key up for reading as a set, replying WRONGTYPE (ok=false) for
// another type.
func (x *Ctx) readSet(key []byte) (s setView, found, ok bool) {
	e, found, ok := x.readTyped(key, keyspace.TypeSet)
	if found && ok {
		s = viewSet(&e)
	}
	return s, found, ok
}

// setEdit is a set being changed: an intset rebuilt by each change, or the
// hashtable changed in place. commit stores it.
type setEdit struct {
	collectionEdit
	setView
}

// editSet looks key up for writing as a set into s, which the caller keeps on
// its stack (a missing key is an empty intset), replying WRONGTYPE and
// returning false for another type.
func (x *Ctx) editSet(key []byte, s *setEdit) bool {
	*s = setEdit{}
	e, found := x.lookupWrite(key)
	if !s.begin(x, key, e, found, keyspace.TypeSet) {
		return false
	}
	if found {
		s.setView = viewSet(&s.e)
	}
	return true
}

// newSet starts a set that is built, not stored: a result of the set algebra.
func (x *Ctx) newSet(s *setEdit) { *s = setEdit{collectionEdit: collectionEdit{x: x}} }

// convert turns an intset into a hashtable.
func (s *setEdit) convert() {
	o := &setObject{}
	s.each(func(m []byte) { o.Set(m, nil) })
	s.obj, s.is, s.changed = o, nil, true
}

// add adds m, converting as Redis's setTypeAdd does, and reports whether it is
// new.
func (s *setEdit) add(m []byte) bool {
	if s.obj == nil {
		v, ok := strnum.ParseInt(m)
		if ok {
			// Take a scratch buffer only for a change: the one not handed out
			// last may hold s.is.
			if intset.Contains(s.is, v) {
				return false
			}
			s.is, _ = intset.Add(s.x.nextScratch(), s.is, v)
			s.x.keepScratch(s.is)
			s.changed = true
			if int64(intset.Len(s.is)) > s.x.s.cfg.SetMaxIntsetEntries() {
				s.convert()
			}
			return true
		}
		s.convert()
	}
	return s.obj.Set(m, nil)
}

// remove removes m and reports whether it was present.
func (s *setEdit) remove(m []byte) bool {
	if s.obj != nil {
		return s.obj.Delete(m)
	}
	v, ok := strnum.ParseInt(m)
	if !ok || !intset.Contains(s.is, v) {
		return false
	}
	s.is, _ = intset.Remove(s.x.nextScratch(), s.is, v)
	s.x.keepScratch(s.is)
	s.changed = true
	return true
}

// commit stores the set; an emptied set is deleted.
func (s *setEdit) commit(event string) {
	s.writeBack(keyspace.TypeSet, s.len(), s.obj != nil, s.obj, keyspace.EncHashtable, s.is, keyspace.EncIntset, event)
}

// store stores a built set at key, replacing a value of any type and its
// expire time, or deletes key when the set is empty; it replies with the
// set's size as the STORE commands do. The event is the command's name
// (sinterstore, sunionstore, sdiffstore).
func (s *setEdit) store(key []byte) {
	x := s.x
	n := s.len()
	var obj keyspace.Object
	if s.obj != nil {
		obj = s.obj
	}
	if x.storeCollection(key, keyspace.TypeSet, n, obj, keyspace.EncHashtable, s.is, keyspace.EncIntset, x.cmd.Name) {
		x.dirty++
	}
	x.W.Int(int64(n))
}

// replySet writes a set reply (a RESP3 set) of every member.
func (x *Ctx) replySet(s setView) {
	x.W.Set(s.len())
	s.each(x.W.Bulk)
}

// replyWhole replies with a copy of the whole set, built as SUNION builds its
// result (as Redis does for an SPOP count beyond the size): a hashtable
// holding few integers comes back as an ascending intset.
func (x *Ctx) replyWhole(s setView) {
	var res setEdit
	x.newSet(&res)
	s.each(func(m []byte) { res.add(m) })
	x.replySet(res.setView)
}

func saddCommand(x *Ctx) {
	var s setEdit
	if !x.editSet(x.Args[1], &s) {
		return
	}
	added := 0
	for _, m := range x.Args[2:] {
		if s.add(m) {
			added++
		}
	}
	s.commit(eventIf(added > 0, "sadd"))
	x.dirty += added
	x.W.Int(int64(added))
}

func sremCommand(x *Ctx) {
	var s setEdit
	if !x.editSet(x.Args[1], &s) {
		return
	}
	if !s.found {
		x.W.Int(0)
		return
	}
	removed := 0
	for _, m := range x.Args[2:] {
		if s.remove(m) {
			removed++
			if s.len() == 0 {
				break
			}
		}
	}
	s.commit(eventIf(removed > 0, "srem"))
	x.dirty += removed
	x.W.Int(int64(removed))
}

func sismemberCommand(x *Ctx) {
	s, found, ok := x.readSet(x.Args[1])
	if !ok {
		return
	}
	if found && s.has(x.Args[2]) {
		x.W.Int(1)
	} else {
		x.W.Int(0)
	}
}

func smismemberCommand(x *Ctx) {
	s, found, ok := x.readSet(x.Args[1])
	if !ok {
		return
	}
	x.W.Array(len(x.Args) - 2)
	for _, m := range x.Args[2:] {
		if found && s.has(m) {
			x.W.Int(1)
		} else {
			x.W.Int(0)
		}
	}
}

// smembersCommand is SINTER of one key, without SINTER's allocations.
func smembersCommand(x *Ctx) {
	s, found, ok := x.readSet(x.Args[1])
	switch {
	case !ok:
	case !found:
		x.W.Set(0)
	default:
		x.replySet(s)
	}
}

func scardCommand(x *Ctx) {
	s, found, ok := x.readSet(x.Args[1])
	if !ok {
		return
	}
	if !found {
		x.W.Int(0)
		return
	}
	x.W.Int(int64(s.len()))
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
	var s setEdit
	if !x.editSet(key, &s) {
		return
	}
	if !s.found {
		x.W.Null()
		return
	}
	var buf [20]byte
	m := s.member(s.randomPos(), &buf)
	x.W.Bulk(m)
	if x.propagating() {
		m = append([]byte(nil), m...)
		x.propagateAs(argSREM, key, m)
	}
	s.remove(m)
	s.commit("spop")
	x.dirty++
}

func spopWithCount(x *Ctx) {
	l, ok := strnum.ParseInt(x.Args[2])
	if !ok || l < 0 {
		x.W.Error("ERR value is out of range, must be positive")
		return
	}
	key := x.Args[1]
	var s setEdit
	if !x.editSet(key, &s) {
		return
	}
	if !s.found || l == 0 {
		x.W.Set(0)
		return
	}
	size := s.len()
	if l >= int64(size) {
		// The whole set, and the key goes.
		x.replyWhole(s.setView)
		x.DB.DeleteEntry(&s.e)
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
		var keep setEdit
		x.newSet(&keep)
		s.randomDistinct(int(remaining), func(m []byte) { keep.add(m) })
		s.each(func(m []byte) {
			if !keep.has(m) {
				x.collect.add(m)
			}
		})
		s.setView, s.changed = keep.setView, true
	} else {
		s.randomDistinct(int(l), x.collect.add)
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
			s.remove(m)
		}
	}
	s.commit("spop")
	x.dirty += int(l)
	if argv != nil {
		x.propagateAs(argv...)
	}
}

// spopMoveStrategyMul is Redis's SPOP_MOVE_STRATEGY_MUL: an SPOP count of
// at least this many times the members that stay rebuilds the set from them.
const spopMoveStrategyMul = 5

// srandmemberMaxRepeats bounds a negative SRANDMEMBER count: the reply is
// built in memory, and Redis itself runs out of memory on counts near the
// int64 limit.
const srandmemberMaxRepeats = 1 << 24

func srandmemberCommand(x *Ctx) {
	if len(x.Args) > 3 {
		x.W.Error(errSyntax)
		return
	}
	if len(x.Args) == 3 {
		srandmemberWithCount(x)
		return
	}
	s, found, ok := x.readSet(x.Args[1])
	switch {
	case !ok:
	case !found:
		x.W.Null()
	default:
		var buf [20]byte
		x.W.Bulk(s.member(s.randomPos(), &buf))
	}
}

func srandmemberWithCount(x *Ctx) {
	l, ok := strnum.ParseInt(x.Args[2])
	if !ok {
		x.W.Error(errNotInt)
		return
	}
	if l == math.MinInt64 {
		x.W.Error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
		return
	}
	s, found, ok := x.readSet(x.Args[1])
	if !ok {
		return
	}
	if !found || l == 0 {
		x.W.Array(0)
		return
	}
	var buf [20]byte
	switch {
	case l < 0 || l == 1: // repeats allowed
		count := max(l, -l)
		if count > srandmemberMaxRepeats {
			x.W.Error("ERR value is out of range")
			return
		}
		x.W.Array(int(count))
		for range count {
			x.W.Bulk(s.member(s.randomPos(), &buf))
		}
	case l >= int64(s.len()): // the whole set, in its own order
		x.W.Array(s.len())
		s.each(x.W.Bulk)
	default:
		x.W.Array(int(l))
		s.randomDistinct(int(l), x.W.Bulk)
	}
}

func smoveCommand(x *Ctx) {
	srcKey, dstKey, m := x.Args[1], x.Args[2], x.Args[3]
	var src setEdit
	if !x.editSet(srcKey, &src) {
		return
	}
	if !src.found {
		x.W.Int(0)
		return
	}
	if e, found := x.lookupWrite(dstKey); found && e.Type() != keyspace.TypeSet {
		x.W.Error(errWrongType)
		return
	}
	if string(srcKey) == string(dstKey) {
		if src.has(m) {
			x.W.Int(1)
		} else {
			x.W.Int(0)
		}
		return
	}
	if !src.remove(m) {
		x.W.Int(0)
		return
	}
	src.commit("srem")
	var dst setEdit
	x.editSet(dstKey, &dst)
	added := dst.add(m)
	if added {
		x.dirty++
	}
	dst.commit(eventIf(added, "sadd"))
	x.dirty++
	x.W.Int(1)
}

// readSets looks keys up as sets, replying WRONGTYPE (ok=false) if any is of
// another type; a missing key is an empty set (found false).
func (x *Ctx) readSets(keys [][]byte) (sets []setView, found []bool, ok bool) {
	sets, found = make([]setView, len(keys)), make([]bool, len(keys))
	for i, k := range keys {
		if sets[i], found[i], ok = x.readSet(k); !ok {
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
		var res setEdit
		x.newSet(&res)
		intersect(sets, found, 0, func(m []byte) { res.add(m) })
		res.store(dst)
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
func intersect(sets []setView, found []bool, limit int, fn func(m []byte)) int {
	small := 0
	for i, s := range sets {
		if !found[i] {
			return 0
		}
		if s.len() < sets[small].len() {
			small = i
		}
	}
	n := 0
	done := false
	sets[small].each(func(m []byte) {
		if done {
			return
		}
		for i, s := range sets {
			if i != small && !s.has(m) {
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
	numkeys, ok := strnum.ParseInt(x.Args[1])
	if !ok || numkeys < 1 {
		x.W.Error("ERR numkeys should be greater than 0")
		return
	}
	if numkeys > int64(len(x.Args)-2) {
		x.W.Error("ERR Number of keys can't be greater than number of args")
		return
	}
	keys := x.Args[2 : 2+numkeys]
	limit := int64(0)
	for i := 2 + int(numkeys); i < len(x.Args); i += 2 {
		if i+1 >= len(x.Args) || !cArgIs(x.Args[i], "limit") {
			x.W.Error(errSyntax)
			return
		}
		if limit, ok = strnum.ParseInt(x.Args[i+1]); !ok || limit < 0 {
			x.W.Error("ERR LIMIT can't be negative")
			return
		}
	}
	sets, found, ok := x.readSets(keys)
	if !ok {
		return
	}
	x.W.Int(int64(intersect(sets, found, int(min(limit, math.MaxInt32)), nil)))
}

// sunionDiffCommand is SUNION and SDIFF (diff), with dst their STORE forms.
// The result is built as a set, as Redis does, so an intset result is
// replied in ascending order.
func sunionDiffCommand(x *Ctx, keys [][]byte, dst []byte, diff bool) {
	sets, found, ok := x.readSets(keys)
	if !ok {
		return
	}
	var res setEdit
	x.newSet(&res)
	switch {
	case !diff:
		for i, s := range sets {
			if found[i] {
				s.each(func(m []byte) { res.add(m) })
			}
		}
	case found[0]:
		sets[0].each(func(m []byte) {
			for i := 1; i < len(sets); i++ {
				if found[i] && sets[i].has(m) {
					return
				}
			}
			res.add(m)
		})
	}
	if dst != nil {
		res.store(dst)
		return
	}
	x.replySet(res.setView)
}

func sscanCommand(x *Ctx) {
	cursor, ok := strnum.ParseCursor(x.Args[2])
	if !ok {
		x.W.Error("ERR invalid cursor")
		return
	}
	s, found, ok := x.readSet(x.Args[1])
	if !ok {
		return
	}
	if !found {
		x.W.B = append(x.W.B, emptyScan...)
		return
	}
	opts, ok := x.parseScanOptions(x.Args[3:], false)
	if !ok {
		return
	}
	x.collect.reset()
	add := func(m []byte) {
		if opts.matches(m) {
			x.collect.add(m)
		}
	}
	var next uint64
	if s.obj != nil {
		next = s.obj.Scan(cursor, int(min(opts.count, math.MaxInt32)), func(m, _ []byte) { add(m) })
	} else {
		s.each(add) // an intset is returned whole, as Redis does
	}
	x.writeScanReply(next)
}
