package server

import (
	"math"

	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/internal/stream"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/resp"
	"github.com/keyhive/keyhive/values"
)

// env is what the values package needs of the command: the encoding
// limits, its database and time, and its scratch buffers.
func (x *Ctx) env() *values.Env {
	if x.values.Scratch != &x.scratch { // first use (or a copied Ctx)
		x.values.Limits, x.values.Scratch = x.s.cfg, &x.scratch
	}
	x.values.DB, x.values.Now = x.DB, x.Now
	return &x.values
}

// committed emits the keyspace events of a committed edit in Redis's order:
// event (none when empty), then "del" when the edit emptied the key.
func (x *Ctx) committed(c values.Commit, event string) {
	if event != "" {
		x.notify(typeEvents[c.Type], event, c.Key)
	}
	if c.Outcome == values.Deleted {
		x.notify(notifyGeneric, "del", c.Key)
	}
}

// stored emits the keyspace events of a collection stored over key (a STORE
// command's result), which held a value of type was when found: event for a
// store (after "overwritten" for a found key), "del" for a deletion. It
// reports whether the data set changed.
func (x *Ctx) stored(c values.Commit, event string, found bool, was keyspace.Type) bool {
	switch c.Outcome {
	case values.Deleted:
		x.notify(notifyGeneric, "del", c.Key)
	case values.Stored:
		if found {
			x.overwrote(c.Key, was, c.Type)
		}
		x.notify(typeEvents[c.Type], event, c.Key)
	}
	return c.Outcome != values.Unchanged
}

// typeEvents is the keyspace event class of each type's commands.
var typeEvents = [...]config.KeyspaceEvents{
	keyspace.TypeString: notifyString,
	keyspace.TypeList:   notifyList,
	keyspace.TypeSet:    notifySet,
	keyspace.TypeZSet:   notifyZset,
	keyspace.TypeHash:   notifyHash,
	keyspace.TypeStream: notifyStream,
}

// readAs looks key up for reading as a collection of V's type, replying
// WRONGTYPE (ok=false) for another type.
func readAs[V values.View](x *Ctx, key []byte) (v V, found, ok bool) {
	e, found, ok := x.readTyped(key, values.TypeOf[V]())
	if found && ok {
		v = values.ViewOf[V](&e)
		if h, isHash := any(&v).(*values.HashView); isHash {
			h.Now = x.Now // fields expired by then are not seen
		}
	}
	return v, found, ok
}

// editAs looks key up for writing into ed, an edit of a collection type
// which the caller keeps on its stack (a missing key is an empty
// collection), replying WRONGTYPE and returning false for another type.
func editAs[E values.Editor](x *Ctx, key []byte, ed E) bool {
	e, found := x.lookupWrite(key)
	return editAt(x, key, &e, found, ed)
}

// editAt is editAs on an entry already looked up.
func editAt[E values.Editor](x *Ctx, key []byte, e *keyspace.Entry, found bool, ed E) bool {
	if !values.Begin(ed, x.env(), key, e, found) {
		x.W.Error(errWrongType)
		return false
	}
	return true
}

// readStream looks key up for reading as a stream: nil when missing;
// ok=false after replying WRONGTYPE.
func (x *Ctx) readStream(key []byte) (s *stream.Stream, ok bool) {
	e, found, ok := x.readTyped(key, keyspace.TypeStream)
	if found && ok {
		s = values.EntryStream(&e)
	}
	return s, ok
}

