package values

import (
	"bytes"
	"encoding/binary"

	"github.com/keyhive/keyhive/internal/bytemap"
	"github.com/keyhive/keyhive/internal/listpack"
	"github.com/keyhive/keyhive/keyspace"
)

// Hash field expiration (Redis 7.4). A field's expire time is Unix ms, 0 for
// none. A hash without field TTLs costs nothing more than before: its
// compact form stays a listpack, its large form has a nil ttl.
//
// The compact form with TTLs (OBJECT ENCODING listpackex) is the listpack
// layout with a third item per field, uvarint(expire time), its triplets
// ordered as Redis orders them: fields with a TTL first, soonest first (a
// field set to a time goes before those with the same time), then those
// without. So HGETALL lists them in Redis's order, and the earliest expiry
// is the first triplet's.
//
// The large form keeps the TTLs in a second pointer-free map (field ->
// 8-byte time) beside the fields, with a lower bound of the earliest.

// fieldTTLs is the expire times of a large hash's fields that have one.
type fieldTTLs struct {
	bytemap.Map
	min int64 // at or before the earliest time (exact after expireFields)
}

func (t *fieldTTLs) get(field []byte) int64 {
	if b, ok := t.Get(field); ok {
		return int64(binary.LittleEndian.Uint64(b))
	}
	return 0
}

func (t *fieldTTLs) set(field []byte, at int64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(at))
	t.Set(field, b[:])
	if t.min == 0 || at < t.min {
		t.min = at
	}
}

// with returns t with field's time set to at, or removed when at is 0: nil
// once no time is left.
func (t *fieldTTLs) with(field []byte, at int64) *fieldTTLs {
	if at == 0 {
		if t != nil {
			t.Delete(field)
			if t.Len() == 0 {
				return nil
			}
		}
		return t
	}
	if t == nil {
		t = &fieldTTLs{}
	}
	t.set(field, at)
	return t
}

// each calls fn for every field with its time.
func (t *fieldTTLs) each(fn func(field []byte, at int64)) {
	for p := t.Next(0); p >= 0; p = t.Next(p + 1) {
		f, v := t.At(p)
		fn(f, int64(binary.LittleEndian.Uint64(v)))
	}
}

// takeDue removes the fields whose time is at or before now, calling fn
// for each first, and returns them (copies: the caller deletes them from
// its own map); min becomes the exact earliest time left.
func (t *fieldTTLs) takeDue(now int64, fn func(field []byte)) [][]byte {
	var gone [][]byte
	min := int64(0)
	t.each(func(f []byte, at int64) {
		if at <= now {
			fn(f)
			gone = append(gone, bytes.Clone(f)) // f aliases what the deletes change
		} else if min == 0 || at < min {
			min = at
		}
	})
	for _, f := range gone {
		t.Delete(f)
	}
	t.min = min
	return gone
}

// fieldExpired reports whether a field with expire time at is gone for a
// reader at now, as Redis's hashTypeIsExpired.
func fieldExpired(at, now int64) bool { return at != 0 && at < now }

// exIter walks the triplets of a compact form with TTLs.
type exIter struct {
	b   []byte
	off int
}

func newExIter(b []byte) exIter { return exIter{b: b, off: listpack.First(b)} }

func (it *exIter) next() (field, value []byte, at int64, ok bool) {
	if it.off >= len(it.b) {
		return nil, nil, 0, false
	}
	field = it.str()
	value = it.str()
	u, n := binary.Uvarint(it.b[it.off:])
	it.off += n
	return field, value, int64(u), true
}

func (it *exIter) str() []byte {
	l, n := binary.Uvarint(it.b[it.off:])
	start := it.off + n
	it.off = start + int(l)
	return it.b[start:it.off:it.off]
}

// exFind returns field's triplet in b: its offsets and contents, start -1
// when absent.
func exFind(b, field []byte) (start, end int, value []byte, at int64) {
	it := newExIter(b)
	for {
		s := it.off
		f, v, t, ok := it.next()
		if !ok {
			return -1, 0, nil, 0
		}
		if bytes.Equal(f, field) {
			return s, it.off, v, t
		}
	}
}

func appendTriplet(out, field, value []byte, at int64) []byte {
	out = binary.AppendUvarint(out, uint64(len(field)))
	out = append(out, field...)
	out = binary.AppendUvarint(out, uint64(len(value)))
	out = append(out, value...)
	return binary.AppendUvarint(out, uint64(at))
}

