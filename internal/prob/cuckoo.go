package prob

import (
	"errors"
	"math/bits"
)

// A Cuckoo filter as Redis's CF.* commands keep one: 8-bit fingerprints
// (1..255; 0 is an empty slot) in buckets of BUCKETSIZE slots, each item
// with two candidate buckets (the second derived from the first and the
// fingerprint, so a fingerprint moves between them without its item).
// When an insert finds both full it relocates fingerprints up to
// MAXITERATIONS times; when that fails it undoes the moves and appends a
// sub-filter EXPANSION times larger (up to 32). Lookups check every
// sub-filter. Deleting removes one copy of the fingerprint, so an item
// added twice is there until deleted twice.
//
// Layout: a 32-byte header (buckets of the first sub-filter, items,
// deletions, bucket size, max iterations, expansion, sub-filters), then
// the sub-filters' buckets, one byte per slot.
type Cuckoo []byte

const (
	cuckooHead       = 32
	CuckooMaxFilters = 32
	cuckooSeed       = 0x43554b4f4f // distinct from the Bloom filters' hashes
)

// ErrCuckooFull is a filter that can neither place an item nor grow.
var ErrCuckooFull = errors.New("ERR Filter is full")

// CuckooBuckets is the number of buckets Redis gives a filter of capacity
// with bucketSize slots per bucket: capacity/bucketSize rounded up to a
// power of two.
func CuckooBuckets(capacity uint64, bucketSize int) uint64 {
	n := capacity / uint64(bucketSize)
	if n <= 1 {
		return 1
	}
	return 1 << bits.Len64(n-1)
}

// CuckooSize is the bytes of a new filter.
func CuckooSize(buckets uint64, bucketSize int) int {
	return cuckooHead + int(buckets)*bucketSize
}

// InitCuckoo lays out a new filter in b, CuckooSize bytes of zeros.
func InitCuckoo(b []byte, buckets uint64, bucketSize, maxIterations, expansion int) Cuckoo {
	f := Cuckoo(b)
	put64(f, 0, buckets)
	f[24] = byte(bucketSize)
	f[26], f[27] = byte(maxIterations), byte(maxIterations>>8)
	f[28], f[29] = byte(expansion), byte(expansion>>8)
	f[30] = 1
	return f
}

func (f Cuckoo) buckets0() uint64 { return u64(f, 0) }

// Buckets is the number of buckets of the first sub-filter.
func (f Cuckoo) Buckets() uint64 { return f.buckets0() }

// Items is the number of items in the filter (added and not deleted).
func (f Cuckoo) Items() uint64 { return u64(f, 8) }

// Deleted is the number of items deleted.
func (f Cuckoo) Deleted() uint64 { return u64(f, 16) }

// BucketSize is the slots per bucket.
func (f Cuckoo) BucketSize() int { return int(f[24]) }

// MaxIterations is the relocations an insert tries.
func (f Cuckoo) MaxIterations() int { return int(f[26]) | int(f[27])<<8 }

// Expansion is the growth factor as reserved.
func (f Cuckoo) Expansion() int { return int(f[28]) | int(f[29])<<8 }

// Filters is the number of sub-filters.
func (f Cuckoo) Filters() int { return int(f[30]) | int(f[31])<<8 }

func (f Cuckoo) growth() uint64 {
	e := uint64(f.Expansion())
	if e <= 1 {
		return 1
	}
	return 1 << bits.Len64(e-1) // rounded up to a power of two, as Redis does
}

// RedisSize is the memory Redis reports for the same filter (CF.INFO
// Size): its structures plus the buckets.
func (f Cuckoo) RedisSize() int64 {
	return int64(40 + 16*f.Filters() + len(f.Data()))
}

// subFilter is one sub-filter: its buckets' bytes and its bucket mask.
type subFilter struct {
	data []byte
	mask uint64
}

func (f Cuckoo) each(fn func(s subFilter) bool) {
	at, n, bs := cuckooHead, f.buckets0(), f.BucketSize()
	g := f.growth()
	for range f.Filters() {
		size := int(n) * bs
		if !fn(subFilter{f[at : at+size], n - 1}) {
			return
		}
		at += size
		n *= g
	}
}

func (f Cuckoo) lastFilter() (s subFilter) {
	f.each(func(x subFilter) bool { s = x; return true })
	return s
}

type cuckooKey struct {
	h  uint64
	fp byte
}

func cuckooHash(item []byte) cuckooKey {
	h := Hash(item, cuckooSeed)
	return cuckooKey{h, byte((h>>32)%255) + 1}
}

func alt(i uint64, fp byte, mask uint64) uint64 { return (i ^ mix64(uint64(fp))) & mask }

func (f Cuckoo) bucket(s subFilter, i uint64) []byte {
	bs := uint64(f.BucketSize())
	return s.data[i*bs : (i+1)*bs]
}

// Count is the number of copies of item's fingerprint in its buckets.
func (f Cuckoo) Count(item []byte) int64 {
	k := cuckooHash(item)
	var n int64
	f.each(func(s subFilter) bool {
		i1 := k.h & s.mask
		i2 := alt(i1, k.fp, s.mask)
		for _, c := range f.bucket(s, i1) {
			if c == k.fp {
				n++
			}
		}
		if i2 != i1 {
			for _, c := range f.bucket(s, i2) {
				if c == k.fp {
					n++
				}
			}
		}
		return true
	})
	return n
}

