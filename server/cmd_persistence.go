package server

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/keyhive/keyhive/cmdspec"
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/durability"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/internal/version"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/persistence"
	"github.com/keyhive/keyhive/values"
)

func init() {
	bind("save", saveCommand)
	bind("bgsave", bgsaveCommand)
	bind("bgrewriteaof", bgrewriteaofCommand)
	bind("lastsave", func(x *Ctx) { x.W.Int(x.s.saver.LastSave()) })
	bind("dump", dumpCommand)
	bind("restore", restoreCommand)
}

// persistenceHost is what package durability needs of the server.
func (s *Server) persistenceHost() *durability.Host {
	return &durability.Host{
		Config:   s.cfg,
		Keyspace: s.ks,
		Clock:    s.clock,
		Log:      s.log,
		Changes:  &s.stream,
		Dirty:    &s.stats.dirty,
		Version:  version.Redis,
		Functions: func(b []byte) []byte {
			enc := values.NewEncoder(s.cfg.RDBCompression())
			b = s.scripts.AppendFunctions(b, enc)
			values.ReleaseEncoder(enc)
			return b
		},
		FunctionCode: func() [][]byte {
			var code [][]byte
			for _, lib := range s.scripts.Libraries() {
				code = append(code, lib.Code)
			}
			return code
		},
		LoadFunction: func(code []byte, merge bool) error {
			_, err := s.scripts.LoadLibrary(bytes.Clone(code), merge)
			return err
		},
		SchemaDefs: s.schemaDefs,
		LoadSchema: s.loadSchema,
		Replay: func() func(args [][]byte) error {
			c := s.loadingClient()
			return func(args [][]byte) error { return s.applyLoaded(c, args) }
		},
		Synced:         s.serveAOFWaiters,
		ReplicationAux: func() []string { return s.repl.Aux() }, // s.repl is made after the AOF
		Instant:        &s.snapshotInstant,
		LoadedAux:      func(name, value []byte) { s.repl.LoadedAux(name, value) },
		LoadExpired:    s.loadExpired.note,
		IsReplica:      func() bool { _, _, ok := s.cfg.ReplicaOf(); return ok },
		UsedMemory:     func() int64 { return s.usedMemory(monoNow(), 0) },
		Latency:        s.diskLatency,
		DroppedGarbage: func(size int64) {
			if size >= bigReply {
				s.returnHeap()
			}
		},
	}
}

var argABSTTL = []byte("ABSTTL")

func saveCommand(x *Ctx) {
	if x.s.saver.InProgress() {
		x.W.Error("ERR Background save already in progress")
		return
	}
	if err := x.s.saver.Save(x.Now); err != nil {
		x.W.Error("ERR")
		return
	}
	x.W.OK()
}

func bgsaveCommand(x *Ctx) {
	schedule := false
	if len(x.Args) > 1 {
		if len(x.Args) != 2 || !cstr.ArgIs(x.Args[1], "schedule") {
			x.W.Error(errSyntax)
			return
		}
		schedule = true
	}
	switch {
	case x.s.saver.InProgress():
		if schedule {
			x.s.saver.Schedule()
			x.W.Simple("Background saving scheduled")
			return
		}
		x.W.Error("ERR Background save already in progress")
	case x.blockingDenied():
		// EXEC holds locks the snapshot instant would wait for: the cron
		// starts it, as Redis does for a BGSAVE inside MULTI.
		x.s.saver.Schedule()
		x.W.Simple("Background saving scheduled")
	case x.s.saver.BGSave():
		x.W.Simple("Background saving started")
	default:
		x.W.Error("ERR Background save already in progress")
	}
}

func bgrewriteaofCommand(x *Ctx) {
	switch {
	case x.s.aof.Rewriting():
		x.W.Error("ERR Background append only file rewriting already in progress")
	case x.s.saver.InProgress() || x.blockingDenied():
		// Inside EXEC the locks held would stall the snapshot instant
		// BGRewrite waits for: the cron starts it, as Redis does.
		x.s.aof.Schedule()
		x.W.Simple("Background append only file rewriting scheduled")
	case x.s.aof.BGRewrite():
		x.W.Simple("Background append only file rewriting started")
	default:
		x.W.Error("ERR Background append only file rewriting already in progress")
	}
}

