package keyspace

import (
	"bytes"
	"encoding/binary"
)

// SlotCount is the number of Redis Cluster hash slots.
const SlotCount = 16384

// crc16Tables[0] is the byte-at-a-time table of CRC16-CCITT (XMODEM:
// polynomial 0x1021, initial value 0), as Redis Cluster uses. crc16Tables[k]
// advances a byte followed by k zero bytes, so four bytes are folded in with
// four independent lookups (slicing-by-4) instead of a chain of four.
var crc16Tables [4][256]uint16

func init() {
	t := &crc16Tables
	for i := range t[0] {
		crc := uint16(i) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
		t[0][i] = crc
	}
	for k := 1; k < 4; k++ {
		for i := range t[k] {
			prev := t[k-1][i]
			t[k][i] = prev<<8 ^ t[0][prev>>8]
		}
	}
}

func crc16(b []byte) uint16 {
	t := &crc16Tables
	var crc uint16
	for len(b) >= 4 {
		w := binary.BigEndian.Uint32(b) // one bounds check for the four bytes
		crc = t[3][byte(crc>>8)^byte(w>>24)] ^ t[2][byte(crc)^byte(w>>16)] ^ t[1][byte(w>>8)] ^ t[0][byte(w)]
		b = b[4:]
	}
	for _, c := range b {
		crc = crc<<8 ^ t[0][byte(crc>>8)^c]
	}
	return crc
}

// Slot returns the cluster hash slot of key. Only the part between the first
// '{' and the next '}' is hashed when it is non-empty, so "{user1}.a" and
// "{user1}.b" share a slot.
func Slot(key []byte) int {
	if i := bytes.IndexByte(key, '{'); i >= 0 {
		if j := bytes.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(crc16(key)) & (SlotCount - 1)
}

// PatternSlot is the slot of every key a glob pattern can match, or -1
// when they may be in several: a non-empty {hash tag} must close before
// any wildcard, character class or escape.
func PatternSlot(pattern []byte) int {
	open := -1
	for i, c := range pattern {
		switch {
		case c == '*' || c == '?' || c == '[' || c == '\\':
			return -1
		case open < 0 && c == '{':
			open = i
		case open >= 0 && c == '}':
			if i == open+1 {
				return -1
			}
			return int(crc16(pattern[open+1:i])) & (SlotCount - 1)
		}
	}
	return -1
}

// A slot's keys all live in one shard (shard = slot % Shards), so the
// per-slot operations of a cluster node walk that shard only: 1/1024 of
// the database.

// CountInSlot returns the number of keys of slot, expired ones not yet
// removed included (as Redis counts them).
func (db *DB) CountInSlot(slot int) int {
	n := 0
	db.eachInSlot(slot, func(key []byte) bool { n++; return true })
	return n
}

// KeysInSlot calls fn with up to limit keys of slot; the key bytes are
// valid only during the call.
func (db *DB) KeysInSlot(slot, limit int, fn func(key []byte)) {
	n := 0
	db.eachInSlot(slot, func(key []byte) bool {
		if n >= limit {
			return false
		}
		n++
		fn(key)
		return true
	})
}

// eachInSlot calls fn with the keys of slot under its shard's lock until
// fn returns false.
func (db *DB) eachInSlot(slot int, fn func(key []byte) bool) {
	db.withShard(slot%Shards, func(sh *shard) {
		for j := 0; j < len(sh.slots); j++ {
			if sh.slots[j] == 0 {
				continue
			}
			key := entryAt(sh, j).h.key
			if Slot(key) == slot && !fn(key) {
				return
			}
		}
	})
}
