package replication

import (
	"sync"
	"sync/atomic"
)

// blockSize is the size of the backlog's blocks: large enough that a block
// is taken once per many commands, small enough that a trimmed block gives
// back little more than repl-backlog-size asks to keep.
const blockSize = 64 << 10

// Backlog is the replication stream's recent history and the replicas'
// shared output: bytes from offset Start to End, in full blocks and a last
// one being filled. It keeps at least the last Size bytes, and every byte a
// reader has not read yet. Blocks trimmed off the front are reused for the
// tail, so appending allocates only while the backlog grows.
type Backlog struct {
	mu      sync.Mutex
	blocks  [][]byte     // each of capacity blockSize, all full but the last
	start   int64        // the offset of blocks[0][0]
	end     atomic.Int64 // the offset after the last byte; written under mu
	size    int64        // bytes to keep (repl-backlog-size)
	spare   [][]byte
	readers []*Reader
}

// NewBacklog returns an empty backlog keeping size bytes, whose next byte
// has offset start.
func NewBacklog(size, start int64) *Backlog {
	b := &Backlog{size: max(size, 1), start: start}
	b.end.Store(start)
	return b
}

// Offsets returns the offset of the first byte held and the offset after
// the last one (the stream's length so far).
func (b *Backlog) Offsets() (start, end int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.start, b.end.Load()
}

// End is the offset after the last byte appended.
func (b *Backlog) End() int64 { return b.end.Load() }

// SetSize changes the bytes kept (CONFIG SET repl-backlog-size); a smaller
// size takes effect as the stream advances.
func (b *Backlog) SetSize(size int64) {
	b.mu.Lock()
	b.size = max(size, 1)
	b.mu.Unlock()
}

// Append adds p to the stream and signals the readers.
func (b *Backlog) Append(p []byte) {
	if len(p) == 0 {
		return
	}
	b.mu.Lock()
	b.end.Add(int64(len(p)))
	for len(p) > 0 {
		n := len(b.blocks)
		if n == 0 || len(b.blocks[n-1]) == blockSize {
			b.trim()
			b.blocks = append(b.blocks, b.newBlock())
			n = len(b.blocks)
		}
		last := b.blocks[n-1]
		k := min(len(p), blockSize-len(last))
		b.blocks[n-1] = append(last, p[:k]...)
		p = p[k:]
	}
	for _, r := range b.readers {
		select {
		case r.Ready <- struct{}{}:
		default:
		}
	}
	b.mu.Unlock()
}

func (b *Backlog) newBlock() []byte {
	if n := len(b.spare); n > 0 {
		blk := b.spare[n-1]
		b.spare = b.spare[:n-1]
		return blk[:0]
	}
	return make([]byte, 0, blockSize)
}

// trim drops the front blocks that neither the size to keep nor a reader
// needs. Needs mu.
func (b *Backlog) trim() {
	for len(b.blocks) > 1 {
		next := b.start + int64(len(b.blocks[0]))
		if b.end.Load()-next < b.size {
			return
		}
		for _, r := range b.readers {
			if r.pos < next {
				return
			}
		}
		b.spare = append(b.spare, b.blocks[0])
		b.blocks[0] = nil
		b.blocks = b.blocks[1:]
		b.start = next
	}
}

// Reset empties the backlog, whose next byte will have offset start. The
// readers must have been closed.
func (b *Backlog) Reset(start int64) {
	b.mu.Lock()
	for _, blk := range b.blocks {
		b.spare = append(b.spare, blk)
	}
	b.blocks = b.blocks[:0]
	b.start = start
	b.end.Store(start)
	b.mu.Unlock()
}

// A Reader is a replica's position in the stream. The backlog keeps what
// it has not read.
type Reader struct {
	b   *Backlog
	pos int64
	// Ready receives a token when the stream grows.
	Ready chan struct{}
}

// NewReader returns a reader of the stream from offset pos, or nil when
// the backlog does not hold it (no partial resynchronization from there).
func (b *Backlog) NewReader(pos int64) *Reader {
	b.mu.Lock()
	defer b.mu.Unlock()
	if pos < b.start || pos > b.end.Load() {
		return nil
	}
	r := &Reader{b: b, pos: pos, Ready: make(chan struct{}, 1)}
	b.readers = append(b.readers, r)
	return r
}

// Read copies the stream from the reader's position into dst and moves
// past it; 0 when there is nothing new.
func (r *Reader) Read(dst []byte) int {
	b := r.b
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for end := b.end.Load(); n < len(dst) && r.pos < end; {
		at := r.pos - b.start
		blk := b.blocks[at/blockSize][at%blockSize:]
		k := copy(dst[n:], blk)
		n += k
		r.pos += int64(k)
	}
	return n
}

// Lag is the number of bytes of the stream the reader has not read.
func (r *Reader) Lag() int64 {
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	return r.b.end.Load() - r.pos
}

// Close stops the reader: the backlog no longer keeps bytes for it.
func (r *Reader) Close() {
	b := r.b
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, x := range b.readers {
		if x == r {
			b.readers = append(b.readers[:i], b.readers[i+1:]...)
			return
		}
	}
}
