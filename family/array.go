package family

import (
	"bytes"
	"math"
	"regexp"

	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/glob"
	"github.com/keyhive/keyhive/internal/array"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/resp"
	"github.com/keyhive/keyhive/values"
)

// The array family (Redis 8.8's AR* commands) over internal/array. An
// array is a keyspace object created by its first write and deleted with
// its last element. Every argument is checked before anything is written,
// so a refused command changes nothing. Writes propagate as they are
// (each is deterministic) and raise generic keyspace events named after
// the command; a write that empties the array raises del after it.

func registerArray(bind binder) {
	bind("arset", arsetCommand)
	bind("arget", argetCommand)
	bind("armset", armsetCommand)
	bind("armget", armgetCommand)
	bind("ardel", ardelCommand)
	bind("ardelrange", ardelrangeCommand)
	bind("argetrange", argetrangeCommand)
	bind("arinsert", arinsertCommand)
	bind("arlen", arlenCommand)
	bind("arcount", arcountCommand)
	bind("arscan", arscanCommand)
	bind("arseek", arseekCommand)
	bind("arnext", arnextCommand)
	bind("argrep", argrepCommand)
	bind("arop", aropCommand)
	bind("arring", arringCommand)
	bind("arlastitems", arlastitemsCommand)
	bind("arinfo", arinfoCommand)
}

const (
	errArrayIndex = "ERR invalid array index"
	// ARGETRANGE's bound on the slots one call returns (the arrays page).
	arrayMaxRange  = 1000000
	errArrayRange  = "ERR range exceeds maximum of 1000000 elements"
	errArrayLimit  = "ERR LIMIT must be a positive integer"
	errArraySize   = "ERR ring size must be a positive integer"
	errArrayRegexp = "ERR invalid regular expression"
)

