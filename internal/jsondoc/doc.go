// Package jsondoc is the stored form of a JSON document (the JSON.* commands'
// values): one byte string in a tagged binary layout, kept as the key's value
// in the keyspace's arena, so a document costs the Go heap nothing. Paths are
// walked in place: every value starts with a tag byte, and containers carry
// their byte size, so skipping a value is O(1) and reaching a field costs the
// siblings passed on the way, not the document.
//
// Layout of a value:
//
//	null false true              tag
//	integer                       tag + 1, 2, 4 or 8 bytes (int64 kept as Redis keeps it)
//	double                        tag + 8 bytes (IEEE 754)
//	string, length < 128          0x80|length + bytes
//	string                        tag + uvarint(length) + bytes
//	array                         tag + uint32 size + uint32 count + elements
//	object                        tag + uint32 size + uint32 count + {uvarint(len) key value}
//
// Multi-byte numbers are little-endian; a container's size counts its
// header. An edit of a number of the same width is a write in place; other
// edits splice bytes and add the difference to the enclosing containers'
// sizes (Splice), never re-serializing the document.
package jsondoc

import (
	"encoding/binary"
	"math"
)

// Kind is a JSON value's type.
type Kind uint8

// The kinds, in the order JSON.TYPE names them.
const (
	Null Kind = iota
	Bool
	Integer
	Number // a double
	String
	Array
	Object
)

// Name returns the kind's name as JSON.TYPE replies it.
func (k Kind) Name() string {
	return [...]string{"null", "boolean", "integer", "number", "string", "array", "object"}[k]
}

const (
	tagNull = iota
	tagFalse
	tagTrue
	tagInt8
	tagInt16
	tagInt32
	tagInt64
	tagFloat
	tagString
	tagArray
	tagObject
	tagShortString = 0x80
)

// HeaderSize is the size of a container's header (tag, size, count).
const HeaderSize = 9

// KindAt returns the kind of the value at off.
func KindAt(doc []byte, off int) Kind {
	t := doc[off]
	switch {
	case t >= tagShortString || t == tagString:
		return String
	case t == tagNull:
		return Null
	case t <= tagTrue:
		return Bool
	case t <= tagInt64:
		return Integer
	case t == tagFloat:
		return Number
	case t == tagArray:
		return Array
	}
	return Object
}

// Size returns the byte size of the value at off.
func Size(doc []byte, off int) int {
	switch t := doc[off]; {
	case t >= tagShortString:
		return 1 + int(t&^tagShortString)
	case t <= tagTrue:
		return 1
	case t <= tagInt64:
		return 1 + 1<<(t-tagInt8)
	case t == tagFloat:
		return 9
	case t == tagString:
		n, w := binary.Uvarint(doc[off+1:])
		return 1 + w + int(n)
	}
	return int(binary.LittleEndian.Uint32(doc[off+1:]))
}

// BoolAt returns the boolean at off.
func BoolAt(doc []byte, off int) bool { return doc[off] == tagTrue }

// Int returns the integer at off.
func Int(doc []byte, off int) int64 {
	switch doc[off] {
	case tagInt8:
		return int64(int8(doc[off+1]))
	case tagInt16:
		return int64(int16(binary.LittleEndian.Uint16(doc[off+1:])))
	case tagInt32:
		return int64(int32(binary.LittleEndian.Uint32(doc[off+1:])))
	}
	return int64(binary.LittleEndian.Uint64(doc[off+1:]))
}

// Float returns the double at off.
func Float(doc []byte, off int) float64 {
	return math.Float64frombits(binary.LittleEndian.Uint64(doc[off+1:]))
}

// Num returns the number (integer or double) at off as a double.
func Num(doc []byte, off int) float64 {
	if doc[off] == tagFloat {
		return Float(doc, off)
	}
	return float64(Int(doc, off))
}

// Str returns the string at off; it aliases doc.
func Str(doc []byte, off int) []byte {
	if t := doc[off]; t >= tagShortString {
		return doc[off+1 : off+1+int(t&^tagShortString)]
	}
	n, w := binary.Uvarint(doc[off+1:])
	start := off + 1 + w
	return doc[start : start+int(n)]
}

