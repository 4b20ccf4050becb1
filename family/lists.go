package family

import (
	"bytes"
	"math"

	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/resp"
	"github.com/keyhive/keyhive/values"
)

func registerLists(bind binder) {
	bind("lpush", func(x *command.Ctx) { pushCommand(x, true, false) })
	bind("rpush", func(x *command.Ctx) { pushCommand(x, false, false) })
	bind("lpushx", func(x *command.Ctx) { pushCommand(x, true, true) })
	bind("rpushx", func(x *command.Ctx) { pushCommand(x, false, true) })
	bind("lpop", func(x *command.Ctx) { popCommand(x, true) })
	bind("rpop", func(x *command.Ctx) { popCommand(x, false) })
	bind("llen", llenCommand)
	bind("lindex", lindexCommand)
	bind("linsert", linsertCommand)
	bind("lrange", lrangeCommand)
	bind("lrem", lremCommand)
	bind("lset", lsetCommand)
	bind("ltrim", ltrimCommand)
	bind("lpos", lposCommand)
	bind("lmove", lmoveCommand)
	bind("rpoplpush", lmoveCommand)
	bind("lmpop", lmpopCommand)
	bind("blpop", func(x *command.Ctx) { bpopCommand(x, true) })
	bind("brpop", func(x *command.Ctx) { bpopCommand(x, false) })
	bind("blmove", blmoveCommand)
	bind("lmovem", lmovemCommand)
	bind("blmovem", blmovemCommand)
	bind("brpoplpush", blmoveCommand)
	bind("blmpop", blmpopCommand)
}

var (
	argLPOP = []byte("LPOP")
	argRPOP = []byte("RPOP")
)

func pushEvent(head bool) string {
	if head {
		return "lpush"
	}
	return "rpush"
}

func popEvent(head bool) string {
	if head {
		return "lpop"
	}
	return "rpop"
}

func pushCommand(x *command.Ctx, head, onlyExisting bool) {
	var l values.ListEdit
	if !command.EditAs(x, x.Args[1], &l) {
		return
	}
	if onlyExisting && !l.Found() {
		x.W.Int(0)
		return
	}
	for _, e := range x.Args[2:] {
		l.Push(head, e)
	}
	n := l.Len()
	x.Committed(l.Commit(), pushEvent(head))
	x.Dirty += len(x.Args) - 2
	x.W.Int(int64(n))
}

// popCommand is LPOP and RPOP, with an optional count.
func popCommand(x *command.Ctx, head bool) {
	if len(x.Args) > 3 {
		x.W.Error(command.ErrArity(x.Name))
		return
	}
	count, hasCount := int64(1), len(x.Args) == 3
	if hasCount {
		var ok bool
		if count, ok = popCount(x, x.Args[2]); !ok {
			return
		}
	}
	var l values.ListEdit
	if !command.EditAs(x, x.Args[1], &l) {
		return
	}
	switch {
	case !l.Found() && hasCount:
		x.W.NullArray()
		return
	case !l.Found():
		x.W.Null()
		return
	case hasCount && count == 0:
		x.W.Array(0)
		return
	}
	if hasCount {
		popReply(x, &l, head, count)
	} else {
		popReply(x, &l, head, -1)
	}
	x.Committed(l.Commit(), popEvent(head))
}

// popReply pops up to count elements from one end of a non-empty list and
// replies with them: an array, or the one element when count is -1.
func popReply(x *command.Ctx, l *values.ListEdit, head bool, count int64) int {
	n := l.Len()
	k := 1
	if count >= 0 {
		k = int(min(count, int64(n)))
		x.W.Array(k)
	}
	from := 0
	if !head {
		from = n - 1
	}
	i := 0
	l.Each(from, !head, func(e []byte) bool {
		x.W.Bulk(e)
		i++
		return i < k
	})
	if head {
		l.Trim(k, n)
	} else {
		l.Trim(0, n-k)
	}
	x.Dirty += k
	return k
}

func llenCommand(x *command.Ctx) {
	l, found, ok := command.ReadAs[values.ListView](x, x.Args[1])
	switch {
	case !ok:
	case !found:
		x.W.Int(0)
	default:
		x.W.Int(int64(l.Len()))
	}
}

