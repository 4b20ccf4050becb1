// Package discover keeps approximate statistics of the key prefixes a
// keyspace holds, with nothing declared: which prefixes hold the keys, the
// bytes and the traffic, found as keys change rather than by scanning.
//
// The model:
//
//   - A key's prefix at depth n is the key up to and including its n-th
//     delimiter (":" by default), or its last delimiter when it has fewer;
//     a key without one has the empty prefix. Prefixes are cut at MaxPrefix
//     bytes. Depths 1 to Config.Depth are kept, so at each depth the
//     prefixes split all the keys.
//   - Keys, keys with a TTL and bytes come from a sample of the keys: the
//     1/KeyRate whose hash (the keyspace's) has its low bits zero. The
//     choice depends on the key alone, so a sampled key's creation, size
//     changes and deletion are all seen, an unsampled key's none, and the
//     figures never drift. Reads, writes, evictions and expirations come
//     from a 1/EventRate sample of those events, each drawn independently.
//   - Each depth's sampled figures go into a count-min sketch: Rows rows of
//     Config.Width buckets, a prefix adding to one bucket per row (chosen
//     by its fingerprint), and a figure's estimate is the smallest of its
//     buckets. Buckets only add up prefixes, so an estimate never falls
//     short of the prefix's sampled figure; keys, keys with a TTL and bytes
//     are kept per database, so FLUSHDB and SWAPDB move them as the keys
//     move.
//   - The prefixes themselves are remembered in the first NamedRows rows:
//     each bucket names one prefix, the one with the largest share of some
//     figure among those that hit it (a challenger is compared when it has
//     hit the bucket as often as the holder's sampled count, so a large,
//     idle prefix is not displaced by a stream of small ones). The top
//     prefixes are the named ones with the largest estimates.
//
// Error bound. Let R be a figure's rate (KeyRate for keys, keys with a
// TTL and bytes, EventRate for the events), S a prefix's sampled figure
// and T the sampled total of that figure at its depth. With probability
// at least 99.9% its count lies within R·(3.3·√(S+1) + 11) of R·S (the
// sample's binomial error), and the sketch adds at most R·5.7·T/Width to
// it (count-min with four rows: each row's excess passes 5.7·T/Width with
// probability at most 1/5.7, all four with at most 1/1000). Prefix.Error
// gives the sum of the two. Bytes sum keys of different sizes, so their
// bound is the keys' bound times the prefix's mean key size: a prefix
// whose bytes sit in a few large keys is estimated less precisely than
// that.
//
// Cost. A key change tests the low bits of the hash the keyspace already
// has; one in KeyRate then finds its prefixes in one pass and updates
// Rows buckets per depth. A read or write costs its caller's Sampler a
// counter decrement; one in EventRate updates Rows buckets per depth.
// Nothing allocates once a database's first sampled key is seen. Memory
// is fixed by Config (MemoryFor).
package discover

