package family

import (
	"encoding/binary"
	"math"
	"math/bits"
	"strings"

	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
)

// The bitmap family works on string values seen as arrays of bits, bit 0
// being the most significant bit of the first byte.

func registerBitmaps(bind binder) {
	bind("setbit", setbitCommand)
	bind("getbit", getbitCommand)
	bind("bitcount", bitcountCommand)
	bind("bitpos", bitposCommand)
	bind("bitrangeintarray", bitrangeintarrayCommand)
	bind("bitop", bitopCommand)
	bind("bitfield", func(x *command.Ctx) { bitfieldCommand(x, false) })
	bind("bitfield_ro", func(x *command.Ctx) { bitfieldCommand(x, true) })
}

const (
	errBitOffset    = "ERR bit offset is not an integer or out of range"
	errBitValue     = "ERR bit is not an integer or out of range"
	errBitfieldType = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."
)

// bitOffset parses a bit offset argument. With hashBits > 0 the "#N" form is
// accepted and means N*hashBits (multiplied with wrap-around, as Redis does).
// Offsets whose byte lies at or past proto-max-bulk-len are refused.
func bitOffset(x *command.Ctx, arg []byte, hashBits int) (uint64, bool) {
	hash := hashBits > 0 && len(arg) > 0 && arg[0] == '#'
	if hash {
		arg = arg[1:]
	}
	v, ok := strnum.ParseInt(arg)
	if ok && hash {
		v *= int64(hashBits)
	}
	if !ok || v < 0 || v>>3 >= x.Config().ProtoMaxBulkLen() {
		x.W.Error(errBitOffset)
		return 0, false
	}
	return uint64(v), true
}

// bitString is a string value being modified by SETBIT or BITFIELD.
type bitString struct {
	e     keyspace.Entry
	buf   []byte // the stored value, at least as long as the command needs
	grown bool   // the key is new or its value was extended
}

// bitStringForWrite looks key up for writing and returns its stored value,
// modified in place: a missing key is created, a short value extended with
// zeros, as Redis does before it runs the command's operations (so a
// BITFIELD whose writes all fail still creates the key). It replies
// WRONGTYPE when the key is not a string.
func bitStringForWrite(x *command.Ctx, key []byte, need uint64) (*bitString, bool) {
	e, found := x.LookupWrite(key)
	if found && e.Type() != keyspace.TypeString {
		x.W.Error(command.ErrWrongType)
		return nil, false
	}
	bs := &bitString{e: e}
	switch {
	case !found:
		bs.buf = x.DB.PutSized(&bs.e, key, keyspace.TypeString, keyspace.EncRaw, int(need), 0, x.Now)
		bs.grown = true
	case uint64(len(e.Value())) < need:
		bs.buf = x.DB.Resize(&bs.e, keyspace.EncRaw, int(need), x.Now)
		bs.grown = true
	default:
		bs.buf = e.Value()
	}
	return bs, true
}

// commitBitString ends the change of the stored value (raw encoding, TTL
// kept).
func commitBitString(x *command.Ctx, key []byte, bs *bitString) {
	// Redis unshares the value even when nothing changes, which makes it
	// raw; the same length rewrites the entry in place.
	x.DB.Replace(&bs.e, keyspace.EncRaw, bs.buf, bs.e.ExpireAt(), x.Now)
}

func setbitCommand(x *command.Ctx) {
	offset, ok := bitOffset(x, x.Args[2], 0)
	if !ok {
		return
	}
	on, ok := strnum.ParseInt(x.Args[3])
	if !ok || on&^1 != 0 {
		x.W.Error(errBitValue)
		return
	}
	key := x.Args[1]
	bs, ok := bitStringForWrite(x, key, offset>>3+1)
	if !ok {
		return
	}
	i, mask := offset>>3, byte(0x80)>>(offset&7)
	old := bs.buf[i]&mask != 0
	if on == 1 {
		bs.buf[i] |= mask
	} else {
		bs.buf[i] &^= mask
	}
	commitBitString(x, key, bs)
	if bs.grown || old != (on == 1) {
		x.Notify(config.EventString, "setbit", key)
		x.Dirty++
	}
	if old {
		x.W.Int(1)
	} else {
		x.W.Int(0)
	}
}

