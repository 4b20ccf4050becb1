// Package durability keeps the data set on disk while the server runs: the
// append-only file (AOF: its manifest, base and incremental files, group
// commit, the fsync policy, rewrites) and snapshots (SAVE, BGSAVE, save
// points, loading an RDB file). The file formats are package persistence's;
// this package decides when files are written, how they replace each other
// and what a crash at any point leaves.
//
// The model. Every change to the data set reaches the AOF as a command,
// from the change stream (package changes) it subscribes to; the AOF
// buffers it, and a client writes the buffer to the file before its reply
// leaves (AOF.Write), so an acknowledged write is in the file. A snapshot
// (an AOF base, a BGSAVE) is taken at one instant under the keyspace's
// exclusive lock (keyspace.Snapshot) and written in the background while
// writes go on; one snapshot runs at a time.
//
// The package knows the keyspace, the configuration and the file formats;
// what needs the server (encoding a key's value, loading a file's values,
// the function libraries, running a loaded command) it asks of the server
// through the function values of Host. What a file holds of a key, and how
// a loaded key is stored, is package values'.
package durability

import (
	"fmt"
	"github.com/keyhive/keyhive/namespace"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/keyhive/keyhive/changes"
	"github.com/keyhive/keyhive/clock"
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/keyspace"
)

// Host is what the AOF and the saver need of the server.
type Host struct {
	Config   *config.Config
	Keyspace *keyspace.Keyspace
	Clock    clock.Clock
	Log      *log.Logger
	// Changes is the stream the AOF subscribes to while it is on.
	Changes *changes.Stream
	// Dirty counts the changes since the last successful save; a save
	// subtracts those it saved.
	Dirty *atomic.Int64
	// Version is the server version an RDB file's header names.
	Version string

	// Functions appends the function libraries as RDB records.
	Functions func(b []byte) []byte
	// FunctionCode returns the function libraries' code (an AOF base of
	// commands loads them with FUNCTION LOAD).
	FunctionCode func() [][]byte
	// LoadFunction loads a function library an RDB file holds; with merge
	// it replaces one of the same name, else that is an error. code points
	// into the file: the callee copies what it keeps.
	LoadFunction func(code []byte, merge bool) error
	// SchemaDefs returns the namespace declarations in force, which files
	// save with the data; LoadSchema applies those an RDB file holds.
	SchemaDefs func() []namespace.Def
	LoadSchema func(defs []namespace.Def)
	// Replay starts loading one AOF file: apply runs one of its commands,
	// in a session of its own that starts in database 0 (a SELECT switches
	// it). The caller holds the exclusive lock or runs alone (start-up).
	Replay func() (apply func(argv [][]byte) error)
	// Synced is told that more of the AOF is on disk (AOF.Synced grew).
	Synced func()
	// UsedMemory is the server's used memory (an RDB file's used-mem).
	UsedMemory func() int64
	// DroppedGarbage is told that size bytes of heap just became garbage,
	// so the server can give a large amount back to the OS at once.
	DroppedGarbage func(size int64)
	// Latency reports how long a disk operation took to the latency
	// monitor, under Redis's event names (aof-write, aof-fsync-always ...);
	// "fork" is a background save's snapshot instant, the pause commands
	// see where Redis forks.
	Latency func(event string, took time.Duration)

	// ReplicationAux returns the AUX fields that let the data set, loaded
	// again, continue its replication history (repl-id, repl-offset,
	// repl-stream-db); none without one. It runs at a save's instant.
	// New gives a Host without it none, its own Instant, and a master's
	// IsReplica.
	ReplicationAux func() []string
	// Instant is held around a background snapshot's instant: a replica
	// holds it while it applies a command of its master's stream and
	// forwards its bytes, so that the snapshot never falls between the
	// two (the history's offset and the data agree).
	Instant *sync.Mutex
	// LoadedAux receives the AUX fields of the RDB file loaded at start-up,
	// LoadExpired each key it skipped because its time had passed.
	LoadedAux   func(name, value []byte)
	LoadExpired func(db int, key []byte)
	// IsReplica reports whether the server follows a master: it loads
	// expired keys as they are (the master's DELs remove them).
	IsReplica func() bool
}

// warn logs a line at warning level, as Redis logs what is wrong with a
// file, when the log knows levels (package internal/logging's).
func (h *Host) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if l, ok := h.Log.Writer().(interface{ LogLevel(level int, msg string) }); ok {
		l.LogLevel(3, msg) // Redis's LL_WARNING
		return
	}
	h.Log.Print(msg)
}

// snapshotTaken reports the snapshot instant that began at start.
func (h *Host) snapshotTaken(start time.Time) {
	if h.Latency != nil {
		h.Latency("fork", time.Since(start))
	}
}

// New returns the AOF and the snapshot saver of h's data set. They share
// h, and run one snapshot at a time.
func New(h *Host) (*AOF, *Saver) {
	if h.ReplicationAux == nil {
		h.ReplicationAux = func() []string { return nil }
	}
	if h.Instant == nil {
		h.Instant = new(sync.Mutex)
	}
	if h.IsReplica == nil {
		h.IsReplica = func() bool { return false }
	}
	a := &AOF{h: h}
	sv := &Saver{h: h, aof: a}
	a.saver = sv
	a.db = -1
	a.lastRewriteSec.Store(-1)
	sv.lastSave.Store(time.Now().Unix())
	sv.lastBgsaveOK.Store(true)
	sv.lastBgsaveSec.Store(-1)
	return a, sv
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

// leftTempFile reports whether name is one of the temporary files a save or
// a rewrite writes before renaming it (writeRDB, rewrite), left by a
// process that is gone: a crash leaves them behind, while those of a
// running process (this one, or another server sharing the directory) may
// be in use.
func leftTempFile(name string) bool {
	other := func(pid string) bool {
		n, err := strconv.ParseUint(pid, 10, 31)
		return err == nil && int(n) != os.Getpid() && processGone(int(n))
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

// RemoveTempFiles removes the temporary files a crashed save left in the
// configured dir.
func (sv *Saver) RemoveTempFiles() {
	dir := sv.h.Config.Dir()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if leftTempFile(e.Name()) && e.Type().IsRegular() {
			sv.h.Log.Printf("Removing the temporary file %s of an interrupted save", e.Name())
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
