package values

import (
	"github.com/keyhive/keyhive/internal/quicklist"
	"github.com/keyhive/keyhive/keyspace"
)

// ListObject is the large form of a list, stored as a keyspace object. A
// small list is one packed node inline in its entry instead. Redis 7.0 calls
// both "quicklist".
type ListObject struct{ quicklist.List }

func (l *ListObject) Clone() keyspace.Object { return &ListObject{*l.List.Clone()} }

// ListView is a stored list in either form: Obj when large, else LP.
type ListView struct {
	LP  []byte
	Obj *ListObject
}

// ViewList reads a list entry.
func ViewList(e *keyspace.Entry) ListView {
	if o := e.Object(); o != nil {
		return ListView{Obj: o.(*ListObject)}
	}
	return ListView{LP: e.Value()}
}

func (l ListView) Len() int {
	if l.Obj != nil {
		return l.Obj.Len()
	}
	return quicklist.Count(l.LP)
}

// Index returns element i (0 <= i < Len).
func (l ListView) Index(i int) []byte {
	if l.Obj != nil {
		return l.Obj.Index(i)
	}
	return quicklist.Index(l.LP, i)
}

// Each calls fn on the elements from element i (0 <= i < Len) on, forward or
// backward, until fn returns false.
func (l ListView) Each(i int, backward bool, fn func(e []byte) bool) {
	if l.Obj != nil {
		l.Obj.Each(i, backward, fn)
		return
	}
	quicklist.Each(l.LP, i, backward, fn)
}

func (l ListView) object() keyspace.Object {
	if l.Obj == nil {
		return nil
	}
	return l.Obj
}

// ListEdit is a list being changed: a packed node rebuilt by each change, or
// the large form changed in place. Commit stores it.
type ListEdit struct {
	Edit
	fill int
	ListView
}

// Begin starts an edit of key, looked up for writing as e (a list when
// found; a missing key is an empty list). The caller keeps l on its stack.
func (l *ListEdit) Begin(env *Env, key []byte, e *keyspace.Entry, found bool) {
	*l = ListEdit{fill: env.Limits.ListMaxListpackSize()}
	l.begin(env, key, e, found)
	if found {
		l.ListView = ViewList(&l.entry)
	} else {
		l.LP = quicklist.Empty
	}
}

// BeginNew starts a list that is built apart from the keyspace and stored
// with StoreAt.
func (l *ListEdit) BeginNew(env *Env) { l.Begin(env, nil, &keyspace.Entry{}, false) }

// splice replaces the elements [i, j) of the packed node by ins, converting
// it to the large form past the fill limit.
func (l *ListEdit) splice(i, j int, ins ...[]byte) {
	l.LP = quicklist.Splice(l.env.Scratch.Next(), l.LP, i, j, ins...)
	l.rebuilt(l.LP)
	if !quicklist.Fits(l.fill, len(l.LP), quicklist.Count(l.LP)) {
		l.Obj = &ListObject{*quicklist.FromPacked(l.fill, l.LP)}
		l.LP = nil
	}
}

// Push adds e at the head or the tail.
func (l *ListEdit) Push(head bool, e []byte) {
	switch {
	case l.Obj != nil && head:
		l.Obj.PushFront(l.fill, e)
	case l.Obj != nil:
		l.Obj.PushBack(l.fill, e)
	case head:
		l.splice(0, 0, e)
	default:
		n := l.Len()
		l.splice(n, n, e)
	}
}

// Insert inserts e before element i (0 <= i <= Len).
func (l *ListEdit) Insert(i int, e []byte) {
	if l.Obj != nil {
		l.Obj.Insert(l.fill, i, e)
		return
	}
	l.splice(i, i, e)
}

// Set replaces element i (0 <= i < Len) with e.
func (l *ListEdit) Set(i int, e []byte) {
	if l.Obj != nil {
		l.Obj.Set(l.fill, i, e)
		return
	}
	l.splice(i, i+1, e)
}

// Trim keeps the elements [start, stop) (0 <= start <= stop <= Len).
func (l *ListEdit) Trim(start, stop int) {
	n := l.Len()
	switch {
	case start == 0 && stop == n:
	case l.Obj != nil:
		l.Obj.Trim(start, stop)
	default:
		if stop < n {
			l.splice(stop, n)
		}
		if start > 0 {
			l.splice(0, start)
		}
	}
}

// Filter removes the elements keep rejects, in order from the head, and
// returns how many it removed.
func (l *ListEdit) Filter(keep func(e []byte) bool) int {
	if l.Obj != nil {
		return l.Obj.Filter(keep)
	}
	var removed int
	l.LP, removed = quicklist.Filter(l.env.Scratch.Next(), l.LP, keep)
	l.env.Scratch.Keep(l.LP)
	l.changed = l.changed || removed > 0
	return removed
}

// Commit stores the list; an emptied list is deleted, and a large one that
// shrank to half the fill limit is stored inline again.
func (l *ListEdit) Commit() Commit {
	if l.Obj != nil && l.Len() > 0 {
		if b, small := l.Obj.Small(l.fill); small {
			l.LP, l.Obj, l.changed = b, nil, true
		}
	}
	// Redis 7.0 calls both forms quicklist.
	return l.writeBack(keyspace.TypeList, l.Len(), l.object(), keyspace.EncQuicklist, l.LP, keyspace.EncQuicklist)
}

// StoreAt stores a built list at key (e looked up for writing), replacing a
// value of any type and its expire time; an empty list deletes key.
func (l *ListEdit) StoreAt(e *keyspace.Entry, found bool, key []byte) Commit {
	return replace(l.env, e, found, key, keyspace.TypeList, l.Len(), l.object(), keyspace.EncQuicklist, l.LP, keyspace.EncQuicklist)
}