// listIndex resolves a possibly negative index into a list of n elements,
// reporting whether it is in range.
func listIndex(index int64, n int) (int, bool) {
	if index < 0 {
		index += int64(n)
	}
	if index < 0 || index >= int64(n) {
		return 0, false
	}
	return int(index), true
}

func lindexCommand(x *command.Ctx) {
	l, found, ok := command.ReadAs[values.ListView](x, x.Args[1])
	if !ok {
		return
	}
	if !found {
		x.W.Null()
		return
	}
	index, ok := strnum.ParseInt(x.Args[2])
	if !ok {
		x.W.Error(command.ErrNotInt)
		return
	}
	if i, ok := listIndex(index, l.Len()); ok {
		x.W.Bulk(l.Index(i))
	} else {
		x.W.Null()
	}
}

func lsetCommand(x *command.Ctx) {
	var l values.ListEdit
	if !command.EditAs(x, x.Args[1], &l) {
		return
	}
	if !l.Found() {
		x.W.Error(command.ErrNoSuchKey)
		return
	}
	index, ok := strnum.ParseInt(x.Args[2])
	if !ok {
		x.W.Error(command.ErrNotInt)
		return
	}
	i, ok := listIndex(index, l.Len())
	if !ok {
		x.W.Error("ERR index out of range")
		return
	}
	l.Set(i, x.Args[3])
	x.Committed(l.Commit(), "lset")
	x.Dirty++
	x.W.OK()
}

func linsertCommand(x *command.Ctx) {
	var after bool
	switch {
	case cstr.ArgIs(x.Args[2], "after"):
		after = true
	case cstr.ArgIs(x.Args[2], "before"):
	default:
		x.W.Error(command.ErrSyntax)
		return
	}
	var l values.ListEdit
	if !command.EditAs(x, x.Args[1], &l) {
		return
	}
	if !l.Found() {
		x.W.Int(0)
		return
	}
	pivot, at := x.Args[3], -1
	i := 0
	l.Each(0, false, func(e []byte) bool {
		if bytes.Equal(e, pivot) {
			at = i
			return false
		}
		i++
		return true
	})
	if at < 0 {
		x.W.Int(-1)
		return
	}
	if after {
		at++
	}
	l.Insert(at, x.Args[4])
	n := l.Len()
	x.Committed(l.Commit(), "linsert")
	x.Dirty++
	x.W.Int(int64(n))
}

// parseRange parses the start and stop arguments of LRANGE and LTRIM.
func parseRange(x *command.Ctx) (start, stop int64, ok bool) {
	start, ok1 := strnum.ParseInt(x.Args[2])
	stop, ok2 := strnum.ParseInt(x.Args[3])
	if !ok1 || !ok2 {
		x.W.Error(command.ErrNotInt)
		return 0, 0, false
	}
	return start, stop, true
}

func lrangeCommand(x *command.Ctx) {
	start, stop, ok := parseRange(x)
	if !ok {
		return
	}
	l, found, ok := command.ReadAs[values.ListView](x, x.Args[1])
	if !ok {
		return
	}
	if !found {
		x.W.Array(0)
		return
	}
	from, to := rankRange(start, stop, l.Len())
	x.W.Array(to - from)
	if from == to {
		return
	}
	i := from
	l.Each(from, false, func(e []byte) bool {
		x.W.Bulk(e)
		i++
		return i < to
	})
}

func ltrimCommand(x *command.Ctx) {
	start, stop, ok := parseRange(x)
	if !ok {
		return
	}
	var l values.ListEdit
	if !command.EditAs(x, x.Args[1], &l) {
		return
	}
	if !l.Found() {
		x.W.OK()
		return
	}
	n := l.Len()
	from, to := rankRange(start, stop, n)
	l.Trim(from, to)
	x.Committed(l.Commit(), "ltrim")
	x.Dirty += n - (to - from)
	x.W.OK()
}