// exPut builds in dst b without the triplet at [skip, skipEnd) (skip -1
// for none) and with field's triplet placed in TTL order.
func exPut(dst, b []byte, skip, skipEnd int, field, value []byte, at int64) []byte {
	n := listpack.Len(b)
	if skip < 0 {
		n++
	}
	out := binary.AppendUvarint(dst[:0], uint64(n))
	it := newExIter(b)
	placed := false
	for {
		s := it.off
		_, _, t, ok := it.next()
		if !ok {
			break
		}
		if s == skip {
			continue
		}
		if !placed && at != 0 && (t == 0 || t >= at) {
			out = appendTriplet(out, field, value, at)
			placed = true
		}
		out = append(out, b[s:it.off]...)
	}
	if !placed {
		out = appendTriplet(out, field, value, at)
	}
	return out
}

// HasTTLs reports whether the hash is in a form that holds field TTLs.
func (h HashView) HasTTLs() bool { return h.Ex || h.Obj != nil && h.Obj.ttl != nil }

// Lookup returns field's value and expire time, expired or not.
func (h HashView) Lookup(field []byte) (value []byte, at int64, ok bool) {
	switch {
	case h.Obj != nil:
		value, ok = h.Obj.Get(field)
		if ok && h.Obj.ttl != nil {
			at = h.Obj.ttl.get(field)
		}
		return value, at, ok
	case h.Ex:
		s, _, v, t := exFind(h.LP, field)
		return v, t, s >= 0
	}
	value, ok = listpack.Get(h.LP, field)
	return value, 0, ok
}

// Expired reports whether a field with expire time at is gone at the view's
// time.
func (h HashView) Expired(at int64) bool { return fieldExpired(at, h.Now) }

// LiveLen is the number of fields not expired at the view's time.
func (h HashView) LiveLen() int {
	n := h.Len()
	if !h.HasTTLs() {
		return n
	}
	h.eachTTL(func(_ []byte, at int64) {
		if h.Expired(at) {
			n--
		}
	})
	return n
}

// eachTTL calls fn for every field that has an expire time.
func (h HashView) eachTTL(fn func(field []byte, at int64)) {
	if h.Obj != nil {
		if h.Obj.ttl != nil {
			h.Obj.ttl.each(fn)
		}
		return
	}
	it := newExIter(h.LP)
	for f, _, at, ok := it.next(); ok && at != 0; f, _, at, ok = it.next() {
		fn(f, at)
	}
}

// MinExpire returns the earliest field expire time, 0 for none: exact for
// the compact form, a lower bound for the large one.
func (h HashView) MinExpire() int64 {
	switch {
	case h.Obj != nil:
		if h.Obj.ttl != nil {
			return h.Obj.ttl.min
		}
	case h.Ex:
		it := newExIter(h.LP)
		_, _, at, _ := it.next()
		return at
	}
	return 0
}

// EachTTL calls fn for every field with its expire time (0 for none), in
// the order Each uses, expired fields included.
func (h HashView) EachTTL(fn func(field, value []byte, at int64)) {
	switch {
	case h.Obj != nil:
		for p := h.Obj.Next(0); p >= 0; p = h.Obj.Next(p + 1) {
			f, v := h.Obj.At(p)
			var at int64
			if h.Obj.ttl != nil {
				at = h.Obj.ttl.get(f)
			}
			fn(f, v, at)
		}
	case h.Ex:
		it := newExIter(h.LP)
		for f, v, at, ok := it.next(); ok; f, v, at, ok = it.next() {
			fn(f, v, at)
		}
	default:
		h.Each(func(f, v []byte) { fn(f, v, 0) })
	}
}

// toEx turns a plain listpack into the compact form with TTLs (none set
// yet), keeping the order, as Redis converts a hash before HEXPIRE.
func (h *HashEdit) toEx() {
	out := binary.AppendUvarint(h.env.Scratch.Next(), uint64(listpack.Len(h.LP)))
	it := listpack.NewIter(h.LP)
	for f, v, ok := it.Next(); ok; f, v, ok = it.Next() {
		out = appendTriplet(out, f, v, 0)
	}
	h.LP, h.Ex = out, true
	h.rebuilt(out)
}

// PrepareTTL makes the hash able to hold field TTLs: a listpack becomes
// listpackex, as Redis converts it on HEXPIRE whatever the outcome.
func (h *HashEdit) PrepareTTL() {
	if h.Obj == nil && !h.Ex {
		h.toEx()
	}
}

// SetExpire gives an existing field the expire time at (0 removes it),
// moving it to its place in the compact form's order.
func (h *HashEdit) SetExpire(field []byte, at int64) {
	if h.Obj != nil {
		h.Obj.ttl = h.Obj.ttl.with(field, at)
		return
	}
	h.PrepareTTL()
	s, e, v, _ := exFind(h.LP, field)
	if s < 0 {
		return
	}
	h.LP = exPut(h.env.Scratch.Next(), h.LP, s, e, field, v, at)
	h.rebuilt(h.LP)
}

