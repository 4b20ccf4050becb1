package durability

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/keyhive/keyhive/persistence"
	"github.com/keyhive/keyhive/resp"
)

// AOF is the append-only file, in Redis 7's multi-part layout
// (persistence/aof.go): dir/appenddirname holds a base snapshot,
// incremental files of the commands written since, and the manifest naming
// them. While it is on, the AOF subscribes to the change stream and appends
// every command to an in-memory buffer; a client writes the buffer to the
// file before its replies go out (and fsyncs it first under appendfsync
// always), so an acknowledged write is in the file; under everysec the cron
// fsyncs once a second. A rewrite (BGREWRITEAOF) switches to a new
// incremental file at a snapshot instant and writes the snapshot as the new
// base (an RDB file under aof-use-rdb-preamble, else commands) while writes
// continue, then swaps the manifest.
type AOF struct {
	h     *Host
	saver *Saver

	on     atomic.Bool // appending
	cancel func()      // ends the subscription to the change stream
	// fed counts the bytes ever buffered, done those written (and synced
	// under always): a client replies once done reaches fed as it was after
	// its command.
	fed, done atomic.Int64
	// synced is the part of fed known to be on disk (fsynced): what
	// WAITAOF waits for.
	synced atomic.Int64

	mu  sync.Mutex // buf, db: fed under the changed keys' locks
	buf []byte
	db  int // database of the last command buffered; -1 before any

	writeMu  sync.Mutex // the files and the manifest
	file     *os.File   // the current incremental file
	fileSize int64      // its size: where a failed write is cut back to
	manifest *persistence.Manifest
	size     atomic.Int64 // bytes in the incremental files and base
	baseSize atomic.Int64
	unsynced atomic.Bool
	syncing  atomic.Bool
	lastSync time.Time

	// rewriteMu orders starting and ending background rewrites: rewriting
	// is true from the start of one until the end of the last one queued
	// after it (enableQueued).
	rewriteMu    sync.Mutex
	rewriting    atomic.Bool
	runningGen   int64 // stops when the running rewrite started
	enableQueued bool
	// stops counts Stop calls, under writeMu: a rewrite started before
	// the latest one is cancelled, and leaves the files as they are.
	stops     atomic.Int64
	scheduled atomic.Bool
	// firstGen is, while the rewrite that turns the AOF on runs, 1 + the
	// stops count it started at (0 otherwise): until its base is written the
	// data set is in no AOF.
	firstGen        atomic.Int64
	rewriteStart    atomic.Int64 // Unix ms
	lastRewriteSec  atomic.Int64
	rewrites        atomic.Int64
	rewriteFailures atomic.Int64
	lastRewriteErr  atomic.Bool
	// lastRewritePeak is the most memory the last rewrite's snapshot held
	// in records of keys kept ahead of it (Redis: its child's copy-on-write).
	lastRewritePeak atomic.Int64
	// lastRewriteFailure (Unix ms) paces automatic rewrites after repeated
	// failures (rewriteLimited).
	lastRewriteFailure atomic.Int64
	writeErr           atomic.Pointer[error] // the last write's error; nil when it succeeded
	rewriteDone        sync.WaitGroup
}

// On reports whether the AOF is being appended to.
func (a *AOF) On() bool { return a.on.Load() }

// Rewriting reports whether a rewrite is running.
func (a *AOF) Rewriting() bool { return a.rewriting.Load() }

// WritingFirst reports whether the rewrite that turns the AOF on is
// running and not cancelled: the data set is in no AOF yet, so a shutdown
// now would lose what only the AOF was to keep.
func (a *AOF) WritingFirst() bool {
	g := a.firstGen.Load()
	return g != 0 && g-1 == a.stops.Load()
}

// Schedule makes the cron start a rewrite as soon as no snapshot runs.
func (a *AOF) Schedule() { a.scheduled.Store(true) }

func (a *AOF) dir() string {
	return filepath.Join(a.h.Config.Dir(), a.h.Config.AppendDirname())
}

func (a *AOF) fileName(seq int64, kind string) string {
	return fmt.Sprintf("%s.%d.%s", a.h.Config.AppendFilename(), seq, kind)
}

func (a *AOF) manifestPath() string {
	return filepath.Join(a.dir(), a.h.Config.AppendFilename()+".manifest")
}

// subscribe starts (nil: stops) taking the change stream's commands.
func (a *AOF) subscribe(on bool) {
	if a.cancel != nil {
		a.cancel()
		a.cancel = nil
	}
	if on {
		a.cancel = a.h.Changes.Subscribe(a)
	}
}

