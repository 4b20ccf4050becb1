package stream

import (
	"bytes"
	"cmp"
	"math"
	"slices"
	"sort"
)

// InvalidEntriesRead is a group's entries-read when it is unknown.
const InvalidEntriesRead = -1

// Group is a consumer group.
type Group struct {
	Name        []byte
	LastID      ID    // the last ID delivered
	EntriesRead int64 // the logical count of entries read, or InvalidEntriesRead
	pel         []Pending
	consumers   []*Consumer // sorted by name
	nextID      uint32
	nacked      int    // the PEL entries XNACK released
	lastNack    uint32 // the place in the NACKed zone last given
}

// Pending is an entry of a group's pending entries list (PEL): delivered to
// a consumer and not yet acknowledged. It names its consumer by number, so
// the PEL holds no pointers.
type Pending struct {
	ID            ID
	DeliveryTime  int64 // Unix ms of the last delivery
	DeliveryCount uint64
	consumer      uint32 // unowned once XNACK released it
	// nack is its place in the group's NACKed zone (XNACK, Redis 8.8): the
	// released entries in the order they were released; 0 when not there.
	nack uint32
}

// ClaimOrder compares PEL entries in the order XREADGROUP CLAIM takes them:
// the NACKed first, in the order XNACK released them, then the longest
// idle, then by ID.
func ClaimOrder(a, b *Pending) int {
	switch {
	case a.nack != 0 && b.nack != 0:
		return int(a.nack) - int(b.nack)
	case a.nack != 0:
		return -1
	case b.nack != 0:
		return 1
	case a.DeliveryTime != b.DeliveryTime:
		return cmp.Compare(a.DeliveryTime, b.DeliveryTime)
	}
	return a.ID.Compare(b.ID)
}

// unowned is the consumer number of a PEL entry XNACK released.
const unowned = math.MaxUint32

// Nacked reports whether p was released by XNACK and not claimed since:
// pending for no consumer.
func (p *Pending) Nacked() bool { return p.nack != 0 }

// Consumer is a consumer of a group.
type Consumer struct {
	Name     []byte
	SeenTime int64 // Unix ms of its last read or claim
	id       uint32
	pending  int
}

// PendingCount returns the number of entries pending for c.
func (c *Consumer) PendingCount() int { return c.pending }

// Groups returns the groups sorted by name; the slice must not be changed.
func (s *Stream) Groups() []*Group { return s.groups }

func (s *Stream) groupIndex(name []byte) (int, bool) {
	i := sort.Search(len(s.groups), func(i int) bool { return bytes.Compare(s.groups[i].Name, name) >= 0 })
	return i, i < len(s.groups) && bytes.Equal(s.groups[i].Name, name)
}

// Group returns the group name, or nil.
func (s *Stream) Group(name []byte) *Group {
	if i, ok := s.groupIndex(name); ok {
		return s.groups[i]
	}
	return nil
}

// CreateGroup adds a group, or returns false when it exists.
func (s *Stream) CreateGroup(name []byte, last ID, entriesRead int64) (*Group, bool) {
	i, ok := s.groupIndex(name)
	if ok {
		return nil, false
	}
	g := &Group{Name: bytes.Clone(name), LastID: last, EntriesRead: entriesRead}
	s.groups = slices.Insert(s.groups, i, g)
	return g, true
}

// DestroyGroup removes a group, reporting whether it existed.
func (s *Stream) DestroyGroup(name []byte) bool {
	i, ok := s.groupIndex(name)
	if ok {
		s.groups = slices.Delete(s.groups, i, i+1)
	}
	return ok
}

func (g *Group) clone() *Group {
	c := *g
	c.Name = bytes.Clone(g.Name)
	c.pel = slices.Clone(g.pel)
	c.consumers = make([]*Consumer, len(g.consumers))
	for i, k := range g.consumers {
		kc := *k
		kc.Name = bytes.Clone(k.Name)
		c.consumers[i] = &kc
	}
	return &c
}

func (g *Group) memoryBytes() int {
	n := 64 + len(g.Name) + cap(g.pel)*40 + cap(g.consumers)*8
	for _, c := range g.consumers {
		n += 48 + len(c.Name)
	}
	return n
}

// Consumers returns the consumers sorted by name; the slice must not be
// changed.
func (g *Group) Consumers() []*Consumer { return g.consumers }

func (g *Group) consumerIndex(name []byte) (int, bool) {
	i := sort.Search(len(g.consumers), func(i int) bool { return bytes.Compare(g.consumers[i].Name, name) >= 0 })
	return i, i < len(g.consumers) && bytes.Equal(g.consumers[i].Name, name)
}