func dumpCommand(x *Ctx) {
	e, found := x.LookupRead(x.Args[1])
	if !found {
		x.W.Null()
		return
	}
	enc := values.NewEncoder(x.s.cfg.RDBCompression())
	b := values.AppendValue(enc, x.NextScratch(), &e, nil, x.s.cfg)
	values.ReleaseEncoder(enc)
	b = persistence.AppendDumpFooter(b)
	x.W.Bulk(b)
	x.KeepScratch(b)
}

// restoreCommand is RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME
// seconds] [FREQ frequency], checking its arguments in Redis's order.
func restoreCommand(x *Ctx) {
	key := x.Args[1]
	replace, absTTL := false, false
	freq, idle := int64(-1), int64(-1)
	for j := 4; j < len(x.Args); j++ {
		more := len(x.Args) - j - 1
		switch a := x.Args[j]; {
		case cstr.ArgIs(a, "replace"):
			replace = true
		case cstr.ArgIs(a, "absttl"):
			absTTL = true
		case cstr.ArgIs(a, "idletime") && more >= 1 && freq == -1:
			v, ok := strnum.ParseInt(x.Args[j+1])
			if !ok {
				x.W.Error(errNotInt)
				return
			}
			if v < 0 {
				x.W.Error("ERR Invalid IDLETIME value, must be >= 0")
				return
			}
			idle = v
			j++
		case cstr.ArgIs(a, "freq") && more >= 1 && idle == -1:
			v, ok := strnum.ParseInt(x.Args[j+1])
			if !ok {
				x.W.Error(errNotInt)
				return
			}
			if v < 0 || v > 255 {
				x.W.Error("ERR Invalid FREQ value, must be >= 0 and <= 255")
				return
			}
			freq = v
			j++
		default:
			x.W.Error(errSyntax)
			return
		}
	}
	e, found := x.LookupWrite(key)
	if found && !replace {
		x.W.Error("BUSYKEY Target key name already exists.")
		return
	}
	ttl, ok := strnum.ParseInt(x.Args[2])
	if !ok {
		x.W.Error(errNotInt)
		return
	}
	if ttl < 0 {
		x.W.Error("ERR Invalid TTL value, must be >= 0")
		return
	}
	v, err := persistence.DecodeDump(x.Args[3])
	switch {
	case errors.Is(err, persistence.ErrDumpPayload):
		x.W.Error("ERR DUMP payload version or checksum are wrong")
		return
	case errors.Is(err, persistence.ErrBadData):
		x.W.Error("ERR Bad data format")
		return
	case err != nil:
		x.W.Error("ERR " + err.Error())
		return
	case v.HasDuplicates() || !values.Restorable(&v):
		x.W.Error("ERR Bad data format")
		return
	}
	was, blessed := e.Type(), found && e.Blessed()
	if found {
		x.DB.DeleteEntry(&e)
	}
	if ttl != 0 && !absTTL {
		ttl += x.Now
	}
	if ttl != 0 && x.AlreadyExpired(ttl) {
		if found {
			x.propagateDel(key, x.s.cfg.LazyFreeLazyServerDel())
			x.Notify(notifyGeneric, "del", key)
			x.Dirty++
		}
		x.W.OK()
		return
	}
	values.Restore(x.Env(), e, key, &v, ttl, values.AccessModeOf(x.s.cfg.MaxMemoryPolicy()), int(freq), idle) // no duplicates: it cannot fail
	// REPLACE keeps the key's protection from eviction (the BLESS SET page).
	if blessed {
		if restored, ok := x.DB.Lookup(key, x.Now, false); ok {
			x.DB.SetBlessed(&restored, true)
		}
	}
	if ttl != 0 && !absTTL && x.Propagating() {
		argv := append([][]byte{x.Args[0], key, intArg(ttl)}, x.Args[3:]...)
		x.PropagateAs(append(argv, argABSTTL)...)
	}
	x.Notify(notifyGeneric, "restore", key)
	if found { // REPLACE over a key: Redis 8.2's events, after "restore"
		restored, _ := x.DB.Lookup(key, x.Now, false)
		x.Overwrote(key, was, restored.Type())
	}
	x.Dirty++
	x.W.OK()
}

