package stream

// Nodes' bytes are packed into chunks of up to 64 KiB (a larger node gets a
// chunk of its own), not allocated one by one: Go rounds an allocation up to
// its size class (a 2.3 KB node to 2.6 KB), and a node grown by append
// leaves its earlier copies to the collector. Chunk sizes double from 64
// bytes, so that a stream of a few entries holds a few hundred bytes, not
// 64 KiB. The last node grows in place at the end of the chunk being filled;
// when it no longer fits it moves to a new chunk. A chunk whose nodes are all gone (a trimmed stream's oldest) is
// released for reuse; one that deletions elsewhere than at the head left
// less than half live is compacted into the chunk being filled (trimming
// empties the head's chunk soon enough).

const (
	chunkSize    = 64 << 10
	minChunkSize = 64
)

type nodeStore struct {
	chunks [][]byte
	live   []int    // bytes of the nodes in each chunk
	free   []uint32 // released chunks' numbers
	cur    int      // the chunk being filled; -1 before the first
}

// node returns node i's bytes.
func (s *Stream) node(i int) []byte {
	n := &s.index[i]
	end := n.off + n.size
	return s.store.chunks[n.chunk][n.off:end:end]
}

// place appends size bytes to the chunk being filled, or to a new one, and
// returns where they are.
func (st *nodeStore) place(size int) (chunk, off uint32) {
	if st.chunks == nil {
		st.cur = -1
	}
	if st.cur < 0 || len(st.chunks[st.cur])+size > cap(st.chunks[st.cur]) {
		grown := minChunkSize
		if st.cur >= 0 {
			grown = min(chunkSize, 2*cap(st.chunks[st.cur]))
		}
		if size > chunkSize {
			grown = 2 * size // a large node gets room to grow in place
		}
		c := make([]byte, 0, max(grown, size))
		if n := len(st.free); n > 0 {
			st.cur = int(st.free[n-1])
			st.free = st.free[:n-1]
			st.chunks[st.cur] = c
		} else {
			st.cur = len(st.chunks)
			st.chunks = append(st.chunks, c)
			st.live = append(st.live, 0)
		}
	}
	c := st.chunks[st.cur]
	st.chunks[st.cur] = c[:len(c)+size]
	st.live[st.cur] += size
	return uint32(st.cur), uint32(len(c))
}

// release gives back a node's bytes; it reports whether the chunk should
// now be compacted.
func (st *nodeStore) release(chunk, off, size uint32) bool {
	st.live[chunk] -= int(size)
	c := st.chunks[chunk]
	if int(off+size) == len(c) {
		st.chunks[chunk] = c[:off]
	}
	switch {
	case st.live[chunk] == 0 && int(chunk) == st.cur:
		st.chunks[chunk] = c[:0]
	case st.live[chunk] == 0:
		st.chunks[chunk] = nil
		st.free = append(st.free, chunk)
	case int(chunk) != st.cur:
		return 2*st.live[chunk] < len(c)
	}
	return false
}

// placeNode stores b as node n's bytes, at the end of the chunk being
// filled.
func (s *Stream) placeNode(n *nodeInfo, b []byte) {
	n.chunk, n.off = s.store.place(len(b))
	n.size = uint32(len(b))
	copy(s.store.chunks[n.chunk][n.off:], b)
}

// growLast appends b to the last node, in place when it ends the chunk
// being filled and there is room.
func (s *Stream) growLast(b []byte) {
	st := &s.store
	n := &s.index[len(s.index)-1]
	c := st.chunks[n.chunk]
	if int(n.chunk) == st.cur && int(n.off+n.size) == len(c) && len(c)+len(b) <= cap(c) {
		st.chunks[n.chunk] = append(c, b...)
		st.live[n.chunk] += len(b)
		n.size += uint32(len(b))
		return
	}
	old, chunk, off, size := s.node(len(s.index)-1), n.chunk, n.off, n.size
	n.chunk, n.off = st.place(int(size) + len(b))
	n.size = size + uint32(len(b))
	dst := st.chunks[n.chunk][n.off:]
	copy(dst[copy(dst, old):], b)
	s.releaseNode(chunk, off, size, true)
}

// releaseNode releases a node's old bytes and, with compact, compacts their
// chunk when that leaves it mostly empty.
func (s *Stream) releaseNode(chunk, off, size uint32, compact bool) {
	if !s.store.release(chunk, off, size) || !compact {
		return
	}
	for i := range s.index {
		if n := &s.index[i]; n.chunk == chunk {
			old, off, size := s.node(i), n.off, n.size
			s.placeNode(n, old)
			s.store.release(chunk, off, size)
		}
	}
}

// memoryBytes returns the bytes the chunks hold.
func (st *nodeStore) memoryBytes() int {
	n := 32*cap(st.chunks) + 4*cap(st.free)
	for _, c := range st.chunks {
		n += cap(c)
	}
	return n
}
