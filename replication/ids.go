package replication

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// IDLen is the length of a replication ID.
const IDLen = 40

// NoID is the second ID of a history with no predecessor.
var NoID = strings.Repeat("0", IDLen)

// NewID returns a fresh random replication ID.
func NewID() string {
	var b [IDLen / 2]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// IDs name a data set's history: ID from its start (or the last promotion)
// and ID2, the history it continues, valid up to offset Second (-1: none).
type IDs struct {
	ID, ID2 string
	Second  int64
}

// FreshIDs is a new history with no predecessor.
func FreshIDs() IDs { return IDs{ID: NewID(), ID2: NoID, Second: -1} }

// Promote starts a new history at offset (the stream's length): the old ID
// stays valid as ID2 up to offset, as Redis's shiftReplicationId does (its
// second_repl_offset is offset+1, the next byte's).
func (ids IDs) Promote(offset int64) IDs {
	return IDs{ID: NewID(), ID2: ids.ID, Second: offset + 1}
}

// CanContinue reports whether a replica asking for history id from offset
// (the next byte it needs, as PSYNC sends it) can continue it: id is this
// history, or the one it continues and offset is not past the fork.
func (ids IDs) CanContinue(id string, offset int64) bool {
	switch {
	case id == ids.ID:
		return true
	case id == ids.ID2 && ids.Second >= 0:
		return offset <= ids.Second
	}
	return false
}
