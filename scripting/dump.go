package scripting

import (
	"encoding/binary"
	"errors"
	stdcrc64 "hash/crc64"
	"strconv"
)

// FUNCTION DUMP / RESTORE payloads are Redis's: for each library the RDB
// opcode FUNCTION2 and the code as an RDB string (LZF-compressed as Redis
// compresses it), then the RDB version (2 bytes, little endian) and a CRC64
// of everything before (8 bytes, little endian).
const (
	rdbOpcodeFunction  = 246 // Redis 7.0 release candidates
	rdbOpcodeFunction2 = 245
	rdbVersion         = 10

	rdbEncInt8  = 0
	rdbEncInt16 = 1
	rdbEncInt32 = 2
	rdbEncLZF   = 3
)

// RestorePolicy is FUNCTION RESTORE's policy argument.
type RestorePolicy int

const (
	RestoreAppend RestorePolicy = iota
	RestoreReplace
	RestoreFlush
)

var errBadPayload = errors.New("ERR DUMP payload version or checksum are wrong")

// DumpFunctions is FUNCTION DUMP's payload, libraries in name order.
func (e *Engine) DumpFunctions() []byte {
	var b []byte
	for _, lib := range e.Libraries() {
		b = append(b, rdbOpcodeFunction2)
		b = appendRDBString(b, lib.Code)
	}
	b = append(b, rdbVersion, 0)
	return binary.LittleEndian.AppendUint64(b, crc64(b))
}

// RestoreFunctions is FUNCTION RESTORE. The payload comes from outside and
// is parsed defensively: any inconsistency is an error, never a panic.
func (e *Engine) RestoreFunctions(payload []byte, policy RestorePolicy) error {
	if len(payload) < 10 {
		return errBadPayload
	}
	footer := payload[len(payload)-10:]
	if binary.LittleEndian.Uint16(footer) > rdbVersion || binary.LittleEndian.Uint64(footer[2:]) != crc64(payload[:len(payload)-8]) {
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
			if _, dup := restored.functions[fname]; dup {
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
	if len(b) == 0 || b[0] != rdbOpcodeFunction2 && b[0] != rdbOpcodeFunction {
		return nil, nil, errors.New("ERR given type is not a function")
	}
	if b[0] == rdbOpcodeFunction2 {
		code, rest, ok := readRDBString(b[1:])
		if !ok {
			return nil, nil, errors.New("ERR Failed loading library payload")
		}
		return code, rest, nil
	}
	fail := func(what string) ([]byte, []byte, error) {
		return nil, nil, errors.New("ERR Failed loading " + what)
	}
	name, rest, ok := readRDBString(b[1:])
	if !ok {
		return fail("library name")
	}
	engine, rest, ok := readRDBString(rest)
	if !ok {
		return fail("engine name")
	}
	hasDesc, encoded, rest, ok := readRDBLen(rest)
	if !ok || encoded {
		return fail("library description indicator")
	}
	if hasDesc != 0 {
		if _, rest, ok = readRDBString(rest); !ok {
			return fail("library description")
		}
	}
	body, rest, ok := readRDBString(rest)
	if !ok {
		return fail("library blob")
	}
	code = append([]byte("#!"+string(engine)+" name="+string(name)+" \n"), body...)
	return code, rest, nil
}

// appendRDBString is rdbSaveRawString with rdbcompression on: strings over
// 20 bytes are stored LZF-compressed when that saves at least 4 bytes.
// (Integer encoding only applies to strings of at most 11 bytes, shorter
// than any library's code.)
func appendRDBString(b, s []byte) []byte {
	if len(s) > 20 {
		if c := lzfCompress(s, len(s)-4); c != nil {
			b = append(b, 0xC0|rdbEncLZF)
			b = appendRDBLen(b, uint64(len(c)))
			b = appendRDBLen(b, uint64(len(s)))
			return append(b, c...)
		}
	}
	b = appendRDBLen(b, uint64(len(s)))
	return append(b, s...)
}

func appendRDBLen(b []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, byte(n>>8)|0x40, byte(n))
	case n <= 1<<32-1:
		return binary.BigEndian.AppendUint32(append(b, 0x80), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 0x81), n)
}

// readRDBLen returns a length, or an encoding type when encoded is set.
func readRDBLen(b []byte) (n uint64, encoded bool, rest []byte, ok bool) {
	if len(b) == 0 {
		return 0, false, nil, false
	}
	switch b[0] >> 6 {
	case 0:
		return uint64(b[0] & 0x3f), false, b[1:], true
	case 1:
		if len(b) < 2 {
			return 0, false, nil, false
		}
		return uint64(b[0]&0x3f)<<8 | uint64(b[1]), false, b[2:], true
	case 3:
		return uint64(b[0] & 0x3f), true, b[1:], true
	}
	switch b[0] {
	case 0x80:
		if len(b) < 5 {
			return 0, false, nil, false
		}
		return uint64(binary.BigEndian.Uint32(b[1:])), false, b[5:], true
	case 0x81:
		if len(b) < 9 {
			return 0, false, nil, false
		}
		return binary.BigEndian.Uint64(b[1:]), false, b[9:], true
	}
	return 0, false, nil, false
}

