package durability

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/keyhive/keyhive/internal/osmem"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/namespace"
	"github.com/keyhive/keyhive/persistence"
	"github.com/keyhive/keyhive/values"
)

// Saver writes snapshots of the data set to dbfilename (SAVE, BGSAVE, save
// points) and loads them, and keeps the state INFO persistence reports.
type Saver struct {
	h   *Host
	aof *AOF

	bgsaving      atomic.Bool
	scheduled     atomic.Bool  // BGSAVE SCHEDULE: start when possible
	lastSave      atomic.Int64 // Unix seconds of the last successful save
	lastBgsaveOK  atomic.Bool
	lastBgsaveSec atomic.Int64
	bgsaveStart   atomic.Int64 // Unix ms
	lastTry       atomic.Int64 // Unix ms of the last background save attempt
	saves         atomic.Int64
	peakExtra     atomic.Int64 // bytes of records kept ahead of the last BGSAVE
	loadedKeys    atomic.Int64 // keys the last RDB load stored
	loadExpired   atomic.Int64 // and those it skipped as expired
	bgDone        sync.WaitGroup
	tempSeq       atomic.Int64
	// aborts counts Abort calls: a background save begun before the latest
	// one does not replace the file. renameMu orders its last step, the
	// rename, against Abort.
	aborts   atomic.Int64
	renameMu sync.Mutex
	// interrupt is closed by Abort to cut the running save's key delay
	// short; the save's fate is still decided by aborts.
	interrupt atomic.Pointer[chan struct{}]
}

// errSaveAborted ends a background save that Abort overtook.
var errSaveAborted = errors.New("aborted (FLUSHALL or shutdown)")

// Abort stops a running background save from replacing the file (FLUSHALL
// and shutdown, as Redis kills its save child): once it returns, the save's
// data never reaches dbfilename.
func (sv *Saver) Abort() {
	sv.renameMu.Lock()
	sv.aborts.Add(1)
	sv.renameMu.Unlock()
	if ch := sv.interrupt.Swap(nil); ch != nil {
		close(*ch)
	}
}

// SaverStatus is the saver's state as INFO persistence reports it.
type SaverStatus struct {
	InProgress bool
	LastSave   int64 // Unix seconds of the last successful save
	LastOK     bool  // the last background save succeeded
	LastSec    int64 // how long the last background save took (-1: none)
	CurrentSec int64 // how long the running one has taken (-1: none)
	Saves      int64
	PeakExtra  int64 // bytes of records kept ahead of the last background save
	// LoadedKeys and LoadExpired are the keys the last RDB load stored and
	// skipped as expired.
	LoadedKeys, LoadExpired int64
}

// Status returns the saver's state.
func (sv *Saver) Status() SaverStatus {
	st := SaverStatus{
		InProgress:  sv.bgsaving.Load(),
		LastSave:    sv.lastSave.Load(),
		LastOK:      sv.lastBgsaveOK.Load(),
		LastSec:     sv.lastBgsaveSec.Load(),
		CurrentSec:  -1,
		Saves:       sv.saves.Load(),
		PeakExtra:   sv.peakExtra.Load(),
		LoadedKeys:  sv.loadedKeys.Load(),
		LoadExpired: sv.loadExpired.Load(),
	}
	if st.InProgress {
		st.CurrentSec = (time.Now().UnixMilli() - sv.bgsaveStart.Load()) / 1000
	}
	return st
}

// InProgress reports whether a background save is running.
func (sv *Saver) InProgress() bool { return sv.bgsaving.Load() }

// LastSave returns the Unix time of the last successful save (LASTSAVE).
func (sv *Saver) LastSave() int64 { return sv.lastSave.Load() }

// Schedule makes the cron start a background save as soon as none runs
// (BGSAVE SCHEDULE, BGSAVE in a transaction).
func (sv *Saver) Schedule() { sv.scheduled.Store(true) }

