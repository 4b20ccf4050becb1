package values

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/keyhive/keyhive/internal/jsondoc"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/persistence"
	"github.com/keyhive/keyhive/resp"
)

// Files: what a snapshot, an AOF base or a DUMP payload holds of a key, and
// how a file's keys come back. Package durability decides when files are
// written and read; this is what goes in them.

// FileConfig is what writing and loading files reads of the configuration
// (*config.Config has it).
type FileConfig interface {
	Limits
	MaxMemoryPolicy() string
	LFUDecayTime() int
	RDBCompression() bool
	RDBChecksum() bool
}

// AccessModeOf is what files record of each key's access clock under a
// maxmemory policy.
func AccessModeOf(policy string) AccessMode {
	switch {
	case strings.Contains(policy, "lrfu"):
		return AccessLRFU
	case strings.Contains(policy, "lfu"):
		return AccessLFU
	case strings.Contains(policy, "lru"):
		return AccessLRU
	}
	return AccessNone
}

var encoders sync.Pool

// NewEncoder returns an encoder from a shared pool, compressing strings
// when compress is set (rdbcompression); ReleaseEncoder gives it back.
func NewEncoder(compress bool) *persistence.Encoder {
	enc, _ := encoders.Get().(*persistence.Encoder)
	if enc == nil {
		enc = &persistence.Encoder{}
	}
	enc.Compress = compress
	return enc
}

// ReleaseEncoder returns an encoder from NewEncoder to the pool.
func ReleaseEncoder(enc *persistence.Encoder) { encoders.Put(enc) }

// RecordEncoder returns the function that appends a key's RDB record
// (expire time, access clock, type, key, value) as the configuration says
// at now; it runs under the key's shard lock.
func RecordEncoder(cfg FileConfig, now int64) func(b []byte, e *keyspace.Entry) []byte {
	mode, decay, compress := AccessModeOf(cfg.MaxMemoryPolicy()), cfg.LFUDecayTime(), cfg.RDBCompression()
	return func(b []byte, e *keyspace.Entry) []byte {
		enc := NewEncoder(compress)
		b = AppendRecord(enc, b, e, mode, now, decay, cfg)
		ReleaseEncoder(enc)
		return b
	}
}

// rebuildItems is how many elements one rebuilding command carries, as
// Redis's AOF rewrite puts 64 in each.
const rebuildItems = 64

// RebuildEncoder returns the function that appends the commands that
// rebuild a key (an AOF base without the RDB preamble), nothing for a key
// expired at now.
func RebuildEncoder(now int64) func(b []byte, e *keyspace.Entry) []byte {
	return func(b []byte, e *keyspace.Entry) []byte {
		if at := e.ExpireAt(); at != 0 && at <= now {
			return b
		}
		return AppendRebuild(b, e)
	}
}

// AppendRebuild appends the commands that recreate e: SET, RPUSH, SADD,
// ZADD or HMSET in batches, a stream's commands, then PEXPIREAT for a TTL,
// as Redis's rewrite writes them, and BLESS SET for a key protected from
// eviction.
func AppendRebuild(b []byte, e *keyspace.Entry) []byte {
	key := e.Key()
	var batch [][]byte
	flush := func(verb string) {
		if len(batch) > 0 {
			b = resp.AppendCommand(b, append([][]byte{[]byte(verb), key}, batch...))
			batch = batch[:0]
		}
	}
	add := func(verb string, items ...[]byte) {
		batch = append(batch, items...)
		if len(batch) >= rebuildItems*len(items) {
			flush(verb)
		}
	}
	switch e.Type() {
	case keyspace.TypeString:
		b = resp.AppendCommand(b, [][]byte{[]byte("SET"), key, e.Value()})
	case keyspace.TypeList:
		ViewList(e).Each(0, false, func(v []byte) bool {
			add("RPUSH", v)
			return true
		})
		flush("RPUSH")
	case keyspace.TypeSet:
		set := ViewSet(e)
		set.Each(func(m []byte) { add("SADD", m) })
		flush("SADD")
		if set.HasTTLs() {
			// Each member's time after the members, as hash fields'.
			set.Obj.ttl.each(func(m []byte, at int64) {
				b = resp.AppendCommand(b, [][]byte{[]byte("SPEXPIREAT"), key, strconv.AppendInt(nil, at, 10), []byte("MEMBERS"), []byte("1"), m})
			})
		}
	case keyspace.TypeZSet:
		z := ViewZSet(e)
		z.Each(0, z.Len(), false, func(m []byte, score float64) {
			add("ZADD", resp.AppendDouble(nil, score), m)
		})
		flush("ZADD")
	case keyspace.TypeHash:
		h := ViewHash(e)
		if h.MinExpire() == 0 {
			h.Each(func(f, v []byte) { add("HMSET", f, v) })
			flush("HMSET")
			break
		}
		// A field with a TTL is set on its own, as Redis 7.4 rewrites it.
		h.EachTTL(func(f, v []byte, at int64) {
			b = resp.AppendCommand(b, [][]byte{[]byte("HMSET"), key, f, v})
			if at != 0 {
				b = resp.AppendCommand(b, [][]byte{[]byte("HPEXPIREAT"), key, strconv.AppendInt(nil, at, 10), []byte("FIELDS"), []byte("1"), f})
			}
		})
	case keyspace.TypeStream:
		b = AppendStreamRebuild(b, key, EntryStream(e))
	case keyspace.TypeJSON:
		b = resp.AppendCommand(b, [][]byte{[]byte("JSON.SET"), key, []byte("$"), jsondoc.AppendJSON(nil, e.Value(), 0, nil)})
	case keyspace.TypeVectorSet, keyspace.TypeArray:
		// RESTORE, not VADDs: a REDUCE set's inputs are gone, and the
		// graph and its generator come back exactly; nor ARMSETs: an
		// array's insert cursor has no command that sets it on a
		// missing key.
		enc := NewEncoder(false)
		payload := persistence.AppendDumpFooter(AppendValue(enc, nil, e, nil, nil))
		ReleaseEncoder(enc)
		b = resp.AppendCommand(b, [][]byte{[]byte("RESTORE"), key, []byte("0"), payload})
	default:
		if IsProb(e.Type()) {
			// No command rebuilds a sketch's counters: RESTORE its bytes.
			enc := NewEncoder(false)
			payload := persistence.AppendDumpFooter(AppendValue(enc, nil, e, nil, nil))
			ReleaseEncoder(enc)
			b = resp.AppendCommand(b, [][]byte{[]byte("RESTORE"), key, []byte("0"), payload})
		}
	}
	if at := e.ExpireAt(); at != 0 {
		b = resp.AppendCommand(b, [][]byte{[]byte("PEXPIREAT"), key, strconv.AppendInt(nil, at, 10)})
	}
	if e.Blessed() {
		b = resp.AppendCommand(b, [][]byte{[]byte("BLESS"), []byte("SET"), key, []byte("NO-EVICT")})
	}
	return b
}

