package family

import (
	"bytes"
	"math"
	"slices"
	"strconv"

	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/values"
)

// SORT and SORT_RO. Both take the exclusive lock: BY and GET patterns read
// keys named by the data being sorted, which no key hook can predict.
func registerSort(bind binder) {
	bind("sort", func(x *command.Ctx) { sortCommand(x, false) })
	bind("sort_ro", func(x *command.Ctx) { sortCommand(x, true) })
}

// sortItem is one element to sort with what it sorts by: a number, or for
// ALPHA with BY the looked-up value (hasCmp false when the key is missing).
type sortItem struct {
	elem   []byte
	score  float64
	cmp    []byte
	hasCmp bool
}

func sortCommand(x *command.Ctx, readonly bool) {
	args := x.Args
	var (
		desc, alpha, dontsort bool
		limitStart            int64
		limitCount            int64 = -1
		storeKey, sortBy      []byte
		gets                  [][]byte
	)
	for j := 2; j < len(args); j++ {
		left := len(args) - j - 1
		a := args[j]
		switch {
		case cstr.ArgIs(a, "asc"):
			desc = false
		case cstr.ArgIs(a, "desc"):
			desc = true
		case cstr.ArgIs(a, "alpha"):
			alpha = true
		case cstr.ArgIs(a, "limit") && left >= 2:
			s, ok := strnum.ParseInt(args[j+1])
			if !ok {
				x.W.Error(command.ErrNotInt)
				return
			}
			c, ok := strnum.ParseInt(args[j+2])
			if !ok {
				x.W.Error(command.ErrNotInt)
				return
			}
			limitStart, limitCount = s, c
			j += 2
		case cstr.ArgIs(a, "store") && left >= 1 && !readonly:
			storeKey = args[j+1]
			j++
		case cstr.ArgIs(a, "by") && left >= 1:
			sortBy = args[j+1]
			if bytes.IndexByte(cstr.Bytes(sortBy), '*') < 0 {
				dontsort = true // sticks even if a later BY has a '*'
			} else if !x.Conn().ReadsAllKeys(x) {
				x.W.Error("ERR BY option of SORT denied due to insufficient ACL permissions.")
				return
			}
			j++
		case cstr.ArgIs(a, "get") && left >= 1:
			if !x.Conn().ReadsAllKeys(x) {
				x.W.Error("ERR GET option of SORT denied due to insufficient ACL permissions.")
				return
			}
			gets = append(gets, args[j+1])
			j++
		default:
			x.W.Error(command.ErrSyntax)
			return
		}
	}

	// Patterns that may name keys on another slot than the sorted key's
	// are what cluster mode refuses; "#" is the element itself.
	if !dontsort && sortBy != nil && keyspace.PatternSlot(sortBy) != keyspace.Slot(args[1]) {
		x.Conn().ClusterIncompatible()
	}
	for _, g := range gets {
		if string(g) != "#" && keyspace.PatternSlot(g) != keyspace.Slot(args[1]) {
			x.Conn().ClusterIncompatible()
		}
	}
	e, found := x.LookupRead(args[1])
	typ := keyspace.TypeList
	if found {
		typ = e.Type()
		if typ != keyspace.TypeList && typ != keyspace.TypeSet && typ != keyspace.TypeZSet {
			x.W.Error(command.ErrWrongType)
			return
		}
	}
	// A set has no order of its own: stored results, and a script's, are
	// sorted, so that replicas and the AOF (which replay the script's
	// effects) see the same order.
	if dontsort && typ == keyspace.TypeSet && (storeKey != nil || x.Conn().ByScript()) {
		dontsort, alpha, sortBy = false, true, nil
	}
	// Redis turns a compact sorted set into its large form for good here.
	if found && typ == keyspace.TypeZSet && e.Object() == nil {
		var z values.ZSetEdit
		if command.EditAs(x, args[1], &z) {
			z.Convert()
			z.Commit()
		}
		e, found = x.LookupWrite(args[1])
	}

	n := 0
	var (
		lv values.ListView
		sv values.SetView
		zv values.ZSetView
	)
	if found {
		switch typ {
		case keyspace.TypeList:
			lv = values.ViewList(&e)
			n = lv.Len()
		case keyspace.TypeSet:
			sv = values.ViewSet(&e)
			sv.Now = x.Now // a member past its TTL is not there (Redis 8.12)
			n = sv.Len()
		case keyspace.TypeZSet:
			zv = values.ViewZSet(&e)
			n = zv.Len()
		}
	}

	// LIMIT, clamped to the length first so nothing overflows.
	vlen := int64(n)
	start := min(max(limitStart, 0), vlen)
	count := min(max(limitCount, -1), vlen)
	end := vlen - 1
	if count >= 0 {
		end = start + count - 1
	}
	if start >= vlen {
		start, end = vlen-1, vlen-2
	}
	if end >= vlen {
		end = vlen - 1
	}

	// Gather the elements, copied out of the keyspace.
	var buf []byte
	var spans []int
	add := func(m []byte) {
		buf = append(buf, m...)
		spans = append(spans, len(buf))
	}
	switch {
	case !found:
	case typ == keyspace.TypeList && dontsort:
		if end >= start {
			want := int(end - start + 1)
			from := int(start)
			if desc {
				from = n - int(start) - 1
			}
			lv.Each(from, desc, func(m []byte) bool {
				add(m)
				return len(spans) < want
			})
			end -= start
			start = 0
		}
	case typ == keyspace.TypeList:
		lv.Each(0, false, func(m []byte) bool { add(m); return true })
	case typ == keyspace.TypeSet:
		sv.Each(add)
	case typ == keyspace.TypeZSet && dontsort:
		rangeLen := int(vlen)
		if start != 0 || end != vlen-1 {
			rangeLen = int(end - start + 1)
		}
		if rangeLen > 0 {
			if desc {
				zv.Each(n-int(start)-rangeLen, n-int(start), true, func(m []byte, _ float64) { add(m) })
			} else {
				zv.Each(int(start), int(start)+rangeLen, false, func(m []byte, _ float64) { add(m) })
			}
		}
		end -= start
		start = 0
	default:
		zv.Each(0, n, false, func(m []byte, _ float64) { add(m) })
	}
	items := make([]sortItem, len(spans))
	from := 0
	for i, to := range spans {
		items[i].elem = buf[from:to:to]
		from = to
	}

	convErr := false
	if !dontsort {
		for i := range items {
			it := &items[i]
			val := it.elem
			if sortBy != nil {
				v, ok := lookupByPattern(x, sortBy, it.elem)
				if !ok {
					continue
				}
				val = v
			}
			if alpha {
				if sortBy != nil {
					it.cmp, it.hasCmp = bytes.Clone(val), true
				}
				continue
			}
			f, ok := sortStrtod(val)
			if !ok {
				convErr = true
			}
			it.score = f
		}
		byPattern, binary := sortBy != nil, storeKey != nil
		slices.SortStableFunc(items, func(a, b sortItem) int {
			var c int
			switch {
			case !alpha:
				switch {
				case a.score > b.score:
					c = 1
				case a.score < b.score:
					c = -1
				default:
					c = bytes.Compare(a.elem, b.elem)
				}
			case byPattern:
				switch {
				case !a.hasCmp || !b.hasCmp:
					c = boolInt(a.hasCmp) - boolInt(b.hasCmp)
				case binary:
					c = bytes.Compare(a.cmp, b.cmp)
				default:
					c = bytes.Compare(cstr.Bytes(a.cmp), cstr.Bytes(b.cmp))
				}
			case binary:
				c = bytes.Compare(a.elem, b.elem)
			default:
				c = bytes.Compare(cstr.Bytes(a.elem), cstr.Bytes(b.elem))
			}
			if desc {
				return -c
			}
			return c
		})
	}
	if convErr {
		x.W.Error("ERR One or more scores can't be converted into double")
		return
	}

	var out []sortItem
	if end >= start {
		out = items[start : end+1]
	}
	if storeKey == nil {
		per := max(len(gets), 1)
		x.W.Array(len(out) * per)
		for _, it := range out {
			if len(gets) == 0 {
				x.W.Bulk(it.elem)
			}
			for _, g := range gets {
				if v, ok := lookupByPattern(x, g, it.elem); ok {
					x.W.Bulk(v)
				} else {
					x.W.Null()
				}
			}
		}
		return
	}

	// STORE: build the list apart from the keyspace, then replace the
	// destination whatever its type.
	var l values.ListEdit
	l.BeginNew(x.Env())
	for _, it := range out {
		if len(gets) == 0 {
			l.Push(false, it.elem)
		}
		for _, g := range gets {
			v, _ := lookupByPattern(x, g, it.elem)
			l.Push(false, v) // a missing value is stored empty
		}
	}
	outLen := l.Len()
	e, found = x.LookupWrite(storeKey)
	was := e.Type()
	if x.Stored(l.StoreAt(&e, found, storeKey), "sortstore", found, was) {
		x.Dirty += max(outLen, 1)
	}
	x.W.Int(int64(outLen))
}

