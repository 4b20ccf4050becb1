package command

import (
	"github.com/keyhive/keyhive/internal/stream"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/values"
)

// Env is what the values package needs of the command: the encoding
// limits, its database and time, and its scratch buffers.
func (x *Ctx) Env() *values.Env {
	if x.values.Scratch != &x.scratch { // first use (or a copied Ctx)
		x.values.Limits, x.values.Scratch = x.host.Config(), &x.scratch
	}
	x.values.DB, x.values.Now = x.DB, x.Now
	return &x.values
}

// ReadAs looks key up for reading as a collection of V's type, replying
// WRONGTYPE (ok=false) for another type.
func ReadAs[V values.View](x *Ctx, key []byte) (v V, found, ok bool) {
	e, found, ok := x.ReadTyped(key, values.TypeOf[V]())
	if found && ok {
		v = values.ViewOf[V](&e)
		switch p := any(&v).(type) {
		case *values.HashView:
			p.Now = x.Now // fields expired by then are not seen
		case *values.SetView:
			p.Now = x.Now // nor members
			if x.membersDue(*p) {
				found = x.expireMembers(key)
				if found {
					e, _ = x.LookupWrite(key)
					*p = values.ViewSet(&e)
					p.Now = x.Now
				}
			}
		}
	}
	return v, found, ok
}

// membersDue reports whether the set s has members past their TTL that
// this server deletes (a replica waits for its master's SREM).
func (x *Ctx) membersDue(s values.SetView) bool {
	at := s.MinExpire()
	return at != 0 && at <= x.Now && !x.host.IsReplica()
}

// expireMembers deletes the members of the set at key past their TTL, as
// Redis does before a command reads or writes the set, each propagated as
// SREM, with one sexpired event (and del when that emptied it); it reports
// whether the key is still there.
func (x *Ctx) expireMembers(key []byte) bool {
	var s values.SetEdit
	e, found := x.LookupWrite(key)
	s.Begin(x.Env(), key, &e, found)
	if s.ExpireMembers(x.Now, func(m []byte) { x.Conn().ElementExpired(x, keyspace.TypeSet, key, m) }) == 0 {
		return true
	}
	c := s.Commit()
	x.Committed(c, "sexpired")
	return c.Outcome != values.Deleted
}

// EditAs looks key up for writing into ed, an edit of a collection type
// which the caller keeps on its stack (a missing key is an empty
// collection), replying WRONGTYPE and returning false for another type.
func EditAs[E values.Editor](x *Ctx, key []byte, ed E) bool {
	e, found := x.LookupWrite(key)
	if _, isSet := any(ed).(*values.SetEdit); isSet && found && e.Type() == keyspace.TypeSet && x.membersDue(values.ViewSet(&e)) {
		x.expireMembers(key)
		e, found = x.LookupWrite(key)
	}
	return EditAt(x, key, &e, found, ed)
}

// EditAt is EditAs on an entry already looked up.
func EditAt[E values.Editor](x *Ctx, key []byte, e *keyspace.Entry, found bool, ed E) bool {
	if !values.Begin(ed, x.Env(), key, e, found) {
		x.W.Error(ErrWrongType)
		return false
	}
	return true
}

// ReadStream looks key up for reading as a stream: nil when missing;
// ok=false after replying WRONGTYPE.
func (x *Ctx) ReadStream(key []byte) (s *stream.Stream, ok bool) {
	e, found, ok := x.ReadTyped(key, keyspace.TypeStream)
	if found && ok {
		s = values.EntryStream(&e)
	}
	return s, ok
}

// WriteStream looks key up for writing as a stream: nil when missing;
// ok=false after replying WRONGTYPE.
func (x *Ctx) WriteStream(key []byte) (e keyspace.Entry, s *stream.Stream, ok bool) {
	e, found := x.LookupWrite(key)
	if x.WrongType(&e, found, keyspace.TypeStream) {
		return e, nil, false
	}
	if found {
		s = values.EntryStream(&e)
	}
	return e, s, true
}
