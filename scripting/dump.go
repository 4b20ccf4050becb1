package scripting

import (
	"errors"

	"github.com/keyhive/keyhive/persistence"
)

// FUNCTION DUMP / RESTORE payloads are Redis's: for each library the RDB
// opcode FUNCTION2 and the code as an RDB string (LZF-compressed as Redis
// compresses it), then the RDB version (2 bytes, little endian) and a CRC64
// of everything before (8 bytes, little endian).

// RestorePolicy is FUNCTION RESTORE's policy argument.
type RestorePolicy int

const (
	RestoreAppend RestorePolicy = iota
	RestoreReplace
	RestoreFlush
)

var errBadPayload = errors.New("ERR DUMP payload version or checksum are wrong")

// AppendFunctions appends every library as an RDB FUNCTION2 record (its
// code as an RDB string), in name order: FUNCTION DUMP's payload and the
// functions section of an RDB file.
func (e *Engine) AppendFunctions(b []byte, enc *persistence.Encoder) []byte {
	for _, lib := range e.Libraries() {
		b = append(b, persistence.OpFunction2)
		b = enc.AppendString(b, lib.Code)
	}
	return b
}

// DumpFunctions is FUNCTION DUMP's payload, libraries in name order.
func (e *Engine) DumpFunctions() []byte {
	return persistence.AppendDumpFooter(e.AppendFunctions(nil, &persistence.Encoder{Compress: true}))
}

// RestoreFunctions is FUNCTION RESTORE. The payload comes from outside and
// is parsed defensively: any inconsistency is an error, never a panic.
func (e *Engine) RestoreFunctions(payload []byte, policy RestorePolicy) error {
	if !persistence.ValidPayloadFooter(payload) {
		return errBadPayload
	}
	// Like Redis, read libraries while the position is before the footer;
	// a string may run into it.
	rest := payload
	restored := newLibraries()
	for len(payload)-len(rest) < len(payload)-10 {
		code, next, err := readLibraryRecord(rest)
		if err != nil {
			return err
		}
		rest = next
		name, _, err := libraryMetadata(code)
		if err != nil {
			return err
		}
		if _, dup := restored.byName[name]; dup {
			return errors.New("ERR Library '" + name + "' already exists")
		}
		lib, err := e.createLibrary(code)
		if err != nil {
			return err
		}
		for fname := range lib.Functions {
			if _, dup := restored.functions[functionKey(fname)]; dup {
				return errors.New("ERR Function " + fname + " already exists")
			}
		}
		restored.link(lib)
	}
	e.cacheMu.Lock()
	defer e.cacheMu.Unlock()
	if policy == RestoreFlush {
		e.libs = restored
		return nil
	}
	return e.libs.join(restored, policy == RestoreReplace)
}

// readLibraryRecord reads one library: FUNCTION2 holds its code; the
// FUNCTION opcode of Redis 7.0's release candidates holds name, engine,
// optional description and body, converted to a shebang as Redis does.
func readLibraryRecord(b []byte) (code, rest []byte, err error) {
	if len(b) == 0 || b[0] != persistence.OpFunction2 && b[0] != persistence.OpFunction {
		return nil, nil, errors.New("ERR given type is not a function")
	}
	if b[0] == persistence.OpFunction2 {
		code, rest, ok := persistence.ReadString(b[1:])
		if !ok {
			return nil, nil, errors.New("ERR Failed loading library payload")
		}
		return code, rest, nil
	}
	fail := func(what string) ([]byte, []byte, error) {
		return nil, nil, errors.New("ERR Failed loading " + what)
	}
	name, rest, ok := persistence.ReadString(b[1:])
	if !ok {
		return fail("library name")
	}
	engine, rest, ok := persistence.ReadString(rest)
	if !ok {
		return fail("engine name")
	}
	hasDesc, encoded, rest, ok := persistence.ReadLen(rest)
	if !ok || encoded {
		return fail("library description indicator")
	}
	if hasDesc != 0 {
		if _, rest, ok = persistence.ReadString(rest); !ok {
			return fail("library description")
		}
	}
	body, rest, ok := persistence.ReadString(rest)
	if !ok {
		return fail("library blob")
	}
	code = append([]byte("#!"+string(engine)+" name="+string(name)+" \n"), body...)
	return code, rest, nil
}
