package server

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/keyhive/keyhive/internal/intset"
	"github.com/keyhive/keyhive/internal/zset"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/persistence"
)

// rdbState is the server's snapshotting state, as INFO persistence reports
// it.
type rdbState struct {
	bgsaving      atomic.Bool
	scheduled     atomic.Bool  // BGSAVE SCHEDULE: start when possible
	lastSave      atomic.Int64 // Unix seconds of the last successful save
	lastBgsaveOK  atomic.Bool
	lastBgsaveSec atomic.Int64
	bgsaveStart   atomic.Int64 // Unix ms
	lastTry       atomic.Int64 // Unix ms of the last background save attempt
	saves         atomic.Int64
	peakExtra     atomic.Int64 // bytes of records kept ahead of the last BGSAVE
	loadedKeys    atomic.Int64
	expiredLoaded atomic.Int64
	bgDone        sync.WaitGroup
	encoders      sync.Pool
	tempSeq       atomic.Int64
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

func (s *Server) rdbPath() string { return filepath.Join(s.cfg.Dir(), s.cfg.DBFilename()) }

// writeRDB writes a file: header and AUX fields, the functions, each
// non-empty database's records shard by shard, EOF and the checksum. It
// writes a temporary file, syncs it and renames it over the target, so a
// crash never leaves a partial dump.rdb.
func (s *Server) writeRDB(path string, aofBase bool, functions []byte, keys, expires []int64, shard func(b []byte, db, shard int) []byte) (err error) {
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf("temp-%d-%d.rdb", os.Getpid(), s.rdb.tempSeq.Add(1)))
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("failed opening the temp RDB file %s (in server root dir %s) for saving: %w", filepath.Base(tmp), filepath.Dir(tmp), err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	checksum := s.cfg.RDBChecksum()
	var crc uint64
	write := func(p []byte) {
		if checksum {
			crc = persistence.CRC64(crc, p)
		}
		w.Write(p) // a write error sticks in w and is reported by Flush
	}
	enc := s.encoder()
	defer s.rdb.encoders.Put(enc)
	write(enc.AppendHeader(nil,
		"redis-ver", Version,
		"redis-bits", "64",
		"ctime", strconv.FormatInt(time.Now().Unix(), 10),
		"used-mem", strconv.FormatInt(s.usedMemory(monoNow(), 0), 10),
		"aof-base", strconv.Itoa(boolInt(aofBase))))
	write(functions)
	var records []byte
	for db := range keys {
		if keys[db] == 0 {
			continue
		}
		write(persistence.AppendSelectDB(nil, db, keys[db], expires[db]))
		for sh := range keyspace.Shards {
			records = shard(records[:0], db, sh)
			write(records)
		}
	}
	if cap(records) >= bigReply {
		// A big value's record, garbage now: given back rather than counted
		// in used memory until the next collection.
		records = nil
		s.returnHeap()
	}
	write([]byte{persistence.OpEOF})
	w.Write(binary.LittleEndian.AppendUint64(nil, crc))
	if err = w.Flush(); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// saveLocked is SAVE: the caller holds the exclusive lock, so shards are
// serialized as they are.
func (s *Server) saveLocked(now int64) error {
	if s.rdb.bgsaving.Load() {
		return errors.New("ERR Background save already in progress")
	}
	n := s.ks.Len()
	keys, expires := make([]int64, n), make([]int64, n)
	for i := range n {
		keys[i], expires[i] = s.ks.DB(i).Len(), s.ks.DB(i).Volatile()
	}
	enc := s.encoder()
	functions := s.scripts.AppendFunctions(nil, enc)
	s.rdb.encoders.Put(enc)
	encode := s.recordEncoder(now)
	dirty := s.stats.dirty.Load()
	err := s.writeRDB(s.rdbPath(), false, functions, keys, expires, func(b []byte, db, shard int) []byte {
		s.ks.DB(db).EachEntry(shard, func(e *keyspace.Entry) { b = encode(b, e) })
		return b
	})
	if err != nil {
		s.log.Printf("Error saving DB on disk: %v", err)
		return err
	}
	s.saved(dirty)
	s.log.Printf("DB saved on disk")
	return nil
}

// saved records a successful save of the data set as it was when dirty
// changes had been made.
func (s *Server) saved(dirty int64) {
	s.stats.dirty.Add(-dirty)
	s.rdb.lastSave.Store(time.Now().Unix())
	s.rdb.saves.Add(1)
}

// bgsave starts a background save and reports whether it started. The
// caller holds no keyspace lock: the snapshot instant takes the exclusive
// lock for a moment.
func (s *Server) bgsave() bool {
	if !s.rdb.bgsaving.CompareAndSwap(false, true) {
		return false
	}
	s.rdb.scheduled.Store(false)
	start := time.Now()
	s.rdb.bgsaveStart.Store(start.UnixMilli())
	s.rdb.lastTry.Store(start.UnixMilli())
	var functions []byte
	var dirty int64
	encode := s.recordEncoder(s.clock.UnixMilli())
	snap := s.ks.BeginSnapshot(encode, func() {
		enc := s.encoder()
		functions = s.scripts.AppendFunctions(nil, enc)
		s.rdb.encoders.Put(enc)
		dirty = s.stats.dirty.Load()
	})
	snap.KeyDelay = time.Duration(s.cfg.RDBKeySaveDelay()) * time.Microsecond
	s.log.Printf("Background saving started")
	s.rdb.bgDone.Add(1)
	go func() {
		defer s.rdb.bgDone.Done()
		release := s.saverThread()
		err := s.writeRDB(s.rdbPath(), false, functions, snap.Keys, snap.Expires, snap.Shard)
		release()
		snap.End()
		s.rdb.peakExtra.Store(snap.PeakExtra())
		if snap.PeakExtra() >= bigReply {
			s.returnHeap() // the early records of big values changed during the save
		}
		s.rdb.lastBgsaveSec.Store(int64(time.Since(start).Seconds()))
		if err != nil {
			s.log.Printf("Background saving error: %v", err)
			s.rdb.lastBgsaveOK.Store(false)
		} else {
			s.saved(dirty)
			s.rdb.lastBgsaveOK.Store(true)
			s.log.Printf("Background saving terminated with success")
		}
		s.rdb.bgsaving.Store(false)
	}()
	return true
}

// saveCron starts a background save when a save point is reached (at least
// changes writes in seconds), or one was scheduled, as serverCron does. A
// failed save is retried after 5 seconds.
func (s *Server) saveCron() {
	if s.rdb.bgsaving.Load() || s.aof.rewriting.Load() { // one snapshot at a time
		return
	}
	if s.rdb.scheduled.Load() {
		s.bgsave()
		return
	}
	now := time.Now()
	dirty := s.stats.dirty.Load()
	for _, p := range s.cfg.Save() {
		if dirty >= p[1] && now.Unix()-s.rdb.lastSave.Load() > p[0] &&
			(s.rdb.lastBgsaveOK.Load() || now.UnixMilli()-s.rdb.lastTry.Load() > 5000) {
			s.log.Printf("%d changes in %d seconds. Saving...", p[1], p[0])
			s.bgsave()
			return
		}
	}
}

// loadRDB loads dbfilename at start-up. A missing file is an empty data
// set; a corrupt or truncated one is an error naming the file and offset.
func (s *Server) loadRDB() error { return s.loadRDBFile(s.rdbPath(), true, false) }

// reloadRDB is DEBUG RELOAD's load; with merge, a key in the file replaces
// the key present.
func (s *Server) reloadRDB(merge bool) error { return s.loadRDBFile(s.rdbPath(), false, merge) }

// loadRDBPath loads an RDB file that must exist (an AOF's base).
func (s *Server) loadRDBPath(path string, merge bool) error { return s.loadRDBFile(path, false, merge) }

func (s *Server) loadRDBFile(path string, missingOK, merge bool) error {
	f, err := os.Open(path)
	if missingOK && errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("opening %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	start := time.Now()
	var data []byte
	if st.Size() > 0 {
		// Mapped, not read: the page cache holds the file, not the heap.
		if data, err = syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_PRIVATE); err != nil {
			return fmt.Errorf("mapping %s: %w", path, err)
		}
		defer syscall.Munmap(data)
	}
	if err := s.loadRDBData(data, merge); err != nil {
		return fmt.Errorf("bad RDB file %s: %w", path, err)
	}
	s.log.Printf("DB loaded from disk: %.3f seconds", time.Since(start).Seconds())
	return nil
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

// writePersistenceInfo writes INFO persistence's snapshot fields, in
// Redis's order. There is no fork, so there is no copy-on-write to report.
func (s *Server) writePersistenceInfo(b *strings.Builder) {
	field(b, "loading", 0)
	field(b, "async_loading", 0)
	field(b, "current_cow_peak", 0)
	field(b, "current_cow_size", 0)
	field(b, "current_cow_size_age", 0)
	field(b, "current_fork_perc", "0.00")
	field(b, "current_save_keys_processed", 0)
	field(b, "current_save_keys_total", 0)
	field(b, "rdb_changes_since_last_save", s.stats.dirty.Load())
	bgsaving := s.rdb.bgsaving.Load()
	field(b, "rdb_bgsave_in_progress", boolInt(bgsaving))
	field(b, "rdb_last_save_time", s.rdb.lastSave.Load())
	status := "ok"
	if !s.rdb.lastBgsaveOK.Load() {
		status = "err"
	}
	field(b, "rdb_last_bgsave_status", status)
	field(b, "rdb_last_bgsave_time_sec", s.rdb.lastBgsaveSec.Load())
	current := int64(-1)
	if bgsaving {
		current = (time.Now().UnixMilli() - s.rdb.bgsaveStart.Load()) / 1000
	}
	field(b, "rdb_current_bgsave_time_sec", current)
	field(b, "rdb_saves", s.rdb.saves.Load())
	// The memory a save needs beyond the data: here the records of keys
	// kept ahead of the saver (Redis reports its fork's copy-on-write).
	field(b, "rdb_last_cow_size", s.rdb.peakExtra.Load())
	field(b, "rdb_last_load_keys_expired", s.rdb.expiredLoaded.Load())
	field(b, "rdb_last_load_keys_loaded", s.rdb.loadedKeys.Load())
}
