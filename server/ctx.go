package server

import "github.com/keyhive/keyhive/keyspace"

// setDB switches the client's database.
func (c *Client) setDB(i int) { c.db.Store(int32(i)) }

// Client returns the handler's client, for connection-level commands.
func (x *Ctx) Client() *Client { return x.c }

// touch reports whether a read updates access clocks: not under CLIENT
// NO-TOUCH, nor under an LRM policy, whose clocks only writes set.
func (x *Ctx) touch() bool { return !x.c.noTouch.Load() && !x.s.evict.lrm.Load() }

// lookupRead finds key for reading, counting a keyspace hit or miss (and
// notifying a miss).
func (x *Ctx) lookupRead(key []byte) (keyspace.Entry, bool) {
	return x.lookupReadTouch(key, x.touch())
}

// lookupReadTouch is lookupRead for commands that look at a key without
// touching its access clock (EXISTS, TYPE, TTL) when touch is false.
func (x *Ctx) lookupReadTouch(key []byte, touch bool) (keyspace.Entry, bool) {
	e, ok := x.DB.LookupIn(&x.locks, key, x.Now, touch)
	if ok {
		x.c.traffic.hits.add(1)
	} else {
		x.c.traffic.misses.add(1)
		x.notify(notifyKeyMiss, "keymiss", key)
	}
	if t := x.s.schema.Load(); t != nil {
		if ok {
			t.Hit(x.DB.ID(), key, touch)
		} else {
			t.Miss(x.DB.ID(), key)
		}
	}
	return e, ok
}

// wrongType replies WRONGTYPE and reports true when a found entry is not of
// type t.
func (x *Ctx) wrongType(e *keyspace.Entry, found bool, t keyspace.Type) bool {
	if found && e.Type() != t {
		x.W.Error(errWrongType)
		return true
	}
	return false
}

// readTyped finds key for reading as type t; ok=false means another type
// (WRONGTYPE was replied), found=false no key.
func (x *Ctx) readTyped(key []byte, t keyspace.Type) (e keyspace.Entry, found, ok bool) {
	e, found = x.lookupRead(key)
	return e, found, !x.wrongType(&e, found, t)
}

// lookupWrite finds key for modification (no hit/miss accounting).
func (x *Ctx) lookupWrite(key []byte) (keyspace.Entry, bool) {
	return x.DB.LookupIn(&x.locks, key, x.Now, true)
}
