package namespace

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/keyhive/keyhive/discover"
	"github.com/keyhive/keyhive/glob"
	"github.com/keyhive/keyhive/internal/sample"
	"github.com/keyhive/keyhive/internal/zset"
	"github.com/keyhive/keyhive/keyspace"
)

// Counters are one namespace's figures in one database.
type Counters struct {
	// Kept by the keyspace as keys change.
	Keys, Volatile, Bytes atomic.Int64
	// Kept by the server.
	Hits, Misses, Writes, Evictions, Expirations, Refused atomic.Int64
}

// Totals is a snapshot of Counters summed over databases.
type Totals struct {
	Keys, Volatile, Bytes                                 int64
	Hits, Misses, Writes, Evictions, Expirations, Refused int64
}

func (t *Totals) add(c *Counters) {
	t.Keys += c.Keys.Load()
	t.Volatile += c.Volatile.Load()
	t.Bytes += c.Bytes.Load()
	t.Hits += c.Hits.Load()
	t.Misses += c.Misses.Load()
	t.Writes += c.Writes.Load()
	t.Evictions += c.Evictions.Load()
	t.Expirations += c.Expirations.Load()
	t.Refused += c.Refused.Load()
}

// row is one database's counters and eviction indexes, one per namespace.
type row struct {
	counts []Counters
	index  []*evictIndex // nil where the namespace keeps none
	sizes  keySizes
}

// evictIndex orders one database's keys of a namespace by its eviction
// score, the lowest evicted first.
type evictIndex struct {
	mu   sync.Mutex
	keys zset.Tree
}

// Scores: lru is an order of access; the hit-counting orders have hits in
// the high bits and an order of creation (or access) in the low 33, so the
// float64 stays exact.
const (
	seqBits = 33
	maxHits = 1<<(53-seqBits) - 1
	noTTL   = float64(1 << 62) // keys without an expire time go last under ttl
)

// Table is a compiled set of declarations with its counters, and the
// discovered prefixes' sketch when discovery is on: the one Schema the
// keyspace reports to, which feeds both. Index 0 is the default namespace;
// with nothing declared its counters are not kept (no namespace is shown).
// Its methods are safe for concurrent use; the keyspace calls Changed and
// Wrote under the key's shard lock.
type Table struct {
	defs     []Def
	declared bool
	disc     *discover.Sketch // nil: discovery off
	patterns [][]byte         // defs' patterns as bytes, for glob.Match
	nodes    []node
	edges    []edge
	rows     []atomic.Pointer[row]
	seq      []atomic.Int64 // per namespace: creation (or access) order for scores
	indexed  bool           // some namespace keeps an eviction index
	byHits   bool           // some index's score changes on reads
	ttlRules bool           // some namespace sets TTLs on writes
	guarded  bool           // some namespace checks writes before they run
	over     atomic.Int64   // namespaces over a quota, so the server evicts
	overBits []atomic.Bool
}

// node is a trie node: the bytes that lead to it after its edge's byte
// (label: chains of single-child nodes are collapsed, so a match compares
// whole runs of bytes), the namespaces whose literal prefix ends here, and
// its edges.
type node struct {
	label    []byte
	first, n int32   // edges[first:first+n]
	defs     []int32 // namespaces whose literal prefix ends here, most specific first
}

type edge struct {
	b     byte
	child int32
}

// NewTable compiles defs (names must be distinct) for dbs databases,
// feeding disc (nil: none) as keys change. disc must hold no keys: the
// keyspace reports each key present to a new Table.
func NewTable(defs []Def, dbs int, disc *discover.Sketch) *Table {
	t := &Table{defs: append([]Def{{Name: DefaultName}}, defs...), declared: len(defs) > 0, disc: disc}
	t.patterns = make([][]byte, len(t.defs))
	for i := range t.defs {
		t.patterns[i] = []byte(t.defs[i].Pattern)
		t.ttlRules = t.ttlRules || t.defs[i].DefaultTTL > 0 || t.defs[i].MaxTTL > 0
		t.guarded = t.guarded || t.defs[i].Guards()
		if t.defs[i].Indexed() {
			t.indexed = true
			if o := t.defs[i].Evict; o == OrderLRU || o == OrderLFU || o == OrderHitsThenOldest || o == OrderLRFU {
				t.byHits = true
			}
		}
	}
	t.build()
	t.seq = make([]atomic.Int64, len(t.defs))
	t.overBits = make([]atomic.Bool, len(t.defs))
	t.rows = make([]atomic.Pointer[row], dbs)
	for i := range t.rows {
		t.rows[i].Store(t.newRow())
	}
	return t
}