import (
	"bytes"
	"encoding/binary"
	"github.com/keyhive/keyhive/internal/sample"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Sketch shape.
const (
	Rows      = 4           // count-min rows per depth
	NamedRows = 2           // rows whose buckets name a prefix
	KeyRate   = 16          // one key in KeyRate is sampled, a power of two
	EventRate = sample.Rate // one event in EventRate is sampled
	MaxPrefix = 64          // longer prefixes are cut to this many bytes
	MaxDepth  = 3
	MinWidth  = 64
	MaxWidth  = 1 << 16 // a fingerprint's 64 bits give each row 16
)

// Figure is one of the statistics kept per prefix.
type Figure int

// The figures, in the order they are shown.
const (
	Keys Figure = iota
	Volatile
	Bytes
	Reads
	Writes
	Evictions
	Expirations
	NumFigures
)

var figureNames = [NumFigures]string{"keys", "volatile", "bytes", "reads", "writes", "evictions", "expirations"}

func (f Figure) String() string { return figureNames[f] }

// ParseFigure returns the figure named name (lower case), or false.
func ParseFigure(name string) (Figure, bool) {
	for i, n := range figureNames {
		if n == name {
			return Figure(i), true
		}
	}
	return 0, false
}

// Config is a sketch's shape.
type Config struct {
	Delimiter byte
	Depth     int    // depths kept, 1 to MaxDepth
	Width     int    // buckets per row, a power of two from MinWidth to MaxWidth
	DBs       int    // databases
	Seed      uint64 // the prefixes' fingerprints' hash seed
}

// state is a bucket's sampled figures that describe the keys present.
type state struct{ keys, volatile, bytes atomic.Int64 }

// activity is a bucket's sampled event counts, by figure from Reads on.
type activity [NumFigures - Reads]atomic.Int64

// dbState is one database's key figures: Depth·Rows·Width buckets, and
// their total (one row's sum, kept apart so that it costs no scan).
type dbState struct {
	cells []state
	total state
}

// slot names the prefix a bucket of a named row holds.
type slot struct {
	fp    atomic.Uint64 // 0: none
	votes atomic.Int64  // challenges left before the holder is compared again
	n     uint8
	name  [MaxPrefix]byte
}

// Sketch is one keyspace's discovered prefixes. Its methods are safe for
// concurrent use; FlushDB, SwapDB and Reset need the keyspace's exclusive
// lock (no concurrent event).
type Sketch struct {
	cfg      Config
	mask     uint64
	prefSeed uint64
	dbs      []atomic.Pointer[dbState]
	dbsUsed  atomic.Int32 // databases up to the highest one with figures, so reads skip the rest
	act      []activity   // Depth·Rows·Width
	actTotal activity
	named    []slot       // Depth·NamedRows·Width
	claimMu  []sync.Mutex // per depth: renaming a slot, reading names
}

// New returns an empty sketch shaped by cfg, whose fields it bounds.
func New(cfg Config) *Sketch {
	cfg.Depth = min(max(cfg.Depth, 1), MaxDepth)
	cfg.Width = min(max(1<<bits.Len(uint(cfg.Width-1)), MinWidth), MaxWidth)
	cfg.DBs = max(cfg.DBs, 1)
	s := &Sketch{
		cfg:      cfg,
		mask:     uint64(cfg.Width - 1),
		prefSeed: mix(cfg.Seed ^ 0x7072656669782d66),
		dbs:      make([]atomic.Pointer[dbState], cfg.DBs),
		act:      make([]activity, cfg.Depth*Rows*cfg.Width),
		named:    make([]slot, cfg.Depth*NamedRows*cfg.Width),
		claimMu:  make([]sync.Mutex, cfg.Depth),
	}
	s.dbs[0].Store(s.newDBState()) // most keyspaces use database 0 alone
	s.dbsUsed.Store(1)
	return s
}

func (s *Sketch) newDBState() *dbState {
	return &dbState{cells: make([]state, s.cfg.Depth*Rows*s.cfg.Width)}
}

// Config returns the sketch's shape.
func (s *Sketch) Config() Config { return s.cfg }

// MemoryFor is the memory a sketch of cfg's shape holds with dbs databases
// in use: its fixed part plus each used database's key figures.
func MemoryFor(cfg Config, dbs int) int64 {
	cells := int64(cfg.Depth * Rows * cfg.Width)
	perDB := cells * int64(unsafe.Sizeof(state{}))
	named := int64(cfg.Depth*NamedRows*cfg.Width) * int64(unsafe.Sizeof(slot{}))
	return cells*int64(unsafe.Sizeof(activity{})) + named + int64(max(dbs, 1))*perDB
}

// MemoryBytes returns the memory the sketch holds now.
func (s *Sketch) MemoryBytes() int64 {
	used := 0
	for i := range s.dbs {
		if s.dbs[i].Load() != nil {
			used++
		}
	}
	return MemoryFor(s.cfg, used)
}

// Changed records a change to key in db: keys and volatile are +1, 0 or
// -1, bytes the change of its size. hash is the key's hash, the same at
// every change of the key (the keyspace's, which has it at hand), whose
// low bits choose the sampled keys.
func (s *Sketch) Changed(db int, key []byte, hash uint64, keys, volatile, bytes int64) {
	if hash&(KeyRate-1) != 0 {
		return
	}
	st := s.dbs[db].Load()
	if st == nil {
		st = s.newDBState()
		if !s.dbs[db].CompareAndSwap(nil, st) {
			st = s.dbs[db].Load()
		}
		for {
			used := s.dbsUsed.Load()
			if used > int32(db) || s.dbsUsed.CompareAndSwap(used, int32(db)+1) {
				break
			}
		}
	}
	st.total.add(keys, volatile, bytes)
	grew := keys > 0 || bytes > 0
	prefixes, fps := s.prefixes(key)
	for d := range s.cfg.Depth {
		fp := fps[d]
		base := d * Rows * s.cfg.Width
		for r := range Rows {
			st.cells[base+r*s.cfg.Width+int(fp>>(16*r)&s.mask)].add(keys, volatile, bytes)
		}
		if grew {
			s.claim(d, fp, prefixes[d])
		}
	}
}

func (c *state) add(keys, volatile, bytes int64) {
	if keys != 0 {
		c.keys.Add(keys)
	}
	if volatile != 0 {
		c.volatile.Add(volatile)
	}
	if bytes != 0 {
		c.bytes.Add(bytes)
	}
}

// Read and Wrote count an event on key drawn by draw, the caller's
// sampler; Evicted and Expired, rarer, draw a random number each.
// Both inline, so an event not sampled costs its caller a decrement.
func (s *Sketch) Read(key []byte, draw *sample.Sampler) {
	if draw.Due() {
		s.drawn(key, Reads, draw)
	}
}

func (s *Sketch) Wrote(key []byte, draw *sample.Sampler) {
	if draw.Due() {
		s.drawn(key, Writes, draw)
	}
}

func (s *Sketch) drawn(key []byte, f Figure, draw *sample.Sampler) {
	if draw.Sampled() {
		s.record(key, f)
	}
}

func (s *Sketch) Evicted(key []byte) { s.event(key, Evictions) }
func (s *Sketch) Expired(key []byte) { s.event(key, Expirations) }

func (s *Sketch) event(key []byte, f Figure) {
	if rand.Uint32()%EventRate == 0 {
		s.record(key, f)
	}
}

// record counts a sampled event.
func (s *Sketch) record(key []byte, f Figure) {
	s.actTotal[f-Reads].Add(1)
	prefixes, fps := s.prefixes(key)
	for d := range s.cfg.Depth {
		fp := fps[d]
		base := d * Rows * s.cfg.Width
		for r := range Rows {
			s.act[base+r*s.cfg.Width+int(fp>>(16*r)&s.mask)][f-Reads].Add(1)
		}
		s.claim(d, fp, prefixes[d])
	}
}

// prefixes returns key's prefixes at depths 1 to Config.Depth, cut to
// MaxPrefix bytes, and their fingerprints: the delimiters are found in one
// pass over the first MaxPrefix bytes (a prefix that ends past them is
// cut there anyway), and a prefix repeated at a deeper depth (the key has
// fewer delimiters) is hashed once.
func (s *Sketch) prefixes(key []byte) (prefixes [MaxDepth][]byte, fps [MaxDepth]uint64) {
	head := key[:min(len(key), MaxPrefix)]
	found := 0
	for i, c := range head {
		if c == s.cfg.Delimiter {
			prefixes[found] = head[:i+1]
			found++
			if found == s.cfg.Depth {
				break
			}
		}
	}
	for d := range s.cfg.Depth {
		switch {
		case d < found:
			fps[d] = s.fingerprint(prefixes[d])
			continue
		case len(key) > MaxPrefix && bytes.IndexByte(key[MaxPrefix:], s.cfg.Delimiter) >= 0:
			prefixes[d] = head // its next delimiter is past the cut
			fps[d] = s.fingerprint(head)
		case d == 0:
			prefixes[d] = key[:0]
			fps[d] = s.fingerprint(key[:0])
		default:
			prefixes[d], fps[d] = prefixes[d-1], fps[d-1]
		}
		for d++; d < s.cfg.Depth; d++ {
			prefixes[d], fps[d] = prefixes[d-1], fps[d-1]
		}
		break
	}
	return prefixes, fps
}

// fingerprint is prefix's hash, never 0 (an empty slot).
func (s *Sketch) fingerprint(prefix []byte) uint64 {
	return hash(s.prefSeed, prefix) | 1
}

// claim lets the prefix fp, which just grew, take the buckets of the named
// rows it maps to when it outweighs their holders.
func (s *Sketch) claim(d int, fp uint64, prefix []byte) {
	for r := range NamedRows {
		sl := &s.named[(d*NamedRows+r)*s.cfg.Width+int(fp>>(16*r)&s.mask)]
		holder := sl.fp.Load()
		if holder == fp {
			continue
		}
		if holder != 0 && sl.votes.Add(-1) > 0 {
			continue
		}
		s.claimMu[d].Lock()
		switch holder = sl.fp.Load(); {
		case holder == fp:
		case holder == 0:
			s.name(sl, fp, prefix, minVotes)
		default:
			mine, theirs := s.estimate(d, fp), s.estimate(d, holder)
			totals := s.sampledTotals()
			if share(&mine, &totals) > share(&theirs, &totals) {
				s.name(sl, fp, prefix, weight(&mine))
			} else {
				sl.votes.Store(weight(&theirs))
			}
		}
		s.claimMu[d].Unlock()
	}
}

func (s *Sketch) name(sl *slot, fp uint64, prefix []byte, votes int64) {
	sl.n = uint8(copy(sl.name[:], prefix))
	sl.votes.Store(votes)
	sl.fp.Store(fp)
}

// share is the largest fraction of a total the estimate e holds.
func share(e, totals *[NumFigures]int64) float64 {
	best := 0.0
	for f := range NumFigures {
		if totals[f] > 0 {
			best = max(best, float64(e[f])/float64(totals[f]))
		}
	}
	return best
}

// weight is how many challenges a holder of estimate e withstands before
// it is compared again: its sampled keys and events, and at least
// minVotes, so that a stream of prefixes seen once (random ones) costs a
// comparison per minVotes of them.
func weight(e *[NumFigures]int64) int64 {
	return min(max(e[Keys]+e[Reads]+e[Writes], minVotes), 1<<20)
}

const minVotes = 8

// estimate returns the sampled figures of the prefix fp at depth d: the
// smallest bucket of each row.
func (s *Sketch) estimate(d int, fp uint64) [NumFigures]int64 {
	var e [NumFigures]int64
	for f := range e {
		e[f] = math.MaxInt64
	}
	base := d * Rows * s.cfg.Width
	for r := range Rows {
		i := base + r*s.cfg.Width + int(fp>>(16*r)&s.mask)
		var k, v, b int64
		for db := range s.dbsUsed.Load() {
			if st := s.dbs[db].Load(); st != nil {
				c := &st.cells[i]
				k += c.keys.Load()
				v += c.volatile.Load()
				b += c.bytes.Load()
			}
		}
		a := &s.act[i]
		row := [NumFigures]int64{k, v, b}
		for f := Reads; f < NumFigures; f++ {
			row[f] = a[f-Reads].Load()
		}
		for f := range e {
			e[f] = min(e[f], row[f])
		}
	}
	for f := range e {
		e[f] = max(e[f], 0) // a sampled key's figures can pass zero for a moment between two events
	}
	return e
}

// sampledTotals returns the figures' sampled totals (at every depth: each
// key and event counts once per depth).
func (s *Sketch) sampledTotals() [NumFigures]int64 {
	var t [NumFigures]int64
	for db := range s.dbsUsed.Load() {
		if st := s.dbs[db].Load(); st != nil {
			t[Keys] += st.total.keys.Load()
			t[Volatile] += st.total.volatile.Load()
			t[Bytes] += st.total.bytes.Load()
		}
	}
	for f := Reads; f < NumFigures; f++ {
		t[f] = s.actTotal[f-Reads].Load()
	}
	return t
}

// Discovered reports whether a bucket of some depth names prefix.
func (s *Sketch) Discovered(prefix []byte) bool {
	fp := s.fingerprint(prefix)
	for d := range s.cfg.Depth {
		for r := range NamedRows {
			if s.named[(d*NamedRows+r)*s.cfg.Width+int(fp>>(16*r)&s.mask)].fp.Load() == fp {
				return true
			}
		}
	}
	return false
}

// Prefix is a discovered prefix with its estimated figures, each within
// Error of the true count (see the package's error bound).
type Prefix struct {
	Depth   int
	Name    string
	Figures [NumFigures]int64
	Error   [NumFigures]int64
}

// Top returns up to count prefixes of depth d (1 to Config.Depth) with
// the largest estimates of figure by, largest first. Prefixes whose
// figures are all zero are left out.
func (s *Sketch) Top(d int, by Figure, count int) []Prefix {
	d--
	totals := s.sampledTotals()
	type cand struct {
		fp   uint64
		name string
	}
	var cands []cand
	s.claimMu[d].Lock()
	for r := range NamedRows {
		for i := range s.cfg.Width {
			sl := &s.named[(d*NamedRows+r)*s.cfg.Width+i]
			if fp := sl.fp.Load(); fp != 0 {
				cands = append(cands, cand{fp, string(sl.name[:sl.n])})
			}
		}
	}
	s.claimMu[d].Unlock()
	slices.SortFunc(cands, func(a, b cand) int {
		if a.fp < b.fp {
			return -1
		} else if a.fp > b.fp {
			return 1
		}
		return 0
	})
	cands = slices.CompactFunc(cands, func(a, b cand) bool { return a.fp == b.fp })
	out := make([]Prefix, 0, len(cands))
	for _, c := range cands {
		e := s.estimate(d, c.fp)
		if e == ([NumFigures]int64{}) {
			continue
		}
		out = append(out, s.scale(d+1, c.name, &e, &totals))
	}
	slices.SortStableFunc(out, func(a, b Prefix) int {
		if a.Figures[by] != b.Figures[by] {
			if a.Figures[by] > b.Figures[by] {
				return -1
			}
			return 1
		}
		if a.Name < b.Name {
			return -1
		} else if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out[:min(count, len(out))]
}

// Confidence constants of the error bound: z for 99.9% two-sided, and the
// count-min excess factor 1000^(1/Rows).
const (
	zScore   = 3.3
	cmFactor = 5.7
)

// rate is how many of figure f's keys or events one sampled stands for.
func rate(f Figure) float64 {
	if f < Reads {
		return KeyRate
	}
	return EventRate
}

// scale turns sampled figures into estimates with their error bounds.
func (s *Sketch) scale(depth int, name string, e, totals *[NumFigures]int64) Prefix {
	p := Prefix{Depth: depth, Name: name}
	for f := range NumFigures {
		r := rate(f)
		p.Figures[f] = e[f] * int64(r)
		sampling := r * (zScore*math.Sqrt(float64(e[f]+1)) + zScore*zScore)
		if f == Bytes {
			mean := 0.0
			if e[Keys] > 0 {
				mean = float64(e[Bytes]) / float64(e[Keys])
			}
			sampling = r * (zScore*math.Sqrt(float64(e[Keys]+1)) + zScore*zScore) * mean
		}
		sketch := r * cmFactor * float64(totals[f]) / float64(s.cfg.Width)
		p.Error[f] = int64(math.Ceil(sampling + sketch))
	}
	return p
}

// Totals returns the estimated totals of the figures over all keys and
// events (each within the sampling error).
func (s *Sketch) Totals() [NumFigures]int64 {
	t := s.sampledTotals()
	for f := range t {
		t[f] *= int64(rate(Figure(f)))
	}
	return t
}

// FlushDB forgets database db's keys.
func (s *Sketch) FlushDB(db int) {
	if st := s.dbs[db].Load(); st != nil {
		clearState(st)
	}
}

// SwapDB exchanges two databases' keys.
func (s *Sketch) SwapDB(a, b int) {
	sa, sb := s.dbs[a].Load(), s.dbs[b].Load()
	s.dbs[a].Store(sb)
	s.dbs[b].Store(sa)
	s.dbsUsed.Store(max(s.dbsUsed.Load(), int32(max(a, b))+1))
}

// Reset forgets every database's keys (the keyspace then reports each key
// present again); the event counts and the named prefixes stay.
func (s *Sketch) Reset() {
	for i := range s.dbs {
		if st := s.dbs[i].Load(); st != nil {
			clearState(st)
		}
	}
}

// clearState zeroes st with atomic stores: readers (Top, the console's
// snapshot) load the cells while a flush or a full sync clears them.
func clearState(st *dbState) {
	for i := range st.cells {
		st.cells[i].reset()
	}
	st.total.reset()
}

func (c *state) reset() {
	c.keys.Store(0)
	c.volatile.Store(0)
	c.bytes.Store(0)
}

// hash is a seeded 64-bit hash of b: eight bytes at a time, each word
// folded in by a multiply, and a final mix so that every input bit moves
// the top bits the sampling reads.
func hash(seed uint64, b []byte) uint64 {
	h := seed ^ uint64(len(b))*0x9e3779b97f4a7c15
	for len(b) >= 8 {
		h = (h ^ binary.LittleEndian.Uint64(b)) * 0xff51afd7ed558ccd
		h ^= h >> 29
		b = b[8:]
	}
	if len(b) > 0 {
		var w uint64
		for i, c := range b {
			w |= uint64(c) << (8 * i)
		}
		h = (h ^ w) * 0xff51afd7ed558ccd
	}
	return mix(h)
}

// mix scrambles x so that each input bit flips each output bit with
// probability about one half.
func mix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	return x
}
