package server

import (
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/keyhive/keyhive/internal/bytemap"
	"github.com/keyhive/keyhive/internal/listpack"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
)

func init() {
	bind("hset", hsetCommand)
	bind("hmset", hsetCommand)
	bind("hsetnx", hsetnxCommand)
	bind("hget", hgetCommand)
	bind("hmget", hmgetCommand)
	bind("hgetall", func(x *Ctx) { hgetallCommand(x, true, true) })
	bind("hkeys", func(x *Ctx) { hgetallCommand(x, true, false) })
	bind("hvals", func(x *Ctx) { hgetallCommand(x, false, true) })
	bind("hdel", hdelCommand)
	bind("hexists", hexistsCommand)
	bind("hlen", hlenCommand)
	bind("hstrlen", hstrlenCommand)
	bind("hincrby", hincrbyCommand)
	bind("hincrbyfloat", hincrbyfloatCommand)
	bind("hrandfield", hrandfieldCommand)
	bind("hscan", hscanCommand)
}

var argHSET = []byte("HSET")

// hashObject is the large form of a hash (OBJECT ENCODING hashtable), stored
// as a keyspace object. Small hashes are inline listpack bytes instead.
type hashObject struct{ bytemap.Map }

func (h *hashObject) Clone() keyspace.Object { return &hashObject{*h.Map.Clone()} }

// hashView is a stored hash in either form: obj when large, else lp.
type hashView struct {
	lp  []byte
	obj *hashObject
}

func viewHash(e *keyspace.Entry) hashView {
	if o := e.Object(); o != nil {
		return hashView{obj: o.(*hashObject)}
	}
	return hashView{lp: e.Value()}
}

func (h hashView) len() int {
	if h.obj != nil {
		return h.obj.Len()
	}
	return listpack.Len(h.lp)
}

func (h hashView) get(field []byte) ([]byte, bool) {
	if h.obj != nil {
		return h.obj.Get(field)
	}
	return listpack.Get(h.lp, field)
}

// each calls fn for every pair: in insertion order for a listpack, in table
// order for the large form.
func (h hashView) each(fn func(field, value []byte)) {
	if h.obj != nil {
		for p := h.obj.Next(0); p >= 0; p = h.obj.Next(p + 1) {
			fn(h.obj.At(p))
		}
		return
	}
	it := listpack.NewIter(h.lp)
	for f, v, ok := it.Next(); ok; f, v, ok = it.Next() {
		fn(f, v)
	}
}

// readHash looks key up for reading as a hash, replying WRONGTYPE (ok=false)
// for another type.
func (x *Ctx) readHash(key []byte) (h hashView, found, ok bool) {
	e, found, ok := x.readTyped(key, keyspace.TypeHash)
	if found && ok {
		h = viewHash(&e)
	}
	return h, found, ok
}

// hashEdit is a hash being changed: a listpack rebuilt by each change, or the
// large form changed in place. commit stores it.
type hashEdit struct {
	collectionEdit
	hashView
}

// editHash looks key up for writing as a hash into h, which the caller keeps
// on its stack (a missing key is an empty hash), replying WRONGTYPE and
// returning false for another type.
func (x *Ctx) editHash(key []byte, h *hashEdit) bool {
	*h = hashEdit{}
	e, found := x.lookupWrite(key)
	if !h.begin(x, key, e, found, keyspace.TypeHash) {
		return false
	}
	if found {
		h.hashView = viewHash(&h.e)
	} else {
		h.lp = listpack.Empty
	}
	return true
}

// convert turns a listpack into the large form.
func (h *hashEdit) convert() {
	o := &hashObject{}
	it := listpack.NewIter(h.lp)
	for f, v, ok := it.Next(); ok; f, v, ok = it.Next() {
		o.Set(f, v)
	}
	h.obj, h.lp, h.changed = o, nil, true
}

