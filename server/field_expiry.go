package server

import (
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/values"
)

// Hash field expiration's server side (the commands are package family's):
// the active cycle's removal of expired fields and the HDEL that
// propagates each removal.

var argHDEL = []byte("HDEL")

// publishFieldExpired propagates the removal of an expired field (HDEL),
// at once, as an expired key's DEL is.
func (s *Server) publishFieldExpired(db int, key, field []byte) {
	if s.stream.Active() {
		s.stream.Publish(db, [][]byte{argHDEL, key, field})
	}
}

// expireHashFields is the active cycle's work on a hash whose earliest
// field expiry passed (keyspace.ActiveSubexpire): its expired fields are
// deleted, each propagated as HDEL, with one hexpired event (and del when
// the hash emptied).
func (s *Server) expireHashFields(db *keyspace.DB, e *keyspace.Entry, now int64) {
	key := e.Key()
	if e.Type() != keyspace.TypeHash {
		db.SetSubexpiry(key, 0)
		return
	}
	env := &values.Env{Limits: s.cfg, DB: db, Now: now, Scratch: &s.fieldScratch}
	var h values.HashEdit
	h.Begin(env, key, e, true)
	n := h.ExpireFields(now, func(f []byte) { s.publishFieldExpired(db.ID(), key, f) })
	c := h.Commit()
	if c.Outcome != values.Deleted {
		db.SetSubexpiry(key, h.MinExpire()) // exact after ExpireFields; 0 forgets the key
	}
	if n == 0 {
		return
	}
	s.notifyIn(nil, notifyHash, "hexpired", key, db.ID())
	if c.Outcome == values.Deleted {
		s.notifyIn(nil, notifyGeneric, "del", key, db.ID())
	}
}
