package stream

import (
	"encoding/binary"
	"slices"
	"sort"

	"github.com/keyhive/keyhive/internal/strnum"
)

// A node's bytes: the master field names (uvarint count, then uvarint length
// and bytes each), then its entries, each:
//
//	flags byte, varint ms delta, varint seq delta (from the master ID),
//	with flagSameFields the values of the master fields,
//	else uvarint field count and the field/value pairs,
//
// every string as uvarint length and bytes. Deleting an entry sets its
// deleted flag, as Redis does; a node goes when its last live entry does.
const (
	flagDeleted    = 1
	flagSameFields = 2
)

// nodeInfo describes one node; the index is a slice of them, sorted by master.
type nodeInfo struct {
	master  ID     // the ID of the node's first entry: its key in the index
	live    uint32 // entries not deleted
	deleted uint32 // entries marked deleted
	// lpBytes is the size of the node as a Redis listpack: Redis starts a
	// new node on that size, and so do we, for the same node boundaries
	// (XINFO's radix-tree-keys, what MAXLEN ~ trims).
	lpBytes uint32
	// Where the node's bytes are (chunks.go).
	chunk, off, size uint32
}

// Stream is a stream: entries in nodes, the ID bookkeeping of Redis 7.0
// and the consumer groups.
type Stream struct {
	index []nodeInfo
	store nodeStore // the nodes' bytes

	Length       uint64 // live entries
	LastID       ID     // the last ID ever added (or set by XSETID)
	FirstID      ID     // the first live entry's ID (0-0 when empty)
	MaxDeletedID ID     // the largest ID deleted by XDEL (or XSETID)
	EntriesAdded uint64 // entries ever added

	groups []*Group // sorted by name
	adds   uint64   // calls of Add

	idmp *idmp // idempotent production (idmp.go); nil until used

	// tail is the last live entry's ID when tailKnown (XREAD asks for it
	// every time; finding it decodes the last node).
	tail      ID
	tailKnown bool

	scratch *scratch // for decoding; taken by a Range while it runs
}

// scratch is what decoding reuses across calls: master fields, an entry's
// pairs, a node's entry offsets (reverse ranges).
type scratch struct {
	master, pairs [][]byte
	offsets       []int
	buf           []byte // an entry being encoded
}

// takeScratch returns the stream's scratch, which the caller owns until it
// gives it back (a nested Range gets a new one).
func (s *Stream) takeScratch() *scratch {
	sc := s.scratch
	if sc == nil {
		sc = &scratch{}
	}
	s.scratch = nil
	return sc
}

// New returns an empty stream.
func New() *Stream { return &Stream{} }

// Adds returns how many entries were added to this object: a blocked
// reader is served, as in Redis, only after an addition (not when XSETID or
// XGROUP SETID alone make an ID range non-empty).
func (s *Stream) Adds() uint64 { return s.adds }

// Nodes returns the number of nodes (XINFO's radix-tree-keys).
func (s *Stream) Nodes() int { return len(s.index) }

// MemoryBytes estimates the bytes the stream holds.
func (s *Stream) MemoryBytes() int {
	n := 128 + cap(s.index)*40 + s.store.memoryBytes()
	for _, g := range s.groups {
		n += g.memoryBytes()
	}
	if s.idmp != nil {
		n += s.idmp.memoryBytes()
	}
	return n
}

// Clone returns an independent copy.
func (s *Stream) Clone() *Stream {
	c := *s
	c.index = slices.Clone(s.index)
	c.store = nodeStore{}
	for i := range c.index {
		c.placeNode(&c.index[i], s.node(i))
	}
	c.groups = make([]*Group, len(s.groups))
	for i, g := range s.groups {
		c.groups[i] = g.clone()
	}
	if s.idmp != nil {
		c.idmp = s.idmp.clone()
	}
	c.scratch = nil
	return &c
}

