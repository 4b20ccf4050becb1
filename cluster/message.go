package cluster

import (
	"bytes"
	"encoding/binary"
	"errors"
)

// SlotCount is the number of hash slots.
const SlotCount = 16384

// NameLen is the length of a node's name: 40 hex characters.
const NameLen = 40

// Message types of the bus.
const (
	TypePing         = 0
	TypePong         = 1
	TypeMeet         = 2
	TypeFail         = 3
	TypePublish      = 4
	TypeAuthRequest  = 5
	TypeAuthAck      = 6
	TypeUpdate       = 7
	TypeMFStart      = 8
	TypePublishShard = 10
	typeCount        = 11
)

// The layout of a message (see the package doc).
const (
	headerLen  = 2256
	gossipLen  = 104
	ipLen      = 46
	slotBytes  = SlotCount / 8
	updateLen  = 8 + NameLen + slotBytes
	extHdrLen  = 8
	maxMessage = 1 << 30 // a PUBLISH's channel and message, at most proto-max-bulk-len each in practice
)

// msgFlagExtData, in the first byte of the header's message flags, says
// ping extensions follow the gossip.
const msgFlagExtData = 1 << 2

// Ping extension types.
const (
	extHostname = 0
	extShardID  = 3 // sent by Redis 7.2 and later; read, never sent (7.0 knows none but the hostname)
)

// Slots is a bitmap of hash slots, as the bus carries it.
type Slots [slotBytes]byte

// Has reports whether slot is set.
func (s *Slots) Has(slot int) bool { return s[slot>>3]&(1<<(slot&7)) != 0 }

// Set sets slot.
func (s *Slots) Set(slot int) { s[slot>>3] |= 1 << (slot & 7) }

// Clear clears slot.
func (s *Slots) Clear(slot int) { s[slot>>3] &^= 1 << (slot & 7) }

// Header is a message's fixed part.
type Header struct {
	Type         uint16
	Port         uint16
	CurrentEpoch uint64
	ConfigEpoch  uint64
	Offset       uint64
	Sender       string // NameLen bytes
	Slots        Slots
	MasterOf     string // the sender's master, "" for a master
	IP           string // "" when the sender announces none
	PPort        uint16
	CPort        uint16
	Flags        uint16
	State        byte
	MFlags       [3]byte
}

// Gossip is what a PING, PONG or MEET says about another node.
type Gossip struct {
	Name         string
	PingSent     uint32 // seconds
	PongReceived uint32 // seconds
	IP           string
	Port         uint16
	CPort        uint16
	Flags        uint16
	PPort        uint16
}

// Message is a parsed bus message. Which fields beyond Header are set
// depends on the type.
type Message struct {
	Header
	Gossip      []Gossip
	Hostname    string // announced by a PING, PONG or MEET; "" when it carries none
	ShardID     string
	FailedNode  string // FAIL
	Channel     []byte // PUBLISH, PUBLISHSHARD
	Payload     []byte
	UpdateEpoch uint64 // UPDATE
	UpdateNode  string
	UpdateSlots *Slots
}

var (
	errShort     = errors.New("message shorter than its header")
	errSignature = errors.New("bad signature")
	errLength    = errors.New("length does not match the message type")
	errVersion   = errors.New("unsupported protocol version")
	errPadding   = errors.New("ping extension without proper padding")
	errMalformed = errors.New("malformed node name, address or hostname")
)

// frameLength reads the total length from a message's first 8 bytes, and
// checks the signature: a link sending anything else is dropped.
func frameLength(first8 []byte) (int, error) {
	if string(first8[:4]) != "RCmb" {
		return 0, errSignature
	}
	n := binary.BigEndian.Uint32(first8[4:8])
	if n < headerLen || n > maxMessage {
		return 0, errLength
	}
	return int(n), nil
}