func getbitCommand(x *command.Ctx) {
	offset, ok := bitOffset(x, x.Args[2], 0)
	if !ok {
		return
	}
	e, found, ok := getString(x, x.Args[1])
	if !ok {
		return
	}
	bit := int64(0)
	if found {
		if v := e.Value(); offset>>3 < uint64(len(v)) && v[offset>>3]&(0x80>>(offset&7)) != 0 {
			bit = 1
		}
	}
	x.W.Int(bit)
}

// bitRange turns a BITCOUNT/BITPOS start and end (bytes, or bits when isBit)
// into an inclusive range of bit positions within a value of n bytes, as
// Redis clamps them. empty reports a range with no bits.
func bitRange(start, end, n int64, isBit bool) (first, last int64, empty bool) {
	if isBit {
		return stringRange(start, end, n<<3)
	}
	if first, last, empty = stringRange(start, end, n); empty {
		return 0, 0, true
	}
	return first << 3, last<<3 | 7, false
}

// parseBitUnit parses BITCOUNT's and BITPOS's BYTE|BIT argument.
func parseBitUnit(arg []byte) (isBit, ok bool) {
	switch {
	case cstr.ArgIs(arg, "bit"):
		return true, true
	case cstr.ArgIs(arg, "byte"):
		return false, true
	}
	return false, false
}

// edgeMask keeps the bits of byte i that lie within bit positions [first, last].
func edgeMask(i, first, last int64) byte {
	m := byte(0xff)
	if i == first>>3 {
		m &= 0xff >> (first & 7)
	}
	if i == last>>3 {
		m &= 0xff << (7 - last&7)
	}
	return m
}

// countBits counts the set bits of v at positions [first, last].
func countBits(v []byte, first, last int64) int64 {
	fb, lb := first>>3, last>>3
	if fb == lb {
		return int64(bits.OnesCount8(v[fb] & edgeMask(fb, first, last)))
	}
	n := bits.OnesCount8(v[fb]&edgeMask(fb, first, last)) + bits.OnesCount8(v[lb]&edgeMask(lb, first, last))
	mid := v[fb+1 : lb]
	for len(mid) >= 8 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(mid))
		mid = mid[8:]
	}
	for _, c := range mid {
		n += bits.OnesCount8(c)
	}
	return int64(n)
}

// bitcountCommand checks its arguments before looking the key up, as Redis
// 7.2 and later do (7.0 answered 0 for a missing key whatever followed it).
func bitcountCommand(x *command.Ctx) {
	var start, end int64
	isBit := false
	switch len(x.Args) {
	case 2:
	case 4, 5:
		var ok1, ok2 bool
		start, ok1 = strnum.ParseInt(x.Args[2])
		if !ok1 {
			x.W.Error(command.ErrNotInt)
			return
		}
		end, ok2 = strnum.ParseInt(x.Args[3])
		if !ok2 {
			x.W.Error(command.ErrNotInt)
			return
		}
		if len(x.Args) == 5 {
			var ok bool
			if isBit, ok = parseBitUnit(x.Args[4]); !ok {
				x.W.Error(command.ErrSyntax)
				return
			}
		}
	default:
		x.W.Error(command.ErrSyntax)
		return
	}
	e, found, ok := getString(x, x.Args[1])
	if !ok {
		return
	}
	if !found {
		x.W.Int(0)
		return
	}
	v := e.Value()
	n := int64(len(v))
	first, last, empty := int64(0), n*8-1, n == 0
	if len(x.Args) > 2 {
		if start < 0 && end < 0 && start > end {
			x.W.Int(0)
			return
		}
		first, last, empty = bitRange(start, end, n, isBit)
	}
	if empty {
		x.W.Int(0)
		return
	}
	x.W.Int(countBits(v, first, last))
}

// findBit returns the position of the first bit equal to bit among positions
// [first, last] of v, or -1.
func findBit(v []byte, bit int64, first, last int64) int64 {
	var flip byte // XOR that turns the bits sought into ones
	var skip uint64
	if bit == 0 {
		flip, skip = 0xff, math.MaxUint64
	}
	fb, lb := first>>3, last>>3
	for i := fb; i <= lb; i++ {
		if i > fb && i < lb {
			// Whole bytes in the middle: skip eight at a time.
			for i+8 <= lb && binary.LittleEndian.Uint64(v[i:]) == skip {
				i += 8
			}
		}
		if c := (v[i] ^ flip) & edgeMask(i, first, last); c != 0 {
			return i<<3 + int64(bits.LeadingZeros8(c))
		}
	}
	return -1
}