// convertForArgs converts a listpack that any of args would make too long an
// element for, as Redis's hashTypeTryConversion does before HSET.
func (h *hashEdit) convertForArgs(args [][]byte) {
	if h.obj != nil {
		return
	}
	limit := h.x.s.cfg.HashMaxListpackValue()
	for _, a := range args {
		if int64(len(a)) > limit {
			h.convert()
			return
		}
	}
}

// set sets field to value, converting past the listpack limits, and reports
// whether the field is new.
func (h *hashEdit) set(field, value []byte) bool {
	if h.obj == nil {
		limit := h.x.s.cfg.HashMaxListpackValue()
		if int64(len(field)) > limit || int64(len(value)) > limit {
			h.convert()
		}
	}
	if h.obj != nil {
		return h.obj.Set(field, value)
	}
	var added bool
	h.lp, added = listpack.Set(h.x.nextScratch(), h.lp, field, value)
	h.x.keepScratch(h.lp)
	h.changed = true
	if int64(listpack.Len(h.lp)) > h.x.s.cfg.HashMaxListpackEntries() {
		h.convert()
	}
	return added
}

// commit stores the hash (an emptied hash is deleted) and emits event.
func (h *hashEdit) commit(event string) {
	h.writeBack(keyspace.TypeHash, h.len(), h.obj != nil, h.obj, keyspace.EncHashtable, h.lp, keyspace.EncListpack, event)
}

func hsetCommand(x *Ctx) {
	if len(x.Args)%2 != 0 {
		x.W.Error(errArity(x.cmd.Name))
		return
	}
	var h hashEdit
	if !x.editHash(x.Args[1], &h) {
		return
	}
	h.convertForArgs(x.Args[2:])
	added := 0
	for i := 2; i < len(x.Args); i += 2 {
		if h.set(x.Args[i], x.Args[i+1]) {
			added++
		}
	}
	h.commit("hset")
	x.dirty += (len(x.Args) - 2) / 2
	if x.cmd.Name == "hmset" {
		x.W.OK()
	} else {
		x.W.Int(int64(added))
	}
}

func hsetnxCommand(x *Ctx) {
	var h hashEdit
	if !x.editHash(x.Args[1], &h) {
		return
	}
	if _, exists := h.get(x.Args[2]); exists {
		x.W.Int(0)
		return
	}
	h.set(x.Args[2], x.Args[3])
	h.commit("hset")
	x.dirty++
	x.W.Int(1)
}

func hgetCommand(x *Ctx) {
	h, found, ok := x.readHash(x.Args[1])
	if !ok {
		return
	}
	if v, exists := h.get(x.Args[2]); found && exists {
		x.W.Bulk(v)
		return
	}
	x.W.Null()
}

func hmgetCommand(x *Ctx) {
	h, found, ok := x.readHash(x.Args[1])
	if !ok {
		return
	}
	x.W.Array(len(x.Args) - 2)
	for _, f := range x.Args[2:] {
		if v, exists := h.get(f); found && exists {
			x.W.Bulk(v)
		} else {
			x.W.Null()
		}
	}
}

func hgetallCommand(x *Ctx, fields, values bool) {
	h, found, ok := x.readHash(x.Args[1])
	if !ok {
		return
	}
	n := 0
	if found {
		n = h.len()
	}
	if fields && values {
		x.W.Map(n)
	} else {
		x.W.Array(n)
	}
	if !found {
		return
	}
	h.each(func(f, v []byte) {
		if fields {
			x.W.Bulk(f)
		}
		if values {
			x.W.Bulk(v)
		}
	})
}

func hdelCommand(x *Ctx) {
	var h hashEdit
	if !x.editHash(x.Args[1], &h) {
		return
	}
	if !h.found {
		x.W.Int(0)
		return
	}
	fields := x.Args[2:]
	deleted := 0
	if h.obj != nil {
		for _, f := range fields {
			if h.obj.Delete(f) {
				deleted++
			}
		}
	} else {
		h.lp, deleted = listpack.Delete(h.x.nextScratch(), h.lp, fields)
		h.x.keepScratch(h.lp)
		h.changed = deleted > 0
	}
	h.commit(eventIf(deleted > 0, "hdel"))
	x.dirty += deleted
	x.W.Int(int64(deleted))
}