// Start loads the AOF at start-up and opens it for appending, as Redis 7
// does: an old-style AOF (one file, appendfilename in dir) is first moved
// into the AOF directory as the base of a new manifest (upgrade); without
// files it creates a base of the (empty) data set and an incremental file
// (an RDB file is not loaded when appendonly is on). An AOF that cannot be
// loaded is a *LoadError.
func (a *AOF) Start() error {
	m, err := a.readManifest()
	if err != nil {
		return err
	}
	if m, err = a.upgrade(m); err != nil {
		return err
	}
	if m == nil || m.Base == nil && len(m.Incremental) == 0 {
		if err := os.MkdirAll(a.dir(), 0o755); err != nil {
			return loadError(fmt.Sprintf("Can't open or create append-only dir %s: %s", a.h.Config.AppendDirname(), strerror(err)))
		}
		a.manifest = m // its history, if any, goes with the first rewrite
		if err := a.rewrite(true, a.stops.Load(), func() {}); err != nil {
			return err
		}
		a.rewrites.Store(0) // as Redis, the start-up base is not a rewrite
		a.h.Log.Printf("Creating AOF base file %s on server start", a.manifest.Base.Name)
		a.h.Log.Printf("Creating AOF incr file %s on server start", a.manifest.Incremental[0].Name)
		return nil
	}
	if err := a.load(m); err != nil {
		return err
	}
	if err := a.removeOrphans(m); err != nil {
		return err
	}
	// Append to the last incremental file, or start one.
	a.manifest = m
	if n := len(m.Incremental); n > 0 {
		name := m.Incremental[n-1].Name
		f, err := os.OpenFile(filepath.Join(a.dir(), name), os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return loadError(fmt.Sprintf("Can't open the append-only file %s: %s", name, strerror(err)))
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return err
		}
		a.file, a.fileSize = f, st.Size()
		a.h.Log.Printf("Opening AOF incr file %s on server start", name)
	} else {
		_, seq := nextSeqs(m)
		a.writeMu.Lock()
		err := a.switchIncremental(seq, true)
		a.writeMu.Unlock()
		if err != nil {
			return err
		}
		a.h.Log.Printf("Creating AOF incr file %s on server start", a.fileName(seq, "incr.aof"))
	}
	a.on.Store(true)
	a.subscribe(true)
	return nil
}

// LoadError is an AOF that the server cannot start with (or DEBUG LOADAOF
// cannot load): Lines are what Redis logs about it, each a log line at
// warning level.
type LoadError struct{ Lines []string }

func loadError(lines ...string) *LoadError { return &LoadError{Lines: lines} }

func (e *LoadError) Error() string {
	var parts []string
	for _, l := range e.Lines {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ")
}

// LogLines returns the lines to log for e, in order.
func (e *LoadError) LogLines() []string { return e.Lines }

// strerror is err's system error as C's strerror words it ("No such file
// or directory"), for the messages Redis logs.
func strerror(err error) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err.Error()
	}
	msg := errno.Error()
	if msg != "" && msg[0] >= 'a' && msg[0] <= 'z' {
		msg = string(msg[0]-'a'+'A') + msg[1:]
	}
	return msg
}