// bitrangeintarrayCommand is BITRANGEINTARRAY key start end [BYTE|BIT]
// [LIMIT count] [ZEROS] (Redis 8.12, https://redis.io/docs/latest/commands/bitrangeintarray/):
// the offsets (GETBIT's numbering, in bits whatever the unit) of the set
// bits, or with ZEROS the clear ones, in the range BITCOUNT would count,
// ascending, at most count of them with LIMIT (0: no limit, as ZINTERCARD's).
// A missing key has none. Counted first, so the reply is written without
// gathering it.
func bitrangeintarrayCommand(x *command.Ctx) {
	start, ok1 := strnum.ParseInt(x.Args[2])
	end, ok2 := strnum.ParseInt(x.Args[3])
	if !ok1 || !ok2 {
		x.W.Error(command.ErrNotInt)
		return
	}
	var isBit, unitSet, zeros bool
	limit := int64(-1)
	for j := 4; j < len(x.Args); j++ {
		switch a := x.Args[j]; {
		case !unitSet && (cstr.ArgIs(a, "byte") || cstr.ArgIs(a, "bit")):
			isBit, _ = parseBitUnit(a)
			unitSet = true
		case limit < 0 && cstr.ArgIs(a, "limit") && j+1 < len(x.Args):
			j++
			var ok bool
			if limit, ok = strnum.ParseInt(x.Args[j]); !ok {
				x.W.Error(command.ErrNotInt)
				return
			}
			if limit < 0 {
				x.W.Error("ERR LIMIT can't be negative")
				return
			}
		case !zeros && cstr.ArgIs(a, "zeros"):
			zeros = true
		default:
			x.W.Error(command.ErrSyntax)
			return
		}
	}
	e, found, ok := getString(x, x.Args[1])
	if !ok {
		return
	}
	if !found || start < 0 && end < 0 && start > end {
		x.W.Array(0)
		return
	}
	v := e.Value()
	first, last, empty := bitRange(start, end, int64(len(v)), isBit)
	if empty {
		x.W.Array(0)
		return
	}
	n := countBits(v, first, last)
	var flip byte // XOR that turns the bits sought into ones
	if zeros {
		n, flip = last-first+1-n, 0xff
	}
	if limit > 0 {
		n = min(n, limit)
	}
	x.W.Array(int(n))
	for i := first >> 3; n > 0; i++ {
		c := (v[i] ^ flip) & edgeMask(i, first, last)
		for ; c != 0 && n > 0; n-- {
			lz := bits.LeadingZeros8(c)
			x.W.Int(i<<3 + int64(lz))
			c &^= 0x80 >> lz
		}
	}
}

// bitposCommand checks its arguments before looking the key up, as Redis
// 7.2 and later do (7.0 parsed the range only for an existing key).
func bitposCommand(x *command.Ctx) {
	bit, ok := strnum.ParseInt(x.Args[2])
	if !ok {
		x.W.Error(command.ErrNotInt)
		return
	}
	if bit != 0 && bit != 1 {
		x.W.Error("ERR The bit argument must be 1 or 0.")
		return
	}
	var start int64
	end := int64(math.MaxInt64) // clamped to the last byte or bit
	isBit, endGiven := false, false
	switch len(x.Args) {
	case 3:
	case 4, 5, 6:
		var ok1 bool
		if start, ok1 = strnum.ParseInt(x.Args[3]); !ok1 {
			x.W.Error(command.ErrNotInt)
			return
		}
		if len(x.Args) == 6 {
			if isBit, ok = parseBitUnit(x.Args[5]); !ok {
				x.W.Error(command.ErrSyntax)
				return
			}
		}
		if len(x.Args) >= 5 {
			var ok2 bool
			if end, ok2 = strnum.ParseInt(x.Args[4]); !ok2 {
				x.W.Error(command.ErrNotInt)
				return
			}
			endGiven = true
		}
	default:
		x.W.Error(command.ErrSyntax)
		return
	}
	e, found, ok := getString(x, x.Args[1])
	if !ok {
		return
	}
	if !found {
		// A missing key is an infinite run of zeros.
		x.W.Int(-bit) // 0 for a clear bit, -1 for a set bit
		return
	}
	v := e.Value()
	n := int64(len(v))
	first, last, empty := int64(0), n*8-1, n == 0
	if len(x.Args) > 3 {
		first, last, empty = bitRange(start, end, n, isBit)
	}
	if empty {
		x.W.Int(-1)
		return
	}
	pos := findBit(v, bit, first, last)
	if pos < 0 && bit == 0 && !endGiven {
		// Without an explicit end the string counts as padded with zeros.
		pos = last + 1
	}
	x.W.Int(pos)
}

