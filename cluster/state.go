package cluster

import (
	"fmt"
	"log"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a node.
type Options struct {
	ConfigFile  string // nodes.conf, absolute
	Port        int    // the client port
	BusPort     int    // the cluster bus port
	NodeTimeout time.Duration
	// Announced address; zero values mean the one the other nodes see.
	AnnounceIP, AnnounceHostname  string
	AnnouncePort, AnnounceBusPort int
	RequireFullCoverage           func() bool
	AllowReplicaMigration         func() bool
	BindAddresses                 []string
	Logger                        *log.Logger
	Now                           func() int64 // ms; the wall clock by default
	Failover                      FailoverOptions
}

// Host is what the node needs from the server it runs in.
type Host interface {
	// DeleteKeysInSlot drops the keys of a slot another master took over
	// with a newer config: its keys are that master's now.
	DeleteKeysInSlot(slot int)
	// Deliver publishes a message received from the bus to local clients.
	Deliver(channel, message []byte, sharded bool)
	// UnsubscribeSlots ends the clients' subscriptions to the shard
	// channels of slots: their owner changed or went, or myself follows a
	// master that does not serve them (the clients subscribe again where
	// they went). slots is valid during the call only.
	UnsubscribeSlots(slots *Slots)
	// Replicate makes the host a replica of the master at ip:port, or a
	// master again when ip is "" (keeping its history's ID as replid2).
	Replicate(ip string, port int)
	// ReplicationOffset is the host's replication offset, sent in every
	// message: the replicas of a failed master rank themselves by it.
	ReplicationOffset() int64
	// ReplicationDataAge is how old a replica's data may be, in ms: 0
	// while its link to the master is up, else since the link went down.
	ReplicationDataAge() int64
	// PauseWrites pauses the host's writers until untilMs (a manual
	// failover), or ends the pause when untilMs is 0.
	PauseWrites(untilMs int64)
}

// State is the node table and the bus of one node. Its methods lock it; the
// routing table the server reads per command is Routes, lock-free.
type State struct {
	mu           sync.Mutex
	opt          Options
	host         Host
	myself       *Node
	nodes        map[string]*Node
	slots        [SlotCount]*Node
	migrating    [SlotCount]*Node
	importing    [SlotCount]*Node
	currentEpoch uint64
	lastVote     uint64
	election     election
	manual       manualFailover
	ok           bool
	size         int   // masters serving slots
	opened       int64 // when Open ran: a restarted master waits before it serves
	minority     int64 // when this node last saw less than a majority of masters
	forgotten    map[string]int64
	statsSent    [typeCount]int64
	statsRecv    [typeCount]int64

	assigned int   // slots with an owner
	open     Slots // slots migrating or importing
	// unsubscribe holds the slots whose shard channels' subscribers the
	// host unsubscribes at unlock (any says one is set), as Redis does on
	// every change of a slot's owner (clusterDelSlot) and when myself
	// follows a new master (clusterSetMaster).
	unsubscribe    Slots
	unsubscribeAny bool

	dirtyRoutes, dirtyConfig bool
	routing                  routeTable
	saver                    configSaver
	later                    []func() // calls into the host, made once the lock is released
	routes                   atomic.Pointer[Routes]
	listeners                []net.Listener
	links                    map[*link]struct{} // every open link, inbound ones not yet tied to a node included
	done                     chan struct{}
	wg                       sync.WaitGroup
	iteration                int
}

// forgetTTL is how long a forgotten node is not re-added from gossip.
const forgetTTL = 60 * time.Second

// Open loads the node's config file, or creates a node with a fresh name
// when there is none. Start makes it listen.
func Open(opt Options, host Host) (*State, error) {
	if opt.Now == nil {
		opt.Now = func() int64 { return time.Now().UnixMilli() }
	}
	if opt.Logger == nil {
		opt.Logger = log.Default()
	}
	s := &State{opt: opt, host: host, nodes: map[string]*Node{}, forgotten: map[string]int64{}, links: map[*link]struct{}{}, done: make(chan struct{})}
	s.manual.masterOffset = -1
	s.opened = s.now()
	s.saver.wake = make(chan struct{}, 1)
	loaded, err := s.loadConfig()
	if err != nil {
		return nil, err
	}
	if !loaded {
		s.myself = s.newNode(randomName(), FlagMyself|FlagMaster)
		s.myself.ShardID = randomName()
		s.addNode(s.myself)
		s.logf("No cluster configuration found, I'm %s", s.myself.Name)
	}
	// The configured address wins over the file's.
	s.myself.Port = s.announcedPort()
	s.myself.CPort = s.announcedBusPort()
	s.myself.Hostname = opt.AnnounceHostname
	if opt.AnnounceIP != "" {
		s.myself.IP = opt.AnnounceIP
	}
	if err := s.saveConfigNow(); err != nil {
		return nil, err
	}
	s.updateState()
	s.rebuildRoutes()
	return s, nil
}

// SetPort sets the client port, when it was picked after Open.
func (s *State) SetPort(port int) {
	s.lock()
	defer s.unlock()
	s.opt.Port = port
	s.myself.Port = s.announcedPort()
	s.changed()
}

// Reconfigure takes the node timeout and the announced address from opt
// (what CONFIG SET may change); the other nodes learn the new address from
// the next messages.
func (s *State) Reconfigure(opt Options) {
	s.lock()
	defer s.unlock()
	s.opt.NodeTimeout = opt.NodeTimeout
	s.opt.AnnounceIP, s.opt.AnnounceHostname = opt.AnnounceIP, opt.AnnounceHostname
	s.opt.AnnouncePort, s.opt.AnnounceBusPort = opt.AnnouncePort, opt.AnnounceBusPort
	s.myself.Port, s.myself.CPort, s.myself.Hostname = s.announcedPort(), s.announcedBusPort(), opt.AnnounceHostname
	if opt.AnnounceIP != "" {
		s.myself.IP = opt.AnnounceIP
	}
	s.changed()
}

func (s *State) logf(format string, args ...any) { s.opt.Logger.Printf(format, args...) }

func (s *State) now() int64 { return s.opt.Now() }

func (s *State) announcedPort() int {
	if s.opt.AnnouncePort != 0 {
		return s.opt.AnnouncePort
	}
	return s.opt.Port
}

func (s *State) announcedBusPort() int {
	if s.opt.AnnounceBusPort != 0 {
		return s.opt.AnnounceBusPort
	}
	return s.opt.BusPort
}

func (s *State) newNode(name string, flags uint16) *Node {
	now := s.now()
	return &Node{Name: name, Flags: flags, created: now, failReports: map[*Node]int64{}}
}

func (s *State) addNode(n *Node) { s.nodes[n.Name] = n }

// delNode removes n from the table, its slots, its links and the reports it made.
func (s *State) delNode(n *Node) {
	for i := range SlotCount {
		if s.importing[i] == n {
			s.setImporting(i, nil)
		}
		if s.migrating[i] == n {
			s.setMigrating(i, nil)
		}
		if s.slots[i] == n {
			s.delSlot(i)
		}
	}
	for _, o := range s.nodes {
		delete(o.failReports, n)
		if o.Master == n {
			o.Master = nil
		}
	}
	s.freeLink(n.link)
	s.freeLink(n.inbound)
	delete(s.nodes, n.Name)
	s.dropRoute(n)
	s.changed()
}

func (s *State) renameNode(n *Node, name string) {
	delete(s.nodes, n.Name)
	n.Name = name
	s.nodes[name] = n
}

func (s *State) addSlot(n *Node, slot int) bool {
	if s.slots[slot] != nil {
		return false
	}
	n.Slots.Set(slot)
	n.NumSlots++
	s.slots[slot] = n
	s.assigned++
	s.slotChanged(slot)
	s.changed()
	return true
}

func (s *State) delSlot(slot int) bool {
	n := s.slots[slot]
	if n == nil {
		return false
	}
	n.Slots.Clear(slot)
	n.NumSlots--
	s.slots[slot] = nil
	s.assigned--
	s.unsubscribe.Set(slot)
	s.unsubscribeAny = true
	s.slotChanged(slot)
	s.changed()
	return true
}

// changed marks the routes and the config file stale: both are redone when
// the lock is released (unlock).
func (s *State) changed() { s.dirtyRoutes, s.dirtyConfig = true, true }

func (s *State) lock() { s.mu.Lock() }

// unlock releases the lock after saving what changed.
func (s *State) unlock() {
	if s.dirtyConfig {
		s.dirtyConfig = false
		s.updateState()
		s.queueSave()
	}
	if s.dirtyRoutes {
		s.dirtyRoutes = false
		s.rebuildRoutes()
	}
	var unsubscribe *Slots
	if s.unsubscribeAny {
		unsubscribe = slotSets.Get().(*Slots)
		*unsubscribe = s.unsubscribe
		s.unsubscribe, s.unsubscribeAny = Slots{}, false
	}
	later := s.later
	s.later = nil
	s.mu.Unlock()
	// The host takes its keyspace and Pub/Sub locks, which its commands
	// hold while they call in here: never under this lock.
	for _, f := range later {
		f()
	}
	if unsubscribe != nil {
		s.host.UnsubscribeSlots(unsubscribe)
		slotSets.Put(unsubscribe)
	}
}

// slotSets are the slot sets handed to the host as the lock is released:
// a resharding's SETSLOTs reuse them.
var slotSets = sync.Pool{New: func() any { return new(Slots) }}

func (s *State) maxEpoch() uint64 {
	m := s.currentEpoch
	for _, n := range s.nodes {
		m = max(m, n.ConfigEpoch)
	}
	return m
}

// bumpEpoch gives myself a new config epoch unless it already has the
// cluster's highest, unshared: what a node does after taking slots
// without an election.
func (s *State) bumpEpoch() bool {
	if s.myself.ConfigEpoch != 0 && s.myself.ConfigEpoch == s.maxEpoch() {
		return false
	}
	s.currentEpoch++
	s.myself.ConfigEpoch = s.currentEpoch
	s.changed()
	s.logf("New configEpoch set to %d", s.myself.ConfigEpoch)
	return true
}

// A master that comes back (restarted, or healed from the minority side of
// a partition) does not serve at once: the majority may have failed it over
// meanwhile, and a write it acknowledged before hearing so would be thrown
// away when it turns into a replica. It stays down writableDelay ms after
// Open, and the node timeout (within the rejoin bounds, ms) after it last
// saw itself in a minority, hearing the cluster's configuration meanwhile.
const (
	writableDelay  = 2000
	minRejoinDelay = 500
	maxRejoinDelay = 5000
)

// updateState recomputes whether the cluster is ok from this node's view:
// every slot served by a reachable master (when full coverage is required),
// and a majority of the slot-serving masters reachable.
func (s *State) updateState() {
	now := s.now()
	// Full coverage: every slot assigned and no owner failed (the owners
	// are the nodes with slots: NumSlots counts their entries in slots).
	covered := s.assigned == SlotCount
	size, reachable := 0, 0
	for _, n := range s.nodes {
		if n.NumSlots > 0 && n.failed() {
			covered = false
		}
		if n.isMaster() && n.NumSlots > 0 {
			size++
			if n.Flags&(FlagFail|FlagPFail) == 0 {
				reachable++
			}
		}
	}
	ok := covered || (s.opt.RequireFullCoverage != nil && !s.opt.RequireFullCoverage())
	s.size = size
	if reachable < size/2+1 {
		ok = false
		s.minority = now
	}
	rejoin := min(max(s.opt.NodeTimeout.Milliseconds(), minRejoinDelay), maxRejoinDelay)
	if ok && !s.ok && s.myself.isMaster() && (now-s.opened < writableDelay || now-s.minority < rejoin) {
		return
	}
	if ok != s.ok {
		s.dirtyRoutes = true
		s.ok = ok
		if ok {
			s.logf("Cluster state changed: ok")
		} else {
			s.logf("Cluster state changed: fail")
		}
	}
}

// MyName is this node's name.
func (s *State) MyName() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.myself.Name
}

