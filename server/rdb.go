package server

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/keyhive/keyhive/internal/intset"
	"github.com/keyhive/keyhive/internal/zset"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/persistence"
)

// rdbState is the value encoding's state: the encoders kept for reuse and
// what the last load of an RDB file counted (INFO persistence).
type rdbState struct {
	loadedKeys    atomic.Int64
	expiredLoaded atomic.Int64
	encoders      sync.Pool
}

// accessMode is what a file records of each key's access clock: Redis
// saves the LRU idle time under an LRU maxmemory policy and the LFU counter
// under an LFU one.
type accessMode int

const (
	accessNone accessMode = iota
	accessLRU
	accessLFU
)

func (s *Server) accessMode() accessMode {
	p := s.cfg.MaxMemoryPolicy()
	switch {
	case strings.Contains(p, "lfu"):
		return accessLFU
	case strings.Contains(p, "lru"):
		return accessLRU
	}
	return accessNone
}

func (s *Server) encoder() *persistence.Encoder {
	enc, _ := s.rdb.encoders.Get().(*persistence.Encoder)
	if enc == nil {
		enc = &persistence.Encoder{}
	}
	enc.Compress = s.cfg.RDBCompression()
	return enc
}

// appendValue appends the entry's RDB value type, the key when key is not
// nil (a file record; DUMP has none), and the value, in the encodings Redis
// 7.0 writes for the same in-memory encodings.
func (s *Server) appendValue(enc *persistence.Encoder, b []byte, e *keyspace.Entry, key []byte) []byte {
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
		l := viewList(e)
		b = enc.AppendListNodes(b, s.cfg.ListMaxListpackSize(), func(fn func([]byte) bool) { l.each(0, false, fn) })
	case keyspace.TypeSet:
		set := viewSet(e)
		if set.obj == nil {
			head(persistence.TypeSetIntset)
			blob := persistence.AppendIntset(enc.Scratch[:0], intset.Len(set.is), func(i int) int64 { return intset.At(set.is, i) })
			enc.Scratch = blob
			b = enc.AppendBlob(b, blob)
			break
		}
		head(persistence.TypeSet)
		b = persistence.AppendLen(b, uint64(set.len()))
		set.each(func(m []byte) { b = enc.AppendString(b, m) })
	case keyspace.TypeZSet:
		z := viewZSet(e)
		if z.obj == nil {
			head(persistence.TypeZSetListpack)
			lp := &enc.Listpack
			lp.Reset()
			it := zset.NewIter(z.lp)
			for m, sc, ok := it.Next(); ok; m, sc, ok = it.Next() {
				lp.Append(m)
				lp.AppendScore(sc)
			}
			b = enc.AppendBlob(b, lp.Bytes())
			break
		}
		// Highest score first, as Redis walks its skiplist from the tail.
		head(persistence.TypeZSet2)
		n := z.len()
		b = persistence.AppendLen(b, uint64(n))
		z.each(0, n, true, func(m []byte, sc float64) {
			b = enc.AppendString(b, m)
			b = persistence.AppendDouble(b, sc)
		})
	case keyspace.TypeHash:
		h := viewHash(e)
		if h.obj == nil {
			head(persistence.TypeHashListpack)
			lp := &enc.Listpack
			lp.Reset()
			h.each(func(f, v []byte) {
				lp.Append(f)
				lp.Append(v)
			})
			b = enc.AppendBlob(b, lp.Bytes())
			break
		}
		head(persistence.TypeHash)
		b = persistence.AppendLen(b, uint64(h.len()))
		h.each(func(f, v []byte) {
			b = enc.AppendString(b, f)
			b = enc.AppendString(b, v)
		})
	case keyspace.TypeStream:
		head(persistence.TypeStreamListpack2) // Redis 7.0's stream type
		b = appendStreamValue(enc, b, entryStream(e))
	}
	return b
}

// appendRecord appends a key's file record: its expire time, access clock
// (per mode), type, key and value.
func (s *Server) appendRecord(enc *persistence.Encoder, b []byte, e *keyspace.Entry, mode accessMode, now int64, decay int) []byte {
	if at := e.ExpireAt(); at != 0 {
		b = binary.LittleEndian.AppendUint64(append(b, persistence.OpExpireTimeMS), uint64(at))
	}
	switch mode {
	case accessLRU:
		b = persistence.AppendLen(append(b, persistence.OpIdle), uint64(idleSeconds(e.Access(), now)))
	case accessLFU:
		b = append(b, persistence.OpFreq, byte(keyspace.LFUCounter(e.Access(), now, decay)))
	}
	return s.appendValue(enc, b, e, e.Key())
}

