package prob

import (
	"bytes"
	"math"
	"slices"
)

// A Top-K as Redis's TOPK.* commands keep one: a HeavyKeeper sketch (depth
// rows of width buckets, each a fingerprint and a count) and the k items
// with the largest estimates. An item adds to its bucket in each row; a
// bucket holding another fingerprint decays instead, by one with
// probability decay^count per unit added, and is taken over when it reaches
// zero, so small counts give way and large ones stay. The item's estimate
// is its largest count among the rows holding its fingerprint; it enters
// the top k when that beats the smallest there, expelling it.
//
// Layout: a 40-byte header (k, width, depth, items in the top list, decay,
// the decay draws' generator), the buckets (fingerprint and count, uint32
// each), k list slots (fingerprint, count, name length) and the names of
// the listed items in slot order.
type TopK []byte

const (
	topkHead = 40
	topkSlot = 12
	topkSeed = 0x746f706b5f736565 // the generator's first state
)

// TopKSize is the bytes of a new, empty Top-K.
func TopKSize(k, width, depth uint64) int { return topkHead + int(width*depth)*8 + int(k)*topkSlot }

// InitTopK lays out a new Top-K in b, TopKSize bytes of zeros.
func InitTopK(b []byte, k, width, depth uint64, decay float64) TopK {
	put32(b, 0, uint32(k))
	put32(b, 4, uint32(width))
	put32(b, 8, uint32(depth))
	put64(b, 16, math.Float64bits(decay))
	put64(b, 24, topkSeed)
	return TopK(b)
}

// K is the number of items kept.
func (t TopK) K() int { return int(u32(t, 0)) }

// Width is the buckets per row.
func (t TopK) Width() uint64 { return uint64(u32(t, 4)) }

// Depth is the rows.
func (t TopK) Depth() uint64 { return uint64(u32(t, 8)) }

// Listed is the number of items in the top list.
func (t TopK) Listed() int { return int(u32(t, 12)) }

// Decay is the decay base.
func (t TopK) Decay() float64 { return math.Float64frombits(u64(t, 16)) }

func (t TopK) slots() int { return topkHead + int(t.Width()*t.Depth())*8 }

func (t TopK) slot(i int) int { return t.slots() + i*topkSlot }

func (t TopK) names() int { return t.slots() + t.K()*topkSlot }

// Item is the name of the i-th listed item.
func (t TopK) Item(i int) []byte {
	at := t.names()
	for j := range i {
		at += int(u32(t, t.slot(j)+8))
	}
	return t[at : at+int(u32(t, t.slot(i)+8))]
}

// ItemCount is the estimate of the i-th listed item.
func (t TopK) ItemCount(i int) uint32 { return u32(t, t.slot(i)+4) }

func topkFingerprint(p pair) uint32 { return uint32(p.h1 >> 32) }

func (t TopK) bucket(p pair, row uint64) int {
	return topkHead + int(row*t.Width()+mix64(p.at(row))%t.Width())*8
}

// find returns item's slot in the top list, or -1.
func (t TopK) find(item []byte, fp uint32) int {
	at := t.names()
	for i := range t.Listed() {
		n := int(u32(t, t.slot(i)+8))
		if u32(t, t.slot(i)) == fp && bytes.Equal(t[at:at+n], item) {
			return i
		}
		at += n
	}
	return -1
}

// Query reports whether item is in the top list.
func (t TopK) Query(item []byte) bool {
	return t.find(item, topkFingerprint(hashPair(item))) >= 0
}

// Count is item's estimate in the sketch.
func (t TopK) Count(item []byte) uint32 {
	p := hashPair(item)
	fp := topkFingerprint(p)
	var est uint32
	for row := range t.Depth() {
		if at := t.bucket(p, row); u32(t, at) == fp {
			est = max(est, u32(t, at+4))
		}
	}
	return est
}

func (t TopK) draw() float64 {
	next, out := rngNext(u64(t, 24))
	put64(t, 24, next)
	return float64(out>>11) / (1 << 53)
}

// TopKChange is what adding an item asks of the top list.
type TopKChange struct {
	Count uint32 // the item's estimate after the add
	// Enter: the item is not listed and must be: it replaces slot Victim
	// (-1: the list has room) through Enter.
	Enter  bool
	Victim int
	fp     uint32
}

// Add counts item incr times and updates its count in the top list when
// listed. When it must enter the list, the change says so and the caller
// builds the new value with Enter.
func (t TopK) Add(item []byte, incr uint32) TopKChange {
	p := hashPair(item)
	fp := topkFingerprint(p)
	decay := t.Decay()
	var est uint32
	for row := range t.Depth() {
		at := t.bucket(p, row)
		bfp, count := u32(t, at), u32(t, at+4)
		switch {
		case count == 0:
			bfp, count = fp, incr
		case bfp == fp:
			count = uint32(min(uint64(count)+uint64(incr), math.MaxUint32))
		default:
			for left := incr; left > 0; left-- {
				if t.draw() < math.Pow(decay, float64(count)) {
					count--
					if count == 0 {
						bfp, count = fp, left
						break
					}
				}
			}
		}
		put32(t, at, bfp)
		put32(t, at+4, count)
		if bfp == fp {
			est = max(est, count)
		}
	}
	c := TopKChange{Count: est, Victim: -1, fp: fp}
	if i := t.find(item, fp); i >= 0 {
		put32(t, t.slot(i)+4, est)
		return c
	}
	if t.Listed() < t.K() {
		c.Enter = est > 0
		return c
	}
	low := 0
	for i := 1; i < t.Listed(); i++ {
		if t.ItemCount(i) < t.ItemCount(low) {
			low = i
		}
	}
	if est > t.ItemCount(low) {
		c.Enter, c.Victim = true, low
	}
	return c
}

// Enter appends to dst the Top-K with item listed as c says (replacing its
// victim), and returns it.
func (t TopK) Enter(dst, item []byte, c TopKChange) []byte {
	names := t.names()
	dst = append(dst, t[:names]...)
	at := names
	listed := t.Listed()
	for i := range listed {
		size := int(u32(t, t.slot(i)+8))
		if i == c.Victim {
			dst = append(dst, item...)
		} else {
			dst = append(dst, t[at:at+size]...)
		}
		at += size
	}
	slot := c.Victim
	if slot < 0 {
		dst = append(dst, item...)
		slot = listed
		put32(dst, 12, uint32(listed+1))
	}
	n := TopK(dst)
	put32(n, n.slot(slot), c.fp)
	put32(n, n.slot(slot)+4, c.Count)
	put32(n, n.slot(slot)+8, uint32(len(item)))
	return dst
}

// Ranked returns the listed items' slots, largest count first (ties in
// slot order).
func (t TopK) Ranked() []int {
	order := make([]int, t.Listed())
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ca, cb := t.ItemCount(a), t.ItemCount(b)
		switch {
		case ca > cb:
			return -1
		case ca < cb:
			return 1
		}
		return 0
	})
	return order
}
