package persistence

import (
	"errors"
	"strings"
)

// Module values (RDB type 7, Redis's module type 2): a 64-bit module type
// id (a type name of 9 characters, 6 bits each, then 10 bits of encoding
// version), then the module's fields, each after an opcode, then an end
// opcode. Two kinds are read and written:
//   - JSON documents as Redis 8 stores them (json.go);
//   - Keyhive's own types (the probabilistic types of Redis 8's Bloom
//     module), named as Redis names them, with one string field: the
//     value's bytes in Keyhive's layout. Their encoding version,
//     KeyhiveEncVer, is above any the Redis module writes, so a
//     redis-server refuses such a file cleanly instead of misreading it.
const (
	moduleOpEOF    = 0
	moduleOpUint   = 2
	moduleOpString = 5
	// KeyhiveEncVer is the encoding version of the module values Keyhive
	// writes in its own layout.
	KeyhiveEncVer = 1023
)

// moduleNameChars are the characters of a module type name, in the order
// that numbers them in a module type id.
const moduleNameChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// ModuleID is the id of the 9-character module type name at encoding
// version encver: six bits per character, then ten bits of version.
func ModuleID(name string, encver uint64) uint64 {
	var id uint64
	for i := range 9 {
		id = id<<6 | uint64(strings.IndexByte(moduleNameChars, name[i]))
	}
	return id<<10 | encver&1023
}

// AppendModuleValue appends a module value of type id with one string
// field (after the value's type byte and key): the id, the bytes, the end.
func (e *Encoder) AppendModuleValue(b []byte, id uint64, value []byte) []byte {
	b = AppendLen(b, id)
	b = AppendLen(b, moduleOpString)
	b = e.AppendString(b, value)
	return AppendLen(b, moduleOpEOF)
}

// errModule is a module value of a type Keyhive does not have.
var errModule = errors.New("module values are not supported")

// module decodes a TypeModule2 value: a JSON document, a value Keyhive
// wrote in its own layout, or errModule.
func (d *decoder) module() (Value, error) {
	id, _ := d.length()
	if id>>10 == jsonModuleName {
		return d.json(id & 1023)
	}
	if id&1023 != KeyhiveEncVer {
		return Value{}, errModule
	}
	if op, _ := d.length(); op != moduleOpString {
		d.fail("unexpected module field")
	}
	v := Value{Type: TypeModule2, Module: id, Str: d.str()}
	if op, _ := d.length(); op != moduleOpEOF {
		d.fail("unexpected module field")
	}
	return v, nil
}
