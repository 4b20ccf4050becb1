package values

import "github.com/keyhive/keyhive/keyspace"

// Outcome is what writing a collection back did to its key.
type Outcome uint8

const (
	Unchanged Outcome = iota // nothing written (no change, or a missing key left empty)
	Stored                   // the collection was stored or changed in place
	Deleted                  // the collection was emptied and its key deleted
)

// Commit reports a committed edit to its caller, which emits the keyspace
// events (the type's event, then "del" when Deleted, in Redis's order).
type Commit struct {
	Key     []byte
	Type    keyspace.Type
	Outcome Outcome
}

// Edit is what an edit of any collection type shares: the environment, the
// entry looked up for writing, and how the result is stored back. Each
// type's edit embeds it next to its own view.
type Edit struct {
	env     *Env
	entry   keyspace.Entry
	key     []byte
	found   bool
	changed bool // the compact bytes changed, or the collection converted
}

func (c *Edit) begin(env *Env, key []byte, e *keyspace.Entry, found bool) {
	*c = Edit{env: env, entry: *e, key: key, found: found}
}

// Found reports whether the key existed when the edit began.
func (c *Edit) Found() bool { return c.found }

// Key is the edited key.
func (c *Edit) Key() []byte { return c.key }

// Entry is the entry the edit began from (its key's vacancy when not
// found).
func (c *Edit) Entry() *keyspace.Entry { return &c.entry }

// rebuilt records that the compact form was rebuilt into b, the buffer
// Scratch handed out last.
func (c *Edit) rebuilt(b []byte) {
	c.env.Scratch.Keep(b)
	c.changed = true
}

// writeBack writes a collection of n elements back, keeping the key's TTL:
// an empty one is deleted; a large one (obj) is stored when it is new or
// replaced the compact form; otherwise the compact bytes, when they changed.
func (c *Edit) writeBack(t keyspace.Type, n int, obj keyspace.Object, objEnc keyspace.Encoding, compact []byte, compactEnc keyspace.Encoding) Commit {
	db, now := c.env.DB, c.env.Now
	out := Stored
	switch {
	case n == 0:
		out = Unchanged
		if c.found {
			db.DeleteEntry(&c.entry)
			out = Deleted
		}
	case obj != nil:
		if !c.found || c.entry.Object() != obj {
			db.PutObject(&c.entry, c.key, t, objEnc, obj, c.entry.ExpireAt(), now)
		} else {
			db.ModifiedEntry(&c.entry) // changed in place
		}
	case !c.changed:
		out = Unchanged
	case c.found:
		db.Replace(&c.entry, compactEnc, compact, c.entry.ExpireAt(), now)
	default:
		db.Put(&c.entry, c.key, t, compactEnc, compact, 0, now)
	}
	return Commit{Key: c.key, Type: t, Outcome: out}
}

// replace stores a collection of n elements built apart from the keyspace
// at key (e looked up for writing), replacing any value and its expire
// time as Redis's setKey does: obj when non-nil, else the compact bytes.
// n == 0 deletes the key.
func replace(env *Env, e *keyspace.Entry, found bool, key []byte, t keyspace.Type, n int, obj keyspace.Object, objEnc keyspace.Encoding, compact []byte, compactEnc keyspace.Encoding) Commit {
	out := Stored
	switch {
	case n == 0:
		out = Unchanged
		if found {
			env.DB.DeleteEntry(e)
			out = Deleted
		}
	case obj != nil:
		env.DB.PutObject(e, key, t, objEnc, obj, 0, env.Now)
	default:
		env.DB.Put(e, key, t, compactEnc, compact, 0, env.Now)
	}
	return Commit{Key: key, Type: t, Outcome: out}
}