// recordEncoder returns the function that appends a key's file record
// (the caller holds the key's shard lock).
func (s *Server) recordEncoder(now int64) func(b []byte, e *keyspace.Entry) []byte {
	mode, decay := s.accessMode(), s.cfg.LFUDecayTime()
	return func(b []byte, e *keyspace.Entry) []byte {
		enc := s.encoder()
		b = s.appendRecord(enc, b, e, mode, now, decay)
		s.rdb.encoders.Put(enc)
		return b
	}
}

// loadRDBData loads a file's contents into the keyspace. Keys whose time
// has passed are skipped, as a master does; a key already present is an
// error unless merge.
func (s *Server) loadRDBData(data []byte, merge bool) error {
	x := &Ctx{s: s, c: &Client{s: s}, DB: s.ks.DB(0), Now: s.clock.UnixMilli()}
	mode := s.accessMode()
	loaded, expired := int64(0), int64(0)
	err := persistence.Load(data, s.cfg.RDBChecksum(), persistence.Handler{
		SelectDB: func(db int) error {
			if db >= s.ks.Len() {
				return fmt.Errorf("data file was created with a server configured to handle more than %d databases", s.ks.Len())
			}
			x.DB = s.ks.DB(db)
			return nil
		},
		Function: func(code []byte) error {
			// The library keeps its code; data is the mapped file.
			_, err := s.scripts.LoadLibrary(bytes.Clone(code), merge)
			return err
		},
		Key: func(r *persistence.Record) error {
			if r.ExpireAt != -1 && r.ExpireAt < x.Now {
				expired++
				return nil
			}
			e, found := x.DB.Lookup(r.Key, x.Now, false)
			if found {
				if !merge {
					return fmt.Errorf("duplicated key '%s' in DB %d", r.Key, x.DB.ID())
				}
				x.DB.DeleteEntry(&e) // e is now the key's vacancy
			}
			expireAt := max(r.ExpireAt, 0)
			if r.Value.Type == persistence.TypeString {
				// Most keys: one lookup, the value stored straight into it.
				x.DB.Put(&e, r.Key, keyspace.TypeString, stringEncoding(r.Value.Str), r.Value.Str, expireAt, x.Now)
			} else {
				if err := x.storeValue(r.Key, &r.Value); err != nil {
					return err
				}
				e, _ = x.DB.Lookup(r.Key, x.Now, false)
				if expireAt != 0 {
					x.DB.SetExpire(&e, expireAt, x.Now)
				}
			}
			x.setAccess(&e, mode, r.Freq, r.Idle)
			loaded++
			return nil
		},
	})
	s.rdb.loadedKeys.Store(loaded)
	s.rdb.expiredLoaded.Store(expired)
	return err
}

// setAccess gives a restored or loaded key the access clock it came with,
// as objectSetLRUOrLFU does: the LFU counter under an LFU policy, else the
// LRU idle time.
func (x *Ctx) setAccess(e *keyspace.Entry, mode accessMode, freq int, idle int64) {
	switch {
	case mode == accessLFU && freq >= 0:
		x.DB.SetAccess(e, keyspace.LFUAccess(int64(freq), x.Now))
	case mode != accessLFU && idle >= 0:
		x.DB.SetAccess(e, (keyspace.LRUClock(x.Now)-uint32(idle))&(1<<24-1))
	}
}

var errDuplicate = errors.New("duplicate elements")

// storeValue stores a decoded value at key, which does not exist, building
// it as the commands do, so it takes the encoding Redis gives it under the
// configured limits. Duplicate members are an error (Redis reports them as
// corruption).
func (x *Ctx) storeValue(key []byte, v *persistence.Value) error {
	switch v.Type {
	case persistence.TypeString:
		e, _ := x.lookupWrite(key)
		x.DB.Put(&e, key, keyspace.TypeString, stringEncoding(v.Str), v.Str, 0, x.Now)
	case persistence.TypeList:
		var l listEdit
		x.editList(key, &l)
		for _, el := range v.Elems {
			l.push(false, el)
		}
		l.commit("")
	case persistence.TypeSet:
		var set setEdit
		x.editSet(key, &set)
		for _, m := range v.Elems {
			if !set.add(m) {
				return errDuplicate
			}
		}
		set.commit("")
	case persistence.TypeZSet:
		var z zsetEdit
		x.editZSet(key, &z)
		for i, m := range v.Elems {
			if _, dup := z.score(m); dup {
				return errDuplicate
			}
			z.add(m, v.Scores[i])
		}
		z.commit("")
	case persistence.TypeHash:
		var h hashEdit
		x.editHash(key, &h)
		for i := 0; i < len(v.Elems); i += 2 {
			if !h.set(v.Elems[i], v.Elems[i+1]) {
				return errDuplicate
			}
		}
		h.commit("")
	case persistence.TypeStream:
		x.storeStream(key, v.Stream)
	}
	return nil
}
