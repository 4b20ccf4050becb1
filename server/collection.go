package server

import (
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/internal/stream"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/values"
)

// env is what the values package needs of the command: the encoding
// limits, its database and time, and its scratch buffers.
func (x *Ctx) env() values.Env {
	return values.Env{Limits: x.s.cfg, DB: x.DB, Now: x.Now, Scratch: &x.scratch}
}

// committed emits the keyspace events of a committed edit in Redis's order:
// event (none when empty), then "del" when the edit emptied the key.
func (x *Ctx) committed(c values.Commit, event string) {
	if event != "" {
		x.notify(typeEvents[c.Type], event, c.Key)
	}
	if c.Outcome == values.Deleted {
		x.notify(notifyGeneric, "del", c.Key)
	}
}

// stored emits the keyspace events of a collection stored over key (a STORE
// command's result): event for a store, "del" for a deletion. It reports
// whether the data set changed.
func (x *Ctx) stored(c values.Commit, event string) bool {
	switch c.Outcome {
	case values.Deleted:
		x.notify(notifyGeneric, "del", c.Key)
	case values.Stored:
		x.notify(typeEvents[c.Type], event, c.Key)
	}
	return c.Outcome != values.Unchanged
}

// typeEvents is the keyspace event class of each type's commands.
var typeEvents = [...]config.KeyspaceEvents{
	keyspace.TypeString: notifyString,
	keyspace.TypeList:   notifyList,
	keyspace.TypeSet:    notifySet,
	keyspace.TypeZSet:   notifyZset,
	keyspace.TypeHash:   notifyHash,
	keyspace.TypeStream: notifyStream,
}

// readHash looks key up for reading as a hash, replying WRONGTYPE (ok=false)
// for another type.
func (x *Ctx) readHash(key []byte) (h values.HashView, found, ok bool) {
	e, found, ok := x.readTyped(key, keyspace.TypeHash)
	if found && ok {
		h = values.ViewHash(&e)
	}
	return h, found, ok
}

// editHash looks key up for writing as a hash into h, which the caller keeps
// on its stack (a missing key is an empty hash), replying WRONGTYPE and
// returning false for another type.
func (x *Ctx) editHash(key []byte, h *values.HashEdit) bool {
	e, found := x.lookupWrite(key)
	if x.wrongType(&e, found, keyspace.TypeHash) {
		return false
	}
	h.Begin(x.env(), key, e, found)
	return true
}

// readSet looks key up for reading as a set, replying WRONGTYPE (ok=false) for
// another type.
func (x *Ctx) readSet(key []byte) (s values.SetView, found, ok bool) {
	e, found, ok := x.readTyped(key, keyspace.TypeSet)
	if found && ok {
		s = values.ViewSet(&e)
	}
	return s, found, ok
}

// editSet looks key up for writing as a set into s, which the caller keeps on
// its stack (a missing key is an empty intset), replying WRONGTYPE and
// returning false for another type.
func (x *Ctx) editSet(key []byte, s *values.SetEdit) bool {
	e, found := x.lookupWrite(key)
	if x.wrongType(&e, found, keyspace.TypeSet) {
		return false
	}
	s.Begin(x.env(), key, e, found)
	return true
}

// readList looks key up for reading as a list, replying WRONGTYPE (ok=false)
// for another type.
func (x *Ctx) readList(key []byte) (l values.ListView, found, ok bool) {
	e, found, ok := x.readTyped(key, keyspace.TypeList)
	if found && ok {
		l = values.ViewList(&e)
	}
	return l, found, ok
}

// editList looks key up for writing as a list into l, which the caller keeps
// on its stack (a missing key is an empty list), replying WRONGTYPE and
// returning false for another type.
func (x *Ctx) editList(key []byte, l *values.ListEdit) bool {
	e, found := x.lookupWrite(key)
	return x.editListAt(key, e, found, l)
}

// editListAt is editList on an entry already looked up.
func (x *Ctx) editListAt(key []byte, e keyspace.Entry, found bool, l *values.ListEdit) bool {
	if x.wrongType(&e, found, keyspace.TypeList) {
		return false
	}
	l.Begin(x.env(), key, e, found)
	return true
}

// readZSet looks key up for reading as a sorted set, replying WRONGTYPE
// (ok=false) for another type.
func (x *Ctx) readZSet(key []byte) (z values.ZSetView, found, ok bool) {
	e, found, ok := x.readTyped(key, keyspace.TypeZSet)
	if found && ok {
		z = values.ViewZSet(&e)
	}
	return z, found, ok
}

// editZSet looks key up for writing as a sorted set into z, which the caller
// keeps on its stack (a missing key is an empty set), replying WRONGTYPE and
// returning false for another type.
func (x *Ctx) editZSet(key []byte, z *values.ZSetEdit) bool {
	e, found := x.lookupWrite(key)
	if x.wrongType(&e, found, keyspace.TypeZSet) {
		return false
	}
	z.Begin(x.env(), key, e, found)
	return true
}

// readStream looks key up for reading as a stream: nil when missing;
// ok=false after replying WRONGTYPE.
func (x *Ctx) readStream(key []byte) (s *stream.Stream, ok bool) {
	e, found, ok := x.readTyped(key, keyspace.TypeStream)
	if found && ok {
		s = values.EntryStream(&e)
	}
	return s, ok
}

// writeStream looks key up for writing as a stream: nil when missing;
// ok=false after replying WRONGTYPE.
func (x *Ctx) writeStream(key []byte) (e keyspace.Entry, s *stream.Stream, ok bool) {
	e, found := x.lookupWrite(key)
	if x.wrongType(&e, found, keyspace.TypeStream) {
		return e, nil, false
	}
	if found {
		s = values.EntryStream(&e)
	}
	return e, s, true
}

// parseMPOP parses what LMPOP, ZMPOP and their blocking forms take after the
// timeout: numkeys key [key ...] END [COUNT count], END being first or second
// (LEFT or RIGHT, MIN or MAX). It reports whether END was first.
func (x *Ctx) parseMPOP(args [][]byte, first, second string) (keys [][]byte, atFirst bool, count int64, ok bool) {
	n, isInt := strnum.ParseInt(args[0])
	if !isInt || n < 1 {
		x.W.Error("ERR numkeys should be greater than 0")
		return nil, false, 0, false
	}
	if n >= int64(len(args)-1) { // no room for the keys and END
		x.W.Error(errSyntax)
		return nil, false, 0, false
	}
	keys = args[1 : 1+n]
	switch end := args[1+n]; {
	case cArgIs(end, first):
		atFirst = true
	case cArgIs(end, second):
	default:
		x.W.Error(errSyntax)
		return nil, false, 0, false
	}
	count = -1
	for j := 2 + int(n); j < len(args); j++ {
		if count != -1 || !cArgIs(args[j], "count") || j+1 >= len(args) {
			x.W.Error(errSyntax)
			return nil, false, 0, false
		}
		j++
		if count, isInt = strnum.ParseInt(args[j]); !isInt || count < 1 {
			x.W.Error("ERR count should be greater than 0")
			return nil, false, 0, false
		}
	}
	return keys, atFirst, max(count, 1), true
}
