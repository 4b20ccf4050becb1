package server

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/persistence"
	"github.com/keyhive/keyhive/values"
)

// rdbState is the value encoding's state: the encoders kept for reuse and
// what the last load of an RDB file counted (INFO persistence).
type rdbState struct {
	loadedKeys    atomic.Int64
	expiredLoaded atomic.Int64
	encoders      sync.Pool
}

// accessMode is what files record of each key's access clock under the
// configured maxmemory policy.
func (s *Server) accessMode() values.AccessMode {
	p := s.cfg.MaxMemoryPolicy()
	switch {
	case strings.Contains(p, "lfu"):
		return values.AccessLFU
	case strings.Contains(p, "lru"):
		return values.AccessLRU
	}
	return values.AccessNone
}

func (s *Server) encoder() *persistence.Encoder {
	enc, _ := s.rdb.encoders.Get().(*persistence.Encoder)
	if enc == nil {
		enc = &persistence.Encoder{}
	}
	enc.Compress = s.cfg.RDBCompression()
	return enc
}

// recordEncoder returns the function that appends a key's file record
// (the caller holds the key's shard lock).
func (s *Server) recordEncoder(now int64) func(b []byte, e *keyspace.Entry) []byte {
	mode, decay := s.accessMode(), s.cfg.LFUDecayTime()
	return func(b []byte, e *keyspace.Entry) []byte {
		enc := s.encoder()
		b = values.AppendRecord(enc, b, e, mode, now, decay, s.cfg)
		s.rdb.encoders.Put(enc)
		return b
	}
}

// loadRDBData loads a file's contents into the keyspace. Keys whose time
// has passed are skipped, as a master does; a key already present is an
// error unless merge.
func (s *Server) loadRDBData(data []byte, merge bool) error {
	env := values.Env{Limits: s.cfg, DB: s.ks.DB(0), Now: s.clock.UnixMilli(), Scratch: &values.Scratch{}}
	mode := s.accessMode()
	loaded, expired := int64(0), int64(0)
	err := persistence.Load(data, s.cfg.RDBChecksum(), persistence.Handler{
		SelectDB: func(db int) error {
			if db >= s.ks.Len() {
				return fmt.Errorf("data file was created with a server configured to handle more than %d databases", s.ks.Len())
			}
			env.DB = s.ks.DB(db)
			return nil
		},
		Function: func(code []byte) error {
			// The library keeps its code; data is the mapped file.
			_, err := s.scripts.LoadLibrary(bytes.Clone(code), merge)
			return err
		},
		Key: func(r *persistence.Record) error {
			if r.ExpireAt != -1 && r.ExpireAt < env.Now {
				expired++
				return nil
			}
			e, found := env.DB.Lookup(r.Key, env.Now, false)
			if found {
				if !merge {
					return fmt.Errorf("duplicated key '%s' in DB %d", r.Key, env.DB.ID())
				}
				env.DB.DeleteEntry(&e) // e is now the key's vacancy
			}
			if err := values.Restore(env, e, r.Key, &r.Value, max(r.ExpireAt, 0), mode, r.Freq, r.Idle); err != nil {
				return err
			}
			loaded++
			return nil
		},
	})
	s.rdb.loadedKeys.Store(loaded)
	s.rdb.expiredLoaded.Store(expired)
	return err
}