// Wait waits for the background save in progress, if any.
func (sv *Saver) Wait() { sv.bgDone.Wait() }

func (sv *Saver) path() string {
	return filepath.Join(sv.h.Config.Dir(), sv.h.Config.DBFilename())
}

// writeRDB writes a file: header and AUX fields, the functions, each
// non-empty database's records shard by shard, EOF and the checksum. It
// writes a temporary file, syncs it and renames it over the target, so a
// crash never leaves a partial dump.rdb. A save that aborted reports true
// (aborted, nil for one that cannot be) is not renamed.
func (sv *Saver) writeRDB(path string, aofBase bool, aux []string, functions []byte, keys, expires []int64, shard func(b []byte, db, shard int) []byte, aborted func() bool) (err error) {
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf("temp-%d-%d.rdb", os.Getpid(), sv.tempSeq.Add(1)))
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
	sv.encodeRDB(w, functions, keys, expires, shard, append(aux, "aof-base", strconv.Itoa(boolInt(aofBase)))...)
	if err = w.Flush(); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if aborted != nil {
		sv.renameMu.Lock()
		defer sv.renameMu.Unlock()
		if aborted() {
			return errSaveAborted
		}
	}
	return os.Rename(tmp, path)
}

// encodeRDB writes an RDB file to w: header and AUX fields (aux: more
// name, value pairs), the functions, each non-empty database's records
// shard by shard, EOF and the checksum. A write error sticks in w.
func (sv *Saver) encodeRDB(w *bufio.Writer, functions []byte, keys, expires []int64, shard func(b []byte, db, shard int) []byte, aux ...string) {
	checksum := sv.h.Config.RDBChecksum()
	var crc uint64
	write := func(p []byte) {
		if checksum {
			crc = persistence.CRC64(crc, p)
		}
		w.Write(p) // a write error sticks in w and is reported by Flush
	}
	enc := persistence.Encoder{Compress: sv.h.Config.RDBCompression()}
	version := persistence.Version
	if sv.h.Keyspace.HeldListpackSets() {
		version = persistence.Version74 // Redis 7.2's set type
	}
	for i := range sv.h.Keyspace.Len() {
		if sv.h.Keyspace.DB(i).Subexpiry() > 0 {
			version = persistence.Version74 // Redis 7.4's hash types
		}
	}
	fields := append([]string{
		"redis-ver", sv.h.Version,
		"redis-bits", "64",
		"ctime", strconv.FormatInt(time.Now().Unix(), 10),
		"used-mem", strconv.FormatInt(sv.h.UsedMemory(), 10)}, aux...)
	write(enc.AppendHeaderVersion(nil, version, fields...))
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
	// A big value's record, garbage now: given back rather than counted in
	// used memory until the next collection.
	size := cap(records)
	records = nil
	sv.h.DroppedGarbage(int64(size))
	write([]byte{persistence.OpEOF})
	w.Write(binary.LittleEndian.AppendUint64(nil, crc))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Save writes the data set in the foreground: the caller holds the
// exclusive lock, so shards are serialized as they are. A background save
// may be running (DEBUG RELOAD saves beside one, as Redis's does): each
// writes its own temp file. SAVE refuses itself while one runs.
func (sv *Saver) Save(now int64) error {
	ks := sv.h.Keyspace
	n := ks.Len()
	keys, expires := make([]int64, n), make([]int64, n)
	for i := range n {
		keys[i], expires[i] = ks.DB(i).Len(), ks.DB(i).Volatile()
	}
	functions := sv.h.Functions(nil)
	encode := values.RecordEncoder(sv.h.Config, now)
	dirty := sv.h.Dirty.Load()
	var aux []string
	// The caller holds the exclusive lock: a replica applying a command
	// waits for it holding Instant, and then the history is left out.
	if sv.h.Instant.TryLock() {
		aux = sv.h.ReplicationAux()
		sv.h.Instant.Unlock()
	}
	aux = append(aux, schemaAux(sv.h.SchemaDefs())...)
	err := sv.writeRDB(sv.path(), false, aux, functions, keys, expires, func(b []byte, db, shard int) []byte {
		ks.DB(db).EachEntry(shard, func(e *keyspace.Entry) { b = encode(b, e) })
		return b
	}, nil)
	if err != nil {
		sv.h.Log.Printf("Error saving DB on disk: %v", err)
		return err
	}
	sv.saved(dirty)
	sv.h.Log.Printf("DB saved on disk")
	return nil
}

// saved records a successful save of the data set as it was when dirty
// changes had been made.
func (sv *Saver) saved(dirty int64) {
	sv.h.Dirty.Add(-dirty)
	sv.lastSave.Store(time.Now().Unix())
	sv.saves.Add(1)
}

// BGSave starts a background save and reports whether it started. The
// caller holds no keyspace lock: the snapshot instant takes the exclusive
// lock for a moment.
func (sv *Saver) BGSave() bool {
	if !sv.bgsaving.CompareAndSwap(false, true) {
		return false
	}
	sv.scheduled.Store(false)
	start := time.Now()
	sv.bgsaveStart.Store(start.UnixMilli())
	sv.lastTry.Store(start.UnixMilli())
	var functions []byte
	var schema []namespace.Def
	var dirty int64
	var aux []string
	var gen int64 // Abort calls before the instant: a FLUSHALL after it aborts
	encode := values.RecordEncoder(sv.h.Config, sv.h.Clock.UnixMilli())
	sv.h.Instant.Lock()
	snap := sv.h.Keyspace.BeginSnapshot(encode, func() {
		gen = sv.aborts.Load()
		functions = sv.h.Functions(nil)
		schema = sv.h.SchemaDefs()
		dirty = sv.h.Dirty.Load()
		aux = sv.h.ReplicationAux()
	})
	sv.h.Instant.Unlock()
	sv.h.snapshotTaken(start)
	snap.KeyDelay = time.Duration(sv.h.Config.RDBKeySaveDelay()) * time.Microsecond
	interrupt := make(chan struct{})
	snap.Interrupt = interrupt
	sv.interrupt.Store(&interrupt)
	sv.h.Log.Printf("Background saving started")
	aborted := func() bool { return sv.aborts.Load() != gen }
	shard := func(b []byte, db, i int) []byte {
		if aborted() {
			return b // End clears what is left
		}
		return snap.Shard(b, db, i)
	}
	sv.bgDone.Add(1)
	go func() {
		defer sv.bgDone.Done()
		release := saverThread(sv.h.Config)
		err := sv.writeRDB(sv.path(), false, append(aux, schemaAux(schema)...), functions, snap.Keys, snap.Expires, shard, aborted)
		release()
		snap.End()
		sv.peakExtra.Store(snap.PeakExtra())
		sv.h.DroppedGarbage(snap.PeakExtra()) // the early records of big values changed during the save
		sv.lastBgsaveSec.Store(int64(time.Since(start).Seconds()))
		switch {
		case errors.Is(err, errSaveAborted):
			// Neither a success nor a failure, as Redis's killed child.
			sv.h.Log.Printf("Background saving %v", err)
		case err != nil:
			sv.h.Log.Printf("Background saving error: %v", err)
			sv.lastBgsaveOK.Store(false)
		default:
			sv.saved(dirty)
			sv.lastBgsaveOK.Store(true)
			sv.h.Log.Printf("Background saving terminated with success")
		}
		sv.bgsaving.Store(false)
	}()
	return true
}

// Cron starts a background save when a save point is reached (at least
// changes writes in seconds), or one was scheduled, as serverCron does. A
// failed save is retried after 5 seconds.
func (sv *Saver) Cron() {
	if sv.bgsaving.Load() || sv.aof.rewriting.Load() { // one snapshot at a time
		return
	}
	if sv.scheduled.Load() {
		sv.BGSave()
		return
	}
	now := time.Now()
	dirty := sv.h.Dirty.Load()
	for _, p := range sv.h.Config.Save() {
		if dirty >= p[1] && now.Unix()-sv.lastSave.Load() > p[0] &&
			(sv.lastBgsaveOK.Load() || now.UnixMilli()-sv.lastTry.Load() > 5000) {
			sv.h.Log.Printf("%d changes in %d seconds. Saving...", p[1], p[0])
			sv.BGSave()
			return
		}
	}
}

// Load loads dbfilename at start-up, handing its AUX fields to LoadedAux.
// A missing file is an empty data set; a corrupt or truncated one is an
// error naming the file and offset.
// A master skips the keys whose time passed and hands each to
// LoadExpired (its replicas get their DELs); a replica loads them.
func (sv *Saver) Load() error {
	return sv.loadFile(sv.path(), true, values.RDBLoad{KeepExpired: sv.h.IsReplica(), Expired: sv.h.LoadExpired}, sv.h.LoadedAux)
}

// Reload is DEBUG RELOAD's load; with merge, a key in the file replaces
// the key present.
func (sv *Saver) Reload(merge bool) error {
	return sv.loadFile(sv.path(), false, values.RDBLoad{Merge: merge, KeepExpired: sv.h.IsReplica()}, nil)
}

// LoadFromMaster loads the RDB file a replica received from its master,
// into an empty data set, and makes it the dump file (unless the server
// keeps no files: config.Persistent); aux receives its AUX fields.
func (sv *Saver) LoadFromMaster(path string, aux func(name, value []byte)) error {
	if err := sv.loadFile(path, false, values.RDBLoad{KeepExpired: true}, aux); err != nil || !sv.h.Config.Persistent() {
		return err
	}
	return os.Rename(path, sv.path())
}

func (sv *Saver) loadFile(path string, missingOK bool, how values.RDBLoad, aux func(name, value []byte)) error {
	f, err := os.Open(path)
	if missingOK && errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("opening %s: %w", path, err)
	}
	defer f.Close()
	start := time.Now()
	if _, err := sv.load(f, how, aux); err != nil {
		return fmt.Errorf("bad RDB file %s: %w", path, err)
	}
	sv.h.Log.Printf("DB loaded from disk: %.3f seconds", time.Since(start).Seconds())
	return nil
}