// readManifest reads the manifest, nil when there is none; a manifest
// Redis refuses is a *LoadError with Redis's lines.
func (a *AOF) readManifest() (*persistence.Manifest, error) {
	f, err := os.Open(a.manifestPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	name := filepath.Join(a.h.Config.AppendDirname(), filepath.Base(a.manifestPath()))
	if err != nil {
		return nil, loadError(fmt.Sprintf("Fatal error: can't open the AOF manifest file %s for reading: %s", name, strerror(err)))
	}
	defer f.Close()
	m, err := persistence.ParseManifest(f)
	var bad *persistence.ManifestError
	if errors.As(err, &bad) {
		lines := []string{"\n*** FATAL AOF MANIFEST FILE ERROR ***\n"}
		if bad.Line > 0 {
			lines = append(lines, fmt.Sprintf("Reading the manifest file, at line %d\n", bad.Line), fmt.Sprintf(">>> '%s'\n", bad.Text))
		}
		return nil, loadError(append(lines, bad.Reason+"\n")...)
	}
	return m, err
}

// upgrade moves an old-style AOF (appendfilename in dir, as Redis before
// 7.0 wrote it, possibly an RDB preamble and commands) into the AOF
// directory as the base of a new manifest, as Redis 7 does at start-up:
// when there is no AOF directory, no manifest listing files, or one listing
// that file alone as its base while it was not moved yet (a crash between
// the manifest and the move). It returns the manifest to load.
func (a *AOF) upgrade(m *persistence.Manifest) (*persistence.Manifest, error) {
	name, dirName := a.h.Config.AppendFilename(), a.h.Config.AppendDirname()
	old := filepath.Join(a.h.Config.Dir(), name)
	if st, err := os.Stat(old); err != nil || !st.Mode().IsRegular() {
		return m, nil
	}
	moved := filepath.Join(a.dir(), name)
	_, err := os.Stat(moved)
	inDir := err == nil
	_, err = os.Stat(a.dir())
	noDir := errors.Is(err, os.ErrNotExist)
	empty := m == nil || m.Base == nil && len(m.Incremental) == 0
	interrupted := m != nil && m.Base != nil && m.Base.Name == name && len(m.Incremental) == 0 && !inDir
	switch {
	case !noDir && !empty && !interrupted:
		return m, nil
	case inDir:
		// The move would replace a file no manifest lists (Redis asserts).
		return nil, loadError(fmt.Sprintf("Can't migrate the old AOF file %s into dir %s: the dir already holds a file of that name", name, dirName))
	}
	if err := os.MkdirAll(a.dir(), 0o755); err != nil {
		return nil, loadError(fmt.Sprintf("Can't open or create append-only dir %s: %s", dirName, strerror(err)))
	}
	up := m.Clone()
	up.Base = &persistence.AOFFile{Name: name, Seq: 1, Type: persistence.AOFBase}
	if err := a.writeManifest(up); err != nil {
		return nil, err
	}
	if err := os.Rename(old, moved); err != nil {
		return nil, loadError(fmt.Sprintf("Error trying to move the old AOF file %s into dir %s: %s", name, dirName, strerror(err)))
	}
	if err := syncDir(a.h.Config.Dir()); err != nil {
		return nil, err
	}
	a.h.Log.Printf("Successfully migrated an old-style AOF file (%s) into the AOF directory (%s).", name, dirName)
	return up, nil
}

func (a *AOF) baseKind() string {
	if a.h.Config.AOFUseRDBPreamble() {
		return "base.rdb"
	}
	return "base.aof"
}

// nextSeqs returns the sequence numbers of the next base and of the next
// incremental file, each one past the last m lists: Redis counts them
// apart (an upgraded AOF has base 1 and no incremental file yet).
func nextSeqs(m *persistence.Manifest) (base, incr int64) {
	base, incr = 1, 1
	if m == nil {
		return base, incr
	}
	if m.Base != nil {
		base = m.Base.Seq + 1
	}
	if n := len(m.Incremental); n > 0 {
		incr = m.Incremental[n-1].Seq + 1
	}
	return base, incr
}

// load loads the base and the incremental files in order, as Redis 7
// does, logging what it logs; a file it cannot load is a *LoadError. Only
// the last file may be truncated (a crash while appending): with
// aof-load-truncated it is cut back to its last whole command, else
// loading fails. Nothing expires while the files load (keyspace Loading),
// as in Redis: a key given a past expire time by the file keeps taking its
// later commands, and expires after.
func (a *AOF) load(m *persistence.Manifest) error {
	start := time.Now()
	files := m.Files()
	sizes := make([]int64, len(files))
	var total int64
	for i, f := range files {
		st, err := os.Stat(filepath.Join(a.dir(), f.Name))
		if err != nil {
			return loadError(fmt.Sprintf("Unable to obtain the AOF file %s length. stat: %s", f.Name, strerror(err)))
		}
		sizes[i] = st.Size()
		total += st.Size()
	}
	a.baseSize.Store(0)
	ks := a.h.Keyspace
	ks.Loading.Store(true)
	defer ks.Loading.Store(false)
	for i, f := range files {
		if sizes[i] == 0 {
			continue // nothing to load, and nothing logged
		}
		began := time.Now()
		path := filepath.Join(a.dir(), f.Name)
		valid, err := a.loadFile(f.Name)
		if errors.Is(err, persistence.ErrTruncated) {
			eof := fmt.Sprintf("Unexpected end of file reading the append only file %s. You can: "+
				"1) Make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. "+
				"2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server.", f.Name)
			if !a.h.Config.AOFLoadTruncated() {
				return loadError(eof)
			}
			a.h.warn("!!! Warning: short read while loading the AOF file %s!!!", f.Name)
			if i < len(files)-1 {
				// Redis cuts the file and then refuses it; cut, it would
				// load next time with the commands after the cut lost.
				return loadError("Fatal error: the truncated file is not the last file")
			}
			a.h.warn("!!! Truncating the AOF %s at offset %d !!!", f.Name, valid)
			if err := os.Truncate(path, valid); err != nil {
				return loadError(fmt.Sprintf("Error truncating the AOF file %s: %s", f.Name, strerror(err)), eof)
			}
			a.h.warn("AOF %s loaded anyway because aof-load-truncated is enabled", f.Name)
			total -= sizes[i] - valid
			sizes[i] = valid
		} else if err != nil {
			return err
		}
		kind := "incr"
		if f.Type == persistence.AOFBase {
			kind = "base"
			a.baseSize.Store(sizes[i])
		}
		a.h.Log.Printf("DB loaded from %s file %s: %.3f seconds", kind, f.Name, time.Since(began).Seconds())
	}
	a.size.Store(total)
	a.h.Log.Printf("DB loaded from append only file: %.3f seconds", time.Since(start).Seconds())
	return nil
}

// loadFile loads one file of the AOF: an RDB file if it starts with one
// (a base, or an old-style AOF's preamble), then commands. It returns the
// offset after the last command applied, and persistence.ErrTruncated
// when the file ends inside one.
func (a *AOF) loadFile(name string) (int64, error) {
	f, err := os.Open(filepath.Join(a.dir(), name))
	if err != nil {
		return 0, loadError(fmt.Sprintf("Fatal error: can't open the append log file %s for reading: %s", name, strerror(err)))
	}
	defer f.Close()
	var off int64
	var sig [5]byte
	if n, _ := io.ReadFull(f, sig[:]); n == len(sig) && string(sig[:]) == "REDIS" {
		oldStyle := name == a.h.Config.AppendFilename()
		if oldStyle {
			a.h.Log.Printf("Reading RDB preamble from AOF file...")
		} else {
			a.h.Log.Printf("Reading RDB base file on AOF loading...")
		}
		end, err := a.saver.loadRDB(f)
		if err != nil {
			a.h.warn("%v", err)
			if oldStyle {
				return 0, loadError(fmt.Sprintf("Error reading the RDB preamble of the AOF file %s, AOF loading aborted", name))
			}
			return 0, loadError(fmt.Sprintf("Error reading the RDB base file %s, AOF loading aborted", name))
		}
		if oldStyle {
			a.h.Log.Printf("Reading the remaining AOF tail...")
		}
		off = int64(end)
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return 0, loadError(fmt.Sprintf("Unrecoverable error reading the append only file %s: %s", name, strerror(err)))
	}
	valid, err := a.replay(f, name)
	return off + valid, err
}

// replay runs the commands of one file, from where f is, through the
// host's Replay and returns the length applied: a transaction cut off by
// the end of the file is not applied, and the length stops before it.
func (a *AOF) replay(f io.Reader, name string) (int64, error) {
	apply := a.h.Replay()
	var off, beforeMulti int64
	var multi [][][]byte // queued: a transaction applies at its EXEC
	var applyErr error
	run := func(args [][]byte) error {
		if err := apply(args); err != nil {
			applyErr = loadError(fmt.Sprintf("%v reading the append only file %s", err, name))
			return applyErr
		}
		return nil
	}
	valid, err := persistence.ReadCommands(f, func(args [][]byte) error {
		size := commandSize(args)
		defer func() { off += size }()
		switch {
		case bytes.EqualFold(args[0], []byte("multi")) && len(args) == 1:
			beforeMulti, multi = off, [][][]byte{}
			return nil
		case bytes.EqualFold(args[0], []byte("exec")) && len(args) == 1 && multi != nil:
			for _, q := range multi {
				if err := run(q); err != nil {
					return err
				}
			}
			multi = nil
			return nil
		case multi != nil:
			multi = append(multi, cloneArgs(args))
			return nil
		}
		return run(args)
	})
	var corrupt *persistence.CorruptError
	switch {
	case err == nil && multi != nil:
		// The file ends inside MULTI: as Redis, the transaction is dropped.
		a.h.warn("Revert incomplete MULTI/EXEC transaction in AOF file %s", name)
		return beforeMulti, persistence.ErrTruncated
	case err == nil, errors.Is(err, persistence.ErrTruncated), err == applyErr:
		return valid, err
	case errors.As(err, &corrupt):
		return valid, loadError(fmt.Sprintf("Bad file format reading the append only file %s: "+
			"make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>", name))
	default:
		return valid, loadError(fmt.Sprintf("Unrecoverable error reading the append only file %s: %s", name, strerror(err)))
	}
}

func cloneArgs(args [][]byte) [][]byte {
	c := make([][]byte, len(args))
	for i, a := range args {
		c[i] = bytes.Clone(a)
	}
	return c
}

// commandSize is the size of args as a RESP multibulk array.
func commandSize(args [][]byte) int64 {
	n := 1 + len(strconv.Itoa(len(args))) + 2
	for _, a := range args {
		n += 1 + len(strconv.Itoa(len(a))) + 2 + len(a) + 2
	}
	return int64(n)
}

// Reload is DEBUG LOADAOF's load: the caller wrote the AOF (Write),
// emptied the data set and holds the exclusive lock; the files are loaded
// back.
func (a *AOF) Reload() error {
	m, err := a.readManifest()
	if err != nil || m == nil {
		return err
	}
	if err := a.load(m); err != nil {
		return err
	}
	a.writeMu.Lock()
	a.manifest = m
	a.writeMu.Unlock()
	return nil
}

var selectArg = []byte("SELECT")

// Receive is the AOF's subscription to the change stream: it buffers argv,
// after a SELECT when the database changes.
func (a *AOF) Receive(db int, argv [][]byte) {
	a.mu.Lock()
	before := len(a.buf)
	if db != a.db {
		a.buf = resp.AppendCommand(a.buf, [][]byte{selectArg, strconv.AppendInt(nil, int64(db), 10)})
		a.db = db
	}
	a.buf = resp.AppendCommand(a.buf, argv)
	a.fed.Add(int64(len(a.buf) - before))
	a.mu.Unlock()
}

// Write writes what is buffered to the incremental file, and fsyncs it
// under appendfsync always. Clients call it before writing their replies,
// so it returns once everything fed before the call is written (synced
// under always): whoever holds writeMu writes for all, and a client whose
// records another one is writing waits for that write rather than
// replying before it (group commit). A failed write keeps the records
// buffered, cuts the file back to its last whole command and returns the
// error; later calls retry, and write commands are refused meanwhile
// (WriteFailed).
func (a *AOF) Write() error {
	target := a.fed.Load()
	if a.done.Load() >= target {
		return nil
	}
	a.writeMu.Lock()
	defer a.writeMu.Unlock()
	if a.done.Load() >= target {
		return nil
	}
	a.mu.Lock()
	buf, end := a.buf, a.fed.Load()
	a.buf = nil
	a.mu.Unlock()
	if a.file == nil { // appending stopped: nothing will take the records
		a.done.Store(end)
		return nil
	}
	began := time.Now()
	n, err := a.file.Write(buf)
	wrote := time.Now()
	if a.h.Latency != nil {
		a.h.Latency("aof-write", wrote.Sub(began))
		if a.rewriting.Load() {
			a.h.Latency("aof-write-active-child", wrote.Sub(began))
		} else {
			a.h.Latency("aof-write-alone", wrote.Sub(began))
		}
	}
	if err == nil && a.h.Config.AppendFsync() == "always" {
		err = a.file.Sync()
		if a.h.Latency != nil {
			a.h.Latency("aof-fsync-always", time.Since(wrote))
		}
	}
	if err != nil {
		if n > 0 {
			if terr := a.file.Truncate(a.fileSize); terr == nil {
				a.file.Seek(a.fileSize, 0)
			} else {
				// The file keeps a partial command: the rest must follow.
				a.fileSize += int64(n)
				a.size.Add(int64(n))
				buf = buf[n:]
			}
		}
		a.mu.Lock()
		a.buf = append(buf, a.buf...)
		a.mu.Unlock()
		if a.writeErr.Swap(&err) == nil {
			a.h.Log.Printf("Error writing to the AOF file: %v", err)
		}
		return err
	}
	if a.writeErr.Swap(nil) != nil {
		a.h.Log.Printf("AOF write error looks solved. Redis can write again.")
	}
	a.fileSize += int64(len(buf))
	a.size.Add(int64(len(buf)))
	a.done.Store(end)
	if a.h.Config.AppendFsync() != "always" {
		a.unsynced.Store(true)
	} else {
		a.syncedTo(end)
	}
	if cap(buf) <= 1<<20 {
		a.mu.Lock()
		if a.buf == nil {
			a.buf = buf[:0] // reuse the buffer
		}
		a.mu.Unlock()
	}
	return nil
}

// Barrier is what replies pass before they leave: what the AOF was fed is
// written first (group commit), so that an acknowledged write is in the
// file. It returns the length of the changes fed so far, and whether they
// are as durable as appendfsync asks: not when the write failed under
// appendfsync always, and a reply acknowledging a write must not leave.
func (a *AOF) Barrier() (fed int64, durable bool) {
	if a.On() && a.Write() != nil && a.h.Config.AppendFsync() == "always" {
		return a.Fed(), false
	}
	return a.Fed(), true
}

// Fed is the length of every change fed to the AOF so far: a client's
// writes are covered by an fsync once Synced reaches what Fed was after them.
func (a *AOF) Fed() int64 { return a.fed.Load() }

// Synced is the length of the changes fed to the AOF that are on disk.
func (a *AOF) Synced() int64 { return a.synced.Load() }

// syncedTo records that the changes fed up to n are on disk, and tells the
// server (WAITAOF's clients wait for it).
func (a *AOF) syncedTo(n int64) {
	for {
		old := a.synced.Load()
		if n <= old {
			return
		}
		if a.synced.CompareAndSwap(old, n) {
			break
		}
	}
	if a.h.Synced != nil {
		a.h.Synced()
	}
}

// WriteFailed reports whether the last write to the AOF failed: write
// commands are refused until one succeeds.
func (a *AOF) WriteFailed() bool { return a.writeErr.Load() != nil }

// WriteError is the error reply for write commands while the AOF cannot be
// written, as Redis's MISCONF.
func (a *AOF) WriteError() string {
	msg := "unknown error"
	if err := a.writeErr.Load(); err != nil {
		msg = (*err).Error()
		var errno syscall.Errno
		if errors.As(*err, &errno) {
			msg = errno.Error()
		}
	}
	return "MISCONF Errors writing to the AOF file: " + msg
}

// Cron writes what the cron's own changes (expiry, eviction) buffered,
// fsyncs once a second under everysec, and starts a rewrite when asked for
// or when the file grew past auto-aof-rewrite-percentage.
func (a *AOF) Cron() {
	if !a.on.Load() {
		return
	}
	a.Write()
	policy := a.h.Config.AppendFsync()
	if policy != "no" && a.unsynced.Load() && !a.syncing.Load() {
		// Under always too: what was written under everysec before a
		// CONFIG SET is synced now, as Redis does.
		a.writeMu.Lock()
		due := policy == "always" || time.Since(a.lastSync) >= time.Second
		f, upTo := a.file, a.done.Load()
		a.writeMu.Unlock()
		if due && a.syncing.CompareAndSwap(false, true) {
			a.unsynced.Store(false)
			go func() {
				err := f.Sync()
				a.writeMu.Lock()
				a.lastSync = time.Now()
				a.writeMu.Unlock()
				a.syncing.Store(false)
				if err == nil {
					a.syncedTo(upTo)
				}
			}()
		}
	} else if policy != "no" {
		// Everything written is synced already (none since, or under
		// always): as Redis, say so for WAITAOF.
		a.writeMu.Lock()
		if !a.unsynced.Load() && !a.syncing.Load() {
			a.syncedTo(a.done.Load())
		}
		a.writeMu.Unlock()
	}
	if a.rewriting.Load() {
		return
	}
	grown := a.size.Load() - a.baseSize.Load()
	pct := int64(a.h.Config.AutoAOFRewritePercentage())
	if a.scheduled.Load() || (pct > 0 && a.size.Load() > a.h.Config.AutoAOFRewriteMinSize() && grown*100 > a.baseSize.Load()*pct && !a.rewriteLimited(time.Now().UnixMilli())) {
		a.BGRewrite()
	}
}

// BGRewrite starts a rewrite in the background and reports whether it
// started (false: one is running). A snapshot in progress (a BGSAVE, a
// replica's) schedules it. As Redis's fork, it returns after the snapshot
// instant, so the base holds every write acknowledged before it: the
// caller must hold no keyspace lock.
func (a *AOF) BGRewrite() bool {
	a.rewriteMu.Lock()
	if a.rewriting.Load() {
		a.rewriteMu.Unlock()
		return false
	}
	// Set before bgsaving is read, as claimSnapshot reads them the other
	// way round: a replica's snapshot and a rewrite never both begin, so
	// the instant below never waits for a whole full sync.
	a.rewriting.Store(true)
	if a.saver.bgsaving.Load() {
		a.rewriting.Store(false)
		a.rewriteMu.Unlock()
		a.scheduled.Store(true)
		return true
	}
	a.scheduled.Store(false)
	began := a.launch(false)
	a.rewriteMu.Unlock()
	<-began
	return true
}

// errRewriteCancelled ends a rewrite that Stop overtook.
var errRewriteCancelled = errors.New("the AOF was turned off")

// launch runs a rewrite in the background (first: the one that turns the
// AOF on); began closes at its snapshot instant, or when it failed before.
// Needs rewriteMu.
func (a *AOF) launch(first bool) (began <-chan struct{}) {
	a.rewriting.Store(true)
	gen := a.stops.Load()
	a.runningGen = gen
	if first {
		a.firstGen.Store(gen + 1)
	}
	a.rewriteDone.Add(1)
	instant := make(chan struct{})
	var once sync.Once
	signal := func() { once.Do(func() { close(instant) }) }
	go func() {
		defer a.rewriteDone.Done()
		err := a.rewrite(first, gen, signal)
		signal()
		switch {
		case errors.Is(err, errRewriteCancelled):
			a.h.Log.Printf("Background AOF rewrite cancelled: %v", err)
		case err != nil && first:
			a.h.Log.Printf("Redis needs to enable the AOF but can't trigger a background AOF rewrite operation: %v", err)
		case err != nil:
			a.h.Log.Printf("Background AOF rewrite failed: %v", err)
		}
		a.rewriteMu.Lock()
		defer a.rewriteMu.Unlock()
		a.firstGen.Store(0)
		if a.enableQueued {
			a.enableQueued = false
			a.launch(true)
			return
		}
		a.rewriting.Store(false)
	}()
	return instant
}

// rewrite writes a new base from a snapshot of the data set and swaps
// it in. At the snapshot instant (under the exclusive lock, so no write is
// in between) the buffered commands go to the old incremental file, a new
// incremental file takes the writes from then on, and the manifest names it
// before any write reaches it: a crash or a failure at any later point
// still loads every acknowledged write (old base, old and new incremental
// files). first is the creation at start-up or by CONFIG SET appendonly
// yes: no manifest names the files until the base exists, as in Redis
// (until then the data set is not in the AOF at all).
func (a *AOF) rewrite(first bool, gen int64, atInstant func()) (err error) {
	start := time.Now()
	a.rewriteStart.Store(start.UnixMilli())
	cancelled := func() bool { return a.stops.Load() != gen }
	defer func() {
		a.lastRewriteSec.Store(int64(time.Since(start).Seconds()))
		if errors.Is(err, errRewriteCancelled) {
			return // neither a success nor a failure, as Redis's killed child
		}
		a.lastRewriteErr.Store(err != nil)
		if err != nil {
			a.rewriteFailures.Add(1)
			a.lastRewriteFailure.Store(time.Now().UnixMilli())
		} else {
			a.rewriteFailures.Store(0)
			a.rewrites.Add(1)
		}
	}()
	dir := a.dir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("can't create the append-only dir %s: %w", dir, err)
	}
	var baseSeq, incrSeq int64
	var switchErr error
	write, end := a.beginSnapshot(a.h.Config.AOFUseRDBPreamble(), cancelled, func() {
		defer atInstant()
		// The snapshot instant: what was written before is in the old files.
		if switchErr = a.Write(); switchErr != nil {
			return
		}
		a.writeMu.Lock()
		defer a.writeMu.Unlock()
		if cancelled() {
			switchErr = errRewriteCancelled
			return
		}
		baseSeq, incrSeq = nextSeqs(a.manifest)
		if switchErr = a.switchIncremental(incrSeq, !first); switchErr == nil && first {
			a.on.Store(true)
			a.subscribe(true)
		}
	})
	if switchErr != nil {
		end()
		return switchErr
	}
	tmp := filepath.Join(dir, "temp-rewriteaof-"+strconv.Itoa(os.Getpid())+".aof")
	err = write(tmp)
	end()
	if err == nil && cancelled() {
		err = errRewriteCancelled
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, a.fileName(baseSeq, a.baseKind())))
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return a.installBase(baseSeq, incrSeq, first, cancelled)
}