func bitopCommand(x *command.Ctx) {
	const (
		opAnd = iota
		opOr
		opXor
		opNot
		opDiff  // Redis 8.2: X and none of the others
		opDiff1 // one or more of the others, not X
		opAndOr // X and one or more of the others
		opOne   // exactly one source
	)
	var op int
	switch name := x.Args[1]; {
	case cstr.ArgIs(name, "and"):
		op = opAnd
	case cstr.ArgIs(name, "or"):
		op = opOr
	case cstr.ArgIs(name, "xor"):
		op = opXor
	case cstr.ArgIs(name, "not"):
		op = opNot
	case cstr.ArgIs(name, "diff"):
		op = opDiff
	case cstr.ArgIs(name, "diff1"):
		op = opDiff1
	case cstr.ArgIs(name, "andor"):
		op = opAndOr
	case cstr.ArgIs(name, "one"):
		op = opOne
	default:
		x.W.Error(command.ErrSyntax)
		return
	}
	if op == opNot && len(x.Args) != 4 {
		x.W.Error("ERR BITOP NOT must be called with a single source key.")
		return
	}
	if (op == opDiff || op == opDiff1 || op == opAndOr) && len(x.Args) < 5 {
		x.W.Error("ERR BITOP " + strings.ToUpper(cstr.String(x.Args[1])) + " must be called with at least two source keys.")
		return
	}
	srcKeys := x.Args[3:]
	srcs := make([][]byte, len(srcKeys))
	maxLen := 0
	for i, key := range srcKeys {
		e, found := x.LookupRead(key)
		if !found {
			continue // a missing key is an empty string
		}
		if e.Type() != keyspace.TypeString {
			x.W.Error(command.ErrWrongType)
			return
		}
		srcs[i] = e.Value()
		maxLen = max(maxLen, len(srcs[i]))
	}
	dest := x.Args[2]
	if maxLen == 0 {
		if x.DB.Delete(dest) {
			x.Notify(config.EventGeneric, "del", dest)
			x.Dirty++
		}
		x.W.Int(0)
		return
	}
	// The result is computed into the destination's new value: PutSized
	// leaves the old one (which may be a source) readable until the unlock.
	dst, replaced := x.LookupWrite(dest) // expired first, as Redis's setKey does
	was := dst.Type()
	res := x.DB.PutSized(&dst, dest, keyspace.TypeString, keyspace.EncRaw, maxLen, 0, x.Now)
	copy(res, srcs[0])
	switch op {
	case opNot:
		for i := range res {
			res[i] = ^res[i]
		}
	case opAnd:
		for _, s := range srcs[1:] {
			for i := range res {
				if i < len(s) {
					res[i] &= s[i]
				} else {
					clear(res[i:])
					break
				}
			}
		}
	case opOr:
		for _, s := range srcs[1:] {
			for i, c := range s {
				res[i] |= c
			}
		}
	case opXor:
		for _, s := range srcs[1:] {
			for i, c := range s {
				res[i] ^= c
			}
		}
	case opDiff, opDiff1, opAndOr:
		// res becomes the union of the others, then meets X.
		first := srcs[0]
		clear(res)
		for _, s := range srcs[1:] {
			for i, c := range s {
				res[i] |= c
			}
		}
		for i, others := range res {
			var x0 byte
			if i < len(first) {
				x0 = first[i]
			}
			switch op {
			case opDiff:
				res[i] = x0 &^ others
			case opDiff1:
				res[i] = others &^ x0
			default:
				res[i] = x0 & others
			}
		}
	case opOne:
		for i := range res {
			var once, twice byte // bits seen in at least one, two sources
			for _, s := range srcs {
				if i < len(s) {
					twice |= once & s[i]
					once |= s[i]
				}
			}
			res[i] = once &^ twice
		}
	}
	if replaced {
		x.Overwrote(dest, was, keyspace.TypeString)
	}
	x.Notify(config.EventString, "set", dest)
	x.Dirty++
	x.W.Int(int64(maxLen))
}

