package keyspace

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"sync"

	"github.com/keyhive/keyhive/internal/sample"
)

// An index slot is 0 when empty, else: occupied bit | top 23 bits of the key's
// hash | ref. The hash bits give the slot's home position for tables of up to
// 2^23 slots, so the table grows, shrinks and deletes without rehashing keys,
// and SCAN walks keys in hash order (see scan.go).
//
// Collisions use Robin Hood linear probing: a run of slots stays ordered by
// home, so a lookup stops at the first slot whose occupant is closer to its own
// home than the key would be, and a miss costs about as much as a hit.
const (
	tagBits     = 23
	maxTableLog = tagBits
	occupied    = 1 << 63
	tagMask     = 1<<tagBits - 1
	minTableLog = 3
)

// shard holds the keys of SlotCount/Shards cluster slots of one database.
type shard struct {
	mu       sync.Mutex
	owner    Owner // the LockSet owner holding mu, for the Modified hook
	slots    []uint64
	tableLog uint8 // len(slots) == 1<<tableLog when slots != nil
	count    int
	volatile int // keys with an expire time
	arena    arena
	expireAt int // where the active expiry cycle resumes in slots
	// writes draws which writes to the shard's keys prefix discovery
	// samples (Schema.Wrote), under mu.
	writes sample.Sampler

	// objects holds the values too large for inline encodings; an entry
	// refers to one by index. Released indexes are reused first.
	objects     []Object
	freeObjects []uint32
	// objectLens holds each object's length as last reported to the
	// Schema: an object changed in place no longer knows its old one.
	objectLens []int64

	// sub maps the keys whose values hold elements with expire times of
	// their own (hashes with field TTLs) to the earliest of them (see
	// subexpire.go); nil while there are none.
	sub map[string]int64
	// blessed counts the keys protected from eviction (flagBlessed).
	blessed int

	// pending: the running snapshot has not saved the shard yet, so a key
	// is copied into early before it changes (see Snapshot).
	pending   bool
	early     []byte
	earlyKeys int // the keys whose records early holds
}

func (s *shard) addObject(o Object) uint32 {
	if n := len(s.freeObjects); n > 0 {
		id := s.freeObjects[n-1]
		s.freeObjects = s.freeObjects[:n-1]
		s.objects[id] = o
		return id
	}
	s.objects = append(s.objects, o)
	s.objectLens = append(s.objectLens, 0)
	return uint32(len(s.objects) - 1)
}

func (s *shard) releaseObject(handle []byte) {
	id := binary.LittleEndian.Uint32(handle)
	s.objects[id] = nil
	s.freeObjects = append(s.freeObjects, id)
}

func tagOf(h uint64) uint64 { return h >> (64 - tagBits) }

func slotTag(s uint64) uint64 { return s >> refBits & tagMask }

func (s *shard) home(tag uint64) int { return int(tag >> (tagBits - uint64(s.tableLog))) }

func (s *shard) mask() int { return len(s.slots) - 1 }

// find returns the index slot holding key, or -1.
func (s *shard) find(key []byte, h uint64) int {
	if s.count == 0 {
		return -1
	}
	tag := tagOf(h)
	m := s.mask()
	home := s.home(tag)
	for i, dist := home, 0; ; i, dist = (i+1)&m, dist+1 {
		v := s.slots[i]
		if v == 0 || s.distance(v, i) < dist {
			return -1
		}
		if slotTag(v) == tag && bytes.Equal(entryKey(s.arena.entry(v&refMask)), key) {
			return i
		}
	}
}

// distance is how far slot i is from the home of its occupant v.
func (s *shard) distance(v uint64, i int) int {
	return (i - s.home(slotTag(v))) & s.mask()
}

// insert adds a new entry (the key must not exist) and returns its index slot.
func (s *shard) insert(h uint64, ref uint64) int {
	if s.slots == nil {
		s.resize(minTableLog)
	} else if (s.count+1)*5 > len(s.slots)*4 && s.tableLog < maxTableLog {
		s.resize(s.tableLog + 1)
	}
	s.count++
	return s.place(occupied | tagOf(h)<<refBits | ref)
}

// place puts v into the table, displacing occupants that are closer to their
// home, and returns where v itself landed.
func (s *shard) place(v uint64) int {
	m := s.mask()
	at := -1
	for i, dist := s.home(slotTag(v)), 0; ; i, dist = (i+1)&m, dist+1 {
		cur := s.slots[i]
		if cur == 0 {
			s.slots[i] = v
			if at < 0 {
				at = i
			}
			return at
		}
		if d := s.distance(cur, i); d < dist {
			s.slots[i], v = v, cur
			if at < 0 {
				at = i
			}
			dist = d
		}
	}
}

