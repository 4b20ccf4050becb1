package values

import (
	"math/rand/v2"
	"strconv"

	"github.com/keyhive/keyhive/internal/bytemap"
	"github.com/keyhive/keyhive/internal/intset"
	"github.com/keyhive/keyhive/internal/quicklist"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
)

// SetObject is the large form of a set (OBJECT ENCODING hashtable): a bytemap
// whose values are empty. Small sets are inline: an intset of few integers,
// or a listpack (Redis 7.2's form for a few short strings).
//
// ttl holds the members' expire times, nil when none has one (setttl.go).
type SetObject struct {
	bytemap.Map
	ttl *fieldTTLs
}

func (s *SetObject) Clone() keyspace.Object {
	c := &SetObject{Map: *s.Map.Clone()}
	if s.ttl != nil {
		c.ttl = &fieldTTLs{Map: *s.ttl.Map.Clone(), min: s.ttl.min}
	}
	return c
}

// MemoryBytes is the memory the members and their expire times hold.
func (s *SetObject) MemoryBytes() int {
	n := s.Map.MemoryBytes()
	if s.ttl != nil {
		n += s.ttl.MemoryBytes()
	}
	return n
}

// SetView is a stored set in one of Redis's three forms: Obj when a
// hashtable; LP when a listpack, a packed node (internal/quicklist) of the
// members in the order they were added; else Ints, an intset encoding.
// Reads skip the members expired at Now (setttl.go).
type SetView struct {
	Ints []byte
	LP   []byte
	Obj  *SetObject
	Now  int64
}

// ViewSet reads a set entry.
func ViewSet(e *keyspace.Entry) SetView {
	if o := e.Object(); o != nil {
		return SetView{Obj: o.(*SetObject)}
	}
	if e.Encoding() == keyspace.EncListpack {
		return SetView{LP: e.Value()}
	}
	return SetView{Ints: e.Value()}
}

func (s SetView) Len() int {
	switch {
	case s.mayHoldExpired():
		return s.Obj.Len() - s.expiredCount()
	case s.Obj != nil:
		return s.Obj.Len()
	case s.LP != nil:
		return quicklist.Count(s.LP)
	}
	return intset.Len(s.Ints)
}

func (s SetView) Has(m []byte) bool {
	switch {
	case s.Obj != nil:
		_, ok := s.Obj.Get(m)
		return ok && !(s.mayHoldExpired() && s.memberExpired(m))
	case s.LP != nil:
		return quicklist.Find(s.LP, m) >= 0
	}
	v, ok := strnum.ParseInt(m)
	return ok && intset.Contains(s.Ints, v)
}

// Each calls fn for every member: in ascending order for an intset, in the
// order added for a listpack, in table order for a hashtable. The member is
// valid only during the call.
func (s SetView) Each(fn func(m []byte)) {
	switch {
	case s.mayHoldExpired():
		for p := s.Obj.Next(0); p >= 0; p = s.Obj.Next(p + 1) {
			if m, _ := s.Obj.At(p); !s.memberExpired(m) {
				fn(m)
			}
		}
	case s.Obj != nil:
		for p := s.Obj.Next(0); p >= 0; p = s.Obj.Next(p + 1) {
			m, _ := s.Obj.At(p)
			fn(m)
		}
	case s.LP != nil:
		quicklist.Each(s.LP, 0, false, func(m []byte) bool {
			fn(m)
			return true
		})
	default:
		var buf [20]byte
		for i := range intset.Len(s.Ints) {
			fn(strconv.AppendInt(buf[:0], intset.At(s.Ints, i), 10))
		}
	}
}

// Member returns the member at a position of a non-empty set: an index for an
// intset or a listpack, a bytemap position otherwise. buf holds a formatted
// integer.
func (s SetView) Member(pos int, buf *[20]byte) []byte {
	switch {
	case s.Obj != nil:
		m, _ := s.Obj.At(pos)
		return m
	case s.LP != nil:
		return quicklist.Index(s.LP, pos)
	}
	return strconv.AppendInt(buf[:0], intset.At(s.Ints, pos), 10)
}

