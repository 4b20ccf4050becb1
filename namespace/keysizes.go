package namespace

import (
	"math/bits"
	"strconv"
	"sync/atomic"

	"github.com/keyhive/keyhive/keyspace"
)

// keySizes is one database's INFO keysizes histograms (Redis 8.0): per
// type, how many keys have a length in each power-of-two bucket. Bucket 0
// holds length 0, bucket i > 0 lengths [2^(i-1), 2^i). The keyspace
// reports every change of a key's length (Table.Changed), so the counts
// are kept as keys change, never by a scan.
type keySizes [len(keySizeTypes)][65]atomic.Int64

// keySizeTypes are the types INFO keysizes shows, in its order, with the
// name of each one's line.
var keySizeTypes = [...]struct {
	t    keyspace.Type
	name string
}{
	{keyspace.TypeString, "distrib_strings_sizes"},
	{keyspace.TypeList, "distrib_lists_items"},
	{keyspace.TypeSet, "distrib_sets_items"},
	{keyspace.TypeZSet, "distrib_zsets_items"},
	{keyspace.TypeHash, "distrib_hashes_items"},
}

// histogram returns the histogram of t, nil for a type not shown. The
// types shown are numbered 0 to 4.
func (k *keySizes) histogram(t keyspace.Type) *[65]atomic.Int64 {
	if t > keyspace.TypeHash {
		return nil
	}
	return &k[t]
}

// move counts a key's change from was to is (either may be NoKey).
func (k *keySizes) move(was, is keyspace.KeySize) {
	from, to := bucket(was.Len), bucket(is.Len)
	if was.Type == is.Type && from == to && (was.Len < 0) == (is.Len < 0) {
		return
	}
	if h := k.histogram(was.Type); h != nil && was.Len >= 0 {
		h[from].Add(-1)
	}
	if h := k.histogram(is.Type); h != nil && is.Len >= 0 {
		h[to].Add(1)
	}
}

func bucket(n int64) int {
	if n <= 0 {
		return 0
	}
	return bits.Len64(uint64(n))
}

// appendInfo appends database db's lines, one per type holding keys.
func (k *keySizes) appendInfo(b []byte, db int) []byte {
	for i := range keySizeTypes {
		h := &k[keySizeTypes[i].t]
		first := true
		for j := range h {
			n := h[j].Load()
			if n == 0 {
				continue
			}
			if first {
				b = append(b, "db"...)
				b = strconv.AppendInt(b, int64(db), 10)
				b = append(b, '_')
				b = append(b, keySizeTypes[i].name...)
				b = append(b, ':')
				first = false
			} else {
				b = append(b, ',')
			}
			b = appendBucket(b, j)
			b = append(b, '=')
			b = strconv.AppendInt(b, n, 10)
		}
		if !first {
			b = append(b, "\r\n"...)
		}
	}
	return b
}

// appendBucket writes bucket i's lower bound in binary units (1K = 1024).
func appendBucket(b []byte, i int) []byte {
	if i == 0 {
		return append(b, '0')
	}
	shift := i - 1
	unit := shift / 10
	b = strconv.AppendUint(b, 1<<(shift-unit*10), 10)
	if unit > 0 {
		b = append(b, " KMGTPE"[unit])
	}
	return b
}

// AppendKeySizes appends INFO keysizes' lines for database db.
func (t *Table) AppendKeySizes(b []byte, db int) []byte {
	return t.rows[db].Load().sizes.appendInfo(b, db)
}