// writeStream looks key up for writing as a stream: nil when missing;
// ok=false after replying WRONGTYPE.
func (x *Ctx) writeStream(key []byte) (e keyspace.Entry, s *stream.Stream, ok bool) {
	e, found := x.lookupWrite(key)
	if x.wrongType(&e, found, keyspace.TypeStream) {
		return e, nil, false
	}
	if found {
		s = values.EntryStream(&e)
	}
	return e, s, true
}

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
func (x *Ctx) parseMPOP(args [][]byte, first, second string) (keys [][]byte, atFirst bool, count int64, ok bool) {
	n, isInt := strnum.ParseInt(args[0])
	if !isInt || n < 1 {
		x.W.Error("ERR numkeys should be greater than 0")
		return nil, false, 0, false
	}
	if n >= int64(len(args)-1) { // no room for the keys and END
		x.W.Error(errSyntax)
		return nil, false, 0, false
	}
	keys = args[1 : 1+n]
	switch end := args[1+n]; {
	case cArgIs(end, first):
		atFirst = true
	case cArgIs(end, second):
	default:
		x.W.Error(errSyntax)
		return nil, false, 0, false
	}
	count = -1
	for j := 2 + int(n); j < len(args); j++ {
		if count != -1 || !cArgIs(args[j], "count") || j+1 >= len(args) {
			x.W.Error(errSyntax)
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
func (x *Ctx) popCount(arg []byte) (int64, bool) {
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
func (x *Ctx) mpop(first, second string, pop func(x *Ctx, key []byte, atFirst bool, count int64) (replied bool)) {
	keys, atFirst, count, ok := x.parseMPOP(x.Args[1:], first, second)
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
func (x *Ctx) bmpop(typ keyspace.Type, first, second string, pop func(x *Ctx, key []byte, atFirst bool, count int64) (replied bool)) {
	keys, atFirst, count, ok := x.parseMPOP(x.Args[2:], first, second)
	if !ok {
		return
	}
	deadline, ok := x.parseTimeout(x.Args[1]) // parsed last, as Redis does
	if !ok {
		return
	}
	serve := func(x *Ctx, key []byte) { pop(x, key, atFirst, count) }
	x.popOrBlock(blockSpec{keys: keys, typ: typ, deadline: deadline, serve: serve, timedOut: (*resp.Writer).NullArray})
}

// bpop is BLPOP, BRPOP, BZPOPMIN and BZPOPMAX (key [key ...] timeout): serve
// pops from the first key holding a collection of type typ, at once or when
// one does.
func (x *Ctx) bpop(typ keyspace.Type, serve func(x *Ctx, key []byte)) {
	deadline, ok := x.parseTimeout(x.Args[len(x.Args)-1])
	if !ok {
		return
	}
	x.popOrBlock(blockSpec{keys: x.Args[1 : len(x.Args)-1], typ: typ, deadline: deadline, serve: serve, timedOut: (*resp.Writer).NullArray})
}

// parseRandomCount parses the count of HRANDFIELD, SRANDMEMBER and
// ZRANDMEMBER (x.Args[2]) and the option that may follow it (WITHVALUES,
// WITHSCORES; SRANDMEMBER has none), replying an error when !ok.
func (x *Ctx) parseRandomCount(option string) (count int64, with, ok bool) {
	l, ok := strnum.ParseInt(x.Args[2])
	if !ok {
		x.W.Error(errNotInt)
		return 0, false, false
	}
	if l == math.MinInt64 {
		x.W.Error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
		return 0, false, false
	}
	if len(x.Args) > 4 || (len(x.Args) == 4 && !cArgIs(x.Args[3], option)) {
		x.W.Error(errSyntax)
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
func (x *Ctx) writeRandom(l int64, size int, pairs bool, draw randomDraws) {
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

// beginScan starts HSCAN, SSCAN or ZSCAN: it parses the cursor and the
// options and looks the key up as a collection of V's type. When there is
// nothing to scan it replies (an error, or the empty scan of a missing key)
// and returns ok=false.
func beginScan[V values.View](x *Ctx) (v V, cursor uint64, opts scanOptions, ok bool) {
	cursor, ok = strnum.ParseCursor(x.Args[2])
	if !ok {
		x.W.Error("ERR invalid cursor")
		return v, 0, opts, false
	}
	v, found, ok := readAs[V](x, x.Args[1])
	if !ok {
		return v, 0, opts, false
	}
	if !found {
		x.W.B = append(x.W.B, emptyScan...)
		return v, 0, opts, false
	}
	if opts, ok = x.parseScanOptions(x.Args[3:], false); !ok {
		return v, 0, opts, false
	}
	x.collect.reset()
	return v, cursor, opts, true
}
