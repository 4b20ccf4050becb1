package server

import (
	"strconv"

	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/values"
)

func init() {
	bind("hset", func(x *Ctx) { hsetCommand(x, false) })
	bind("hmset", func(x *Ctx) { hsetCommand(x, true) })
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

// hsetCommand is HSET, and HMSET, which replies OK instead of the count of
// new fields.
func hsetCommand(x *Ctx, replyOK bool) {
	if len(x.Args)%2 != 0 {
		x.W.Error(errArity(x.cmd.Name))
		return
	}
	var h values.HashEdit
	if !editAs(x, x.Args[1], &h) {
		return
	}
	h.ConvertForArgs(x.Args[2:])
	added := 0
	for i := 2; i < len(x.Args); i += 2 {
		if h.Set(x.Args[i], x.Args[i+1]) {
			added++
		}
	}
	x.committed(h.Commit(), "hset")
	x.dirty += (len(x.Args) - 2) / 2
	if replyOK { // HMSET
		x.W.OK()
	} else {
		x.W.Int(int64(added))
	}
}

func hsetnxCommand(x *Ctx) {
	var h values.HashEdit
	if !editAs(x, x.Args[1], &h) {
		return
	}
	if _, exists := h.Get(x.Args[2]); exists {
		x.W.Int(0)
		return
	}
	h.Set(x.Args[2], x.Args[3])
	x.committed(h.Commit(), "hset")
	x.dirty++
	x.W.Int(1)
}

func hgetCommand(x *Ctx) {
	h, found, ok := readAs[values.HashView](x, x.Args[1])
	if !ok {
		return
	}
	if v, exists := h.Get(x.Args[2]); found && exists {
		x.W.Bulk(v)
		return
	}
	x.W.Null()
}

func hmgetCommand(x *Ctx) {
	h, found, ok := readAs[values.HashView](x, x.Args[1])
	if !ok {
		return
	}
	x.W.Array(len(x.Args) - 2)
	for _, f := range x.Args[2:] {
		if v, exists := h.Get(f); found && exists {
			x.W.Bulk(v)
		} else {
			x.W.Null()
		}
	}
}

func hgetallCommand(x *Ctx, withFields, withValues bool) {
	h, found, ok := readAs[values.HashView](x, x.Args[1])
	if !ok {
		return
	}
	n := 0
	if found {
		n = h.Len()
	}
	if withFields && withValues {
		x.W.Map(n)
	} else {
		x.W.Array(n)
	}
	if !found {
		return
	}
	h.Each(func(f, v []byte) {
		if withFields {
			x.W.Bulk(f)
		}
		if withValues {
			x.W.Bulk(v)
		}
	})
}

func hdelCommand(x *Ctx) {
	var h values.HashEdit
	if !editAs(x, x.Args[1], &h) {
		return
	}
	if !h.Found() {
		x.W.Int(0)
		return
	}
	fields := x.Args[2:]
	deleted := h.Delete(fields)
	x.committed(h.Commit(), eventIf(deleted > 0, "hdel"))
	x.dirty += deleted
	x.W.Int(int64(deleted))
}

func hexistsCommand(x *Ctx) {
	h, found, ok := readAs[values.HashView](x, x.Args[1])
	if !ok {
		return
	}
	_, exists := h.Get(x.Args[2])
	if found && exists {
		x.W.Int(1)
	} else {
		x.W.Int(0)
	}
}

func hlenCommand(x *Ctx) {
	h, found, ok := readAs[values.HashView](x, x.Args[1])
	if !ok {
		return
	}
	if !found {
		x.W.Int(0)
		return
	}
	x.W.Int(int64(h.Len()))
}

func hstrlenCommand(x *Ctx) {
	h, found, ok := readAs[values.HashView](x, x.Args[1])
	if !ok {
		return
	}
	v, _ := h.Get(x.Args[2])
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
	var h values.HashEdit
	if !editAs(x, x.Args[1], &h) {
		return
	}
	var cur int64
	if v, exists := h.Get(x.Args[2]); exists {
		if cur, ok = strnum.ParseInt(v); !ok {
			x.W.Error("ERR hash value is not an integer")
			return
		}
	}
	if cur, ok = addInt(cur, incr); !ok {
		x.W.Error(errOverflow)
		return
	}
	var buf [20]byte
	h.Set(x.Args[2], strconv.AppendInt(buf[:0], cur, 10))
	x.committed(h.Commit(), "hincrby")
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
	var h values.HashEdit
	if !editAs(x, key, &h) {
		return
	}
	cur, _ := strnum.ParseLongDouble([]byte("0"))
	if v, exists := h.Get(field); exists {
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
	h.Set(field, sum)
	x.committed(h.Commit(), "hincrbyfloat")
	x.dirty++
	x.W.Bulk(sum)
	// The result, not the increment: float arithmetic may differ on replay.
	x.propagateAs(argHSET, key, field, sum)
}

func hrandfieldCommand(x *Ctx) {
	if len(x.Args) >= 3 {
		hrandfieldWithCount(x)
		return
	}
	h, found, ok := readAs[values.HashView](x, x.Args[1])
	switch {
	case !ok:
	case !found:
		x.W.Null()
	default:
		h.EachRandom(1, func(f, _ []byte) { x.W.Bulk(f) })
	}
}

func hrandfieldWithCount(x *Ctx) {
	l, withValues, ok := x.parseRandomCount("withvalues")
	if !ok {
		return
	}
	h, _, ok := readAs[values.HashView](x, x.Args[1])
	if !ok {
		return
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
	x.writeRandom(l, h.Len(), withValues, randomDraws{
		repeats:  func(n int) { h.EachRandom(n, pair) },
		all:      func() { h.Each(pair) },
		distinct: func(n int) { h.RandomDistinct(n, pair) },
	})
}

func hscanCommand(x *Ctx) {
	h, cursor, opts, ok := beginScan[values.HashView](x)
	if !ok {
		return
	}
	add := func(f, v []byte) {
		if opts.matches(f) {
			x.collect.add(f)
			x.collect.add(v)
		}
	}
	var next uint64
	if h.Obj != nil {
		next = h.Obj.Scan(cursor, opts.limit(), add)
	} else {
		h.Each(add) // a listpack is returned whole, as Redis does
	}
	x.writeScanReply(next)
}
