package values

import (
	"math/rand/v2"

	"github.com/keyhive/keyhive/internal/bytemap"
	"github.com/keyhive/keyhive/internal/listpack"
	"github.com/keyhive/keyhive/keyspace"
)

// HashObject is the large form of a hash (OBJECT ENCODING hashtable). Small
// hashes are inline listpack bytes instead. ttl holds the fields' expire
// times, nil when none has one (hashttl.go).
type HashObject struct {
	bytemap.Map
	ttl *fieldTTLs
}

func (h *HashObject) Clone() keyspace.Object {
	c := &HashObject{Map: *h.Map.Clone()}
	if h.ttl != nil {
		c.ttl = &fieldTTLs{Map: *h.ttl.Map.Clone(), min: h.ttl.min}
	}
	return c
}

// MemoryBytes is the memory the fields and their expire times hold.
func (h *HashObject) MemoryBytes() int {
	n := h.Map.MemoryBytes()
	if h.ttl != nil {
		n += h.ttl.MemoryBytes()
	}
	return n
}

// HashView is a stored hash in either form: Obj when large, else LP (with
// field TTLs when Ex). Reads skip the fields expired at Now (hashttl.go).
//
// Packed marks a listpack that Redis would hold as a hashtable: a field or
// value went past hash-max-listpack-value. A few fields with one long
// value (seed 000's DNS entries: a packed message beside three numbers)
// cost a listpack's bytes, not a table's; such a hash behaves and reports
// as Redis's hashtable (Large) and takes the table form only once it holds
// more than hash-max-listpack-entries fields or packedHashMax bytes.
type HashView struct {
	LP     []byte
	Ex     bool
	Packed bool
	Obj    *HashObject
	Now    int64
}

// packedHashMax bounds a packed hashtable's listpack: each change rewrites
// it, so past this size the table form's in-place changes are cheaper.
const packedHashMax = 8 << 10

// ViewHash reads a hash entry.
func ViewHash(e *keyspace.Entry) HashView {
	if o := e.Object(); o != nil {
		return HashView{Obj: o.(*HashObject)}
	}
	enc := e.Encoding()
	return HashView{LP: e.Value(),
		Ex:     enc == keyspace.EncListpackEx || enc == keyspace.EncHashPackedEx,
		Packed: enc == keyspace.EncHashPacked || enc == keyspace.EncHashPackedEx}
}

// Large reports whether Redis would hold the hash as a hashtable: its
// replies, files and events follow that encoding's.
func (h HashView) Large() bool { return h.Obj != nil || h.Packed }

func (h HashView) Len() int {
	if h.Obj != nil {
		return h.Obj.Len()
	}
	return listpack.Len(h.LP)
}

// Get returns a field's value unless it is missing or expired.
func (h HashView) Get(field []byte) ([]byte, bool) {
	if h.HasTTLs() {
		v, at, ok := h.Lookup(field)
		return v, ok && !h.Expired(at)
	}
	if h.Obj != nil {
		return h.Obj.Get(field)
	}
	return listpack.Get(h.LP, field)
}

// Each calls fn for every pair not expired: in insertion order for a
// listpack (TTL order with TTLs), in table order for the large form.
func (h HashView) Each(fn func(field, value []byte)) {
	if h.HasTTLs() {
		h.EachTTL(func(f, v []byte, at int64) {
			if !h.Expired(at) {
				fn(f, v)
			}
		})
		return
	}
	if h.Obj != nil {
		for p := h.Obj.Next(0); p >= 0; p = h.Obj.Next(p + 1) {
			fn(h.Obj.At(p))
		}
		return
	}
	it := listpack.NewIter(h.LP)
	for f, v, ok := it.Next(); ok; f, v, ok = it.Next() {
		fn(f, v)
	}
}

// EachRandom calls fn for n uniformly random pairs of a non-empty hash,
// repeats allowed. A listpack's pairs are indexed for more than one draw; one
// is found by walking to it. Expired fields count (HRANDFIELD removes them
// first, as Redis does).
func (h HashView) EachRandom(n int, fn func(field, value []byte)) {
	if h.Ex {
		offs := h.exOffsets()
		for range n {
			h.exAt(offs[rand.IntN(len(offs))], fn)
		}
		return
	}
	if h.Obj != nil {
		for range n {
			fn(h.Obj.At(h.Obj.RandomPos()))
		}
		return
	}
	it := listpack.NewIter(h.LP)
	if n == 1 {
		for range rand.IntN(listpack.Len(h.LP)) {
			it.Next()
		}
		f, v, _ := it.Next()
		fn(f, v)
		return
	}
	offs := pairOffsets(h.LP)
	for range n {
		it.Seek(offs[rand.IntN(len(offs))])
		f, v, _ := it.Next()
		fn(f, v)
	}
}

// pairOffsets returns the iterator offsets of a listpack's pairs.
func pairOffsets(lp []byte) []int {
	offs := make([]int, 0, listpack.Len(lp))
	it := listpack.NewIter(lp)
	for {
		off := it.Offset()
		if _, _, ok := it.Next(); !ok {
			return offs
		}
		offs = append(offs, off)
	}
}

// exOffsets returns the offsets of the compact form's triplets.
func (h HashView) exOffsets() []int {
	offs := make([]int, 0, listpack.Len(h.LP))
	it := newExIter(h.LP)
	for {
		off := it.off
		if _, _, _, ok := it.next(); !ok {
			return offs
		}
		offs = append(offs, off)
	}
}