// switchIncremental opens incremental file seq and makes it the one
// appended to. With persist, the manifest on disk names it first (the old
// files and the new one): if that fails, the old file stays current and
// nothing changed. The caller holds writeMu and the exclusive lock.
func (a *AOF) switchIncremental(seq int64, persist bool) error {
	name := a.fileName(seq, "incr.aof")
	path := filepath.Join(a.dir(), name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("can't open the append-only file %s: %w", name, err)
	}
	if persist {
		m := a.manifest.Clone()
		m.Incremental = append(m.Incremental, persistence.AOFFile{Name: name, Seq: seq, Type: persistence.AOFIncremental})
		if err := a.writeManifest(m); err != nil {
			f.Close()
			os.Remove(path)
			return err
		}
		a.manifest = m
	}
	if a.file != nil {
		a.file.Sync()
		a.file.Close()
	}
	a.file, a.fileSize = f, 0
	a.mu.Lock()
	a.db = -1 // the first command written to the new file selects its database
	a.mu.Unlock()
	return nil
}

// installBase makes base baseSeq (renamed into place) and the incremental
// files from incrSeq on the AOF, then removes the files it replaced. A
// crash before the manifest is replaced loads the old files; a crash after
// it leaves old files that start-up removes.
func (a *AOF) installBase(baseSeq, incrSeq int64, first bool, cancelled func() bool) error {
	dir := a.dir()
	baseName := a.fileName(baseSeq, a.baseKind())
	m := &persistence.Manifest{Base: &persistence.AOFFile{Name: baseName, Seq: baseSeq, Type: persistence.AOFBase}}
	a.writeMu.Lock()
	if cancelled() {
		a.writeMu.Unlock()
		os.Remove(filepath.Join(dir, baseName))
		return errRewriteCancelled
	}
	if first {
		m.Incremental = []persistence.AOFFile{{Name: a.fileName(incrSeq, "incr.aof"), Seq: incrSeq, Type: persistence.AOFIncremental}}
	} else {
		for _, f := range a.manifest.Incremental {
			if f.Seq >= incrSeq {
				m.Incremental = append(m.Incremental, f)
			}
		}
	}
	err := a.writeManifest(m)
	if err == nil {
		a.manifest = m
	}
	a.writeMu.Unlock()
	if err != nil {
		os.Remove(filepath.Join(dir, baseName))
		return err
	}
	var size int64
	for _, f := range m.Files() {
		if st, err := os.Stat(filepath.Join(dir, f.Name)); err == nil {
			size += st.Size()
			if f.Type == persistence.AOFBase {
				a.baseSize.Store(st.Size())
			}
		}
	}
	a.size.Store(size)
	a.removeOrphans(m) // the replaced files
	if !first {
		a.h.Log.Printf("Background AOF rewrite finished successfully")
	}
	return nil
}

