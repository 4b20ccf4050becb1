package values

import "github.com/keyhive/keyhive/keyspace"

// View is the read view of a collection type, for code that looks the types
// up alike (a command's typed lookup).
type View interface {
	HashView | SetView | ListView | ZSetView
}

// TypeOf is the keyspace type V views.
func TypeOf[V View]() keyspace.Type {
	var v V
	switch any(v).(type) {
	case HashView:
		return keyspace.TypeHash
	case SetView:
		return keyspace.TypeSet
	case ListView:
		return keyspace.TypeList
	default:
		return keyspace.TypeZSet
	}
}

// ViewOf reads e, an entry of V's type. It switches on V's type rather than
// calling a method of the constraint: a call through the generic dictionary
// would move the caller's entry to the heap.
func ViewOf[V View](e *keyspace.Entry) (v V) {
	switch p := any(&v).(type) {
	case *HashView:
		*p = ViewHash(e)
	case *SetView:
		*p = ViewSet(e)
	case *ListView:
		*p = ViewList(e)
	case *ZSetView:
		*p = ViewZSet(e)
	}
	return v
}

// Editor is the edit of a collection type, which its caller keeps on its
// stack.
type Editor interface {
	*HashEdit | *SetEdit | *ListEdit | *ZSetEdit
}

// Begin starts ed, an edit of key looked up for writing as e (a missing key
// when not found), and reports true; for an entry of another type it starts
// nothing and reports false. It switches on ed's type for the reason ViewOf
// says.
func Begin[E Editor](ed E, env *Env, key []byte, e *keyspace.Entry, found bool) bool {
	switch ed := any(ed).(type) {
	case *HashEdit:
		if found && e.Type() != keyspace.TypeHash {
			return false
		}
		ed.Begin(env, key, e, found)
	case *SetEdit:
		if found && e.Type() != keyspace.TypeSet {
			return false
		}
		ed.Begin(env, key, e, found)
	case *ListEdit:
		if found && e.Type() != keyspace.TypeList {
			return false
		}
		ed.Begin(env, key, e, found)
	case *ZSetEdit:
		if found && e.Type() != keyspace.TypeZSet {
			return false
		}
		ed.Begin(env, key, e, found)
	}
	return true
}

// Len returns a collection's elements as INFO keysizes counts them, held
// compact (value) or as an object (obj, nil when compact): the keyspace's
// Hooks.Len. Types INFO keysizes does not show count 0.
func Len(t keyspace.Type, enc keyspace.Encoding, value []byte, obj keyspace.Object) int64 {
	switch o := obj.(type) {
	case *ListObject:
		return int64(o.Len())
	case *SetObject:
		return int64(o.Len())
	case *ZSetObject:
		return int64(o.Len())
	case *HashObject:
		return int64(o.Len())
	case nil:
		switch t {
		case keyspace.TypeList:
			return int64(ListView{LP: value}.Len())
		case keyspace.TypeSet:
			if enc == keyspace.EncIntset {
				return int64(SetView{Ints: value}.Len())
			}
			return int64(SetView{LP: value}.Len())
		case keyspace.TypeZSet:
			return int64(ZSetView{LP: value}.Len())
		case keyspace.TypeHash:
			return int64(HashView{LP: value}.Len())
		}
	}
	return 0
}