// RandomPos returns a uniformly random position of a non-empty set.
func (s SetView) RandomPos() int {
	if s.Obj != nil {
		p := s.Obj.RandomPos()
		for s.mayHoldExpired() && s.memberExpired(s.Member(p, nil)) { // a replica's, not yet removed
			p = s.Obj.RandomPos()
		}
		return p
	}
	return rand.IntN(s.Len())
}

// RandomDistinct calls fn for count distinct random members (count < Len).
func (s SetView) RandomDistinct(count int, fn func(m []byte)) {
	switch {
	case s.Obj != nil:
		member := func(p int) { m, _ := s.Obj.At(p); fn(m) }
		eachDistinct(count, s.Len(), s.livePositions, s.RandomPos, member)
	case s.LP != nil:
		// By byte offset: an index would walk the listpack for each member.
		eachDistinct(count, s.Len(), func() []int { return quicklist.Offsets(s.LP) }, nil, func(off int) { fn(quicklist.ElemAt(s.LP, off)) })
	default:
		var buf [20]byte
		eachDistinct(count, s.Len(), func() []int { return indices(s.Len()) }, nil, func(p int) { fn(s.Member(p, &buf)) })
	}
}

func (s SetView) object() keyspace.Object {
	if s.Obj == nil {
		return nil
	}
	return s.Obj
}

// SetEdit is a set being changed: an intset or listpack rebuilt by each
// change, or the hashtable changed in place. Commit stores it.
type SetEdit struct {
	Edit
	SetView
}

// Begin starts an edit of key, looked up for writing as e (a set when found;
// a missing key is an empty intset until Expect says otherwise). The caller
// keeps s on its stack.
func (s *SetEdit) Begin(env *Env, key []byte, e *keyspace.Entry, found bool) {
	*s = SetEdit{}
	s.begin(env, key, e, found)
	if found {
		s.SetView = ViewSet(&s.entry)
	}
	s.Now = env.Now
}

// BeginNew starts a set that is built, not stored in place: a result of the
// set algebra, stored with StoreAt or only replied. It starts as an empty
// intset, as Redis's results do.
func (s *SetEdit) BeginNew(env *Env) { *s = SetEdit{Edit: Edit{env: env}} }

// BeginNewLike starts a set built from members drawn from v, as Redis's
// SPOP rebuilds the set that stays: an intset from an intset, else a
// listpack, which converts as members are added.
func (s *SetEdit) BeginNewLike(env *Env, v SetView) {
	s.BeginNew(env)
	if v.Ints == nil {
		s.LP = quicklist.Empty
	}
}

// Expect prepares the set for n members, the first of them first, as Redis
// picks a set's encoding from a command's number of members (SADD's
// setTypeCreate and setTypeMaybeConvert, SMOVE's): a new set is an intset
// when first is an integer and n fits one, else a listpack when n fits one,
// else a hashtable; a stored set whose form n would overflow becomes a
// hashtable at once, whether or not the members are new.
func (s *SetEdit) Expect(first []byte, n int) {
	lim := s.env.Limits
	switch {
	case s.Len() == 0 && s.Obj == nil:
		if _, isInt := strnum.ParseInt(first); isInt && int64(n) <= lim.SetMaxIntsetEntries() {
			return
		}
		if int64(n) <= lim.SetMaxListpackEntries() {
			s.LP = quicklist.Empty
			return
		}
		s.Obj, s.Ints, s.LP, s.changed = &SetObject{}, nil, nil, true
	case s.LP != nil && int64(n) > lim.SetMaxListpackEntries(),
		s.Obj == nil && s.LP == nil && int64(n) > lim.SetMaxIntsetEntries():
		s.toHashtable()
	}
}

// toHashtable turns an intset or a listpack into a hashtable.
func (s *SetEdit) toHashtable() {
	o := &SetObject{}
	s.Each(func(m []byte) { o.Set(m, nil) })
	s.Obj, s.Ints, s.LP, s.changed = o, nil, nil, true
}