// writeManifest replaces the manifest on disk (temporary file, fsync,
// rename, fsync of the directory).
func (a *AOF) writeManifest(m *persistence.Manifest) error {
	if err := writeFileAtomic(a.manifestPath(), m.Format()); err != nil {
		return fmt.Errorf("can't persist the AOF manifest %s: %w", a.manifestPath(), err)
	}
	return syncDir(a.dir())
}

// rewriteLimited paces automatic rewrites after three consecutive failures,
// as Redis does: the next waits 1 minute after the last failure, doubling
// with each further failure up to an hour. BGREWRITEAOF is not paced.
func (a *AOF) rewriteLimited(nowMs int64) bool {
	n := a.rewriteFailures.Load()
	if n < 3 {
		return false
	}
	minutes := int64(60)
	if n-3 < 6 {
		minutes = min(int64(1)<<(n-3), 60)
	}
	return nowMs < a.lastRewriteFailure.Load()+minutes*60_000
}

// removeOrphans removes from the AOF directory the files named like this
// server's AOF files that m does not list, and temporary files of a
// rewrite: at the end of a rewrite the generation it replaced, at start-up
// what a crash left (that generation, a new incremental file a failed
// manifest write did not list, history files, temporary files). Redis
// lists replaced files as history in its manifest for the same purpose;
// here the manifest is written first and whatever it does not list is
// known to be unused. A manifest that lists history is rewritten without
// it.
func (a *AOF) removeOrphans(m *persistence.Manifest) error {
	dir := a.dir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	listed := map[string]bool{}
	for _, f := range m.Files() {
		listed[f.Name] = true
	}
	prefix := a.h.Config.AppendFilename() + "."
	for _, e := range entries {
		name := e.Name()
		ours := leftTempFile(name) || name == filepath.Base(a.manifestPath())+".tmp"
		if rest, ok := strings.CutPrefix(name, prefix); ok && !listed[name] {
			seq, kind, _ := strings.Cut(rest, ".")
			_, err := strconv.ParseUint(seq, 10, 63)
			ours = err == nil && (kind == "base.rdb" || kind == "base.aof" || kind == "incr.aof")
		}
		if name == a.h.Config.AppendFilename() && !listed[name] {
			ours = true // the base of an upgraded old-style AOF, rewritten since
		}
		if ours && e.Type().IsRegular() {
			a.h.Log.Printf("Removing the unused AOF file %s", name)
			os.Remove(filepath.Join(dir, name))
		}
	}
	if len(m.History) > 0 {
		m.History = nil
		return a.writeManifest(m)
	}
	return nil
}