// Bitfield overflow behaviours.
const (
	overflowWrap = iota
	overflowSat
	overflowFail
)

type bitfieldOp struct {
	offset   uint64
	value    int64 // SET value or INCRBY increment
	op       byte  // 'g', 's' or 'i'
	overflow int
	bits     uint
	signed   bool
}

// parseBitfieldType parses i1..i64 and u1..u63.
func parseBitfieldType(arg []byte) (signed bool, width uint, ok bool) {
	arg = cstr.Bytes(arg)
	if len(arg) == 0 || (arg[0] != 'i' && arg[0] != 'u') {
		return false, 0, false
	}
	signed = arg[0] == 'i'
	n, ok := strnum.ParseInt(arg[1:])
	if !ok || n < 1 || (signed && n > 64) || (!signed && n > 63) {
		return false, 0, false
	}
	return signed, uint(n), true
}

// getBits reads width bits at offset as an unsigned number; bytes past the end
// of v read as zero.
func getBits(v []byte, offset uint64, width uint) uint64 {
	var r uint64
	for j := uint(0); j < width; j++ {
		var b uint64
		if i := offset >> 3; i < uint64(len(v)) {
			b = uint64(v[i]>>(7-offset&7)) & 1
		}
		r = r<<1 | b
		offset++
	}
	return r
}

// setBits writes the low width bits of val at offset; v must be long enough.
func setBits(v []byte, offset uint64, width uint, val uint64) {
	for j := uint(0); j < width; j++ {
		mask := byte(0x80) >> (offset & 7)
		if val>>(width-1-j)&1 != 0 {
			v[offset>>3] |= mask
		} else {
			v[offset>>3] &^= mask
		}
		offset++
	}
}

// signExtend reads the low width bits of u as a two's complement number.
func signExtend(u uint64, width uint) int64 {
	if width < 64 {
		u &^= math.MaxUint64 << width
		if u&(1<<(width-1)) != 0 {
			u |= math.MaxUint64 << width
		}
	}
	return int64(u)
}

// unsignedOverflow checks value+incr against a width-bit unsigned field. It
// returns whether it overflows and, for WRAP and SAT, the value to store.
// value is a SET argument or an old field value, reinterpreted as unsigned.
func unsignedOverflow(value uint64, incr int64, width uint, mode int) (bool, uint64) {
	maxv := uint64(1)<<width - 1
	maxIncr := int64(maxv - value)
	minIncr := -int64(value)
	wrap := (value + uint64(incr)) & maxv
	switch {
	case value > maxv || (incr > 0 && incr > maxIncr):
		if mode == overflowSat {
			return true, maxv
		}
		return true, wrap
	case incr < 0 && incr < minIncr:
		if mode == overflowSat {
			return true, 0
		}
		return true, wrap
	}
	return false, 0
}

// signedOverflow is unsignedOverflow for a width-bit signed field.
func signedOverflow(value, incr int64, width uint, mode int) (bool, int64) {
	maxv := int64(math.MaxInt64)
	if width < 64 {
		maxv = 1<<(width-1) - 1
	}
	minv := -maxv - 1
	maxIncr := maxv - value // may wrap; only used when it does not
	minIncr := minv - value
	wrap := signExtend(uint64(value)+uint64(incr), width)
	switch {
	case value > maxv || (width != 64 && incr > maxIncr) || (value >= 0 && incr > 0 && incr > maxIncr):
		if mode == overflowSat {
			return true, maxv
		}
		return true, wrap
	case value < minv || (width != 64 && incr < minIncr) || (value < 0 && incr < 0 && incr < minIncr):
		if mode == overflowSat {
			return true, minv
		}
		return true, wrap
	}
	return false, 0
}

