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

	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/persistence"
	"github.com/keyhive/keyhive/values"
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
