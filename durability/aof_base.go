package durability

import (
	"bufio"
	"github.com/keyhive/keyhive/namespace"
	"os"
	"strconv"
	"time"

	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/resp"
	"github.com/keyhive/keyhive/values"
)

// An AOF base is the data set at a snapshot instant (keyspace/snapshot.go:
// a key's record is kept before a writer changes it), written as an RDB
// file (aof-use-rdb-preamble) or as the commands that rebuild it.

var (
	functionArg, loadArg    = []byte("FUNCTION"), []byte("LOAD")
	namespaceArg, defineArg = []byte("NAMESPACE"), []byte("DEFINE")
)

// beginSnapshot starts a snapshot of the data set for an AOF base;
// atStart runs at the snapshot instant, under the exclusive lock. write
// writes the base to path, skipping the shards left once cancelled reports
// true; end finishes the snapshot.
func (a *AOF) beginSnapshot(asRDB bool, cancelled func() bool, atStart func()) (write func(path string) error, end func()) {
	h := a.h
	now := h.Clock.UnixMilli()
	encode := values.RecordEncoder(h.Config, now)
	if !asRDB {
		encode = values.RebuildEncoder(now)
	}
	var functions []byte
	var schema []namespace.Def
	began := time.Now()
	snap := h.Keyspace.BeginSnapshot(encode, func() {
		schema = h.SchemaDefs()
		if asRDB {
			functions = h.Functions(nil)
		} else {
			for _, code := range h.FunctionCode() {
				functions = resp.AppendCommand(functions, [][]byte{functionArg, loadArg, code})
			}
		}
		atStart()
	})
	h.snapshotTaken(began)
	snap.KeyDelay = time.Duration(h.Config.RDBKeySaveDelay()) * time.Microsecond
	shard := func(b []byte, db, i int) []byte {
		if cancelled() {
			return b // End clears what is left
		}
		return snap.Shard(b, db, i)
	}
	write = func(path string) error {
		defer saverThread(h.Config)()
		if asRDB {
			return a.saver.writeRDB(path, true, schemaAux(schema), functions, snap.Keys, snap.Expires, shard, nil)
		}
		return writeCommandsBase(path, functions, schema, snap.Keys, shard)
	}
	return write, func() {
		snap.End()
		a.lastRewritePeak.Store(snap.PeakExtra())
	}
}

// writeCommandsBase writes a base of commands: the functions, then each
// database's keys after a SELECT.
func writeCommandsBase(path string, functions []byte, schema []namespace.Def, keys []int64, shard func(b []byte, db, shard int) []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.Write(functions)
	for i := range schema {
		argv := [][]byte{namespaceArg, defineArg}
		for _, a := range schema[i].Args() {
			argv = append(argv, []byte(a))
		}
		w.Write(resp.AppendCommand(nil, argv))
	}
	var records []byte
	for db := range keys {
		if keys[db] == 0 {
			continue
		}
		w.Write(resp.AppendCommand(nil, [][]byte{selectArg, strconv.AppendInt(nil, int64(db), 10)}))
		for sh := range keyspace.Shards {
			records = shard(records[:0], db, sh)
			w.Write(records)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
