package values

import (
	"encoding/binary"
	"errors"

	"github.com/keyhive/keyhive/internal/array"
	"github.com/keyhive/keyhive/internal/intset"
	"github.com/keyhive/keyhive/internal/jsondoc"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/internal/vset"
	"github.com/keyhive/keyhive/internal/zset"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/persistence"
)

// AccessMode is what a file records of each key's access clock: Redis
// saves the LRU idle time under an LRU maxmemory policy and the LFU counter
// under an LFU one.
type AccessMode int

const (
	AccessNone AccessMode = iota
	AccessLRU
	AccessLFU
	// AccessLRFU: Keyhive's LRFU policy, whose clock is no file's; files
	// record nothing and loaded keys start as new ones.
	AccessLRFU
)

// StringEncoding picks the encoding Redis gives a string stored from a
// client argument: int when it is a canonical 64-bit integer, embstr up to
// 44 bytes.
func StringEncoding(v []byte) keyspace.Encoding {
	if len(v) <= 20 {
		if _, ok := strnum.ParseInt(v); ok {
			return keyspace.EncInt
		}
	}
	if len(v) <= 44 {
		return keyspace.EncEmbstr
	}
	return keyspace.EncRaw
}

// IdleSeconds is the time since the access clock, allowing for its
// wrap-around.
func IdleSeconds(access uint32, nowMs int64) int64 {
	now := keyspace.LRUClock(nowMs)
	if now >= access {
		return int64(now - access)
	}
	return int64(now + (1 << 24) - access)
}

// AppendValue appends the entry's RDB value type, the key when key is not
// nil (a file record; DUMP has none), and the value, in the encodings Redis
// 7.0 writes for the same in-memory encodings (7.2's for a listpack set,
// 7.4's for a hash with field TTLs). Lists are split into nodes
// as the configured list-max-listpack-size splits them.
func AppendValue(enc *persistence.Encoder, b []byte, e *keyspace.Entry, key []byte, lim Limits) []byte {
	head := func(t byte) {
		b = append(b, t)
		if key != nil {
			b = enc.AppendString(b, key)
		}
	}
	switch e.Type() {
	case keyspace.TypeString:
		head(persistence.TypeString)
		b = enc.AppendString(b, e.Value())
	case keyspace.TypeList:
		head(persistence.TypeListQuicklist2)
		l := ViewList(e)
		b = enc.AppendListNodes(b, lim.ListMaxListpackSize(), func(fn func([]byte) bool) { l.Each(0, false, fn) })
	case keyspace.TypeSet:
		set := ViewSet(e)
		if set.HasTTLs() {
			head(persistence.TypeModule2)
			enc.Scratch = set.appendFile(enc.Scratch[:0])
			b = enc.AppendModuleValue(b, setTTLModuleID, enc.Scratch)
			break
		}
		if set.LP != nil {
			head(persistence.TypeSetListpack) // Redis 7.2's
			lp := &enc.Listpack
			lp.Reset()
			set.Each(lp.Append)
			b = enc.AppendBlob(b, lp.Bytes())
			break
		}
		if set.Obj == nil {
			head(persistence.TypeSetIntset)
			blob := persistence.AppendIntset(enc.Scratch[:0], intset.Len(set.Ints), func(i int) int64 { return intset.At(set.Ints, i) })
			enc.Scratch = blob
			b = enc.AppendBlob(b, blob)
			break
		}
		head(persistence.TypeSet)
		b = persistence.AppendLen(b, uint64(set.Len()))
		set.Each(func(m []byte) { b = enc.AppendString(b, m) })
	case keyspace.TypeZSet:
		z := ViewZSet(e)
		if z.Obj == nil {
			head(persistence.TypeZSetListpack)
			lp := &enc.Listpack
			lp.Reset()
			it := zset.NewIter(z.LP)
			for m, sc, ok := it.Next(); ok; m, sc, ok = it.Next() {
				lp.Append(m)
				lp.AppendScore(sc)
			}
			b = enc.AppendBlob(b, lp.Bytes())
			break
		}
		// Highest score first, as Redis walks its skiplist from the tail.
		head(persistence.TypeZSet2)
		n := z.Len()
		b = persistence.AppendLen(b, uint64(n))
		z.Each(0, n, true, func(m []byte, sc float64) {
			b = enc.AppendString(b, m)
			b = persistence.AppendDouble(b, sc)
		})
	case keyspace.TypeHash:
		h := ViewHash(e)
		if min := h.MinExpire(); min != 0 {
			// Redis 7.4's types, written only when a field has a TTL.
			if !h.Large() {
				head(persistence.TypeHashListpackEx)
				b = enc.AppendHashListpackEx(b, min, h.EachTTL)
			} else {
				head(persistence.TypeHashMetadata)
				b = enc.AppendHashMetadata(b, h.Len(), min, h.EachTTL)
			}
			break
		}
		if !h.Large() {
			head(persistence.TypeHashListpack)
			lp := &enc.Listpack
			lp.Reset()
			h.Each(func(f, v []byte) {
				lp.Append(f)
				lp.Append(v)
			})
			b = enc.AppendBlob(b, lp.Bytes())
			break
		}
		head(persistence.TypeHash)
		b = persistence.AppendLen(b, uint64(h.Len()))
		h.Each(func(f, v []byte) {
			b = enc.AppendString(b, f)
			b = enc.AppendString(b, v)
		})
	case keyspace.TypeStream:
		st := EntryStream(e)
		if st.HasIDMP() {
			head(persistence.TypeStreamIDMP)
			b = appendStreamValue(enc, b, st)
			b = enc.AppendStreamIDMP(b, st)
			break
		}
		head(persistence.TypeStreamListpack2) // Redis 7.0's stream type
		b = appendStreamValue(enc, b, st)
	case keyspace.TypeJSON:
		head(persistence.TypeModule2)
		enc.Scratch = jsondoc.AppendJSON(enc.Scratch[:0], e.Value(), 0, nil)
		b = enc.AppendJSONValue(b, enc.Scratch)
	case keyspace.TypeVectorSet:
		head(persistence.TypeModule2)
		enc.Scratch = EntryVSet(e).AppendFile(enc.Scratch[:0])
		b = enc.AppendModuleValue(b, vsetModuleID, enc.Scratch)
	case keyspace.TypeArray:
		head(persistence.TypeModule2)
		enc.Scratch = EntryArray(e).AppendFile(enc.Scratch[:0])
		b = enc.AppendModuleValue(b, arrayModuleID, enc.Scratch)
	default:
		if IsProb(e.Type()) {
			head(persistence.TypeModule2)
			b = enc.AppendModuleValue(b, probModuleID(e.Type()), e.Value())
		}
	}
	return b
}