// MyShardID is this node's shard id.
func (s *State) MyShardID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.myself.ShardID
}

// Error is a command's refusal, with Redis's text (without "ERR ").
type Error string

func (e Error) Error() string { return string(e) }

func errorf(format string, args ...any) error { return Error(fmt.Sprintf(format, args...)) }

// Meet starts a handshake with the node at ip:port (bus port cport, 0 for
// port+10000).
func (s *State) Meet(ip string, port, cport int) error {
	addr := net.ParseIP(ip)
	if addr == nil || port <= 0 || port > 65535 || cport <= 0 || cport > 65535 {
		return errorf("Invalid node address specified: %s:%d", ip, port)
	}
	if v4 := addr.To4(); v4 != nil {
		addr = v4
	}
	norm := addr.String()
	s.lock()
	defer s.unlock()
	for _, n := range s.nodes {
		if n.Flags&FlagHandshake != 0 && n.IP == norm && n.Port == port && n.CPort == cport {
			return nil // a handshake is already under way
		}
	}
	n := s.newNode(randomName(), FlagHandshake|FlagMeet)
	n.IP, n.Port, n.CPort = norm, port, cport
	s.addNode(n)
	s.changed()
	return nil
}

// AddSlots assigns (del: unassigns) the slots of ranges to myself, all or none.
func (s *State) AddSlots(ranges [][2]int, del bool) error {
	s.lock()
	defer s.unlock()
	var seen Slots
	for _, r := range ranges {
		for slot := r[0]; slot <= r[1]; slot++ {
			switch {
			case del && s.slots[slot] == nil:
				return errorf("Slot %d is already unassigned", slot)
			case !del && s.slots[slot] != nil:
				return errorf("Slot %d is already busy", slot)
			case seen.Has(slot):
				return errorf("Slot %d specified multiple times", slot)
			}
			seen.Set(slot)
		}
	}
	for slot := range SlotCount {
		if !seen.Has(slot) {
			continue
		}
		if del {
			s.delSlot(slot)
			continue
		}
		s.setImporting(slot, nil)
		s.addSlot(s.myself, slot)
	}
	s.changed()
	return nil
}

