package family

import (
	"errors"

	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/prob"
	"github.com/keyhive/keyhive/keyspace"
)

// The Bloom filter family (Redis 8's BF.*), over internal/prob's scalable
// filter. BF.ADD, BF.MADD and BF.INSERT create a missing filter with
// Redis's defaults: error rate 0.01, capacity 100, expansion 2.

func registerBloom(bind binder) {
	bind("bf.reserve", bfReserveCommand)
	bind("bf.add", bfAddCommand)
	bind("bf.madd", bfMaddCommand)
	bind("bf.insert", bfInsertCommand)
	bind("bf.exists", probExists(bfRead, false))
	bind("bf.mexists", probExists(bfRead, true))
	bind("bf.info", bfInfoCommand)
	bind("bf.card", bfCardCommand)
	bind("bf.scandump", bfScandumpCommand)
	bind("bf.loadchunk", bfLoadchunkCommand)
}

const (
	bfDefaultError     = 0.01
	bfDefaultCapacity  = 100
	bfDefaultExpansion = 2
	// scanDumpChunk bounds a SCANDUMP reply's data.
	scanDumpChunk = 16 << 20
	// probMaxBytes bounds a structure's size, as Redis refuses filters
	// larger than its allocator gives.
	probMaxBytes = 1 << 32

	errBFNotFound   = "ERR not found"
	errBFExists     = "ERR item exists"
	errBFBadError   = "ERR bad error rate"
	errBFBadCap     = "ERR bad capacity"
	errBFErrorRange = "ERR (0 < error rate range < 1)"
	errBFCapRange   = "ERR (capacity should be larger than 0)"
	errBFBadExp     = "ERR bad expansion"
	errBFExpRange   = "ERR expansion should be greater or equal to 1"
	errBFNoExpand   = "ERR nonscaling filters cannot expand"
	errBFTooLarge   = "ERR Insufficient memory to create filter"
	errBFBadData    = "ERR received bad data"
	errBFBadOffset  = "ERR invalid offset - no link found"
	errBFBadIter    = "ERR Second argument must be numeric"
	errBFInfoField  = "ERR Invalid information value"
	errUnknownArg   = "ERR Unknown argument received"
)

// errTooLarge is a structure that would grow past probMaxBytes.
var errTooLarge = errors.New(errBFTooLarge)

// bfParams are a filter's creation parameters.
type bfParams struct {
	errorRate  float64
	capacity   int64
	expansion  int64
	nonScaling bool
	expanding  bool // EXPANSION given
}

func bfDefaults() bfParams {
	return bfParams{errorRate: bfDefaultError, capacity: bfDefaultCapacity, expansion: bfDefaultExpansion}
}

// check replies the error of parameters Redis refuses.
func (p *bfParams) check(x *command.Ctx) bool {
	switch {
	case !(p.errorRate > 0 && p.errorRate < 1):
		x.W.Error(errBFErrorRange)
	case p.capacity <= 0:
		x.W.Error(errBFCapRange)
	case p.expansion < 1:
		x.W.Error(errBFExpRange)
	case p.nonScaling && p.expanding:
		x.W.Error(errBFNoExpand)
	case prob.BloomSize(uint64(p.capacity), p.errorRate, p.nonScaling) > probMaxBytes:
		x.W.Error(errBFTooLarge)
	default:
		return true
	}
	return false
}

// bfCreate stores a new filter under key (missing as e).
func bfCreate(x *command.Ctx, e *keyspace.Entry, key []byte, p bfParams) prob.Bloom {
	size := prob.BloomSize(uint64(p.capacity), p.errorRate, p.nonScaling)
	return prob.InitBloom(probCreate(x, e, key, keyspace.TypeBloom, size), uint64(p.capacity), p.errorRate, uint32(p.expansion), p.nonScaling)
}

func bfReserveCommand(x *command.Ctx) {
	p := bfParams{expansion: bfDefaultExpansion}
	var ok bool
	if p.errorRate, ok = parseDouble(x.Args[2]); !ok {
		x.W.Error(errBFBadError)
		return
	}
	if p.capacity, ok = parseInt(x.Args[3]); !ok {
		x.W.Error(errBFBadCap)
		return
	}
	for i := 4; i < len(x.Args); i++ {
		switch {
		case cstr.ArgIs(x.Args[i], "expansion") && i+1 < len(x.Args):
			i++
			if p.expansion, ok = parseInt(x.Args[i]); !ok {
				x.W.Error(errBFBadExp)
				return
			}
			p.expanding = true
		case cstr.ArgIs(x.Args[i], "nonscaling"):
			p.nonScaling = true
		default:
			x.W.Error(errUnknownArg)
			return
		}
	}
	if !p.check(x) {
		return
	}
	key := x.Args[1]
	e, found := x.LookupWrite(key)
	if found {
		x.W.Error(errBFExists)
		return
	}
	bfCreate(x, &e, key, p)
	probEvent(x, key, "bf.reserve")
	x.W.OK()
}