// Parse decodes one whole message, checking its length against its type as
// Redis does. Byte slices in the result alias b.
func Parse(b []byte) (*Message, error) {
	if len(b) < headerLen {
		return nil, errShort
	}
	n, err := frameLength(b[:8])
	if err != nil {
		return nil, err
	}
	if n != len(b) {
		return nil, errLength
	}
	be := binary.BigEndian
	if be.Uint16(b[8:]) != 1 {
		return nil, errVersion
	}
	m := &Message{}
	h := &m.Header
	h.Port = be.Uint16(b[10:])
	h.Type = be.Uint16(b[12:])
	count := int(be.Uint16(b[14:]))
	h.CurrentEpoch = be.Uint64(b[16:])
	h.ConfigEpoch = be.Uint64(b[24:])
	h.Offset = be.Uint64(b[32:])
	h.Sender = string(b[40:80])
	copy(h.Slots[:], b[80:2128])
	if master := b[2128:2168]; !allZero(master) {
		h.MasterOf = string(master)
	}
	h.IP = cString(b[2168:2214])
	extensions := int(be.Uint16(b[2214:]))
	h.PPort = be.Uint16(b[2246:])
	h.CPort = be.Uint16(b[2248:])
	h.Flags = be.Uint16(b[2250:])
	h.State = b[2252]
	copy(h.MFlags[:], b[2253:2256])
	body := b[headerLen:]

	switch h.Type {
	case TypePing, TypePong, TypeMeet:
		if len(body) < count*gossipLen {
			return nil, errLength
		}
		m.Gossip = make([]Gossip, count)
		for i := range m.Gossip {
			g := body[i*gossipLen:]
			m.Gossip[i] = Gossip{
				Name:         string(g[:40]),
				PingSent:     be.Uint32(g[40:]),
				PongReceived: be.Uint32(g[44:]),
				IP:           cString(g[48:94]),
				Port:         be.Uint16(g[94:]),
				CPort:        be.Uint16(g[96:]),
				Flags:        be.Uint16(g[98:]),
				PPort:        be.Uint16(g[100:]),
			}
		}
		rest := body[count*gossipLen:]
		if h.MFlags[0]&msgFlagExtData == 0 {
			extensions = 0
		}
		for range extensions {
			if len(rest) < extHdrLen {
				return nil, errLength
			}
			size := be.Uint32(rest)
			if size%8 != 0 || size < extHdrLen {
				return nil, errPadding
			}
			if uint32(len(rest)) < size {
				return nil, errLength
			}
			data := rest[extHdrLen:size]
			switch be.Uint16(rest[4:]) {
			case extHostname:
				m.Hostname = cString(data)
			case extShardID:
				if len(data) >= NameLen {
					m.ShardID = string(data[:NameLen])
				}
			}
			rest = rest[size:]
		}
		if len(rest) != 0 {
			return nil, errLength
		}
	case TypeFail:
		if len(body) != NameLen {
			return nil, errLength
		}
		m.FailedNode = string(body)
	case TypePublish, TypePublishShard:
		if len(body) < 8 {
			return nil, errLength
		}
		cl, ml := uint64(be.Uint32(body)), uint64(be.Uint32(body[4:]))
		if uint64(len(body)) != 8+cl+ml {
			return nil, errLength
		}
		m.Channel = body[8 : 8+cl]
		m.Payload = body[8+cl:]
	case TypeUpdate:
		if len(body) != updateLen {
			return nil, errLength
		}
		m.UpdateEpoch = be.Uint64(body)
		m.UpdateNode = string(body[8:48])
		m.UpdateSlots = new(Slots)
		copy(m.UpdateSlots[:], body[48:])
	case TypeAuthRequest, TypeAuthAck, TypeMFStart:
		if len(body) != 0 {
			return nil, errLength
		}
	}
	if !m.wellFormed() {
		return nil, errMalformed
	}
	return m, nil
}

// appendHeader appends h for a message of the given body length.
func appendHeader(b []byte, h *Header, count, extensions, bodyLen int) []byte {
	start := len(b)
	b = append(b, make([]byte, headerLen)...)
	w := b[start:]
	be := binary.BigEndian
	copy(w, "RCmb")
	be.PutUint32(w[4:], uint32(headerLen+bodyLen))
	be.PutUint16(w[8:], 1)
	be.PutUint16(w[10:], h.Port)
	be.PutUint16(w[12:], h.Type)
	be.PutUint16(w[14:], uint16(count))
	be.PutUint64(w[16:], h.CurrentEpoch)
	be.PutUint64(w[24:], h.ConfigEpoch)
	be.PutUint64(w[32:], h.Offset)
	copy(w[40:80], h.Sender)
	copy(w[80:2128], h.Slots[:])
	copy(w[2128:2168], h.MasterOf)
	copy(w[2168:2214], h.IP)
	be.PutUint16(w[2214:], uint16(extensions))
	be.PutUint16(w[2246:], h.PPort)
	be.PutUint16(w[2248:], h.CPort)
	be.PutUint16(w[2250:], h.Flags)
	w[2252] = h.State
	copy(w[2253:2256], h.MFlags[:])
	return b
}

