// Package hll implements Redis's HyperLogLog string format, so that an HLL
// written by redis-server keeps counting identically here and the other way
// round.
//
// A value is a 16-byte header ("HYLL", the encoding, three unused bytes, the
// cached cardinality as 8 bytes little-endian whose top bit set means
// "invalid") followed by 16384 6-bit registers, either dense (packed, least
// significant bits first) or sparse: a run-length code of opcodes
//
//	00xxxxxx           ZERO:  x+1 registers (1-64) set to 0
//	01xxxxxx yyyyyyyy  XZERO: xy+1 registers (1-16384) set to 0
//	1vvvvvxx           VAL:   x+1 registers (1-4) set to v+1 (1-32)
//
// A sparse HLL becomes dense when a register exceeds 32 or when it would grow
// past hll-sparse-max-bytes. Elements are hashed with MurmurHash64A; the low
// 14 bits pick the register, the position of the lowest set bit of the other
// 50 (plus one) is the candidate value. The estimate is Otmar Ertl's improved
// estimator, as Redis 7.0 computes it.
package hll

import (
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
)

const (
	// HeaderSize is the header's length; registers follow it.
	HeaderSize = 16
	// Registers is the number of registers (2^14).
	Registers = 1 << precision
	// DenseSize is the length of a dense HLL.
	DenseSize = HeaderSize + (Registers*registerBits+7)/8

	precision    = 14
	registerBits = 6
	registerMax  = 1<<registerBits - 1
	q            = 64 - precision // hash bits left for the run of zeros

	encDense  = 0
	encSparse = 1

	cacheInvalid = 0x80 // in the cardinality's most significant byte

	opVal     = 0x80
	opXZero   = 0x40
	zeroMax   = 64
	xzeroMax  = 16384
	valMax    = 32
	valMaxLen = 4

	alphaInf = 0.721347520444481703680 // 1/(2 ln 2)
)

var magic = []byte("HYLL")

// Valid reports whether v is an HLL as Redis accepts one: the magic, a known
// encoding, and a dense one exactly DenseSize long. A sparse body is checked
// only when read.
func Valid(v []byte) bool {
	if len(v) < HeaderSize || string(v[:4]) != string(magic) {
		return false
	}
	switch v[4] {
	case encDense:
		return len(v) == DenseSize
	case encSparse:
		return true
	}
	return false
}

// IsSparse reports whether a valid HLL uses the sparse encoding.
func IsSparse(v []byte) bool { return v[4] == encSparse }