func hexistsCommand(x *Ctx) {
	h, found, ok := x.readHash(x.Args[1])
	if !ok {
		return
	}
	_, exists := h.get(x.Args[2])
	if found && exists {
		x.W.Int(1)
	} else {
		x.W.Int(0)
	}
}

func hlenCommand(x *Ctx) {
	h, found, ok := x.readHash(x.Args[1])
	if !ok {
		return
	}
	if !found {
		x.W.Int(0)
		return
	}
	x.W.Int(int64(h.len()))
}

func hstrlenCommand(x *Ctx) {
	h, found, ok := x.readHash(x.Args[1])
	if !ok {
		return
	}
	v, _ := h.get(x.Args[2])
	if !found {
		v = nil
	}
	x.W.Int(int64(len(v)))
}

func hincrbyCommand(x *Ctx) {
	incr, ok := strnum.ParseInt(x.Args[3])
	if !ok {
		x.W.Error(errNotInt)
		return
	}
	var h hashEdit
	if !x.editHash(x.Args[1], &h) {
		return
	}
	var cur int64
	if v, exists := h.get(x.Args[2]); exists {
		if cur, ok = strnum.ParseInt(v); !ok {
			x.W.Error("ERR hash value is not an integer")
			return
		}
	}
	if (incr > 0 && cur > math.MaxInt64-incr) || (incr < 0 && cur < math.MinInt64-incr) {
		x.W.Error(errOverflow)
		return
	}
	cur += incr
	var buf [20]byte
	h.set(x.Args[2], strconv.AppendInt(buf[:0], cur, 10))
	h.commit("hincrby")
	x.dirty++
	x.W.Int(cur)
}

func hincrbyfloatCommand(x *Ctx) {
	incr, ok := strnum.ParseLongDouble(x.Args[3])
	if !ok {
		x.W.Error(errNotFloat)
		return
	}
	if incr.IsInf() {
		x.W.Error("ERR value is NaN or Infinity")
		return
	}
	key, field := x.Args[1], x.Args[2]
	var h hashEdit
	if !x.editHash(key, &h) {
		return
	}
	cur, _ := strnum.ParseLongDouble([]byte("0"))
	if v, exists := h.get(field); exists {
		if cur, ok = strnum.ParseLongDouble(v); !ok {
			x.W.Error("ERR hash value is not a float")
			return
		}
	}
	sum, ok := strnum.AddLongDouble(cur, incr)
	if !ok {
		x.W.Error("ERR increment would produce NaN or Infinity")
		return
	}
	h.set(field, sum)
	h.commit("hincrbyfloat")
	x.dirty++
	x.W.Bulk(sum)
	// The result, not the increment: float arithmetic may differ on replay.
	x.propagateAs(argHSET, key, field, sum)
}

// hrandfieldMaxRepeats bounds a negative HRANDFIELD count: the reply is built
// in memory, and Redis itself dies on counts near the int64 limit.
const hrandfieldMaxRepeats = 1 << 24

func hrandfieldCommand(x *Ctx) {
	if len(x.Args) >= 3 {
		l, ok := strnum.ParseInt(x.Args[2])
		if !ok {
			x.W.Error(errNotInt)
			return
		}
		if l == math.MinInt64 {
			x.W.Error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
			return
		}
		withValues := false
		if len(x.Args) > 4 || (len(x.Args) == 4 && !cArgIs(x.Args[3], "withvalues")) {
			x.W.Error(errSyntax)
			return
		}
		if len(x.Args) == 4 {
			withValues = true
			if l < -math.MaxInt64/2 || l > math.MaxInt64/2 {
				x.W.Error("ERR value is out of range")
				return
			}
		}
		hrandfieldWithCount(x, l, withValues)
		return
	}
	h, found, ok := x.readHash(x.Args[1])
	switch {
	case !ok:
	case !found:
		x.W.Null()
	default:
		f, _ := h.picker()()
		x.W.Bulk(f)
	}
}