// bfAdd adds item to the filter of e, growing it as needed, and returns
// the filter (its bytes move when it grows).
func bfAdd(x *command.Ctx, e *keyspace.Entry, item []byte) (f prob.Bloom, added bool, err error) {
	f = prob.Bloom(e.Value())
	added, grow, err := f.Add(item)
	if grow > probMaxBytes-len(f) {
		return f, false, errTooLarge
	}
	if grow > 0 {
		f = prob.Bloom(probGrow(x, e, grow))
		f.Grown()
		added, _, err = f.Add(item)
	}
	return f, added, err
}

// bfOpen finds key's filter for adding, creating it with p unless
// noCreate; it replies and reports false when it cannot.
func bfOpen(x *command.Ctx, key []byte, p bfParams, noCreate bool) (e keyspace.Entry, created, ok bool) {
	e, found, ok := probLookup(x, key, keyspace.TypeBloom)
	switch {
	case !ok:
		return e, false, false
	case found:
		return e, false, true
	case noCreate:
		x.W.Error(errBFNotFound)
		return e, false, false
	case !p.check(x):
		return e, false, false
	}
	bfCreate(x, &e, key, p)
	return e, true, true
}

func bfAddCommand(x *command.Ctx) {
	key := x.Args[1]
	e, created, ok := bfOpen(x, key, bfDefaults(), false)
	if !ok {
		return
	}
	_, added, err := bfAdd(x, &e, x.Args[2])
	if err != nil {
		x.W.Error(err.Error())
	} else {
		x.W.Bool(added)
	}
	if added || created {
		probChanged(x, &e, "bf.add")
	}
}

func bfMaddCommand(x *command.Ctx) {
	bfAddItems(x, x.Args[1], x.Args[2:], bfDefaults(), false, "bf.madd")
}

// bfAddItems adds items to key's filter and replies each result.
func bfAddItems(x *command.Ctx, key []byte, items [][]byte, p bfParams, noCreate bool, event string) {
	e, created, ok := bfOpen(x, key, p, noCreate)
	if !ok {
		return
	}
	changed := created
	x.W.Array(len(items))
	for _, item := range items {
		_, added, err := bfAdd(x, &e, item)
		if err != nil {
			x.W.Error(err.Error())
			continue
		}
		x.W.Bool(added)
		changed = changed || added
	}
	if changed {
		probChanged(x, &e, event)
	}
}

func bfInsertCommand(x *command.Ctx) {
	p := bfDefaults()
	noCreate := false
	i := 2
	for ; i < len(x.Args) && !cstr.ArgIs(x.Args[i], "items"); i++ {
		var ok bool
		opt := x.Args[i]
		hasValue := i+1 < len(x.Args)
		switch {
		case cstr.ArgIs(opt, "capacity") && hasValue:
			i++
			if p.capacity, ok = parseInt(x.Args[i]); !ok {
				x.W.Error(errBFBadCap)
				return
			}
		case cstr.ArgIs(opt, "error") && hasValue:
			i++
			if p.errorRate, ok = parseDouble(x.Args[i]); !ok {
				x.W.Error(errBFBadError)
				return
			}
		case cstr.ArgIs(opt, "expansion") && hasValue:
			i++
			if p.expansion, ok = parseInt(x.Args[i]); !ok {
				x.W.Error(errBFBadExp)
				return
			}
			p.expanding = true
		case cstr.ArgIs(opt, "nocreate"):
			noCreate = true
		case cstr.ArgIs(opt, "nonscaling"):
			p.nonScaling = true
		default:
			x.W.Error(errUnknownArg)
			return
		}
	}
	if i+1 >= len(x.Args) {
		x.W.Error(command.ErrArity(x.Name))
		return
	}
	bfAddItems(x, x.Args[1], x.Args[i+1:], p, noCreate, "bf.insert")
}

