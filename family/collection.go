package family

import (
	"math"

	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/resp"
)

// What the collection families share: ranks, the MPOP and blocking pop
// forms, and random members.

// rankRange resolves Redis's inclusive, possibly negative indexes of a list
// or sorted set of n elements (LRANGE, LTRIM, ZRANGE, ZREMRANGEBYRANK) to the
// half-open range [start, end), empty when start == end.
func rankRange(start, end int64, n int) (int, int) {
	l := int64(n)
	if start < 0 {
		start += l
	}
	if end < 0 {
		end += l
	}
	start = max(start, 0)
	if start > end || start >= l {
		return 0, 0
	}
	return int(start), int(min(end, l-1) + 1)
}

// parseMPOP parses what LMPOP, ZMPOP and their blocking forms take after the
// timeout: numkeys key [key ...] END [COUNT count], END being first or second
// (LEFT or RIGHT, MIN or MAX). It reports whether END was first.
func parseMPOP(x *command.Ctx, args [][]byte, first, second string) (keys [][]byte, atFirst bool, count int64, ok bool) {
	n, isInt := strnum.ParseInt(args[0])
	if !isInt || n < 1 {
		x.W.Error("ERR numkeys should be greater than 0")
		return nil, false, 0, false
	}
	if n >= int64(len(args)-1) { // no room for the keys and END
		x.W.Error(command.ErrSyntax)
		return nil, false, 0, false
	}
	keys = args[1 : 1+n]
	switch end := args[1+n]; {
	case cstr.ArgIs(end, first):
		atFirst = true
	case cstr.ArgIs(end, second):
	default:
		x.W.Error(command.ErrSyntax)
		return nil, false, 0, false
	}
	count = -1
	for j := 2 + int(n); j < len(args); j++ {
		if count != -1 || !cstr.ArgIs(args[j], "count") || j+1 >= len(args) {
			x.W.Error(command.ErrSyntax)
			return nil, false, 0, false
		}
		j++
		if count, isInt = strnum.ParseInt(args[j]); !isInt || count < 1 {
			x.W.Error("ERR count should be greater than 0")
			return nil, false, 0, false
		}
	}
	return keys, atFirst, max(count, 1), true
}

// popCount parses the count of LPOP, RPOP, SPOP, ZPOPMIN and ZPOPMAX, which
// may be zero but not negative, replying the error when it is bad.
func popCount(x *command.Ctx, arg []byte) (int64, bool) {
	n, ok := strnum.ParseInt(arg)
	if !ok || n < 0 {
		x.W.Error("ERR value is out of range, must be positive")
		return 0, false
	}
	return n, true
}

// mpop is LMPOP and ZMPOP: pop, by pop, from the first of the keys holding
// a collection of pop's type, END being first or second (see parseMPOP); a
// null array when none does.
func mpop(x *command.Ctx, first, second string, pop func(x *command.Ctx, key []byte, atFirst bool, count int64) (replied bool)) {
	keys, atFirst, count, ok := parseMPOP(x, x.Args[1:], first, second)
	if !ok {
		return
	}
	for _, key := range keys {
		if pop(x, key, atFirst, count) {
			return
		}
	}
	x.W.NullArray()
}

// bmpop is BLMPOP and BZMPOP (timeout numkeys key [key ...] END [COUNT
// count]): mpop, blocking until one of the keys holds a collection.
func bmpop(x *command.Ctx, typ keyspace.Type, first, second string, pop func(x *command.Ctx, key []byte, atFirst bool, count int64) (replied bool)) {
	keys, atFirst, count, ok := parseMPOP(x, x.Args[2:], first, second)
	if !ok {
		return
	}
	deadline, ok := x.ParseTimeout(x.Args[1]) // parsed last, as Redis does
	if !ok {
		return
	}
	serve := func(x *command.Ctx, key []byte) { pop(x, key, atFirst, count) }
	x.PopOrBlock(command.BlockRequest{Keys: keys, Type: typ, Deadline: deadline, Serve: serve, TimedOut: (*resp.Writer).NullArray})
}

// bpop is BLPOP, BRPOP, BZPOPMIN and BZPOPMAX (key [key ...] timeout): serve
// pops from the first key holding a collection of type typ, at once or when
// one does.
func bpop(x *command.Ctx, typ keyspace.Type, serve func(x *command.Ctx, key []byte)) {
	deadline, ok := x.ParseTimeout(x.Args[len(x.Args)-1])
	if !ok {
		return
	}
	x.PopOrBlock(command.BlockRequest{Keys: x.Args[1 : len(x.Args)-1], Type: typ, Deadline: deadline, Serve: serve, TimedOut: (*resp.Writer).NullArray})
}

// errNegatableRange refuses math.MinInt64 where a count or rank is negated
// to pick a direction (Redis 7.2 and later check it; 7.0 overflowed).
const errNegatableRange = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"

// parseRandomCount parses the count of HRANDFIELD, SRANDMEMBER and
// ZRANDMEMBER (x.Args[2]) and the option that may follow it (WITHVALUES,
// WITHSCORES; SRANDMEMBER has none), replying an error when !ok.
func parseRandomCount(x *command.Ctx, option string) (count int64, with, ok bool) {
	l, ok := strnum.ParseInt(x.Args[2])
	if !ok {
		x.W.Error(command.ErrNotInt)
		return 0, false, false
	}
	if l == math.MinInt64 {
		x.W.Error(errNegatableRange)
		return 0, false, false
	}
	if len(x.Args) > 4 || (len(x.Args) == 4 && !cstr.ArgIs(x.Args[3], option)) {
		x.W.Error(command.ErrSyntax)
		return 0, false, false
	}
	with = len(x.Args) == 4
	if with && (l < -math.MaxInt64/2 || l > math.MaxInt64/2) {
		x.W.Error("ERR value is out of range")
		return 0, false, false
	}
	return l, with, true
}

// randomMaxRepeats bounds a negative count of random elements: the reply is
// built in memory, and Redis itself dies on counts near the int64 limit.
const randomMaxRepeats = 1 << 24

// randomDraws are the ways a collection's view draws random elements, each
// writing the elements it draws.
type randomDraws struct {
	repeats  func(n int) // n elements, repeats allowed
	all      func()      // every element, in the order a whole reply has
	distinct func(n int) // n distinct elements (n < the size)
}

// writeRandom replies to HRANDFIELD, SRANDMEMBER or ZRANDMEMBER with count l
// (a negative count allows repeats) from a collection of size elements (0:
// a missing key), each element two replies when pairs (WITHVALUES,
// WITHSCORES): in RESP3 a nested pair, in RESP2 flat.
func writeRandom(x *command.Ctx, l int64, size int, pairs bool, draw randomDraws) {
	if size == 0 || l == 0 {
		x.W.Array(0)
		return
	}
	n := max(l, -l)
	if l < 0 && n > randomMaxRepeats {
		x.W.Error("ERR value is out of range")
		return
	}
	if l >= int64(size) && l > 1 {
		n = int64(size)
	}
	if pairs && x.W.Proto < 3 {
		x.W.Array(int(2 * n))
	} else {
		x.W.Array(int(n))
	}
	switch {
	case l < 0 || l == 1:
		draw.repeats(int(n))
	case n == int64(size):
		draw.all()
	default:
		draw.distinct(int(n))
	}
}
