// Package array is Redis 8.8's Array type: a sparse array of byte strings
// indexed 0 to MaxIndex, with the insert cursor ARINSERT and ARRING
// advance.
//
// No Go object per element. The index space is cut into pages of
// PageSlots slots. Their pointer-free headers are sorted by page number in
// blocks of at most blockPages, so a new page among many moves one block's
// headers, not all of them.
// A page with few elements is sparse: a run of sorted (slot, ref) entries
// in one shared pointer-free pool. A page past denseAt elements becomes
// dense: a slice of PageSlots refs, one allocation for thousands of
// elements. The values are records (uvarint length, bytes) in an
// internal/slab, whose 64 KiB chunks a growing array never copies. A small
// array is one page, a run of a few entries and one small chunk.
//
// Deleted records and abandoned runs are counted and reclaimed by
// rebuilding the slab or the pool once they outweigh what is live, so
// the cost is amortized over the writes that made them.
package array

import (
	"encoding/binary"
	"math"
	"sort"

	"github.com/keyhive/keyhive/internal/slab"
)

const (
	// PageBits is log2 of the slots per page.
	PageBits = 12
	// PageSlots is the slots per page (ARINFO's slice-size).
	PageSlots = 1 << PageBits
	slotMask  = PageSlots - 1
	// MaxIndex is the last index an element may have.
	MaxIndex = math.MaxUint64 - 1
	// Exhausted is the cursor once an insert has used MaxIndex.
	Exhausted = math.MaxUint64

	denseAt  = 512 // a sparse page turns dense on reaching this many elements
	sparseAt = 128 // a dense page turns sparse on falling below this many
	minRun   = 4   // a new run's capacity
	// blockPages is the most page headers a block holds; a fuller block
	// splits in two.
	blockPages = 1024
)

// page is one page's header; it holds no pointers.
type page struct {
	num   uint64 // the page's first index >> PageBits
	start uint64 // sparse: its run's first entry in Array.runs
	count uint32 // elements
	cap   uint32 // sparse: its run's capacity
	dense int32  // its refs in Array.dense, or -1 when sparse
}

// block is a run of page headers, ascending, none of them shared with
// another block.
type block struct{ pages []page }

// Array is a sparse array. The zero value is empty and ready to use.
type Array struct {
	dir       []block  // ascending page numbers, no block empty
	runs      []uint64 // sparse runs: ref<<PageBits | slot, ascending slots
	deadRuns  int      // entries of runs no page uses
	dense     [][]uint64
	freeDense []int32 // indexes of a.dense given back by pages turned sparse
	data      slab.Slab
	live      int // bytes of records in use
	count     uint64
	next      uint64 // the insert cursor
}

// Count returns the number of elements.
func (a *Array) Count() uint64 { return a.count }

// Len returns the highest index in use plus one, 0 when empty.
func (a *Array) Len() uint64 {
	if a.count == 0 {
		return 0
	}
	pages := a.dir[len(a.dir)-1].pages
	p := &pages[len(pages)-1]
	var last uint64
	a.eachInPage(p, slotMask, 0, func(slot uint64, _ uint64) bool { last = slot; return false })
	return p.num<<PageBits | last + 1
}

// Next returns the insert cursor: the index ARINSERT writes next, or
// Exhausted.
func (a *Array) Next() uint64 { return a.next }

// Seek sets the insert cursor (Exhausted allowed).
func (a *Array) Seek(i uint64) { a.next = i }

// locate returns the block and position of page num, or where it would go:
// in the last block whose first page is below it (the first block when
// there is none), at pi up to the block's length.
func (a *Array) locate(num uint64) (bi, pi int, found bool) {
	if len(a.dir) == 0 {
		return 0, 0, false
	}
	bi = max(0, sort.Search(len(a.dir), func(i int) bool { return a.dir[i].pages[0].num > num })-1)
	pages := a.dir[bi].pages
	pi = sort.Search(len(pages), func(i int) bool { return pages[i].num >= num })
	return bi, pi, pi < len(pages) && pages[pi].num == num
}

