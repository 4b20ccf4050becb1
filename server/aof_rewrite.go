package server

import (
	"bufio"
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

// aofItemsPerCommand is how many elements one rebuilding command carries,
// as Redis's AOF_REWRITE_ITEMS_PER_CMD.
const aofItemsPerCommand = 64

// beginDataSnapshot starts a snapshot of the data set for an AOF base;
// atStart runs at the snapshot instant, under the exclusive lock. write
// writes the base to path; end finishes the snapshot.
func (s *Server) beginDataSnapshot(asRDB bool, atStart func()) (write func(path string) error, end func()) {
	now := s.clock.UnixMilli()
	encode := s.recordEncoder(now)
	if !asRDB {
		encode = aofRecordEncoder(now)
	}
	var functions []byte
	snap := s.ks.BeginSnapshot(encode, func() {
		if asRDB {
			enc := s.encoder()
			functions = s.scripts.AppendFunctions(nil, enc)
			s.rdb.encoders.Put(enc)
		} else {
			for _, lib := range s.scripts.Libraries() {
				functions = resp.AppendCommand(functions, [][]byte{[]byte("FUNCTION"), []byte("LOAD"), lib.Code})
			}
		}
		atStart()
	})
	snap.KeyDelay = time.Duration(s.cfg.RDBKeySaveDelay()) * time.Microsecond
	write = func(path string) error {
		defer s.saverThread()()
		if asRDB {
			return s.writeRDB(path, true, functions, snap.Keys, snap.Expires, snap.Shard)
		}
		return writeCommandsBase(path, functions, snap)
	}
	return write, snap.End
}

// writeCommandsBase writes a base of commands: the functions, then each
// database's keys after a SELECT.
func writeCommandsBase(path string, functions []byte, snap *keyspace.Snapshot) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.Write(functions)
	var records []byte
	for db := range snap.Keys {
		if snap.Keys[db] == 0 {
			continue
		}
		w.Write(resp.AppendCommand(nil, [][]byte{[]byte("SELECT"), strconv.AppendInt(nil, int64(db), 10)}))
		for sh := range keyspace.Shards {
			records = snap.Shard(records[:0], db, sh)
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

// aofRecordEncoder appends the commands that rebuild a key.
func aofRecordEncoder(now int64) func(b []byte, e *keyspace.Entry) []byte {
	return func(b []byte, e *keyspace.Entry) []byte {
		if at := e.ExpireAt(); at != 0 && at <= now {
			return b
		}
		b = appendRebuild(b, e)
		return b
	}
}

// appendRebuild appends the commands that recreate e: SET, RPUSH, SADD,
// ZADD or HMSET in batches, a stream's commands, then PEXPIREAT for a TTL, as Redis's rewrite.
func appendRebuild(b []byte, e *keyspace.Entry) []byte {
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
		if len(batch) >= aofItemsPerCommand*len(items) {
			flush(verb)
		}
	}
	switch e.Type() {
	case keyspace.TypeString:
		b = resp.AppendCommand(b, [][]byte{[]byte("SET"), key, e.Value()})
	case keyspace.TypeList:
		values.ViewList(e).Each(0, false, func(v []byte) bool {
			add("RPUSH", v)
			return true
		})
		flush("RPUSH")
	case keyspace.TypeSet:
		values.ViewSet(e).Each(func(m []byte) { add("SADD", m) })
		flush("SADD")
	case keyspace.TypeZSet:
		z := values.ViewZSet(e)
		z.Each(0, z.Len(), false, func(m []byte, score float64) {
			add("ZADD", resp.AppendDouble(nil, score), m)
		})
		flush("ZADD")
	case keyspace.TypeHash:
		values.ViewHash(e).Each(func(f, v []byte) { add("HMSET", f, v) })
		flush("HMSET")
	case keyspace.TypeStream:
		b = values.AppendStreamRebuild(b, key, values.EntryStream(e))
	}
	if at := e.ExpireAt(); at != 0 {
		b = resp.AppendCommand(b, [][]byte{[]byte("PEXPIREAT"), key, strconv.AppendInt(nil, at, 10)})
	}
	return b
}
