package cluster

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"math/bits"
	"strconv"
	"strings"
)

// Node flags, as the bus carries them.
const (
	FlagMaster     = 1
	FlagReplica    = 2
	FlagPFail      = 4
	FlagFail       = 8
	FlagMyself     = 16
	FlagHandshake  = 32
	FlagNoAddr     = 64
	FlagMeet       = 128
	FlagNoFailover = 512
)

// flagNames are the flags' names in CLUSTER NODES and nodes.conf, in their order.
var flagNames = []struct {
	flag uint16
	name string
}{
	{FlagMyself, "myself"}, {FlagMaster, "master"}, {FlagReplica, "slave"}, {FlagPFail, "fail?"},
	{FlagFail, "fail"}, {FlagHandshake, "handshake"}, {FlagNoAddr, "noaddr"}, {FlagNoFailover, "nofailover"},
}

// Node is one node of the table.
type Node struct {
	Name        string
	ShardID     string
	IP          string
	Port        int
	PPort       int
	CPort       int
	Hostname    string
	Flags       uint16
	Master      *Node
	ConfigEpoch uint64
	Slots       Slots
	NumSlots    int

	created      int64 // ms
	pingSent     int64 // ms, 0: no ping pending
	pongReceived int64
	dataReceived int64
	failTime     int64
	link         *link // outbound
	inbound      *link
	connecting   bool
	route        uint16          // the node's index in the last Routes
	failReports  map[*Node]int64 // reporting master -> when
	replOffset   uint64          // the replication offset of its last message
	votedTime    int64           // ms: when this node voted for a replica of it (a master)
}

func (n *Node) isMaster() bool  { return n.Flags&FlagMaster != 0 }
func (n *Node) isReplica() bool { return n.Flags&FlagReplica != 0 }
func (n *Node) timedOut() bool  { return n.Flags&FlagPFail != 0 }
func (n *Node) failed() bool    { return n.Flags&FlagFail != 0 }

// randomName is a fresh node (or shard) name: 40 random hex characters.
func randomName() string {
	var b [NameLen / 2]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ValidName reports whether name has the form of a node's name.
func ValidName(name string) bool {
	if len(name) != NameLen {
		return false
	}
	for _, c := range []byte(name) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// flagString writes n's flags as CLUSTER NODES does.
func flagString(flags uint16) string {
	var parts []string
	for _, f := range flagNames {
		if flags&f.flag != 0 {
			parts = append(parts, f.name)
		}
	}
	if len(parts) == 0 {
		return "noflags"
	}
	return strings.Join(parts, ",")
}

// parseFlags reads a flags field of nodes.conf.
func parseFlags(s string) uint16 {
	var flags uint16
	for _, p := range strings.Split(s, ",") {
		for _, f := range flagNames {
			if p == f.name {
				flags |= f.flag
			}
		}
	}
	return flags
}

// slotRanges appends the ranges of set slots as " a-b" or " a".
func slotRanges(b []byte, s *Slots) []byte {
	for _, r := range s.Ranges() {
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(r[0]), 10)
		if r[1] > r[0] {
			b = append(b, '-')
			b = strconv.AppendInt(b, int64(r[1]), 10)
		}
	}
	return b
}

// Ranges returns the ranges of set slots as start, end pairs.
func (s *Slots) Ranges() [][2]int {
	var out [][2]int
	for first := s.next(0, true); first < SlotCount; {
		end := s.next(first, false)
		out = append(out, [2]int{first, end - 1})
		first = s.next(end, true)
	}
	return out
}

// next is the first slot from from on that is set (set) or clear (!set),
// or SlotCount: a word of 64 slots at a time.
func (s *Slots) next(from int, set bool) int {
	for w := from / 64; w < SlotCount/64; w++ {
		word := binary.LittleEndian.Uint64(s[w*8:])
		if !set {
			word = ^word
		}
		if w == from/64 {
			word &= ^uint64(0) << (from % 64)
		}
		if word != 0 {
			return w*64 + bits.TrailingZeros64(word)
		}
	}
	return SlotCount
}