// insertPage puts a new page num at block bi, position pi (from locate)
// and returns it; a block past blockPages splits.
func (a *Array) insertPage(bi, pi int, num uint64) *page {
	if len(a.dir) == 0 {
		a.dir = append(a.dir, block{})
	}
	b := &a.dir[bi]
	b.pages = append(b.pages, page{})
	copy(b.pages[pi+1:], b.pages[pi:])
	b.pages[pi] = page{num: num, dense: -1}
	if len(b.pages) <= blockPages {
		return &b.pages[pi]
	}
	// Each half gets a slice of its own size, so that blocks hold what
	// they use, and grows as inserts come to it.
	half := len(b.pages) / 2
	upper := block{pages: append([]page(nil), b.pages[half:]...)}
	b.pages = append([]page(nil), b.pages[:half]...)
	a.dir = append(a.dir, block{})
	copy(a.dir[bi+2:], a.dir[bi+1:])
	a.dir[bi+1] = upper
	if pi >= half {
		return &a.dir[bi+1].pages[pi-half]
	}
	return &a.dir[bi].pages[pi]
}

// removePage drops the page at block bi, position pi, and its block when
// that empties; blockGone says so.
func (a *Array) removePage(bi, pi int) (blockGone bool) {
	b := &a.dir[bi]
	b.pages = append(b.pages[:pi], b.pages[pi+1:]...)
	if len(b.pages) > 0 {
		return false
	}
	a.dir = append(a.dir[:bi], a.dir[bi+1:]...)
	return true
}

// eachPage calls fn with every page, ascending.
func (a *Array) eachPage(fn func(p *page)) {
	for bi := range a.dir {
		pages := a.dir[bi].pages
		for pi := range pages {
			fn(&pages[pi])
		}
	}
}

// run returns a sparse page's entries.
func (a *Array) run(p *page) []uint64 { return a.runs[p.start : p.start+uint64(p.count)] }

// findSlot returns the position of slot in a sparse page's run, or where it
// would go.
func findSlot(run []uint64, slot uint64) (int, bool) {
	i := sort.Search(len(run), func(i int) bool { return run[i]&slotMask >= slot })
	return i, i < len(run) && run[i]&slotMask == slot
}

// ref returns the record ref at slot of p: ok=false when the slot is empty.
func (a *Array) ref(p *page, slot uint64) (uint64, bool) {
	if p.dense >= 0 {
		r := a.dense[p.dense][slot]
		return r - 1, r != 0
	}
	run := a.run(p)
	if j, ok := findSlot(run, slot); ok {
		return run[j] >> PageBits, true
	}
	return 0, false
}

// record returns the value stored at ref.
func (a *Array) record(ref uint64) []byte {
	b := a.data.At(ref)
	n, w := binary.Uvarint(b)
	return b[w : w+int(n)]
}

func recordSize(n int) int { return uvarintLen(uint64(n)) + n }

func uvarintLen(n uint64) int {
	w := 1
	for n >= 0x80 {
		n >>= 7
		w++
	}
	return w
}

// store appends a record of v and returns its ref.
func (a *Array) store(v []byte) uint64 {
	size := recordSize(len(v))
	ref, b := a.data.Reserve(size)
	w := binary.PutUvarint(b, uint64(len(v)))
	copy(b[w:], v)
	a.live += size
	return ref
}

// Get returns the value at i; ok=false when the slot is empty. The bytes are
// valid until the array is next changed.
func (a *Array) Get(i uint64) ([]byte, bool) {
	bi, pi, found := a.locate(i >> PageBits)
	if !found {
		return nil, false
	}
	ref, ok := a.ref(&a.dir[bi].pages[pi], i&slotMask)
	if !ok {
		return nil, false
	}
	return a.record(ref), true
}

