package family

import (
	"math"

	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
)

// What the probabilistic families (bloom.go, cuckoo.go, cms.go, topk.go,
// tdigest.go) share. Each value is one flat byte string (internal/prob)
// stored as its entry's value, changed in place and resized when it grows;
// none has a Go object. Their commands propagate as they are: every choice
// a structure makes follows from its bytes and the arguments. Their
// keyspace events are of the generic class, named after the command, as
// Redis 8's module raises them.

// probLookup finds key for writing as type t; ok=false after WRONGTYPE.
func probLookup(x *command.Ctx, key []byte, t keyspace.Type) (e keyspace.Entry, found, ok bool) {
	e, found = x.LookupWrite(key)
	return e, found, !x.WrongType(&e, found, t)
}

// probExists is BF.EXISTS and CF.EXISTS (one item), or BF.MEXISTS and
// CF.MEXISTS (many, an array): whether each item may be in the filter read
// finds at the key (false for a missing key).
func probExists[F interface{ Exists([]byte) bool }](read func(*command.Ctx, []byte) (F, bool, bool), many bool) func(*command.Ctx) {
	return func(x *command.Ctx) {
		f, found, ok := read(x, x.Args[1])
		if !ok {
			return
		}
		if !many {
			x.W.Bool(found && f.Exists(x.Args[2]))
			return
		}
		x.W.Array(len(x.Args) - 2)
		for _, item := range x.Args[2:] {
			x.W.Bool(found && f.Exists(item))
		}
	}
}

// probCreate stores a new value of type t and size bytes (zeros) under key,
// missing as e, and returns its bytes to lay out.
func probCreate(x *command.Ctx, e *keyspace.Entry, key []byte, t keyspace.Type, size int) []byte {
	return x.DB.PutSized(e, key, t, keyspace.EncRaw, size, 0, x.Now)
}

// probGrow extends e's value by n bytes of zeros, keeping its bytes, and
// returns the value.
func probGrow(x *command.Ctx, e *keyspace.Entry, n int) []byte {
	return x.DB.Resize(e, keyspace.EncRaw, len(e.Value())+n, x.Now)
}

// probChanged counts a change made in place to e's value and raises event.
func probChanged(x *command.Ctx, e *keyspace.Entry, event string) {
	x.DB.ModifiedEntry(e)
	probEvent(x, e.Key(), event)
}

func probEvent(x *command.Ctx, key []byte, event string) {
	x.Dirty++
	x.Notify(config.EventGeneric, event, key)
}

// replyDouble writes f as Redis 8's modules do: %.17g, inf, -inf and nan,
// a bulk string in RESP2 and a double in RESP3.
func replyDouble(x *command.Ctx, f float64) {
	if !math.IsNaN(f) {
		x.W.Double(f)
		return
	}
	if x.W.Proto >= 3 {
		x.W.B = append(x.W.B, ",nan\r\n"...)
		return
	}
	x.W.BulkString("nan")
}

// parseInt reads a whole-argument integer.
func parseInt(b []byte) (int64, bool) { return strnum.ParseInt(b) }

// parseDouble reads a double as Redis's modules read one (no NaN).
func parseDouble(b []byte) (float64, bool) {
	f, ok := strnum.ParseFloat(b)
	return f, ok && !math.IsNaN(f)
}
