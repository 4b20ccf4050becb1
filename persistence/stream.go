package persistence

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strconv"

	"github.com/keyhive/keyhive/internal/stream"
)

// Redis's stream value (RDB types 15, 19 and 21): the radix tree's nodes,
// each a 16-byte big-endian master ID and a listpack,
//
//	master entry: live count, deleted count, field count, the fields, 0
//	each entry:   flags, ms delta, seq delta (from the master ID),
//	              with streamSameFields the values of the master fields,
//	              else a field count and the field/value pairs,
//	              then lp-count (the entry's elements before it)
//
// then the length, last ID, (from type 19) first ID, max deleted ID and
// entries added, and the consumer groups: name, last ID, (from type 19)
// entries read, the global PEL (raw IDs, delivery time and count), and the
// consumers (name, seen time, (type 21) active time, raw IDs of their PEL).
const (
	streamDeleted    = 1
	streamSameFields = 2
)

// TypeStream is a decoded stream's Value.Type (its Stream holds it).
const TypeStream = TypeStreamListpack2

// TypeStreamIDMP is Keyhive's own value type for a stream with idempotent
// production state (Redis 8.6's XADD IDMP; its RDB encoding is not
// documented): the type 19 value, then the state: duration, max size,
// iids added, duplicates, the count of iids, and per iid the producer ID,
// the iid, the raw entry ID and the time recorded (8 bytes little-endian
// Unix ms), producers in order and each one's iids oldest first. A stream
// that never used IDMP is written as type 19, for Redis 7.x to load.
const TypeStreamIDMP = 0xE0

// StreamIDMP is a decoded stream's idempotency state.
type StreamIDMP struct {
	Duration, MaxSize int64
	Added, Duplicates uint64
	IIDs              []StreamIID
}

// StreamIID is one tracked iid.
type StreamIID struct {
	PID, IID []byte
	ID       stream.ID
	At       int64
}

// AppendStreamIDMP appends the state that follows a TypeStreamIDMP's
// stream.
func (e *Encoder) AppendStreamIDMP(b []byte, st *stream.Stream) []byte {
	duration, maxSize, added, duplicates := st.IDMPSettings()
	b = AppendLen(b, uint64(duration))
	b = AppendLen(b, uint64(maxSize))
	b = AppendLen(b, added)
	b = AppendLen(b, duplicates)
	n := 0
	st.EachIDMP(func(_, _ []byte, _ stream.ID, _ int64) { n++ })
	b = AppendLen(b, uint64(n))
	st.EachIDMP(func(pid, iid []byte, id stream.ID, at int64) {
		b = e.AppendString(b, pid)
		b = e.AppendString(b, iid)
		b = AppendRawStreamID(b, id)
		b = binary.LittleEndian.AppendUint64(b, uint64(at))
	})
	return b
}

func (d *decoder) streamIDMP() *StreamIDMP {
	m := &StreamIDMP{Duration: int64(d.uint()), MaxSize: int64(d.uint()), Added: d.uint(), Duplicates: d.uint()}
	if m.Duration < 1 || m.Duration > stream.IDMPMaxDuration || m.MaxSize < 1 || m.MaxSize > stream.IDMPMaxMaxSize {
		d.fail("stream IDMP configuration out of range")
	}
	n := d.count()
	m.IIDs = make([]StreamIID, 0, min(n, preallocMax))
	for range n {
		r := StreamIID{PID: bytes.Clone(d.str()), IID: bytes.Clone(d.str())}
		r.ID = rawStreamID(d.take(16))
		r.At = int64(binary.LittleEndian.Uint64(d.take(8)))
		m.IIDs = append(m.IIDs, r)
	}
	return m
}

// Stream is a decoded stream value. Listpacks alias the input.
type Stream struct {
	IDMP         *StreamIDMP // TypeStreamIDMP's state, else nil
	Nodes        []StreamNode
	Length       uint64
	LastID       stream.ID
	FirstID      stream.ID
	MaxDeletedID stream.ID
	EntriesAdded uint64
	Groups       []StreamGroup
	// Legacy is a type 15 value: Redis 7.0 derives the first ID and the
	// entries added, and groups' entries-read, from the entries.
	Legacy bool
}

