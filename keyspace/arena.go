package keyspace

import (
	"encoding/binary"
	mathbits "math/bits"
	"sync/atomic"

	"github.com/keyhive/keyhive/internal/osmem"
)

// Entries are stored off the Go heap so that the garbage collector never sees
// one pointer per key (see docs/architecture.md). Each shard owns an arena of
// fixed-size chunks mapped with mmap; an entry larger than a quarter chunk gets a
// mapping of its own (a large chunk), its pages counted exactly and unmapped
// at the unlock after the entry dies: on the Go heap a dead big value would
// count in used memory until a collection, which a heap holding little else
// may not run for minutes.
//
// A ref names an entry: chunk id (22 bits) and offset in the chunk (18 bits).
const (
	chunkBits  = 18
	chunkSize  = 1 << chunkBits // 256 KiB: bounds the copy when a chunk is evacuated
	largeEntry = chunkSize / 4
	refBits    = 40
	refMask    = 1<<refBits - 1
	maxChunks  = 1 << (refBits - chunkBits)
	offsetMask = chunkSize - 1
	compactAt  = 8 // compact a chunk once 1/compactAt of it is garbage
	// walkPerByte bounds the harvest's walk per byte allocated: garbage
	// spread thinner than 1/walkPerByte of the chunks may stay unused, so
	// it is well below what compaction leaves (1/compactAt per chunk).
	walkPerByte = 32
)

// Entry layout:
//
//	[0]    type<<4 | encoding
//	[1]    flags
//	[2:5]  access clock (LRU seconds or LFU time+counter), 24 bits little endian
//	       uvarint key length, uvarint value length
//	       expire time, int64 ms little endian, when flagExpire is set
//	       key, value
const (
	flagExpire = 1 << 0
	flagDead   = 1 << 1
	flagObject = 1 << 2 // the value is a 4-byte handle into the shard's objects
	// flagSaved: the running snapshot must not save the entry as it is (its
	// key was created after the instant, or its record was kept before it
	// changed; see Snapshot).
	flagSaved = 1 << 3
	// flagBlessed: eviction never chooses the key (BLESS SET NO-EVICT,
	// see bless.go). A rewrite of the entry keeps it.
	flagBlessed = 1 << 4
	headerSize  = 5
)

type chunk struct {
	data  []byte // the whole mapping: chunkSize bytes, a large chunk's pages
	used  int    // bytes appended
	live  int    // bytes of entries not yet dead
	large bool
}

// largeLenWidth is how many bytes a large entry's value length takes (padded,
// see putPaddedUvarint): enough for any length, so the entry grows in place
// without moving its key and value.
const largeLenWidth = 9

type arena struct {
	chunks  []chunk
	free    []uint32 // ids of released chunks, reused first
	tail    int      // chunk receiving appends, -1 when none
	garbage bool     // some chunk may be worth evacuating
	index   uint16   // the shard's index, its bit in marks
	marks   *garbageMarks
	acct    *accounting
	// holes are dead entries that alloc fills again before appending, as
	// ref | size<<refBits: the same key and value sizes come and go in a
	// cache, and a filled hole costs neither compaction nor memory. Only
	// holes[:ready] are filled: the others died during the command holding
	// the shard, whose entry bytes must stay as they are until it unlocks.
	holes []uint64
	ready int
	// dead is the garbage bytes of the mapped chunks, holeBytes the part of
	// it in holes. When the ready holes run out, or none fits an entry, and
	// the rest of the garbage could hold it, the unlock harvests holes
	// (before the next command has to append), walking the chunks from
	// scanChunk, scanOff (an entry boundary). Walking is paid from
	// walkCredit, walkPerByte per byte allocated (at most a chunk's worth
	// banked), so that garbage in pieces too small for anything costs
	// little.
	dead, holeBytes    int
	harvest            bool
	scanChunk, scanOff int
	walkCredit         int
	// unmap lists the large chunks whose entry died while the shard is held:
	// the command may still read the bytes, so the unlock unmaps them.
	unmap []uint32
}

