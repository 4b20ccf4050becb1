package vset

import (
	"encoding/binary"
	"errors"
	"math"
)

// A set's file form (Keyhive's own; RDB and DUMP carry it as one module
// value field, persistence/module.go): the graph as it is, so loading
// rebuilds nothing and a loaded set answers as the saved one did.
//
//	version u8, quant u8, dim u32, m u32, projection input u32,
//	generator u64, nodes ever added u64, node ids u32, nodes u32,
//	entry u32, top i32
//	per node: its id u32, name and attributes (u32 length and bytes
//	each), norm f32, Q8 range f32, the stored vector, level u8, per
//	level from 0: link count u32 and the links (node ids, u32)
//	the free ids: count u32, ids u32
//
// Node ids, the order of the nodes and of the free ids are kept, so that
// a loaded set breaks ties between equal distances as the saved one did
// and goes on exactly as it would have. The projection matrix is not
// stored: it is a function of its sizes.

const fileVersion = 1

// ErrCorrupt is file data that is not a valid set.
var ErrCorrupt = errors.New("vector set data is corrupt")

// AppendFile appends s's file form to b.
func (s *Set) AppendFile(b []byte) []byte {
	b = append(b, fileVersion, byte(s.quant))
	b = binary.LittleEndian.AppendUint32(b, uint32(s.dim))
	b = binary.LittleEndian.AppendUint32(b, uint32(s.m))
	b = binary.LittleEndian.AppendUint32(b, uint32(s.projIn))
	b = binary.LittleEndian.AppendUint64(b, s.rng)
	b = binary.LittleEndian.AppendUint64(b, s.lastID)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s.levels)))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s.live)))
	b = binary.LittleEndian.AppendUint32(b, s.entry)
	b = binary.LittleEndian.AppendUint32(b, uint32(int32(s.top)))
	for _, id := range s.live {
		b = binary.LittleEndian.AppendUint32(b, id)
		b = appendBytes(b, s.Name(id))
		b = appendBytes(b, s.Attr(id))
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(s.norms[id]))
		var r float32
		if s.quant == Q8 {
			r = s.ranges[id]
		}
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(r))
		b = s.appendVector(b, id)
		b = append(b, byte(s.levels[id]))
		for l := 0; l <= int(s.levels[id]); l++ {
			ls := links(s.linksAt(id, l))
			b = binary.LittleEndian.AppendUint32(b, uint32(len(ls)))
			for _, n := range ls {
				b = binary.LittleEndian.AppendUint32(b, n)
			}
		}
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s.freeIDs)))
	for _, id := range s.freeIDs {
		b = binary.LittleEndian.AppendUint32(b, id)
	}
	return b
}

func appendBytes(b, v []byte) []byte {
	return append(binary.LittleEndian.AppendUint32(b, uint32(len(v))), v...)
}

