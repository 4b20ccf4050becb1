package persistence

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/keyhive/keyhive/internal/strnum"
)

// Value is a decoded value, whatever encoding it was stored in: the logical
// type (TypeString, TypeList, TypeSet, TypeZSet, TypeHash or TypeStream)
// and its contents. Hash fields and values alternate in Elems; a sorted
// set's scores are in Scores; a stream is in Stream. Slices may alias the
// input.
type Value struct {
	Type   byte
	Str    []byte
	Elems  [][]byte
	Scores []float64
	Stream *Stream
	// FieldTTLs is a hash's field expire times (Unix ms, 0 for none), one
	// per field, or nil when none has one; TTLOrdered when the fields come in
	// the order Redis keeps them in a listpackex (which then keeps it).
	FieldTTLs  []int64
	TTLOrdered bool
	// SetListpack marks a set saved as a listpack (Redis 7.2), which Redis
	// keeps as one while its members fit set-max-listpack-entries.
	SetListpack bool
	// Module is a module value's type id (Type TypeModule2, the bytes in
	// Str): one of Keyhive's own types (see ModuleID).
	Module uint64
}

// Error is corrupt or truncated input, at a byte offset.
type Error struct {
	Offset int64
	Msg    string
}

func (e *Error) Error() string { return fmt.Sprintf("%s at offset %d", e.Msg, e.Offset) }

// ErrEmptyKey is a collection with no elements, which Redis refuses in a
// DUMP payload and skips in a file.
var ErrEmptyKey = errors.New("empty key")

// decoder reads RDB data from a byte slice (a mapped file or a payload).
// Errors panic with *Error and are recovered at the API boundary, so the
// parsing code reads straight through.
type decoder struct {
	b []byte
	p int
}

func (d *decoder) fail(msg string) {
	panic(&Error{Offset: int64(d.p), Msg: msg})
}

// catch turns a decoder panic into an error.
func catch(err *error) {
	if r := recover(); r != nil {
		e, ok := r.(*Error)
		if !ok {
			panic(r)
		}
		*err = e
	}
}

func (d *decoder) byte() byte {
	if d.p >= len(d.b) {
		d.fail("unexpected end of data")
	}
	d.p++
	return d.b[d.p-1]
}

func (d *decoder) take(n uint64) []byte {
	if n > uint64(len(d.b)-d.p) {
		d.fail("unexpected end of data")
	}
	s := d.b[d.p : d.p+int(n)]
	d.p += int(n)
	return s
}

func (d *decoder) length() (n uint64, encoded bool) {
	c := d.byte()
	switch c >> 6 {
	case 0:
		return uint64(c & 0x3f), false
	case 1:
		return uint64(c&0x3f)<<8 | uint64(d.byte()), false
	case 3:
		return uint64(c & 0x3f), true
	}
	switch c {
	case 0x80:
		return uint64(binary.BigEndian.Uint32(d.take(4))), false
	case 0x81:
		return binary.BigEndian.Uint64(d.take(8)), false
	}
	d.fail("invalid length encoding")
	return 0, false
}

// count reads a collection length; every element takes at least a byte, so
// a length beyond the input is corrupt (checked before allocating).
func (d *decoder) count() int {
	n, enc := d.length()
	if enc || n > uint64(len(d.b)-d.p) {
		d.fail("invalid collection length")
	}
	return int(n)
}

func (d *decoder) str() []byte {
	n, encoded := d.length()
	if !encoded {
		return d.take(n)
	}
	switch n {
	case encInt8:
		return strconv.AppendInt(nil, int64(int8(d.byte())), 10)
	case encInt16:
		return strconv.AppendInt(nil, int64(int16(binary.LittleEndian.Uint16(d.take(2)))), 10)
	case encInt32:
		return strconv.AppendInt(nil, int64(int32(binary.LittleEndian.Uint32(d.take(4)))), 10)
	case encLZF:
		clen, enc1 := d.length()
		ulen, enc2 := d.length()
		if enc1 || enc2 {
			d.fail("invalid LZF lengths")
		}
		c := d.take(clen)
		if ulen > 1<<32 {
			d.fail("invalid LZF lengths")
		}
		out, ok := Decompress(c, int(ulen))
		if !ok {
			d.fail("invalid LZF data")
		}
		return out
	}
	d.fail("invalid string encoding")
	return nil
}