// RDBLoad says how LoadRDB treats a file's contents.
type RDBLoad struct {
	// Merge lets a key in the file replace one present (DEBUG RELOAD
	// MERGE); else a duplicate is an error.
	Merge bool
	// KeepExpired loads the keys whose time has passed, as a replica loads
	// its master's data set (the master's DELs remove them) and an AOF's
	// base does (the commands after it may use them; see
	// keyspace.Loading); else they are skipped, as a master does, and
	// Expired (if set) receives each.
	KeepExpired bool
	Expired     func(db int, key []byte)
	// Function loads a function library the file holds (its code points
	// into the file: the callee copies what it keeps); Aux gets its aux
	// fields (an error stops the load).
	Function func(code []byte) error
	Aux      func(name, value []byte) error
}

// LoadRDB loads an RDB file's contents into ks at now, as how says. It
// reports the keys loaded, those skipped as expired, and where the RDB
// file ends in data (an old-style AOF goes on with commands).
func LoadRDB(data []byte, cfg FileConfig, ks *keyspace.Keyspace, now int64, how RDBLoad) (loaded, expired int64, end int, err error) {
	env := &Env{Limits: cfg, DB: ks.DB(0), Now: now, Scratch: &Scratch{}}
	mode := AccessModeOf(cfg.MaxMemoryPolicy())
	keepExpired := how.KeepExpired || ks.Loading.Load()
	end, err = persistence.LoadPrefix(data, cfg.RDBChecksum(), persistence.Handler{
		SelectDB: func(db int) error {
			if db >= ks.Len() {
				return fmt.Errorf("data file was created with a server configured to handle more than %d databases", ks.Len())
			}
			env.DB = ks.DB(db)
			return nil
		},
		Function: how.Function,
		Aux: func(name, value []byte) error {
			if string(name) == BlessAux {
				if e, found := env.DB.Lookup(value, env.Now, false); found {
					env.DB.SetBlessed(&e, true)
				}
				return nil
			}
			if how.Aux != nil {
				return how.Aux(name, value)
			}
			return nil
		},
		Key: func(r *persistence.Record) error {
			if r.ExpireAt != -1 && r.ExpireAt < env.Now && !keepExpired {
				expired++
				if how.Expired != nil {
					how.Expired(env.DB.ID(), r.Key)
				}
				return nil
			}
			e, found := env.DB.Lookup(r.Key, env.Now, false)
			if found {
				if !how.Merge {
					return fmt.Errorf("duplicated key '%s' in DB %d", r.Key, env.DB.ID())
				}
				env.DB.DeleteEntry(&e) // e is now the key's vacancy
			}
			if err := Restore(env, e, r.Key, &r.Value, max(r.ExpireAt, 0), mode, r.Freq, r.Idle); err != nil {
				return err
			}
			loaded++
			return nil
		},
	})
	return loaded, expired, end, err
}