// Encode appends m in the bus's binary format.
func (m *Message) Encode(b []byte) []byte {
	be := binary.BigEndian
	switch m.Type {
	case TypePing, TypePong, TypeMeet:
		body := len(m.Gossip) * gossipLen
		extensions := 0
		h := m.Header
		var hostExt int
		if m.Hostname != "" {
			hostExt = extHdrLen + (len(m.Hostname)+1+7)/8*8
			body += hostExt
			extensions++
			h.MFlags[0] |= msgFlagExtData
		}
		b = appendHeader(b, &h, len(m.Gossip), extensions, body)
		for _, g := range m.Gossip {
			e := make([]byte, gossipLen)
			copy(e[:40], g.Name)
			be.PutUint32(e[40:], g.PingSent)
			be.PutUint32(e[44:], g.PongReceived)
			copy(e[48:94], g.IP)
			be.PutUint16(e[94:], g.Port)
			be.PutUint16(e[96:], g.CPort)
			be.PutUint16(e[98:], g.Flags)
			be.PutUint16(e[100:], g.PPort)
			b = append(b, e...)
		}
		if hostExt > 0 {
			e := make([]byte, hostExt)
			be.PutUint32(e, uint32(hostExt))
			be.PutUint16(e[4:], extHostname)
			copy(e[extHdrLen:], m.Hostname)
			b = append(b, e...)
		}
		return b
	case TypeFail:
		b = appendHeader(b, &m.Header, 0, 0, NameLen)
		return append(b, padName(m.FailedNode)...)
	case TypePublish, TypePublishShard:
		b = appendHeader(b, &m.Header, 0, 0, 8+len(m.Channel)+len(m.Payload))
		b = be.AppendUint32(b, uint32(len(m.Channel)))
		b = be.AppendUint32(b, uint32(len(m.Payload)))
		b = append(b, m.Channel...)
		return append(b, m.Payload...)
	case TypeUpdate:
		b = appendHeader(b, &m.Header, 0, 0, updateLen)
		b = be.AppendUint64(b, m.UpdateEpoch)
		b = append(b, padName(m.UpdateNode)...)
		return append(b, m.UpdateSlots[:]...)
	}
	return appendHeader(b, &m.Header, 0, 0, 0)
}

func padName(name string) []byte {
	n := make([]byte, NameLen)
	copy(n, name)
	return n
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// wellFormed reports whether every node name, address and hostname in m has
// its form. They go into CLUSTER NODES and nodes.conf as they are: a newline
// or a space there would make the file unreadable at the next start, so a
// message carrying one is refused whole, like any other malformed message.
func (m *Message) wellFormed() bool {
	h := &m.Header
	if !ValidName(h.Sender) || h.MasterOf != "" && !ValidName(h.MasterOf) || !validAddr(h.IP) {
		return false
	}
	for _, g := range m.Gossip {
		if !ValidName(g.Name) || !validAddr(g.IP) {
			return false
		}
	}
	switch {
	case m.ShardID != "" && !ValidName(m.ShardID),
		h.Type == TypeFail && !ValidName(m.FailedNode),
		h.Type == TypeUpdate && !ValidName(m.UpdateNode),
		!ValidHostname(m.Hostname):
		return false
	}
	return true
}

// validAddr reports whether ip can be an address a node announces: empty
// (the link's own address is used) or the characters of an IPv4 or IPv6
// address with its zone.
func validAddr(ip string) bool {
	for _, c := range []byte(ip) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == ':' || c == '%' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// ValidHostname reports whether name can be a node's announced hostname:
// what cluster-announce-hostname accepts (letters, digits, hyphens, dots).
func ValidHostname(name string) bool {
	if len(name) >= 256 {
		return false
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// cString is b up to its first NUL.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