// AppendRecord appends a key's file record: its expire time, access clock
// (per mode, the LFU counter decayed by decay minutes), type, key and value,
// then its protection from eviction (BlessAux).
func AppendRecord(enc *persistence.Encoder, b []byte, e *keyspace.Entry, mode AccessMode, now int64, decay int, lim Limits) []byte {
	if at := e.ExpireAt(); at != 0 {
		b = binary.LittleEndian.AppendUint64(append(b, persistence.OpExpireTimeMS), uint64(at))
	}
	switch mode {
	case AccessLRU:
		b = persistence.AppendLen(append(b, persistence.OpIdle), uint64(IdleSeconds(e.Access(), now)))
	case AccessLFU:
		b = append(b, persistence.OpFreq, byte(keyspace.LFUCounter(e.Access(), now, decay)))
	}
	b = AppendValue(enc, b, e, e.Key(), lim)
	if e.Blessed() {
		b = enc.AppendAux(b, BlessAux, e.Key())
	}
	return b
}

// BlessAux names the aux field that follows the record of a key protected
// from eviction (BLESS SET NO-EVICT), its value the key. Redis publishes no
// RDB form for the flag: this one is Keyhive's, and a Redis server loading
// the file ignores the field, as it does any aux field it does not know.
const BlessAux = "keyhive-bless-noevict"

// ErrDuplicate is a loaded collection repeating a member (Redis reports it
// as corruption).
var ErrDuplicate = errors.New("duplicate elements")

