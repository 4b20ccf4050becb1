package values

import (
	"math/rand/v2"
	"strconv"

	"github.com/keyhive/keyhive/internal/bytemap"
	"github.com/keyhive/keyhive/internal/intset"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
)

// SetObject is the large form of a set (OBJECT ENCODING hashtable): a bytemap
// whose values are empty. Sets of few integers are inline intsets instead.
type SetObject struct{ bytemap.Map }

func (s *SetObject) Clone() keyspace.Object { return &SetObject{*s.Map.Clone()} }

// SetView is a stored set in either form: Obj when a hashtable, else Ints,
// an intset encoding.
type SetView struct {
	Ints []byte
	Obj  *SetObject
}

// ViewSet reads a set entry.
func ViewSet(e *keyspace.Entry) SetView {
	if o := e.Object(); o != nil {
		return SetView{Obj: o.(*SetObject)}
	}
	return SetView{Ints: e.Value()}
}

func (s SetView) Len() int {
	if s.Obj != nil {
		return s.Obj.Len()
	}
	return intset.Len(s.Ints)
}

func (s SetView) Has(m []byte) bool {
	if s.Obj != nil {
		_, ok := s.Obj.Get(m)
		return ok
	}
	v, ok := strnum.ParseInt(m)
	return ok && intset.Contains(s.Ints, v)
}

// Each calls fn for every member: in ascending order for an intset, in table
// order for a hashtable. The member is valid only during the call.
func (s SetView) Each(fn func(m []byte)) {
	if s.Obj != nil {
		for p := s.Obj.Next(0); p >= 0; p = s.Obj.Next(p + 1) {
			m, _ := s.Obj.At(p)
			fn(m)
		}
		return
	}
	var buf [20]byte
	for i := range intset.Len(s.Ints) {
		fn(strconv.AppendInt(buf[:0], intset.At(s.Ints, i), 10))
	}
}

// Member returns the member at a position of a non-empty set: an index for an
// intset, a bytemap position otherwise. buf holds a formatted integer.
func (s SetView) Member(pos int, buf *[20]byte) []byte {
	if s.Obj != nil {
		m, _ := s.Obj.At(pos)
		return m
	}
	return strconv.AppendInt(buf[:0], intset.At(s.Ints, pos), 10)
}

// RandomPos returns a uniformly random position of a non-empty set.
func (s SetView) RandomPos() int {
	if s.Obj != nil {
		return s.Obj.RandomPos()
	}
	return rand.IntN(intset.Len(s.Ints))
}

// RandomDistinct calls fn for count distinct random members (count < Len).
func (s SetView) RandomDistinct(count int, fn func(m []byte)) {
	var buf [20]byte
	member := func(p int) { fn(s.Member(p, &buf)) }
	if s.Obj == nil {
		eachDistinct(count, s.Len(), func() []int { return indices(s.Len()) }, nil, member)
		return
	}
	eachDistinct(count, s.Len(), func() []int { return mapPositions(&s.Obj.Map) }, s.Obj.RandomPos, member)
}

func (s SetView) object() keyspace.Object {
	if s.Obj == nil {
		return nil
	}
	return s.Obj
}

// SetEdit is a set being changed: an intset rebuilt by each change, or the
// hashtable changed in place. Commit stores it.
type SetEdit struct {
	Edit
	SetView
}

// Begin starts an edit of key, looked up for writing as e (a set when found;
// a missing key is an empty intset). The caller keeps s on its stack.
func (s *SetEdit) Begin(env *Env, key []byte, e *keyspace.Entry, found bool) {
	*s = SetEdit{}
	s.begin(env, key, e, found)
	if found {
		s.SetView = ViewSet(&s.entry)
	}
}

// BeginNew starts a set that is built, not stored in place: a result of the
// set algebra, stored with StoreAt or only replied.
func (s *SetEdit) BeginNew(env *Env) { *s = SetEdit{Edit: Edit{env: env}} }

// convert turns an intset into a hashtable.
func (s *SetEdit) convert() {
	o := &SetObject{}
	s.Each(func(m []byte) { o.Set(m, nil) })
	s.Obj, s.Ints, s.changed = o, nil, true
}

// Add adds m, converting as Redis's setTypeAdd does, and reports whether it is
// new.
func (s *SetEdit) Add(m []byte) bool {
	if s.Obj == nil {
		v, ok := strnum.ParseInt(m)
		if ok {
			// Take a scratch buffer only for a change: the one not handed out
			// last may hold s.Ints.
			if intset.Contains(s.Ints, v) {
				return false
			}
			s.Ints, _ = intset.Add(s.env.Scratch.Next(), s.Ints, v)
			s.rebuilt(s.Ints)
			if int64(intset.Len(s.Ints)) > s.env.Limits.SetMaxIntsetEntries() {
				s.convert()
			}
			return true
		}
		s.convert()
	}
	return s.Obj.Set(m, nil)
}

// Remove removes m and reports whether it was present.
func (s *SetEdit) Remove(m []byte) bool {
	if s.Obj != nil {
		return s.Obj.Delete(m)
	}
	v, ok := strnum.ParseInt(m)
	if !ok || !intset.Contains(s.Ints, v) {
		return false
	}
	s.Ints, _ = intset.Remove(s.env.Scratch.Next(), s.Ints, v)
	s.rebuilt(s.Ints)
	return true
}

// ReplaceWith makes v, a set built apart, the edited set's contents.
func (s *SetEdit) ReplaceWith(v SetView) { s.SetView, s.changed = v, true }

// Commit stores the set; an emptied set is deleted.
func (s *SetEdit) Commit() Commit {
	return s.writeBack(keyspace.TypeSet, s.Len(), s.object(), keyspace.EncHashtable, s.Ints, keyspace.EncIntset)
}

// StoreAt stores a built set at key (e looked up for writing), replacing a
// value of any type and its expire time; an empty set deletes key.
func (s *SetEdit) StoreAt(e *keyspace.Entry, found bool, key []byte) Commit {
	return replace(s.env, e, found, key, keyspace.TypeSet, s.Len(), s.object(), keyspace.EncHashtable, s.Ints, keyspace.EncIntset)
}
