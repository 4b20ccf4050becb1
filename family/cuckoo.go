package family

import (
	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/prob"
	"github.com/keyhive/keyhive/keyspace"
)

// The Cuckoo filter family (Redis 8's CF.*), over internal/prob's filter.
// CF.ADD, CF.ADDNX, CF.INSERT and CF.INSERTNX create a missing filter with
// Redis's defaults: capacity 1024, bucket size 2, 20 iterations,
// expansion 1.

func registerCuckoo(bind binder) {
	bind("cf.reserve", cfReserveCommand)
	bind("cf.add", func(x *command.Ctx) { cfAddOne(x, false) })
	bind("cf.addnx", func(x *command.Ctx) { cfAddOne(x, true) })
	bind("cf.insert", func(x *command.Ctx) { cfInsert(x, false) })
	bind("cf.insertnx", func(x *command.Ctx) { cfInsert(x, true) })
	bind("cf.exists", probExists(cfRead, false))
	bind("cf.mexists", probExists(cfRead, true))
	bind("cf.del", cfDelCommand)
	bind("cf.count", cfCountCommand)
	bind("cf.info", cfInfoCommand)
	bind("cf.scandump", cfScandumpCommand)
	bind("cf.loadchunk", cfLoadchunkCommand)
}

const (
	errCFBadCap     = "ERR Bad capacity"
	errCFBadBucket  = "ERR Bad bucket size"
	errCFBadIter    = "ERR Bad maxIterations"
	errCFBadExp     = "ERR Bad expansion"
	errCFDelMissing = "ERR Not found"
)

type cfParams struct {
	capacity                         int64
	bucketSize, maxIter, expansionBy int64
}

func cfDefaults() cfParams {
	return cfParams{capacity: 1024, bucketSize: 2, maxIter: 20, expansionBy: 1}
}

func (p cfParams) buckets() uint64 { return prob.CuckooBuckets(uint64(p.capacity), int(p.bucketSize)) }

// size is the bytes of a new filter with p; past probMaxBytes (refused)
// it is probMaxBytes+1, never a product that overflows int (CF.RESERVE k
// 9223372036854775807 BUCKETSIZE 1 once made a negative size).
func (p cfParams) size() int {
	b := p.buckets()
	if b > probMaxBytes/uint64(p.bucketSize) {
		return probMaxBytes + 1
	}
	return prob.CuckooSize(b, int(p.bucketSize))
}

func cfCreate(x *command.Ctx, e *keyspace.Entry, key []byte, p cfParams) {
	prob.InitCuckoo(probCreate(x, e, key, keyspace.TypeCuckoo, p.size()), p.buckets(), int(p.bucketSize), int(p.maxIter), int(p.expansionBy))
}

func cfReserveCommand(x *command.Ctx) {
	p := cfDefaults()
	var ok bool
	if p.capacity, ok = parseInt(x.Args[2]); !ok || p.capacity <= 0 {
		x.W.Error(errCFBadCap)
		return
	}
	for i := 3; i < len(x.Args); i += 2 {
		if i+1 >= len(x.Args) {
			x.W.Error(errUnknownArg)
			return
		}
		v, ok := parseInt(x.Args[i+1])
		switch opt := x.Args[i]; {
		case cstr.ArgIs(opt, "bucketsize"):
			if !ok || v < 1 || v > 255 {
				x.W.Error(errCFBadBucket)
				return
			}
			p.bucketSize = v
		case cstr.ArgIs(opt, "maxiterations"):
			if !ok || v < 1 || v > 65535 {
				x.W.Error(errCFBadIter)
				return
			}
			p.maxIter = v
		case cstr.ArgIs(opt, "expansion"):
			if !ok || v < 0 || v > 32768 {
				x.W.Error(errCFBadExp)
				return
			}
			p.expansionBy = v
		default:
			x.W.Error(errUnknownArg)
			return
		}
	}
	if p.size() > probMaxBytes {
		x.W.Error(errBFTooLarge)
		return
	}
	key := x.Args[1]
	e, found := x.LookupWrite(key)
	if found {
		x.W.Error(errBFExists)
		return
	}
	cfCreate(x, &e, key, p)
	probEvent(x, key, "cf.reserve")
	x.W.OK()
}

// cfOpen finds key's filter for adding, creating it with p unless
// noCreate; it replies and reports false when it cannot.
func cfOpen(x *command.Ctx, key []byte, p cfParams, noCreate bool) (e keyspace.Entry, created, ok bool) {
	e, found, ok := probLookup(x, key, keyspace.TypeCuckoo)
	switch {
	case !ok:
		return e, false, false
	case found:
		return e, false, true
	case noCreate:
		x.W.Error(errBFNotFound)
		return e, false, false
	}
	cfCreate(x, &e, key, p)
	return e, true, true
}

// cfAdd adds item to e's filter (unless nx and it may be there), growing
// it as needed: 1 added, 0 present, or the error of a full filter.
func cfAdd(x *command.Ctx, e *keyspace.Entry, item []byte, nx bool) (int64, error) {
	f := prob.Cuckoo(e.Value())
	if nx && f.Exists(item) {
		return 0, nil
	}
	grow, err := f.Add(item)
	if grow > probMaxBytes-len(f) {
		return 0, errTooLarge
	}
	if grow > 0 {
		f = prob.Cuckoo(probGrow(x, e, grow))
		f.Grown()
		_, err = f.Add(item)
	}
	if err != nil {
		return 0, err
	}
	return 1, nil
}