// Restore stores a decoded value at key, e being the key's vacancy, with
// its expire time (0 for none) and the access clock it came with (freq and
// idle, -1 when the record has none). A collection is built as the
// commands build it, so it takes the encoding Redis gives it under the
// configured limits.
func Restore(env *Env, e keyspace.Entry, key []byte, v *persistence.Value, expireAt int64, mode AccessMode, freq int, idle int64) error {
	if v.Type == persistence.TypeModule2 && v.Module == setTTLModuleID {
		set, err := readSetTTLFile(v.Str)
		if err != nil {
			return err
		}
		v = &set
	}
	switch v.Type {
	case persistence.TypeString:
		// Most keys: the value stored straight into the vacancy.
		env.DB.Put(&e, key, keyspace.TypeString, StringEncoding(v.Str), v.Str, expireAt, env.Now)
	case persistence.TypeJSON:
		doc, err := jsondoc.Parse(nil, v.Str)
		if err != nil {
			return err
		}
		env.DB.Put(&e, key, keyspace.TypeJSON, keyspace.EncRaw, doc, expireAt, env.Now)
	case persistence.TypeModule2:
		if isVSet(v) {
			s, err := vset.ReadFile(v.Str)
			if err != nil {
				return persistence.ErrBadData
			}
			StoreVSet(env, &e, key, s, expireAt)
			break
		}
		if isArray(v) {
			a, err := array.ReadFile(v.Str)
			if err != nil {
				return persistence.ErrBadData
			}
			StoreArray(env, &e, key, a, expireAt)
			break
		}
		t, err := probValue(v)
		if err != nil {
			return err
		}
		env.DB.Put(&e, key, t, keyspace.EncRaw, v.Str, expireAt, env.Now)
	default:
		if err := storeCollection(env, e, key, v); err != nil {
			return err
		}
		var stored bool
		if e, stored = env.DB.Lookup(key, env.Now, false); !stored {
			return nil // a hash whose fields had all expired
		}
		if expireAt != 0 {
			env.DB.SetExpire(&e, expireAt, env.Now)
		}
	}
	SetAccess(env, &e, mode, freq, idle)
	return nil
}

// storeCollection stores a decoded collection at key (e its vacancy).
// Duplicate members are an error.
func storeCollection(env *Env, e keyspace.Entry, key []byte, v *persistence.Value) error {
	switch v.Type {
	case persistence.TypeList:
		var l ListEdit
		l.Begin(env, key, &e, false)
		for _, el := range v.Elems {
			l.Push(false, el)
		}
		l.Commit()
	case persistence.TypeSet:
		var set SetEdit
		set.Begin(env, key, &e, false)
		loaded := false
		if v.FieldTTLs != nil {
			loaded = set.loadWithTTLs(v.Elems, v.FieldTTLs, env.Now)
		} else {
			loaded = set.load(v.Elems, v.SetListpack)
		}
		if !loaded {
			return ErrDuplicate
		}
		set.Commit()
	case persistence.TypeZSet:
		var z ZSetEdit
		z.Begin(env, key, &e, false)
		for i, m := range v.Elems {
			if _, dup := z.Score(m); dup {
				return ErrDuplicate
			}
			z.Add(m, v.Scores[i])
		}
		z.Commit()
	case persistence.TypeHash:
		var h HashEdit
		h.Begin(env, key, &e, false)
		if v.FieldTTLs != nil {
			h.PrepareTTL()
		}
		for i := 0; i < len(v.Elems); i += 2 {
			var at int64
			if v.FieldTTLs != nil {
				if at = v.FieldTTLs[i/2]; at != 0 && at < env.Now {
					continue // expired: not loaded, as Redis skips it
				}
			}
			if !h.SetLoaded(v.Elems[i], v.Elems[i+1], at, v.TTLOrdered) {
				return ErrDuplicate
			}
		}
		h.Commit()
	case persistence.TypeStream:
		storeStream(env, &e, key, v.Stream)
	}
	return nil
}

// SetAccess gives a restored or loaded key the access clock it came with,
// as objectSetLRUOrLFU does: the LFU counter under an LFU policy, else the
// LRU idle time (none when negative).
func SetAccess(env *Env, e *keyspace.Entry, mode AccessMode, freq int, idle int64) {
	switch {
	case mode == AccessLRFU:
	case mode == AccessLFU && freq >= 0:
		env.DB.SetAccess(e, keyspace.LFUAccess(int64(freq), env.Now))
	case mode != AccessLFU && idle >= 0:
		env.DB.SetAccess(e, (keyspace.LRUClock(env.Now)-uint32(idle))&(1<<24-1))
	}
}
