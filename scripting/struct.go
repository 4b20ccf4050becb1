package scripting

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The struct library (Roberto Ierusalimschy's struct.c as Redis ships it):
// pack/unpack/size of binary records, with C sizes of an x86-64 build.

const (
	structMaxIntSize = 32
	structMaxAlign   = 8
)

type structHeader struct {
	little bool
	align  int
}

func openStruct(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("pack", L.NewFunction(structPack))
	t.RawSetString("unpack", L.NewFunction(structUnpack))
	t.RawSetString("size", L.NewFunction(structSize))
	return t
}

// structFormat walks a format string, which ends at its first NUL as a C
// string does.
type structFormat struct {
	L   *lua.LState
	fmt string
	h   structHeader
}

func newStructFormat(L *lua.LState, fname string) *structFormat {
	f := checkString(L, 1, fname)
	if i := strings.IndexByte(f, 0); i >= 0 {
		f = f[:i]
	}
	return &structFormat{L: L, fmt: f, h: structHeader{little: true, align: 1}}
}

func (f *structFormat) more() bool { return f.fmt != "" }

func (f *structFormat) getnum(def int) int {
	if f.fmt == "" || f.fmt[0] < '0' || f.fmt[0] > '9' {
		return def
	}
	a := 0
	for f.fmt != "" && f.fmt[0] >= '0' && f.fmt[0] <= '9' {
		d := int(f.fmt[0] - '0')
		if a > math.MaxInt32/10 || a*10 > math.MaxInt32-d {
			f.L.RaiseError("integral size overflow")
		}
		a = a*10 + d
		f.fmt = f.fmt[1:]
	}
	return a
}

// next returns the next option and its size (optsize).
func (f *structFormat) next() (byte, int) {
	opt := f.fmt[0]
	f.fmt = f.fmt[1:]
	switch opt {
	case 'b', 'B', 'x':
		return opt, 1
	case 'h', 'H':
		return opt, 2
	case 'l', 'L', 'T', 'd':
		return opt, 8
	case 'f':
		return opt, 4
	case 'c':
		return opt, f.getnum(1)
	case 'i', 'I':
		sz := f.getnum(4)
		if sz > structMaxIntSize {
			f.L.RaiseError("integral size %d is larger than limit of %d", sz, structMaxIntSize)
		}
		return opt, sz
	}
	return opt, 0
}

func (f *structFormat) toAlign(pos, opt, size int) int {
	if size == 0 || opt == 'c' {
		return 0
	}
	size = min(size, f.h.align)
	return (size - (pos & (size - 1))) & (size - 1)
}

// control handles endianness, alignment and spaces; anything else is an
// invalid option.
func (f *structFormat) control(opt byte, fname string) {
	switch opt {
	case ' ':
	case '>':
		f.h.little = false
	case '<':
		f.h.little = true
	case '!':
		a := f.getnum(structMaxAlign)
		if a == 0 || a&(a-1) != 0 {
			f.L.RaiseError("alignment %d is not a power of 2", a)
		}
		f.h.align = a
	default:
		argError(f.L, 1, fname, fmt.Sprintf("invalid format option '%c'", opt))
	}
}

func structPack(L *lua.LState) int {
	f := newStructFormat(L, "pack")
	L.Push(lua.LNil) // struct.c's mark: a missing first value reads as nil, not "no value"
	arg := 2
	var b []byte
	for f.more() {
		opt, size := f.next()
		for n := f.toAlign(len(b), int(opt), size); n > 0; n-- {
			b = append(b, 0)
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			b = appendStructInt(b, checkNumber(L, arg, "pack"), f.h.little, size)
			arg++
		case 'x':
			b = append(b, 0)
		case 'f':
			bits := math.Float32bits(float32(checkNumber(L, arg, "pack")))
			arg++
			b = appendOrdered32(b, bits, f.h.little)
		case 'd':
			bits := math.Float64bits(checkNumber(L, arg, "pack"))
			arg++
			if f.h.little {
				b = binary.LittleEndian.AppendUint64(b, bits)
			} else {
				b = binary.BigEndian.AppendUint64(b, bits)
			}
		case 'c', 's':
			s := checkString(L, arg, "pack")
			arg++
			if size == 0 {
				size = len(s)
			}
			if len(s) < size {
				argError(L, arg, "pack", "string too short") // sic: Redis reports the next argument
			}
			b = append(b, s[:size]...)
			if opt == 's' {
				b = append(b, 0)
			}
		default:
			f.control(opt, "pack")
		}
		if len(b) > maxStringLen {
			L.RaiseError(errNoMemory)
		}
	}
	L.Push(lua.LString(b))
	return 1
}

func appendOrdered32(b []byte, v uint32, little bool) []byte {
	if little {
		return binary.LittleEndian.AppendUint32(b, v)
	}
	return binary.BigEndian.AppendUint32(b, v)
}

// appendStructInt is putinteger: the number as a 64-bit two's complement
// value, written in size bytes (zeros beyond 8).
func appendStructInt(b []byte, n float64, little bool, size int) []byte {
	var v uint64
	switch {
	case n < 0:
		v = uint64(toInt64(n))
	case n < 1<<63:
		v = uint64(n)
	case n < 1<<64:
		v = uint64(n-(1<<63)) | 1<<63
	default:
		v = 1 << 63 // the x86-64 result of an out-of-range conversion
	}
	buf := make([]byte, size)
	for i := 0; i < size; i++ {
		idx := i
		if !little {
			idx = size - 1 - i
		}
		buf[idx] = byte(v)
		v >>= 8
	}
	return append(b, buf...)
}

func structInt(data []byte, little, signed bool, size int) float64 {
	var l uint64
	for i := 0; i < size; i++ {
		idx := i
		if little {
			idx = size - 1 - i
		}
		l = l<<8 | uint64(data[idx])
	}
	if !signed {
		return float64(l)
	}
	mask := ^uint64(0) << ((size*8 - 1) & 63) // C's shift wraps its count on x86-64
	if l&mask != 0 {
		l |= mask
	}
	return float64(int64(l))
}

func structUnpack(L *lua.LState) int {
	f := newStructFormat(L, "unpack")
	data := checkString(L, 2, "unpack")
	start := optInt(L, 3, "unpack", 1)
	if start <= 0 {
		argError(L, 3, "unpack", "offset must be 1 or greater")
	}
	pos := uint64(start - 1)
	ld := uint64(len(data))
	n := 0
	for f.more() {
		opt, size := f.next()
		pos += uint64(f.toAlign(int(pos), int(opt), size))
		if uint64(size) > ld || pos > ld-uint64(size) {
			argError(L, 2, "unpack", "data string too short")
		}
		if n >= luaStackLimit-10 {
			L.RaiseError("stack overflow (too many results)")
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			signed := opt >= 'a'
			L.Push(lua.LNumber(structInt([]byte(data[pos:pos+uint64(size)]), f.h.little, signed, size)))
			n++
		case 'x':
		case 'f':
			var bits uint32
			if f.h.little {
				bits = binary.LittleEndian.Uint32([]byte(data[pos:]))
			} else {
				bits = binary.BigEndian.Uint32([]byte(data[pos:]))
			}
			L.Push(lua.LNumber(math.Float32frombits(bits)))
			n++
		case 'd':
			var bits uint64
			if f.h.little {
				bits = binary.LittleEndian.Uint64([]byte(data[pos:]))
			} else {
				bits = binary.BigEndian.Uint64([]byte(data[pos:]))
			}
			L.Push(lua.LNumber(math.Float64frombits(bits)))
			n++
		case 'c':
			if size == 0 {
				prev, ok := L.Get(-1).(lua.LNumber)
				if n == 0 || !ok {
					L.RaiseError("format 'c0' needs a previous size")
				}
				L.Pop(1)
				n--
				size = int(uint64(toInt64(float64(prev))))
				if size < 0 || uint64(size) > ld || pos > ld-uint64(size) {
					argError(L, 2, "unpack", "data string too short")
				}
			}
			L.Push(lua.LString(data[pos : pos+uint64(size)]))
			n++
		case 's':
			e := strings.IndexByte(data[pos:], 0)
			if e < 0 {
				L.RaiseError("unfinished string in data")
			}
			size = e + 1
			L.Push(lua.LString(data[pos : pos+uint64(e)]))
			n++
		default:
			f.control(opt, "unpack")
		}
		pos += uint64(size)
	}
	L.Push(lua.LNumber(float64(pos + 1)))
	return n + 1
}

func structSize(L *lua.LState) int {
	f := newStructFormat(L, "size")
	pos := 0
	for f.more() {
		opt, size := f.next()
		pos += f.toAlign(pos, int(opt), size)
		switch {
		case opt == 's':
			argError(L, 1, "size", "option 's' has no fixed size")
		case opt == 'c' && size == 0:
			argError(L, 1, "size", "option 'c0' has no fixed size")
		case !isAlnum(opt):
			f.control(opt, "size") // letters without a size are ignored here
		}
		pos += size
		if pos > maxStringLen {
			L.RaiseError(errNoMemory)
		}
	}
	L.Push(lua.LNumber(pos))
	return 1
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'z'
}
