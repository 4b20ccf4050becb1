package persistence

import (
	"encoding/binary"
	"errors"
	"math"
)

// Redis's intset: the integer width (2, 4 or 8, 4 bytes), the count (4
// bytes), then the values in ascending order, little endian.

// AppendIntset appends the intset of n ascending values, at(i) being the
// i-th, in the narrowest width that holds them all.
func AppendIntset(b []byte, n int, at func(i int) int64) []byte {
	width := 2
	if n > 0 {
		lo, hi := at(0), at(n-1)
		switch {
		case lo < math.MinInt32 || hi > math.MaxInt32:
			width = 8
		case lo < math.MinInt16 || hi > math.MaxInt16:
			width = 4
		}
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(width))
	b = binary.LittleEndian.AppendUint32(b, uint32(n))
	for i := range n {
		v := at(i)
		switch width {
		case 2:
			b = binary.LittleEndian.AppendUint16(b, uint16(v))
		case 4:
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		default:
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
	}
	return b
}

var errIntset = errors.New("invalid intset")

// IntsetValues validates an intset from outside (strictly ascending, the
// declared size) and calls fn for every value.
func IntsetValues(b []byte, fn func(v int64) error) error {
	if len(b) < 8 {
		return errIntset
	}
	width := int(binary.LittleEndian.Uint32(b))
	n := uint64(binary.LittleEndian.Uint32(b[4:]))
	if width != 2 && width != 4 && width != 8 || uint64(len(b)-8) != n*uint64(width) {
		return errIntset
	}
	var prev int64
	for i := range int(n) {
		p := b[8+i*width:]
		var v int64
		switch width {
		case 2:
			v = int64(int16(binary.LittleEndian.Uint16(p)))
		case 4:
			v = int64(int32(binary.LittleEndian.Uint32(p)))
		default:
			v = int64(binary.LittleEndian.Uint64(p))
		}
		if i > 0 && v <= prev {
			return errIntset
		}
		prev = v
		if err := fn(v); err != nil {
			return err
		}
	}
	return nil
}