// parseUint64 reads decimal digits, nothing else, as an unsigned 64-bit
// integer.
func parseUint64(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// parseArrayIndex reads an index, 0 to array.MaxIndex.
func parseArrayIndex(b []byte) (uint64, bool) {
	i, ok := parseUint64(b)
	return i, ok && i <= array.MaxIndex
}

// arrayIndexesOrReply reads args as indexes, replying the error for the
// first that is not one.
func arrayIndexesOrReply(x *command.Ctx, args [][]byte) bool {
	for _, a := range args {
		if _, ok := parseArrayIndex(a); !ok {
			x.W.Error(errArrayIndex)
			return false
		}
	}
	return true
}

// readArray finds key's array for reading: nil when missing; ok=false
// after WRONGTYPE.
func readArray(x *command.Ctx, key []byte) (*array.Array, bool) {
	e, found, ok := x.ReadTyped(key, keyspace.TypeArray)
	if !found || !ok {
		return nil, ok
	}
	return values.EntryArray(&e), true
}

// arrayWrite is an array opened for writing: the existing one, or a new
// one that is stored only once written.
type arrayWrite struct {
	e     keyspace.Entry
	a     *array.Array
	found bool
}

// openArray opens x.Args[1] for writing; ok=false after WRONGTYPE.
func openArray(x *command.Ctx) (w arrayWrite, ok bool) {
	w.e, w.found = x.LookupWrite(x.Args[1])
	if x.WrongType(&w.e, w.found, keyspace.TypeArray) {
		return w, false
	}
	if w.found {
		w.a = values.EntryArray(&w.e)
	} else {
		w.a = &array.Array{}
	}
	return w, true
}

// done records a change to the array: stores a new one, deletes an emptied
// one, and raises event (and del when emptied).
func (w *arrayWrite) done(x *command.Ctx, event string) {
	key := x.Args[1]
	gone := w.a.Count() == 0
	switch {
	case gone && w.found:
		x.DB.DeleteEntry(&w.e)
	case gone:
		return // nothing was stored
	case w.found:
		x.DB.ModifiedEntry(&w.e)
	default:
		values.StoreArray(x.Env(), &w.e, key, w.a, 0)
	}
	x.Dirty++
	x.Notify(config.EventGeneric, event, key)
	if gone {
		x.Notify(config.EventGeneric, "del", key)
	}
}

// arsetCommand is ARSET key index value [value ...]: the values stored from
// index on; the number of slots that were empty.
func arsetCommand(x *command.Ctx) {
	i, ok := parseArrayIndex(x.Args[2])
	if !ok || uint64(len(x.Args)-4) > array.MaxIndex-i {
		x.W.Error(errArrayIndex)
		return
	}
	w, ok := openArray(x)
	if !ok {
		return
	}
	var added int64
	for k, v := range x.Args[3:] {
		if w.a.Set(i+uint64(k), v) {
			added++
		}
	}
	w.done(x, "arset")
	x.W.Int(added)
}

func argetCommand(x *command.Ctx) {
	i, ok := parseArrayIndex(x.Args[2])
	if !ok {
		x.W.Error(errArrayIndex)
		return
	}
	a, ok := readArray(x, x.Args[1])
	if !ok {
		return
	}
	if a != nil {
		if v, ok := a.Get(i); ok {
			x.W.Bulk(v)
			return
		}
	}
	x.W.Null()
}

// armsetCommand is ARMSET key index value [index value ...].
func armsetCommand(x *command.Ctx) {
	if len(x.Args)%2 != 0 {
		x.W.Error(command.ErrArity(x.Name))
		return
	}
	for j := 2; j < len(x.Args); j += 2 {
		if _, ok := parseArrayIndex(x.Args[j]); !ok {
			x.W.Error(errArrayIndex)
			return
		}
	}
	w, ok := openArray(x)
	if !ok {
		return
	}
	var added int64
	for j := 2; j < len(x.Args); j += 2 {
		i, _ := parseArrayIndex(x.Args[j])
		if w.a.Set(i, x.Args[j+1]) {
			added++
		}
	}
	w.done(x, "armset")
	x.W.Int(added)
}

func armgetCommand(x *command.Ctx) {
	if !arrayIndexesOrReply(x, x.Args[2:]) {
		return
	}
	a, ok := readArray(x, x.Args[1])
	if !ok {
		return
	}
	x.W.Array(len(x.Args) - 2)
	for _, arg := range x.Args[2:] {
		i, _ := parseArrayIndex(arg)
		if a != nil {
			if v, ok := a.Get(i); ok {
				x.W.Bulk(v)
				continue
			}
		}
		x.W.Null()
	}
}

func ardelCommand(x *command.Ctx) {
	if !arrayIndexesOrReply(x, x.Args[2:]) {
		return
	}
	w, ok := openArray(x)
	if !ok {
		return
	}
	var n int64
	for _, arg := range x.Args[2:] {
		i, _ := parseArrayIndex(arg)
		if w.a.Delete(i) {
			n++
		}
	}
	if n > 0 {
		w.done(x, "ardel")
	}
	x.W.Int(n)
}

// ardelrangeCommand is ARDELRANGE key start end [start end ...]: each
// range inclusive, in either order; an element in several counted once.
func ardelrangeCommand(x *command.Ctx) {
	if len(x.Args)%2 != 0 {
		x.W.Error(command.ErrArity(x.Name))
		return
	}
	if !arrayIndexesOrReply(x, x.Args[2:]) {
		return
	}
	w, ok := openArray(x)
	if !ok {
		return
	}
	var n uint64
	for j := 2; j < len(x.Args) && w.a.Count() > 0; j += 2 {
		lo, _ := parseArrayIndex(x.Args[j])
		hi, _ := parseArrayIndex(x.Args[j+1])
		n += w.a.DeleteRange(min(lo, hi), max(lo, hi))
	}
	if n > 0 {
		w.done(x, "ardelrange")
	}
	x.W.Uint(n)
}

// arrayRangeArgs reads start and end at x.Args[2] and x.Args[3].
func arrayRangeArgs(x *command.Ctx) (start, end uint64, ok bool) {
	start, ok1 := parseArrayIndex(x.Args[2])
	end, ok2 := parseArrayIndex(x.Args[3])
	if !ok1 || !ok2 {
		x.W.Error(errArrayIndex)
		return 0, 0, false
	}
	return start, end, true
}

// argetrangeCommand is ARGETRANGE key start end: every slot from start to
// end (descending when start > end), nil for the empty ones; at most
// arrayMaxRange of them.
func argetrangeCommand(x *command.Ctx) {
	start, end, ok := arrayRangeArgs(x)
	if !ok {
		return
	}
	if max(start, end)-min(start, end) >= arrayMaxRange {
		x.W.Error(errArrayRange)
		return
	}
	a, ok := readArray(x, x.Args[1])
	if !ok {
		return
	}
	if a == nil {
		x.W.Array(0)
		return
	}
	total := max(start, end) - min(start, end) + 1
	x.W.Array(int(total))
	next, step := start, uint64(1) // the slot to reply next, and the direction
	if start > end {
		step = math.MaxUint64 // -1
	}
	var replied uint64
	a.Range(start, end, func(i uint64, v []byte) bool {
		for ; next != i; next += step {
			x.W.Null()
			replied++
		}
		x.W.Bulk(v)
		next += step
		replied++
		return true
	})
	for ; replied < total; replied++ {
		x.W.Null()
	}
}

func arinsertCommand(x *command.Ctx) {
	w, ok := openArray(x)
	if !ok {
		return
	}
	last, ok := w.a.Insert(x.Args[2:])
	if !ok {
		x.W.Error(errArrayIndex)
		return
	}
	w.done(x, "arinsert")
	x.W.Uint(last)
}

func arlenCommand(x *command.Ctx) {
	a, ok := readArray(x, x.Args[1])
	if !ok {
		return
	}
	if a == nil {
		x.W.Int(0)
		return
	}
	x.W.Uint(a.Len())
}

func arcountCommand(x *command.Ctx) {
	a, ok := readArray(x, x.Args[1])
	if !ok {
		return
	}
	if a == nil {
		x.W.Int(0)
		return
	}
	x.W.Uint(a.Count())
}

// arrayLimit reads LIMIT n at x.Args[at]: 0 when absent; ok=false after
// replying an error.
func arrayLimit(x *command.Ctx, at int) (limit uint64, ok bool) {
	if at+1 >= len(x.Args) || !cstr.ArgIs(x.Args[at], "limit") {
		x.W.Error(command.ErrSyntax)
		return 0, false
	}
	n, ok := parseInt(x.Args[at+1])
	if !ok || n <= 0 {
		x.W.Error(errArrayLimit)
		return 0, false
	}
	return uint64(n), true
}

// arscanCommand is ARSCAN key start end [LIMIT limit]: [index, value] for
// each filled slot from start to end (descending when start > end), at
// most limit of them.
func arscanCommand(x *command.Ctx) {
	start, end, ok := arrayRangeArgs(x)
	if !ok {
		return
	}
	limit := uint64(math.MaxUint64)
	switch len(x.Args) {
	case 4:
	case 6:
		if limit, ok = arrayLimit(x, 4); !ok {
			return
		}
	default:
		x.W.Error(command.ErrSyntax)
		return
	}
	a, ok := readArray(x, x.Args[1])
	if !ok {
		return
	}
	if a == nil {
		x.W.Array(0)
		return
	}
	var n uint64
	a.Range(start, end, func(uint64, []byte) bool { n++; return n < limit })
	x.W.Array(int(n))
	a.Range(start, end, func(i uint64, v []byte) bool {
		x.W.Array(2)
		x.W.Uint(i)
		x.W.Bulk(v)
		n--
		return n > 0
	})
}

// arseekCommand is ARSEEK key index: 1 with the cursor moved (any index, or
// 2^64-1 for a cursor past the last), 0 when the key is missing.
func arseekCommand(x *command.Ctx) {
	i, ok := parseUint64(x.Args[2])
	if !ok {
		x.W.Error(errArrayIndex)
		return
	}
	w, ok := openArray(x)
	if !ok {
		return
	}
	if !w.found {
		x.W.Int(0)
		return
	}
	w.a.Seek(i)
	w.done(x, "arseek")
	x.W.Int(1)
}

// arnextCommand is ARNEXT key: the cursor; nil once it is past the last
// index.
func arnextCommand(x *command.Ctx) {
	a, ok := readArray(x, x.Args[1])
	if !ok {
		return
	}
	switch {
	case a == nil:
		x.W.Int(0)
	case a.Next() == array.Exhausted:
		x.W.Null()
	default:
		x.W.Uint(a.Next())
	}
}

// grepPredicate is one of ARGREP's predicates.
type grepPredicate struct {
	kind    string // exact, match, glob or re
	pattern []byte
	re      *regexp.Regexp
}

func (p *grepPredicate) matches(v []byte, nocase bool) bool {
	switch p.kind {
	case "exact":
		if nocase {
			return len(v) == len(p.pattern) && equalFoldASCII(v, p.pattern)
		}
		return bytes.Equal(v, p.pattern)
	case "match":
		if nocase {
			return containsFold(v, p.pattern)
		}
		return bytes.Contains(v, p.pattern)
	case "glob":
		return glob.Match(p.pattern, v, nocase)
	}
	return p.re.Match(v)
}

// containsFold reports whether sub is in s, ASCII letters matched in
// either case.
func containsFold(s, sub []byte) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if equalFoldASCII(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

// equalFoldASCII compares a and b (of one length) with ASCII letters
// matched in either case, as C's strncasecmp does.
func equalFoldASCII(a, b []byte) bool {
	for i := range a {
		c, d := a[i], b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if d >= 'A' && d <= 'Z' {
			d += 'a' - 'A'
		}
		if c != d {
			return false
		}
	}
	return true
}

// argrepBound reads ARGREP's start or end: an index, or - / + for the
// first / last.
func argrepBound(b []byte) (uint64, bool) {
	switch string(b) {
	case "-":
		return 0, true
	case "+":
		return array.MaxIndex, true
	}
	return parseArrayIndex(b)
}

// argrepCommand is ARGREP key start end predicate... [AND|OR] [LIMIT n]
// [WITHVALUES] [NOCASE], options and predicates in any order after the
// range: the indexes of the values in the range matching any predicate
// (all with AND), in the range's direction.
func argrepCommand(x *command.Ctx) {
	start, ok1 := argrepBound(x.Args[2])
	end, ok2 := argrepBound(x.Args[3])
	if !ok1 || !ok2 {
		x.W.Error(errArrayIndex)
		return
	}
	var preds []grepPredicate
	var and, withValues, nocase bool
	limit := uint64(math.MaxUint64)
	for j := 4; j < len(x.Args); j++ {
		arg, more := x.Args[j], j+1 < len(x.Args)
		switch {
		case more && (cstr.ArgIs(arg, "exact") || cstr.ArgIs(arg, "match") || cstr.ArgIs(arg, "glob") || cstr.ArgIs(arg, "re")):
			preds = append(preds, grepPredicate{kind: string(bytes.ToLower(arg)), pattern: x.Args[j+1]})
			j++
		case cstr.ArgIs(arg, "and"):
			and = true
		case cstr.ArgIs(arg, "or"):
			and = false
		case cstr.ArgIs(arg, "withvalues"):
			withValues = true
		case cstr.ArgIs(arg, "nocase"):
			nocase = true
		case cstr.ArgIs(arg, "limit"):
			var ok bool
			if limit, ok = arrayLimit(x, j); !ok {
				return
			}
			j++
		default:
			x.W.Error(command.ErrSyntax)
			return
		}
	}
	if len(preds) == 0 {
		x.W.Error(command.ErrSyntax)
		return
	}
	for k := range preds {
		if p := &preds[k]; p.kind == "re" {
			expr := string(p.pattern)
			if nocase {
				expr = "(?i)" + expr
			}
			re, err := regexp.Compile(expr)
			if err != nil {
				x.W.Error(errArrayRegexp)
				return
			}
			p.re = re
		}
	}
	a, ok := readArray(x, x.Args[1])
	if !ok {
		return
	}
	var hits []uint64
	if a != nil {
		a.Range(start, end, func(i uint64, v []byte) bool {
			match := and
			for k := range preds {
				if preds[k].matches(v, nocase) != and {
					match = !and
					break
				}
			}
			if match {
				hits = append(hits, i)
			}
			return uint64(len(hits)) < limit
		})
	}
	x.W.Array(len(hits))
	for _, i := range hits {
		if withValues {
			v, _ := a.Get(i)
			x.W.Array(2)
			x.W.Uint(i)
			x.W.Bulk(v)
			continue
		}
		x.W.Uint(i)
	}
}

// aropCommand is AROP key start end SUM|MIN|MAX|AND|OR|XOR|MATCH value|USED
// over the values from the lower index to the higher: SUM, MIN and MAX of
// the numeric ones as a bulk string, the bitwise ones of their integer
// parts as an integer (nil for both with no numeric value), MATCH's count
// of values equal to value and USED's of values.
func aropCommand(x *command.Ctx) {
	start, end, ok := arrayRangeArgs(x)
	if !ok {
		return
	}
	start, end = min(start, end), max(start, end)
	op := x.Args[4]
	var match []byte
	switch {
	case len(x.Args) == 6 && cstr.ArgIs(op, "match"):
		match = x.Args[5]
	case len(x.Args) == 5 && (cstr.ArgIs(op, "sum") || cstr.ArgIs(op, "min") || cstr.ArgIs(op, "max") ||
		cstr.ArgIs(op, "and") || cstr.ArgIs(op, "or") || cstr.ArgIs(op, "xor") || cstr.ArgIs(op, "used")):
	default:
		x.W.Error(command.ErrSyntax)
		return
	}
	a, ok := readArray(x, x.Args[1])
	if !ok {
		return
	}
	counting := match != nil || cstr.ArgIs(op, "used")
	var count int64
	var numbers int
	var acc float64
	var bits int64
	if a != nil {
		a.Range(start, end, func(_ uint64, v []byte) bool {
			if counting {
				if match == nil || bytes.Equal(v, match) {
					count++
				}
				return true
			}
			f, ok := strnum.ParseFloat(v)
			if !ok {
				return true
			}
			numbers++
			switch {
			case cstr.ArgIs(op, "sum"):
				acc += f
			case cstr.ArgIs(op, "min"):
				if numbers == 1 || f < acc {
					acc = f
				}
			case cstr.ArgIs(op, "max"):
				if numbers == 1 || f > acc {
					acc = f
				}
			default:
				n := truncInt(f)
				switch {
				case numbers == 1:
					bits = n
				case cstr.ArgIs(op, "and"):
					bits &= n
				case cstr.ArgIs(op, "or"):
					bits |= n
				default:
					bits ^= n
				}
			}
			return true
		})
	}
	switch {
	case counting:
		x.W.Int(count)
	case numbers == 0:
		x.W.Null()
	case cstr.ArgIs(op, "sum") || cstr.ArgIs(op, "min") || cstr.ArgIs(op, "max"):
		var buf [48]byte
		x.W.Bulk(resp.AppendDouble72(buf[:0], acc))
	default:
		x.W.Int(bits)
	}
}

// truncInt is f's integer part, saturated to the int64 range.
func truncInt(f float64) int64 {
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// arringCommand is ARRING key size value [value ...]: the values stored in
// a ring of size slots from index 0 (internal/array's Ring); the last
// index written.
func arringCommand(x *command.Ctx) {
	size, ok := parseUint64(x.Args[2])
	if !ok || size == 0 {
		x.W.Error(errArraySize)
		return
	}
	w, ok := openArray(x)
	if !ok {
		return
	}
	last := w.a.Ring(size, x.Args[3:])
	w.done(x, "arring")
	x.W.Uint(last)
}

// arlastitemsCommand is ARLASTITEMS key count [REV]: the count slots
// before the cursor (at most the array's length, and at most
// arrayMaxRange), oldest first or with REV newest first, nil for the empty
// ones.
func arlastitemsCommand(x *command.Ctx) {
	count, ok := parseInt(x.Args[2])
	if !ok || count < 0 {
		x.W.Error(command.ErrNotInt)
		return
	}
	rev := len(x.Args) == 4 && cstr.ArgIs(x.Args[3], "rev")
	if len(x.Args) > 4 || len(x.Args) == 4 && !rev {
		x.W.Error(command.ErrSyntax)
		return
	}
	a, ok := readArray(x, x.Args[1])
	if !ok {
		return
	}
	if a == nil {
		x.W.Array(0)
		return
	}
	n := min(uint64(count), a.Len())
	if n > arrayMaxRange {
		x.W.Error(errArrayRange) // as ARGETRANGE: the reply is slots, empty ones too
		return
	}
	x.W.Array(int(n))
	if rev {
		a.LastItems(n, func(v []byte, ok bool) { arrayReplySlot(x, v, ok) })
		return
	}
	// Oldest first: the walk back, replied from its end.
	items := make([][]byte, 0, n)
	held := make([]bool, 0, n)
	a.LastItems(n, func(v []byte, ok bool) {
		items, held = append(items, v), append(held, ok)
	})
	for k := len(items) - 1; k >= 0; k-- {
		arrayReplySlot(x, items[k], held[k])
	}
}

func arrayReplySlot(x *command.Ctx, v []byte, ok bool) {
	if ok {
		x.W.Bulk(v)
		return
	}
	x.W.Null()
}

// arinfoCommand is ARINFO key [FULL]: the array's length, count, cursor
// and pages (internal/array's pages are Redis's slices); FULL adds how
// many are dense and sparse and their average size and fill.
func arinfoCommand(x *command.Ctx) {
	full := len(x.Args) == 3 && cstr.ArgIs(x.Args[2], "full")
	if len(x.Args) > 3 || len(x.Args) == 3 && !full {
		x.W.Error(command.ErrSyntax)
		return
	}
	a, ok := readArray(x, x.Args[1])
	if !ok {
		return
	}
	if a == nil {
		x.W.NullArray()
		return
	}
	in := a.Info()
	next := a.Next()
	if next == array.Exhausted {
		next = 0
	}
	var superDir uint64 // the blocks of page headers, once there are several
	if in.Blocks > 1 {
		superDir = in.Blocks
	}
	fields := 7
	if full {
		fields += 5
	}
	x.W.Map(fields)
	for _, f := range [...]struct {
		name string
		n    uint64
	}{
		{"len", a.Len()},
		{"count", a.Count()},
		{"next-insert-index", next},
		{"slices", in.Pages},
		{"directory-size", in.Pages},
		{"super-dir-entries", superDir},
		{"slice-size", array.PageSlots},
	} {
		x.W.Simple(f.name)
		x.W.Uint(f.n)
	}
	if !full {
		return
	}
	avg := func(sum, n uint64) float64 {
		if n == 0 {
			return 0
		}
		return float64(sum) / float64(n)
	}
	x.W.Simple("dense-slices")
	x.W.Uint(in.DensePages)
	x.W.Simple("sparse-slices")
	x.W.Uint(in.SparsePages)
	x.W.Simple("avg-dense-size")
	x.W.Double72(avg(in.DenseBytes, in.DensePages))
	x.W.Simple("avg-dense-fill")
	x.W.Double72(avg(in.DenseElements, in.DensePages*array.PageSlots))
	x.W.Simple("avg-sparse-size")
	x.W.Double72(avg(in.SparseCapacity, in.SparsePages))
}