// Stop is CONFIG SET appendonly no and shutdown: what is buffered is
// written and synced, and appending stops. A rewrite running is cancelled,
// not waited for: its caller may hold the locks the rewrite needs.
func (a *AOF) Stop() {
	a.writeMu.Lock()
	a.stops.Add(1)
	a.writeMu.Unlock()
	a.rewriteMu.Lock()
	a.enableQueued = false
	a.rewriteMu.Unlock()
	if !a.on.Load() {
		return
	}
	a.Write()
	a.on.Store(false)
	a.subscribe(false)
	a.Write() // what was fed in between
	a.writeMu.Lock()
	if a.file != nil {
		a.file.Sync()
		a.file.Close()
		a.file = nil
	}
	a.writeMu.Unlock()
}

// Wait returns when no rewrite runs: a cancelled one has removed its files.
func (a *AOF) Wait() { a.rewriteDone.Wait() }

// Enable is CONFIG SET appendonly yes: the AOF is created in the
// background from a snapshot of the data set, and appending starts at its
// instant.
func (a *AOF) Enable() error {
	if a.on.Load() {
		return nil
	}
	if err := os.MkdirAll(a.dir(), 0o755); err != nil {
		return err
	}
	a.rewriteMu.Lock()
	defer a.rewriteMu.Unlock()
	switch {
	case !a.rewriting.Load():
		a.launch(true)
	case a.stops.Load() != a.runningGen:
		a.enableQueued = true // after the cancelled one ends
	default:
		return errors.New("an AOF rewrite is in progress")
	}
	return nil
}

