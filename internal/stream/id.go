// Package stream stores Redis streams compactly: entries are packed into
// byte nodes of at most stream-node-max-entries entries, each delta-encoded
// against its node's master ID and field names (as Redis's listpack nodes),
// indexed by a sorted pointer-free slice of node master IDs. Consumer groups
// keep their pending entries in sorted pointer-free slices. The package has
// iterators over entries, groups, pending entries and consumers, enough to
// write Redis's RDB stream format.
package stream

import (
	"math"
	"strconv"

	"github.com/keyhive/keyhive/internal/strnum"
)

// ID is a stream entry ID: milliseconds and sequence number.
type ID struct{ Ms, Seq uint64 }

// MaxID is the largest ID ("+").
var MaxID = ID{math.MaxUint64, math.MaxUint64}

// Compare returns -1, 0 or 1 as a is below, equal to or above b.
func (a ID) Compare(b ID) int {
	switch {
	case a.Ms < b.Ms:
		return -1
	case a.Ms > b.Ms:
		return 1
	case a.Seq < b.Seq:
		return -1
	case a.Seq > b.Seq:
		return 1
	}
	return 0
}

// Less reports whether a is below b.
func (a ID) Less(b ID) bool { return a.Compare(b) < 0 }

// IsZero reports whether id is 0-0.
func (id ID) IsZero() bool { return id == ID{} }

// Next returns the ID after id; false when id is MaxID.
func (id ID) Next() (ID, bool) {
	switch {
	case id.Seq < math.MaxUint64:
		return ID{id.Ms, id.Seq + 1}, true
	case id.Ms < math.MaxUint64:
		return ID{id.Ms + 1, 0}, true
	}
	return id, false
}

// Prev returns the ID before id; false when id is 0-0.
func (id ID) Prev() (ID, bool) {
	switch {
	case id.Seq > 0:
		return ID{id.Ms, id.Seq - 1}, true
	case id.Ms > 0:
		return ID{id.Ms - 1, math.MaxUint64}, true
	}
	return id, false
}

// Append appends id as "ms-seq".
func (id ID) Append(dst []byte) []byte {
	dst = strconv.AppendUint(dst, id.Ms, 10)
	dst = append(dst, '-')
	return strconv.AppendUint(dst, id.Seq, 10)
}

// String returns id as "ms-seq".
func (id ID) String() string { return string(id.Append(nil)) }

// ParseID parses a stream ID argument as Redis does: "ms-seq", "ms" (the
// sequence is missingSeq), "-" and "+" unless strict, and "ms-*" when
// autoSeq (seqGiven is then false). Like Redis it reads the argument as a C
// string (up to a NUL byte) and numbers as string2ull does.
func ParseID(arg []byte, missingSeq uint64, strict, autoSeq bool) (id ID, seqGiven bool, ok bool) {
	if len(arg) > 127 {
		return ID{}, false, false
	}
	for i, c := range arg {
		if c == 0 {
			arg = arg[:i]
			break
		}
	}
	if len(arg) == 1 && (arg[0] == '-' || arg[0] == '+') {
		if strict {
			return ID{}, false, false
		}
		if arg[0] == '-' {
			return ID{}, true, true
		}
		return MaxID, true, true
	}
	msPart, seqPart, dash := arg, []byte(nil), false
	for i, c := range arg {
		if c == '-' {
			msPart, seqPart, dash = arg[:i], arg[i+1:], true
			break
		}
	}
	ms, ok := strnum.ParseULL(msPart)
	if !ok {
		return ID{}, false, false
	}
	if !dash {
		return ID{ms, missingSeq}, true, true
	}
	if autoSeq && len(seqPart) == 1 && seqPart[0] == '*' {
		return ID{ms, 0}, false, true
	}
	seq, ok := strnum.ParseULL(seqPart)
	if !ok {
		return ID{}, false, false
	}
	return ID{ms, seq}, true, true
}