// lookupByPattern is the value a BY or GET pattern names for element m: m
// itself for "#", else the string at the pattern's first '*' replaced by m,
// or a hash field when "->field" follows the '*'. The pattern is read as a C
// string up to a NUL for its special characters.
func lookupByPattern(x *command.Ctx, pattern, m []byte) ([]byte, bool) {
	cp := cstr.Bytes(pattern)
	if len(cp) == 1 && cp[0] == '#' {
		return m, true
	}
	star := bytes.IndexByte(cp, '*')
	if star < 0 {
		return nil, false
	}
	keyEnd := len(pattern)
	var field []byte
	if f := bytes.Index(cp[star+1:], []byte("->")); f >= 0 && star+1+f+2 < len(cp) {
		keyEnd = star + 1 + f
		field = pattern[keyEnd+2:]
	}
	key := make([]byte, 0, star+len(m)+keyEnd-star-1)
	key = append(key, pattern[:star]...)
	key = append(key, m...)
	key = append(key, pattern[star+1:keyEnd]...)
	e, found := x.LookupRead(key)
	if !found {
		return nil, false
	}
	if field != nil {
		if e.Type() != keyspace.TypeHash {
			return nil, false
		}
		h := values.ViewHash(&e)
		h.Now = x.Now // a field past its TTL is not there (Redis 7.4)
		return h.Get(field)
	}
	if e.Type() != keyspace.TypeString {
		return nil, false
	}
	return e.Value(), true
}