// FlushSlots unassigns every slot of myself.
func (s *State) FlushSlots() {
	s.lock()
	defer s.unlock()
	for slot := range SlotCount {
		if s.slots[slot] == s.myself {
			s.delSlot(slot)
		}
	}
}

// SetSlot is CLUSTER SETSLOT slot action [node]; held is the number of
// keys this node holds in the slot.
func (s *State) SetSlot(slot int, action, name string, held int) error {
	s.lock()
	defer s.unlock()
	if s.myself.isReplica() {
		return Error("Please use SETSLOT only with masters.")
	}
	lookup := func(unknown string) (*Node, error) {
		n := s.nodes[name]
		if n == nil {
			return nil, errorf(unknown, name)
		}
		if n.isReplica() {
			return nil, Error("Target node is not a master")
		}
		return n, nil
	}
	switch action {
	case "migrating":
		if s.slots[slot] != s.myself {
			return errorf("I'm not the owner of hash slot %d", slot)
		}
		n, err := lookup("I don't know about node %s")
		if err != nil {
			return err
		}
		s.setMigrating(slot, n)
	case "importing":
		if s.slots[slot] == s.myself {
			return errorf("I'm already the owner of hash slot %d", slot)
		}
		n, err := lookup("I don't know about node %s")
		if err != nil {
			return err
		}
		s.setImporting(slot, n)
	case "stable":
		s.setImporting(slot, nil)
		s.setMigrating(slot, nil)
	case "node":
		n, err := lookup("Unknown node %s")
		if err != nil {
			return err
		}
		if s.slots[slot] == s.myself && n != s.myself && held != 0 {
			return errorf("Can't assign hashslot %d to a different node while I still hold keys for this hash slot.", slot)
		}
		if held == 0 {
			s.setMigrating(slot, nil)
		}
		s.delSlot(slot)
		s.addSlot(n, slot)
		if n == s.myself && s.importing[slot] != nil {
			// Taken without an election: a new epoch makes this claim win.
			if s.bumpEpoch() {
				s.logf("configEpoch updated after importing slot %d", slot)
			}
			s.setImporting(slot, nil)
			s.broadcastPong()
		}
	}
	s.changed()
	return nil
}