// stringDouble reads a ZSET (version 1) score: a length byte (253 NaN, 254
// +inf, 255 -inf) and the number as text.
func (d *decoder) stringDouble() float64 {
	switch n := d.byte(); n {
	case 253:
		d.fail("NaN score")
	case 254:
		return math.Inf(1)
	case 255:
		return math.Inf(-1)
	default:
		f, ok := parseScoreText(d.take(uint64(n)))
		if !ok {
			d.fail("invalid score")
		}
		return f
	}
	return 0
}

func parseScoreText(b []byte) (float64, bool) {
	if f, ok := strnum.ParseFloat(b); ok {
		return f, true
	}
	switch string(b) {
	case "inf", "+inf":
		return math.Inf(1), true
	case "-inf":
		return math.Inf(-1), true
	}
	return 0, false
}

// IsValueType reports whether t is a value type Redis knows.
func IsValueType(t byte) bool {
	return t <= 7 || t >= 9 && t <= 21 || t >= 22 && t <= 25 || t == TypeStreamIDMP
}

// value reads a value of RDB type t.
func (d *decoder) value(t byte) (v Value, err error) {
	var elems [][]byte
	addEntries := func(e []byte) error {
		elems = append(elems, bytes.Clone(e))
		return nil
	}
	check := func(err error) {
		if err != nil {
			d.fail(err.Error())
		}
	}
	switch t {
	case TypeString:
		return Value{Type: TypeString, Str: d.str()}, nil
	case TypeList, TypeSet:
		n := d.count()
		elems = make([][]byte, n)
		for i := range elems {
			elems[i] = d.str()
		}
		v.Type = t
	case TypeHash:
		n := d.count()
		elems = make([][]byte, 2*n)
		for i := range elems {
			elems[i] = d.str()
		}
		v.Type = TypeHash
	case TypeZSet, TypeZSet2:
		n := d.count()
		elems = make([][]byte, n)
		v.Scores = make([]float64, n)
		for i := range elems {
			elems[i] = d.str()
			if t == TypeZSet {
				v.Scores[i] = d.stringDouble()
			} else {
				v.Scores[i] = math.Float64frombits(binary.LittleEndian.Uint64(d.take(8)))
				if math.IsNaN(v.Scores[i]) {
					d.fail("NaN score")
				}
			}
		}
		v.Type = TypeZSet
	case TypeHashZipmap:
		check(zipmapEntries(d.str(), addEntries))
		v.Type = TypeHash
	case TypeListZiplist:
		check(ziplistEntries(d.str(), addEntries))
		v.Type = TypeList
	case TypeSetIntset:
		check(IntsetValues(d.str(), func(x int64) error {
			elems = append(elems, strconv.AppendInt(nil, x, 10))
			return nil
		}))
		v.Type = TypeSet
	case TypeSetListpack:
		check(ListpackEntries(d.str(), addEntries))
		v.Type, v.SetListpack = TypeSet, true
	case TypeHashZiplist:
		check(ziplistEntries(d.str(), addEntries))
		v.Type = TypeHash
	case TypeZSetZiplist:
		check(ziplistEntries(d.str(), addEntries))
		v.Type = TypeZSet
	case TypeHashListpack:
		check(ListpackEntries(d.str(), addEntries))
		v.Type = TypeHash
	case TypeZSetListpack:
		check(ListpackEntries(d.str(), addEntries))
		v.Type = TypeZSet
	case TypeHashMetadataPreGA, TypeHashListpackExPreGA, TypeHashMetadata, TypeHashListpackEx:
		d.hashWithTTLs(t, &v)
		elems = v.Elems
	case TypeListQuicklist, TypeListQuicklist2:
		for n := d.count(); n > 0; n-- {
			container := uint64(quicklistPacked)
			if t == TypeListQuicklist2 {
				var enc bool
				if container, enc = d.length(); enc || container != quicklistPlain && container != quicklistPacked {
					d.fail("invalid quicklist container")
				}
			}
			blob := d.str()
			switch {
			case container == quicklistPlain:
				elems = append(elems, blob)
			case t == TypeListQuicklist:
				check(ziplistEntries(blob, addEntries))
			default:
				check(ListpackEntries(blob, addEntries))
			}
		}
		v.Type = TypeList
	case TypeStreamListpacks, TypeStreamListpack2, TypeStreamListpack3:
		// An empty stream is a value (it keeps its last ID and groups).
		return Value{Type: TypeStream, Stream: d.stream(t)}, nil
	case TypeStreamIDMP:
		st := d.stream(TypeStreamListpack2)
		st.IDMP = d.streamIDMP()
		return Value{Type: TypeStream, Stream: st}, nil
	case TypeModule2:
		return d.module()
	case TypeModule:
		return v, errModule
	default:
		d.fail("unknown value type " + strconv.Itoa(int(t)))
	}
	if v.Type == TypeHash || v.Type == TypeZSet && v.Scores == nil {
		if len(elems)%2 != 0 {
			d.fail("odd number of elements in a hash or sorted set")
		}
	}
	if v.Type == TypeZSet && v.Scores == nil { // member, score pairs
		members := elems[:0]
		v.Scores = make([]float64, 0, len(elems)/2)
		for i := 0; i < len(elems); i += 2 {
			f, ok := parseScoreText(elems[i+1])
			if !ok {
				d.fail("invalid score")
			}
			members = append(members, elems[i])
			v.Scores = append(v.Scores, f)
		}
		elems = members
	}
	v.Elems = elems
	if len(elems) == 0 {
		return v, ErrEmptyKey
	}
	return v, nil
}

