package values

import (
	"github.com/keyhive/keyhive/internal/array"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/persistence"
)

// ArrayObject is an array stored as a keyspace object: one Go object per
// key, none per element (internal/array keeps its elements in pages and a
// slab). It is changed in place.
type ArrayObject struct{ *array.Array }

func (o *ArrayObject) Clone() keyspace.Object { return &ArrayObject{o.Array.Clone()} }

// EntryArray is an array entry's array.
func EntryArray(e *keyspace.Entry) *array.Array { return e.Object().(*ArrayObject).Array }

// StoreArray stores a as key's value (e looked up for writing, missing).
func StoreArray(env *Env, e *keyspace.Entry, key []byte, a *array.Array, expireAt int64) {
	env.DB.PutObject(e, key, keyspace.TypeArray, keyspace.EncSlicedArray, &ArrayObject{a}, expireAt, env.Now)
}

// An array in files is a module value of Keyhive's own type name at
// Keyhive's encoding version, holding one field: the array's file form
// (internal/array). Redis 8.8 writes arrays as an RDB type of its own whose
// layout it does not document; a redis-server refuses Keyhive's form
// cleanly (an unknown module type) rather than misreading it.
var arrayModuleID = persistence.ModuleID("KH-array-", persistence.KeyhiveEncVer)

// isArray reports whether a loaded module value is an array.
func isArray(v *persistence.Value) bool { return v.Module == arrayModuleID }