// AppendEmpty appends an empty HLL (sparse, cached cardinality 0) to dst.
func AppendEmpty(dst []byte) []byte {
	dst = append(dst, magic...)
	dst = append(dst, encSparse, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	return append(dst, opXZero|(xzeroMax-1)>>8, (xzeroMax-1)&0xff)
}

// Cached returns the cached cardinality of a valid HLL, if it is valid.
func Cached(v []byte) (uint64, bool) {
	if v[15]&cacheInvalid != 0 {
		return 0, false
	}
	return binary.LittleEndian.Uint64(v[8:16]), true
}

// SetCached stores card as the valid cached cardinality.
func SetCached(v []byte, card uint64) { binary.LittleEndian.PutUint64(v[8:16], card) }

// Invalidate marks the cached cardinality invalid.
func Invalidate(v []byte) { v[15] |= cacheInvalid }

// at is v[i], or 0 past the end: Redis reads an XZERO opcode's second byte
// even when the opcode is truncated, and finds the string's NUL terminator.
func at(v []byte, i int) byte {
	if i < len(v) {
		return v[i]
	}
	return 0
}

func isZero(op byte) bool  { return op&0xc0 == 0 }
func isXZero(op byte) bool { return op&0xc0 == opXZero }
func isVal(op byte) bool   { return op&opVal != 0 }
func zeroLen(op byte) int  { return int(op&0x3f) + 1 }
func xzeroLen(op, next byte) int {
	return int(op&0x3f)<<8 | int(next) + 1
}
func valValue(op byte) uint8    { return (op>>2)&0x1f + 1 }
func valLen(op byte) int        { return int(op&3) + 1 }
func valOp(v uint8, n int) byte { return byte(v-1)<<2 | byte(n-1) | opVal }

// appendZeros appends the ZERO or XZERO opcode for a run of n zero registers.
func appendZeros(dst []byte, n int) []byte {
	if n > zeroMax {
		return append(dst, opXZero|byte((n-1)>>8), byte((n-1)&0xff))
	}
	return append(dst, byte(n-1))
}

// register returns register i of dense registers r.
func register(r []byte, i int) uint8 {
	bit := i * registerBits
	b, shift := bit/8, uint(bit&7)
	return uint8((uint(r[b])>>shift | uint(at(r, b+1))<<(8-shift)) & registerMax)
}

func setRegister(r []byte, i int, val uint8) {
	bit := i * registerBits
	b, shift := bit/8, uint(bit&7)
	r[b] = r[b]&^byte(registerMax<<shift) | byte(uint(val)<<shift)
	if b+1 < len(r) {
		r[b+1] = r[b+1]&^byte(registerMax>>(8-shift)) | byte(uint(val)>>(8-shift))
	}
}

// The dense registers are read eight at a time: six bytes hold eight
// registers, which unpack spreads to one byte each, so that a merge is a
// byte-wise maximum of words and a histogram needs no shifts per register.
const groups = Registers / 8

// unpack returns the eight registers of group g of dense registers r as the
// bytes of a word, register 8g in the lowest.
func unpack(r []byte, g int) uint64 {
	var w uint64
	if i := 6 * g; i+8 <= len(r) {
		w = binary.LittleEndian.Uint64(r[i:]) & (1<<48 - 1)
	} else { // the last group: two bytes short of a word
		w = uint64(binary.LittleEndian.Uint32(r[i:])) | uint64(binary.LittleEndian.Uint16(r[i+4:]))<<32
	}
	w = w&0xffffff | (w&0xffffff000000)<<8               // 24 bits per 32-bit lane
	w = w&0x00000fff00000fff | (w&0x00fff00000fff000)<<4 // 12 bits per 16-bit lane
	return w&0x003f003f003f003f | (w&0x0fc00fc00fc00fc0)<<2
}

// countRegisters adds the registers in b, one per byte, to histo. Four
// histograms in turn keep consecutive increments of one count from waiting
// on each other.
func countRegisters(histo *[64]int, b []byte) {
	var h [4][64]int
	for i := 0; i+4 <= len(b); i += 4 {
		h[0][b[i]&registerMax]++
		h[1][b[i+1]&registerMax]++
		h[2][b[i+2]&registerMax]++
		h[3][b[i+3]&registerMax]++
	}
	for v := range histo {
		histo[v] += h[0][v] + h[1][v] + h[2][v] + h[3][v]
	}
}

// Register returns register i of a dense HLL.
func Register(v []byte, i int) uint8 { return register(v[HeaderSize:], i) }

// hashElement returns the register an element maps to and the candidate
// value: one more than the number of trailing zeros of the remaining hash
// bits (at most q+1).
func hashElement(elem []byte) (index int, count uint8) {
	h := murmurHash64A(elem, murmurSeed)
	index = int(h & (Registers - 1))
	h = h>>precision | 1<<q
	return index, uint8(bits.TrailingZeros64(h) + 1)
}

// Add adds elem to the HLL v, which the caller owns and which is changed in
// place or grown (sparse), or replaced by its dense form: the result is the
// HLL to keep. changed reports whether a register grew; ok=false means a
// corrupted sparse body (v may then be partly changed, as in Redis).
func Add(v, elem []byte, sparseMaxBytes int64) (out []byte, changed, ok bool) {
	index, count := hashElement(elem)
	return Set(v, index, count, sparseMaxBytes)
}

// Set raises register index to count if it is lower, as Add does.
func Set(v []byte, index int, count uint8, sparseMaxBytes int64) (out []byte, changed, ok bool) {
	if v[4] == encDense {
		if register(v[HeaderSize:], index) >= count {
			return v, false, true
		}
		setRegister(v[HeaderSize:], index, count)
		Invalidate(v)
		return v, true, true
	}
	return sparseSet(v, index, count, sparseMaxBytes)
}

// sparseSet is Set on a sparse HLL: it finds the opcode covering index and,
// when the register grows, replaces the opcode by up to five opcodes (the
// zeros or values before, the new value, those after), then merges adjacent
// equal values. Beyond a value of 32 or past sparseMaxBytes the HLL becomes
// dense.
func sparseSet(v []byte, index int, count uint8, sparseMaxBytes int64) ([]byte, bool, bool) {
	if count > valMax {
		return promote(v, index, count)
	}
	p, end, first, span, prev := HeaderSize, len(v), 0, 0, -1
	oplen := 1
	for p < end {
		op := v[p]
		oplen = 1
		switch {
		case isZero(op):
			span = zeroLen(op)
		case isVal(op):
			span = valLen(op)
		default:
			span = xzeroLen(op, at(v, p+1))
			oplen = 2
		}
		if index <= first+span-1 {
			break
		}
		prev = p
		p += oplen
		first += span
	}
	if span == 0 || p >= end {
		return v, false, false
	}
	op := v[p]
	switch {
	case isVal(op):
		if valValue(op) >= count {
			return v, false, true
		}
		if valLen(op) == 1 {
			v[p] = valOp(count, 1)
			return mergeValues(v, prev), true, true
		}
	case isZero(op) && zeroLen(op) == 1:
		v[p] = valOp(count, 1)
		return mergeValues(v, prev), true, true
	}
	// Split the opcode: at most ZERO/XZERO or VAL, VAL, ZERO/XZERO or VAL.
	var seqBuf [5]byte
	seq := seqBuf[:0]
	last := first + span - 1
	if isVal(op) {
		cur := valValue(op)
		if index != first {
			seq = append(seq, valOp(cur, index-first))
		}
		seq = append(seq, valOp(count, 1))
		if index != last {
			seq = append(seq, valOp(cur, last-index))
		}
	} else {
		if index != first {
			seq = appendZeros(seq, index-first)
		}
		seq = append(seq, valOp(count, 1))
		if index != last {
			seq = appendZeros(seq, last-index)
		}
	}
	delta := len(seq) - oplen
	if delta > 0 && int64(len(v)+delta) > sparseMaxBytes {
		return promote(v, index, count)
	}
	// next is the opcode after the replaced one; an XZERO cut short by the
	// end of the string has no next, and the result is then one byte
	// shorter than the sequence, as in Redis.
	next := min(p+oplen, end)
	newLen := len(v) + delta
	if total := p + len(seq) + end - next; total > len(v) {
		v = append(v, make([]byte, total-len(v))...)
	}
	copy(v[p+len(seq):], v[next:end])
	copy(v[p:], seq)
	v = v[:newLen]
	return mergeValues(v, prev), true, true
}

// mergeValues merges adjacent VAL opcodes with the same value (up to the
// longest run a VAL holds) among the five opcodes from prev (the opcode
// before the changed one, -1 for the first), then invalidates the cache.
func mergeValues(v []byte, prev int) []byte {
	p := HeaderSize
	if prev >= 0 {
		p = prev
	}
	for scan := 5; p < len(v) && scan > 0; scan-- {
		op := v[p]
		switch {
		case isXZero(op):
			p += 2
			continue
		case isZero(op):
			p++
			continue
		}
		if p+1 < len(v) && isVal(v[p+1]) && valValue(op) == valValue(v[p+1]) {
			if n := valLen(op) + valLen(v[p+1]); n <= valMaxLen {
				v[p+1] = valOp(valValue(op), n)
				copy(v[p:], v[p+1:])
				v = v[:len(v)-1]
				continue // try the merged value with the next one
			}
		}
		p++
	}
	Invalidate(v)
	return v
}

// promote converts a sparse HLL to dense and sets the register there.
func promote(v []byte, index int, count uint8) ([]byte, bool, bool) {
	d, ok := ToDense(v)
	if !ok {
		return v, false, false
	}
	setRegister(d[HeaderSize:], index, count)
	Invalidate(d)
	return d, true, true
}

// ToDense returns the dense form of a valid HLL: v itself when dense, else a
// new value with v's header (cached cardinality included). ok=false means a
// sparse body that does not describe exactly 16384 registers up to the
// first run of values that would pass the last register.
func ToDense(v []byte) ([]byte, bool) {
	if v[4] == encDense {
		return v, true
	}
	d := make([]byte, DenseSize)
	copy(d, v[:HeaderSize])
	d[4] = encDense
	r := d[HeaderSize:]
	idx := 0
decode:
	for p := HeaderSize; p < len(v); {
		op := v[p]
		switch {
		case isZero(op):
			idx += zeroLen(op)
			p++
		case isXZero(op):
			idx += xzeroLen(op, at(v, p+1))
			p += 2
		default:
			n, val := valLen(op), valValue(op)
			if idx+n > Registers {
				break decode // the rest is ignored, as redis-server 7.4.1 does
			}
			for ; n > 0; n-- {
				setRegister(r, idx, val)
				idx++
			}
			p++
		}
	}
	if idx != Registers {
		return nil, false
	}
	return d, true
}

// Count estimates the cardinality of a valid HLL from its registers (not the
// cache). ok=false means a sparse body that does not describe exactly 16384
// registers.
func Count(v []byte) (card uint64, ok bool) {
	var histo [64]int
	if v[4] == encDense {
		var b [64]byte
		r := v[HeaderSize:]
		for g := 0; g < groups; g += len(b) / 8 {
			for k := 0; k < len(b)/8; k++ {
				binary.LittleEndian.PutUint64(b[8*k:], unpack(r, g+k))
			}
			countRegisters(&histo, b[:])
		}
		return estimate(&histo), true
	}
	idx := 0
	for p := HeaderSize; p < len(v); {
		op := v[p]
		switch {
		case isZero(op):
			n := zeroLen(op)
			idx += n
			histo[0] += n
			p++
		case isXZero(op):
			n := xzeroLen(op, at(v, p+1))
			idx += n
			histo[0] += n
			p += 2
		default:
			n := valLen(op)
			idx += n
			histo[valValue(op)] += n
			p++
		}
	}
	return estimate(&histo), idx == Registers
}

// Max holds the register-wise maximum of several HLLs (PFCOUNT of several
// keys, PFMERGE), one byte per register.
type Max [Registers]uint8

// Merge raises m's registers to those of the valid HLL v. ok=false means a
// corrupted sparse body, as ToDense judges it (m may then be partly raised).
func (m *Max) Merge(v []byte) bool {
	if v[4] == encDense {
		r := v[HeaderSize:]
		for g := 0; g < groups; g++ {
			x, y := unpack(r, g), binary.LittleEndian.Uint64(m[8*g:])
			// Registers are below 128: a byte of (x|0x80)-y keeps its top
			// bit, and borrows nothing, where x >= y.
			ge := ((x | 0x8080808080808080) - y) & 0x8080808080808080
			keep := ge >> 7 * 0xff
			binary.LittleEndian.PutUint64(m[8*g:], x&keep|y&^keep)
		}
		return true
	}
	i := 0
decode:
	for p := HeaderSize; p < len(v); {
		op := v[p]
		switch {
		case isZero(op):
			i += zeroLen(op)
			p++
		case isXZero(op):
			i += xzeroLen(op, at(v, p+1))
			p += 2
		default:
			n, val := valLen(op), valValue(op)
			if i+n > Registers {
				break decode // the rest is ignored, as redis-server 7.4.1 does
			}
			for ; n > 0; n-- {
				m[i] = max(m[i], val)
				i++
			}
			p++
		}
	}
	return i == Registers
}

// Count estimates the cardinality of the merged registers.
func (m *Max) Count() uint64 {
	var histo [64]int
	countRegisters(&histo, m[:])
	return estimate(&histo)
}

// estimate is Ertl's improved raw estimator over the register histogram
// ("New cardinality estimation algorithms for HyperLogLog sketches"), with
// Redis's operation order so the result is identical.
func estimate(histo *[64]int) uint64 {
	m := float64(Registers)
	z := m * tau((m-float64(histo[q+1]))/m)
	for j := q; j >= 1; j-- {
		z += float64(histo[j])
		z *= 0.5
	}
	z += m * sigma(float64(histo[0])/m)
	alpha := float64(alphaInf)
	return uint64(math.Round(alpha * m * m / z))
}

func sigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		prev := z
		z += float64(x * y) // no fused multiply-add: Redis's C does not fuse
		y += y
		if z == prev {
			return z
		}
	}
}

func tau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		prev := z
		y *= 0.5
		d := 1 - x
		z -= float64(float64(d*d) * y)
		if z == prev {
			return z / 3
		}
	}
}

// AppendDecoded appends PFDEBUG DECODE's description of a sparse HLL's
// opcodes: "z:N" (ZERO), "Z:N" (XZERO), "v:VALUE,N", space separated.
func AppendDecoded(dst, v []byte) []byte {
	start := len(dst)
	for p := HeaderSize; p < len(v); {
		if len(dst) > start {
			dst = append(dst, ' ')
		}
		op := v[p]
		switch {
		case isZero(op):
			dst = append(dst, "z:"...)
			dst = strconv.AppendInt(dst, int64(zeroLen(op)), 10)
			p++
		case isXZero(op):
			dst = append(dst, "Z:"...)
			dst = strconv.AppendInt(dst, int64(xzeroLen(op, at(v, p+1))), 10)
			p += 2
		default:
			dst = append(dst, "v:"...)
			dst = strconv.AppendInt(dst, int64(valValue(op)), 10)
			dst = append(dst, ',')
			dst = strconv.AppendInt(dst, int64(valLen(op)), 10)
			p++
		}
	}
	return dst
}
