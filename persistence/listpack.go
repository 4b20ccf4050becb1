package persistence

import (
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/keyhive/keyhive/internal/strnum"
)

// Redis's listpack: a 4-byte total size and a 2-byte element count (65535
// when unknown), then entries of an encoding byte, data and a back length,
// then 0xFF. Small integers are stored as integers.

const (
	listpackHeader     = 6
	listpackEnd        = 0xFF
	listpackUnknownLen = 65535
)

// Listpack builds a Redis listpack. The zero value is empty.
type Listpack struct {
	buf []byte
	n   int
}

// Reset empties the listpack, keeping its memory.
func (lp *Listpack) Reset() {
	lp.buf = append(lp.buf[:0], make([]byte, listpackHeader)...)
	lp.n = 0
}

// Len returns the number of entries appended.
func (lp *Listpack) Len() int { return lp.n }

// Size returns the encoded size so far, header and end byte included.
func (lp *Listpack) Size() int { return max(len(lp.buf), listpackHeader) + 1 }

func listpackInt(s []byte) (int64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	return strnum.ParseInt(s)
}

func intEntryLen(v int64) int {
	switch {
	case v >= 0 && v <= 127:
		return 1
	case v >= -4096 && v <= 4095:
		return 2
	case v >= -32768 && v <= 32767:
		return 3
	case v >= -8388608 && v <= 8388607:
		return 4
	case v >= -2147483648 && v <= 2147483647:
		return 5
	}
	return 9
}

func backlenSize(n int) int {
	switch {
	case n <= 127:
		return 1
	case n < 16383:
		return 2
	case n < 2097151:
		return 3
	case n < 268435455:
		return 4
	}
	return 5
}

// Append adds s, as an integer when it is one (as lpAppend does).
func (lp *Listpack) Append(s []byte) {
	if v, ok := listpackInt(s); ok {
		lp.AppendInt(v)
		return
	}
	if len(lp.buf) == 0 {
		lp.Reset()
	}
	start := len(lp.buf)
	switch n := len(s); {
	case n < 64:
		lp.buf = append(lp.buf, 0x80|byte(n))
	case n < 4096:
		lp.buf = append(lp.buf, 0xE0|byte(n>>8), byte(n))
	default:
		lp.buf = binary.LittleEndian.AppendUint32(append(lp.buf, 0xF0), uint32(n))
	}
	lp.buf = append(lp.buf, s...)
	lp.appendBacklen(len(lp.buf) - start)
}

// AppendInt adds an integer entry.
func (lp *Listpack) AppendInt(v int64) {
	if len(lp.buf) == 0 {
		lp.Reset()
	}
	start := len(lp.buf)
	u := uint64(v)
	switch intEntryLen(v) {
	case 1:
		lp.buf = append(lp.buf, byte(v))
	case 2:
		u &= 1<<13 - 1
		lp.buf = append(lp.buf, 0xC0|byte(u>>8), byte(u))
	case 3:
		lp.buf = binary.LittleEndian.AppendUint16(append(lp.buf, 0xF1), uint16(u))
	case 4:
		lp.buf = append(lp.buf, 0xF2, byte(u), byte(u>>8), byte(u>>16))
	case 5:
		lp.buf = binary.LittleEndian.AppendUint32(append(lp.buf, 0xF3), uint32(u))
	default:
		lp.buf = binary.LittleEndian.AppendUint64(append(lp.buf, 0xF4), u)
	}
	lp.appendBacklen(len(lp.buf) - start)
}

// appendBacklen writes an entry's length so the list can be walked
// backwards: most significant 7-bit group first, every byte but the first
// flagged with the high bit.
func (lp *Listpack) appendBacklen(n int) {
	lp.n++
	size := backlenSize(n)
	for i := size - 1; i >= 0; i-- {
		b := byte(n>>(7*i)) & 127
		if i != size-1 {
			b |= 128
		}
		lp.buf = append(lp.buf, b)
	}
}

// Bytes finishes the listpack and returns it; it is valid until the next
// change.
func (lp *Listpack) Bytes() []byte {
	if len(lp.buf) == 0 {
		lp.Reset()
	}
	out := append(lp.buf, listpackEnd)
	binary.LittleEndian.PutUint32(out, uint32(len(out)))
	binary.LittleEndian.PutUint16(out[4:], uint16(min(lp.n, listpackUnknownLen)))
	return out
}

