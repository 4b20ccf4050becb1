package server

import (
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
func (c *collectionEdit) writeBack(t keyspace.Type, n int, large bool, obj keyspace.Object, objEnc keyspace.Encoding, compact []byte, compactEnc keyspace.Encoding) {
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
			x.DB.Modified(c.key) // changed in place
		}
	case !c.changed:
	case c.found:
		x.DB.Replace(&c.e, compactEnc, compact, c.e.ExpireAt(), x.Now)
	default:
		x.DB.Put(&c.e, c.key, t, compactEnc, compact, 0, x.Now)
	}
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

// mpopKeys extracts the keys of [B]LMPOP and [B]ZMPOP, numkeys being
// args[at].
func mpopKeys(at int) func(args, dst [][]byte) [][]byte {
	return func(args, dst [][]byte) [][]byte {
		n, ok := strnum.ParseInt(args[at])
		if !ok || n < 1 || n >= int64(len(args)-at-1) {
			return dst
		}
		return append(dst, args[at+1:at+1+int(n)]...)
	}
}