// HasDuplicates reports whether a set, hash or sorted set names a member or
// field twice, which Redis rejects as corruption.
func (v *Value) HasDuplicates() bool {
	step := 1
	switch v.Type {
	case TypeHash:
		step = 2
	case TypeSet, TypeZSet:
	default:
		return false
	}
	seen := make(map[string]struct{}, len(v.Elems)/step)
	for i := 0; i < len(v.Elems); i += step {
		if _, dup := seen[string(v.Elems[i])]; dup {
			return true
		}
		seen[string(v.Elems[i])] = struct{}{}
	}
	return false
}

// ErrDumpPayload is a payload whose footer is not a supported RDB version
// or whose checksum does not match.
var ErrDumpPayload = errors.New("DUMP payload version or checksum are wrong")

// ErrBadData is a payload that does not decode.
var ErrBadData = errors.New("Bad data format")

// DecodeDump checks a DUMP payload's footer and decodes its value:
// ErrDumpPayload for a bad footer, ErrBadData for anything that does not
// decode (an empty collection included), or the module refusal.
//
// Payloads of any RDB version up to NewestVersion restore, as in Redis 7.4.
func DecodeDump(p []byte) (v Value, err error) {
	if !ValidPayloadFooter(p) {
		return v, ErrDumpPayload
	}
	// Like Redis, read from the whole payload: a value may run into the
	// footer.
	d := &decoder{b: p}
	defer func() {
		if err != nil && (errors.Is(err, ErrEmptyKey) || errors.As(err, new(*Error))) {
			err = ErrBadData
		}
	}()
	defer catch(&err)
	t := d.byte()
	if !IsValueType(t) {
		return v, ErrBadData
	}
	return d.value(t)
}

// ReadString reads an RDB string from b (FUNCTION RESTORE's payloads).
func ReadString(b []byte) (s, rest []byte, ok bool) {
	d := &decoder{b: b}
	var err error
	func() {
		defer catch(&err)
		s = d.str()
	}()
	return s, b[d.p:], err == nil
}

// ReadLen reads an RDB length from b, or an encoding type when encoded.
func ReadLen(b []byte) (n uint64, encoded bool, rest []byte, ok bool) {
	d := &decoder{b: b}
	var err error
	func() {
		defer catch(&err)
		n, encoded = d.length()
	}()
	return n, encoded, b[d.p:], err == nil
}

// ValidPayloadFooter reports whether a DUMP or FUNCTION DUMP payload ends in
// a footer this package reads: an RDB version up to NewestVersion and the
// CRC-64 of everything before the checksum.
func ValidPayloadFooter(p []byte) bool {
	if len(p) < 10 {
		return false
	}
	footer := p[len(p)-10:]
	return binary.LittleEndian.Uint16(footer) <= NewestVersion && binary.LittleEndian.Uint64(footer[2:]) == CRC64(0, p[:len(p)-8])
}
