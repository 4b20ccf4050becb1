package server

import (
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
)

// collectionEdit is what an edit of any collection type (hash, list, set,
// sorted set) shares: the entry looked up for writing, and how the result is
// stored back. Each family's edit embeds it next to its own view.
type collectionEdit struct {
	x       *Ctx
	e       keyspace.Entry
	key     []byte
	found   bool
	changed bool // the compact bytes changed, or the collection converted
	silent  bool // the caller emits the keyspace events itself
}

// begin starts an edit of key, already looked up for writing as e, as a
// collection of type t. It replies WRONGTYPE and returns false for another
// type.
func (c *collectionEdit) begin(x *Ctx, key []byte, e keyspace.Entry, found bool, t keyspace.Type) bool {
	*c = collectionEdit{x: x, key: key, e: e, found: found}
	return !x.wrongType(&c.e, found, t)
}

// writeBack writes the collection of n elements back, keeping the key's TTL: an
// empty one is deleted; a large one (obj) is stored when it is new or
// replaced the compact form; otherwise the compact bytes, when they changed.
// Then it emits the keyspace event of the change (none when event is empty)
// and "del" for a deleted key, in Redis's order.
func (c *collectionEdit) writeBack(t keyspace.Type, n int, large bool, obj keyspace.Object, objEnc keyspace.Encoding, compact []byte, compactEnc keyspace.Encoding, event string) {
	x := c.x
	switch {
	case n == 0:
		if c.found {
			x.DB.DeleteEntry(&c.e)
		}
	case large:
		if !c.found || c.e.Object() != obj {
			x.DB.PutObject(&c.e, c.key, t, objEnc, obj, c.e.ExpireAt(), x.Now)
		} else {
			x.DB.ModifiedEntry(&c.e) // changed in place
		}
	case !c.changed:
	case c.found:
		x.DB.Replace(&c.e, compactEnc, compact, c.e.ExpireAt(), x.Now)
	default:
		x.DB.Put(&c.e, c.key, t, compactEnc, compact, 0, x.Now)
	}
	c.notify(t, n, event)
}

func (c *collectionEdit) notify(t keyspace.Type, n int, event string) {
	if c.silent {
		return
	}
	if event != "" {
		c.x.notify(typeEvents[t], event, c.key)
	}
	if n == 0 && c.found {
		c.x.notify(notifyGeneric, "del", c.key)
	}
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

// storeCollection stores a collection of n elements built apart from the
// keyspace at key, replacing any value and its expire time as Redis's setKey
// does: obj when non-nil, else the compact bytes. n == 0 deletes key. It
// emits event for a store and "del" for a deletion, and reports whether the
// data set changed.
func (x *Ctx) storeCollection(key []byte, t keyspace.Type, n int, obj keyspace.Object, objEnc keyspace.Encoding, compact []byte, compactEnc keyspace.Encoding, event string) bool {
	e, found := x.lookupWrite(key)
	switch {
	case n == 0:
		if !found {
			return false
		}
		x.DB.DeleteEntry(&e)
		x.notify(notifyGeneric, "del", key)
		return true
	case obj != nil:
		x.DB.PutObject(&e, key, t, objEnc, obj, 0, x.Now)
	default:
		x.DB.Put(&e, key, t, compactEnc, compact, 0, x.Now)
	}
	x.notify(typeEvents[t], event, key)
	return true
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