// Consumer returns the consumer name, or nil.
func (g *Group) Consumer(name []byte) *Consumer {
	if i, ok := g.consumerIndex(name); ok {
		return g.consumers[i]
	}
	return nil
}

// CreateConsumer adds a consumer seen at now, or returns the existing one
// and false.
func (g *Group) CreateConsumer(name []byte, now int64) (*Consumer, bool) {
	i, ok := g.consumerIndex(name)
	if ok {
		return g.consumers[i], false
	}
	c := &Consumer{Name: bytes.Clone(name), SeenTime: now, id: g.nextID}
	g.nextID++
	g.consumers = slices.Insert(g.consumers, i, c)
	return c, true
}

// DeleteConsumer removes a consumer and its pending entries, returning how
// many it had, or -1 when there is no such consumer.
func (g *Group) DeleteConsumer(name []byte) int {
	i, ok := g.consumerIndex(name)
	if !ok {
		return -1
	}
	c := g.consumers[i]
	g.pel = slices.DeleteFunc(g.pel, func(p Pending) bool { return p.consumer == c.id })
	g.consumers = slices.Delete(g.consumers, i, i+1)
	return c.pending
}

// EachConsumer calls fn for each consumer, in name order, with the IDs
// pending for it in ID order (valid during the call).
func (g *Group) EachConsumer(fn func(c *Consumer, pending []ID)) {
	rank := make(map[uint32]int, len(g.consumers))
	start := make([]int, len(g.consumers)+1)
	for i, c := range g.consumers {
		rank[c.id] = i
		start[i+1] = start[i] + c.pending
	}
	ids := make([]ID, len(g.pel))
	next := slices.Clone(start[:len(g.consumers)])
	for _, p := range g.pel {
		r, owned := rank[p.consumer]
		if !owned {
			continue // released by XNACK
		}
		ids[next[r]] = p.ID
		next[r]++
	}
	for i, c := range g.consumers {
		fn(c, ids[start[i]:start[i+1]])
	}
}

// Owner returns the consumer p is pending for, nil for a NACKed entry.
func (g *Group) Owner(p *Pending) *Consumer {
	for _, c := range g.consumers {
		if c.id == p.consumer {
			return c
		}
	}
	return nil
}

// OwnerName returns the name of the consumer p is pending for, empty for a
// NACKed entry (as XPENDING and XINFO show it).
func (g *Group) OwnerName(p *Pending) []byte {
	if c := g.Owner(p); c != nil {
		return c.Name
	}
	return nil
}

// Owns reports whether p is pending for c.
func (c *Consumer) Owns(p *Pending) bool { return p.consumer == c.id }

// Pending returns the PEL sorted by ID; entries may be changed in place
// (times, counts) but not added or removed.
func (g *Group) Pending() []Pending { return g.pel }

// FindPending returns the index of id in the PEL, or where it would go.
func (g *Group) FindPending(id ID) (int, bool) {
	i := sort.Search(len(g.pel), func(i int) bool { return !g.pel[i].ID.Less(id) })
	return i, i < len(g.pel) && g.pel[i].ID == id
}

// Deliver records id as delivered to c at now, once: added to the PEL, or
// taken over from its previous consumer with a count of 1, as XREADGROUP
// does.
func (g *Group) Deliver(id ID, c *Consumer, now int64) {
	i, ok := g.FindPending(id)
	if !ok {
		g.pel = slices.Insert(g.pel, i, Pending{ID: id, DeliveryTime: now, DeliveryCount: 1, consumer: c.id})
		c.pending++
		return
	}
	g.Assign(i, c)
	g.pel[i].DeliveryTime, g.pel[i].DeliveryCount = now, 1
}

// AddPending adds id to the PEL for c (XCLAIM FORCE), returning its index.
func (g *Group) AddPending(id ID, c *Consumer, now int64, count uint64) int {
	i, _ := g.FindPending(id)
	g.pel = slices.Insert(g.pel, i, Pending{ID: id, DeliveryTime: now, DeliveryCount: count, consumer: c.id})
	c.pending++
	return i
}

// Assign makes PEL entry i pending for c.
func (g *Group) Assign(i int, c *Consumer) {
	p := &g.pel[i]
	if p.consumer == c.id {
		return
	}
	if old := g.Owner(p); old != nil {
		old.pending--
	}
	g.leaveNacked(p)
	p.consumer = c.id
	c.pending++
}

// leaveNacked takes p out of the NACKed zone, if it is there.
func (g *Group) leaveNacked(p *Pending) {
	if p.nack != 0 {
		p.nack = 0
		g.nacked--
	}
}

