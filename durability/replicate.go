package durability

import (
	"bufio"
	"errors"
	"io"
	"time"

	"github.com/keyhive/keyhive/values"
)

// ErrStopped ends a replica's snapshot that waited until its replica left.
var ErrStopped = errors.New("replica gone before its snapshot began")

// Replicate writes the data set to w as an RDB file, for a replica's full
// resynchronization, from a point-in-time snapshot as BGSAVE's (writes
// continue meanwhile). atStart runs at the snapshot instant, under the
// exclusive lock, where the stream's offset is noted; it returns AUX fields
// for the file (repl-id, repl-offset, repl-stream-db). One snapshot runs at
// a time: it waits for a background save or AOF rewrite to end (or stop to
// close), and meanwhile BGSAVE answers that one is in progress, as Redis's
// does while its replication save runs.
func (sv *Saver) Replicate(w io.Writer, atStart func() []string, stop <-chan struct{}) error {
	for !sv.claimSnapshot() {
		select {
		case <-stop:
			return ErrStopped
		case <-time.After(10 * time.Millisecond):
		}
	}
	defer sv.bgsaving.Store(false)
	start := time.Now()
	sv.bgsaveStart.Store(start.UnixMilli())
	var functions []byte
	var aux []string
	encode := values.RecordEncoder(sv.h.Config, sv.h.Clock.UnixMilli())
	sv.h.Instant.Lock() // see Host.Instant
	snap := sv.h.Keyspace.BeginSnapshot(encode, func() {
		functions = sv.h.Functions(nil)
		aux = append(atStart(), schemaAux(sv.h.SchemaDefs())...)
	})
	sv.h.Instant.Unlock()
	sv.h.snapshotTaken(start)
	defer snap.End()
	release := saverThread(sv.h.Config)
	defer release()
	bw := bufio.NewWriterSize(w, 1<<20)
	sv.encodeRDB(bw, functions, snap.Keys, snap.Expires, snap.Shard, aux...)
	return bw.Flush()
}

// claimSnapshot takes the one snapshot for a replica when neither a
// background save nor an AOF rewrite runs.
func (sv *Saver) claimSnapshot() bool {
	if sv.aof.rewriting.Load() || !sv.bgsaving.CompareAndSwap(false, true) {
		return false
	}
	if sv.aof.rewriting.Load() { // began in between
		sv.bgsaving.Store(false)
		return false
	}
	return true
}