// StreamNode is a node: its master ID and its validated listpack.
type StreamNode struct {
	Master   stream.ID
	Listpack []byte
}

// StreamGroup is a consumer group; with Legacy, EntriesRead is unknown.
type StreamGroup struct {
	Name        []byte
	LastID      stream.ID
	EntriesRead int64
	PEL         []StreamPending // sorted by ID
	Consumers   []StreamConsumer
}

// StreamPending is a PEL entry; Consumer indexes the group's Consumers, or
// is -1 for an entry XNACK released.
type StreamPending struct {
	ID            stream.ID
	DeliveryTime  int64
	DeliveryCount uint64
	Consumer      int
}

// StreamConsumer is a consumer.
type StreamConsumer struct {
	Name     []byte
	SeenTime int64
}

func rawStreamID(b []byte) stream.ID {
	return stream.ID{Ms: binary.BigEndian.Uint64(b), Seq: binary.BigEndian.Uint64(b[8:])}
}

// AppendRawStreamID appends id as Redis's 16-byte big-endian key.
func AppendRawStreamID(b []byte, id stream.ID) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(b, id.Ms), id.Seq)
}

func appendStreamID(b []byte, id stream.ID) []byte {
	return AppendLen(AppendLen(b, id.Ms), id.Seq)
}

var errStreamNode = errors.New("invalid stream node")

// Walk validates the node as Redis's deep integrity check does (and that
// its entries' IDs rise from its master ID) and calls master with the
// master fields, then entry for each entry, deleted ones included. The
// slices passed are valid during the call. It returns the last entry's ID.
func (n *StreamNode) Walk(master func(fields [][]byte), entry func(id stream.ID, deleted bool, pairs [][]byte)) (last stream.ID, err error) {
	r, err := newListpackReader(n.Listpack)
	if err != nil {
		return last, err
	}
	var scratch []byte // integers as text; a new one when full, so earlier slices stay valid
	elem := func() listpackElement {
		if err == nil && r.done() {
			err = errStreamNode
		}
		if err != nil {
			return listpackElement{}
		}
		var e listpackElement
		e, err = r.next()
		return e
	}
	integer := func() int64 {
		e := elem()
		if !e.isInt && err == nil {
			err = errStreamNode
		}
		return e.v
	}
	str := func() []byte {
		e := elem()
		if !e.isInt {
			return e.s
		}
		if cap(scratch)-len(scratch) < 20 {
			scratch = make([]byte, 0, 4096)
		}
		at := len(scratch)
		scratch = strconv.AppendInt(scratch, e.v, 10)
		return scratch[at:len(scratch):len(scratch)]
	}
	live, deleted, nfields := integer(), integer(), integer()
	if err != nil || live < 0 || deleted < 0 || nfields <= 0 || live == 0 || nfields > int64(len(n.Listpack)) {
		return last, errStreamNode
	}
	fields := make([][]byte, nfields)
	for i := range fields {
		fields[i] = str()
	}
	if integer() != 0 || err != nil {
		return last, errStreamNode
	}
	master(fields)
	var pairs [][]byte
	seenLive, seenDeleted := int64(0), int64(0)
	for first := true; !r.done() && err == nil; first = false {
		flags := integer()
		msd, seqd := integer(), integer()
		id := stream.ID{Ms: n.Master.Ms + uint64(msd), Seq: n.Master.Seq + uint64(seqd)}
		if err != nil || flags&^(streamDeleted|streamSameFields) != 0 || id.Less(n.Master) || !first && !last.Less(id) {
			return last, errStreamNode
		}
		pairs = pairs[:0]
		var count int64
		if flags&streamSameFields != 0 {
			for _, f := range fields {
				pairs = append(pairs, f, str())
			}
			count = nfields + 3
		} else {
			k := integer()
			if k <= 0 || k > int64(len(n.Listpack)) {
				return last, errStreamNode
			}
			for range 2 * k {
				pairs = append(pairs, str())
			}
			count = 2*k + 4
		}
		if integer() != count || err != nil {
			return last, errStreamNode
		}
		if flags&streamDeleted != 0 {
			seenDeleted++
		} else {
			seenLive++
		}
		last = id
		entry(id, flags&streamDeleted != 0, pairs)
	}
	if err != nil || seenLive != live || seenDeleted != deleted {
		return last, errStreamNode
	}
	return last, r.finish()
}

