package values

import (
	"errors"

	"github.com/keyhive/keyhive/internal/array"
	"github.com/keyhive/keyhive/internal/prob"
	"github.com/keyhive/keyhive/internal/vset"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/persistence"
)

// The probabilistic types (internal/prob) in files: each value is written
// as a module value of Redis's module type name for it, its bytes in one
// field (persistence/module.go).

var probTypes = [...]keyspace.Type{keyspace.TypeBloom, keyspace.TypeCuckoo, keyspace.TypeCMS, keyspace.TypeTopK, keyspace.TypeTDigest}

// IsProb reports whether t is a probabilistic type.
func IsProb(t keyspace.Type) bool { return t >= keyspace.TypeBloom && t <= keyspace.TypeTDigest }

func probModuleID(t keyspace.Type) uint64 {
	return persistence.ModuleID(t.Name(), persistence.KeyhiveEncVer)
}

// errModule is a module value of no type Keyhive has.
var errModule = errors.New("module values are not supported")

// probValue checks a loaded module value and returns its type.
func probValue(v *persistence.Value) (keyspace.Type, error) {
	for _, t := range probTypes {
		if v.Module != probModuleID(t) {
			continue
		}
		var valid bool
		switch t {
		case keyspace.TypeBloom:
			valid = prob.ValidBloom(v.Str)
		case keyspace.TypeCuckoo:
			valid = prob.ValidCuckoo(v.Str)
		case keyspace.TypeCMS:
			valid = prob.ValidCMS(v.Str)
		case keyspace.TypeTopK:
			valid = prob.ValidTopK(v.Str)
		default:
			valid = prob.ValidTDigest(v.Str)
		}
		if !valid {
			return 0, persistence.ErrBadData
		}
		return t, nil
	}
	return 0, errModule
}

// Restorable reports whether Restore can store v: a module value must be
// a whole value of one of Keyhive's types (other values were checked as
// they decoded).
func Restorable(v *persistence.Value) bool {
	if v.Type != persistence.TypeModule2 {
		return true
	}
	if isVSet(v) {
		_, err := vset.ReadFile(v.Str)
		return err == nil
	}
	if isArray(v) {
		_, err := array.ReadFile(v.Str)
		return err == nil
	}
	if v.Module == setTTLModuleID {
		set, err := readSetTTLFile(v.Str)
		return err == nil && !set.HasDuplicates()
	}
	_, err := probValue(v)
	return err == nil
}