// SetLoaded adds a field read from a file or payload with its expire time
// (0 for none) and reports false when the field is there already. With
// inOrder (the fields come in listpackex order) a compact form keeps the
// order they come in; otherwise the field is placed as HEXPIRE places it,
// as Redis loads a hash table's fields.
func (h *HashEdit) SetLoaded(field, value []byte, at int64, inOrder bool) bool {
	if !h.Set(field, value) {
		return false
	}
	switch {
	case at == 0:
	case inOrder && h.Ex:
		s, e, v, _ := exFind(h.LP, field) // the last triplet, just added
		out := append(h.env.Scratch.Next(), h.LP[:s]...)
		out = appendTriplet(out, field, v, at)
		h.LP = append(out, h.LP[e:]...)
		h.rebuilt(h.LP)
	default:
		h.SetExpire(field, at)
	}
	return true
}

// setEx sets field in the compact form with TTLs: a new field goes last
// without a TTL; an existing one keeps its TTL and place with keepTTL,
// else loses its TTL (moving last when it had one).
func (h *HashEdit) setEx(field, value []byte, keepTTL bool) bool {
	s, e, _, at := exFind(h.LP, field)
	if s >= 0 && (keepTTL || at == 0) {
		out := binary.AppendUvarint(h.env.Scratch.Next(), uint64(listpack.Len(h.LP)))
		out = append(out, h.LP[listpack.First(h.LP):s]...)
		out = appendTriplet(out, field, value, at)
		h.LP = append(out, h.LP[e:]...)
	} else {
		h.LP = exPut(h.env.Scratch.Next(), h.LP, s, e, field, value, 0)
	}
	h.rebuilt(h.LP)
	return s < 0
}

// convertEx turns the compact form with TTLs into the large form.
func (h *HashEdit) convertEx() {
	o := &HashObject{}
	it := newExIter(h.LP)
	for f, v, at, ok := it.next(); ok; f, v, at, ok = it.next() {
		o.Set(f, v)
		if at != 0 {
			if o.ttl == nil {
				o.ttl = &fieldTTLs{}
			}
			o.ttl.set(f, at)
		}
	}
	h.Obj, h.LP, h.Ex, h.Packed, h.changed = o, nil, false, false, true
}

// deleteEx deletes fields from the compact form with TTLs.
func (h *HashEdit) deleteEx(fields [][]byte) int {
	out := append(h.env.Scratch.Next(), make([]byte, binary.MaxVarintLen64)...)
	deleted := 0
	it := newExIter(h.LP)
	for {
		s := it.off
		f, _, _, ok := it.next()
		if !ok {
			break
		}
		if contains(fields, f) {
			deleted++
			continue
		}
		out = append(out, h.LP[s:it.off]...)
	}
	if deleted == 0 {
		return 0
	}
	var head [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(head[:], uint64(listpack.Len(h.LP)-deleted))
	start := binary.MaxVarintLen64 - n
	copy(out[start:], head[:n])
	h.LP = out[start:]
	h.rebuilt(out)
	return deleted
}

func contains(list [][]byte, f []byte) bool {
	for _, x := range list {
		if bytes.Equal(x, f) {
			return true
		}
	}
	return false
}

// ExpireFields deletes every field whose expire time is at or before now,
// as Redis's active expiry does, calling fn for each before it goes, and
// returns how many went.
func (h *HashEdit) ExpireFields(now int64, fn func(field []byte)) int {
	if !h.HasTTLs() {
		return 0
	}
	if h.Obj != nil {
		gone := h.Obj.ttl.takeDue(now, fn)
		for _, f := range gone {
			h.Obj.Delete(f)
		}
		if h.Obj.ttl.Len() == 0 {
			h.Obj.ttl = nil
		}
		return len(gone)
	}
	var gone [][]byte
	h.eachTTL(func(f []byte, at int64) {
		if at <= now {
			fn(f)
			gone = append(gone, bytes.Clone(f)) // f aliases what the deletes change
		}
	})
	if len(gone) == 0 {
		return 0
	}
	return h.deleteEx(gone)
}

// ttlAfterCommit records the hash's earliest field expiry with the
// keyspace, for the active cycle and INFO's subexpiry: brought forward when
// it is earlier (see keyspace.LowerSubexpiry), or forgotten with no TTL left.
func (h *HashEdit) ttlAfterCommit(c Commit) {
	if c.Outcome == Deleted || !h.HasTTLs() {
		return
	}
	h.env.DB.LowerSubexpiry(h.key, h.MinExpire())
}

// compactEncoding is the keyspace encoding of the compact form.
func (h *HashEdit) compactEncoding() keyspace.Encoding {
	switch {
	case h.Packed && h.Ex:
		return keyspace.EncHashPackedEx
	case h.Packed:
		return keyspace.EncHashPacked
	case h.Ex:
		return keyspace.EncListpackEx
	}
	return keyspace.EncListpack
}