func lremCommand(x *command.Ctx) {
	count, ok := strnum.ParseInt(x.Args[2])
	if !ok {
		x.W.Error(command.ErrNotInt)
		return
	}
	if count == math.MinInt64 {
		x.W.Error(errNegatableRange)
		return
	}
	var l values.ListEdit
	if !command.EditAs(x, x.Args[1], &l) {
		return
	}
	if !l.Found() {
		x.W.Int(0)
		return
	}
	elem := x.Args[3]
	// Remove the matches after the first skip, up to limit of them: from the
	// head for a positive count, the last -count for a negative one.
	skip, limit := int64(0), count
	if count < 0 {
		limit = -count
		var matches int64
		l.Each(0, false, func(e []byte) bool {
			if bytes.Equal(e, elem) {
				matches++
			}
			return true
		})
		skip = max(matches-limit, 0)
	}
	var seen, removed int64
	l.Filter(func(e []byte) bool {
		if !bytes.Equal(e, elem) {
			return true
		}
		seen++
		if seen <= skip || (count != 0 && removed == limit) {
			return true
		}
		removed++
		return false
	})
	x.Committed(l.Commit(), command.EventIf(removed > 0, "lrem"))
	x.Dirty += int(removed)
	x.W.Int(removed)
}

func lposCommand(x *command.Ctx) {
	rank, count, maxlen := int64(1), int64(-1), int64(0)
	for j := 3; j < len(x.Args); j++ {
		more := j+1 < len(x.Args)
		switch {
		case more && cstr.ArgIs(x.Args[j], "rank"):
			j++
			v, ok := strnum.ParseInt(x.Args[j])
			switch {
			case !ok:
				x.W.Error(command.ErrNotInt)
				return
			case v == math.MinInt64:
				x.W.Error(errNegatableRange)
				return
			case v == 0:
				x.W.Error("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list")
				return
			}
			rank = v
		case more && cstr.ArgIs(x.Args[j], "count"):
			j++
			v, ok := strnum.ParseInt(x.Args[j])
			if !ok || v < 0 {
				x.W.Error("ERR COUNT can't be negative")
				return
			}
			count = v
		case more && cstr.ArgIs(x.Args[j], "maxlen"):
			j++
			v, ok := strnum.ParseInt(x.Args[j])
			if !ok || v < 0 {
				x.W.Error("ERR MAXLEN can't be negative")
				return
			}
			maxlen = v
		default:
			x.W.Error(command.ErrSyntax)
			return
		}
	}
	l, found, ok := command.ReadAs[values.ListView](x, x.Args[1])
	if !ok {
		return
	}
	if !found {
		if count >= 0 {
			x.W.Array(0)
		} else {
			x.W.Null()
		}
		return
	}
	elem := x.Args[2]
	backward := rank < 0
	if backward {
		// Redis negates the rank in C: the lowest one stays negative, so
		// every match qualifies, as for RANK -1.
		rank = max(-rank, 1)
	}
	n := l.Len()
	from := 0
	if backward {
		from = n - 1
	}
	var found1 int64 = -1
	var positions []int64
	var scanned, matches int64
	l.Each(from, backward, func(e []byte) bool {
		if maxlen != 0 && scanned >= maxlen {
			return false
		}
		pos := scanned
		if backward {
			pos = int64(n) - 1 - scanned
		}
		scanned++
		if !bytes.Equal(e, elem) {
			return true
		}
		matches++
		if matches < rank {
			return true
		}
		if count < 0 {
			found1 = pos
			return false
		}
		positions = append(positions, pos)
		return count == 0 || int64(len(positions)) < count
	})
	if count < 0 {
		if found1 < 0 {
			x.W.Null()
		} else {
			x.W.Int(found1)
		}
		return
	}
	x.W.Array(len(positions))
	for _, p := range positions {
		x.W.Int(p)
	}
}

// listEnd parses LEFT or RIGHT, reporting whether it names the head.
func listEnd(arg []byte) (head, ok bool) {
	switch {
	case cstr.ArgIs(arg, "left"):
		return true, true
	case cstr.ArgIs(arg, "right"):
		return false, true
	}
	return false, false
}

// lmoveCommand is LMOVE and RPOPLPUSH (RIGHT LEFT). Both propagate as sent.
func lmoveCommand(x *command.Ctx) {
	fromHead, toHead, ok := lmoveEnds(x.Args[3:])
	if !ok {
		x.W.Error(command.ErrSyntax)
		return
	}
	if l, ok := editListFound(x, x.Args[1]); ok {
		lmove(x, l, x.Args[2], fromHead, toHead)
	}
}

