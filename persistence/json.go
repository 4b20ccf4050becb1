package persistence

// JSON documents are stored as Redis 8 stores them: a module value
// (TypeModule2) of the type "ReJSON-RL", encoding version 3, whose data is
// one module string, the document's compact JSON text. Facts from the
// RDB format (module ids, module opcodes) and from RedisJSON's published
// sources (its type name, version and what its save writes).
//
// A module value is the module id (a length: 9 name characters of 6 bits
// each, then 10 bits of encoding version), then opcode-tagged items, then
// the EOF opcode.

// TypeJSON is a decoded JSON document's Value.Type (its Str holds the text).
const TypeJSON = 0xF0

const jsonTypeVersion = 3

var jsonModuleName = ModuleID("ReJSON-RL", 0) >> 10

// AppendJSONValue appends a JSON document's module value (after its type
// byte and key): the module id, the text as a module string, the end.
func (e *Encoder) AppendJSONValue(b, text []byte) []byte {
	return e.AppendModuleValue(b, ModuleID("ReJSON-RL", jsonTypeVersion), text)
}

// json decodes a JSON document's module value after its id (of version).
func (d *decoder) json(version uint64) (Value, error) {
	if version < 2 || version > jsonTypeVersion {
		return Value{}, errModule
	}
	if op, _ := d.length(); op != moduleOpString {
		d.fail("a JSON value's text is missing")
	}
	v := Value{Type: TypeJSON, Str: d.str()}
	if version == 2 { // an unsigned count of two strings that follow, old index data
		if op, _ := d.length(); op != moduleOpUint {
			d.fail("bad JSON value")
		}
		if n, _ := d.length(); n > 0 {
			for range 2 {
				if op, _ := d.length(); op != moduleOpString {
					d.fail("bad JSON value")
				}
				d.str()
			}
		}
	}
	if op, _ := d.length(); op != moduleOpEOF {
		d.fail("a JSON value does not end")
	}
	return v, nil
}