// Forget removes a node from the table and keeps it out for a minute.
func (s *State) Forget(name string) error {
	s.lock()
	defer s.unlock()
	n := s.nodes[name]
	switch {
	case n == nil:
		return errorf("Unknown node %s", name)
	case n == s.myself:
		return Error("I tried hard but I can't forget myself...")
	case s.myself.Master == n:
		return Error("Can't forget my master!")
	}
	s.forgotten[name] = s.now() + forgetTTL.Milliseconds()
	s.delNode(n)
	return nil
}

// Reset forgets every other node and drops myself's slots; hard also gives
// myself a new name and zeroes the epochs. A master holding keys refuses; a
// replica becomes a master of nothing, and the caller empties its data
// (wasReplica).
func (s *State) Reset(hard, hasKeys bool) (wasReplica bool, err error) {
	s.lock()
	defer s.unlock()
	me := s.myself
	if me.isMaster() && hasKeys {
		return false, Error("CLUSTER RESET can't be called with master nodes containing keys")
	}
	if wasReplica = me.isReplica(); wasReplica {
		me.Flags = me.Flags&^FlagReplica | FlagMaster
		me.Master = nil
		s.later = append(s.later, func() { s.host.Replicate("", 0) })
	}
	for slot := range SlotCount {
		s.setImporting(slot, nil)
		s.setMigrating(slot, nil)
		s.delSlot(slot)
	}
	for _, n := range s.nodes {
		if n != s.myself {
			s.delNode(n)
		}
	}
	if hard {
		s.currentEpoch, s.lastVote, s.myself.ConfigEpoch = 0, 0, 0
		s.renameNode(s.myself, randomName())
		s.myself.ShardID = randomName()
		s.logf("Node hard reset, now I'm %s", s.myself.Name)
	}
	s.changed()
	return wasReplica, nil
}

