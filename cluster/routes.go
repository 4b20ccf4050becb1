package cluster

import (
	"math/bits"
	"net"
	"strconv"
)

// Routes is the slot table the dispatch path reads for every command: an
// immutable snapshot, replaced when ownership changes. The slots are held
// in chunks, and a new snapshot shares every chunk none of whose slots
// changed: a resharding's SETSLOT copies one chunk instead of building the
// whole table (96 KB of garbage per SETSLOT made the collector run every
// few commands).
type Routes struct {
	OK       bool
	chunks   [routeChunks]*routeChunk
	myself   uint16
	myMaster uint16   // when myself is a replica
	addrs    []string // "host:port" by node index, [0] unused
}

const (
	routeChunkSlots = 256
	routeChunks     = SlotCount / routeChunkSlots // 64: one bit each in a uint64
)

// routeChunk is the owner, migration target and import source of
// routeChunkSlots consecutive slots, as node indexes (0: none).
type routeChunk struct {
	owner, migrating, importing [routeChunkSlots]uint16
}

// routeTable is what the state keeps to build Routes: the nodes by index
// (an index is a node's from when it is first routed until it is deleted,
// so unchanged chunks stay true), and the chunks whose slots changed.
type routeTable struct {
	nodes []*Node // [0] and the indexes of deleted nodes nil
	dirty uint64  // bit i: chunk i changed
	built bool    // a first snapshot exists
}

// Owner is the slot's owner: mine, or the address to redirect to, or
// unassigned.
func (r *Routes) Owner(slot int) (mine, assigned bool, addr string) {
	o := r.chunks[slot/routeChunkSlots].owner[slot%routeChunkSlots]
	return o == r.myself, o != 0, r.addrs[o]
}

// Migrating returns the address of the node the slot is migrating to, if any.
func (r *Routes) Migrating(slot int) (string, bool) {
	m := r.chunks[slot/routeChunkSlots].migrating[slot%routeChunkSlots]
	return r.addrs[m], m != 0
}

// Importing reports whether the slot is being imported here.
func (r *Routes) Importing(slot int) bool {
	return r.chunks[slot/routeChunkSlots].importing[slot%routeChunkSlots] != 0
}

// MastersSlot reports whether myself is a replica and its master serves
// slot: a READONLY client reads it here.
func (r *Routes) MastersSlot(slot int) bool {
	return r.myMaster != 0 && r.chunks[slot/routeChunkSlots].owner[slot%routeChunkSlots] == r.myMaster
}

// Serves reports whether a command on slot runs here, migrations aside:
// myself owns it, or it is a read (a READONLY client's, or a sharded
// channel's) and myself replicates its owner.
func (r *Routes) Serves(slot int, replicaRead bool) bool {
	mine, _, _ := r.Owner(slot)
	return mine || replicaRead && r.MastersSlot(slot)
}

// Routes returns the current routing snapshot.
func (s *State) Routes() *Routes { return s.routes.Load() }

// slotChanged marks slot's chunk for the next snapshot.
func (s *State) slotChanged(slot int) {
	s.routing.dirty |= 1 << (slot / routeChunkSlots)
	s.dirtyRoutes = true
}

// setMigrating and setImporting open (n) or close (nil) a slot, keeping
// the set of open slots and the routes' chunks up to date.
func (s *State) setMigrating(slot int, n *Node) {
	if s.migrating[slot] != n {
		s.migrating[slot] = n
		s.openChanged(slot)
	}
}

func (s *State) setImporting(slot int, n *Node) {
	if s.importing[slot] != n {
		s.importing[slot] = n
		s.openChanged(slot)
	}
}

func (s *State) openChanged(slot int) {
	if s.migrating[slot] != nil || s.importing[slot] != nil {
		s.open.Set(slot)
	} else {
		s.open.Clear(slot)
	}
	s.slotChanged(slot)
}

// routeIndex returns n's index in the routes, giving it one (a freed one
// first) when it has none.
func (s *State) routeIndex(n *Node) uint16 {
	if n == nil {
		return 0
	}
	t := &s.routing
	if n.route != 0 {
		return n.route
	}
	if len(t.nodes) == 0 {
		t.nodes = append(t.nodes, nil)
	}
	for i := 1; i < len(t.nodes); i++ {
		if t.nodes[i] == nil {
			t.nodes[i], n.route = n, uint16(i)
			return n.route
		}
	}
	t.nodes = append(t.nodes, n)
	n.route = uint16(len(t.nodes) - 1)
	return n.route
}

// dropRoute frees a deleted node's index; the slots that named it have
// changed already (delNode clears them).
func (s *State) dropRoute(n *Node) {
	if n.route != 0 {
		s.routing.nodes[n.route] = nil
		n.route = 0
	}
}

// rebuildRoutes publishes a snapshot: the node addresses and flags anew,
// the changed chunks rebuilt, the others shared with the last snapshot.
func (s *State) rebuildRoutes() {
	t := &s.routing
	for _, n := range s.nodes {
		s.routeIndex(n)
	}
	r := &Routes{OK: s.ok, myself: s.routeIndex(s.myself)}
	if s.myself.isReplica() {
		r.myMaster = s.routeIndex(s.myself.Master)
	}
	dirty := t.dirty
	if !t.built {
		dirty = ^uint64(0)
	}
	if prev := s.routes.Load(); prev != nil {
		r.chunks = prev.chunks
	}
	for ; dirty != 0; dirty &= dirty - 1 {
		i := bits.TrailingZeros64(dirty)
		c := new(routeChunk)
		base := i * routeChunkSlots
		for j := range routeChunkSlots {
			c.owner[j] = s.routeIndex(s.slots[base+j])
			c.migrating[j] = s.routeIndex(s.migrating[base+j])
			c.importing[j] = s.routeIndex(s.importing[base+j])
		}
		r.chunks[i] = c
	}
	// After the chunks, which may have indexed a node outside the table.
	r.addrs = make([]string, len(t.nodes))
	for i, n := range t.nodes {
		if n != nil {
			r.addrs[i] = net.JoinHostPort(s.endpoint(n), strconv.Itoa(n.Port))
		}
	}
	t.dirty, t.built = 0, true
	s.routes.Store(r)
}

// endpoint is the address clients are sent to for n.
func (s *State) endpoint(n *Node) string {
	if n.IP == "" {
		return "?"
	}
	return n.IP
}
