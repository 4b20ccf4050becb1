package array

import (
	"encoding/binary"
	"errors"
)

// An array's file form (Keyhive's own; RDB and DUMP carry it as one module
// value field):
//
//	version u8, cursor u64, element count uvarint,
//	per element in ascending index order: the gap from the previous
//	element's index plus one (from 0 for the first) uvarint, the value's
//	length uvarint and its bytes
//
// The form is canonical: one array has one file form, so a loaded array
// written again gives the same bytes.

const fileVersion = 1

// ErrCorrupt is file data that is not a valid array.
var ErrCorrupt = errors.New("array data is corrupt")

// AppendFile appends a's file form to b.
func (a *Array) AppendFile(b []byte) []byte {
	b = append(b, fileVersion)
	b = binary.LittleEndian.AppendUint64(b, a.next)
	b = binary.AppendUvarint(b, a.count)
	var from uint64
	a.Range(0, MaxIndex, func(i uint64, v []byte) bool {
		b = binary.AppendUvarint(b, i-from)
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
		from = i + 1
		return true
	})
	return b
}

// ReadFile rebuilds an array from its file form, checked whole: an array
// with no element, an index past MaxIndex, a short or long body are
// ErrCorrupt.
func ReadFile(b []byte) (*Array, error) {
	if len(b) < 9 || b[0] != fileVersion {
		return nil, ErrCorrupt
	}
	a := &Array{next: binary.LittleEndian.Uint64(b[1:])}
	b = b[9:]
	count, w := uvarint(b)
	if w <= 0 || count == 0 || count > uint64(len(b)) {
		return nil, ErrCorrupt
	}
	b = b[w:]
	var from uint64
	for k := uint64(0); k < count; k++ {
		gap, w := uvarint(b)
		if w <= 0 || from > MaxIndex || gap > MaxIndex-from {
			return nil, ErrCorrupt
		}
		b = b[w:]
		n, w := uvarint(b)
		if w <= 0 || n > uint64(len(b)-w) {
			return nil, ErrCorrupt
		}
		i := from + gap
		a.Set(i, b[w:w+int(n)])
		b = b[w+int(n):]
		from = i + 1
	}
	if len(b) != 0 {
		return nil, ErrCorrupt
	}
	return a, nil
}

// uvarint reads a uvarint in its shortest form (so the file form stays
// canonical); w <= 0 when there is none.
func uvarint(b []byte) (uint64, int) {
	v, w := binary.Uvarint(b)
	if w > 0 && w != uvarintLen(v) {
		return 0, -1
	}
	return v, w
}
