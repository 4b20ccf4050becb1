package server

import (
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

	"github.com/keyhive/keyhive/persistence"
	"github.com/keyhive/keyhive/resp"
)

// The append-only file, in Redis 7's multi-part layout (persistence/aof.go):
// dir/appenddirname holds a base snapshot, incremental files of the
// commands written since, and the manifest naming them. Every propagated
// command (propagate.go) is appended to an in-memory buffer; a client
// writes the buffer to the file before its replies go out (and fsyncs it
// first under appendfsync always), so an acknowledged write is in the file;
// under everysec the cron fsyncs once a second. BGREWRITEAOF switches to a
// new incremental file at a snapshot instant and writes the snapshot as
// the new base (an RDB file under aof-use-rdb-preamble, else commands) while
// writes continue, then swaps the manifest.
type aofState struct {
	on atomic.Bool // appending
	// fed counts the bytes ever buffered, done those written (and synced
	// under always): a client replies once done reaches fed as it was after
	// its command.
	fed, done atomic.Int64

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

	rewriting       atomic.Bool
	scheduled       atomic.Bool
	rewriteStart    atomic.Int64 // Unix ms
	lastRewriteSec  atomic.Int64
	rewrites        atomic.Int64
	rewriteFailures atomic.Int64
	lastRewriteErr  atomic.Bool
	// lastRewriteFailure (Unix ms) paces automatic rewrites after repeated
	// failures (rewriteLimited).
	lastRewriteFailure atomic.Int64
	writeErr           atomic.Pointer[error] // the last write's error; nil when it succeeded
	rewriteDone        sync.WaitGroup
}

func init() {
	bind("bgrewriteaof", bgrewriteaofCommand)
}

func bgrewriteaofCommand(x *Ctx) {
	switch {
	case x.s.aof.rewriting.Load():
		x.W.Error("ERR Background append only file rewriting already in progress")
	case x.s.rdb.bgsaving.Load():
		x.s.aof.scheduled.Store(true)
		x.W.Simple("Background append only file rewriting scheduled")
	case x.s.bgrewriteAOF():
		x.W.Simple("Background append only file rewriting started")
	default:
		x.W.Error("ERR Background append only file rewriting already in progress")
	}
}

func (s *Server) aofDir() string { return filepath.Join(s.cfg.Dir(), s.cfg.AppendDirname()) }

func (s *Server) aofName(seq int64, kind string) string {
	return fmt.Sprintf("%s.%d.%s", s.cfg.AppendFilename(), seq, kind)
}

func (s *Server) manifestPath() string {
	return filepath.Join(s.aofDir(), s.cfg.AppendFilename()+".manifest")
}

// startAOF loads the AOF at start-up and opens it for appending; without
// one it creates a base of the (empty) data set and an incremental file,
// as Redis 7.0 does (an RDB file is not loaded when appendonly is on).
func (s *Server) startAOF() error {
	a := &s.aof
	data, err := os.ReadFile(s.manifestPath())
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(s.aofDir(), 0o755); err != nil {
			return fmt.Errorf("can't create the append-only dir %s: %w", s.aofDir(), err)
		}
		s.log.Printf("Creating AOF base file %s on server start", s.aofName(1, s.baseKind()))
		err := s.rewriteAOF(true)
		a.rewrites.Store(0) // as Redis, the start-up base is not a rewrite
		return err
	case err != nil:
		return fmt.Errorf("reading the AOF manifest %s: %w", s.manifestPath(), err)
	}
	m, err := persistence.ParseManifest(strings.NewReader(string(data)))
	if err != nil {
		return fmt.Errorf("%s: %w", s.manifestPath(), err)
	}
	if err := s.loadAOF(m); err != nil {
		return err
	}
	if err := s.removeOrphans(m); err != nil {
		return err
	}
	// Append to the last incremental file, or start one.
	a.manifest = m
	if n := len(m.Incremental); n > 0 {
		f, err := os.OpenFile(filepath.Join(s.aofDir(), m.Incremental[n-1].Name), os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return err
		}
		a.file, a.fileSize = f, st.Size()
	} else {
		a.writeMu.Lock()
		err := s.switchIncremental(nextSeq(m), true)
		a.writeMu.Unlock()
		if err != nil {
			return err
		}
	}
	a.on.Store(true)
	s.replication.setAOF(s.feedAOF)
	return nil
}

