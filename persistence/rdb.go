package persistence

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/resp"
)

// Version is the RDB version written, Redis 7.0's.
const Version = 10

// Version74 is the RDB version Redis 7.4 writes. Keyhive writes it for
// files and payloads that may hold a type RDB version 10 lacks (a listpack
// set, Redis 7.2's; a hash with field TTLs, 7.4's), which Redis 7.0 could
// not load anyway: such a payload is then byte for byte 7.4.1's.
const Version74 = 12

// NewestVersion is the newest RDB version a file may have to load: Redis
// 7.2's (11) adds listpack sets and streams with consumers' active times,
// 7.4's (12) hashes with field TTLs and cluster slot sizes.
const NewestVersion = 12

// Value types, as Redis numbers them.
const (
	TypeString          = 0
	TypeList            = 1
	TypeSet             = 2
	TypeZSet            = 3
	TypeHash            = 4
	TypeZSet2           = 5
	TypeModule          = 6
	TypeModule2         = 7
	TypeHashZipmap      = 9
	TypeListZiplist     = 10
	TypeSetIntset       = 11
	TypeZSetZiplist     = 12
	TypeHashZiplist     = 13
	TypeListQuicklist   = 14
	TypeStreamListpacks = 15
	TypeHashListpack    = 16
	TypeZSetListpack    = 17
	TypeListQuicklist2  = 18
	TypeStreamListpack2 = 19
	TypeSetListpack     = 20
	TypeStreamListpack3 = 21
)

// Opcodes of the file's structure.
const (
	OpSlotInfo      = 244 // Redis 7.4, cluster mode: a slot's key counts
	OpFunction      = 246 // Redis 7.0's release candidates
	OpFunction2     = 245
	OpModuleAux     = 247
	OpIdle          = 248
	OpFreq          = 249
	OpAux           = 250
	OpResizeDB      = 251
	OpExpireTimeMS  = 252
	OpExpireTime    = 253
	OpSelectDB      = 254
	OpEOF           = 255
	encInt8         = 0
	encInt16        = 1
	encInt32        = 2
	encLZF          = 3
	quicklistPlain  = 1
	quicklistPacked = 2
)

// AppendLen appends an RDB length.
func AppendLen(b []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, byte(n>>8)|0x40, byte(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, 0x80), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 0x81), n)
}

// AppendDouble appends a binary double (ZSET_2 scores).
func AppendDouble(b []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
}

// Encoder appends RDB strings: integers in integer encodings, and, when
// Compress is set (rdbcompression), strings over 20 bytes LZF-compressed
// when that saves at least 4 bytes, as rdbSaveRawString does.
type Encoder struct {
	Compress bool
	lzf      Compressor
	// Listpack and Scratch are reusable buffers for the value being encoded.
	Listpack Listpack
	Scratch  []byte
}

// AppendString appends s as an RDB string.
func (e *Encoder) AppendString(b, s []byte) []byte {
	if len(s) <= 11 && len(s) > 0 {
		if v, ok := strnum.ParseInt(s); ok && v >= math.MinInt32 && v <= math.MaxInt32 {
			return appendIntString(b, v)
		}
	}
	if e.Compress && len(s) > 20 {
		if c := e.lzf.Compress(s, len(s)-4); c != nil {
			b = append(b, 0xC0|encLZF)
			b = AppendLen(b, uint64(len(c)))
			b = AppendLen(b, uint64(len(s)))
			b = append(b, c...)
			e.lzf.Release()
			return b
		}
	}
	b = AppendLen(b, uint64(len(s)))
	return append(b, s...)
}

func appendIntString(b []byte, v int64) []byte {
	switch {
	case v >= math.MinInt8 && v <= math.MaxInt8:
		return append(b, 0xC0|encInt8, byte(v))
	case v >= math.MinInt16 && v <= math.MaxInt16:
		return binary.LittleEndian.AppendUint16(append(b, 0xC0|encInt16), uint16(v))
	}
	return binary.LittleEndian.AppendUint32(append(b, 0xC0|encInt32), uint32(v))
}