// loadRDB loads the RDB file an AOF file starts with (a base, or an
// old-style AOF's preamble) and returns its length: commands may follow.
func (sv *Saver) loadRDB(f *os.File) (int, error) { return sv.load(f, values.RDBLoad{}, nil) }

// load loads the RDB file f holds, or starts with, and returns its length.
func (sv *Saver) load(f *os.File, how values.RDBLoad, aux func(name, value []byte)) (int, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	var data []byte
	if st.Size() > 0 {
		// Mapped, not read: the page cache holds the file, not the heap.
		if data, err = osmem.MapFile(f, int(st.Size())); err != nil {
			return 0, fmt.Errorf("mapping the file: %w", err)
		}
		defer osmem.UnmapFile(data)
	}
	h := sv.h
	how.Function = func(code []byte) error { return h.LoadFunction(code, how.Merge) }
	how.Aux = func(name, value []byte) error {
		if string(name) == schemaAuxField {
			defs, err := unmarshalSchema(value)
			if err != nil {
				return fmt.Errorf("namespace declarations: %w", err)
			}
			h.LoadSchema(defs)
		} else if aux != nil {
			aux(name, value)
		}
		return nil
	}
	loaded, expired, end, err := values.LoadRDB(data, h.Config, h.Keyspace, h.Clock.UnixMilli(), how)
	sv.loadedKeys.Store(loaded)
	sv.loadExpired.Store(expired)
	return end, err
}