const (
	maxHoles  = 32
	minFiller = headerSize + 2 // a dead entry with an empty key and value
	// maxPad is how much longer than an entry a hole it fills may be: its
	// value length is then written in more bytes (see encode).
	maxPad = minFiller - 1
)

// accounting is what the keyspace's arenas share: their resident bytes (see
// chunkMem).
type accounting struct {
	mem  atomic.Int64
	dead atomic.Int64 // of mem, the bytes of dead entries (holes) not given back yet
}

// addDead changes the arena's garbage by n bytes, and the keyspace's.
func (a *arena) addDead(n int) {
	a.dead += n
	a.acct.dead.Add(int64(n))
}

func newArena(index int, marks *garbageMarks, acct *accounting) arena {
	return arena{tail: -1, index: uint16(index), marks: marks, acct: acct}
}

// garbageMarks notes the shards of one database's shard array that a command
// holding the exclusive lock (a script, MULTI/EXEC) left garbage in: it may
// write to any shard of any database, and its unlock evacuates just those.
// Under the shared lock a shard's own unlock evacuates it and nothing is
// noted, so the fields are touched only under the exclusive lock.
type garbageMarks struct {
	ks     *Keyspace
	shards *[Shards]shard
	bits   [Shards / 64]uint64
	listed bool // in ks.marked
}

func (m *garbageMarks) note(index uint16) {
	m.bits[index/64] |= 1 << (index % 64)
	if !m.listed {
		m.listed = true
		m.ks.marked = append(m.ks.marked, m)
	}
}

// evacuate evacuates the noted shards. An evacuation that asks for another
// (a harvest) notes its shard again, for the next exclusive unlock.
func (m *garbageMarks) evacuate() {
	bits := m.bits
	m.bits, m.listed = [Shards / 64]uint64{}, false
	for w, word := range bits {
		for ; word != 0; word &= word - 1 {
			m.shards[w*64+mathbits.TrailingZeros64(word)].evacuate(m.ks.seed)
		}
	}
}

// chunkMem is what a mapped chunk counts in used memory: its used bytes,
// garbage included. Its pages are touched only as entries are appended (and
// given back when compaction empties them), so its resident memory is at
// most a page more: like the unused part of an allocator's page, which
// Redis's used_memory does not count either (at most 4 MB per database in
// use, README). A large chunk counts its whole mapping (whole pages), dead
// or not until it is unmapped.
func chunkMem(c *chunk) int64 {
	if c.large {
		return int64(len(c.data))
	}
	return int64(c.used)
}

func pageCeil(n int) int64 { return int64(n+pageSize-1) &^ (pageSize - 1) }

const pageSize = 4096

// setGarbage sets or clears the flag that has the unlock evacuate the
// shard. Under the exclusive lock setting it also notes the shard, each time:
// the flag may be left from before (a harvest the last evacuation asked for).
func (a *arena) setGarbage(g bool) {
	a.garbage = g
	if g && a.marks.ks.exclusive {
		a.marks.note(a.index)
	}
}

func entrySize(klen, vlen int, expire bool) int {
	n := headerSize + uvarintLen(uint64(klen)) + uvarintLen(uint64(vlen)) + klen + vlen
	if expire {
		n += 8
	}
	return n
}