// NackedCount returns how many PEL entries are NACKed.
func (g *Group) NackedCount() int { return g.nacked }

// Nack releases PEL entry i (XNACK): pending for no consumer, delivered at
// time 0 (so any claim takes it), with delivery count count, last in the
// NACKed zone.
func (g *Group) Nack(i int, count uint64) {
	p := &g.pel[i]
	if old := g.Owner(p); old != nil {
		old.pending--
	}
	g.leaveNacked(p)
	p.consumer, p.DeliveryTime, p.DeliveryCount = unowned, 0, count
	g.nacked++
	p.nack = g.nextNack()
}

// AddNacked adds id to the PEL as a NACKed entry with delivery count count
// (XNACK FORCE), returning its index.
func (g *Group) AddNacked(id ID, count uint64) int {
	i, _ := g.FindPending(id)
	g.pel = slices.Insert(g.pel, i, Pending{ID: id, DeliveryCount: count, consumer: unowned})
	g.nacked++
	g.pel[i].nack = g.nextNack()
	return i
}

// nextNack returns the place after the last in the NACKed zone, numbering
// the zone afresh when the places ran out.
func (g *Group) nextNack() uint32 {
	if g.lastNack == math.MaxUint32 {
		order := g.NackedOrder()
		for k, i := range order {
			g.pel[i].nack = uint32(k + 1)
		}
		g.lastNack = uint32(len(order))
	}
	g.lastNack++
	return g.lastNack
}

// NackedOrder returns the PEL indexes of the NACKed entries in the order
// XNACK released them.
func (g *Group) NackedOrder() []int {
	order := make([]int, 0, g.nacked)
	for i := range g.pel {
		if g.pel[i].nack != 0 {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(a, b int) int { return int(g.pel[a].nack) - int(g.pel[b].nack) })
	return order
}

// Ack removes id from the PEL, reporting whether it was there.
func (g *Group) Ack(id ID) bool {
	i, ok := g.FindPending(id)
	if ok {
		g.RemovePending(i)
	}
	return ok
}

// RemovePending removes PEL entry i.
func (g *Group) RemovePending(i int) {
	if c := g.Owner(&g.pel[i]); c != nil {
		c.pending--
	}
	g.leaveNacked(&g.pel[i])
	g.pel = slices.Delete(g.pel, i, i+1)
}

// hasTombstones reports whether an entry from start on may have been deleted.
func (s *Stream) hasTombstones(start ID) bool {
	return s.Length > 0 && !s.MaxDeletedID.IsZero() && !s.MaxDeletedID.Less(start)
}

// entriesReadAt estimates the logical number of id in the stream (how many
// entries were added up to it), or InvalidEntriesRead when it cannot be
// known, as Redis 7.0 does.
func (s *Stream) entriesReadAt(id ID) int64 {
	if s.EntriesAdded == 0 {
		return 0
	}
	if s.Length == 0 && !s.LastID.Less(id) {
		return int64(s.EntriesAdded)
	}
	switch id.Compare(s.LastID) {
	case 0:
		return int64(s.EntriesAdded)
	case 1:
		return InvalidEntriesRead
	}
	if s.MaxDeletedID.IsZero() || s.MaxDeletedID.Less(s.FirstID) {
		switch id.Compare(s.FirstID) {
		case -1:
			return int64(s.EntriesAdded - s.Length)
		case 0:
			return int64(s.EntriesAdded - s.Length + 1)
		}
	}
	return InvalidEntriesRead
}

// EntriesReadAt is entriesReadAt for XGROUP CREATE and SETID without
// ENTRIESREAD.
func (s *Stream) EntriesReadAt(id ID) int64 { return s.entriesReadAt(id) }

// Advance moves g's last delivered ID to id (above it) and keeps its
// entries-read counter, as a read of id does.
func (s *Stream) Advance(g *Group, id ID) {
	switch {
	case g.EntriesRead != InvalidEntriesRead && !s.hasTombstones(id):
		g.EntriesRead++
	case s.EntriesAdded > 0:
		g.EntriesRead = s.entriesReadAt(id)
	}
	g.LastID = id
}

// Lag returns the number of entries not yet delivered to g, or false when
// it cannot be known.
func (s *Stream) Lag(g *Group) (int64, bool) {
	if s.EntriesAdded == 0 {
		return 0, true
	}
	if g.EntriesRead != InvalidEntriesRead && !s.hasTombstones(g.LastID) {
		return int64(s.EntriesAdded) - g.EntriesRead, true
	}
	if read := s.entriesReadAt(g.LastID); read != InvalidEntriesRead {
		return int64(s.EntriesAdded) - read, true
	}
	return 0, false
}