// SaveConfig writes nodes.conf now.
func (s *State) SaveConfig() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saveConfigNow()
}

// SetConfigEpoch sets myself's config epoch, only while it knows no other node.
func (s *State) SetConfigEpoch(epoch int64) error {
	s.lock()
	defer s.unlock()
	switch {
	case epoch < 0:
		return errorf("Invalid config epoch specified: %d", epoch)
	case len(s.nodes) > 1:
		return Error("The user can assign a config epoch only when the node does not know any other node.")
	case s.myself.ConfigEpoch != 0:
		return Error("Node config epoch is already non-zero")
	}
	s.myself.ConfigEpoch = uint64(epoch)
	s.currentEpoch = max(s.currentEpoch, uint64(epoch))
	s.changed()
	return nil
}

// BumpEpoch is CLUSTER BUMPEPOCH: whether the epoch changed, and myself's.
func (s *State) BumpEpoch() (bool, uint64) {
	s.lock()
	defer s.unlock()
	bumped := s.bumpEpoch()
	return bumped, s.myself.ConfigEpoch
}

// CountFailureReports is the number of valid failure reports about a node.
func (s *State) CountFailureReports(name string) (int, error) {
	s.lock()
	defer s.unlock()
	n := s.nodes[name]
	if n == nil {
		return 0, errorf("Unknown node %s", name)
	}
	s.cleanFailureReports(n)
	return len(n.failReports), nil
}