// Set stores v at i (at most MaxIndex) and reports whether the slot was
// empty.
func (a *Array) Set(i uint64, v []byte) bool {
	num, slot := i>>PageBits, i&slotMask
	bi, pi, found := a.locate(num)
	var p *page
	if found {
		p = &a.dir[bi].pages[pi]
	} else {
		p = a.insertPage(bi, pi, num)
	}
	if old, ok := a.ref(p, slot); ok {
		if rec := a.record(old); len(rec) == len(v) {
			copy(rec, v) // same size: in place
			return false
		}
		a.live -= recordSize(len(a.record(old)))
		a.put(p, slot, a.store(v), false)
		a.reclaim()
		return false
	}
	a.put(p, slot, a.store(v), true)
	p.count++
	a.count++
	if p.dense < 0 && p.count >= denseAt {
		a.toDense(p)
	}
	return true
}

// put points slot of p at ref; added says the slot was empty (p.count not
// yet counted).
func (a *Array) put(p *page, slot, ref uint64, added bool) {
	if p.dense >= 0 {
		a.dense[p.dense][slot] = ref + 1
		return
	}
	run := a.run(p)
	j, _ := findSlot(run, slot)
	if !added {
		run[j] = ref<<PageBits | slot
		return
	}
	if p.count == p.cap {
		a.growRun(p)
	}
	run = a.runs[p.start : p.start+uint64(p.count)+1]
	copy(run[j+1:], run[j:])
	run[j] = ref<<PageBits | slot
}

// growRun moves p's run to the end of the pool with twice the capacity.
func (a *Array) growRun(p *page) {
	c := max(minRun, 2*p.cap)
	start := uint64(len(a.runs))
	a.runs = append(a.runs, a.run(p)...)
	a.runs = append(a.runs, make([]uint64, c-p.count)...)
	a.deadRuns += int(p.cap)
	p.start, p.cap = start, c
	if a.deadRuns > 1024 && a.deadRuns > len(a.runs)/2 {
		a.compactRuns()
	}
}

// compactRuns rewrites the pool with only the runs pages use.
func (a *Array) compactRuns() {
	n := 0
	a.eachPage(func(p *page) {
		if p.dense < 0 {
			n += int(p.cap)
		}
	})
	runs := make([]uint64, 0, n)
	a.eachPage(func(p *page) {
		if p.dense < 0 {
			start := uint64(len(runs))
			runs = append(runs, a.runs[p.start:p.start+uint64(p.cap)]...)
			p.start = start
		}
	})
	a.runs, a.deadRuns = runs, 0
}

// toDense turns sparse page p dense.
func (a *Array) toDense(p *page) {
	refs := make([]uint64, PageSlots)
	for _, e := range a.run(p) {
		refs[e&slotMask] = e>>PageBits + 1
	}
	a.deadRuns += int(p.cap)
	p.start, p.cap = 0, 0
	if n := len(a.freeDense); n > 0 {
		p.dense = a.freeDense[n-1]
		a.freeDense = a.freeDense[:n-1]
		a.dense[p.dense] = refs
		return
	}
	p.dense = int32(len(a.dense))
	a.dense = append(a.dense, refs)
}

// toSparse turns dense page p sparse.
func (a *Array) toSparse(p *page) {
	refs := a.dense[p.dense]
	a.dense[p.dense] = nil
	a.freeDense = append(a.freeDense, p.dense)
	p.dense = -1
	p.cap = max(minRun, p.count)
	p.start = uint64(len(a.runs))
	for slot, r := range refs {
		if r != 0 {
			a.runs = append(a.runs, (r-1)<<PageBits|uint64(slot))
		}
	}
	a.runs = append(a.runs, make([]uint64, p.cap-p.count)...)
}

// Delete empties slot i and reports whether it held a value.
func (a *Array) Delete(i uint64) bool {
	bi, pi, found := a.locate(i >> PageBits)
	if !found || !a.deleteSlot(&a.dir[bi].pages[pi], i&slotMask) {
		return false
	}
	a.settle(bi, pi)
	a.reclaim()
	return true
}