func (t *Table) newRow() *row {
	r := &row{counts: make([]Counters, len(t.defs)), index: make([]*evictIndex, len(t.defs))}
	for i := range t.defs {
		if t.defs[i].Indexed() {
			r.index[i] = &evictIndex{}
		}
	}
	return r
}

// build makes the trie of literal prefixes. A node's candidates are tried
// patterns first (longer first), then the plain prefix.
func (t *Table) build() {
	type tnode struct {
		kids map[byte]int
		defs []int32
	}
	tn := []tnode{{kids: map[byte]int{}}}
	for i := 1; i < len(t.defs); i++ {
		at := 0
		for _, b := range []byte(t.defs[i].Prefix) {
			next, ok := tn[at].kids[b]
			if !ok {
				next = len(tn)
				tn[at].kids[b] = next
				tn = append(tn, tnode{kids: map[byte]int{}})
			}
			at = next
		}
		tn[at].defs = append(tn[at].defs, int32(i))
	}
	// flatten appends the node reached at tn[at], collapsing its chain of
	// single-child nodes without namespaces into the label, and returns
	// its index.
	var flatten func(at int, label []byte) int32
	flatten = func(at int, label []byte) int32 {
		for at != 0 && len(tn[at].kids) == 1 && len(tn[at].defs) == 0 {
			for b, next := range tn[at].kids {
				label = append(label, b)
				at = next
			}
		}
		defs := tn[at].defs
		sort.Slice(defs, func(a, b int) bool {
			da, db := &t.defs[defs[a]], &t.defs[defs[b]]
			if (da.Pattern != "") != (db.Pattern != "") {
				return da.Pattern != ""
			}
			return len(da.Pattern) > len(db.Pattern)
		})
		id := int32(len(t.nodes))
		t.nodes = append(t.nodes, node{label: label, defs: defs})
		bs := make([]int, 0, len(tn[at].kids))
		for b := range tn[at].kids {
			bs = append(bs, int(b))
		}
		sort.Ints(bs)
		edges := make([]edge, len(bs))
		for j, b := range bs {
			edges[j] = edge{byte(b), flatten(tn[at].kids[byte(b)], nil)}
		}
		t.nodes[id].first, t.nodes[id].n = int32(len(t.edges)), int32(len(edges))
		t.edges = append(t.edges, edges...)
		return id
	}
	flatten(0, nil)
}

// Match returns the index of key's namespace (0: the default one).
func (t *Table) Match(key []byte) int {
	best := 0
	n := &t.nodes[0]
	i := 0
	for {
		for _, d := range n.defs {
			if p := t.patterns[d]; len(p) == 0 || glob.Match(p, key, false) {
				best = int(d)
				break
			}
		}
		if i >= len(key) || n.n == 0 {
			return best
		}
		c, next := key[i], int32(-1)
		for _, e := range t.edges[n.first : n.first+n.n] {
			if e.b == c {
				next = e.child
				break
			}
		}
		if next < 0 {
			return best
		}
		n = &t.nodes[next]
		i++
		if !bytes.HasPrefix(key[i:], n.label) {
			return best
		}
		i += len(n.label)
	}
}

// TTLRules reports whether some namespace sets TTLs on writes (DEFAULT-TTL,
// MAX-TTL).
func (t *Table) TTLRules() bool { return t.ttlRules }

// Guarded reports whether some namespace checks writes before they run.
func (t *Table) Guarded() bool { return t.guarded }

// Declared reports whether some namespace is declared: without, the table
// only feeds discovery.
func (t *Table) Declared() bool { return t.declared }

// Discovery returns the discovered prefixes' sketch, nil when discovery is
// off.
func (t *Table) Discovery() *discover.Sketch { return t.disc }