// Info is CLUSTER INFO's text.
func (s *State) Info() string {
	s.lock()
	defer s.unlock()
	assigned, okSlots, pfail, fail := 0, 0, 0, 0
	for _, n := range s.slots {
		if n == nil {
			continue
		}
		assigned++
		switch {
		case n.failed():
			fail++
		case n.timedOut():
			pfail++
		default:
			okSlots++
		}
	}
	state := "fail"
	if s.ok {
		state = "ok"
	}
	epoch := s.myself.ConfigEpoch
	if s.myself.isReplica() && s.myself.Master != nil {
		epoch = s.myself.Master.ConfigEpoch
	}
	b := fmt.Appendf(nil, "cluster_state:%s\r\ncluster_slots_assigned:%d\r\ncluster_slots_ok:%d\r\ncluster_slots_pfail:%d\r\ncluster_slots_fail:%d\r\ncluster_known_nodes:%d\r\ncluster_size:%d\r\ncluster_current_epoch:%d\r\ncluster_my_epoch:%d\r\n",
		state, assigned, okSlots, pfail, fail, len(s.nodes), s.size, s.currentEpoch, epoch)
	stats := func(counts *[typeCount]int64, dir string) {
		var total int64
		for t, c := range counts {
			if c != 0 {
				total += c
				b = fmt.Appendf(b, "cluster_stats_messages_%s_%s:%d\r\n", typeNames[t], dir, c)
			}
		}
		b = fmt.Appendf(b, "cluster_stats_messages_%s:%d\r\n", dir, total)
	}
	stats(&s.statsSent, "sent")
	stats(&s.statsRecv, "received")
	b = append(b, "total_cluster_links_buffer_limit_exceeded:0\r\n"...)
	return string(b)
}

// typeNames name the message types in CLUSTER INFO.
var typeNames = [typeCount]string{"ping", "pong", "meet", "fail", "publish", "auth-req", "auth-ack", "update", "mfstart", "module", "publishshard"}

// Nodes is CLUSTER NODES's text, the same lines as nodes.conf.
func (s *State) Nodes() string {
	s.lock()
	defer s.unlock()
	var b []byte
	for _, n := range s.sortedNodes() {
		b = s.describe(b, n)
		b = append(b, '\n')
	}
	return string(b)
}

// describe appends n's line of CLUSTER NODES.
func (s *State) describe(b []byte, n *Node) []byte {
	// strconv rather than fmt: nodes.conf is written on every slot change.
	b = append(b, n.Name...)
	b = append(b, ' ')
	b = append(b, n.IP...)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(n.Port), 10)
	b = append(b, '@')
	b = strconv.AppendInt(b, int64(n.CPort), 10)
	if n.Hostname != "" {
		b = append(b, ',')
		b = append(b, n.Hostname...)
	}
	b = append(b, ' ')
	b = append(b, flagString(n.Flags)...)
	master := "-"
	epoch := n.ConfigEpoch
	if n.Master != nil {
		master = n.Master.Name
		if n.isReplica() {
			epoch = n.Master.ConfigEpoch
		}
	}
	linkState := "disconnected"
	if n.link != nil || n == s.myself {
		linkState = "connected"
	}
	b = append(b, ' ')
	b = append(b, master...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, n.pingSent, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, n.pongReceived, 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, epoch, 10)
	b = append(b, ' ')
	b = append(b, linkState...)
	b = slotRanges(b, &n.Slots)
	if n == s.myself {
		for slot := s.open.next(0, true); slot < SlotCount; slot = s.open.next(slot+1, true) {
			b = append(b, " ["...)
			b = strconv.AppendInt(b, int64(slot), 10)
			if m := s.migrating[slot]; m != nil {
				b = append(b, "->-"...)
				b = append(b, m.Name...)
			} else {
				b = append(b, "-<-"...)
				b = append(b, s.importing[slot].Name...)
			}
			b = append(b, ']')
		}
	}
	return b
}