// remove empties index slot i, shifting later members of its probe run back so
// that lookups need no tombstones.
func (s *shard) remove(i int) {
	s.count--
	m := s.mask()
	for j := (i + 1) & m; s.slots[j] != 0; j = (j + 1) & m {
		h := s.home(slotTag(s.slots[j]))
		// Move slot j into the hole unless its home lies cyclically in (i, j].
		if (i <= j && (h <= i || h > j)) || (i > j && h <= i && h > j) {
			s.slots[i] = s.slots[j]
			i = j
		}
	}
	s.slots[i] = 0
	if s.count == 0 {
		s.slots, s.tableLog = nil, 0
		s.expireAt = 0
	} else if s.count*8 < len(s.slots) && s.tableLog > minTableLog {
		s.resize(s.tableLog - 1)
	}
}

func (s *shard) resize(log uint8) {
	old := s.slots
	s.slots, s.tableLog = make([]uint64, 1<<log), log
	for _, v := range old {
		if v != 0 {
			s.place(v)
		}
	}
	s.expireAt = 0
}

// evacuate unmaps the large entries that died, makes the holes of the
// command that held the shard ready to be filled, and moves the live entries
// out of chunks worth compacting: the tail chunk's down to its start (its
// emptied pages go back to the OS), any other's to the tail, releasing the
// chunk. It runs only when the shard's command has finished with any entry
// bytes it held (see Keyspace.Unlock), since it moves and unmaps entries.
func (s *shard) evacuate(seed maphash.Seed) {
	a := &s.arena
	a.setGarbage(false)
	a.releaseLarge()
	a.ready = len(a.holes)
	compact := false
	for id := range a.chunks {
		if c := &a.chunks[id]; c.data != nil && !c.large && a.worthCompacting(c) {
			compact = true
		}
	}
	if !compact {
		if a.harvest {
			a.harvestHoles()
		}
		return
	}
	a.clearHoles() // they move or go with their chunks
	a.harvest = false
	a.scanOff = 0
	if a.tail >= 0 && a.worthCompacting(&a.chunks[a.tail]) {
		s.compactTail(seed)
	}
	for id := range a.chunks {
		c := &a.chunks[id]
		if c.data == nil || c.large || id == a.tail || !a.worthCompacting(c) {
			continue
		}
		for off := 0; off < c.used; {
			e := c.data[off:]
			h := decode(e)
			if h.flags&flagDead == 0 {
				from := uint64(id)<<chunkBits | uint64(off)
				i := s.findRef(maphash.Bytes(seed, h.key), from)
				ref, dst := a.alloc(h.size, 0)
				copy(dst, e[:h.size])
				s.slots[i] = s.slots[i]&^refMask | ref
				c = &a.chunks[id] // alloc may have grown a.chunks
			}
			off += h.size
		}
		a.release(id)
	}
}

// compactTail slides the tail chunk's live entries down over its garbage,
// which costs no new chunk and no copy to another one.
func (s *shard) compactTail(seed maphash.Seed) {
	a := &s.arena
	id := a.tail
	c := &a.chunks[id]
	to := 0
	for off := 0; off < c.used; {
		h := decode(c.data[off:])
		size := h.size
		if h.flags&flagDead == 0 {
			if to != off {
				i := s.findRef(maphash.Bytes(seed, h.key), uint64(id)<<chunkBits|uint64(off))
				copy(c.data[to:], c.data[off:off+size])
				s.slots[i] = s.slots[i]&^refMask | uint64(id)<<chunkBits | uint64(to)
			}
			to += size
		}
		off += size
	}
	a.truncate(c, to)
}

// findRef returns the index slot pointing at ref.
func (s *shard) findRef(h uint64, ref uint64) int {
	for i := s.home(tagOf(h)); ; i = (i + 1) & s.mask() {
		if s.slots[i]&refMask == ref && s.slots[i] != 0 {
			return i
		}
	}
}

// reset drops every key.
func (s *shard) reset() {
	s.arena.releaseAll()
	s.slots, s.tableLog, s.count, s.volatile, s.expireAt = nil, 0, 0, 0, 0
	s.objects, s.freeObjects, s.objectLens = nil, nil, nil
	s.sub = nil
	s.blessed = 0
}
