package prob

import (
	"errors"
	"math"
)

// A scalable Bloom filter, as Redis's BF.* commands keep one: a chain of
// sub-filters. The first holds the reserved capacity; when the newest is
// full a new one is appended with EXPANSION times its capacity and half its
// error rate, so the chain's error rate stays below the one reserved (the
// first filter of a scaling chain takes half of it, as Redis's does). A
// NONSCALING filter has one sub-filter at the full error rate and refuses
// items past its capacity.
//
// Layout: a 32-byte header (sub-filters, expansion, flags, items), then
// each sub-filter: a 40-byte header (capacity, items, error rate, bits,
// hash functions) and its bits, a multiple of 64.
type Bloom []byte

const (
	bloomHead      = 32
	bloomFiltHead  = 40
	bloomNonScale  = 1
	tightening     = 0.5
	bloomMaxFilter = 1 << 16
)

// Bloom sub-filter header fields.
const (
	bfCap    = 0
	bfItems  = 8
	bfError  = 16
	bfBits   = 24
	bfHashes = 32
)

// ErrBloomFull is a NONSCALING filter at its capacity.
var ErrBloomFull = errors.New("ERR non scaling filter is full")

// BloomBits is what a sub-filter for capacity items at error rate needs:
// its bits (rounded up to 64) and hash functions, from the optimal
// -ln(error)/ln(2)^2 bits per item.
func BloomBits(capacity uint64, errorRate float64) (bits uint64, hashes uint32) {
	perItem := -math.Log(errorRate) / (math.Ln2 * math.Ln2)
	// Saturated below 2^63: a float past uint64's range converts to
	// anything (0 on arm64 once rounded up below), and no such filter is
	// allowed anyway.
	bits = uint64(min(float64(capacity)*perItem, 1<<62))
	if bits == 0 {
		bits = 1
	}
	bits = (bits + 63) &^ 63
	return bits, uint32(math.Ceil(math.Ln2 * perItem))
}

// BloomSize is the bytes of a new filter.
func BloomSize(capacity uint64, errorRate float64, nonScaling bool) int {
	bits, _ := BloomBits(capacity, firstError(errorRate, nonScaling))
	return bloomHead + bloomFiltHead + int(bits/8)
}

func firstError(errorRate float64, nonScaling bool) float64 {
	if nonScaling {
		return errorRate
	}
	return errorRate * tightening
}

// InitBloom lays out a new filter in b, BloomSize bytes of zeros.
func InitBloom(b []byte, capacity uint64, errorRate float64, expansion uint32, nonScaling bool) Bloom {
	f := Bloom(b)
	put32(f, 4, expansion)
	if nonScaling {
		put32(f, 8, bloomNonScale)
	}
	f.initFilter(bloomHead, capacity, firstError(errorRate, nonScaling))
	return f
}

func (f Bloom) initFilter(at int, capacity uint64, errorRate float64) {
	bits, hashes := BloomBits(capacity, errorRate)
	put64(f, at+bfCap, capacity)
	put64(f, at+bfError, math.Float64bits(errorRate))
	put64(f, at+bfBits, bits)
	put32(f, at+bfHashes, hashes)
	put32(f, 0, u32(f, 0)+1)
}

// Filters is the number of sub-filters.
func (f Bloom) Filters() int { return int(u32(f, 0)) }

// Expansion is the growth factor of a scaling filter.
func (f Bloom) Expansion() uint32 { return u32(f, 4) }

// NonScaling reports a filter reserved NONSCALING.
func (f Bloom) NonScaling() bool { return u32(f, 8)&bloomNonScale != 0 }

// Items is the number of items added.
func (f Bloom) Items() uint64 { return u64(f, 16) }

// each calls fn with each sub-filter's header offset.
func (f Bloom) each(fn func(at int) bool) {
	at := bloomHead
	for range f.Filters() {
		if !fn(at) {
			return
		}
		at += bloomFiltHead + int(u64(f, at+bfBits)/8)
	}
}

// Capacity is the sum of the sub-filters' capacities.
func (f Bloom) Capacity() uint64 {
	var c uint64
	f.each(func(at int) bool { c += u64(f, at+bfCap); return true })
	return c
}

// RedisSize is the memory Redis reports for the same filter (BF.INFO
// Size): its chain and per-link structures plus the bit arrays.
func (f Bloom) RedisSize() int64 {
	size := int64(32)
	f.each(func(at int) bool { size += 64 + int64(u64(f, at+bfBits)/8); return true })
	return size
}

// BitBytes is the total bytes of the sub-filters' bit arrays, the part
// SCANDUMP sends after the header chunk.
func (f Bloom) BitBytes() int {
	n := 0
	f.each(func(at int) bool { n += int(u64(f, at+bfBits) / 8); return true })
	return n
}

func (f Bloom) has(at int, p pair) bool {
	bits := u64(f, at+bfBits)
	data := f[at+bloomFiltHead:]
	for i := range uint64(u32(f, at+bfHashes)) {
		n := p.at(i) % bits
		if data[n>>3]&(1<<(n&7)) == 0 {
			return false
		}
	}
	return true
}