// sortedNodes lists the table with myself first, then by name: a stable order.
func (s *State) sortedNodes() []*Node {
	out := make([]*Node, 0, len(s.nodes))
	out = append(out, s.myself)
	for _, n := range s.nodes {
		if n != s.myself {
			out = append(out, n)
		}
	}
	rest := out[1:]
	for i := 1; i < len(rest); i++ {
		for j := i; j > 0 && rest[j].Name < rest[j-1].Name; j-- {
			rest[j], rest[j-1] = rest[j-1], rest[j]
		}
	}
	return out
}

// ShardNode is a node as CLUSTER SLOTS and CLUSTER SHARDS describe it.
type ShardNode struct {
	Name, IP, Hostname string
	Port               int
	Master, Failed     bool
	Offset             int64
}

// Shard is a master's slot ranges and its nodes (the master first).
type Shard struct {
	Ranges [][2]int
	Nodes  []ShardNode
}

// Shards lists every master that serves slots, or every master for
// CLUSTER SHARDS (all).
func (s *State) Shards(all bool) []Shard {
	s.lock()
	defer s.unlock()
	var out []Shard
	for _, n := range s.sortedNodes() {
		if !n.isMaster() || (!all && n.NumSlots == 0) || n.Flags&FlagHandshake != 0 {
			continue
		}
		sh := Shard{Ranges: n.Slots.Ranges()}
		sh.Nodes = append(sh.Nodes, ShardNode{Name: n.Name, IP: s.endpoint(n), Hostname: n.Hostname, Port: n.Port, Master: true, Failed: n.failed(), Offset: s.offsetOf(n)})
		for _, r := range s.sortedNodes() {
			if r.Master == n && r.isReplica() {
				sh.Nodes = append(sh.Nodes, ShardNode{Name: r.Name, IP: s.endpoint(r), Hostname: r.Hostname, Port: r.Port, Failed: r.failed(), Offset: s.offsetOf(r)})
			}
		}
		out = append(out, sh)
	}
	return out
}

// offsetOf is n's replication offset: the host's for myself, else the
// one its last message carried.
func (s *State) offsetOf(n *Node) int64 {
	if n == s.myself {
		return s.host.ReplicationOffset()
	}
	return int64(n.replOffset)
}

// Link is a bus link as CLUSTER LINKS describes it.
type Link struct {
	Direction, Node     string
	CreateTime          int64
	Events              string
	SendBufferAllocated int64
	SendBufferUsed      int64
}

// Links lists the bus links.
func (s *State) Links() []Link {
	s.lock()
	defer s.unlock()
	var out []Link
	for _, n := range s.sortedNodes() {
		for _, l := range []*link{n.link, n.inbound} {
			if l == nil {
				continue
			}
			dir, events := "to", "rw"
			if l.inbound {
				dir, events = "from", "r"
			}
			out = append(out, Link{Direction: dir, Node: n.Name, CreateTime: l.created, Events: events})
		}
	}
	return out
}

// Close stops the bus.
func (s *State) Close() {
	s.mu.Lock()
	select {
	case <-s.done:
		s.mu.Unlock()
		return
	default:
	}
	close(s.done)
	for _, l := range s.listeners {
		l.Close()
	}
	for l := range s.links {
		s.freeLink(l)
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.flushSave()
}

// randomNode picks a random element of nodes (nil for none).
func randomNode(nodes []*Node) *Node {
	if len(nodes) == 0 {
		return nil
	}
	return nodes[rand.IntN(len(nodes))]
}