var errListpack = errors.New("invalid listpack")

// ListpackEntries validates a listpack from outside and calls fn for every
// entry in order, integers formatted as decimal strings. The slice passed is
// valid only during the call.
func ListpackEntries(b []byte, fn func(e []byte) error) error {
	var num [20]byte
	return listpackElements(b, func(e listpackElement) error {
		if e.isInt {
			return fn(strconv.AppendInt(num[:0], e.v, 10))
		}
		return fn(e.s)
	})
}

// listpackElement is one entry of a listpack: a string, or an integer.
type listpackElement struct {
	s     []byte
	v     int64
	isInt bool
}

// listpackElements validates a listpack from outside (header, every
// entry's encoding and back length, the declared count, the end byte) and
// calls fn for every entry in order.
func listpackElements(b []byte, fn func(e listpackElement) error) error {
	r, err := newListpackReader(b)
	if err != nil {
		return err
	}
	for !r.done() {
		e, err := r.next()
		if err != nil {
			return err
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return r.finish()
}

// listpackReader reads a listpack from outside element by element,
// validating as it goes.
type listpackReader struct {
	b    []byte
	p, n int
}

func newListpackReader(b []byte) (listpackReader, error) {
	if len(b) < listpackHeader+1 || int(binary.LittleEndian.Uint32(b)) != len(b) || b[len(b)-1] != listpackEnd {
		return listpackReader{}, errListpack
	}
	return listpackReader{b: b, p: listpackHeader}, nil
}

// done reports whether every element was read.
func (r *listpackReader) done() bool { return r.p >= len(r.b)-1 }

// finish checks, once done, that the header counted the elements read.
func (r *listpackReader) finish() error {
	declared := int(binary.LittleEndian.Uint16(r.b[4:]))
	if !r.done() || declared != listpackUnknownLen && declared != r.n {
		return errListpack
	}
	return nil
}

// next reads the next element; the caller checks done first.
func (r *listpackReader) next() (listpackElement, error) {
	b, p := r.b, r.p
	c := b[p]
	var e listpackElement
	var size int
	switch {
	case c < 0x80:
		e, size = listpackElement{v: int64(c), isInt: true}, 1
	case c < 0xC0:
		size = 1 + int(c&0x3f)
	case c < 0xE0:
		if p+2 > len(b) {
			return e, errListpack
		}
		v := int64(c&0x1f)<<8 | int64(b[p+1])
		if v >= 1<<12 {
			v -= 1 << 13
		}
		e, size = listpackElement{v: v, isInt: true}, 2
	case c < 0xF0:
		if p+2 > len(b) {
			return e, errListpack
		}
		size = 2 + (int(c&0xf)<<8 | int(b[p+1]))
	case c == 0xF0:
		if p+5 > len(b) {
			return e, errListpack
		}
		l := uint64(binary.LittleEndian.Uint32(b[p+1:]))
		if l > uint64(len(b)) {
			return e, errListpack
		}
		size = 5 + int(l)
	case c >= 0xF1 && c <= 0xF4:
		width := [...]int{2, 3, 4, 8}[c-0xF1]
		if p+1+width > len(b) {
			return e, errListpack
		}
		var u uint64
		for i := width - 1; i >= 0; i-- {
			u = u<<8 | uint64(b[p+1+i])
		}
		shift := 64 - 8*width
		e, size = listpackElement{v: int64(u<<shift) >> shift, isInt: true}, 1+width // sign-extended
	default:
		return e, errListpack
	}
	if p+size > len(b)-1 {
		return e, errListpack
	}
	if !e.isInt {
		e.s = b[p+strHeaderLenOf(c) : p+size]
	}
	// The back length must agree, as Redis's deep validation checks.
	bl := backlenSize(size)
	if p+size+bl > len(b)-1 || readBacklen(b[p+size:p+size+bl]) != size {
		return e, errListpack
	}
	r.p, r.n = p+size+bl, r.n+1
	return e, nil
}

func strHeaderLenOf(c byte) int {
	switch {
	case c < 0xC0:
		return 1
	case c < 0xF0:
		return 2
	}
	return 5
}

func readBacklen(b []byte) int {
	n := 0
	for i, c := range b {
		if (i > 0) != (c&128 != 0) {
			return -1
		}
		n = n<<7 | int(c&127)
	}
	return n
}