// Add adds m, converting as Redis's setTypeAdd does, and reports whether it is
// new: an intset takes integers up to set-max-intset-entries (then a
// hashtable); a listpack takes up to set-max-listpack-entries members of
// up to set-max-listpack-value bytes (then a hashtable); a string makes an
// intset a listpack when one would hold it and the intset's integers.
func (s *SetEdit) Add(m []byte) bool {
	lim := s.env.Limits
	switch {
	case s.Obj != nil:
		return s.Obj.Set(m, nil)
	case s.LP != nil:
		if quicklist.Find(s.LP, m) >= 0 {
			return false
		}
		if int64(quicklist.Count(s.LP)) >= lim.SetMaxListpackEntries() || int64(len(m)) > lim.SetMaxListpackValue() {
			s.toHashtable()
			return s.Obj.Set(m, nil)
		}
		// A scratch buffer only for a change: the one not handed out last
		// may hold s.LP.
		s.LP = quicklist.Append(append(s.env.Scratch.Next(), s.LP...), m)
		s.rebuilt(s.LP)
		return true
	}
	v, ok := strnum.ParseInt(m)
	if ok {
		if intset.Contains(s.Ints, v) {
			return false
		}
		s.Ints, _ = intset.Add(s.env.Scratch.Next(), s.Ints, v)
		s.rebuilt(s.Ints)
		if int64(intset.Len(s.Ints)) > lim.SetMaxIntsetEntries() {
			s.toHashtable()
		}
		return true
	}
	n := intset.Len(s.Ints)
	if int64(n) < lim.SetMaxListpackEntries() && int64(max(len(m), s.longestInt())) <= lim.SetMaxListpackValue() {
		lp := append(s.env.Scratch.Next(), quicklist.Empty...)
		s.Each(func(i []byte) { lp = quicklist.Append(lp, i) })
		s.LP, s.Ints = quicklist.Append(lp, m), nil
		s.rebuilt(s.LP)
		return true
	}
	s.toHashtable()
	return s.Obj.Set(m, nil)
}

// load adds the members of a set a file or payload holds, reporting false
// for a duplicate. A saved listpack stays one while its members fit
// set-max-listpack-entries, however long they are, as Redis loads it;
// other sets are built as SADD builds them.
func (s *SetEdit) load(members [][]byte, listpack bool) bool {
	if !listpack || int64(len(members)) > s.env.Limits.SetMaxListpackEntries() {
		for _, m := range members {
			if !s.Add(m) {
				return false
			}
		}
		return true
	}
	lp := append(s.env.Scratch.Next(), quicklist.Empty...)
	for _, m := range members {
		if quicklist.Find(lp, m) >= 0 {
			return false
		}
		lp = quicklist.Append(lp, m)
	}
	s.LP = lp
	s.rebuilt(lp)
	return true
}

// longestInt is the length of an intset's longest member as text: its
// smallest or its largest.
func (s SetView) longestInt() int {
	n := intset.Len(s.Ints)
	if n == 0 {
		return 0
	}
	var buf [20]byte
	return max(len(strconv.AppendInt(buf[:0], intset.At(s.Ints, 0), 10)), len(strconv.AppendInt(buf[:0], intset.At(s.Ints, n-1), 10)))
}

// Remove removes m and reports whether it was present.
func (s *SetEdit) Remove(m []byte) bool {
	switch {
	case s.Obj != nil:
		if s.Obj.ttl != nil {
			s.Obj.ttl = s.Obj.ttl.with(m, 0)
		}
		return s.Obj.Delete(m)
	case s.LP != nil:
		i := quicklist.Find(s.LP, m)
		if i < 0 {
			return false
		}
		s.LP = quicklist.Splice(s.env.Scratch.Next(), s.LP, i, i+1)
		s.rebuilt(s.LP)
		return true
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

// compact is the inline form's bytes and encoding.
func (s *SetEdit) compact() ([]byte, keyspace.Encoding) {
	if s.LP != nil {
		return s.LP, keyspace.EncListpack
	}
	return s.Ints, keyspace.EncIntset
}

// Commit stores the set; an emptied set is deleted.
func (s *SetEdit) Commit() Commit {
	b, enc := s.compact()
	c := s.writeBack(keyspace.TypeSet, s.Len(), s.object(), keyspace.EncHashtable, b, enc)
	s.ttlAfterCommit(c)
	return c
}

// StoreAt stores a built set at key (e looked up for writing), replacing a
// value of any type and its expire time; an empty set deletes key.
func (s *SetEdit) StoreAt(e *keyspace.Entry, found bool, key []byte) Commit {
	b, enc := s.compact()
	return replace(s.env, e, found, key, keyspace.TypeSet, s.Len(), s.object(), keyspace.EncHashtable, b, enc)
}
