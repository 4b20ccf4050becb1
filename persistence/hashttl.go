package persistence

import (
	"encoding/binary"
	"strconv"
)

// Hashes with field expire times (Redis 7.4, RDB version 12).
const (
	TypeHashMetadataPreGA   = 22 // [ttl field value]... with absolute times (7.4's release candidates)
	TypeHashListpackExPreGA = 23 // listpack of field, value, time triplets
	TypeHashMetadata        = 24 // min time, then [ttl field value]... with times relative to it
	TypeHashListpackEx      = 25 // min time, then the listpack of triplets
)

// maxFieldTime is the latest field expire time Redis stores (48 bits).
const maxFieldTime = 1<<48 - 1

// hashWithTTLs reads a hash of one of the field-TTL types into v: fields and
// values alternate in Elems, FieldTTLs has each field's time (0 for none).
func (d *decoder) hashWithTTLs(t byte, v *Value) {
	var min uint64
	if t == TypeHashMetadata || t == TypeHashListpackEx {
		min = binary.LittleEndian.Uint64(d.take(8))
		if t == TypeHashMetadata && min > maxFieldTime+1 {
			d.fail("invalid hash minimum expire time")
		}
	}
	v.Type = TypeHash
	if t == TypeHashListpackEx || t == TypeHashListpackExPreGA {
		v.TTLOrdered = true
		i := 0
		err := ListpackEntries(d.str(), func(e []byte) error {
			if i%3 < 2 {
				v.Elems = append(v.Elems, append([]byte(nil), e...))
			} else {
				at, err := strconv.ParseInt(string(e), 10, 64)
				if err != nil || at < 0 || at > maxFieldTime {
					d.fail("invalid hash field expire time")
				}
				v.FieldTTLs = append(v.FieldTTLs, at)
			}
			i++
			return nil
		})
		if err != nil {
			d.fail(err.Error())
		}
		if i%3 != 0 {
			d.fail("incomplete hash field triplet")
		}
		return
	}
	n := d.count()
	for range n {
		ttl, enc := d.length()
		if enc {
			d.fail("invalid hash field expire time")
		}
		at := ttl
		if t == TypeHashMetadata && ttl != 0 {
			at = ttl + min - 1
		}
		if at > maxFieldTime {
			d.fail("invalid hash field expire time")
		}
		v.Elems = append(v.Elems, d.str(), d.str())
		v.FieldTTLs = append(v.FieldTTLs, int64(at))
	}
}

// AppendHashMetadata appends a large hash with field expire times as
// TypeHashMetadata after its type byte: the earliest time, the count, and
// per field its time (relative to the earliest, plus one; 0 for none),
// field and value. each calls fn for every field.
func (e *Encoder) AppendHashMetadata(b []byte, n int, min int64, each func(fn func(field, value []byte, at int64))) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(min))
	b = AppendLen(b, uint64(n))
	each(func(f, v []byte, at int64) {
		var ttl uint64
		if at != 0 {
			ttl = uint64(at-min) + 1
		}
		b = AppendLen(b, ttl)
		b = e.AppendString(b, f)
		b = e.AppendString(b, v)
	})
	return b
}

// AppendHashListpackEx appends a small hash with field expire times as
// TypeHashListpackEx after its type byte: the earliest time and a listpack
// of field, value, time triplets (in Redis's order: soonest first, those
// without a time last).
func (e *Encoder) AppendHashListpackEx(b []byte, min int64, each func(fn func(field, value []byte, at int64))) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(min))
	lp := &e.Listpack
	lp.Reset()
	each(func(f, v []byte, at int64) {
		lp.Append(f)
		lp.Append(v)
		lp.AppendInt(at)
	})
	return e.AppendBlob(b, lp.Bytes())
}