func (s *Server) baseKind() string {
	if s.cfg.AOFUseRDBPreamble() {
		return "base.rdb"
	}
	return "base.aof"
}

func nextSeq(m *persistence.Manifest) int64 {
	var seq int64
	if m.Base != nil {
		seq = m.Base.Seq
	}
	for _, f := range m.Incremental {
		seq = max(seq, f.Seq)
	}
	return seq + 1
}

// loadAOF loads the base and the incremental files in order. Only the last
// file may be truncated (a crash while appending): with aof-load-truncated
// it is cut back to its last whole command, else loading fails.
func (s *Server) loadAOF(m *persistence.Manifest) error {
	start := time.Now()
	files := m.Files()
	var total int64
	for i, f := range files {
		path := filepath.Join(s.aofDir(), f.Name)
		st, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("the AOF file %s doesn't exist: %w", path, err)
		}
		total += st.Size()
		if f.Type == persistence.AOFBase {
			s.aof.baseSize.Store(st.Size())
			if strings.HasSuffix(f.Name, ".rdb") || isRDBFile(path) {
				if err := s.loadRDBPath(path, false); err != nil {
					return err
				}
				continue
			}
		}
		valid, err := s.replayAOF(path)
		switch {
		case errors.Is(err, persistence.ErrTruncated) && i == len(files)-1 && s.cfg.AOFLoadTruncated():
			s.log.Printf("!!! Warning: short read while loading the AOF file %s!!!", path)
			s.log.Printf("AOF %s loaded anyway because aof-load-truncated is enabled", path)
			if err := os.Truncate(path, valid); err != nil {
				return fmt.Errorf("error truncating the AOF file %s: %w", path, err)
			}
			total -= st.Size() - valid
		case errors.Is(err, persistence.ErrTruncated):
			return fmt.Errorf("unexpected end of file reading the append only file %s at offset %d. You can: 1) Make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. 2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server", path, valid)
		case err != nil:
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	s.aof.size.Store(total)
	s.log.Printf("DB loaded from append only file: %.3f seconds", time.Since(start).Seconds())
	return nil
}

// isRDBFile reports whether path starts with the RDB signature (a base
// written under aof-use-rdb-preamble whatever its name).
func isRDBFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var sig [5]byte
	n, _ := f.Read(sig[:])
	return n == 5 && string(sig[:]) == "REDIS"
}

