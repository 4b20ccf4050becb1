package persistence

import "strings"

// Module values (RDB type 7, Redis's module type 2): a 64-bit module type
// id, then the module's fields, each after an opcode, then an end opcode.
// Keyhive writes its own types this way (the probabilistic types of Redis
// 8's Bloom module), named as Redis names them, with one string field: the
// value's bytes in Keyhive's layout. Its encoding version, KeyhiveEncVer,
// is above any the Redis module writes, so a redis-server refuses such a
// file cleanly instead of misreading it; Keyhive reads only that version.
const (
	moduleOpEOF    = 0
	moduleOpString = 5
	// KeyhiveEncVer is the encoding version of the module values Keyhive writes.
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

// AppendModuleValue appends a Keyhive module value of type id (without the
// value type byte): the id, the bytes as one string field, the end.
func (e *Encoder) AppendModuleValue(b []byte, id uint64, value []byte) []byte {
	b = AppendLen(b, id)
	b = AppendLen(b, moduleOpString)
	b = e.AppendString(b, value)
	return AppendLen(b, moduleOpEOF)
}

// module reads a module value Keyhive wrote; another's is refused.
func (d *decoder) module() (Value, bool) {
	id, _ := d.length()
	if id&1023 != KeyhiveEncVer {
		return Value{}, false
	}
	if op, _ := d.length(); op != moduleOpString {
		d.fail("unexpected module field")
	}
	v := Value{Type: TypeModule2, Module: id, Str: d.str()}
	if op, _ := d.length(); op != moduleOpEOF {
		d.fail("unexpected module field")
	}
	return v, true
}
