package family

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"strconv"

	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/resp"
	"github.com/keyhive/keyhive/values"
)

func registerZSets(bind binder) {
	bind("zrangestore", func(x *command.Ctx) { zrangeCommand(x, rangeAuto, dirAuto, true) })
	bind("zadd", func(x *command.Ctx) { zaddCommand(x, false) })
	bind("zincrby", func(x *command.Ctx) { zaddCommand(x, true) })
	bind("zrem", zremCommand)
	bind("zcard", zcardCommand)
	bind("zscore", zscoreCommand)
	bind("zmscore", zmscoreCommand)
	bind("zrank", func(x *command.Ctx) { zrankCommand(x, false) })
	bind("zrevrank", func(x *command.Ctx) { zrankCommand(x, true) })
	bind("zcount", func(x *command.Ctx) { zcountCommand(x, rangeScore) })
	bind("zlexcount", func(x *command.Ctx) { zcountCommand(x, rangeLex) })
	bind("zrange", func(x *command.Ctx) { zrangeCommand(x, rangeAuto, dirAuto, false) })
	bind("zrangebyscore", func(x *command.Ctx) { zrangeCommand(x, rangeScore, dirForward, false) })
	bind("zrevrangebyscore", func(x *command.Ctx) { zrangeCommand(x, rangeScore, dirReverse, false) })
	bind("zrevrange", func(x *command.Ctx) { zrangeCommand(x, rangeRank, dirReverse, false) })
	bind("zrangebylex", func(x *command.Ctx) { zrangeCommand(x, rangeLex, dirForward, false) })
	bind("zrevrangebylex", func(x *command.Ctx) { zrangeCommand(x, rangeLex, dirReverse, false) })
	bind("zremrangebyscore", func(x *command.Ctx) { zremrangeCommand(x, rangeScore) })
	bind("zremrangebyrank", func(x *command.Ctx) { zremrangeCommand(x, rangeRank) })
	bind("zremrangebylex", func(x *command.Ctx) { zremrangeCommand(x, rangeLex) })
	bind("zpopmin", func(x *command.Ctx) { zpopCommand(x, false) })
	bind("zpopmax", func(x *command.Ctx) { zpopCommand(x, true) })
	bind("zunion", func(x *command.Ctx) { zsetOpCommand(x, opUnion, false) })
	bind("zinter", func(x *command.Ctx) { zsetOpCommand(x, opInter, false) })
	bind("zdiff", func(x *command.Ctx) { zsetOpCommand(x, opDiff, false) })
	bind("zintercard", func(x *command.Ctx) { zsetOpCommand(x, opInterCard, false) })
	bind("zunionstore", func(x *command.Ctx) { zsetOpCommand(x, opUnion, true) })
	bind("zinterstore", func(x *command.Ctx) { zsetOpCommand(x, opInter, true) })
	bind("zdiffstore", func(x *command.Ctx) { zsetOpCommand(x, opDiff, true) })
	bind("zmpop", zmpopCommand)
	bind("bzpopmin", func(x *command.Ctx) { bzpopCommand(x, false) })
	bind("bzpopmax", func(x *command.Ctx) { bzpopCommand(x, true) })
	bind("bzmpop", bzmpopCommand)
	bind("zmove", zmoveCommand)
	bind("bzmove", bzmoveCommand)
	bind("zmovemember", zmovememberCommand)
	bind("zrandmember", zrandmemberCommand)
	bind("zscan", zscanCommand)
}

// parseScore parses a score as Redis's getDoubleFromObject does (strtod, the
// whole string, no leading space, no overflow or underflow to zero, no NaN).
func parseScore(b []byte) (float64, bool) {
	if f, ok := strnum.PlainDecimal(b); ok {
		return f, true
	}
	if len(b) == 0 || isSpaceByte(b[0]) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(f) || (f == 0 && nonZeroMantissa(b)) {
		return 0, false
	}
	return f, true
}

// nonZeroMantissa reports whether a float literal's digits before its
// exponent are not all zero (so a zero result is an underflow).
func nonZeroMantissa(b []byte) bool {
	hex := len(b) > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X')
	if len(b) > 3 && (b[0] == '-' || b[0] == '+') && b[1] == '0' && (b[2] == 'x' || b[2] == 'X') {
		hex, b = true, b[1:]
	}
	if hex {
		b = b[2:]
	}
	for _, c := range b {
		switch {
		case c >= '1' && c <= '9':
			return true
		case hex && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')):
			return true
		case c == 'e' || c == 'E' || c == 'p' || c == 'P':
			if !hex || c == 'p' || c == 'P' {
				return false
			}
		}
	}
	return false
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// parseRangeFloat parses a score range bound's number as Redis's zslParseRange
// does with strtod: leading space skipped, the rest wholly a number (inf on
// overflow), and the empty string is 0.
func parseRangeFloat(b []byte) (float64, bool) {
	if len(b) == 0 {
		return 0, true
	}
	i := 0
	for i < len(b) && isSpaceByte(b[i]) {
		i++
	}
	if i == len(b) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(b[i:]), 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return 0, false
		}
	}
	return f, !math.IsNaN(f)
}

// scoreRange is a parsed score interval.
type scoreRange struct {
	min, max     float64
	minex, maxex bool
}

func parseScoreBound(b []byte) (v float64, ex, ok bool) {
	if len(b) > 0 && b[0] == '(' {
		v, ok = parseRangeFloat(b[1:])
		return v, true, ok
	}
	v, ok = parseRangeFloat(b)
	return v, false, ok
}

