package family

import (
	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/prob"
	"github.com/keyhive/keyhive/keyspace"
)

// The Top-K family (Redis 8's TOPK.*), over internal/prob's HeavyKeeper.
// A Top-K is created only by TOPK.RESERVE (width 8, depth 7, decay 0.9 by
// default). Counting changes the sketch in place; an item entering the
// list rewrites the value, whose names part changes length.

func registerTopK(bind binder) {
	bind("topk.reserve", topkReserveCommand)
	bind("topk.add", func(x *command.Ctx) { topkAdd(x, false) })
	bind("topk.incrby", func(x *command.Ctx) { topkAdd(x, true) })
	bind("topk.query", topkQueryCommand)
	bind("topk.count", topkCountCommand)
	bind("topk.list", topkListCommand)
	bind("topk.info", topkInfoCommand)
}

const (
	errTopKMissing = "TopK: key does not exist"
	errTopKExists  = "TopK: key already exists"
	errTopKK       = "TopK: invalid k"
	errTopKWidth   = "TopK: invalid width"
	errTopKDepth   = "TopK: invalid depth"
	errTopKDecay   = "TopK: invalid decay value. must be '<= 1' & '> 0'"
	errTopKIncr    = "TopK: increment must be an integer greater or equal to 1 and less than or equal to 100000"
	topkMaxIncr    = 100000
	topkMaxDim     = 1 << 24
)

func topkReserveCommand(x *command.Ctx) {
	if len(x.Args) != 3 && len(x.Args) != 6 {
		x.W.Error(command.ErrArity(x.Name))
		return
	}
	k, ok := parseInt(x.Args[2])
	if !ok || k < 1 || k > topkMaxDim {
		x.W.Error(errTopKK)
		return
	}
	width, depth, decay := int64(8), int64(7), 0.9
	if len(x.Args) == 6 {
		if width, ok = parseInt(x.Args[3]); !ok || width < 1 || width > topkMaxDim {
			x.W.Error(errTopKWidth)
			return
		}
		if depth, ok = parseInt(x.Args[4]); !ok || depth < 1 || depth > topkMaxDim {
			x.W.Error(errTopKDepth)
			return
		}
		if decay, ok = parseDouble(x.Args[5]); !ok || !(decay > 0 && decay <= 1) {
			x.W.Error(errTopKDecay)
			return
		}
	}
	if width*depth > probMaxBytes/8 || prob.TopKSize(uint64(k), uint64(width), uint64(depth)) > probMaxBytes {
		x.W.Error(errBFTooLarge)
		return
	}
	key := x.Args[1]
	e, found := x.LookupWrite(key)
	if found {
		x.W.Error(errTopKExists)
		return
	}
	size := prob.TopKSize(uint64(k), uint64(width), uint64(depth))
	prob.InitTopK(probCreate(x, &e, key, keyspace.TypeTopK, size), uint64(k), uint64(width), uint64(depth), decay)
	probEvent(x, key, "topk.reserve")
	x.W.OK()
}

// topkAdd is TOPK.ADD (each item counted once) and TOPK.INCRBY (item and
// increment pairs): it replies, per item, the item it expelled from the
// list or nil.
func topkAdd(x *command.Ctx, pairs bool) {
	step := 1
	if pairs {
		step = 2
		if len(x.Args)%2 != 0 {
			x.W.Error(command.ErrArity(x.Name))
			return
		}
		for i := 3; i < len(x.Args); i += 2 {
			if by, ok := parseInt(x.Args[i]); !ok || by < 1 || by > topkMaxIncr {
				x.W.Error(errTopKIncr)
				return
			}
		}
	}
	key := x.Args[1]
	e, found, ok := probLookup(x, key, keyspace.TypeTopK)
	if !ok {
		return
	}
	if !found {
		x.W.Error(errTopKMissing)
		return
	}
	t := prob.TopK(e.Value())
	rebuilt := false
	x.W.Array((len(x.Args) - 2) / step)
	for i := 2; i < len(x.Args); i += step {
		item, by := x.Args[i], int64(1)
		if pairs {
			by, _ = parseInt(x.Args[i+1])
		}
		c := t.Add(item, uint32(by))
		if !c.Enter {
			x.W.Null()
			continue
		}
		if c.Victim >= 0 {
			x.W.Bulk(t.Item(c.Victim))
		} else {
			x.W.Null()
		}
		t = t.Enter(x.NextScratch(), item, c)
		x.KeepScratch(t)
		rebuilt = true
	}
	event := "topk.add"
	if pairs {
		event = "topk.incrby"
	}
	if rebuilt {
		x.DB.Replace(&e, keyspace.EncRaw, t, e.ExpireAt(), x.Now)
		probEvent(x, key, event)
		return
	}
	probChanged(x, &e, event)
}

func topkRead(x *command.Ctx, key []byte) (prob.TopK, bool) {
	e, found, ok := x.ReadTyped(key, keyspace.TypeTopK)
	if !ok {
		return nil, false
	}
	if !found {
		x.W.Error(errTopKMissing)
		return nil, false
	}
	return prob.TopK(e.Value()), true
}

func topkQueryCommand(x *command.Ctx) {
	t, ok := topkRead(x, x.Args[1])
	if !ok {
		return
	}
	x.W.Array(len(x.Args) - 2)
	for _, item := range x.Args[2:] {
		x.W.Bool(t.Query(item))
	}
}

func topkCountCommand(x *command.Ctx) {
	t, ok := topkRead(x, x.Args[1])
	if !ok {
		return
	}
	x.W.Array(len(x.Args) - 2)
	for _, item := range x.Args[2:] {
		x.W.Int(int64(t.Count(item)))
	}
}

func topkListCommand(x *command.Ctx) {
	withCount := false
	switch {
	case len(x.Args) == 3 && cstr.ArgIs(x.Args[2], "withcount"):
		withCount = true
	case len(x.Args) != 2:
		x.W.Error(command.ErrSyntax)
		return
	}
	t, ok := topkRead(x, x.Args[1])
	if !ok {
		return
	}
	order := t.Ranked()
	if withCount {
		x.W.Array(2 * len(order))
	} else {
		x.W.Array(len(order))
	}
	for _, i := range order {
		x.W.Bulk(t.Item(i))
		if withCount {
			x.W.Int(int64(t.ItemCount(i)))
		}
	}
}

func topkInfoCommand(x *command.Ctx) {
	t, ok := topkRead(x, x.Args[1])
	if !ok {
		return
	}
	x.W.Map(4)
	x.W.Simple("k")
	x.W.Int(int64(t.K()))
	x.W.Simple("width")
	x.W.Int(int64(t.Width()))
	x.W.Simple("depth")
	x.W.Int(int64(t.Depth()))
	x.W.Simple("decay")
	x.W.Double(t.Decay())
}