// exAt calls fn for the triplet at off.
func (h HashView) exAt(off int, fn func(field, value []byte)) {
	it := exIter{b: h.LP, off: off}
	f, v, _, _ := it.next()
	fn(f, v)
}

// RandomDistinct calls fn for count distinct random pairs (count < Len).
func (h HashView) RandomDistinct(count int, fn func(field, value []byte)) {
	if h.Ex {
		eachDistinct(count, listpack.Len(h.LP), h.exOffsets, nil, func(off int) { h.exAt(off, fn) })
		return
	}
	if h.Obj != nil {
		m := &h.Obj.Map
		eachDistinct(count, m.Len(), func() []int { return mapPositions(m) }, m.RandomPos, func(p int) { fn(m.At(p)) })
		return
	}
	it := listpack.NewIter(h.LP)
	eachDistinct(count, listpack.Len(h.LP), func() []int { return pairOffsets(h.LP) }, nil, func(off int) {
		it.Seek(off)
		f, v, _ := it.Next()
		fn(f, v)
	})
}

func (h HashView) object() keyspace.Object {
	if h.Obj == nil {
		return nil
	}
	return h.Obj
}

// HashEdit is a hash being changed: a listpack rebuilt by each change, or the
// large form changed in place. Commit stores it.
type HashEdit struct {
	Edit
	HashView
}

// Begin starts an edit of key, looked up for writing as e (a hash when
// found; a missing key is an empty hash). The caller keeps h on its stack.
func (h *HashEdit) Begin(env *Env, key []byte, e *keyspace.Entry, found bool) {
	*h = HashEdit{}
	h.begin(env, key, e, found)
	if found {
		h.HashView = ViewHash(&h.entry)
	} else {
		h.LP = listpack.Empty
	}
	h.Now = env.Now
}

// convert turns a listpack into the large form.
func (h *HashEdit) convert() {
	if h.Ex {
		h.convertEx()
		return
	}
	o := &HashObject{}
	it := listpack.NewIter(h.LP)
	for f, v, ok := it.Next(); ok; f, v, ok = it.Next() {
		o.Set(f, v)
	}
	h.Obj, h.LP, h.Packed, h.changed = o, nil, false, true
}

// ConvertForArgs makes a listpack that any of args (field-value pairs) would
// make too long an element for a hashtable, and one that more pairs than the
// listpack may hold would make too, as Redis 7.2+'s hashTypeTryConversion
// does before HSET, whatever the command then changes (even pairs naming
// one field): a large HSET then fills the table instead of rebuilding the
// listpack at each field.
func (h *HashEdit) ConvertForArgs(args [][]byte) {
	if h.Large() {
		return
	}
	if int64(len(args)/2) > h.env.Limits.HashMaxListpackEntries() {
		h.convert()
		return
	}
	limit := h.env.Limits.HashMaxListpackValue()
	for _, a := range args {
		if int64(len(a)) > limit {
			h.pack()
			return
		}
	}
}

// pack makes a listpack a packed hashtable (HashView.Packed).
func (h *HashEdit) pack() {
	h.Packed, h.changed = true, true
	if len(h.LP) > packedHashMax {
		h.convert()
	}
}

// Set sets field to value, removing its TTL, converting past the listpack
// limits, and reports whether the field is new.
func (h *HashEdit) Set(field, value []byte) bool {
	return h.set(field, value, false)
}

// SetKeepTTL is Set keeping the field's TTL (HINCRBY, HINCRBYFLOAT).
func (h *HashEdit) SetKeepTTL(field, value []byte) bool {
	return h.set(field, value, true)
}

func (h *HashEdit) set(field, value []byte, keepTTL bool) bool {
	if !h.Large() {
		limit := h.env.Limits.HashMaxListpackValue()
		if int64(len(field)) > limit || int64(len(value)) > limit {
			h.pack()
		}
	}
	if h.Obj != nil {
		if h.Obj.ttl != nil && !keepTTL {
			h.SetExpire(field, 0)
		}
		return h.Obj.Set(field, value)
	}
	var added bool
	if h.Ex {
		added = h.setEx(field, value, keepTTL)
	} else {
		h.LP, added = listpack.Set(h.env.Scratch.Next(), h.LP, field, value)
		h.rebuilt(h.LP)
	}
	if int64(listpack.Len(h.LP)) > h.env.Limits.HashMaxListpackEntries() || h.Packed && len(h.LP) > packedHashMax {
		h.convert()
	}
	return added
}

// Delete deletes fields and returns how many were present.
func (h *HashEdit) Delete(fields [][]byte) int {
	if h.Obj != nil {
		deleted := 0
		for _, f := range fields {
			if h.Obj.Delete(f) {
				deleted++
				if h.Obj.ttl != nil {
					h.SetExpire(f, 0)
				}
			}
		}
		return deleted
	}
	if h.Ex {
		return h.deleteEx(fields)
	}
	var deleted int
	h.LP, deleted = listpack.Delete(h.env.Scratch.Next(), h.LP, fields)
	h.env.Scratch.Keep(h.LP)
	h.changed = h.changed || deleted > 0
	return deleted
}

// Commit stores the hash (an emptied hash is deleted).
func (h *HashEdit) Commit() Commit {
	c := h.writeBack(keyspace.TypeHash, h.Len(), h.object(), keyspace.EncHashtable, h.LP, h.compactEncoding())
	h.ttlAfterCommit(c)
	return c
}
