package family

import (
	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/hll"
	"github.com/keyhive/keyhive/keyspace"
)

// The HyperLogLog family. An HLL is an ordinary string value in Redis's
// format (internal/hll), so GET/SET and replication carry it unchanged.

func registerHLL(bind binder) {
	bind("pfadd", pfaddCommand)
	bind("pfcount", pfcountCommand)
	bind("pfmerge", pfmergeCommand)
	bind("pfdebug", pfdebugCommand)
	bind("pfselftest", pfselftestCommand)
}

const (
	errHLLInvalid   = "WRONGTYPE Key is not a valid HyperLogLog string value."
	errHLLCorrupted = "INVALIDOBJ Corrupted HLL object detected"
)

// isHLL replies WRONGTYPE (the generic text for another type, Redis's HLL
// text for a string that is not an HLL) unless the found entry holds an HLL.
func isHLL(x *command.Ctx, e *keyspace.Entry) bool {
	if x.WrongType(e, true, keyspace.TypeString) {
		return false
	}
	if !hll.Valid(e.Value()) {
		x.W.Error(errHLLInvalid)
		return false
	}
	return true
}

// unshareHLL makes an HLL's string raw, as Redis's dbUnshareStringValue does
// before an HLL command may change it in place.
func unshareHLL(x *command.Ctx, e *keyspace.Entry) {
	if e.Encoding() != keyspace.EncRaw {
		x.DB.Replace(e, keyspace.EncRaw, e.Value(), e.ExpireAt(), x.Now)
	}
}

// storeHLL writes v as key's value (raw, TTL kept), e being its lookup.
func storeHLL(x *command.Ctx, e *keyspace.Entry, found bool, key, v []byte) {
	if found {
		x.DB.Replace(e, keyspace.EncRaw, v, e.ExpireAt(), x.Now)
	} else {
		x.DB.Put(e, key, keyspace.TypeString, keyspace.EncRaw, v, 0, x.Now)
	}
}

func pfaddCommand(x *command.Ctx) {
	key := x.Args[1]
	e, found := x.LookupWrite(key)
	updated, inPlace := 0, false
	var v []byte
	switch {
	case !found:
		v = hll.AppendEmpty(x.NextScratch())
		updated++
	case !isHLL(x, &e):
		return
	case hll.IsSparse(e.Value()):
		v = append(x.NextScratch(), e.Value()...)
	default:
		v = e.Value() // dense: registers change in place, the length never does
		inPlace = true
	}
	maxBytes := x.Config().HLLSparseMaxBytes()
	corrupted := false
	for _, elem := range x.Args[2:] {
		var changed, ok bool
		if v, changed, ok = hll.Add(v, elem, maxBytes); !ok {
			corrupted = true
			break
		}
		if changed {
			updated++
		}
	}
	if updated > 0 {
		hll.Invalidate(v)
	}
	// Redis changes the value in place, so what an element added before a
	// corruption was found stays.
	switch {
	case inPlace && e.Encoding() == keyspace.EncRaw:
		if updated > 0 {
			x.DB.ModifiedEntry(&e) // the registers changed in the entry itself
		}
	case updated > 0 || corrupted || (found && e.Encoding() != keyspace.EncRaw):
		storeHLL(x, &e, found, key, v)
	}
	if !inPlace {
		x.KeepScratch(v)
	}
	if corrupted {
		x.W.Error(errHLLCorrupted)
		return
	}
	if updated > 0 {
		x.Notify(config.EventString, "pfadd", key)
		x.Dirty += updated
		x.W.Int(1)
		return
	}
	x.W.Int(0)
}

