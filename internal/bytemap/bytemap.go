// Package bytemap is the large form of a hash: a map from byte strings to byte
// strings that holds no Go pointer per element. Records (uvarint field length,
// field, uvarint value length, value) are appended to an internal/slab store
// (64 KiB chunks: growing never copies them); an open-addressing index of
// uint64 slots (24 bits of the field's hash, 40 bits of record ref) finds them
// with linear probing and backward-shift deletion. Dead records are reclaimed
// by compacting the store once they are more than half of it.
//
// Keys are kept in hash order: the index is a table of 2^b buckets where a
// field's home bucket is the top b bits of its hash, so a scan cursor that is a
// hash prefix stays meaningful however the table grows or shrinks between
// calls (see Scan).
package bytemap

import (
	"encoding/binary"
	"hash/maphash"
	"math/rand/v2"

	"github.com/keyhive/keyhive/internal/slab"
)

const (
	offBits = slab.RefBits
	offMask = 1<<offBits - 1
	tagBits = 64 - offBits
	minLog  = 3
	// CursorBits is the width of Scan cursors.
	CursorBits = 32
	cursorEnd  = 1 << CursorBits
)

var seed = maphash.MakeSeed()

func hashOf(b []byte) uint64 { return maphash.Bytes(seed, b) }

// Map is a byte-string map. The zero value is an empty map ready to use.
type Map struct {
	slab  slab.Slab
	index []uint64 // 0 = empty, else tag<<offBits | (ref+1)
	log   uint
	count int
	dead  int // bytes of slab held by removed records
}

// Len returns the number of fields.
func (m *Map) Len() int { return m.count }

// MemoryBytes returns the bytes the map holds allocated.
func (m *Map) MemoryBytes() int { return m.slab.MemoryBytes() + 8*cap(m.index) }

// Clone returns an independent copy.
func (m *Map) Clone() *Map {
	c := *m
	c.slab = m.slab.Clone()
	c.index = append([]uint64(nil), m.index...)
	return &c
}

func (m *Map) mask() int { return len(m.index) - 1 }

// record returns the field and value of the record at off and its end
// (off + its size).
func (m *Map) record(off int) (field, value []byte, end int) { return recordIn(&m.slab, off) }

func recordIn(s *slab.Slab, off int) (field, value []byte, end int) {
	b := s.At(uint64(off))
	l, n := binary.Uvarint(b)
	fs := n
	fe := fs + int(l)
	l, n = binary.Uvarint(b[fe:])
	vs := fe + n
	size := vs + int(l)
	return b[fs:fe:fe], b[vs:size:size], off + size
}

func offsetOf(s uint64) int { return int(s&offMask) - 1 }

// homeOf returns the home bucket of the record in slot value s.
func (m *Map) homeOf(s uint64) int {
	if m.log <= tagBits {
		return int(s >> offBits >> (tagBits - m.log))
	}
	f, _, _ := m.record(offsetOf(s))
	return int(hashOf(f) >> (64 - m.log))
}

// find returns the slot holding field, or -1 and the empty slot where it would
// be inserted.
func (m *Map) find(field []byte, h uint64) (slot, free int) {
	if len(m.index) == 0 {
		return -1, -1
	}
	tag := h >> offBits
	for i := int(h >> (64 - m.log)); ; i = (i + 1) & m.mask() {
		s := m.index[i]
		if s == 0 {
			return -1, i
		}
		if s>>offBits == tag {
			if f, _, _ := m.record(offsetOf(s)); string(f) == string(field) {
				return i, -1
			}
		}
	}
}

// Get returns field's value. It aliases the map's memory and is valid until
// the map is next changed.
func (m *Map) Get(field []byte) ([]byte, bool) {
	i, _ := m.find(field, hashOf(field))
	if i < 0 {
		return nil, false
	}
	_, v, _ := m.record(offsetOf(m.index[i]))
	return v, true
}

// Set sets field to value and reports whether the field is new.
func (m *Map) Set(field, value []byte) (added bool) {
	h := hashOf(field)
	i, free := m.find(field, h)
	if i >= 0 {
		off := offsetOf(m.index[i])
		_, old, end := m.record(off)
		if len(old) == len(value) {
			copy(old, value)
			return false
		}
		m.dead += end - off
		m.index[i] = m.index[i]&^offMask | uint64(m.appendRecord(field, value)+1)
		m.maybeCompact()
		return false
	}
	if (m.count+1)*4 > len(m.index)*3 {
		m.rebuild(m.count+1, false)
		_, free = m.find(field, h)
	}
	m.index[free] = h>>offBits<<offBits | uint64(m.appendRecord(field, value)+1)
	m.count++
	return true
}