// Len returns the number of elements or members of the container at off.
func Len(doc []byte, off int) int { return int(binary.LittleEndian.Uint32(doc[off+5:])) }

// First returns the offset of the container's first element or member.
func First(doc []byte, off int) int { return off + HeaderSize }

// End returns the offset just past the value at off.
func End(doc []byte, off int) int { return off + Size(doc, off) }

// Member reads the object member at p: its key and the offset of its value.
func Member(doc []byte, p int) (key []byte, value int) {
	n, w := binary.Uvarint(doc[p:])
	start := p + w
	return doc[start : start+int(n)], start + int(n)
}

// Index returns the offset of element i of the array at off (0 <= i < Len).
func Index(doc []byte, off, i int) int {
	p := First(doc, off)
	for ; i > 0; i-- {
		p += Size(doc, p)
	}
	return p
}

// Lookup returns the offset of the member named key of the object at off,
// and the offset where that member (its key) starts.
func Lookup(doc []byte, off int, key []byte) (value, member int, ok bool) {
	end := End(doc, off)
	for p := First(doc, off); p < end; {
		k, v := Member(doc, p)
		if string(k) == string(key) {
			return v, p, true
		}
		p = v + Size(doc, v)
	}
	return 0, 0, false
}

// ---- building ----

// AppendNull appends null.
func AppendNull(dst []byte) []byte { return append(dst, tagNull) }

// AppendBool appends a boolean.
func AppendBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, tagTrue)
	}
	return append(dst, tagFalse)
}

// AppendInt appends an integer in the narrowest width that holds it.
func AppendInt(dst []byte, v int64) []byte {
	switch {
	case v == int64(int8(v)):
		return append(dst, tagInt8, byte(v))
	case v == int64(int16(v)):
		return binary.LittleEndian.AppendUint16(append(dst, tagInt16), uint16(v))
	case v == int64(int32(v)):
		return binary.LittleEndian.AppendUint32(append(dst, tagInt32), uint32(v))
	}
	return binary.LittleEndian.AppendUint64(append(dst, tagInt64), uint64(v))
}

// AppendFloat appends a double.
func AppendFloat(dst []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(append(dst, tagFloat), math.Float64bits(f))
}

// AppendString appends a string.
func AppendString(dst, s []byte) []byte {
	if len(s) < 128 {
		return append(append(dst, tagShortString|byte(len(s))), s...)
	}
	dst = binary.AppendUvarint(append(dst, tagString), uint64(len(s)))
	return append(dst, s...)
}

// AppendKey appends an object member's key; its value follows.
func AppendKey(dst, key []byte) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(key))), key...)
}

// BeginArray appends an array header to fill in with EndContainer.
func BeginArray(dst []byte) ([]byte, int) { return beginContainer(dst, tagArray) }

// BeginObject appends an object header to fill in with EndContainer.
func BeginObject(dst []byte) ([]byte, int) { return beginContainer(dst, tagObject) }

func beginContainer(dst []byte, tag byte) ([]byte, int) {
	start := len(dst)
	return append(dst, tag, 0, 0, 0, 0, 0, 0, 0, 0), start
}

// EndContainer completes the header of the container begun at start, whose
// elements or members now end dst.
func EndContainer(dst []byte, start, count int) {
	binary.LittleEndian.PutUint32(dst[start+1:], uint32(len(dst)-start))
	binary.LittleEndian.PutUint32(dst[start+5:], uint32(count))
}

// EmptyArray and EmptyObject are the encodings of [] and {}.
var (
	EmptyArray  = []byte{tagArray, HeaderSize, 0, 0, 0, 0, 0, 0, 0}
	EmptyObject = []byte{tagObject, HeaderSize, 0, 0, 0, 0, 0, 0, 0}
)

// ---- editing ----

// SetIntInPlace overwrites the integer at off with v when v's encoding has
// the same width, reporting whether it did. The document's bytes are written
// directly: no byte moves.
func SetIntInPlace(doc []byte, off int, v int64) bool {
	var b [9]byte
	enc := AppendInt(b[:0], v)
	if len(enc) != Size(doc, off) || KindAt(doc, off) != Integer {
		return false
	}
	copy(doc[off:], enc)
	return true
}