func cfAddOne(x *command.Ctx, nx bool) {
	key := x.Args[1]
	e, created, ok := cfOpen(x, key, cfDefaults(), false)
	if !ok {
		return
	}
	added, err := cfAdd(x, &e, x.Args[2], nx)
	if err != nil {
		x.W.Error(err.Error())
	} else {
		x.W.Bool(added == 1)
	}
	if added == 1 || created {
		probChanged(x, &e, "cf.add")
	}
}

func cfInsert(x *command.Ctx, nx bool) {
	p := cfDefaults()
	noCreate := false
	i := 2
	for ; i < len(x.Args) && !cstr.ArgIs(x.Args[i], "items"); i++ {
		switch opt := x.Args[i]; {
		case cstr.ArgIs(opt, "capacity") && i+1 < len(x.Args):
			i++
			var ok bool
			if p.capacity, ok = parseInt(x.Args[i]); !ok || p.capacity <= 0 {
				x.W.Error(errCFBadCap)
				return
			}
		case cstr.ArgIs(opt, "nocreate"):
			noCreate = true
		default:
			x.W.Error(errUnknownArg)
			return
		}
	}
	if i+1 >= len(x.Args) {
		x.W.Error(command.ErrArity(x.Name))
		return
	}
	if p.size() > probMaxBytes {
		x.W.Error(errBFTooLarge)
		return
	}
	key, items := x.Args[1], x.Args[i+1:]
	e, changed, ok := cfOpen(x, key, p, noCreate)
	if !ok {
		return
	}
	x.W.Array(len(items))
	for _, item := range items {
		added, err := cfAdd(x, &e, item, nx)
		switch {
		case err != nil:
			x.W.Int(-1) // full
		case nx:
			x.W.Int(added)
		default:
			x.W.Bool(true) // CF.INSERT always adds
		}
		changed = changed || added == 1
	}
	if changed {
		probChanged(x, &e, "cf.insert")
	}
}

func cfRead(x *command.Ctx, key []byte) (f prob.Cuckoo, found, ok bool) {
	e, found, ok := x.ReadTyped(key, keyspace.TypeCuckoo)
	if found && ok {
		f = prob.Cuckoo(e.Value())
	}
	return f, found, ok
}

func cfCountCommand(x *command.Ctx) {
	f, found, ok := cfRead(x, x.Args[1])
	switch {
	case !ok:
	case !found:
		x.W.Int(0)
	default:
		x.W.Int(f.Count(x.Args[2]))
	}
}

func cfDelCommand(x *command.Ctx) {
	key := x.Args[1]
	e, found, ok := probLookup(x, key, keyspace.TypeCuckoo)
	if !ok {
		return
	}
	if !found {
		x.W.Error(errCFDelMissing)
		return
	}
	deleted := prob.Cuckoo(e.Value()).Delete(x.Args[2])
	if deleted {
		probChanged(x, &e, "cf.del")
	}
	x.W.Bool(deleted)
}

func cfInfoCommand(x *command.Ctx) {
	f, found, ok := cfRead(x, x.Args[1])
	if !ok {
		return
	}
	if !found {
		x.W.Error(errBFNotFound)
		return
	}
	x.W.Map(8)
	x.W.Simple("Size")
	x.W.Int(f.RedisSize())
	x.W.Simple("Number of buckets")
	x.W.Int(int64(f.Buckets()))
	x.W.Simple("Number of filters")
	x.W.Int(int64(f.Filters()))
	x.W.Simple("Number of items inserted")
	x.W.Int(int64(f.Items()))
	x.W.Simple("Number of items deleted")
	x.W.Int(int64(f.Deleted()))
	x.W.Simple("Bucket size")
	x.W.Int(int64(f.BucketSize()))
	x.W.Simple("Expansion rate")
	x.W.Int(int64(f.Expansion()))
	x.W.Simple("Max iterations")
	x.W.Int(int64(f.MaxIterations()))
}

// A Cuckoo filter's SCANDUMP is its header, then its buckets' bytes, with
// the iterators BF.SCANDUMP uses.

func cfScandumpCommand(x *command.Ctx) {
	iter, ok := parseInt(x.Args[2])
	if !ok || iter < 0 {
		x.W.Error(errBFBadIter)
		return
	}
	f, found, ok := cfRead(x, x.Args[1])
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
	data := f.Data()
	pos := int(iter - 1)
	if pos >= len(data) {
		x.W.Array(2) // the end: a null chunk (BF.SCANDUMP's is empty)
		x.W.Int(0)
		x.W.Null()
		return
	}
	chunk := data[pos:min(len(data), pos+scanDumpChunk)]
	scanDumpReply(x, int64(pos+len(chunk)+1), chunk)
}

func cfLoadchunkCommand(x *command.Ctx) {
	iter, ok := parseInt(x.Args[2])
	if !ok || iter <= 0 {
		x.W.Error(errBFBadIter)
		return
	}
	key, data := x.Args[1], x.Args[3]
	e, found, ok := probLookup(x, key, keyspace.TypeCuckoo)
	if !ok {
		return
	}
	if iter == 1 {
		size, valid := prob.CuckooFromHeader(data)
		switch {
		case !valid:
			x.W.Error(errBFBadData)
		case found:
			x.W.Error(errBFExists)
		case size > probMaxBytes:
			x.W.Error(errBFTooLarge)
		default:
			copy(probCreate(x, &e, key, keyspace.TypeCuckoo, size), data)
			probEvent(x, key, "cf.loadchunk")
			x.W.OK()
		}
		return
	}
	if !found {
		x.W.Error(errBFNotFound)
		return
	}
	all := prob.Cuckoo(e.Value()).Data()
	from := int(iter-1) - len(data)
	if from < 0 || from+len(data) > len(all) {
		x.W.Error(errBFBadOffset)
		return
	}
	copy(all[from:], data)
	probChanged(x, &e, "cf.loadchunk")
	x.W.OK()
}