// Len returns the number of namespaces, the default one included.
func (t *Table) Len() int { return len(t.defs) }

// Def returns namespace i's declaration.
func (t *Table) Def(i int) *Def { return &t.defs[i] }

// Defs returns the declarations (not the default namespace).
func (t *Table) Defs() []Def { return slices.Clone(t.defs[1:]) }

// Find returns the index of the namespace named name, or -1.
func (t *Table) Find(name string) int {
	for i := range t.defs {
		if t.defs[i].Name == name {
			return i
		}
	}
	return -1
}

// Counters returns namespace ns's counters in database db.
func (t *Table) Counters(db, ns int) *Counters { return &t.rows[db].Load().counts[ns] }

// Totals sums namespace ns's counters over the databases.
func (t *Table) Totals(ns int) Totals {
	var s Totals
	for i := range t.rows {
		s.add(&t.rows[i].Load().counts[ns])
	}
	return s
}

// Changed records a change to key in db: keys and volatile are +1, 0 or -1,
// bytes the change of its size in the keyspace, hash the key's hash there
// (keyspace.Schema). expireAt is the key's expire time after the change
// (0: none), or -1 when it did not change; was and is its KeySize before
// and after, for INFO keysizes.
func (t *Table) Changed(db int, key []byte, hash uint64, keys, volatile, bytes, expireAt int64, was, is keyspace.KeySize) {
	r := t.rows[db].Load()
	r.sizes.move(was, is)
	if keys == 0 && volatile == 0 && bytes == 0 && expireAt == -1 {
		return // a collection's length changed in place
	}
	if t.disc != nil {
		t.disc.Changed(db, key, hash, keys, volatile, bytes)
	}
	if !t.declared {
		return
	}
	ns := t.Match(key)
	c := &r.counts[ns]
	if keys != 0 {
		c.Keys.Add(keys)
	}
	if volatile != 0 {
		c.Volatile.Add(volatile)
	}
	if bytes != 0 {
		c.Bytes.Add(bytes)
	}
	if ix := r.index[ns]; ix != nil {
		t.reindex(ix, ns, key, keys, expireAt)
	}
	if d := &t.defs[ns]; d.HasQuota() {
		t.checkQuota(ns, d)
	}
}

// Wrote counts a write to key in db, which is also an access; draw samples
// it for discovery.
func (t *Table) Wrote(db int, key []byte, draw *sample.Sampler) {
	if t.disc != nil {
		t.disc.Wrote(key, draw)
	}
	if !t.declared {
		return
	}
	ns := t.Match(key)
	r := t.rows[db].Load()
	r.counts[ns].Writes.Add(1)
	if ix := r.index[ns]; ix != nil && t.defs[ns].Evict == OrderLRU {
		ix.mu.Lock()
		if _, ok := ix.keys.Score(key); ok {
			ix.keys.SetScore(key, float64(t.nextSeq(ns)))
		}
		ix.mu.Unlock()
	}
}

// Hit counts a lookup of key in db that found it (touch: one that counts
// as an access for the eviction order), Miss one that did not; draw (the
// client's) samples it for discovery.
func (t *Table) Hit(db int, key []byte, touch bool, draw *sample.Sampler) {
	if t.disc != nil {
		t.disc.Read(key, draw)
	}
	if !t.declared {
		return
	}
	ns := t.Match(key)
	r := t.rows[db].Load()
	r.counts[ns].Hits.Add(1)
	if ix := r.index[ns]; ix != nil && touch && t.byHits {
		t.touch(ix, ns, key)
	}
}

// Miss counts a lookup of key in db that did not find it.
func (t *Table) Miss(db int, key []byte, draw *sample.Sampler) {
	if t.disc != nil {
		t.disc.Read(key, draw)
	}
	if t.declared {
		t.rows[db].Load().counts[t.Match(key)].Misses.Add(1)
	}
}

// Event is a server-kept count of what happened to a key.
type Event uint8

// The events Count counts.
const (
	Evicted Event = iota
	Expired
	Refused // a write the namespace's policies refused
)