// replayAOF runs the commands of one file and returns the offset after the
// last command applied: a transaction cut off by the end of the file is not
// applied, and the offset is before it. Commands run directly, as a
// script's do: the caller holds the exclusive lock or runs alone (start-up).
func (s *Server) replayAOF(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	c := &Client{s: s, authenticated: true, obeys: true}
	c.ctx = Ctx{s: s, c: c, W: &c.out, DB: s.ks.DB(0)}
	x := &c.ctx
	var off, beforeMulti int64
	var multi [][][]byte // queued: a transaction applies at its EXEC
	run := func(args [][]byte) error {
		cmd := lookupCommand(table, args[0])
		if cmd != nil && cmd.Sub != nil && len(args) >= 2 {
			cmd = lookupCommand(cmd.Sub, args[1])
		}
		if cmd == nil || (cmd.Arity > 0 && len(args) != cmd.Arity) || len(args) < -cmd.Arity {
			return fmt.Errorf("unknown command '%s' or wrong number of arguments reading the append only file %s", args[0], path)
		}
		x.cmd, x.Args, x.Now = cmd, args, s.clock.UnixMilli()
		x.cannotBlock = true
		cmd.Run(x)
		x.DB = s.ks.DB(int(c.db.Load())) // after a SELECT
		c.out.B = c.out.B[:0]
		return nil
	}
	valid, err := persistence.ReadCommands(f, func(args [][]byte) error {
		size := commandSize(args)
		defer func() { off += size }()
		switch {
		case cArgIs(args[0], "multi") && len(args) == 1:
			beforeMulti, multi = off, [][][]byte{}
			return nil
		case cArgIs(args[0], "exec") && len(args) == 1 && multi != nil:
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
	if multi != nil {
		// The file ends inside MULTI: as Redis, drop the transaction.
		if err == nil {
			err = persistence.ErrTruncated
		}
		valid = beforeMulti
	}
	return valid, err
}

// debugLoadAOF is DEBUG LOADAOF: the AOF written out, the data set emptied
// and loaded back from the files, under the exclusive lock.
func debugLoadAOF(x *Ctx) {
	s := x.s
	if !s.aof.on.Load() {
		x.W.OK() // as Redis: nothing to load from
		return
	}
	s.writeAOF()
	for i := range s.ks.Len() {
		s.ks.DB(i).Flush()
	}
	s.scripts.FlushFunctions()
	data, err := os.ReadFile(s.manifestPath())
	var m *persistence.Manifest
	if err == nil {
		m, err = persistence.ParseManifest(strings.NewReader(string(data)))
	}
	if err == nil {
		err = s.loadAOF(m)
	}
	if err != nil {
		s.log.Printf("DEBUG LOADAOF: %v", err)
		x.W.Error("ERR Error loading the AOF, check server logs.")
		return
	}
	s.aof.writeMu.Lock()
	s.aof.manifest = m
	s.aof.writeMu.Unlock()
	s.log.Printf("Append Only File loaded by DEBUG LOADAOF")
	x.W.OK()
}

// commandSize is the size of args as a RESP multibulk array.
func commandSize(args [][]byte) int64 {
	n := 1 + len(strconv.Itoa(len(args))) + 2
	for _, a := range args {
		n += 1 + len(strconv.Itoa(len(a))) + 2 + len(a) + 2
	}
	return int64(n)
}

// feedAOF is the propagation consumer: it buffers argv, after a SELECT when
// the database changes.
func (s *Server) feedAOF(db int, argv [][]byte) {
	a := &s.aof
	a.mu.Lock()
	before := len(a.buf)
	if db != a.db {
		a.buf = resp.AppendCommand(a.buf, [][]byte{[]byte("SELECT"), strconv.AppendInt(nil, int64(db), 10)})
		a.db = db
	}
	a.buf = resp.AppendCommand(a.buf, argv)
	a.fed.Add(int64(len(a.buf) - before))
	a.mu.Unlock()
}

// writeAOF writes what is buffered to the incremental file, and fsyncs it
// under appendfsync always. Clients call it before writing their replies,
// so it returns once everything fed before the call is written (synced
// under always): whoever holds writeMu writes for all, and a client whose
// records another one is writing waits for that write rather than
// replying before it (group commit). A failed write keeps the records
// buffered, cuts the file back to its last whole command and returns the
// error; later calls retry, and write commands are refused meanwhile
// (aofWriteError).
func (s *Server) writeAOF() error {
	a := &s.aof
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
	n, err := a.file.Write(buf)
	if err == nil && s.cfg.AppendFsync() == "always" {
		err = a.file.Sync()
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
			s.log.Printf("Error writing to the AOF file: %v", err)
		}
		return err
	}
	if a.writeErr.Swap(nil) != nil {
		s.log.Printf("AOF write error looks solved. Redis can write again.")
	}
	a.fileSize += int64(len(buf))
	a.size.Add(int64(len(buf)))
	a.done.Store(end)
	if s.cfg.AppendFsync() != "always" {
		a.unsynced.Store(true)
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

// deniedByDiskError reports whether cmd is refused while the AOF cannot be
// written: write commands (queued in MULTI too) and PING, as in Redis.
func deniedByDiskError(cmd *Command) bool {
	return cmd.Flags&(FlagWrite|FlagDiskErrorDenied) != 0
}

// aofWriteError is the error reply for write commands while the AOF cannot
// be written, as Redis's MISCONF; the caller saw writeErr set.
func (s *Server) aofWriteError() string {
	msg := "unknown error"
	if err := s.aof.writeErr.Load(); err != nil {
		msg = (*err).Error()
		var errno syscall.Errno
		if errors.As(*err, &errno) {
			msg = errno.Error()
		}
	}
	return "MISCONF Errors writing to the AOF file: " + msg
}

// aofCron writes what the cron's own changes (expiry, eviction) buffered,
// fsyncs once a second under everysec, and starts a rewrite when asked for
// or when the file grew past auto-aof-rewrite-percentage.
func (s *Server) aofCron() {
	a := &s.aof
	if !a.on.Load() {
		return
	}
	s.writeAOF()
	if s.cfg.AppendFsync() == "everysec" && a.unsynced.Load() && !a.syncing.Load() {
		a.writeMu.Lock()
		due := time.Since(a.lastSync) >= time.Second
		f := a.file
		a.writeMu.Unlock()
		if due && a.syncing.CompareAndSwap(false, true) {
			a.unsynced.Store(false)
			go func() {
				f.Sync()
				a.writeMu.Lock()
				a.lastSync = time.Now()
				a.writeMu.Unlock()
				a.syncing.Store(false)
			}()
		}
	}
	if a.rewriting.Load() {
		return
	}
	grown := a.size.Load() - a.baseSize.Load()
	pct := int64(s.cfg.AutoAOFRewritePercentage())
	if a.scheduled.Load() || (pct > 0 && a.size.Load() > s.cfg.AutoAOFRewriteMinSize() && grown*100 > a.baseSize.Load()*pct && !a.rewriteLimited(time.Now().UnixMilli())) {
		s.bgrewriteAOF()
	}
}

// bgrewriteAOF starts a rewrite in the background and reports whether it
// started (false: one is running). A BGSAVE in progress schedules it.
func (s *Server) bgrewriteAOF() bool {
	a := &s.aof
	if s.rdb.bgsaving.Load() {
		a.scheduled.Store(true)
		return true
	}
	if !a.rewriting.CompareAndSwap(false, true) {
		return false
	}
	a.scheduled.Store(false)
	a.rewriteDone.Add(1)
	go func() {
		defer a.rewriteDone.Done()
		if err := s.rewriteAOF(false); err != nil {
			s.log.Printf("Background AOF rewrite failed: %v", err)
		}
	}()
	return true
}

// rewriteAOF writes a new base from a snapshot of the data set and swaps
// it in. At the snapshot instant (under the exclusive lock, so no write is
// in between) the buffered commands go to the old incremental file, a new
// incremental file takes the writes from then on, and the manifest names it
// before any write reaches it: a crash or a failure at any later point
// still loads every acknowledged write (old base, old and new incremental
// files). first is the creation at start-up or by CONFIG SET appendonly
// yes: no manifest names the files until the base exists, as in Redis
// (until then the data set is not in the AOF at all).
func (s *Server) rewriteAOF(first bool) (err error) {
	a := &s.aof
	start := time.Now()
	a.rewriteStart.Store(start.UnixMilli())
	a.rewriting.Store(true)
	defer func() {
		a.rewriting.Store(false)
		a.lastRewriteSec.Store(int64(time.Since(start).Seconds()))
		a.lastRewriteErr.Store(err != nil)
		if err != nil {
			a.rewriteFailures.Add(1)
			a.lastRewriteFailure.Store(time.Now().UnixMilli())
		} else {
			a.rewriteFailures.Store(0)
			a.rewrites.Add(1)
		}
	}()
	dir := s.aofDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("can't create the append-only dir %s: %w", dir, err)
	}
	var seq int64
	var switchErr error
	write, end := s.beginDataSnapshot(s.cfg.AOFUseRDBPreamble(), func() {
		// The snapshot instant: what was written before is in the old files.
		if switchErr = s.writeAOF(); switchErr != nil {
			return
		}
		a.writeMu.Lock()
		defer a.writeMu.Unlock()
		seq = 1
		if a.manifest != nil {
			seq = nextSeq(a.manifest)
		}
		if switchErr = s.switchIncremental(seq, !first); switchErr == nil && first {
			a.on.Store(true)
			s.replication.setAOF(s.feedAOF)
		}
	})
	if switchErr != nil {
		end()
		return switchErr
	}
	tmp := filepath.Join(dir, "temp-rewriteaof-"+strconv.Itoa(os.Getpid())+".aof")
	err = write(tmp)
	end()
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, s.aofName(seq, s.baseKind())))
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return s.installBase(seq, first)
}

// switchIncremental opens incremental file seq and makes it the one
// appended to. With persist, the manifest on disk names it first (the old
// files and the new one): if that fails, the old file stays current and
// nothing changed. The caller holds writeMu and the exclusive lock.
func (s *Server) switchIncremental(seq int64, persist bool) error {
	a := &s.aof
	name := s.aofName(seq, "incr.aof")
	path := filepath.Join(s.aofDir(), name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("can't open the append-only file %s: %w", name, err)
	}
	if persist {
		m := a.manifest.Clone()
		m.Incremental = append(m.Incremental, persistence.AOFFile{Name: name, Seq: seq, Type: persistence.AOFIncremental})
		if err := s.writeManifest(m); err != nil {
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

// installBase makes the base of rewrite seq (renamed into place) and the
// incremental files from seq on the AOF, then removes the files it
// replaced. A crash before the manifest is replaced loads the old files; a
// crash after it leaves old files that start-up removes.
func (s *Server) installBase(seq int64, first bool) error {
	a := &s.aof
	dir := s.aofDir()
	baseName := s.aofName(seq, s.baseKind())
	m := &persistence.Manifest{Base: &persistence.AOFFile{Name: baseName, Seq: seq, Type: persistence.AOFBase}}
	a.writeMu.Lock()
	if first {
		m.Incremental = []persistence.AOFFile{{Name: s.aofName(seq, "incr.aof"), Seq: seq, Type: persistence.AOFIncremental}}
	} else {
		for _, f := range a.manifest.Incremental {
			if f.Seq >= seq {
				m.Incremental = append(m.Incremental, f)
			}
		}
	}
	err := s.writeManifest(m)
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
	s.removeOrphans(m) // the replaced files
	if !first {
		s.log.Printf("Background AOF rewrite finished successfully")
	}
	return nil
}

// writeManifest replaces the manifest on disk (temporary file, fsync,
// rename, fsync of the directory).
func (s *Server) writeManifest(m *persistence.Manifest) error {
	if err := writeFileAtomic(s.manifestPath(), m.Format()); err != nil {
		return fmt.Errorf("can't persist the AOF manifest %s: %w", s.manifestPath(), err)
	}
	return syncDir(s.aofDir())
}

// writeFileAtomic writes data to a temporary file, syncs it and renames it
// over path.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// syncDir fsyncs a directory, so that the names created or renamed in it
// survive a crash of the machine as well.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// rewriteLimited paces automatic rewrites after three consecutive failures,
// as Redis does: the next waits 1 minute after the last failure, doubling
// with each further failure up to an hour. BGREWRITEAOF is not paced.
func (a *aofState) rewriteLimited(nowMs int64) bool {
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
func (s *Server) removeOrphans(m *persistence.Manifest) error {
	dir := s.aofDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	listed := map[string]bool{}
	for _, f := range m.Files() {
		listed[f.Name] = true
	}
	prefix := s.cfg.AppendFilename() + "."
	for _, e := range entries {
		name := e.Name()
		ours := leftTempFile(name) || name == filepath.Base(s.manifestPath())+".tmp"
		if rest, ok := strings.CutPrefix(name, prefix); ok && !listed[name] {
			seq, kind, _ := strings.Cut(rest, ".")
			_, err := strconv.ParseUint(seq, 10, 63)
			ours = err == nil && (kind == "base.rdb" || kind == "base.aof" || kind == "incr.aof")
		}
		if ours && e.Type().IsRegular() {
			s.log.Printf("Removing the unused AOF file %s", name)
			os.Remove(filepath.Join(dir, name))
		}
	}
	if len(m.History) > 0 {
		m.History = nil
		return s.writeManifest(m)
	}
	return nil
}

// leftTempFile reports whether name is one of the temporary files a save or
// a rewrite writes before renaming it (writeRDB, rewriteAOF), left by
// another process: a crash leaves them behind, while this process's own
// may be in use.
func leftTempFile(name string) bool {
	other := func(pid string) bool {
		n, err := strconv.ParseUint(pid, 10, 63)
		return err == nil && n != uint64(os.Getpid())
	}
	if pid, ok := strings.CutPrefix(name, "temp-rewriteaof-"); ok {
		pid, ok = strings.CutSuffix(pid, ".aof")
		return ok && other(pid)
	}
	if rest, ok := strings.CutPrefix(name, "temp-"); ok {
		rest, ok = strings.CutSuffix(rest, ".rdb")
		pid, seq, two := strings.Cut(rest, "-")
		_, err := strconv.ParseUint(seq, 10, 63)
		return ok && two && other(pid) && err == nil
	}
	return false
}

// removeTempFiles removes the temporary files a crashed save left in dir.
func (s *Server) removeTempFiles(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if leftTempFile(e.Name()) && e.Type().IsRegular() {
			s.log.Printf("Removing the temporary file %s of an interrupted save", e.Name())
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// stopAOF is CONFIG SET appendonly no and shutdown: what is buffered is
// written and synced, and appending stops.
func (s *Server) stopAOF() {
	a := &s.aof
	if !a.on.Load() {
		return
	}
	a.rewriteDone.Wait()
	s.writeAOF()
	a.on.Store(false)
	s.replication.setAOF(nil)
	s.writeAOF() // what was fed in between
	a.writeMu.Lock()
	if a.file != nil {
		a.file.Sync()
		a.file.Close()
		a.file = nil
	}
	a.writeMu.Unlock()
}

// watchAppendOnly makes CONFIG SET appendonly start or stop the AOF.
func (s *Server) watchAppendOnly() {
	s.cfg.OnApply("appendonly", func() error {
		switch on := s.cfg.AppendOnly(); {
		case on && !s.aof.on.Load():
			if err := os.MkdirAll(s.aofDir(), 0o755); err != nil {
				return err
			}
			if !s.aof.rewriting.CompareAndSwap(false, true) {
				return errors.New("an AOF rewrite is in progress")
			}
			s.aof.rewriteDone.Add(1)
			go func() {
				defer s.aof.rewriteDone.Done()
				if err := s.rewriteAOF(true); err != nil {
					s.log.Printf("Redis needs to enable the AOF but can't trigger a background AOF rewrite operation: %v", err)
				}
			}()
		case !on:
			s.stopAOF()
		}
		return nil
	})
}

// writeAOFInfo writes INFO persistence's AOF fields.
func (s *Server) writeAOFInfo(b *strings.Builder) {
	a := &s.aof
	on := a.on.Load()
	field(b, "aof_enabled", boolInt(on))
	field(b, "aof_rewrite_in_progress", boolInt(a.rewriting.Load()))
	field(b, "aof_rewrite_scheduled", boolInt(a.scheduled.Load()))
	field(b, "aof_last_rewrite_time_sec", a.lastRewriteSec.Load())
	current := int64(-1)
	if a.rewriting.Load() {
		current = (time.Now().UnixMilli() - a.rewriteStart.Load()) / 1000
	}
	field(b, "aof_current_rewrite_time_sec", current)
	field(b, "aof_last_bgrewrite_status", okErr(!a.lastRewriteErr.Load()))
	field(b, "aof_rewrites", a.rewrites.Load())
	field(b, "aof_rewrites_consecutive_failures", a.rewriteFailures.Load())
	field(b, "aof_last_write_status", okErr(a.writeErr.Load() == nil))
	field(b, "aof_last_cow_size", 0)
	field(b, "module_fork_in_progress", 0)
	field(b, "module_fork_last_cow_size", 0)
	if on {
		field(b, "aof_current_size", a.size.Load())
		field(b, "aof_base_size", a.baseSize.Load())
		field(b, "aof_pending_rewrite", boolInt(a.scheduled.Load()))
		field(b, "aof_buffer_length", a.fed.Load()-a.done.Load())
		field(b, "aof_pending_bio_fsync", boolInt(a.syncing.Load()))
		field(b, "aof_delayed_fsync", 0)
	}
}

func okErr(ok bool) string {
	if ok {
		return "ok"
	}
	return "err"
}