func (m *Map) appendRecord(field, value []byte) int {
	var fl, vl [binary.MaxVarintLen64]byte
	fn := binary.PutUvarint(fl[:], uint64(len(field)))
	vn := binary.PutUvarint(vl[:], uint64(len(value)))
	ref, b := m.slab.Reserve(fn + len(field) + vn + len(value))
	b = b[copy(b, fl[:fn]):]
	b = b[copy(b, field):]
	copy(b[copy(b, vl[:vn]):], value)
	return int(ref)
}

// Delete removes field and reports whether it was present.
func (m *Map) Delete(field []byte) bool {
	i, _ := m.find(field, hashOf(field))
	if i < 0 {
		return false
	}
	off := offsetOf(m.index[i])
	_, _, end := m.record(off)
	m.dead += end - off
	m.count--
	// Backward shift: pull later records of the probe run into the hole unless
	// their home lies cyclically in (hole, position].
	mask := m.mask()
	for j := (i + 1) & mask; m.index[j] != 0; j = (j + 1) & mask {
		k := m.homeOf(m.index[j])
		if (i <= j && i < k && k <= j) || (i > j && (i < k || k <= j)) {
			continue
		}
		m.index[i] = m.index[j]
		i = j
	}
	m.index[i] = 0
	m.maybeCompact()
	return true
}

func (m *Map) maybeCompact() {
	if m.dead > 0 && m.dead*2 > m.slab.Used {
		m.rebuild(m.count, true)
	}
}

// rebuild sizes the index for n fields and rehashes every record into it;
// with compact it also copies the live records into a fresh slab.
func (m *Map) rebuild(n int, compact bool) {
	log := uint(minLog)
	for (1<<log)*3 < n*4 {
		log++
	}
	old := m.index
	m.index = make([]uint64, 1<<log)
	m.log = log
	oldSlab := m.slab
	if compact {
		m.slab = slab.Slab{}
		m.dead = 0
	}
	for _, s := range old {
		if s == 0 {
			continue
		}
		off := offsetOf(s)
		if compact {
			_, _, end := recordIn(&oldSlab, off)
			ref, b := m.slab.Reserve(end - off)
			copy(b, oldSlab.At(uint64(off)))
			off = int(ref)
		}
		f, _, _ := m.record(off)
		h := hashOf(f)
		i := int(h >> (64 - log))
		for m.index[i] != 0 {
			i = (i + 1) & m.mask()
		}
		m.index[i] = h>>offBits<<offBits | uint64(off+1)
	}
}

// Next returns the first position at or after pos that holds a field, or -1.
// Positions are stable until the map is next changed:
//
//	for p := m.Next(0); p >= 0; p = m.Next(p + 1) { f, v := m.At(p) }
func (m *Map) Next(pos int) int {
	for ; pos < len(m.index); pos++ {
		if m.index[pos] != 0 {
			return pos
		}
	}
	return -1
}

// At returns the field and value at a position Next or RandomPos returned.
func (m *Map) At(pos int) (field, value []byte) {
	f, v, _ := m.record(offsetOf(m.index[pos]))
	return f, v
}

// RandomPos returns a uniformly random position holding a field; the map must
// not be empty.
func (m *Map) RandomPos() int {
	for {
		if i := rand.IntN(len(m.index)); m.index[i] != 0 {
			return i
		}
	}
}

// Scan continues an iteration at cursor (0 starts one), calling fn for the
// fields of home buckets in hash order until at least count were visited or
// 10*count buckets were, and returns the cursor to continue from, 0 at the
// end. The cursor is a hash prefix of CursorBits bits: every field whose hash
// prefix is below it was reported, so a field present for the whole iteration
// is reported at least once, however the map changed between calls. fn must
// not change the map.
func (m *Map) Scan(cursor uint64, count int, fn func(field, value []byte)) uint64 {
	if cursor >= cursorEnd || m.count == 0 {
		return 0
	}
	shift := CursorBits - m.log
	pos := cursor
	visited, budget := 0, max(count, 1)*10
	for pos < cursorEnd && visited < max(count, 1) && budget > 0 {
		bucket := int(pos >> shift)
		for i := bucket; m.index[i] != 0; i = (i + 1) & m.mask() {
			s := m.index[i]
			if m.homeOf(s) != bucket {
				continue
			}
			visited++
			f, v, _ := m.record(offsetOf(s))
			fn(f, v)
		}
		pos = uint64(bucket+1) << shift
		budget--
	}
	if pos >= cursorEnd {
		return 0
	}
	return pos
}