func readRDBString(b []byte) (s, rest []byte, ok bool) {
	n, encoded, b, ok := readRDBLen(b)
	if !ok {
		return nil, nil, false
	}
	if !encoded {
		if n > uint64(len(b)) {
			return nil, nil, false
		}
		return b[:n], b[n:], true
	}
	switch n {
	case rdbEncInt8, rdbEncInt16, rdbEncInt32:
		size := 1 << n
		if len(b) < size {
			return nil, nil, false
		}
		var v int64
		switch size {
		case 1:
			v = int64(int8(b[0]))
		case 2:
			v = int64(int16(binary.LittleEndian.Uint16(b)))
		default:
			v = int64(int32(binary.LittleEndian.Uint32(b)))
		}
		return strconv.AppendInt(nil, v, 10), b[size:], true
	case rdbEncLZF:
		clen, enc1, b, ok1 := readRDBLen(b)
		ulen, enc2, b, ok2 := readRDBLen(b)
		if !ok1 || !ok2 || enc1 || enc2 || clen > uint64(len(b)) || ulen > maxStringLen {
			return nil, nil, false
		}
		out, ok := lzfDecompress(b[:clen], int(ulen))
		if !ok {
			return nil, nil, false
		}
		return out, b[clen:], true
	}
	return nil, nil, false
}

// lzfCompress is liblzf 3.6's lzf_compress as Redis builds it (HLOG 16,
// VERY_FAST), so payloads are byte-identical to redis-server's. It returns
// nil when the output would not fit in outLen bytes. The hash table starts
// empty; offset 0 is never matched, a quirk of the original kept here.
func lzfCompress(in []byte, outLen int) []byte {
	const (
		hlog   = 16
		hsize  = 1 << hlog
		maxLit = 1 << 5
		maxOff = 1 << 13
		maxRef = 1<<8 + 1<<3
	)
	inLen := len(in)
	if inLen == 0 || outLen <= 0 {
		return nil
	}
	idx := func(h uint32) uint32 { return ((h >> (3*8 - hlog)) - h*5) & (hsize - 1) }
	htab := make([]uint32, hsize)
	out := make([]byte, outLen+4)
	ip, op, lit := 0, 1, 0
	hval := uint32(in[0])<<8 | uint32(in[1])
	for ip < inLen-2 {
		hval = hval<<8 | uint32(in[ip+2])
		slot := idx(hval)
		ref := int(htab[slot])
		htab[slot] = uint32(ip)
		off := ip - ref - 1
		if ref < ip && off < maxOff && ref > 0 && in[ref+2] == in[ip+2] && in[ref] == in[ip] && in[ref+1] == in[ip+1] {
			length := 2
			maxlen := inLen - ip - length
			if maxlen > maxRef {
				maxlen = maxRef
			}
			if op+3+1 >= outLen {
				notLit := 0
				if lit == 0 {
					notLit = 1
				}
				if op-notLit+3+1 >= outLen {
					return nil
				}
			}
			out[op-lit-1] = byte(lit - 1)
			if lit == 0 {
				op--
			}
			stopped := false
			if maxlen > 16 {
				for k := 0; k < 16; k++ {
					length++
					if in[ref+length] != in[ip+length] {
						stopped = true
						break
					}
				}
			}
			if !stopped {
				for {
					length++
					if !(length < maxlen && in[ref+length] == in[ip+length]) {
						break
					}
				}
			}
			length -= 2
			ip++
			if length < 7 {
				out[op] = byte(off>>8) + byte(length<<5)
				op++
			} else {
				out[op] = byte(off>>8) + 7<<5
				out[op+1] = byte(length - 7)
				op += 2
			}
			out[op] = byte(off)
			op++
			lit = 0
			op++
			ip += length + 1
			if ip >= inLen-2 {
				break
			}
			ip -= 2
			hval = uint32(in[ip])<<8 | uint32(in[ip+1])
			hval = hval<<8 | uint32(in[ip+2])
			htab[idx(hval)] = uint32(ip)
			ip++
			hval = hval<<8 | uint32(in[ip+2])
			htab[idx(hval)] = uint32(ip)
			ip++
			continue
		}
		if op >= outLen {
			return nil
		}
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == maxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	if op+3 > outLen {
		return nil
	}
	for ip < inLen {
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == maxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	out[op-lit-1] = byte(lit - 1)
	if lit == 0 {
		op--
	}
	return out[:op]
}

// lzfDecompress expands LZF data that must produce exactly n bytes.
func lzfDecompress(in []byte, n int) ([]byte, bool) {
	// A 3-byte back reference expands to at most 264 bytes, so a claimed
	// size beyond that ratio is corrupt: reject it before allocating.
	if n > 88*len(in)+32 {
		return nil, false
	}
	out := make([]byte, 0, n)
	for i := 0; i < len(in); {
		ctrl := int(in[i])
		i++
		if ctrl < 1<<5 {
			run := ctrl + 1
			if i+run > len(in) || len(out)+run > n {
				return nil, false
			}
			out = append(out, in[i:i+run]...)
			i += run
			continue
		}
		length := ctrl >> 5
		if length == 7 {
			if i >= len(in) {
				return nil, false
			}
			length += int(in[i])
			i++
		}
		if i >= len(in) {
			return nil, false
		}
		ref := len(out) - (ctrl&0x1f)<<8 - 1 - int(in[i])
		i++
		length += 2
		if ref < 0 || len(out)+length > n {
			return nil, false
		}
		for k := 0; k < length; k++ {
			out = append(out, out[ref+k])
		}
	}
	return out, len(out) == n
}

// crc64 is Redis's CRC-64 (Jones polynomial, reflected, no inversion).
// hash/crc64 inverts before and after, so the inversions are undone here.
func crc64(b []byte) uint64 {
	return ^stdcrc64.Update(^uint64(0), jonesTable, b)
}

var jonesTable = stdcrc64.MakeTable(0x95AC9329AC4BC9B5)
