package values

import (
	"github.com/keyhive/keyhive/internal/vset"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/persistence"
)

// VSetObject is a vector set stored as a keyspace object: one Go object
// per key, none per element (internal/vset keeps its elements in flat
// slices). It is changed in place.
type VSetObject struct{ *vset.Set }

func (o *VSetObject) Clone() keyspace.Object { return &VSetObject{o.Set.Clone()} }

// EntryVSet is a vector set entry's set.
func EntryVSet(e *keyspace.Entry) *vset.Set { return e.Object().(*VSetObject).Set }

// StoreVSet stores s as key's value (e looked up for writing, missing).
func StoreVSet(env *Env, e *keyspace.Entry, key []byte, s *vset.Set, expireAt int64) {
	env.DB.PutObject(e, key, keyspace.TypeVectorSet, keyspace.EncRaw, &VSetObject{s}, expireAt, env.Now)
}

// A vector set in files is a module value of Redis's module type name,
// vectorset, at Keyhive's encoding version, holding one field: the set's
// file form (internal/vset), graph included, so loading rebuilds nothing.
var vsetModuleID = persistence.ModuleID(keyspace.TypeVectorSet.Name(), persistence.KeyhiveEncVer)

// isVSet reports whether a loaded module value is a vector set.
func isVSet(v *persistence.Value) bool { return v.Module == vsetModuleID }