func parseScoreRange(min, max []byte) (r scoreRange, ok bool) {
	var ok1, ok2 bool
	r.min, r.minex, ok1 = parseScoreBound(min)
	r.max, r.maxex, ok2 = parseScoreBound(max)
	return r, ok1 && ok2
}

// lexBound is a parsed lex range item: '-', '+', or a string, exclusive or not.
type lexBound struct {
	kind byte // '-', '+', '[' or '('
	s    []byte
}

func parseLexBound(b []byte) (lexBound, bool) {
	if len(b) == 0 {
		return lexBound{}, false
	}
	switch b[0] {
	case '+', '-':
		return lexBound{kind: b[0]}, len(b) == 1
	case '(', '[':
		return lexBound{kind: b[0], s: b[1:]}, true
	}
	return lexBound{}, false
}

// interval is a parsed score or lex range, as rank bounds over a sorted set.
type interval struct {
	score    scoreRange
	min, max lexBound
	lex      bool
}

// ranks returns the ranks [start, end) of the elements in the interval.
func (iv *interval) ranks(z values.ZSetView) (start, end int) {
	if iv.lex {
		start = z.Count(func(_ float64, m []byte) bool {
			switch iv.min.kind {
			case '-':
				return false
			case '+':
				return true
			case '[':
				return bytes.Compare(m, iv.min.s) < 0
			}
			return bytes.Compare(m, iv.min.s) <= 0
		})
		end = z.Count(func(_ float64, m []byte) bool {
			switch iv.max.kind {
			case '-':
				return false
			case '+':
				return true
			case '[':
				return bytes.Compare(m, iv.max.s) <= 0
			}
			return bytes.Compare(m, iv.max.s) < 0
		})
	} else {
		r := &iv.score
		start = z.Count(func(s float64, _ []byte) bool { return s < r.min || (r.minex && s == r.min) })
		end = z.Count(func(s float64, _ []byte) bool { return s < r.max || (!r.maxex && s == r.max) })
	}
	return start, max(start, end)
}

const (
	errMinMaxFloat = "ERR min or max is not a float"
	errMinMaxLex   = "ERR min or max not valid string range item"
)

// parseInterval parses min and max of a score or lex range, replying the
// error when they are invalid.
func parseInterval(x *command.Ctx, kind rangeKind, min, max []byte) (iv interval, ok bool) {
	if kind == rangeLex {
		var ok1, ok2 bool
		iv.lex = true
		iv.min, ok1 = parseLexBound(min)
		iv.max, ok2 = parseLexBound(max)
		if !ok1 || !ok2 {
			x.W.Error(errMinMaxLex)
			return iv, false
		}
		return iv, true
	}
	if iv.score, ok = parseScoreRange(min, max); !ok {
		x.W.Error(errMinMaxFloat)
	}
	return iv, ok
}

type rangeKind uint8

const (
	rangeAuto rangeKind = iota
	rangeRank
	rangeScore
	rangeLex
)

type direction uint8

const (
	dirAuto direction = iota
	dirForward
	dirReverse
)

// zaddFlags are ZADD's options.
type zaddFlags struct{ nx, xx, gt, lt, ch, incr bool }

// zaddCommand is ZADD and ZINCRBY (ZADD with INCR), as Redis's
// zaddGenericCommand.
func zaddCommand(x *command.Ctx, zincrby bool) {
	var f zaddFlags
	i := 2
	if zincrby {
		f.incr = true
	} else {
	flags:
		for ; i < len(x.Args); i++ {
			a := x.Args[i]
			switch {
			case cstr.ArgIs(a, "nx"):
				f.nx = true
			case cstr.ArgIs(a, "xx"):
				f.xx = true
			case cstr.ArgIs(a, "ch"):
				f.ch = true
			case cstr.ArgIs(a, "incr"):
				f.incr = true
			case cstr.ArgIs(a, "gt"):
				f.gt = true
			case cstr.ArgIs(a, "lt"):
				f.lt = true
			default:
				break flags
			}
		}
	}
	pairs := x.Args[i:]
	switch {
	case len(pairs)%2 != 0 || len(pairs) == 0:
		x.W.Error(command.ErrSyntax)
		return
	case f.nx && f.xx:
		x.W.Error("ERR XX and NX options at the same time are not compatible")
		return
	case (f.gt && f.nx) || (f.lt && f.nx) || (f.gt && f.lt):
		x.W.Error("ERR GT, LT, and/or NX options at the same time are not compatible")
		return
	case f.incr && len(pairs) > 2:
		x.W.Error("ERR INCR option supports a single increment-element pair")
		return
	}
	for j := 0; j < len(pairs); j += 2 {
		if _, ok := parseScore(pairs[j]); !ok {
			x.W.Error(command.ErrNotFloat)
			return
		}
	}
	zaddPairs(x, f, len(pairs)/2, func(j int) (float64, []byte) {
		score, _ := parseScore(pairs[2*j])
		return score, pairs[2*j+1]
	})
}