// AppendBlob appends s as a string that is never integer-encoded (a
// listpack or intset blob), LZF-compressed like any other.
func (e *Encoder) AppendBlob(b, s []byte) []byte {
	if e.Compress && len(s) > 20 {
		if c := e.lzf.Compress(s, len(s)-4); c != nil {
			b = append(b, 0xC0|encLZF)
			b = AppendLen(b, uint64(len(c)))
			b = AppendLen(b, uint64(len(s)))
			b = append(b, c...)
			e.lzf.Release()
			return b
		}
	}
	b = AppendLen(b, uint64(len(s)))
	return append(b, s...)
}

// AppendScore appends a sorted-set score as a listpack entry, formatted as
// Redis's d2string does: integers exactly, other values as %.17g.
func (lp *Listpack) AppendScore(f float64) {
	switch {
	case math.IsInf(f, 1):
		lp.Append([]byte("inf"))
	case math.IsInf(f, -1):
		lp.Append([]byte("-inf"))
	case f == 0 && math.Signbit(f):
		lp.Append([]byte("-0"))
	case f > -4503599627370495 && f < 4503599627370496 && f == math.Trunc(f):
		lp.AppendInt(int64(f))
	default:
		var buf [32]byte
		lp.Append(resp.AppendDouble(buf[:0], f))
	}
}

// AppendListNodes appends a QUICKLIST_2 value's payload for elements split
// into listpack nodes as Redis's pushes split them under
// list-max-listpack-size (fill): a node takes an element while its size
// plus the element's length plus 8 stays within 4 KiB << (-fill-1) bytes
// (negative fill), or within 8 KiB and fill elements (positive fill).
func (e *Encoder) AppendListNodes(b []byte, fill int, each func(fn func(el []byte) bool)) []byte {
	fits := func(size, count int) bool { return size <= 8192 && count < fill }
	if fill < 0 {
		limit := 4096 << min(-fill-1, 4)
		fits = func(size, _ int) bool { return size <= limit }
	}
	var nodes [][]byte
	lp := &e.Listpack
	lp.Reset()
	flush := func() {
		nodes = append(nodes, append([]byte(nil), lp.Bytes()...))
		lp.Reset()
	}
	each(func(el []byte) bool {
		if lp.Len() > 0 && !fits(lp.Size()+len(el)+8, lp.Len()) {
			flush()
		}
		lp.Append(el)
		return true
	})
	if lp.Len() > 0 {
		flush()
	}
	b = AppendLen(b, uint64(len(nodes)))
	for _, node := range nodes {
		b = AppendLen(b, quicklistPacked)
		b = e.AppendBlob(b, node)
	}
	return b
}

// AppendDumpFooter appends DUMP's footer to a value's payload: the RDB
// version (2 bytes: 12 for a listpack set or a hash with field expire
// times, else 10) and
// the CRC-64 of everything before (8 bytes), both little endian.
func AppendDumpFooter(b []byte) []byte {
	version := uint16(Version)
	if len(b) > 0 && (b[0] == TypeSetListpack || b[0] == TypeHashMetadata || b[0] == TypeHashListpackEx) {
		version = Version74
	}
	b = binary.LittleEndian.AppendUint16(b, version)
	return binary.LittleEndian.AppendUint64(b, CRC64(0, b))
}

// AppendHeader appends the file header and the AUX fields redis-server 7.0
// writes (aux is name, value pairs).
func (e *Encoder) AppendHeader(b []byte, aux ...string) []byte {
	return e.AppendHeaderVersion(b, Version, aux...)
}

// AppendHeaderVersion is AppendHeader for RDB version version (Version74
// when the file may hold types version 10 lacks).
func (e *Encoder) AppendHeaderVersion(b []byte, version int, aux ...string) []byte {
	b = fmt.Appendf(b, "REDIS%04d", version)
	for i := 0; i+1 < len(aux); i += 2 {
		b = append(b, OpAux)
		b = e.AppendString(b, []byte(aux[i]))
		b = e.AppendString(b, []byte(aux[i+1]))
	}
	return b
}

// AppendAux appends an aux field, name and value as RDB strings.
func (e *Encoder) AppendAux(b []byte, name string, value []byte) []byte {
	b = e.AppendString(append(b, OpAux), []byte(name))
	return e.AppendString(b, value)
}

// AppendSelectDB appends SELECTDB and RESIZEDB for a database.
func AppendSelectDB(b []byte, db int, keys, expires int64) []byte {
	b = AppendLen(append(b, OpSelectDB), uint64(db))
	b = AppendLen(append(b, OpResizeDB), uint64(keys))
	return AppendLen(b, uint64(expires))
}