// deleteSlot empties slot of page p (its count kept up to date, the page
// left even when empty).
func (a *Array) deleteSlot(p *page, slot uint64) bool {
	ref, ok := a.ref(p, slot)
	if !ok {
		return false
	}
	a.live -= recordSize(len(a.record(ref)))
	if p.dense >= 0 {
		a.dense[p.dense][slot] = 0
	} else {
		run := a.run(p)
		j, _ := findSlot(run, slot)
		copy(run[j:], run[j+1:])
	}
	p.count--
	a.count--
	return true
}

// settle drops the page at block bi, position pi, when empty (gone says
// so, blockGone when its block went too), or turns it sparse when it has
// few elements left.
func (a *Array) settle(bi, pi int) (gone, blockGone bool) {
	p := &a.dir[bi].pages[pi]
	switch {
	case p.count == 0:
		if p.dense >= 0 {
			a.dense[p.dense] = nil
			a.freeDense = append(a.freeDense, p.dense)
		} else {
			a.deadRuns += int(p.cap)
		}
		return true, a.removePage(bi, pi)
	case p.dense >= 0 && p.count < sparseAt:
		a.toSparse(p)
	}
	return false, false
}

// DeleteRange empties every slot from lo to hi (lo <= hi) and returns how
// many held a value. It visits the pages of the range that exist, not
// every index.
func (a *Array) DeleteRange(lo, hi uint64) uint64 {
	var n uint64
	bi, pi, _ := a.locate(lo >> PageBits)
	for bi < len(a.dir) {
		if pi == len(a.dir[bi].pages) {
			bi, pi = bi+1, 0
			continue
		}
		p := &a.dir[bi].pages[pi]
		if p.num > hi>>PageBits {
			break
		}
		from, to := uint64(0), uint64(slotMask)
		if p.num == lo>>PageBits {
			from = lo & slotMask
		}
		if p.num == hi>>PageBits {
			to = hi & slotMask
		}
		var slots []uint64
		a.eachInPage(p, from, to, func(slot, _ uint64) bool { slots = append(slots, slot); return true })
		for _, s := range slots {
			a.deleteSlot(p, s)
			n++
		}
		switch gone, blockGone := a.settle(bi, pi); {
		case blockGone:
			pi = 0
		case !gone:
			pi++
		}
	}
	a.reclaim()
	return n
}

// eachInPage calls fn with each slot from `from` toward `to` (either
// order) that holds a value, and its record ref, until fn returns false.
// It reports whether fn never did.
func (a *Array) eachInPage(p *page, from, to uint64, fn func(slot, ref uint64) bool) bool {
	if p.dense >= 0 {
		refs := a.dense[p.dense]
		if from <= to {
			for s := from; s <= to; s++ {
				if r := refs[s]; r != 0 && !fn(s, r-1) {
					return false
				}
			}
			return true
		}
		for s := from; ; s-- {
			if r := refs[s]; r != 0 && !fn(s, r-1) {
				return false
			}
			if s == to {
				return true
			}
		}
	}
	run := a.run(p)
	if from <= to {
		j, _ := findSlot(run, from)
		for ; j < len(run) && run[j]&slotMask <= to; j++ {
			if !fn(run[j]&slotMask, run[j]>>PageBits) {
				return false
			}
		}
		return true
	}
	j, ok := findSlot(run, from)
	if !ok {
		j--
	}
	for ; j >= 0 && run[j]&slotMask >= to; j-- {
		if !fn(run[j]&slotMask, run[j]>>PageBits) {
			return false
		}
	}
	return true
}