// AOFStatus is the AOF's state as INFO persistence reports it.
type AOFStatus struct {
	On                  bool
	Rewriting           bool
	Scheduled           bool
	LastRewriteSec      int64 // -1: none yet
	CurrentRewriteSec   int64 // -1: none running
	LastRewriteOK       bool
	Rewrites            int64
	ConsecutiveFailures int64
	LastWriteOK         bool
	Size                int64 // of the base and the incremental files
	BaseSize            int64
	Buffered            int64 // bytes fed and not yet written
	Syncing             bool  // an everysec fsync in progress
	PeakExtra           int64 // bytes of records the last rewrite kept ahead of its snapshot
}

// Status returns the AOF's state.
func (a *AOF) Status() AOFStatus {
	st := AOFStatus{
		On:                  a.on.Load(),
		Rewriting:           a.rewriting.Load(),
		Scheduled:           a.scheduled.Load(),
		LastRewriteSec:      a.lastRewriteSec.Load(),
		CurrentRewriteSec:   -1,
		LastRewriteOK:       !a.lastRewriteErr.Load(),
		Rewrites:            a.rewrites.Load(),
		ConsecutiveFailures: a.rewriteFailures.Load(),
		LastWriteOK:         a.writeErr.Load() == nil,
		Size:                a.size.Load(),
		BaseSize:            a.baseSize.Load(),
		Buffered:            a.fed.Load() - a.done.Load(),
		Syncing:             a.syncing.Load(),
		PeakExtra:           a.lastRewritePeak.Load(),
	}
	if st.Rewriting {
		st.CurrentRewriteSec = (time.Now().UnixMilli() - a.rewriteStart.Load()) / 1000
	}
	return st
}