func appendString(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

func readUvarint(b []byte, p int) (uint64, int) {
	v, n := binary.Uvarint(b[p:])
	return v, p + n
}

func readString(b []byte, p int) ([]byte, int) {
	n, p := readUvarint(b, p)
	return b[p : p+int(n)], p + int(n)
}

// Listpack element sizes (encoding plus back length), to size nodes as
// Redis does.
func lpIntSize(v int64) int64 {
	var enc int64
	switch {
	case v >= 0 && v <= 127:
		enc = 1
	case v >= -4096 && v <= 4095:
		enc = 2
	case v >= -1<<15 && v < 1<<15:
		enc = 3
	case v >= -1<<23 && v < 1<<23:
		enc = 4
	case v >= -1<<31 && v < 1<<31:
		enc = 5
	default:
		enc = 9
	}
	return enc + 1
}

func lpStringSize(b []byte) int64 {
	if len(b) <= 20 {
		if v, ok := strnum.ParseInt(b); ok {
			return lpIntSize(v)
		}
	}
	n := int64(len(b))
	var enc int64
	switch {
	case n <= 63:
		enc = 1 + n
	case n <= 4095:
		enc = 2 + n
	default:
		enc = 5 + n
	}
	switch {
	case enc <= 127:
		return enc + 1
	case enc < 16383:
		return enc + 2
	case enc < 2097151:
		return enc + 3
	case enc < 268435455:
		return enc + 4
	}
	return enc + 5
}

// find returns the index of the node that would hold id: the last whose
// master is not above it, or -1.
func (s *Stream) find(id ID) int {
	return sort.Search(len(s.index), func(i int) bool { return id.Less(s.index[i].master) }) - 1
}

// masterFields decodes node's master field names into fields and returns
// them with the offset of the first entry.
func masterFields(node []byte, fields [][]byte) ([][]byte, int) {
	n, p := readUvarint(node, 0)
	fields = fields[:0]
	for range n {
		var f []byte
		f, p = readString(node, p)
		fields = append(fields, f)
	}
	return fields, p
}

// entry is one decoded entry of a node.
type entry struct {
	id     ID
	flags  byte
	at     int      // offset of its flags byte
	fields [][]byte // field/value pairs, reusing the decoder's scratch
}

// decoder walks a node's entries.
type decoder struct {
	node   []byte
	master ID
	mf     [][]byte // master fields
	p      int
	sc     *scratch
}

// decoder starts decoding node i with sc's buffers; it grows them in sc.
func (s *Stream) decoder(i int, sc *scratch) decoder {
	sc.master, sc.pairs = sc.master[:0], sc.pairs[:0]
	node := s.node(i)
	mf, p := masterFields(node, sc.master)
	sc.master = mf
	return decoder{node: node, master: s.index[i].master, mf: mf, p: p, sc: sc}
}

// next decodes the entry at d.p, or returns false at the node's end.
func (d *decoder) next(e *entry) bool {
	if d.p >= len(d.node) {
		return false
	}
	b, p := d.node, d.p
	e.at, e.flags = p, b[p]
	p++
	msd, n := binary.Varint(b[p:])
	p += n
	seqd, n := binary.Varint(b[p:])
	p += n
	e.id = ID{d.master.Ms + uint64(msd), d.master.Seq + uint64(seqd)}
	pairs := d.sc.pairs[:0]
	var v []byte
	if e.flags&flagSameFields != 0 {
		for _, f := range d.mf {
			v, p = readString(b, p)
			pairs = append(pairs, f, v)
		}
	} else {
		var n uint64
		n, p = readUvarint(b, p)
		for range 2 * n {
			v, p = readString(b, p)
			pairs = append(pairs, v)
		}
	}
	d.sc.pairs, e.fields, d.p = pairs, pairs, p
	return true
}

// Add appends an entry with the given field/value pairs and id, which must
// be above LastID, starting a new node when the last one reached maxBytes
// (as a listpack) or maxEntries, as Redis does.
func (s *Stream) Add(id ID, pairs [][]byte, maxBytes, maxEntries int64) {
	if maxBytes <= 0 || maxBytes > 1<<30 {
		maxBytes = 1 << 30
	}
	var payload int64
	for _, b := range pairs {
		payload += int64(len(b))
	}
	last := len(s.index) - 1
	if last < 0 || int64(s.index[last].lpBytes)+payload >= maxBytes ||
		maxEntries > 0 && int64(s.index[last].live+s.index[last].deleted) >= maxEntries {
		s.startNode(id, pairs, 2)
	}
	s.appendEntry(id, pairs, false)
	s.EntriesAdded++
	s.adds++
	s.LastID = id
	s.tail, s.tailKnown = id, true
	if s.Length == 1 {
		s.FirstID = id
	}
}

// startNode starts a node with master ID master and the master field names
// fields[0], fields[step], ...
func (s *Stream) startNode(master ID, fields [][]byte, step int) {
	sc := s.takeScratch()
	count := (len(fields) + step - 1) / step
	node := binary.AppendUvarint(sc.buf[:0], uint64(count))
	size := int64(7) + lpIntSize(0) + lpIntSize(0) + lpIntSize(int64(count)) + lpIntSize(0)
	for i := 0; i < len(fields); i += step {
		node = appendString(node, fields[i])
		size += lpStringSize(fields[i])
	}
	s.index = append(s.index, nodeInfo{master: master, lpBytes: uint32(size)})
	s.placeNode(&s.index[len(s.index)-1], node)
	sc.buf, s.scratch = node, sc
}

// appendEntry appends an entry to the last node, keeping the node's size
// as a Redis listpack and the stream's length.
func (s *Stream) appendEntry(id ID, pairs [][]byte, deleted bool) {
	last := len(s.index) - 1
	n := &s.index[last]
	sc := s.takeScratch()
	defer func() { s.scratch = sc }()
	mf, _ := masterFields(s.node(last), sc.master)
	sc.master = mf
	node := sc.buf[:0]
	same := len(mf) == len(pairs)/2
	for i := 0; same && i < len(mf); i++ {
		same = string(mf[i]) == string(pairs[2*i])
	}
	msd, seqd := id.Ms-n.master.Ms, id.Seq-n.master.Seq
	flags := byte(0)
	size := lpIntSize(int64(msd)) + lpIntSize(int64(seqd)) + 2 // flags, then lp-count below
	if same {
		flags = flagSameFields
		size += lpIntSize(int64(len(mf) + 3))
	} else {
		size += lpIntSize(int64(len(pairs)/2)) + lpIntSize(int64(len(pairs)+4))
	}
	if deleted {
		flags |= flagDeleted
	}
	node = append(node, flags)
	// Signed, as Redis's deltas: an entry's sequence is often below its
	// master's (a later millisecond).
	node = binary.AppendVarint(node, int64(msd))
	node = binary.AppendVarint(node, int64(seqd))
	if !same {
		node = binary.AppendUvarint(node, uint64(len(pairs)/2))
	}
	for i, b := range pairs {
		if !same || i%2 == 1 {
			node = appendString(node, b)
			size += lpStringSize(b)
		}
	}
	if deleted {
		size += lpIntSize(int64(n.deleted+1)) - lpIntSize(int64(n.deleted))
		n.deleted++
	} else {
		size += lpIntSize(int64(n.live+1)) - lpIntSize(int64(n.live))
		n.live++
		s.Length++
	}
	n.lpBytes += uint32(size)
	sc.buf = node
	s.growLast(node)
}

// LoadNode starts a node (loading a stream): master ID and master field
// names. Entries follow with LoadEntry, in ID order.
func (s *Stream) LoadNode(master ID, fields [][]byte) { s.startNode(master, fields, 1) }

// LoadEntry appends an entry, deleted or not, to the node LoadNode started.
// It counts live entries in Length; the caller sets the other counters.
func (s *Stream) LoadEntry(id ID, pairs [][]byte, deleted bool) {
	s.appendEntry(id, pairs, deleted)
	s.tailKnown = false
}

// WalkNodes calls node for each node (master ID, live and deleted counts,
// master field names), then entry for each of its entries, deleted ones
// included, with whether its fields are the master's: what an RDB writer
// needs. The slices passed are valid during the call.
func (s *Stream) WalkNodes(node func(master ID, live, deleted int, fields [][]byte), each func(id ID, deleted, sameFields bool, pairs [][]byte)) {
	sc := s.takeScratch()
	defer func() { s.scratch = sc }()
	var e entry
	for i, n := range s.index {
		d := s.decoder(i, sc)
		node(n.master, int(n.live), int(n.deleted), d.mf)
		for d.next(&e) {
			each(e.id, e.flags&flagDeleted != 0, e.flags&flagSameFields != 0, e.fields)
		}
	}
}

// Range calls fn for the live entries from start to end (inclusive), in
// order or, with rev, in reverse, until fn returns false. fields are the
// field/value pairs, valid during the call.
func (s *Stream) Range(start, end ID, rev bool, fn func(id ID, fields [][]byte) bool) {
	if end.Less(start) {
		return
	}
	sc := s.takeScratch()
	defer func() { s.scratch = sc }()
	var e entry
	if !rev {
		for i := max(s.find(start), 0); i < len(s.index) && !end.Less(s.index[i].master); i++ {
			d := s.decoder(i, sc)
			for d.next(&e) {
				if e.flags&flagDeleted != 0 || e.id.Less(start) {
					continue
				}
				if end.Less(e.id) || !fn(e.id, e.fields) {
					return
				}
			}
		}
		return
	}
	for i := s.find(end); i >= 0; i-- {
		d := s.decoder(i, sc)
		offsets := sc.offsets[:0]
		for at := d.p; d.next(&e); at = d.p {
			offsets = append(offsets, at)
		}
		sc.offsets = offsets
		for j := len(offsets) - 1; j >= 0; j-- {
			d.p = offsets[j]
			d.next(&e)
			if e.flags&flagDeleted != 0 || end.Less(e.id) {
				continue
			}
			if e.id.Less(start) || !fn(e.id, e.fields) {
				return
			}
		}
	}
}

// Has reports whether id is a live entry.
func (s *Stream) Has(id ID) bool {
	found := false
	s.Range(id, id, false, func(ID, [][]byte) bool { found = true; return false })
	return found
}

// Edge returns the first (or with last, the last) live entry's ID.
func (s *Stream) Edge(last bool) (ID, bool) {
	if last && s.tailKnown {
		return s.tail, s.Length > 0
	}
	var id ID
	found := false
	s.Range(ID{}, MaxID, last, func(e ID, _ [][]byte) bool { id, found = e, true; return false })
	if last {
		s.tail, s.tailKnown = id, true
	}
	return id, found
}

// markDeleted marks the entry at offset at of node i deleted.
func (s *Stream) markDeleted(i, at int) {
	s.node(i)[at] |= flagDeleted
	n := &s.index[i]
	n.lpBytes += uint32(lpIntSize(int64(n.live-1)) - lpIntSize(int64(n.live)) +
		lpIntSize(int64(n.deleted+1)) - lpIntSize(int64(n.deleted)))
	n.live--
	n.deleted++
	s.Length--
}

func (s *Stream) removeNode(i int) {
	n := s.index[i]
	s.Length -= uint64(n.live)
	s.index = slices.Delete(s.index, i, i+1)
	s.releaseNode(n.chunk, n.off, n.size, i > 0)
}

// Delete deletes the live entry id, reporting whether there was one. It
// does not update FirstID or MaxDeletedID (XDEL does, once for all its IDs).
func (s *Stream) Delete(id ID) bool {
	i := s.find(id)
	if i < 0 {
		return false
	}
	sc := s.takeScratch()
	defer func() { s.scratch = sc }()
	d := s.decoder(i, sc)
	var e entry
	for d.next(&e) {
		if e.id == id {
			if e.flags&flagDeleted != 0 {
				return false
			}
			if id == s.tail {
				s.tailKnown = false
			}
			s.markDeleted(i, e.at)
			if s.index[i].live == 0 {
				s.removeNode(i)
			}
			return true
		}
		if id.Less(e.id) {
			break
		}
	}
	return false
}

// RefreshFirstID sets FirstID to the first live entry (0-0 when empty).
func (s *Stream) RefreshFirstID() {
	s.FirstID, _ = s.Edge(false)
}

// Trim is what XADD and XTRIM trim with: to MaxLen entries, or (MinID) of
// the entries below MinID; Approx removes whole nodes only; Limit (not 0)
// bounds the entries removed, in whole nodes.
type Trim struct {
	MinID   ID
	MaxLen  int64
	ByMinID bool
	Approx  bool
	Limit   int64
}

// Trim removes entries as t says, as Redis 7.0 does, and returns how many.
func (s *Stream) Trim(t Trim) int64 {
	var removed int64
	for len(s.index) > 0 {
		if !t.ByMinID && int64(s.Length) <= t.MaxLen {
			break
		}
		n := s.index[0]
		if t.Limit > 0 && removed+int64(n.live) > t.Limit {
			break
		}
		var whole bool
		if t.ByMinID {
			last, _ := s.nodeLast(0)
			whole = last.Less(t.MinID)
		} else {
			whole = int64(s.Length)-int64(n.live) >= t.MaxLen
		}
		if whole {
			removed += int64(n.live)
			s.removeNode(0)
			continue
		}
		if t.Approx {
			break
		}
		sc := s.takeScratch()
		d := s.decoder(0, sc)
		var e entry
		for d.next(&e) {
			if t.ByMinID && !e.id.Less(t.MinID) || !t.ByMinID && int64(s.Length) <= t.MaxLen {
				break
			}
			if e.flags&flagDeleted == 0 {
				s.markDeleted(0, e.at)
				removed++
			}
		}
		s.scratch = sc
		break
	}
	if removed > 0 {
		s.RefreshFirstID()
	}
	return removed
}

// nodeLast returns the ID of node i's last entry, deleted or not.
func (s *Stream) nodeLast(i int) (ID, bool) {
	sc := s.takeScratch()
	defer func() { s.scratch = sc }()
	d := s.decoder(i, sc)
	var e entry
	var last ID
	found := false
	for d.next(&e) {
		last, found = e.id, true
	}
	return last, found
}

// FirstEntry returns the ID of the first entry, deleted or not, of a stream
// with nodes: what Redis rewrites an approximate MINID trim to.
func (s *Stream) FirstEntry() ID { return s.index[0].master }

// RadixTreeNodes returns the number of nodes Redis's radix tree would have
// for the node master IDs (XINFO's radix-tree-nodes): keys are 16-byte big
// endian IDs; a node sits at the root, at every branching point, after
// every branch edge, and at every key.
func (s *Stream) RadixTreeNodes() int {
	points := map[string]struct{}{"": {}}
	var prev [16]byte
	for i, n := range s.index {
		var k [16]byte
		binary.BigEndian.PutUint64(k[:8], n.master.Ms)
		binary.BigEndian.PutUint64(k[8:], n.master.Seq)
		points[string(k[:])] = struct{}{}
		if i > 0 {
			l := 0
			for l < 16 && prev[l] == k[l] {
				l++
			}
			points[string(k[:l])] = struct{}{}
			points[string(prev[:l+1])] = struct{}{}
			points[string(k[:l+1])] = struct{}{}
		}
		prev = k
	}
	return len(points)
}