// reloadCommand is DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]: save, empty the
// data set and load the file back, under the exclusive lock.
func reloadCommand(x *Ctx) {
	save, flush, merge := true, true, false
	for _, a := range x.Args[2:] {
		switch {
		case cstr.ArgIs(a, "merge"):
			merge = true
		case cstr.ArgIs(a, "noflush"):
			flush = false
		case cstr.ArgIs(a, "nosave"):
			save = false
		default:
			x.W.Error("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.")
			return
		}
	}
	s := x.s
	if save {
		if err := s.saver.Save(x.Now); err != nil {
			x.W.Error("ERR")
			return
		}
	}
	if flush {
		for i := range s.ks.Len() {
			s.ks.DB(i).Flush()
		}
		s.scripts.FlushFunctions()
	}
	if err := s.saver.Reload(merge); err != nil {
		s.log.Printf("DEBUG RELOAD: %v", err)
		x.W.Error("ERR Error trying to load the RDB dump, check server logs.")
		return
	}
	s.log.Printf("DB reloaded by DEBUG RELOAD")
	x.W.OK()
}

// debugLoadAOF is DEBUG LOADAOF: the AOF written out, the data set emptied
// and loaded back from the files, under the exclusive lock.
func debugLoadAOF(x *Ctx) {
	s := x.s
	if !s.aof.On() {
		x.W.OK() // as Redis: nothing to load from
		return
	}
	s.aof.Write()
	for i := range s.ks.Len() {
		s.ks.DB(i).Flush()
	}
	s.scripts.FlushFunctions()
	if err := s.aof.Reload(); err != nil {
		var bad *durability.LoadError
		if errors.As(err, &bad) {
			for _, line := range bad.LogLines() {
				s.scriptLog(3, line) // at warning level, as Redis logs them
			}
		} else {
			s.log.Printf("DEBUG LOADAOF: %v", err)
		}
		x.W.Error("ERR Error loading the AOF, check server logs.")
		return
	}
	s.log.Printf("Append Only File loaded by DEBUG LOADAOF")
	x.W.OK()
}

const errBgsaveFailed = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error."

// diskError is why persistence refuses writes now, in Redis's order: the
// last background save failed (stop-writes-on-bgsave-error, with save
// points), or the AOF cannot be written; "" when it does not.
func (s *Server) diskError() string {
	switch {
	case s.cfg.StopWritesOnBgsaveError() && len(s.cfg.Save()) > 0 && !s.saver.Status().LastOK:
		return errBgsaveFailed
	case s.aof.WriteFailed():
		return s.aof.WriteError()
	}
	return ""
}

// deniedByDiskError reports whether cmd is refused while persistence cannot
// write (diskError): write commands (queued in MULTI too) and PING, as in
// Redis.
func deniedByDiskError(cmd *Command) bool {
	return cmd.Flags&(cmdspec.FlagWrite|cmdspec.FlagDiskErrorDenied) != 0
}

// watchAppendOnly makes CONFIG SET appendonly start or stop the AOF.
func (s *Server) watchAppendOnly() {
	s.cfg.OnApply("appendonly", func() error {
		if s.cfg.AppendOnly() {
			return s.aof.Enable()
		}
		s.aof.Stop()
		return nil
	})
}

