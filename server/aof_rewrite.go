package server

import (
	"strconv"

	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/resp"
	"github.com/keyhive/keyhive/values"
)

// An AOF base without the RDB preamble (package durability) is the
// commands that rebuild each key.

// aofItemsPerCommand is how many elements one rebuilding command carries,
// as Redis's AOF_REWRITE_ITEMS_PER_CMD.
const aofItemsPerCommand = 64

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