// sortStrtod converts a sort weight as Redis does with strtod: leading space
// skipped, the string up to any NUL wholly a number, no overflow or
// underflow, no NaN. An empty string is 0.
func sortStrtod(b []byte) (float64, bool) {
	b = cstr.Bytes(b)
	if len(b) == 0 {
		return 0, true
	}
	i := 0
	for i < len(b) && isSpaceByte(b[i]) {
		i++
	}
	s := b[i:]
	if len(s) == 0 || bytes.IndexByte(s, '_') >= 0 {
		return 0, false
	}
	digits := s
	if len(digits) > 0 && (digits[0] == '+' || digits[0] == '-') {
		digits = digits[1:]
	}
	str := string(s)
	if len(digits) > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X') &&
		bytes.IndexAny(digits, "pP") < 0 {
		str += "p0" // strtod takes hex without a binary exponent
		if !validHexMantissa(digits[2:]) {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(str, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) && !isInfLiteral(digits) {
		return 0, false
	}
	if f == 0 && nonZeroMantissa(s) {
		return 0, false
	}
	if f != 0 && math.Abs(f) < 0x1p-1022 {
		return 0, false // glibc reports ERANGE for a subnormal result
	}
	return f, true
}

func validHexMantissa(b []byte) bool {
	dots, hex := 0, 0
	for _, c := range b {
		switch {
		case c == '.':
			dots++
		case (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'):
			hex++
		default:
			return false
		}
	}
	return dots <= 1 && hex > 0
}

func isInfLiteral(b []byte) bool {
	return len(b) > 0 && (b[0] == 'i' || b[0] == 'I')
}
