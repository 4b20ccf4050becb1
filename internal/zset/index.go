package zset

import (
	"encoding/binary"
	"hash/maphash"
)

// The member index is an open-addressing table of 2^log uint64 slots with
// linear probing and backward-shift deletion. A slot is 0 when empty, else
// tag<<offBits | (ref+1): the top tagBits of the member's hash and the
// record's slab offset. A member's home slot is the top log bits of its hash,
// so the table is in hash order whatever its size, which is what keeps Scan
// cursors meaningful across growth and shrinking; and while log <= tagBits
// the tag alone gives a slot's home, so the table resizes without reading
// members.

const (
	offBits = 40
	offMask = 1<<offBits - 1
	tagBits = 64 - offBits
	minLog  = 3
	// cursorBits is the width of Scan cursors: a hash prefix.
	cursorBits = 32
	cursorEnd  = 1 << cursorBits
)

var seed = maphash.MakeSeed()

func hashOf(b []byte) uint64 { return maphash.Bytes(seed, b) }

func refOf(slot uint64) uint64 { return slot&offMask - 1 }

// logFor returns the table size for n members: at most 3/4 full.
func logFor(n int) uint {
	log := uint(minLog)
	for (1<<log)*3 < n*4 {
		log++
	}
	return log
}

// homeOf returns the home slot of slot value s in a table of 2^log slots.
func (t *Tree) homeOf(s uint64, log uint) int {
	if log <= tagBits {
		return int(s >> offBits >> (tagBits - log))
	}
	return int(hashOf(t.member(refOf(s))) >> (64 - log))
}

// find returns the slot holding member, or -1 and the empty slot where it
// would go.
func (t *Tree) find(member []byte, h uint64) (slot, free int) {
	if len(t.slots) == 0 {
		return -1, -1
	}
	tag, mask := h>>offBits, len(t.slots)-1
	for i := int(h >> (64 - t.log)); ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return -1, i
		}
		if s>>offBits == tag && string(t.member(refOf(s))) == string(member) {
			return i, -1
		}
	}
}

// deleteSlot empties slot i, pulling later slots of its probe run back
// unless their home lies cyclically in (hole, position].
func (t *Tree) deleteSlot(i int) {
	mask := len(t.slots) - 1
	for j := (i + 1) & mask; t.slots[j] != 0; j = (j + 1) & mask {
		k := t.homeOf(t.slots[j], t.log)
		if (i <= j && i < k && k <= j) || (i > j && (i < k || k <= j)) {
			continue
		}
		t.slots[i] = t.slots[j]
		i = j
	}
	t.slots[i] = 0
}

// resize moves every slot into a fresh table of 2^log slots. With oldSlab,
// the slots' offsets are into oldSlab, whose records' score fields hold the
// records' new offsets (see compact).
func (t *Tree) resize(log uint, oldSlab *records) {
	old := t.slots
	t.slots, t.log = make([]uint64, 1<<log), log
	mask := len(t.slots) - 1
	for _, s := range old {
		if s == 0 {
			continue
		}
		if oldSlab != nil {
			s = s&^offMask | (binary.LittleEndian.Uint64(oldSlab.At(refOf(s))) + 1)
		}
		i := t.homeOf(s, log)
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}

// Scan continues an iteration at cursor (0 starts one), calling fn for the
// members of home slots in hash order until at least count were visited or
// 10*count home slots were, and returns the cursor to continue from, 0 at
// the end. The cursor is a hash prefix: every member whose hash prefix is
// below it was reported, so a member present for the whole iteration is
// reported at least once, however the set grew or shrank between calls. fn
// must not change the set.
func (t *Tree) Scan(cursor uint64, count int, fn func(member []byte, score float64)) uint64 {
	if cursor >= cursorEnd || t.count == 0 {
		return 0
	}
	count = max(count, 1)
	shift := cursorBits - t.log
	pos := cursor
	visited, budget := 0, count*10
	for pos < cursorEnd && visited < count && budget > 0 {
		home := int(pos >> shift)
		for i := home; t.slots[i] != 0; i = (i + 1) & (len(t.slots) - 1) {
			s := t.slots[i]
			if t.homeOf(s, t.log) != home {
				continue
			}
			visited++
			score, member := t.record(refOf(s))
			fn(member, score)
		}
		pos = uint64(home+1) << shift
		budget--
	}
	if pos >= cursorEnd {
		return 0
	}
	return pos
}