// set sets the item's bits in the sub-filter at at and reports whether one
// was clear.
func (f Bloom) set(at int, p pair) bool {
	bits := u64(f, at+bfBits)
	data := f[at+bloomFiltHead:]
	changed := false
	for i := range uint64(u32(f, at+bfHashes)) {
		n := p.at(i) % bits
		if m := byte(1 << (n & 7)); data[n>>3]&m == 0 {
			data[n>>3] |= m
			changed = true
		}
	}
	return changed
}

// Exists reports whether item may have been added.
func (f Bloom) Exists(item []byte) bool {
	p := hashPair(item)
	found := false
	f.each(func(at int) bool { found = f.has(at, p); return !found })
	return found
}

func (f Bloom) last() int {
	at := bloomHead
	for range f.Filters() - 1 {
		at += bloomFiltHead + int(u64(f, at+bfBits)/8)
	}
	return at
}

// Add adds item and reports whether it was new. grow > 0 says the newest
// sub-filter is full: the caller extends the value by grow bytes of zeros
// and calls Grown, then Add again. A NONSCALING filter at capacity gives
// ErrBloomFull.
func (f Bloom) Add(item []byte) (added bool, grow int, err error) {
	p := hashPair(item)
	found := false
	f.each(func(at int) bool { found = f.has(at, p); return !found })
	if found {
		return false, 0, nil
	}
	last := f.last()
	if u64(f, last+bfItems) >= u64(f, last+bfCap) {
		if f.NonScaling() {
			return false, 0, ErrBloomFull
		}
		return false, f.growBytes(last), nil
	}
	f.set(last, p)
	put64(f, last+bfItems, u64(f, last+bfItems)+1)
	put64(f, 16, f.Items()+1)
	return true, 0, nil
}

func (f Bloom) nextFilter(last int) (capacity uint64, errorRate float64) {
	return u64(f, last+bfCap) * uint64(f.Expansion()), math.Float64frombits(u64(f, last+bfError)) * tightening
}

func (f Bloom) growBytes(last int) int {
	capacity, errorRate := f.nextFilter(last)
	bits, _ := BloomBits(capacity, errorRate)
	return bloomFiltHead + int(bits/8)
}

// Grown lays out the sub-filter Add asked for in the value's new tail.
func (f Bloom) Grown() {
	last := f.last()
	capacity, errorRate := f.nextFilter(last)
	f.initFilter(last+bloomFiltHead+int(u64(f, last+bfBits)/8), capacity, errorRate)
}

// Header is the filter's bytes up to the first sub-filter's bits, with
// every sub-filter's header: the first chunk of SCANDUMP.
func (f Bloom) Header() []byte {
	b := make([]byte, 0, bloomHead+bloomFiltHead*f.Filters())
	b = append(b, f[:bloomHead]...)
	f.each(func(at int) bool { b = append(b, f[at:at+bloomFiltHead]...); return true })
	return b
}

// BloomFromHeader checks a SCANDUMP header chunk and returns the size of
// the filter it describes.
func BloomFromHeader(h []byte) (int, bool) {
	if len(h) < bloomHead+bloomFiltHead {
		return 0, false
	}
	n := int(u32(h, 0))
	if n < 1 || n > bloomMaxFilter || len(h) != bloomHead+n*bloomFiltHead || u32(h, 4) == 0 && u32(h, 8)&bloomNonScale == 0 {
		return 0, false
	}
	size := bloomHead
	var items uint64
	for i := range n {
		at := bloomHead + i*bloomFiltHead
		bits, capacity, e := u64(h, at+bfBits), u64(h, at+bfCap), math.Float64frombits(u64(h, at+bfError))
		hashes := u32(h, at+bfHashes)
		if bits == 0 || bits%64 != 0 || bits > 1<<40 || capacity == 0 || !(e > 0 && e < 1) || hashes == 0 || hashes > 64 {
			return 0, false
		}
		items += u64(h, at+bfItems)
		size += bloomFiltHead + int(bits/8)
	}
	if items != u64(h, 16) {
		return 0, false
	}
	return size, true
}

// LoadBloomHeader lays out the filter a header chunk describes in b (of the
// size BloomFromHeader gave, zeros): headers in place, bits clear.
func LoadBloomHeader(b, h []byte) {
	copy(b, h[:bloomHead])
	at := bloomHead
	for i := range int(u32(h, 0)) {
		copy(b[at:], h[bloomHead+i*bloomFiltHead:bloomHead+(i+1)*bloomFiltHead])
		at += bloomFiltHead + int(u64(b, at+bfBits)/8)
	}
}

// BitsAt calls fn with the slices of the sub-filters' bit arrays covering
// [from, from+n) of their concatenation (SCANDUMP's and LOADCHUNK's
// offsets), and reports whether the range is inside it.
func (f Bloom) BitsAt(from, n int, fn func(part []byte)) bool {
	if from < 0 || n < 0 || from+n > f.BitBytes() {
		return false
	}
	pos := 0
	f.each(func(at int) bool {
		size := int(u64(f, at+bfBits) / 8)
		data := f[at+bloomFiltHead : at+bloomFiltHead+size]
		lo, hi := max(from-pos, 0), min(from+n-pos, size)
		if lo < hi {
			fn(data[lo:hi])
		}
		pos += size
		return pos < from+n
	})
	return true
}
