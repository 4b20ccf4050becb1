// Package bytemap is the large form of a hash: a map from byte strings to byte
// strings that holds no Go pointer per element. Records (uvarint field length,
// field, uvarint value length, value) are appended to one byte slab; an
// open-addressing index of uint64 slots (24 bits of the field's hash, 40 bits
// of slab offset) finds them with linear probing and backward-shift deletion.
// Dead records are reclaimed by compacting the slab once they are more than
// half of it.
//
// Keys are kept in hash order: the index is a table of 2^b buckets where a
// field's home bucket is the top b bits of its hash, so a scan cursor that is a
// hash prefix stays meaningful however the table grows or shrinks between
// calls (see Scan).
package bytemap

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math/rand/v2"
)

const (
	offBits = 40
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
	slab  []byte
	index []uint64 // 0 = empty, else tag<<offBits | (offset+1)
	log   uint
	count int
	dead  int // bytes of slab held by removed records
}

// Len returns the number of fields.
func (m *Map) Len() int { return m.count }

// MemoryBytes returns the bytes the map holds allocated.
func (m *Map) MemoryBytes() int { return cap(m.slab) + 8*cap(m.index) }

// Clone returns an independent copy.
func (m *Map) Clone() *Map {
	c := *m
	c.slab = bytes.Clone(m.slab)
	c.index = append([]uint64(nil), m.index...)
	return &c
}

func (m *Map) mask() int { return len(m.index) - 1 }

// record returns the field and value of the record at off and its end.
func (m *Map) record(off int) (field, value []byte, end int) {
	l, n := binary.Uvarint(m.slab[off:])
	fs := off + n
	fe := fs + int(l)
	l, n = binary.Uvarint(m.slab[fe:])
	vs := fe + n
	end = vs + int(l)
	return m.slab[fs:fe:fe], m.slab[vs:end:end], end
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
			if f, _, _ := m.record(offsetOf(s)); bytes.Equal(f, field) {
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
	off := len(m.slab)
	if off > offMask-len(field)-len(value)-2*binary.MaxVarintLen64 {
		panic("bytemap: slab exceeds 1 TiB")
	}
	m.slab = binary.AppendUvarint(m.slab, uint64(len(field)))
	m.slab = append(m.slab, field...)
	m.slab = binary.AppendUvarint(m.slab, uint64(len(value)))
	m.slab = append(m.slab, value...)
	return off
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
	if m.dead > 0 && m.dead*2 > len(m.slab) {
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
		m.slab = make([]byte, 0, len(oldSlab)-m.dead)
		m.dead = 0
	}
	for _, s := range old {
		if s == 0 {
			continue
		}
		off := offsetOf(s)
		if compact {
			_, _, end := recordIn(oldSlab, off)
			newOff := len(m.slab)
			m.slab = append(m.slab, oldSlab[off:end]...)
			off = newOff
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

func recordIn(slab []byte, off int) (field, value []byte, end int) {
	m := Map{slab: slab}
	return m.record(off)
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