func (s *Set) appendVector(b []byte, id uint32) []byte {
	switch q := s.vecOf(id); s.quant {
	case NoQuant:
		for _, x := range q.f {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
	case Bin:
		for _, w := range q.b {
			b = binary.LittleEndian.AppendUint64(b, w)
		}
	default:
		for _, x := range q.q {
			b = append(b, byte(x))
		}
	}
	return b
}

// reader reads a file form, remembering the first failure.
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) take(n int) []byte {
	if r.bad || n < 0 || n > len(r.b) {
		r.bad = true
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) u8() byte {
	if v := r.take(1); v != nil {
		return v[0]
	}
	return 0
}

func (r *reader) u32() uint32 {
	if v := r.take(4); v != nil {
		return binary.LittleEndian.Uint32(v)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if v := r.take(8); v != nil {
		return binary.LittleEndian.Uint64(v)
	}
	return 0
}

// ReadFile rebuilds a set from its file form, checking all of it: sizes
// in bounds, names distinct, every link to a node of the set and the
// level it is on.
func ReadFile(data []byte) (*Set, error) {
	r := &reader{b: data}
	if r.u8() != fileVersion {
		return nil, ErrCorrupt
	}
	quant := Quant(r.u8())
	dim, m, projIn := int(r.u32()), int(r.u32()), int(r.u32())
	if r.bad || quant > Bin || dim < 1 || dim > MaxDim || m < MinM || m > MaxM ||
		projIn != 0 && (projIn < dim || projIn > MaxDim || projIn*dim > MaxProjection) {
		return nil, ErrCorrupt
	}
	s := New(dim, quant, m, projIn)
	s.rng, s.lastID = r.u64(), r.u64()
	slots, n, entry, top := int(r.u32()), int(r.u32()), r.u32(), int(int32(r.u32()))
	vecBytes := dim
	switch quant {
	case NoQuant:
		vecBytes = 4 * dim
	case Bin:
		vecBytes = 8 * s.words
	}
	// Every node takes at least this much of the data: a bound on n
	// before anything is allocated for it.
	if r.bad || n < 0 || n > len(r.b)/(4+8+8+vecBytes+1+4) || n == 0 != (top < 0) || top > maxLevels ||
		slots < n || slots-n > len(r.b)/4 || n > 0 && entry >= uint32(slots) {
		return nil, ErrCorrupt
	}
	for range slots {
		s.newSlot()
	}
	type pending struct{ at, level int }
	var linkData []pending // where each node's links are, checked once all are known
	for range n {
		id := r.u32()
		name, attr := r.take(int(r.u32())), r.take(int(r.u32()))
		norm, rng := math.Float32frombits(r.u32()), math.Float32frombits(r.u32())
		vec := r.take(vecBytes)
		level := int(r.u8())
		if r.bad || level > maxLevels || level > top || id >= uint32(slots) || s.levels[id] >= 0 {
			return nil, ErrCorrupt
		}
		if _, dup := s.Find(name); dup {
			return nil, ErrCorrupt
		}
		s.placeNode(id, level)
		s.norms[id] = norm
		switch quant {
		case NoQuant:
			for i := range dim {
				s.f32[int(id)*dim+i] = math.Float32frombits(binary.LittleEndian.Uint32(vec[4*i:]))
			}
		case Bin:
			for i := range s.words {
				s.bin[int(id)*s.words+i] = binary.LittleEndian.Uint64(vec[8*i:])
			}
		default:
			for i := range dim {
				s.q8[int(id)*dim+i] = int8(vec[i])
			}
			s.ranges[id] = rng
		}
		s.nameAt[id], s.nameLen[id] = uint32(len(s.names)), uint32(len(name))
		s.names = append(s.names, name...)
		s.livePos[id] = uint32(len(s.live))
		s.live = append(s.live, id)
		s.index(id)
		s.SetAttr(id, attr)
		for l := 0; l <= level; l++ {
			k := int(r.u32())
			links := r.take(4 * k)
			if r.bad || k > s.maxLinks(l) {
				return nil, ErrCorrupt
			}
			rec := s.linksAt(id, l)
			rec[0] = uint32(k)
			for i := range k {
				rec[1+i] = binary.LittleEndian.Uint32(links[4*i:])
			}
			linkData = append(linkData, pending{int(id), l})
		}
	}
	free := int(r.u32())
	if r.bad || free != slots-n {
		return nil, ErrCorrupt
	}
	for range free {
		id := r.u32()
		if r.bad || id >= uint32(slots) || s.levels[id] != -1 {
			return nil, ErrCorrupt
		}
		s.levels[id] = -2 // listed: a second listing is caught
		s.freeIDs = append(s.freeIDs, id)
	}
	for _, id := range s.freeIDs {
		s.levels[id] = -1
	}
	if len(r.b) != 0 {
		return nil, ErrCorrupt
	}
	for _, p := range linkData {
		for _, t := range links(s.linksAt(uint32(p.at), p.level)) {
			if t >= uint32(slots) || int(s.levels[t]) < p.level || t == uint32(p.at) {
				return nil, ErrCorrupt
			}
			s.inDegree[t]++
		}
	}
	if n > 0 {
		if int(s.levels[entry]) != top {
			return nil, ErrCorrupt
		}
		s.entry, s.top = entry, top
	}
	return s, nil
}