// allocSize is the bytes to allocate for an entry: entrySize, plus for a
// large entry the padding of its value length to largeLenWidth.
func allocSize(klen, vlen int, expire bool) int {
	n := entrySize(klen, vlen, expire)
	if n > largeEntry {
		n += largeLenWidth - uvarintLen(uint64(vlen))
	}
	return n
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// alloc reserves size bytes, or up to slack more when that fills a hole, and
// returns the ref and the memory to fill.
func (a *arena) alloc(size, slack int) (uint64, []byte) {
	if size > largeEntry {
		id := a.newChunk(mmap(int(pageCeil(size))), true)
		c := &a.chunks[id]
		c.used, c.live = size, size
		a.acct.mem.Add(chunkMem(c))
		return uint64(id) << chunkBits, c.data[:size:size]
	}
	a.walkCredit = min(a.walkCredit+size*walkPerByte, chunkSize)
	ref, dst, ok := a.fill(size, slack)
	if (!ok || a.ready == 0) && a.dead-a.holeBytes >= size && a.walkCredit > 0 {
		a.harvest = true
		a.setGarbage(true)
	}
	if ok {
		return ref, dst
	}
	if a.tail < 0 || a.chunks[a.tail].used+size > chunkSize {
		a.tail = a.newChunk(mmap(chunkSize), false)
	}
	c := &a.chunks[a.tail]
	off := c.used
	c.used += size
	c.live += size
	a.acct.mem.Add(int64(size))
	return uint64(a.tail)<<chunkBits | uint64(off), c.data[off : off+size : off+size]
}

// fill takes a ready hole for size bytes: the one that fits them best with
// up to slack more, else the smallest with room for a dead filler entry
// after them, which stays in the list as a smaller hole. It returns the
// bytes to fill, the whole hole but for the filler.
func (a *arena) fill(size, slack int) (uint64, []byte, bool) {
	best, bestPad := -1, slack+1
	for i, h := range a.holes[:a.ready] {
		hole := int(h >> refBits)
		if hole >= size && hole-size < bestPad {
			best, bestPad = i, hole-size
			if hole == size {
				break
			}
		}
		if bestPad > slack && hole >= size+minFiller && (best < 0 || hole < int(a.holes[best]>>refBits)) {
			best = i
		}
	}
	if best < 0 {
		return 0, nil, false
	}
	h := a.holes[best]
	hole, ref := int(h>>refBits), h&refMask
	c := &a.chunks[ref>>chunkBits]
	off := int(ref & offsetMask)
	if hole <= size+slack {
		size = hole
		a.holes = append(a.holes[:best], a.holes[best+1:]...)
		a.ready--
	} else {
		writeFiller(c.data[off+size : off+hole])
		a.holes[best] = ref + uint64(size) | uint64(hole-size)<<refBits
	}
	c.live += size
	a.addDead(-size)
	a.holeBytes -= size
	return ref, c.data[off : off+size : off+size], true
}

// clearHoles empties the hole list, before holes are harvested or entries
// moved.
func (a *arena) clearHoles() {
	a.holes, a.ready, a.holeBytes = a.holes[:0], 0, 0
}

// writeFiller makes b (at least minFiller bytes) one dead entry, so that
// walking a chunk entry by entry still works.
func writeFiller(b []byte) {
	for n := 1; ; n++ { // the value length's varint bytes
		for klen := range 2 { // a one-byte key when no value length fits
			v := len(b) - headerSize - 1 - n - klen
			if v >= 0 && uvarintLen(uint64(v)) == n {
				clear(b[:headerSize])
				b[1] = flagDead
				b[headerSize] = byte(klen)
				binary.PutUvarint(b[headerSize+1:], uint64(v))
				return
			}
		}
	}
}

// harvestHoles replaces the holes with the dead entries found walking the
// chunks from where the last harvest stopped, a run of adjacent ones made one
// hole, until the list is full or a chunk's worth was walked. It runs at the
// shard's unlock, like compaction, since it rewrites dead entries.
func (a *arena) harvestHoles() {
	a.harvest = false
	a.clearHoles()
	if a.holes == nil {
		a.holes = make([]uint64, 0, maxHoles)
	}
	n := len(a.chunks)
	if a.scanChunk >= n {
		a.scanChunk, a.scanOff = 0, 0
	}
	start, startOff := a.scanChunk, a.scanOff
	walked := 0
walk:
	for i := 0; i <= n; i++ { // back at the start chunk, up to where it began
		id := (start + i) % n
		c := &a.chunks[id]
		if c.data == nil || c.large {
			continue
		}
		off, end := 0, c.used
		if i == 0 {
			off = startOff
		}
		if i == n {
			end = startOff
		}
		for run := 0; off < end; {
			size := decode(c.data[off:]).size
			if c.data[off+1]&flagDead != 0 {
				run += size
			} else {
				run = 0
			}
			off += size
			walked += size
			if run > 0 && (off == end || c.data[off+1]&flagDead == 0) {
				writeFiller(c.data[off-run : off])
				a.holes = append(a.holes, uint64(id)<<chunkBits|uint64(off-run)|uint64(run)<<refBits)
				a.holeBytes += run
				run = 0
			}
			if len(a.holes) == maxHoles || walked >= chunkSize {
				a.scanChunk, a.scanOff = id, off
				break walk
			}
		}
	}
	a.ready = len(a.holes)
	a.walkCredit -= walked
}

func (a *arena) newChunk(data []byte, large bool) int {
	var id int
	if n := len(a.free); n > 0 {
		id = int(a.free[n-1])
		a.free = a.free[:n-1]
	} else {
		id = len(a.chunks)
		if id >= maxChunks {
			panic("keyspace: shard arena exhausted")
		}
		a.chunks = append(a.chunks, chunk{})
	}
	a.chunks[id] = chunk{data: data, large: large}
	return id
}

// entry returns the bytes of the entry at ref, from its header to the end of the
// chunk (callers decode the exact extent).
func (a *arena) entry(ref uint64) []byte {
	return a.chunks[ref>>chunkBits].data[ref&offsetMask:]
}

// kill marks the entry at ref dead and accounts its bytes as garbage.
func (a *arena) kill(ref uint64, size int) {
	id := int(ref >> chunkBits)
	c := &a.chunks[id]
	c.data[ref&offsetMask+1] |= flagDead
	c.live -= size
	if c.large {
		a.unmap = append(a.unmap, uint32(id))
		a.setGarbage(true)
		return
	}
	a.addDead(size)
	if len(a.holes) < maxHoles {
		if a.holes == nil {
			a.holes = make([]uint64, 0, maxHoles)
		}
		a.holes = append(a.holes, ref|uint64(size)<<refBits)
		a.holeBytes += size
		a.setGarbage(true) // the unlock makes the hole ready
	}
	if a.worthCompacting(c) {
		a.setGarbage(true)
	}
}

// worthCompacting reports whether a chunk holds enough garbage to move its
// live entries (see evacuate): an eighth of it, and at least a page, or all
// of it. Garbage is memory that holds no key (holes not filled again): a
// lower bar would copy more per byte freed, a higher one would let a limited
// cache hold fewer keys than Redis does in the same maxmemory.
func (a *arena) worthCompacting(c *chunk) bool {
	garbage := c.used - c.live
	return garbage >= pageSize && garbage*compactAt >= c.used || c.live == 0 && c.used > 0
}

// releaseLarge unmaps the large chunks whose entry died, at the unlock.
func (a *arena) releaseLarge() {
	for _, id := range a.unmap {
		a.release(int(id))
	}
	a.unmap = a.unmap[:0]
}

// growLarge makes the large entry at ref size bytes long (not shorter) and
// returns its bytes. The mapping is extended with mremap, which moves page
// tables, not bytes, when it cannot grow where it is. The bytes past used
// were never written (a large chunk only grows) and new pages are zeros.
func (a *arena) growLarge(ref uint64, size int) []byte {
	c := &a.chunks[ref>>chunkBits]
	if n := pageCeil(size); n > int64(len(c.data)) {
		a.acct.mem.Add(n - int64(len(c.data)))
		c.data = mremap(c.data, int(n))
	}
	c.used, c.live = size, size
	return c.data[:size:size]
}

func (a *arena) release(id int) {
	c := &a.chunks[id]
	a.acct.mem.Add(-chunkMem(c))
	if !c.large {
		a.addDead(-(c.used - c.live))
	}
	munmap(c.data)
	if id == a.scanChunk {
		a.scanOff = 0 // the id may come back as another chunk
	}
	a.chunks[id] = chunk{}
	a.free = append(a.free, uint32(id))
	if id == a.tail {
		a.tail = -1
	}
}

// releaseAll frees every chunk (FLUSHDB).
func (a *arena) releaseAll() {
	for i := range a.chunks {
		a.acct.mem.Add(-chunkMem(&a.chunks[i]))
		if a.chunks[i].data != nil {
			munmap(a.chunks[i].data)
		}
	}
	a.setGarbage(false)
	a.acct.dead.Add(-int64(a.dead))
	*a = newArena(int(a.index), a.marks, a.acct)
}

// header decodes an entry: key and value extents and expire time.
type header struct {
	meta   byte
	flags  byte
	key    []byte
	value  []byte
	expire int64
	size   int
}

func decode(e []byte) header {
	h := header{meta: e[0], flags: e[1]}
	p := headerSize
	klen, n := binary.Uvarint(e[p:])
	p += n
	vlen, n := binary.Uvarint(e[p:])
	p += n
	if h.flags&flagExpire != 0 {
		h.expire = int64(binary.LittleEndian.Uint64(e[p:]))
		p += 8
	}
	h.key = e[p : p+int(klen) : p+int(klen)]
	p += int(klen)
	h.value = e[p : p+int(vlen) : p+int(vlen)]
	h.size = p + int(vlen)
	return h
}

// entryKey returns just the key of an encoded entry, for cheap comparisons.
func entryKey(e []byte) []byte {
	p := headerSize
	klen, n := binary.Uvarint(e[p:])
	p += n
	_, n = binary.Uvarint(e[p:])
	p += n
	if e[1]&flagExpire != 0 {
		p += 8
	}
	return e[p : p+int(klen)]
}

// encodeHeader writes an entry into dst, which is entrySize long or up to
// maxPad longer (a hole it fills, the value length then written in more
// bytes), all but the value's vlen bytes, and returns where they go.
func encodeHeader(dst []byte, meta byte, access uint32, key []byte, vlen int, expire int64, object bool) int {
	dst[0] = meta
	dst[1] = 0
	if object {
		dst[1] = flagObject
	}
	putAccess(dst, access)
	p := headerSize
	p += binary.PutUvarint(dst[p:], uint64(len(key)))
	p += putPaddedUvarint(dst[p:], uint64(vlen), len(dst)-entrySize(len(key), vlen, expire != 0))
	if expire != 0 {
		dst[1] |= flagExpire
		binary.LittleEndian.PutUint64(dst[p:], uint64(expire))
		p += 8
	}
	return p + copy(dst[p:], key)
}

// putPaddedUvarint writes v as a uvarint pad bytes longer than it needs (at
// most maxPad), continuation bytes of zero bits that decode the same.
func putPaddedUvarint(b []byte, v uint64, pad int) int {
	n := binary.PutUvarint(b, v)
	if pad == 0 {
		return n
	}
	b[n-1] |= 0x80
	for i := range pad - 1 {
		b[n+i] = 0x80
	}
	b[n+pad-1] = 0
	return n + pad
}

func putAccess(e []byte, v uint32) {
	e[2], e[3], e[4] = byte(v), byte(v>>8), byte(v>>16)
}

func getAccess(e []byte) uint32 {
	return uint32(e[2]) | uint32(e[3])<<8 | uint32(e[4])<<16
}

// mmap, mremap and munmap map memory with osmem rather than the syscall
// package, whose Munmap takes only what its own Mmap returned and knows
// nothing of mremap.
func mmap(size int) []byte { return osmem.Map(size) }

func mremap(b []byte, size int) []byte { return osmem.Remap(b, size) }

// truncate drops a chunk's bytes from used on, giving their whole pages
// back to the OS (on Linux; see osmem.Release): they are backed again when
// appended into.
func (a *arena) truncate(c *chunk, used int) {
	a.acct.mem.Add(int64(used - c.used))
	a.addDead(-(c.used - c.live))
	if start, end := pageCeil(used), pageCeil(c.used); start < end {
		osmem.Release(c.data[start:end])
	}
	c.used, c.live = used, used
}

func munmap(b []byte) { osmem.Unmap(b) }