// zaddPairs applies n valid score-member pairs to the sorted set at
// x.Args[1] as ZADD does with the options f, and replies. GEOADD shares it,
// with scores it computed.
func zaddPairs(x *command.Ctx, f zaddFlags, n int, pair func(j int) (score float64, member []byte)) {
	var z values.ZSetEdit
	if !command.EditAs(x, x.Args[1], &z) {
		return
	}
	added, updated, processed := 0, 0, 0
	var score float64
	if z.Found() || !f.xx {
		for j := 0; j < n; j++ {
			var member []byte
			score, member = pair(j)
			cur, exists := z.Score(member)
			switch {
			case !exists:
				if f.xx {
					continue
				}
				z.Add(member, score)
				added++
			case f.nx:
				continue
			default:
				if f.incr {
					score += cur
					if math.IsNaN(score) { // INCR has a single pair: nothing changed
						x.W.Error("ERR resulting score is not a number (NaN)")
						return
					}
				}
				if (f.lt && score >= cur) || (f.gt && score <= cur) {
					continue
				}
				if score != cur {
					z.SetScore(member, score)
					updated++
				}
			}
			processed++
		}
		x.Committed(z.Commit(), command.EventIf(added+updated > 0, zaddEvent(f.incr)))
	}
	x.Dirty += added + updated
	switch {
	case !f.incr && f.ch:
		x.W.Int(int64(added + updated))
	case !f.incr:
		x.W.Int(int64(added))
	case processed > 0:
		x.W.Double(score)
	default:
		x.W.Null()
	}
}

func zaddEvent(incr bool) string {
	if incr {
		return "zincr"
	}
	return "zadd"
}

func zremCommand(x *command.Ctx) {
	var z values.ZSetEdit
	if !command.EditAs(x, x.Args[1], &z) {
		return
	}
	if !z.Found() {
		x.W.Int(0)
		return
	}
	deleted := 0
	for _, m := range x.Args[2:] {
		if z.Remove(m) {
			deleted++
			if z.Len() == 0 {
				break
			}
		}
	}
	x.Committed(z.Commit(), command.EventIf(deleted > 0, "zrem"))
	x.Dirty += deleted
	x.W.Int(int64(deleted))
}

func zcardCommand(x *command.Ctx) {
	z, found, ok := command.ReadAs[values.ZSetView](x, x.Args[1])
	switch {
	case !ok:
	case !found:
		x.W.Int(0)
	default:
		x.W.Int(int64(z.Len()))
	}
}

func zscoreCommand(x *command.Ctx) {
	z, found, ok := command.ReadAs[values.ZSetView](x, x.Args[1])
	if !ok {
		return
	}
	if s, exists := z.Score(x.Args[2]); found && exists {
		x.W.Double(s)
		return
	}
	x.W.Null()
}

func zmscoreCommand(x *command.Ctx) {
	z, found, ok := command.ReadAs[values.ZSetView](x, x.Args[1])
	if !ok {
		return
	}
	x.W.Array(len(x.Args) - 2)
	for _, m := range x.Args[2:] {
		if s, exists := z.Score(m); found && exists {
			x.W.Double(s)
		} else {
			x.W.Null()
		}
	}
}

// zrankCommand is ZRANK and ZREVRANK, with Redis 7.2's WITHSCORE (the rank
// and the score as a pair, a null array when there is none).
func zrankCommand(x *command.Ctx, rev bool) {
	if len(x.Args) > 4 {
		x.W.Error(command.ErrArity(x.Name))
		return
	}
	withScore := len(x.Args) == 4
	if withScore && !cstr.ArgIs(x.Args[3], "withscore") {
		x.W.Error(command.ErrSyntax)
		return
	}
	z, found, ok := command.ReadAs[values.ZSetView](x, x.Args[1])
	if !ok {
		return
	}
	r, exists := z.Rank(x.Args[2])
	switch {
	case (!found || !exists) && withScore:
		x.W.NullArray()
	case !found || !exists:
		x.W.Null()
	default:
		if rev {
			r = z.Len() - 1 - r
		}
		if !withScore {
			x.W.Int(int64(r))
			return
		}
		score, _ := z.Score(x.Args[2])
		x.W.Array(2)
		x.W.Int(int64(r))
		x.W.Double(score)
	}
}

func zcountCommand(x *command.Ctx, kind rangeKind) {
	iv, ok := parseInterval(x, kind, x.Args[2], x.Args[3])
	if !ok {
		return
	}
	z, found, ok := command.ReadAs[values.ZSetView](x, x.Args[1])
	switch {
	case !ok:
	case !found:
		x.W.Int(0)
	default:
		start, end := iv.ranks(z)
		x.W.Int(int64(end - start))
	}
}