// stream reads a stream value of type t.
func (d *decoder) stream(t byte) *Stream {
	s := &Stream{Legacy: t == TypeStreamListpacks}
	var live uint64
	var last stream.ID
	nodes := d.count()
	s.Nodes = make([]StreamNode, 0, min(nodes, preallocMax))
	for i := range nodes {
		key := d.str()
		if len(key) != 16 {
			d.fail("stream node key is not a stream ID")
		}
		n := StreamNode{Master: rawStreamID(key), Listpack: d.str()}
		if i > 0 && !last.Less(n.Master) {
			d.fail("stream nodes out of order")
		}
		nodeLast, err := n.Walk(func([][]byte) {}, func(_ stream.ID, deleted bool, _ [][]byte) {
			if !deleted {
				live++
			}
		})
		if err != nil {
			d.fail("invalid stream node")
		}
		last = nodeLast
		s.Nodes = append(s.Nodes, n)
	}
	s.Length = d.uint()
	s.LastID = d.streamID()
	if !s.Legacy {
		s.FirstID = d.streamID()
		s.MaxDeletedID = d.streamID()
		s.EntriesAdded = d.uint()
	}
	if s.Length != live || len(s.Nodes) > 0 && s.LastID.Less(last) {
		d.fail("stream length or last ID inconsistent with its entries")
	}
	ngroups := d.count()
	s.Groups = make([]StreamGroup, 0, min(ngroups, preallocMax))
	for i := range ngroups {
		g := StreamGroup{Name: bytes.Clone(d.str()), LastID: d.streamID(), EntriesRead: -1}
		if i > 0 && bytes.Compare(s.Groups[i-1].Name, g.Name) >= 0 {
			d.fail("stream groups out of order")
		}
		if !s.Legacy {
			if v := d.uint(); v <= math.MaxInt64 {
				g.EntriesRead = int64(v)
			}
		}
		npel := d.count()
		g.PEL = make([]StreamPending, 0, min(npel, preallocMax))
		for j := range npel {
			p := StreamPending{ID: rawStreamID(d.take(16)), Consumer: -1}
			p.DeliveryTime = int64(binary.LittleEndian.Uint64(d.take(8)))
			p.DeliveryCount = d.uint()
			if j > 0 && !g.PEL[j-1].ID.Less(p.ID) {
				d.fail("stream PEL out of order")
			}
			g.PEL = append(g.PEL, p)
		}
		nconsumers := d.count()
		g.Consumers = make([]StreamConsumer, 0, min(nconsumers, preallocMax))
		for k := range nconsumers {
			c := StreamConsumer{Name: bytes.Clone(d.str())}
			if k > 0 && bytes.Compare(g.Consumers[k-1].Name, c.Name) >= 0 {
				d.fail("stream consumers out of order")
			}
			c.SeenTime = int64(binary.LittleEndian.Uint64(d.take(8)))
			if t == TypeStreamListpack3 {
				d.take(8) // active time (Redis 7.2)
			}
			for range d.count() {
				j := findPending(g.PEL, rawStreamID(d.take(16)))
				if j < 0 || g.PEL[j].Consumer >= 0 {
					d.fail("consumer entry not found in the group's PEL")
				}
				g.PEL[j].Consumer = k
			}
			g.Consumers = append(g.Consumers, c)
		}
		for _, p := range g.PEL {
			// Only an entry XNACK released (Redis 8.8; delivered at time 0)
			// is pending for no consumer.
			if p.Consumer < 0 && p.DeliveryTime != 0 {
				d.fail("stream PEL entry without consumer")
			}
		}
		s.Groups = append(s.Groups, g)
	}
	return s
}