// Exists reports whether item may be in the filter.
func (f Cuckoo) Exists(item []byte) bool {
	k := cuckooHash(item)
	found := false
	f.each(func(s subFilter) bool {
		i1 := k.h & s.mask
		found = f.findIn(s, i1, k.fp) >= 0 || f.findIn(s, alt(i1, k.fp, s.mask), k.fp) >= 0
		return !found
	})
	return found
}

func (f Cuckoo) findIn(s subFilter, i uint64, fp byte) int {
	for j, c := range f.bucket(s, i) {
		if c == fp {
			return j
		}
	}
	return -1
}

// Delete removes one copy of item's fingerprint, newest sub-filter first,
// and reports whether there was one.
func (f Cuckoo) Delete(item []byte) bool {
	k := cuckooHash(item)
	var subs []subFilter
	f.each(func(s subFilter) bool { subs = append(subs, s); return true })
	for n := len(subs) - 1; n >= 0; n-- {
		s := subs[n]
		i1 := k.h & s.mask
		for _, i := range [2]uint64{i1, alt(i1, k.fp, s.mask)} {
			if j := f.findIn(s, i, k.fp); j >= 0 {
				f.bucket(s, i)[j] = 0
				put64(f, 8, f.Items()-1)
				put64(f, 16, f.Deleted()+1)
				return true
			}
		}
	}
	return false
}

// Add inserts item. grow > 0 says no slot was found: the caller extends
// the value by grow bytes of zeros, calls Grown and adds again. A filter
// at its last sub-filter gives ErrCuckooFull.
func (f Cuckoo) Add(item []byte) (grow int, err error) {
	k := cuckooHash(item)
	placed := false
	f.each(func(s subFilter) bool {
		i1 := k.h & s.mask
		placed = f.place(s, i1, k.fp) || f.place(s, alt(i1, k.fp, s.mask), k.fp)
		return !placed
	})
	if !placed {
		placed = f.relocate(f.lastFilter(), k)
	}
	if placed {
		put64(f, 8, f.Items()+1)
		return 0, nil
	}
	if f.Filters() >= CuckooMaxFilters {
		return 0, ErrCuckooFull
	}
	return int(f.lastFilter().mask+1) * int(f.growth()) * f.BucketSize(), nil
}

// Grown counts the sub-filter whose zeroed buckets the caller appended.
func (f Cuckoo) Grown() {
	n := f.Filters() + 1
	f[30], f[31] = byte(n), byte(n>>8)
}

func (f Cuckoo) place(s subFilter, i uint64, fp byte) bool {
	if j := f.findIn(s, i, 0); j >= 0 {
		f.bucket(s, i)[j] = fp
		return true
	}
	return false
}

// relocate makes room for k in s by moving fingerprints to their other
// buckets; when MAXITERATIONS moves are not enough it puts every one back
// and reports false. The slots it takes are chosen from the fingerprints
// themselves, so the same inserts give the same filter everywhere.
func (f Cuckoo) relocate(s subFilter, k cuckooKey) bool {
	type move struct {
		bucket uint64
		slot   int
	}
	bs := f.BucketSize()
	cur := k.h & s.mask
	if k.h>>63 != 0 {
		cur = alt(cur, k.fp, s.mask)
	}
	carry := k.fp
	moves := make([]move, 0, min(f.MaxIterations(), 64))
	for n := range f.MaxIterations() {
		slot := (int(carry) + n) % bs
		b := f.bucket(s, cur)
		b[slot], carry = carry, b[slot]
		moves = append(moves, move{cur, slot})
		cur = alt(cur, carry, s.mask)
		if f.place(s, cur, carry) {
			return true
		}
	}
	for n := len(moves) - 1; n >= 0; n-- {
		b := f.bucket(s, moves[n].bucket)
		b[moves[n].slot], carry = carry, b[moves[n].slot]
	}
	return false
}

// CuckooFromHeader checks a SCANDUMP header chunk and returns the size of
// the filter it describes.
func CuckooFromHeader(h []byte) (int, bool) {
	if len(h) != cuckooHead {
		return 0, false
	}
	f := Cuckoo(h)
	n, bs := f.buckets0(), f.BucketSize()
	if n == 0 || n&(n-1) != 0 || bs == 0 || f.Filters() < 1 || f.Filters() > CuckooMaxFilters || f.MaxIterations() == 0 {
		return 0, false
	}
	size, g := cuckooHead, f.growth()
	for range f.Filters() {
		if n > 1<<36/uint64(bs) {
			return 0, false
		}
		size += int(n) * bs
		n *= g
	}
	return size, true
}

// Header is the filter's header, the first chunk of SCANDUMP.
func (f Cuckoo) Header() []byte { return f[:cuckooHead] }

// Data is every sub-filter's buckets, in order.
func (f Cuckoo) Data() []byte { return f[cuckooHead:] }
