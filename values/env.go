package values

import "github.com/keyhive/keyhive/keyspace"

// Limits are the configured encoding thresholds (the server's
// *config.Config implements them).
type Limits interface {
	HashMaxListpackEntries() int64
	HashMaxListpackValue() int64
	SetMaxIntsetEntries() int64
	SetMaxListpackEntries() int64
	SetMaxListpackValue() int64
	ZsetMaxListpackEntries() int64
	ZsetMaxListpackValue() int64
	ListMaxListpackSize() int
	StreamNodeMaxBytes() int64
	StreamNodeMaxEntries() int64
}

// Env is what an edit needs from its surroundings: a command's context
// provides it, and so does the RDB loader.
type Env struct {
	Limits  Limits
	DB      *keyspace.DB
	Now     int64 // Unix ms: the time of the command or load
	Scratch *Scratch
}

// Scratch is a pair of buffers for rebuilding compact values: a rebuild reads
// one and writes the other, and the keyspace copies the result, so they are
// reused across edits. Its owner (a client's context, the loader) keeps it.
type Scratch struct {
	bufs [2][]byte
	last int
}

// Next returns the buffer not handed out last, emptied.
func (s *Scratch) Next() []byte {
	s.last ^= 1
	return s.bufs[s.last][:0]
}

// Keep keeps b, built in the buffer Next handed out last, as that buffer, so
// a capacity it grew to is reused; a huge one is let go.
func (s *Scratch) Keep(b []byte) {
	if cap(b) > 1<<20 {
		b = nil
	}
	s.bufs[s.last] = b
}