// preallocMax bounds what a count read from the input preallocates: the
// count is checked against the bytes left, but a stream's records are many
// times larger in memory than their smallest encoding.
const preallocMax = 1024

func findPending(pel []StreamPending, id stream.ID) int {
	lo, hi := 0, len(pel)
	for lo < hi {
		m := (lo + hi) / 2
		if pel[m].ID.Less(id) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(pel) && pel[lo].ID == id {
		return lo
	}
	return -1
}

func (d *decoder) uint() uint64 {
	n, enc := d.length()
	if enc {
		d.fail("invalid length encoding")
	}
	return n
}

func (d *decoder) streamID() stream.ID { return stream.ID{Ms: d.uint(), Seq: d.uint()} }

// BeginStreamNode starts lp as a stream node whose master entry has the
// given counts and fields.
func (lp *Listpack) BeginStreamNode(live, deleted int, fields [][]byte) {
	lp.Reset()
	lp.AppendInt(int64(live))
	lp.AppendInt(int64(deleted))
	lp.AppendInt(int64(len(fields)))
	for _, f := range fields {
		lp.Append(f)
	}
	lp.AppendInt(0)
}

// AppendStreamEntry appends an entry to a node begun with BeginStreamNode;
// sameFields says its fields are the master's (only values are written).
func (lp *Listpack) AppendStreamEntry(master, id stream.ID, deleted, sameFields bool, pairs [][]byte) {
	flags := int64(0)
	if deleted {
		flags |= streamDeleted
	}
	if sameFields {
		flags |= streamSameFields
	}
	lp.AppendInt(flags)
	lp.AppendInt(int64(id.Ms - master.Ms))
	lp.AppendInt(int64(id.Seq - master.Seq))
	if sameFields {
		for i := 1; i < len(pairs); i += 2 {
			lp.Append(pairs[i])
		}
		lp.AppendInt(int64(len(pairs)/2 + 3))
		return
	}
	lp.AppendInt(int64(len(pairs) / 2))
	for _, p := range pairs {
		lp.Append(p)
	}
	lp.AppendInt(int64(len(pairs) + 4))
}

// AppendStreamNode appends a node: its master ID as a string, and its
// listpack.
func (e *Encoder) AppendStreamNode(b []byte, master stream.ID, lp []byte) []byte {
	var key [16]byte
	b = e.AppendBlob(b, AppendRawStreamID(key[:0], master))
	return e.AppendBlob(b, lp)
}

// AppendStreamMeta appends what follows the nodes of a type 19 value.
func AppendStreamMeta(b []byte, length uint64, last, first, maxDeleted stream.ID, entriesAdded uint64) []byte {
	b = AppendLen(b, length)
	b = appendStreamID(b, last)
	b = appendStreamID(b, first)
	b = appendStreamID(b, maxDeleted)
	return AppendLen(b, entriesAdded)
}

// AppendStreamGroup appends a group's head; its pelLen PEL entries
// (AppendStreamPending) and its consumers follow.
func (e *Encoder) AppendStreamGroup(b, name []byte, last stream.ID, entriesRead int64, pelLen int) []byte {
	b = e.AppendString(b, name)
	b = appendStreamID(b, last)
	b = AppendLen(b, uint64(entriesRead)) // -1 as Redis writes it: all ones
	return AppendLen(b, uint64(pelLen))
}

// AppendStreamPending appends a global PEL entry.
func AppendStreamPending(b []byte, id stream.ID, deliveryTime int64, deliveryCount uint64) []byte {
	b = AppendRawStreamID(b, id)
	b = binary.LittleEndian.AppendUint64(b, uint64(deliveryTime))
	return AppendLen(b, deliveryCount)
}

// AppendStreamConsumer appends a consumer's head; the raw IDs of its
// pelLen pending entries follow (AppendRawStreamID).
func (e *Encoder) AppendStreamConsumer(b, name []byte, seenTime int64, pelLen int) []byte {
	b = e.AppendString(b, name)
	b = binary.LittleEndian.AppendUint64(b, uint64(seenTime))
	return AppendLen(b, uint64(pelLen))
}
