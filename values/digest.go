package values

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"github.com/keyhive/keyhive/internal/array"
	"strconv"

	"github.com/keyhive/keyhive/internal/jsondoc"
	"github.com/keyhive/keyhive/internal/stream"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/resp"
)

// Digest is DEBUG DIGEST's signature of a data set or a value, computed as
// redis-server 7.0 computes it, so the same data gives the same digest on
// both. Two ways of folding data in:
//
//   - add xors in SHA1(data): order does not matter (set members, hash
//     fields, keys, each of which gets a digest of its own first);
//   - mix adds, then replaces the digest with SHA1(digest): order matters
//     (list elements, a stream's entries, the parts of one element).
//
// An empty data set's digest is all zeros.
type Digest [sha1.Size]byte

func (d *Digest) add(data []byte) {
	h := sha1.Sum(data)
	for i := range d {
		d[i] ^= h[i]
	}
}

func (d *Digest) mix(data []byte) {
	d.add(data)
	*d = sha1.Sum(d[:])
}

// mixType mixes a value type as Redis numbers it, a 32-bit big-endian word.
func (d *Digest) mixType(t keyspace.Type) {
	d.mix(binary.BigEndian.AppendUint32(nil, uint32(t)))
}

// Hex is the digest as DEBUG DIGEST replies it.
func (d *Digest) Hex() string { return hex.EncodeToString(d[:]) }

// DatasetDigest is the digest of every key of every database, expired or
// not yet removed (Redis walks its dictionaries). The caller holds the
// exclusive lock.
func DatasetDigest(ks *keyspace.Keyspace) Digest {
	var final Digest
	for i := range ks.Len() {
		db := ks.DB(i)
		if db.Len() == 0 {
			continue
		}
		// The database number goes in first, so the same keys in another
		// database give another digest.
		final.mix(binary.BigEndian.AppendUint32(nil, uint32(i)))
		for shard := range keyspace.Shards {
			db.EachEntry(shard, func(e *keyspace.Entry) {
				var kv Digest
				kv.mix(e.Key())
				kv.addValue(e)
				final.add(kv[:])
			})
		}
	}
	return final
}

// ValueDigest is DEBUG DIGEST-VALUE's digest of one key's value (the key's
// name is not in it).
func ValueDigest(e *keyspace.Entry) Digest {
	var d Digest
	d.addValue(e)
	return d
}

// addValue folds in e's type, its contents and whether it has a TTL (not
// the TTL itself).
func (d *Digest) addValue(e *keyspace.Entry) {
	d.mixType(e.Type())
	var ele Digest // one element's parts, mixed in order, then added
	element := func(parts ...[]byte) {
		ele = Digest{}
		for _, p := range parts {
			ele.mix(p)
		}
		d.add(ele[:])
	}
	switch e.Type() {
	case keyspace.TypeString:
		d.mix(e.Value())
	case keyspace.TypeList:
		ViewList(e).Each(0, false, func(v []byte) bool {
			d.mix(v)
			return true
		})
	case keyspace.TypeSet:
		ViewSet(e).Each(func(m []byte) { d.add(m) })
	case keyspace.TypeZSet:
		z := ViewZSet(e)
		var buf [32]byte
		z.Each(0, z.Len(), false, func(m []byte, score float64) {
			element(m, resp.AppendDouble(buf[:0], score)) // "%.17g"
		})
	case keyspace.TypeHash:
		ViewHash(e).Each(func(f, v []byte) { element(f, v) })
	case keyspace.TypeJSON:
		d.mix(jsondoc.AppendJSON(nil, e.Value(), 0, nil))
	case keyspace.TypeStream:
		var id []byte
		EntryStream(e).Range(stream.ID{}, stream.MaxID, false, func(entry stream.ID, pairs [][]byte) bool {
			id = strconv.AppendUint(append(strconv.AppendUint(id[:0], entry.Ms, 10), '.'), entry.Seq, 10)
			d.mix(id)
			for _, p := range pairs {
				d.mix(p)
			}
			return true
		})
		// Idempotent production's state (Redis 8.6), which a replica and a
		// loaded file hold too: the configuration and every tracked iid
		// (not the counters, statistics of the master, nor the times).
		if st := EntryStream(e); st.HasIDMP() {
			duration, maxSize, _, _ := st.IDMPSettings()
			d.mix(strconv.AppendInt(id[:0], duration, 10))
			d.mix(strconv.AppendInt(id[:0], maxSize, 10))
			st.EachIDMP(func(pid, iid []byte, entry stream.ID, _ int64) {
				d.mix(pid)
				d.mix(iid)
				d.mix(entry.Append(id[:0]))
			})
		}
	case keyspace.TypeArray:
		// The insert cursor, then each element's index and value in
		// index order.
		a := EntryArray(e)
		var buf [20]byte
		d.mix(strconv.AppendUint(buf[:0], a.Next(), 10))
		a.Range(0, array.MaxIndex, func(i uint64, v []byte) bool {
			element(strconv.AppendUint(buf[:0], i, 10), v)
			return true
		})
	case keyspace.TypeVectorSet:
		// Each element's name, attributes and stored vector, in any order.
		s := EntryVSet(e)
		for _, id := range s.Live() {
			raw, _, _ := s.Raw(id)
			element(s.Name(id), s.Attr(id), raw)
		}
	default:
		if IsProb(e.Type()) {
			d.mix(e.Value()) // the structure's bytes, equal on a replica
		}
	}
	if e.ExpireAt() != 0 {
		d.add([]byte("!!expire!!"))
	}
}
