package server

import "github.com/keyhive/keyhive/keyspace"

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