// bfRead finds key's filter for reading; ok=false after WRONGTYPE.
func bfRead(x *command.Ctx, key []byte) (f prob.Bloom, found, ok bool) {
	e, found, ok := x.ReadTyped(key, keyspace.TypeBloom)
	if found && ok {
		f = prob.Bloom(e.Value())
	}
	return f, found, ok
}

func bfCardCommand(x *command.Ctx) {
	f, found, ok := bfRead(x, x.Args[1])
	switch {
	case !ok:
	case !found:
		x.W.Int(0)
	default:
		x.W.Int(int64(f.Items()))
	}
}

var bfInfoFields = []string{"Capacity", "Size", "Number of filters", "Number of items inserted", "Expansion rate"}

func bfInfoCommand(x *command.Ctx) {
	f, found, ok := bfRead(x, x.Args[1])
	if !ok {
		return
	}
	if !found {
		x.W.Error(errBFNotFound)
		return
	}
	value := func(i int) {
		switch i {
		case 0:
			x.W.Int(int64(f.Capacity()))
		case 1:
			x.W.Int(f.RedisSize())
		case 2:
			x.W.Int(int64(f.Filters()))
		case 3:
			x.W.Int(int64(f.Items()))
		default:
			if f.NonScaling() {
				x.W.Null()
			} else {
				x.W.Int(int64(f.Expansion()))
			}
		}
	}
	switch len(x.Args) {
	case 2:
		x.W.Map(len(bfInfoFields))
		for i, name := range bfInfoFields {
			x.W.Simple(name)
			value(i)
		}
	case 3:
		for i, name := range []string{"capacity", "size", "filters", "items", "expansion"} {
			if cstr.ArgIs(x.Args[2], name) {
				x.W.Array(1)
				value(i)
				return
			}
		}
		x.W.Error(errBFInfoField)
	default:
		x.W.Error(command.ErrArity(x.Name))
	}
}

// scanDumpReply writes SCANDUMP's reply: the next iterator and a chunk.
func scanDumpReply(x *command.Ctx, next int64, chunk []byte) {
	x.W.Array(2)
	x.W.Int(next)
	x.W.Bulk(chunk)
}

// The SCANDUMP iterators of both filters: 0 starts and ends, 1 follows the
// header chunk, and iterator i+1 follows a chunk ending at byte i of the
// sub-filters' concatenated data.

func bfScandumpCommand(x *command.Ctx) {
	iter, ok := parseInt(x.Args[2])
	if !ok || iter < 0 {
		x.W.Error(errBFBadIter)
		return
	}
	f, found, ok := bfRead(x, x.Args[1])
	if !ok {
		return
	}
	if !found {
		x.W.Error(errBFNotFound)
		return
	}
	if iter == 0 {
		scanDumpReply(x, 1, f.Header())
		return
	}
	pos, total := int(iter-1), f.BitBytes()
	if pos >= total {
		scanDumpReply(x, 0, nil)
		return
	}
	var chunk []byte
	f.BitsAt(pos, min(scanDumpChunk, total-pos), func(part []byte) {
		if chunk == nil {
			chunk = part // one sub-filter's bytes at a time
		}
	})
	scanDumpReply(x, int64(pos+len(chunk)+1), chunk)
}

func bfLoadchunkCommand(x *command.Ctx) {
	iter, ok := parseInt(x.Args[2])
	if !ok || iter <= 0 {
		x.W.Error(errBFBadIter)
		return
	}
	key, data := x.Args[1], x.Args[3]
	e, found, ok := probLookup(x, key, keyspace.TypeBloom)
	if !ok {
		return
	}
	if iter == 1 {
		size, valid := prob.BloomFromHeader(data)
		switch {
		case !valid:
			x.W.Error(errBFBadData)
		case found:
			x.W.Error(errBFExists)
		case size > probMaxBytes:
			x.W.Error(errBFTooLarge)
		default:
			prob.LoadBloomHeader(probCreate(x, &e, key, keyspace.TypeBloom, size), data)
			probEvent(x, key, "bf.loadchunk")
			x.W.OK()
		}
		return
	}
	if !found {
		x.W.Error(errBFNotFound)
		return
	}
	f := prob.Bloom(e.Value())
	if !f.BitsAt(int(iter-1)-len(data), len(data), func(part []byte) { data = data[copy(part, data):] }) {
		x.W.Error(errBFBadOffset)
		return
	}
	probChanged(x, &e, "bf.loadchunk")
	x.W.OK()
}