func bitfieldCommand(x *command.Ctx, readonlyCmd bool) {
	var ops []bitfieldOp
	overflow := overflowWrap
	write := false
	var highest uint64 // highest bit written
	args := x.Args
	for j := 2; j < len(args); j++ {
		rem := len(args) - j - 1
		var op byte
		switch sub := args[j]; {
		case cstr.ArgIs(sub, "get") && rem >= 2:
			op = 'g'
		case cstr.ArgIs(sub, "set") && rem >= 3:
			op = 's'
		case cstr.ArgIs(sub, "incrby") && rem >= 3:
			op = 'i'
		case cstr.ArgIs(sub, "overflow") && rem >= 1:
			j++
			switch mode := args[j]; {
			case cstr.ArgIs(mode, "wrap"):
				overflow = overflowWrap
			case cstr.ArgIs(mode, "sat"):
				overflow = overflowSat
			case cstr.ArgIs(mode, "fail"):
				overflow = overflowFail
			default:
				x.W.Error("ERR Invalid OVERFLOW type specified")
				return
			}
			continue
		default:
			x.W.Error(command.ErrSyntax)
			return
		}
		signed, width, ok := parseBitfieldType(args[j+1])
		if !ok {
			x.W.Error(errBitfieldType)
			return
		}
		offset, ok := bitOffset(x, args[j+2], int(width))
		if !ok {
			return
		}
		var value int64
		if op != 'g' {
			write = true
			highest = max(highest, offset+uint64(width)-1)
			if value, ok = strnum.ParseInt(args[j+3]); !ok {
				x.W.Error(command.ErrNotInt)
				return
			}
			j++
		}
		j += 2
		ops = append(ops, bitfieldOp{offset: offset, value: value, op: op, overflow: overflow, bits: width, signed: signed})
	}

	key := x.Args[1]
	if !write {
		e, found, ok := getString(x, key)
		if !ok {
			return
		}
		var v []byte
		if found {
			v = e.Value()
		}
		x.W.Array(len(ops))
		for _, o := range ops {
			bitfieldGet(x, v, o)
		}
		return
	}
	if readonlyCmd {
		x.W.Error("ERR BITFIELD_RO only supports the GET subcommand")
		return
	}
	bs, ok := bitStringForWrite(x, key, highest>>3+1)
	if !ok {
		return
	}
	v := bs.buf
	changes := 0
	x.W.Array(len(ops))
	for _, o := range ops {
		if o.op == 'g' {
			bitfieldGet(x, v, o)
			continue
		}
		oldU := getBits(v, o.offset, o.bits)
		var newU uint64
		var reply int64
		var over bool
		if o.signed {
			old := signExtend(oldU, o.bits)
			var nv, limit int64
			if o.op == 'i' {
				over, limit = signedOverflow(old, o.value, o.bits, o.overflow)
				nv = old + o.value
				reply = nv
			} else {
				over, limit = signedOverflow(o.value, 0, o.bits, o.overflow)
				nv = o.value
				reply = old
			}
			if over {
				nv = limit
				if o.op == 'i' {
					reply = nv
				}
			}
			newU = uint64(nv)
		} else {
			var nv, limit uint64
			if o.op == 'i' {
				over, limit = unsignedOverflow(oldU, o.value, o.bits, o.overflow)
				nv = oldU + uint64(o.value)
			} else {
				over, limit = unsignedOverflow(uint64(o.value), 0, o.bits, o.overflow)
				nv = uint64(o.value)
			}
			if over {
				nv = limit
			}
			if o.op == 'i' {
				reply = int64(nv)
			} else {
				reply = int64(oldU)
			}
			newU = nv
		}
		if over && o.overflow == overflowFail {
			x.W.Null()
			continue
		}
		x.W.Int(reply)
		setBits(v, o.offset, o.bits, newU)
		if bs.grown || oldU != newU&(math.MaxUint64>>(64-o.bits)) {
			changes++
		}
	}
	commitBitString(x, key, bs)
	if changes > 0 {
		x.Notify(config.EventString, "setbit", key)
	}
	x.Dirty += changes
	if changes == 0 && bs.grown {
		x.Dirty++ // the key was created or extended: replicas need it too
	}
}

func bitfieldGet(x *command.Ctx, v []byte, o bitfieldOp) {
	u := getBits(v, o.offset, o.bits)
	if o.signed {
		x.W.Int(signExtend(u, o.bits))
	} else {
		x.W.Int(int64(u))
	}
}