// writePersistenceInfo writes INFO persistence, in Redis's order. There is
// no fork: while a snapshot is saved (BGSAVE, an AOF rewrite, a full sync)
// the current_* fields report its saver's progress, and its copy-on-write
// is the records of keys copied ahead of the saver (always current, so
// their age is 0).
func (s *Server) writePersistenceInfo(b *strings.Builder) {
	field(b, "loading", 0)
	field(b, "async_loading", 0)
	saved, total := s.ks.SnapshotProgress()
	var held, peak int64
	perc := 0.0
	if total > 0 {
		held, peak = s.ks.SnapshotMemory()
		saved = min(saved, total)
		perc = float64(saved) * 100 / float64(total)
	} else {
		saved = 0
	}
	field(b, "current_cow_peak", peak)
	field(b, "current_cow_size", held)
	field(b, "current_cow_size_age", 0)
	field(b, "current_fork_perc", strconv.FormatFloat(perc, 'f', 2, 64))
	field(b, "current_save_keys_processed", saved)
	field(b, "current_save_keys_total", total)
	field(b, "rdb_changes_since_last_save", s.stats.dirty.Load())
	sv := s.saver.Status()
	field(b, "rdb_bgsave_in_progress", boolInt(sv.InProgress))
	field(b, "rdb_last_save_time", sv.LastSave)
	field(b, "rdb_last_bgsave_status", okErr(sv.LastOK))
	field(b, "rdb_last_bgsave_time_sec", sv.LastSec)
	field(b, "rdb_current_bgsave_time_sec", sv.CurrentSec)
	field(b, "rdb_saves", sv.Saves)
	// The memory a save needs beyond the data: here the records of keys
	// kept ahead of the saver (Redis reports its fork's copy-on-write).
	field(b, "rdb_last_cow_size", sv.PeakExtra)
	field(b, "rdb_last_load_keys_expired", sv.LoadExpired)
	field(b, "rdb_last_load_keys_loaded", sv.LoadedKeys)

	a := s.aof.Status()
	field(b, "aof_enabled", boolInt(a.On))
	field(b, "aof_rewrite_in_progress", boolInt(a.Rewriting))
	field(b, "aof_rewrite_scheduled", boolInt(a.Scheduled))
	field(b, "aof_last_rewrite_time_sec", a.LastRewriteSec)
	field(b, "aof_current_rewrite_time_sec", a.CurrentRewriteSec)
	field(b, "aof_last_bgrewrite_status", okErr(a.LastRewriteOK))
	field(b, "aof_rewrites", a.Rewrites)
	field(b, "aof_rewrites_consecutive_failures", a.ConsecutiveFailures)
	field(b, "aof_last_write_status", okErr(a.LastWriteOK))
	field(b, "aof_last_cow_size", a.PeakExtra)
	field(b, "module_fork_in_progress", 0)
	field(b, "module_fork_last_cow_size", 0)
	if a.On {
		field(b, "aof_current_size", a.Size)
		field(b, "aof_base_size", a.BaseSize)
		field(b, "aof_pending_rewrite", boolInt(a.Scheduled))
		field(b, "aof_buffer_length", a.Buffered)
		field(b, "aof_pending_bio_fsync", boolInt(a.Syncing))
		field(b, "aof_delayed_fsync", 0)
	}
}

func okErr(ok bool) string {
	if ok {
		return "ok"
	}
	return "err"
}

// shutdownSave saves before shutting down when asked to (SAVE) or when save
// points are configured, unless NOSAVE, as Redis does. A background save in
// progress is waited for first.
func (s *Server) shutdownSave(save, nosave bool) error {
	if nosave || !save && len(s.cfg.Save()) == 0 {
		return nil
	}
	s.saver.Wait()
	var all keyspace.LockSet
	all.All()
	db := s.ks.Lock(0, &all)
	defer s.ks.Unlock(db, &all)
	s.log.Printf("Saving the final RDB snapshot before exiting.")
	return s.saver.Save(s.clock.UnixMilli())
}

// ErrShutdownAborted is Shutdown's error when SHUTDOWN ABORT cancelled it
// while it waited for replicas: the server goes on running.
var ErrShutdownAborted = errors.New("shutdown manually aborted")

// ErrShutdownRefused is Shutdown's error when what the shutdown had to do
// first failed (the final save, or the first AOF still being written),
// without FORCE: the server goes on running, as Redis's.
var ErrShutdownRefused = errors.New("errors trying to shut down the server")

// Shutdown is a signal's shutdown, with the flags shutdown-on-sigint or
// shutdown-on-sigterm give it: as SHUTDOWN, then Close. When it returns an
// error the server goes on running.
func (s *Server) Shutdown(flags config.ShutdownFlags) error {
	run, joined := s.beginShutdown()
	if err := s.prepareShutdown(run, joined, flags); err != nil {
		return err
	}
	s.Close()
	return nil
}