func pfcountCommand(x *command.Ctx) {
	if len(x.Args) > 2 {
		var union hll.Max // the register-wise maximum; the keys are not changed
		for _, key := range x.Args[1:] {
			e, found := x.LookupRead(key)
			if !found {
				continue
			}
			if !isHLL(x, &e) {
				return
			}
			if !union.Merge(e.Value()) {
				x.W.Error(errHLLCorrupted)
				return
			}
		}
		x.W.Int(int64(union.Count()))
		return
	}
	e, found := x.LookupRead(x.Args[1])
	if !found {
		x.W.Int(0)
		return
	}
	if !isHLL(x, &e) {
		return
	}
	unshareHLL(x, &e)
	v := e.Value()
	if card, ok := hll.Cached(v); ok {
		x.W.Int(int64(card))
		return
	}
	card, ok := hll.Count(v)
	if !ok {
		x.W.Error(errHLLCorrupted)
		return
	}
	// Caching the cardinality changes the string: Redis propagates the
	// PFCOUNT so replicas hold the same bytes.
	hll.SetCached(v, card) // in the entry itself: unshareHLL made it raw
	x.DB.ModifiedEntry(&e)
	x.Dirty++
	x.W.Int(int64(card))
}

func pfmergeCommand(x *command.Ctx) {
	var union hll.Max
	toDense := false
	for _, key := range x.Args[1:] { // the destination is a source too
		e, found := x.LookupRead(key)
		if !found {
			continue
		}
		if !isHLL(x, &e) {
			return
		}
		toDense = toDense || !hll.IsSparse(e.Value())
		if !union.Merge(e.Value()) {
			x.W.Error(errHLLCorrupted)
			return
		}
	}
	key := x.Args[1]
	e, found := x.LookupWrite(key)
	var v []byte
	if found {
		v = append(x.NextScratch(), e.Value()...)
	} else {
		v = hll.AppendEmpty(x.NextScratch())
	}
	if toDense {
		var ok bool
		if v, ok = hll.ToDense(v); !ok {
			x.W.Error(errHLLCorrupted)
			return
		}
	}
	maxBytes := x.Config().HLLSparseMaxBytes()
	for i, r := range union {
		if r != 0 {
			v, _, _ = hll.Set(v, i, r, maxBytes)
		}
	}
	hll.Invalidate(v)
	storeHLL(x, &e, found, key, v)
	x.KeepScratch(v)
	// A merge is a mass add: Redis emits the pfadd event.
	x.Notify(config.EventString, "pfadd", key)
	x.Dirty++
	x.W.OK()
}

func pfdebugCommand(x *command.Ctx) {
	sub, key := x.Args[1], x.Args[2]
	e, found := x.LookupWrite(key)
	if !found {
		x.W.Error("ERR The specified key does not exist")
		return
	}
	if !isHLL(x, &e) {
		return
	}
	unshareHLL(x, &e)
	v := e.Value()
	switch {
	case cstr.ArgIs(sub, "getreg"):
		if v = hllToDense(x, &e); v == nil {
			return
		}
		x.W.Array(hll.Registers)
		for i := 0; i < hll.Registers; i++ {
			x.W.Int(int64(hll.Register(v, i)))
		}
	case cstr.ArgIs(sub, "decode"):
		if !hll.IsSparse(v) {
			x.W.Error("ERR HLL encoding is not sparse")
			return
		}
		x.W.Bulk(hll.AppendDecoded(x.NextScratch(), v))
	case cstr.ArgIs(sub, "encoding"):
		if hll.IsSparse(v) {
			x.W.Simple("sparse")
		} else {
			x.W.Simple("dense")
		}
	case cstr.ArgIs(sub, "todense"):
		if !hll.IsSparse(v) {
			x.W.Int(0)
			return
		}
		if hllToDense(x, &e) != nil {
			x.W.Int(1)
		}
	default:
		x.W.Error("ERR Unknown PFDEBUG subcommand '" + cstr.String(sub) + "'")
	}
}

// hllToDense converts the HLL at e to dense in the keyspace (a change that
// propagates) and returns it, or replies INVALIDOBJ and returns nil.
func hllToDense(x *command.Ctx, e *keyspace.Entry) []byte {
	v := e.Value()
	if !hll.IsSparse(v) {
		return v
	}
	d, ok := hll.ToDense(v)
	if !ok {
		x.W.Error(errHLLCorrupted)
		return nil
	}
	x.DB.Replace(e, keyspace.EncRaw, d, e.ExpireAt(), x.Now)
	x.Dirty++
	return e.Value()
}

func pfselftestCommand(x *command.Ctx) {
	if err := hll.SelfTest(); err != nil {
		x.W.Error(err.Error())
		return
	}
	x.W.OK()
}