// zrangeCommand is ZRANGE, its older forms and ZRANGESTORE, as Redis's
// zrangeGenericCommand.
func zrangeCommand(x *command.Ctx, kind rangeKind, dir direction, store bool) {
	base := 1 // the source key
	if store {
		base = 2
	}
	withScores := false
	offset, limit := int64(0), int64(-1)
	for j := base + 3; j < len(x.Args); j++ {
		a := x.Args[j]
		switch {
		case !store && cstr.ArgIs(a, "withscores"):
			withScores = true
		case cstr.ArgIs(a, "limit") && len(x.Args)-j-1 >= 2:
			var ok bool
			if offset, ok = strnum.ParseInt(x.Args[j+1]); !ok {
				x.W.Error(command.ErrNotInt)
				return
			}
			if limit, ok = strnum.ParseInt(x.Args[j+2]); !ok {
				x.W.Error(command.ErrNotInt)
				return
			}
			j += 2
		case dir == dirAuto && cstr.ArgIs(a, "rev"):
			dir = dirReverse
		case kind == rangeAuto && cstr.ArgIs(a, "bylex"):
			kind = rangeLex
		case kind == rangeAuto && cstr.ArgIs(a, "byscore"):
			kind = rangeScore
		default:
			x.W.Error(command.ErrSyntax)
			return
		}
	}
	rev := dir == dirReverse
	if kind == rangeAuto {
		kind = rangeRank
	}
	if limit != -1 && kind == rangeRank {
		x.W.Error("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
		return
	}
	if withScores && kind == rangeLex {
		x.W.Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
		return
	}
	lo, hi := x.Args[base+1], x.Args[base+2]
	if rev && kind != rangeRank {
		lo, hi = hi, lo
	}
	var iv interval
	var first, last int64
	if kind == rangeRank {
		var ok bool
		if first, ok = strnum.ParseInt(lo); !ok {
			x.W.Error(command.ErrNotInt)
			return
		}
		if last, ok = strnum.ParseInt(hi); !ok {
			x.W.Error(command.ErrNotInt)
			return
		}
	} else {
		var ok bool
		if iv, ok = parseInterval(x, kind, lo, hi); !ok {
			return
		}
	}
	z, found, ok := command.ReadAs[values.ZSetView](x, x.Args[base])
	if !ok {
		return
	}
	var start, end int
	switch {
	case !found:
	case kind == rangeRank:
		start, end = rankRange(first, last, z.Len())
		if rev {
			n := z.Len()
			start, end = n-end, n-start
		}
	default:
		start, end = iv.ranks(z)
		if offset < 0 {
			start = end
		} else if rev {
			end -= int(min(offset, int64(end-start)))
			if limit >= 0 {
				start = max(start, end-int(min(limit, int64(end-start))))
			}
		} else {
			start += int(min(offset, int64(end-start)))
			if limit >= 0 {
				end = min(end, start+int(min(limit, int64(end-start))))
			}
		}
	}
	if !store {
		writeRange(x, z, start, end, rev, withScores)
		return
	}
	o := &values.ZSetObject{}
	if start < end {
		z.Each(start, end, false, o.Add)
	}
	x.W.Int(int64(storeZSet(x, x.Args[1], o, x.Name)))
}

// storeZSet stores o at key as a new sorted set (no expire time), compact
// when it fits the limits as Redis's zsetConvertToListpackIfNeeded does, and
// returns its length. An empty o deletes key. event is the store's keyspace
// event: the command's name (zrangestore, zunionstore, ...), georadiusstore
// for GEORADIUS's STORE.
func storeZSet(x *command.Ctx, key []byte, o *values.ZSetObject, event string) int {
	e, found := x.LookupWrite(key)
	was := e.Type()
	if x.Stored(values.StoreZSet(x.Env(), &e, found, key, o), event, found, was) {
		x.Dirty++
	}
	return o.Len()
}

type setOp uint8

const (
	opUnion setOp = iota
	opInter
	opInterCard
	opDiff
)

// opSource is an input of ZUNION and friends: a sorted set, or a set whose
// members score 1.
type opSource struct {
	z      values.ZSetView
	s      values.SetView
	isSet  bool
	found  bool
	weight float64
}

func (o *opSource) len() int {
	switch {
	case !o.found:
		return 0
	case o.isSet:
		return o.s.Len()
	}
	return o.z.Len()
}

func (o *opSource) score(m []byte) (float64, bool) {
	switch {
	case !o.found:
		return 0, false
	case o.isSet:
		return 1, o.s.Has(m)
	}
	return o.z.Score(m)
}

func (o *opSource) each(fn func(m []byte, s float64)) {
	switch {
	case !o.found:
	case o.isSet:
		o.s.Each(func(m []byte) { fn(m, 1) })
	default:
		o.z.Each(0, o.z.Len(), false, fn)
	}
}

// weighted returns w*s, with NaN (0 times an infinity) as 0, as Redis does.
func weighted(w, s float64) float64 {
	if v := w * s; !math.IsNaN(v) {
		return v
	}
	return 0
}

// contribution is what an input's score s, under weight w, brings to a
// member's aggregate: w*s, or for AGGREGATE COUNT (Redis 8.8) w alone, the
// input's membership counted and its score ignored
// (https://redis.io/docs/latest/commands/zunionstore/).
func contribution(how byte, w, s float64) float64 {
	if how == 'c' {
		return w
	}
	return weighted(w, s)
}

// aggregate combines a score into an accumulated one as Redis's
// zunionInterAggregate does: a NaN sum is 0, and a NaN v loses MIN and MAX;
// COUNT's contributions are summed.
func aggregate(how byte, acc, v float64) float64 {
	switch how {
	case 'n':
		if v < acc {
			return v
		}
		return acc
	case 'x':
		if v > acc {
			return v
		}
		return acc
	}
	if acc += v; math.IsNaN(acc) {
		return 0
	}
	return acc
}

// zsetOpCommand is ZUNION, ZINTER, ZDIFF, their STORE forms and ZINTERCARD,
// as Redis's zunionInterDiffGenericCommand.
func zsetOpCommand(x *command.Ctx, op setOp, store bool) {
	numAt := 1
	if store {
		numAt = 2
	}
	n, ok := strnum.ParseInt(x.Args[numAt])
	if !ok {
		x.W.Error(command.ErrNotInt)
		return
	}
	if n < 1 {
		x.W.Error("ERR at least 1 input key is needed for '" + x.Name + "' command")
		return
	}
	if n > int64(len(x.Args)-numAt-1) {
		x.W.Error(command.ErrSyntax)
		return
	}
	srcs := make([]opSource, n)
	for i := range srcs {
		key := x.Args[numAt+1+i]
		var e keyspace.Entry
		e, srcs[i].found = x.LookupRead(key)
		srcs[i].weight = 1
		if !srcs[i].found {
			continue
		}
		switch e.Type() {
		case keyspace.TypeZSet:
			srcs[i].z = values.ViewZSet(&e)
		case keyspace.TypeSet:
			srcs[i].s, srcs[i].isSet = values.ViewSet(&e), true
			srcs[i].s.Now = x.Now // members past their TTL are not read
		default:
			x.W.Error(command.ErrWrongType)
			return
		}
	}
	how, withScores, limit := byte('s'), false, int64(0)
	for j := numAt + 1 + int(n); j < len(x.Args); {
		a, left := x.Args[j], len(x.Args)-j
		switch {
		case op != opDiff && op != opInterCard && left >= int(n)+1 && cstr.ArgIs(a, "weights"):
			j++
			for i := range srcs {
				w, ok := parseScore(x.Args[j])
				if !ok {
					x.W.Error("ERR weight value is not a float")
					return
				}
				srcs[i].weight = w
				j++
			}
		case op != opDiff && op != opInterCard && left >= 2 && cstr.ArgIs(a, "aggregate"):
			switch b := x.Args[j+1]; {
			case cstr.ArgIs(b, "sum"):
				how = 's'
			case cstr.ArgIs(b, "min"):
				how = 'n'
			case cstr.ArgIs(b, "max"):
				how = 'x'
			case cstr.ArgIs(b, "count"):
				how = 'c'
			default:
				x.W.Error(command.ErrSyntax)
				return
			}
			j += 2
		case !store && op != opInterCard && cstr.ArgIs(a, "withscores"):
			withScores = true
			j++
		case op == opInterCard && left >= 2 && cstr.ArgIs(a, "limit"):
			var ok bool
			if limit, ok = strnum.ParseInt(x.Args[j+1]); !ok || limit < 0 {
				x.W.Error("ERR LIMIT can't be negative")
				return
			}
			j += 2
		default:
			x.W.Error(command.ErrSyntax)
			return
		}
	}
	if op != opDiff {
		slices.SortStableFunc(srcs, func(a, b opSource) int { return a.len() - b.len() })
	}
	o := &values.ZSetObject{}
	switch op {
	case opUnion:
		acc := map[string]float64{}
		var order []string
		for i := range srcs {
			w := srcs[i].weight
			srcs[i].each(func(m []byte, s float64) {
				v := contribution(how, w, s)
				if cur, ok := acc[string(m)]; ok {
					acc[string(m)] = aggregate(how, cur, v)
					return
				}
				acc[string(m)] = v
				order = append(order, string(m))
			})
		}
		for _, m := range order {
			o.Add([]byte(m), acc[m])
		}
	case opInter, opInterCard:
		count := int64(0)
		if srcs[0].len() > 0 {
			srcs[0].each(func(m []byte, s float64) {
				if limit > 0 && count >= limit {
					return
				}
				v := contribution(how, srcs[0].weight, s)
				for i := 1; i < len(srcs); i++ {
					s2, ok := srcs[i].score(m)
					if !ok {
						return
					}
					v2 := s2 * srcs[i].weight // unlike the first, NaN is not made 0
					if how == 'c' {
						v2 = srcs[i].weight
					}
					v = aggregate(how, v, v2)
				}
				count++
				if op == opInter {
					o.Add(m, v)
				}
			})
		}
		if op == opInterCard {
			x.W.Int(count)
			return
		}
	case opDiff:
		srcs[0].each(func(m []byte, s float64) {
			for i := 1; i < len(srcs); i++ {
				if _, ok := srcs[i].score(m); ok {
					return
				}
			}
			o.Add(m, s)
		})
	}
	if store {
		x.W.Int(int64(storeZSet(x, x.Args[1], o, x.Name)))
		return
	}
	writeRange(x, values.ZSetView{Obj: o}, 0, o.Len(), false, withScores)
}

// writeRange replies the elements of ranks [start, end), reversed when rev,
// with scores as pairs (nested in RESP3) when withScores.
func writeRange(x *command.Ctx, z values.ZSetView, start, end int, rev, withScores bool) {
	n := end - start
	nested := withScores && x.W.Proto >= 3
	if withScores && !nested {
		n *= 2
	}
	x.W.Array(n)
	z.Each(start, end, rev, func(m []byte, s float64) {
		if nested {
			x.W.Array(2)
		}
		x.W.Bulk(m)
		if withScores {
			x.W.Double(s)
		}
	})
}

func zremrangeCommand(x *command.Ctx, kind rangeKind) {
	var iv interval
	var first, last int64
	if kind == rangeRank {
		var ok bool
		if first, ok = strnum.ParseInt(x.Args[2]); !ok {
			x.W.Error(command.ErrNotInt)
			return
		}
		if last, ok = strnum.ParseInt(x.Args[3]); !ok {
			x.W.Error(command.ErrNotInt)
			return
		}
	} else {
		var ok bool
		if iv, ok = parseInterval(x, kind, x.Args[2], x.Args[3]); !ok {
			return
		}
	}
	var z values.ZSetEdit
	if !command.EditAs(x, x.Args[1], &z) {
		return
	}
	if !z.Found() {
		x.W.Int(0)
		return
	}
	var start, end int
	if kind == rangeRank {
		start, end = rankRange(first, last, z.Len())
	} else {
		start, end = iv.ranks(z.ZSetView)
	}
	if start < end {
		z.RemoveRange(start, end)
		x.Committed(z.Commit(), x.Name) // zremrangebyrank, zremrangebyscore, zremrangebylex
		x.Dirty += end - start
	}
	x.W.Int(int64(end - start))
}

func zpopCommand(x *command.Ctx, fromMax bool) {
	if len(x.Args) > 3 {
		x.W.Error(command.ErrSyntax)
		return
	}
	count := int64(-1)
	if len(x.Args) == 3 {
		var ok bool
		if count, ok = popCount(x, x.Args[2]); !ok {
			return
		}
	}
	var z values.ZSetEdit
	if !command.EditAs(x, x.Args[1], &z) {
		return
	}
	if !z.Found() || count == 0 {
		x.W.Array(0)
		return
	}
	zpop(x, &z, max(count, 1), fromMax, x.W.Proto >= 3 && count != -1)
}

// pop replies and removes up to count elements from the lowest or highest
// scores, as pairs in nested arrays when nested, stores the set, and returns
// how many it popped.
func zpop(x *command.Ctx, z *values.ZSetEdit, count int64, fromMax, nested bool) int {
	n := z.Len()
	k := int(min(count, int64(n)))
	if nested {
		x.W.Array(k)
	} else {
		x.W.Array(2 * k)
	}
	start, end := 0, k
	if fromMax {
		start, end = n-k, n
	}
	z.Each(start, end, fromMax, func(m []byte, s float64) {
		if nested {
			x.W.Array(2)
		}
		x.W.Bulk(m)
		x.W.Double(s)
	})
	z.RemoveRange(start, end)
	x.Committed(z.Commit(), zpopEvent(fromMax))
	x.Dirty += k
	return k
}

var (
	argZPOPMIN = []byte("ZPOPMIN")
	argZPOPMAX = []byte("ZPOPMAX")
)

// zmpopCommand is ZMPOP, as Redis's zmpopGenericCommand (non-blocking).
func zmpopCommand(x *command.Ctx) { mpop(x, "min", "max", mpopZSet) }

// mpopZSet pops up to count members from the sorted set at key, when there
// is one, and replies with its key and them, propagated as the pop it did, as
// Redis does. It reports whether it replied (also WRONGTYPE).
func mpopZSet(x *command.Ctx, key []byte, fromMin bool, count int64) bool {
	var z values.ZSetEdit
	if !command.EditAs(x, key, &z) {
		return true
	}
	if !z.Found() {
		return false
	}
	x.W.Array(2)
	x.W.Bulk(key)
	k := zpop(x, &z, count, !fromMin, true)
	if x.Propagating() {
		x.PropagateAs(zpopVerb(!fromMin), key, command.IntArg(int64(k)))
	}
	return true
}

func zpopEvent(fromMax bool) string {
	if fromMax {
		return "zpopmax"
	}
	return "zpopmin"
}

func zpopVerb(fromMax bool) []byte {
	if fromMax {
		return argZPOPMAX
	}
	return argZPOPMIN
}

// bzpopCommand is BZPOPMIN and BZPOPMAX, propagated as ZPOPMIN and ZPOPMAX.
func bzpopCommand(x *command.Ctx, fromMax bool) {
	bpop(x, keyspace.TypeZSet, func(x *command.Ctx, key []byte) {
		var z values.ZSetEdit
		command.EditAs(x, key, &z)
		x.W.Array(3)
		x.W.Bulk(key)
		zpopOne(x, &z, fromMax)
		x.PropagateAs(zpopVerb(fromMax), key)
	})
}

// popOne pops the member with the lowest or highest score, replying with it
// and its score (two array elements), and stores the set.
func zpopOne(x *command.Ctx, z *values.ZSetEdit, fromMax bool) {
	start := 0
	if fromMax {
		start = z.Len() - 1
	}
	z.Each(start, start+1, fromMax, func(m []byte, s float64) {
		x.W.Bulk(m)
		x.W.Double(s)
	})
	z.RemoveRange(start, start+1)
	x.Committed(z.Commit(), zpopEvent(fromMax))
	x.Dirty++
}

// bzmpopCommand is BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT n].
func bzmpopCommand(x *command.Ctx) { bmpop(x, keyspace.TypeZSet, "min", "max", mpopZSet) }

func zscanCommand(x *command.Ctx) {
	z, cursor, opts, ok := command.BeginScan[values.ZSetView](x)
	if !ok {
		return
	}
	var num [32]byte
	var format func([]byte, float64) []byte
	add := func(m []byte, s float64) {
		if opts.Matches(m) {
			x.Collect.Add(m)
			x.Collect.Add(format(num[:0], s))
		}
	}
	format = resp.AppendDouble
	if z.Obj == nil {
		format = appendListpackScore
	}
	var next uint64
	if z.Obj != nil {
		next = z.Obj.Scan(cursor, opts.Limit(), add)
	} else {
		z.Each(0, z.Len(), false, add) // the compact form is returned whole, as Redis does
	}
	x.WriteScanReply(next)
}

// appendListpackScore formats a score as Redis's listpack holds it (d2string):
// an integral value within ±2^62 as an integer, else as a reply's double.
func appendListpackScore(b []byte, s float64) []byte {
	if s >= -(1<<62) && s <= 1<<62 && s == math.Trunc(s) {
		return strconv.AppendInt(b, int64(s), 10)
	}
	return resp.AppendDouble(b, s)
}

func zrandmemberCommand(x *command.Ctx) {
	if len(x.Args) >= 3 {
		zrandmemberWithCount(x)
		return
	}
	z, found, ok := command.ReadAs[values.ZSetView](x, x.Args[1])
	switch {
	case !ok:
	case !found:
		x.W.Null()
	default:
		z.EachRandom(1, func(m []byte, _ float64) { x.W.Bulk(m) })
	}
}

func zrandmemberWithCount(x *command.Ctx) {
	l, withScores, ok := parseRandomCount(x, "withscores")
	if !ok {
		return
	}
	z, _, ok := command.ReadAs[values.ZSetView](x, x.Args[1])
	if !ok {
		return
	}
	emit := func(m []byte, s float64) {
		if withScores && x.W.Proto >= 3 {
			x.W.Array(2)
		}
		x.W.Bulk(m)
		if withScores {
			x.W.Double(s)
		}
	}
	writeRandom(x, l, z.Len(), withScores, randomDraws{
		repeats:  func(n int) { z.EachRandom(n, emit) },
		all:      func() { z.Each(0, z.Len(), true, emit) }, // from the highest rank, as Redis does
		distinct: func(n int) { z.RandomDistinct(n, emit) },
	})
}

// ZMOVE, BZMOVE and ZMOVEMEMBER (Redis 8.12): members leave one sorted set
// for another with their scores, as https://redis.io/docs/latest/commands/zmove/,
// bzmove/ and zmovemember/ describe. The source emits "zrem" (and "del" when
// emptied), the destination "zadd", in that order, as SMOVE emits srem and
// sadd.

// zmoveSelection is which members ZMOVE and BZMOVE move: the lowest or
// highest scored, or those in a score range, up to count.
type zmoveSelection struct {
	fromMax bool
	byScore bool
	scores  interval
	count   int64 // -1: no COUNT (one member, or the whole score range)
}

// parseZMoveCount parses an optional trailing COUNT count, replying the
// error when it is bad.
func parseZMoveCount(x *command.Ctx, args [][]byte) (count int64, ok bool) {
	switch {
	case len(args) == 0:
		return -1, true
	case len(args) != 2 || !cstr.ArgIs(args[0], "count"):
		x.W.Error(command.ErrSyntax)
		return 0, false
	}
	if count, ok = strnum.ParseInt(args[1]); !ok || count < 1 {
		x.W.Error("ERR count should be greater than 0")
		return 0, false
	}
	return count, true
}

// zmoveRanks is the ranks [start, end) of the members sel moves out of z.
func zmoveRanks(z values.ZSetView, sel *zmoveSelection) (start, end int) {
	n := z.Len()
	switch {
	case sel.byScore:
		start, end = sel.scores.ranks(z)
		if sel.count > 0 {
			end = min(end, start+int(min(sel.count, int64(n))))
		}
	case sel.fromMax:
		start, end = n-int(min(max(sel.count, 1), int64(n))), n
	default:
		start, end = 0, int(min(max(sel.count, 1), int64(n)))
	}
	return start, end
}

// zmove moves the members sel picks from the sorted set at src to the one at
// dst and replies them as [member, score] pairs (highest first for MAX);
// a null array when src is missing, is dst, or has none to move. It returns
// how many it moved.
func zmove(x *command.Ctx, src, dst []byte, sel *zmoveSelection) int {
	var z values.ZSetEdit
	if !command.EditAs(x, src, &z) {
		return 0
	}
	if !z.Found() || bytes.Equal(src, dst) {
		x.W.NullArray()
		return 0
	}
	if de, found := x.LookupWrite(dst); found && de.Type() != keyspace.TypeZSet {
		x.W.Error(command.ErrWrongType)
		return 0
	}
	// dst's lookup may have expired keys: look src up again.
	e, _ := x.DB.Lookup(src, x.Now, false)
	command.EditAt(x, src, &e, true, &z)
	start, end := zmoveRanks(z.ZSetView, sel)
	if start == end {
		x.W.NullArray()
		return 0
	}
	x.Collect.Reset() // member, score bits, member, score bits, ...
	z.Each(start, end, sel.fromMax, func(m []byte, s float64) {
		collectMoved(x, m, s)
	})
	z.RemoveRange(start, end)
	x.Committed(z.Commit(), "zrem")
	n := end - start
	zmoveInto(x, dst, n)
	x.W.Array(n)
	for i := range n {
		x.W.Array(2)
		x.W.Bulk(x.Collect.At(2 * i))
		x.W.Double(movedScore(x, i))
	}
	return n
}

// movedScore is the score of the i-th member gathered in x.Collect.
func movedScore(x *command.Ctx, i int) float64 {
	return math.Float64frombits(binary.LittleEndian.Uint64(x.Collect.At(2*i + 1)))
}

// zmoveInto adds the n members gathered in x.Collect with their scores to
// the sorted set at dst, replacing a score it has, and counts the move.
func zmoveInto(x *command.Ctx, dst []byte, n int) {
	e, found := x.DB.Lookup(dst, x.Now, false)
	var d values.ZSetEdit
	command.EditAt(x, dst, &e, found, &d)
	changed := false
	for i := range n {
		m, s := x.Collect.At(2*i), movedScore(x, i)
		switch cur, ok := d.Score(m); {
		case !ok:
			d.Add(m, s)
			changed = true
		case cur != s:
			d.SetScore(m, s)
			changed = true
		}
	}
	x.Committed(d.Commit(), command.EventIf(changed, "zadd"))
	x.Dirty += n
}

// zmoveCommand is ZMOVE source destination MIN|MAX|BYSCORE min max [COUNT
// count], propagated as sent (what it moves follows from the data).
func zmoveCommand(x *command.Ctx) {
	var sel zmoveSelection
	rest := x.Args[4:]
	switch a := x.Args[3]; {
	case cstr.ArgIs(a, "min"):
	case cstr.ArgIs(a, "max"):
		sel.fromMax = true
	case cstr.ArgIs(a, "byscore") && len(x.Args) >= 6:
		var ok bool
		if sel.scores, ok = parseInterval(x, rangeScore, x.Args[4], x.Args[5]); !ok {
			return
		}
		sel.byScore, rest = true, x.Args[6:]
	default:
		x.W.Error(command.ErrSyntax)
		return
	}
	var ok bool
	if sel.count, ok = parseZMoveCount(x, rest); !ok {
		return
	}
	zmove(x, x.Args[1], x.Args[2], &sel)
}

// bzmoveCommand is BZMOVE source destination MIN|MAX timeout [COUNT count]:
// ZMOVE that waits while the source is missing, propagated as the ZMOVE it
// did.
func bzmoveCommand(x *command.Ctx) {
	var sel zmoveSelection
	switch a := x.Args[3]; {
	case cstr.ArgIs(a, "min"):
	case cstr.ArgIs(a, "max"):
		sel.fromMax = true
	default:
		x.W.Error(command.ErrSyntax)
		return
	}
	var ok bool
	if sel.count, ok = parseZMoveCount(x, x.Args[5:]); !ok {
		return
	}
	deadline, ok := x.ParseTimeout(x.Args[4])
	if !ok {
		return
	}
	src, dst := x.Args[1], x.Args[2]
	if bytes.Equal(src, dst) { // one key: null at once, never blocked
		if e, found := x.LookupWrite(src); !x.WrongType(&e, found, keyspace.TypeZSet) {
			x.W.NullArray()
		}
		return
	}
	where, count := x.Args[3], x.Args[5:]
	serve := func(x *command.Ctx, key []byte) {
		if zmove(x, src, dst, &sel) > 0 && x.Propagating() {
			x.PropagateAs(append([][]byte{argZMOVE, src, dst, where}, count...)...)
		}
	}
	x.PopOrBlock(command.BlockRequest{Keys: x.Args[1:2], Dst: dst, Type: keyspace.TypeZSet, Deadline: deadline, Serve: serve, TimedOut: (*resp.Writer).NullArray})
}

var argZMOVE = []byte("ZMOVE")

// zmovememberCommand is ZMOVEMEMBER source destination [NX|XX] MEMBERS
// num-members member [member ...]: the named members the source has (and
// dst lacks with NX, has with XX) move, each once; the reply lists them in
// the order given, or is a null array when none moved. Propagated as sent.
func zmovememberCommand(x *command.Ctx) {
	at := 3
	var nx, xx bool
	switch a := x.Args[at]; {
	case cstr.ArgIs(a, "nx"):
		nx, at = true, at+1
	case cstr.ArgIs(a, "xx"):
		xx, at = true, at+1
	}
	if at+1 >= len(x.Args) || !cstr.ArgIs(x.Args[at], "members") {
		x.W.Error(command.ErrSyntax)
		return
	}
	n, ok := strnum.ParseInt(x.Args[at+1])
	if !ok || n < 1 {
		x.W.Error("ERR num-members should be greater than 0")
		return
	}
	if n != int64(len(x.Args)-at-2) {
		x.W.Error(command.ErrSyntax)
		return
	}
	members := x.Args[at+2:]
	src, dst := x.Args[1], x.Args[2]
	var z values.ZSetEdit
	if !command.EditAs(x, src, &z) {
		return
	}
	if !z.Found() || bytes.Equal(src, dst) {
		x.W.NullArray()
		return
	}
	de, dstFound := x.LookupWrite(dst)
	if dstFound && de.Type() != keyspace.TypeZSet {
		x.W.Error(command.ErrWrongType)
		return
	}
	var dv values.ZSetView
	if dstFound {
		dv = values.ViewZSet(&de)
	}
	e, _ := x.DB.Lookup(src, x.Now, false) // dst's lookup may have expired keys
	command.EditAt(x, src, &e, true, &z)
	x.Collect.Reset() // member, score bits, ...
	for _, m := range members {
		s, ok := z.Score(m) // a repeated member is gone by then
		if !ok {
			continue
		}
		if nx || xx {
			inDst := false
			if dstFound {
				_, inDst = dv.Score(m)
			}
			if nx == inDst {
				continue
			}
		}
		z.Remove(m)
		collectMoved(x, m, s)
	}
	moved := x.Collect.Len() / 2
	if moved == 0 {
		x.W.NullArray()
		return
	}
	x.Committed(z.Commit(), "zrem")
	zmoveInto(x, dst, moved)
	x.W.Array(moved)
	for i := range moved {
		x.W.Bulk(x.Collect.At(2 * i))
	}
}

// collectMoved keeps a moved member and its score in x.Collect: the member,
// then the score's 8 bytes.
func collectMoved(x *command.Ctx, m []byte, s float64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], math.Float64bits(s))
	x.Collect.Add(m)
	x.Collect.Add(b[:])
}