// shutdownRun is a shutdown under way. As in Redis, there is one at a
// time: a SHUTDOWN or signal that comes meanwhile ends as it does.
type shutdownRun struct {
	abort   chan struct{} // closed by SHUTDOWN ABORT
	aborted atomic.Bool
	waiting atomic.Bool // replicas are awaited (INFO's shutdown_in_milliseconds)
	// deadline (Unix ms) ends the wait for replicas, set before waiting.
	deadline int64
	done     chan struct{} // closed once err is known
	err      error
}

// beginShutdown registers a shutdown, from which on SHUTDOWN ABORT can
// cancel it, or returns the one under way to join.
func (s *Server) beginShutdown() (run *shutdownRun, joined bool) {
	run = &shutdownRun{abort: make(chan struct{}), done: make(chan struct{})}
	for !s.shutdown.CompareAndSwap(nil, run) {
		if other := s.shutdown.Load(); other != nil {
			return other, true
		}
	}
	return run, false
}

// prepareShutdown does what comes before a shutdown, as Redis's SHUTDOWN
// and signals do: unless NOW, lagging replicas get shutdown-timeout to catch
// up; the first AOF still being written, or a failed final save, stops the
// shutdown unless FORCE. When it returns an error, writes are resumed and
// the server goes on. A joined run's outcome is returned, its flags applied.
func (s *Server) prepareShutdown(run *shutdownRun, joined bool, flags config.ShutdownFlags) error {
	if joined {
		<-run.done
		return run.err
	}
	run.err = s.runShutdown(run, flags)
	if run.err != nil {
		s.shutdown.Store(nil) // a later one may try again
	}
	close(run.done)
	return run.err
}

func (s *Server) runShutdown(run *shutdownRun, flags config.ShutdownFlags) error {
	if flags&config.ShutdownNow == 0 && !s.awaitReplicas(run) || run.aborted.Load() {
		s.unpauseClients()
		return ErrShutdownAborted
	}
	err := s.shutdownChecks(flags)
	if err != nil {
		s.log.Printf("Errors trying to shut down the server. Check the logs for more information.")
		s.unpauseClients()
	}
	return err
}

// shutdownChecks refuses a shutdown that would lose data, unless FORCE.
func (s *Server) shutdownChecks(flags config.ShutdownFlags) error {
	force := flags&config.ShutdownForce != 0
	// A background save would be overtaken by the final one, or is not
	// wanted: Redis kills its child.
	if s.saver.InProgress() {
		s.log.Printf("There is a child saving an .rdb. Killing it!")
		s.saver.Abort()
	}
	if s.aof.WritingFirst() {
		if !force {
			s.log.Printf("Writing initial AOF, can't exit.")
			return ErrShutdownRefused
		}
		s.log.Printf("Writing initial AOF. Exit anyway.")
	}
	if err := s.shutdownSave(flags&config.ShutdownSave != 0, flags&config.ShutdownNoSave != 0); err != nil {
		if !force {
			s.log.Printf("Error trying to save the DB, can't exit.")
			return ErrShutdownRefused
		}
		s.log.Printf("Error trying to save the DB. Exit anyway.")
	}
	return nil
}

// awaitReplicas gives lagging replicas up to shutdown-timeout seconds to
// take every write before a shutdown, with writes paused, as Redis's
// SHUTDOWN without NOW: a planned stop loses nothing a replica could have.
// It reports false when SHUTDOWN ABORT cancelled the shutdown meanwhile;
// the caller then unpauses.
func (s *Server) awaitReplicas(run *shutdownRun) bool {
	timeout := int64(s.cfg.ShutdownTimeout())
	if timeout <= 0 {
		return true
	}
	run.deadline = time.Now().UnixMilli() + timeout*1000
	run.waiting.Store(true)
	defer run.waiting.Store(false)
	s.pauseClients(pauseWrite, run.deadline+60_000) // ended by Close, or by a failed SHUTDOWN
	return s.repl.CatchUp(time.Duration(timeout)*time.Second, run.abort)
}

// abortShutdown is SHUTDOWN ABORT: it cancels the shutdown under way, if
// one is, and reports whether it did.
func (s *Server) abortShutdown() bool {
	run := s.shutdown.Load()
	if run == nil || !run.aborted.CompareAndSwap(false, true) {
		return false
	}
	close(run.abort)
	s.log.Printf("Shutdown manually aborted.")
	return true
}
