package server

import (
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/values"
)

// Element expiration's server side (the commands are package family's):
// the active cycle's removal of expired hash fields and set members, and
// the HDEL or SREM that propagates each removal.

var (
	argHDEL = []byte("HDEL")
	argSREM = []byte("SREM")
)

// removalOf is the command that removes an element of a collection of
// type t.
func removalOf(t keyspace.Type) []byte {
	if t == keyspace.TypeSet {
		return argSREM
	}
	return argHDEL
}

// publishElementExpired propagates the removal of an expired element, at
// once, as an expired key's DEL is.
func (s *Server) publishElementExpired(db int, t keyspace.Type, key, element []byte) {
	if s.stream.Active() {
		s.stream.Publish(db, [][]byte{removalOf(t), key, element})
	}
}

// expireElements is the active cycle's work on a collection whose earliest
// element expiry passed (keyspace.ActiveSubexpire): its expired elements
// are deleted, each propagated, with one hexpired or sexpired event (and
// del when the collection emptied).
func (s *Server) expireElements(db *keyspace.DB, e *keyspace.Entry, now int64) {
	key, t := e.Key(), e.Type()
	env := &values.Env{Limits: s.cfg, DB: db, Now: now, Scratch: &s.fieldScratch}
	subkeys := &s.expiredFields
	subkeys.Reset()
	gather := t == keyspace.TypeHash && s.SubkeyEvents(notifyHash)
	publish := func(el []byte) {
		s.publishElementExpired(db.ID(), t, key, el)
		if gather {
			subkeys.Add(el)
		}
	}
	var (
		n     int
		c     values.Commit
		next  int64
		class = notifyHash
		event = "hexpired"
	)
	switch t {
	case keyspace.TypeHash:
		var h values.HashEdit
		h.Begin(env, key, e, true)
		n = h.ExpireFields(now, publish)
		c, next = h.Commit(), h.MinExpire()
	case keyspace.TypeSet:
		var set values.SetEdit
		set.Begin(env, key, e, true)
		n = set.ExpireMembers(now, publish)
		c, next = set.Commit(), set.MinExpire()
		class, event = notifySet, "sexpired"
	default:
		db.SetSubexpiry(key, 0)
		return
	}
	if c.Outcome != values.Deleted {
		db.SetSubexpiry(key, next) // exact after the expiry; 0 forgets the key
	}
	if n == 0 {
		return
	}
	s.notifyIn(nil, class, event, key, db.ID())
	s.notifySubkeysIn(nil, class, event, key, subkeys, db.ID())
	if c.Outcome == values.Deleted {
		s.notifyIn(nil, notifyGeneric, "del", key, db.ID())
	}
}