// Range calls fn with each element from index from toward index to
// (descending when from > to) and its value, until fn returns false. The
// value is valid during the call.
func (a *Array) Range(from, to uint64, fn func(i uint64, v []byte) bool) {
	if a.count == 0 {
		return
	}
	visit := func(p *page, f, t uint64) bool {
		return a.eachInPage(p, f, t, func(slot, ref uint64) bool {
			return fn(p.num<<PageBits|slot, a.record(ref))
		})
	}
	if from <= to {
		bi, pi, _ := a.locate(from >> PageBits)
		for ; bi < len(a.dir); pi++ {
			if pi == len(a.dir[bi].pages) {
				bi, pi = bi+1, -1
				continue
			}
			p := &a.dir[bi].pages[pi]
			if p.num > to>>PageBits {
				return
			}
			f, t := uint64(0), uint64(slotMask)
			if p.num == from>>PageBits {
				f = from & slotMask
			}
			if p.num == to>>PageBits {
				t = to & slotMask
			}
			if !visit(p, f, t) {
				return
			}
		}
		return
	}
	bi, pi, found := a.locate(from >> PageBits)
	if !found {
		pi--
	}
	for ; bi >= 0; pi-- {
		if pi < 0 {
			if bi--; bi >= 0 {
				pi = len(a.dir[bi].pages)
			}
			continue
		}
		p := &a.dir[bi].pages[pi]
		if p.num < to>>PageBits {
			return
		}
		f, t := uint64(slotMask), uint64(0)
		if p.num == from>>PageBits {
			f = from & slotMask
		}
		if p.num == to>>PageBits {
			t = to & slotMask
		}
		if !visit(p, f, t) {
			return
		}
	}
}

// reclaim rebuilds the slab once dead records outweigh live ones.
func (a *Array) reclaim() {
	dead := a.data.Used - a.live
	if dead < 4096 || dead < a.live {
		return
	}
	var data slab.Slab
	live := 0
	move := func(ref uint64) uint64 {
		v := a.record(ref)
		size := recordSize(len(v))
		r, b := data.Reserve(size)
		w := binary.PutUvarint(b, uint64(len(v)))
		copy(b[w:], v)
		live += size
		return r
	}
	a.eachPage(func(p *page) {
		if p.dense >= 0 {
			refs := a.dense[p.dense]
			for s, r := range refs {
				if r != 0 {
					refs[s] = move(r-1) + 1
				}
			}
			return
		}
		run := a.run(p)
		for j, e := range run {
			run[j] = move(e>>PageBits)<<PageBits | e&slotMask
		}
	})
	a.data, a.live = data, live
}

// Clone returns an independent copy.
func (a *Array) Clone() *Array {
	c := &Array{
		dir:       make([]block, len(a.dir)),
		runs:      append([]uint64(nil), a.runs...),
		deadRuns:  a.deadRuns,
		dense:     make([][]uint64, len(a.dense)),
		freeDense: append([]int32(nil), a.freeDense...),
		data:      a.data.Clone(),
		live:      a.live,
		count:     a.count,
		next:      a.next,
	}
	for i, b := range a.dir {
		c.dir[i].pages = append(make([]page, 0, cap(b.pages)), b.pages...)
	}
	for i, d := range a.dense {
		if d != nil {
			c.dense[i] = append([]uint64(nil), d...)
		}
	}
	return c
}

// Memory returns the bytes the array holds allocated.
func (a *Array) Memory() int {
	n := 64 + 24*cap(a.dir) + 8*cap(a.runs) + 24*cap(a.dense) + 4*cap(a.freeDense) + a.data.MemoryBytes()
	for _, b := range a.dir {
		n += 32 * cap(b.pages)
	}
	for _, d := range a.dense {
		n += 8 * cap(d)
	}
	return n
}

// Info is what ARINFO reports of the array's layout.
type Info struct {
	Pages, DensePages, SparsePages uint64
	Blocks                         uint64 // of page headers
	DenseBytes, DenseElements      uint64 // over the dense pages
	SparseCapacity                 uint64 // entries the sparse runs hold room for
}

// Info returns the array's layout.
func (a *Array) Info() Info {
	in := Info{Blocks: uint64(len(a.dir))}
	a.eachPage(func(p *page) {
		in.Pages++
		if p.dense >= 0 {
			in.DensePages++
			in.DenseBytes += 8 * PageSlots
			in.DenseElements += uint64(p.count)
		} else {
			in.SparsePages++
			in.SparseCapacity += uint64(p.cap)
		}
	})
	return in
}