// Count counts ev on key in db.
func (t *Table) Count(db int, key []byte, ev Event) {
	if t.disc != nil {
		switch ev {
		case Evicted:
			t.disc.Evicted(key)
		case Expired:
			t.disc.Expired(key)
		}
	}
	if !t.declared {
		return
	}
	c := &t.rows[db].Load().counts[t.Match(key)]
	switch ev {
	case Evicted:
		c.Evictions.Add(1)
	case Expired:
		c.Expirations.Add(1)
	case Refused:
		c.Refused.Add(1)
	}
}

func (t *Table) touch(ix *evictIndex, ns int, key []byte) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	old, ok := ix.keys.Score(key)
	if !ok {
		return
	}
	switch t.defs[ns].Evict {
	case OrderLRU:
		ix.keys.SetScore(key, float64(t.nextSeq(ns)))
	case OrderLFU:
		hits := min(int64(old)>>seqBits+1, maxHits)
		ix.keys.SetScore(key, float64(hits<<seqBits|t.nextSeq(ns)))
	case OrderHitsThenOldest:
		if hits := int64(old) >> seqBits; hits < maxHits {
			ix.keys.SetScore(key, old+float64(int64(1)<<seqBits))
		}
	case OrderLRFU:
		ix.keys.SetScore(key, lrfuScore(old, t.lrfuNow(ix, ns)))
	}
}

// LRFU as Lee et al. define it: a key's value is the sum over its accesses
// of 2^(-age/h), age in accesses to the namespace and h the half-life, here
// as many accesses as the index holds keys. The index stores it as
// log2(sum 2^(t_i/h)), which an access at t raises to
// log2(2^score + 2^(t/h)) and time leaves alone, so comparing stored scores
// compares the keys' values at any instant.
func lrfuScore(old, now float64) float64 {
	hi, lo := max(old, now), min(old, now)
	return hi + math.Log2(1+math.Exp2(lo-hi))
}

// lrfuNow is the time of a new access in half-lives (under ix.mu).
func (t *Table) lrfuNow(ix *evictIndex, ns int) float64 {
	return float64(t.nextSeq(ns)) / float64(max(ix.keys.Len(), 1))
}

func (t *Table) nextSeq(ns int) int64 { return t.seq[ns].Add(1) & (1<<seqBits - 1) }

func (t *Table) reindex(ix *evictIndex, ns int, key []byte, keys, expireAt int64) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	switch {
	case keys < 0:
		ix.keys.Remove(key)
	case keys > 0:
		var score float64
		switch t.defs[ns].Evict {
		case OrderLRU, OrderLFU, OrderHitsThenOldest:
			score = float64(t.nextSeq(ns))
		case OrderLRFU:
			score = t.lrfuNow(ix, ns)
		case OrderTTL:
			score = ttlScore(expireAt)
		case OrderRandom:
			score = float64(rand.Int64N(1 << 52))
		}
		ix.keys.Add(key, score)
	case expireAt >= 0 && t.defs[ns].Evict == OrderTTL:
		if _, ok := ix.keys.Score(key); ok {
			ix.keys.SetScore(key, ttlScore(expireAt))
		}
	}
}

func ttlScore(expireAt int64) float64 {
	if expireAt <= 0 {
		return noTTL
	}
	return float64(expireAt)
}

// checkQuota notes whether namespace ns is over a quota, for the server's
// eviction (Over) to find.
func (t *Table) checkQuota(ns int, d *Def) {
	tot := t.Totals(ns)
	over := (d.MaxKeys > 0 && tot.Keys > d.MaxKeys) || (d.MaxMemory > 0 && tot.Bytes > d.MaxMemory)
	if t.overBits[ns].Load() != over && t.overBits[ns].CompareAndSwap(!over, over) {
		if over {
			t.over.Add(1)
		} else {
			t.over.Add(-1)
		}
	}
}

// AnyOver reports whether some namespace is over its quota: the one check
// the server makes after a write.
func (t *Table) AnyOver() bool { return t.over.Load() > 0 }

// Over returns a namespace over its quota that evicts, or -1.
func (t *Table) Over() int {
	for i := range t.overBits {
		if t.overBits[i].Load() && t.defs[i].Evict != OrderNone {
			t.checkQuota(i, &t.defs[i]) // a FLUSHDB may have ended it
			if t.overBits[i].Load() {
				return i
			}
		}
	}
	return -1
}