// lmoveEnds parses LMOVE's LEFT|RIGHT LEFT|RIGHT, or none for RPOPLPUSH's
// RIGHT LEFT.
func lmoveEnds(args [][]byte) (fromHead, toHead, ok bool) {
	if len(args) < 2 {
		return false, true, true
	}
	fromHead, ok1 := listEnd(args[0])
	toHead, ok2 := listEnd(args[1])
	return fromHead, toHead, ok1 && ok2
}

// editListFound starts an edit of the list at key, replying WRONGTYPE for
// another type and a null for none.
func editListFound(x *command.Ctx, key []byte) (l *values.ListEdit, ok bool) {
	l = &values.ListEdit{}
	if !command.EditAs(x, key, l) {
		return nil, false
	}
	if !l.Found() {
		x.W.Null()
		return nil, false
	}
	return l, true
}

// lmove moves an element from one end of the list in l (non-empty) to one end
// of the list at dst, replying with it.
func lmove(x *command.Ctx, l *values.ListEdit, dst []byte, fromHead, toHead bool) {
	src := l.Key()
	n := l.Len()
	from := 0
	if !fromHead {
		from = n - 1
	}
	if bytes.Equal(src, dst) {
		var buf [64]byte
		e := append(buf[:0], l.Index(from)...)
		l.Trim(boolInt(fromHead), n-boolInt(!fromHead))
		l.Push(toHead, e)
		x.Committed(l.Commit(), pushEvent(toHead))
		x.Notify(config.EventList, popEvent(fromHead), src)
		x.Dirty++
		x.W.Bulk(e)
		return
	}
	if de, found := x.LookupWrite(dst); found && de.Type() != keyspace.TypeList {
		x.W.Error(command.ErrWrongType)
		return
	}
	// The lookups may have removed expired keys: look both up again (without
	// touching them twice), committing src before dst is looked up.
	e, _ := x.DB.Lookup(src, x.Now, false)
	command.EditAt(x, src, &e, true, l)
	var buf [64]byte
	elem := append(buf[:0], l.Index(from)...)
	l.Trim(boolInt(fromHead), n-boolInt(!fromHead))
	// Redis notifies the push before the pop (and the source's deletion).
	l.Commit()
	e, found := x.DB.Lookup(dst, x.Now, false)
	command.EditAt(x, dst, &e, found, l)
	l.Push(toHead, elem)
	x.Committed(l.Commit(), pushEvent(toHead))
	x.Notify(config.EventList, popEvent(fromHead), src)
	if n == 1 {
		x.Notify(config.EventGeneric, "del", src)
	}
	x.Dirty++
	x.W.Bulk(elem)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func lmpopCommand(x *command.Ctx) { mpop(x, "left", "right", mpopList) }

// mpopList pops up to count elements from the list at key, when there is
// one, and replies with its key and them, propagated as the pop it did, as
// Redis does. It reports whether it replied (also WRONGTYPE).
func mpopList(x *command.Ctx, key []byte, head bool, count int64) bool {
	var l values.ListEdit
	if !command.EditAs(x, key, &l) {
		return true
	}
	if !l.Found() {
		return false
	}
	x.W.Array(2)
	x.W.Bulk(key)
	popped := popReply(x, &l, head, count)
	x.Committed(l.Commit(), popEvent(head))
	if x.Propagating() {
		x.PropagateAs(popVerb(head), key, command.IntArg(int64(popped)))
	}
	return true
}

func popVerb(head bool) []byte {
	if head {
		return argLPOP
	}
	return argRPOP
}

// Blocking pops: each serves at once from the first of its keys holding a
// list, else blocks (blocking.go) until one does.

// bpopCommand is BLPOP and BRPOP, propagated as the LPOP or RPOP they do.
func bpopCommand(x *command.Ctx, head bool) {
	bpop(x, keyspace.TypeList, func(x *command.Ctx, key []byte) {
		var l values.ListEdit
		command.EditAs(x, key, &l)
		x.W.Array(2)
		x.W.Bulk(key)
		popReply(x, &l, head, -1)
		x.Committed(l.Commit(), popEvent(head))
		x.PropagateAs(popVerb(head), key)
	})
}

// blmoveCommand is BLMOVE and BRPOPLPUSH, propagated as LMOVE and RPOPLPUSH.
func blmoveCommand(x *command.Ctx) {
	deadline, ok := x.ParseTimeout(x.Args[len(x.Args)-1])
	if !ok {
		return
	}
	fromHead, toHead, ok := lmoveEnds(x.Args[3 : len(x.Args)-1])
	if !ok {
		x.W.Error(command.ErrSyntax)
		return
	}
	src, dst := x.Args[1], x.Args[2]
	serve := func(x *command.Ctx, key []byte) {
		l, _ := editListFound(x, key)
		lmove(x, l, dst, fromHead, toHead)
		if len(x.Args) == 4 {
			x.PropagateAs(argRPOPLPUSH, src, dst)
		} else {
			x.PropagateAs(argLMOVE, src, dst, x.Args[3], x.Args[4])
		}
	}
	x.PopOrBlock(command.BlockRequest{Keys: x.Args[1:2], Dst: dst, Type: keyspace.TypeList, Deadline: deadline, Serve: serve, TimedOut: (*resp.Writer).NullArray, Denied: (*resp.Writer).Null})
}

var (
	argLMOVE     = []byte("LMOVE")
	argRPOPLPUSH = []byte("RPOPLPUSH")
)

// blmpopCommand is BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT n].
func blmpopCommand(x *command.Ctx) { bmpop(x, keyspace.TypeList, "left", "right", mpopList) }

// moveMany is LMOVEM's and BLMOVEM's how-many block: how many elements
// (COUNT up to n, EXACTLY n or none), and whether the batch keeps its order
// (BULK) or is pushed one by one (OBO).
type moveMany struct {
	n       int
	exactly bool
	bulk    bool
}

// parseMoveMany parses the optional how-many block of LMOVEM and BLMOVEM:
// none (one element), or COUNT|EXACTLY n followed by OBO|BULK.
func parseMoveMany(x *command.Ctx, args [][]byte) (m moveMany, ok bool) {
	if len(args) == 0 {
		return moveMany{n: 1}, true
	}
	if len(args) != 3 {
		x.W.Error(command.ErrSyntax)
		return m, false
	}
	switch {
	case cstr.ArgIs(args[0], "count"):
	case cstr.ArgIs(args[0], "exactly"):
		m.exactly = true
	default:
		x.W.Error(command.ErrSyntax)
		return m, false
	}
	n, ok := strnum.ParseInt(args[1])
	if !ok || n <= 0 {
		x.W.Error("ERR count should be greater than 0")
		return m, false
	}
	m.n = int(min(n, math.MaxInt32))
	switch {
	case cstr.ArgIs(args[2], "obo"):
	case cstr.ArgIs(args[2], "bulk"):
		m.bulk = true
	default:
		x.W.Error(command.ErrSyntax)
		return m, false
	}
	return m, true
}

// lmovemCommand is LMOVEM (Redis 8.10): LMOVE of up to (COUNT) or exactly
// (EXACTLY) n elements, replied as an array in their destination order
// (https://redis.io/docs/latest/commands/lmovem/). Propagated as sent.
func lmovemCommand(x *command.Ctx) {
	fromHead, toHead, ok := lmoveEnds(x.Args[3:5])
	if !ok {
		x.W.Error(command.ErrSyntax)
		return
	}
	m, ok := parseMoveMany(x, x.Args[5:])
	if !ok {
		return
	}
	var l values.ListEdit
	switch {
	case !command.EditAs(x, x.Args[1], &l):
	case !l.Found(), m.exactly && l.Len() < m.n:
		// Nothing moved: null, as the 8.10 clients' specs expect (go-redis,
		// ioredis, node-redis), with the how-many block or without.
		x.W.NullArray()
	default:
		lmovem(x, &l, x.Args[2], fromHead, toHead, m)
	}
}

// lmovem moves up to m.n elements (the source, in l, holds enough when
// EXACTLY) from one end of the list in l to one end of the list at dst, and
// replies with them as they lie in dst, head to tail. OBO pops them all, then
// pushes each in the order popped (on one key, reversing them); BULK pushes
// them as one batch in their source order.
func lmovem(x *command.Ctx, l *values.ListEdit, dst []byte, fromHead, toHead bool, m moveMany) (moved int) {
	src := l.Key()
	if !bytes.Equal(src, dst) {
		if de, found := x.LookupWrite(dst); found && de.Type() != keyspace.TypeList {
			x.W.Error(command.ErrWrongType)
			return 0
		}
		e, _ := x.DB.Lookup(src, x.Now, false) // dst's lookup may have expired keys
		command.EditAt(x, src, &e, true, l)
	}
	size := l.Len()
	n := min(m.n, size)
	start := 0
	if !fromHead {
		start = size - 1
	}
	x.Collect.Reset() // the popped elements, in the order popped
	l.Each(start, !fromHead, func(e []byte) bool {
		x.Collect.Add(e)
		return x.Collect.Len() < n
	})
	if fromHead {
		l.Trim(n, size)
	} else {
		l.Trim(0, size-n)
	}
	if !bytes.Equal(src, dst) {
		l.Commit() // Redis notifies the push before the pop
		e, found := x.DB.Lookup(dst, x.Now, false)
		command.EditAt(x, dst, &e, found, l)
	}
	// block(i) is the i-th moved element as it lies in dst, head to tail.
	reversed := toHead // OBO pushes them one by one: onto the head, reversed
	if m.bulk {
		reversed = !fromHead // BULK keeps their source order
	}
	block := func(i int) []byte {
		if reversed {
			i = n - 1 - i
		}
		return x.Collect.At(i)
	}
	for i := range n {
		if toHead {
			l.Push(true, block(n-1-i))
		} else {
			l.Push(false, block(i))
		}
	}
	x.Committed(l.Commit(), pushEvent(toHead))
	x.Notify(config.EventList, popEvent(fromHead), src)
	if n == size && !bytes.Equal(src, dst) {
		x.Notify(config.EventGeneric, "del", src)
	}
	x.Dirty++
	x.W.Array(n)
	for i := range n {
		x.W.Bulk(block(i))
	}
	return n
}

// blmovemCommand is BLMOVEM (Redis 8.10): LMOVEM that waits while the source
// is empty (EXACTLY: shorter than n) (https://redis.io/docs/latest/commands/blmovem/),
// propagated as the LMOVEM it did: with a how-many block, EXACTLY the
// elements moved, as Redis rewrites it.
func blmovemCommand(x *command.Ctx) {
	deadline, ok := x.ParseTimeout(x.Args[5])
	if !ok {
		return
	}
	fromHead, toHead, ok := lmoveEnds(x.Args[3:5])
	if !ok {
		x.W.Error(command.ErrSyntax)
		return
	}
	m, ok := parseMoveMany(x, x.Args[6:])
	if !ok {
		return
	}
	need := 1
	if m.exactly {
		need = m.n
	}
	ready := func(e *keyspace.Entry, found bool) bool {
		return found && e.Type() == keyspace.TypeList && values.ViewList(e).Len() >= need
	}
	serve := func(x *command.Ctx, key []byte) {
		var l values.ListEdit
		command.EditAs(x, key, &l)
		moved := lmovem(x, &l, x.Args[2], fromHead, toHead, m)
		if moved > 0 && x.Propagating() {
			argv := append([][]byte{argLMOVEM}, x.Args[1:5]...)
			if len(x.Args) > 6 {
				argv = append(argv, argEXACTLY, command.IntArg(int64(moved)), x.Args[8])
			}
			x.PropagateAs(argv...)
		}
	}
	src := x.Args[1]
	e, found := x.LookupWrite(src)
	if x.WrongType(&e, found, keyspace.TypeList) {
		return
	}
	if ready(&e, found) {
		serve(x, src)
		return
	}
	x.Block(command.BlockRequest{Keys: x.Args[1:2], Dst: x.Args[2], Type: keyspace.TypeList, Deadline: deadline,
		Serve: serve, Ready: ready, TimedOut: (*resp.Writer).NullArray})
}

var (
	argLMOVEM  = []byte("LMOVEM")
	argEXACTLY = []byte("EXACTLY")
)
