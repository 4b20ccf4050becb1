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
		if h, isHash := any(&v).(*values.HashView); isHash {
			h.Now = x.Now // fields expired by then are not seen
		}
	}
	return v, found, ok
}

// EditAs looks key up for writing into ed, an edit of a collection type
// which the caller keeps on its stack (a missing key is an empty
// collection), replying WRONGTYPE and returning false for another type.
func EditAs[E values.Editor](x *Ctx, key []byte, ed E) bool {
	e, found := x.LookupWrite(key)
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