// WouldExceed reports whether one more key in namespace ns passes its key
// quota.
func (t *Table) WouldExceed(ns int) bool {
	d := &t.defs[ns]
	return d.MaxKeys > 0 && t.Totals(ns).Keys >= d.MaxKeys
}

// OverMemory reports whether namespace ns holds more bytes than its quota.
func (t *Table) OverMemory(ns int) bool {
	d := &t.defs[ns]
	return d.MaxMemory > 0 && t.Totals(ns).Bytes >= d.MaxMemory
}

// Victim appends to buf the key namespace ns evicts next and returns it with
// its database, or ok=false when the namespace has no key left to evict.
func (t *Table) Victim(ns int, buf []byte) (db int, key []byte, ok bool) {
	best, bestDB := math.Inf(1), -1
	for i := range t.rows {
		ix := t.rows[i].Load().index[ns]
		if ix == nil {
			continue
		}
		ix.mu.Lock()
		if ix.keys.Len() > 0 {
			k, score := ix.keys.At(0)
			if score < best || bestDB < 0 {
				best, bestDB, buf = score, i, append(buf[:0], k...)
			}
		}
		ix.mu.Unlock()
	}
	return bestDB, buf, bestDB >= 0
}

// Drop removes key from namespace ns's index in db without counting it
// gone: a victim the keyspace no longer holds.
func (t *Table) Drop(db int, key []byte) {
	if ix := t.rows[db].Load().index[t.Match(key)]; ix != nil {
		ix.mu.Lock()
		ix.keys.Remove(key)
		ix.mu.Unlock()
	}
}

// FlushDB forgets database db's keys (FLUSHDB, FLUSHALL), keeping its
// server-kept counters.
func (t *Table) FlushDB(db int) {
	if t.disc != nil {
		t.disc.FlushDB(db)
	}
	old := t.rows[db].Load()
	r := t.newRow()
	for i := range r.counts {
		r.counts[i].copyActivity(&old.counts[i])
	}
	t.rows[db].Store(r)
	for i := range t.defs {
		if t.defs[i].HasQuota() {
			t.checkQuota(i, &t.defs[i])
		}
	}
}

// SwapDB exchanges two databases' keys, as SWAPDB does.
func (t *Table) SwapDB(a, b int) {
	if t.disc != nil {
		t.disc.SwapDB(a, b)
	}
	ra, rb := t.rows[a].Load(), t.rows[b].Load()
	t.rows[a].Store(rb)
	t.rows[b].Store(ra)
}

// KeepCounters carries the server-kept counters of old's namespaces over
// to the same-named ones of t, which replaces old.
func (t *Table) KeepCounters(old *Table) {
	for i := range t.defs {
		j := old.Find(t.defs[i].Name)
		if j < 0 {
			continue
		}
		for db := range min(len(t.rows), len(old.rows)) {
			t.Counters(db, i).copyActivity(old.Counters(db, j))
		}
	}
}

// ResetCounters zeroes namespace ns's server-kept counters (NAMESPACE RESET).
func (t *Table) ResetCounters(ns int) {
	var zero Counters
	for db := range t.rows {
		t.Counters(db, ns).copyActivity(&zero)
	}
}

// copyActivity sets c's server-kept counters (what happened to the keys,
// not what they are now) to o's.
func (c *Counters) copyActivity(o *Counters) {
	c.Hits.Store(o.Hits.Load())
	c.Misses.Store(o.Misses.Load())
	c.Writes.Store(o.Writes.Load())
	c.Evictions.Store(o.Evictions.Load())
	c.Expirations.Store(o.Expirations.Load())
	c.Refused.Store(o.Refused.Load())
}

// Protects reports whether maxmemory eviction must skip key.
func (t *Table) Protects(key []byte) bool { return t.defs[t.Match(key)].Protected }

// AnyProtected reports whether some namespace is protected.
func (t *Table) AnyProtected() bool {
	for i := range t.defs {
		if t.defs[i].Protected {
			return true
		}
	}
	return false
}