// SetFloatInPlace overwrites the double at off with f.
func SetFloatInPlace(doc []byte, off int, f float64) bool {
	if doc[off] != tagFloat {
		return false
	}
	binary.LittleEndian.PutUint64(doc[off+1:], math.Float64bits(f))
	return true
}

// SetBoolInPlace overwrites the boolean at off.
func SetBoolInPlace(doc []byte, off int, b bool) {
	if b {
		doc[off] = tagTrue
	} else {
		doc[off] = tagFalse
	}
}

// Ancestors appends to dst the offsets of the containers from the root (at
// 0) down to the container at target, which must be a container of doc.
func Ancestors(dst []int, doc []byte, target int) []int {
	c := 0
	for {
		dst = append(dst, c)
		if c == target {
			return dst
		}
		end := End(doc, c)
		object := doc[c] == tagObject
		next := -1
		for p := First(doc, c); p < end; {
			v := p
			if object {
				_, v = Member(doc, p)
			}
			e := v + Size(doc, v)
			if v <= target && target < e {
				next = v
				break
			}
			p = e
		}
		if next < 0 {
			return dst // target is not a container of doc
		}
		c = next
	}
}

// Splice appends to dst the document doc with bytes [start, end) replaced
// by repl, inside the container at parent (whose count changes by
// countDelta); the enclosing containers' sizes follow. doc is not modified.
func Splice(dst, doc []byte, parent, start, end int, repl []byte, countDelta int) []byte {
	var chain [32]int
	anc := Ancestors(chain[:0], doc, parent)
	base := len(dst)
	dst = append(dst, doc[:start]...)
	dst = append(dst, repl...)
	dst = append(dst, doc[end:]...)
	fixContainers(dst[base:], anc, len(repl)-(end-start), countDelta)
	return dst
}

// SpliceInPlace is Splice into buf, which holds the document in its first
// oldLen bytes and is exactly as long as the result, which must not be
// shorter than the document (a grown keyspace value).
func SpliceInPlace(buf []byte, oldLen, parent, start, end int, repl []byte, countDelta int) {
	var chain [32]int
	anc := Ancestors(chain[:0], buf[:oldLen], parent)
	copy(buf[start+len(repl):], buf[end:oldLen])
	copy(buf[start:], repl)
	fixContainers(buf, anc, len(repl)-(end-start), countDelta)
}

func fixContainers(doc []byte, anc []int, sizeDelta, countDelta int) {
	for _, c := range anc {
		s := binary.LittleEndian.Uint32(doc[c+1:])
		binary.LittleEndian.PutUint32(doc[c+1:], uint32(int(s)+sizeDelta))
	}
	if countDelta != 0 {
		p := anc[len(anc)-1]
		n := binary.LittleEndian.Uint32(doc[p+5:])
		binary.LittleEndian.PutUint32(doc[p+5:], uint32(int(n)+countDelta))
	}
}

// Equal reports whether the value at a in da equals the value at b in db:
// numbers by value (1 equals 1.0), objects member by member in any order,
// everything else exactly.
func Equal(da []byte, a int, db []byte, b int) bool {
	ka, kb := KindAt(da, a), KindAt(db, b)
	numeric := func(k Kind) bool { return k == Integer || k == Number }
	switch {
	case numeric(ka) && numeric(kb):
		if ka == Integer && kb == Integer {
			return Int(da, a) == Int(db, b)
		}
		return Num(da, a) == Num(db, b)
	case ka != kb:
		return false
	case ka == String:
		return string(Str(da, a)) == string(Str(db, b))
	case ka == Array:
		if Len(da, a) != Len(db, b) {
			return false
		}
		p, q := First(da, a), First(db, b)
		for end := End(da, a); p < end; p, q = p+Size(da, p), q+Size(db, q) {
			if !Equal(da, p, db, q) {
				return false
			}
		}
		return true
	case ka == Object:
		if Len(da, a) != Len(db, b) {
			return false
		}
		for p, end := First(da, a), End(da, a); p < end; {
			k, v := Member(da, p)
			w, _, ok := Lookup(db, b, k)
			if !ok || !Equal(da, v, db, w) {
				return false
			}
			p = v + Size(da, v)
		}
		return true
	}
	return da[a] == db[b]
}