// picker returns a function that draws uniformly random pairs of a non-empty
// hash; a listpack's pairs are indexed once for it.
func (h hashView) picker() func() (field, value []byte) {
	if h.obj != nil {
		return func() ([]byte, []byte) { return h.obj.At(h.obj.RandomPos()) }
	}
	offs := pairOffsets(h.lp)
	it := listpack.NewIter(h.lp)
	return func() ([]byte, []byte) {
		it.Seek(offs[rand.IntN(len(offs))])
		f, v, _ := it.Next()
		return f, v
	}
}

// pairOffsets returns the iterator offsets of a listpack's pairs.
func pairOffsets(lp []byte) []int {
	offs := make([]int, 0, listpack.Len(lp))
	it := listpack.NewIter(lp)
	for {
		off := it.Offset()
		if _, _, ok := it.Next(); !ok {
			return offs
		}
		offs = append(offs, off)
	}
}

func hrandfieldWithCount(x *Ctx, l int64, withValues bool) {
	h, found, ok := x.readHash(x.Args[1])
	if !ok {
		return
	}
	if !found || l == 0 {
		x.W.Array(0)
		return
	}
	count, unique := l, true
	if l < 0 {
		count, unique = -l, false
	}
	size := int64(h.len())
	if !unique && count > hrandfieldMaxRepeats {
		x.W.Error("ERR value is out of range")
		return
	}
	reply := func(n int64) {
		if withValues && x.W.Proto < 3 {
			n *= 2
		}
		x.W.Array(int(n))
	}
	pair := func(f, v []byte) {
		if withValues && x.W.Proto >= 3 {
			x.W.Array(2)
		}
		x.W.Bulk(f)
		if withValues {
			x.W.Bulk(v)
		}
	}
	switch {
	case !unique || count == 1: // repeats allowed
		reply(count)
		pick := h.picker()
		for i := int64(0); i < count; i++ {
			pair(pick())
		}
	case count >= size: // the whole hash
		reply(size)
		h.each(pair)
	default:
		reply(count)
		h.randomDistinct(int(count), pair)
	}
}

// randomDistinct calls fn for count distinct random pairs (count < len).
func (h hashView) randomDistinct(count int, fn func(field, value []byte)) {
	if h.obj == nil {
		// Pick pair offsets by a partial Fisher-Yates shuffle.
		offs := pairOffsets(h.lp)
		it := listpack.NewIter(h.lp)
		for i := 0; i < count; i++ {
			j := i + rand.IntN(len(offs)-i)
			offs[i], offs[j] = offs[j], offs[i]
			it.Seek(offs[i])
			f, v, _ := it.Next()
			fn(f, v)
		}
		return
	}
	m := &h.obj.Map
	if count*3 > m.Len() {
		var pos []int
		for p := m.Next(0); p >= 0; p = m.Next(p + 1) {
			pos = append(pos, p)
		}
		for i := 0; i < count; i++ {
			j := i + rand.IntN(len(pos)-i)
			pos[i], pos[j] = pos[j], pos[i]
			fn(m.At(pos[i]))
		}
		return
	}
	seen := make(map[int]struct{}, count)
	for len(seen) < count {
		p := m.RandomPos()
		if _, dup := seen[p]; dup {
			continue
		}
		seen[p] = struct{}{}
		fn(m.At(p))
	}
}

func hscanCommand(x *Ctx) {
	cursor, ok := strnum.ParseCursor(x.Args[2])
	if !ok {
		x.W.Error("ERR invalid cursor")
		return
	}
	h, found, ok := x.readHash(x.Args[1])
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
	add := func(f, v []byte) {
		if opts.matches(f) {
			x.collect.add(f)
			x.collect.add(v)
		}
	}
	var next uint64
	if h.obj != nil {
		next = h.obj.Scan(cursor, int(min(opts.count, math.MaxInt32)), add)
	} else {
		h.each(add) // a listpack is returned whole, as Redis does
	}
	x.writeScanReply(next)
}
