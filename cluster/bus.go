package cluster

import (
	"bufio"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"time"
)

// link is a bus connection: outbound to a node, or inbound from one. Its
// writer goroutine drains queue, so nothing holding the state's lock
// waits on a socket.
type link struct {
	conn    net.Conn
	node    *Node // for an inbound link, nil until the sender is known
	inbound bool
	created int64
	queue   chan []byte
	closed  chan struct{}
}

// sendQueue is how many messages a link holds for a slow peer before it is
// dropped (and reconnected by the cron).
const sendQueue = 1024

func (s *State) newLink(conn net.Conn, n *Node, inbound bool) *link {
	l := &link{conn: conn, node: n, inbound: inbound, created: s.now(), queue: make(chan []byte, sendQueue), closed: make(chan struct{})}
	s.links[l] = struct{}{}
	s.wg.Add(2)
	go s.writeLoop(l)
	go s.readLoop(l)
	return l
}

// freeLink closes l and detaches it from its node.
func (s *State) freeLink(l *link) {
	if l == nil {
		return
	}
	select {
	case <-l.closed:
		return
	default:
	}
	close(l.closed)
	l.conn.Close()
	delete(s.links, l)
	if n := l.node; n != nil {
		if n.link == l {
			n.link = nil
		}
		if n.inbound == l {
			n.inbound = nil
		}
	}
}

func (s *State) writeLoop(l *link) {
	defer s.wg.Done()
	w := bufio.NewWriter(l.conn)
	for {
		select {
		case <-l.closed:
			return
		case msg := <-l.queue:
			w.Write(msg)
			for more := true; more; {
				select {
				case m := <-l.queue:
					w.Write(m)
				default:
					more = false
				}
			}
			if err := w.Flush(); err != nil {
				s.lock()
				s.freeLink(l)
				s.unlock()
				return
			}
		}
	}
}

// readLoop reads whole messages and processes each under the lock; a link
// sending something that is no bus message is dropped.
func (s *State) readLoop(l *link) {
	defer s.wg.Done()
	r := bufio.NewReaderSize(l.conn, 16<<10)
	var buf []byte
	for {
		head, err := r.Peek(8)
		if err != nil {
			break
		}
		n, err := frameLength(head)
		if err != nil {
			break
		}
		if buf, err = readFrame(r, buf[:0], n); err != nil {
			break
		}
		m, err := Parse(buf)
		s.lock()
		if err == nil {
			if m.Type < typeCount {
				s.statsRecv[m.Type]++
			}
			s.process(l, m)
		}
		alive := !isClosed(l)
		s.unlock()
		if !alive {
			return
		}
		if cap(buf) > 1<<20 {
			buf = nil // a large PUBLISH's buffer is not kept
		}
	}
	s.lock()
	s.freeLink(l)
	s.unlock()
}

// readFrame reads a message of n bytes into buf, growing it as the bytes
// arrive: a peer announcing a huge length gets no more memory than it sends.
func readFrame(r io.Reader, buf []byte, n int) ([]byte, error) {
	for len(buf) < n {
		chunk := min(n-len(buf), max(len(buf), 64<<10))
		if cap(buf)-len(buf) < chunk {
			buf = append(make([]byte, 0, len(buf)+chunk), buf...)
		}
		if _, err := io.ReadFull(r, buf[len(buf):len(buf)+chunk]); err != nil {
			return buf, err
		}
		buf = buf[:len(buf)+chunk]
	}
	return buf, nil
}

func isClosed(l *link) bool {
	select {
	case <-l.closed:
		return true
	default:
		return false
	}
}

// send queues m on l, dropping the link when its peer does not keep up.
func (s *State) send(l *link, m *Message) {
	if l == nil || isClosed(l) {
		return
	}
	if m.Type < typeCount {
		s.statsSent[m.Type]++
	}
	select {
	case l.queue <- m.Encode(nil):
	default:
		s.freeLink(l)
	}
}

// Start listens on the bus port and starts the cron.
func (s *State) Start() error {
	binds := s.opt.BindAddresses
	if len(binds) == 0 {
		binds = []string{""}
	}
	for _, b := range binds {
		optional := len(b) > 0 && b[0] == '-'
		if optional {
			b = b[1:]
		}
		if b == "*" {
			b = ""
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(b, strconv.Itoa(s.opt.BusPort)))
		if err != nil {
			if optional {
				continue
			}
			s.Close()
			return err
		}
		s.listeners = append(s.listeners, ln)
		s.wg.Add(1)
		go s.accept(ln)
	}
	s.wg.Add(2)
	go s.cron()
	go s.saveLoop()
	return nil
}

func (s *State) accept(ln net.Listener) {
	defer s.wg.Done()
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		s.lock()
		if isDone(s.done) {
			conn.Close()
		} else {
			s.newLink(conn, nil, true)
		}
		s.unlock()
	}
}

func isDone(done chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// header fills the fixed part of a message from myself.
func (s *State) header(typ uint16) Header {
	me := s.myself
	master := me
	if me.isReplica() && me.Master != nil {
		master = me.Master
	}
	h := Header{
		Type: typ, Port: uint16(s.announcedPort()), CPort: uint16(s.announcedBusPort()),
		CurrentEpoch: s.currentEpoch, ConfigEpoch: master.ConfigEpoch,
		Sender: me.Name, Slots: master.Slots, Flags: me.Flags, IP: s.opt.AnnounceIP,
		Offset: uint64(s.host.ReplicationOffset()),
	}
	if me.Master != nil {
		h.MasterOf = me.Master.Name
	}
	if !s.ok {
		h.State = 1
	}
	if me.isMaster() && s.manual.end != 0 {
		h.MFlags[0] |= mflagPaused
	}
	return h
}

// sendPing sends a PING, PONG or MEET with gossip about a few other nodes
// (a tenth of the table, at least 3) and every node in pfail.
func (s *State) sendPing(l *link, typ uint16) {
	if l == nil {
		return
	}
	m := &Message{Header: s.header(typ), Hostname: s.myself.Hostname}
	if typ == TypePing && !l.inbound && l.node != nil {
		l.node.pingSent = s.now()
	}
	wanted := min(max(len(s.nodes)/10, 3), len(s.nodes)-2)
	var candidates []*Node
	for _, n := range s.nodes {
		if n == s.myself || n.Flags&(FlagPFail|FlagHandshake|FlagNoAddr) != 0 || (n.link == nil && n.NumSlots == 0) {
			continue
		}
		candidates = append(candidates, n)
	}
	rand.Shuffle(len(candidates), func(i, j int) { candidates[i], candidates[j] = candidates[j], candidates[i] })
	for _, n := range candidates[:min(max(wanted, 0), len(candidates))] {
		m.Gossip = append(m.Gossip, gossipOf(n))
	}
	for _, n := range s.nodes {
		if n.Flags&FlagPFail != 0 && n.Flags&(FlagHandshake|FlagNoAddr) == 0 {
			m.Gossip = append(m.Gossip, gossipOf(n))
		}
	}
	s.send(l, m)
}

func gossipOf(n *Node) Gossip {
	return Gossip{Name: n.Name, PingSent: uint32(n.pingSent / 1000), PongReceived: uint32(n.pongReceived / 1000),
		IP: n.IP, Port: uint16(n.Port), CPort: uint16(n.CPort), Flags: n.Flags, PPort: uint16(n.PPort)}
}

// broadcastPong tells every connected node this node's config at once.
func (s *State) broadcastPong() {
	for _, n := range s.nodes {
		if n != s.myself && n.Flags&FlagHandshake == 0 && n.link != nil {
			s.sendPing(n.link, TypePong)
		}
	}
}

func (s *State) broadcast(m *Message) {
	for _, n := range s.nodes {
		if n != s.myself && n.Flags&FlagHandshake == 0 && n.link != nil {
			s.send(n.link, m)
		}
	}
}

// Publish sends a PUBLISH to every node.
func (s *State) Publish(channel, message []byte) {
	s.lock()
	defer s.unlock()
	m := &Message{Header: s.header(TypePublish), Channel: channel, Payload: message}
	s.broadcast(m)
}

// PublishShard sends an SPUBLISH to the other nodes of myself's shard: its
// master (myself, or the one it replicates) and that master's replicas,
// whose clients may subscribe to the shard's channels too.
func (s *State) PublishShard(channel, message []byte) {
	s.lock()
	defer s.unlock()
	master := s.myself
	if s.myself.isReplica() && s.myself.Master != nil {
		master = s.myself.Master
	}
	m := &Message{Header: s.header(TypePublishShard), Channel: channel, Payload: message}
	for _, n := range s.nodes {
		if n != s.myself && (n == master || n.Master == master) && n.Flags&FlagHandshake == 0 && n.link != nil {
			s.send(n.link, m)
		}
	}
}

// process handles one message received on l.
func (s *State) process(l *link, m *Message) {
	now := s.now()
	sender := l.node
	if sender == nil || sender.Flags&FlagHandshake != 0 {
		sender = s.nodes[m.Sender]
		if sender != nil && l.inbound && l.node == nil {
			l.node = sender
			if sender.inbound != nil && sender.inbound != l {
				s.freeLink(sender.inbound)
			}
			sender.inbound = l
		}
	}
	if sender != nil {
		sender.dataReceived = now
	}
	var senderConfigEpoch uint64
	if sender != nil && sender.Flags&FlagHandshake == 0 {
		senderConfigEpoch = m.ConfigEpoch
		if m.CurrentEpoch > s.currentEpoch {
			s.currentEpoch = m.CurrentEpoch
			s.dirtyConfig = true
		}
		if m.ConfigEpoch > sender.ConfigEpoch {
			sender.ConfigEpoch = m.ConfigEpoch
			s.changed()
		}
		sender.replOffset = m.Offset
	}

	switch m.Type {
	case TypePing, TypeMeet:
		if (m.Type == TypeMeet || s.myself.IP == "") && s.opt.AnnounceIP == "" {
			if host, _, err := net.SplitHostPort(l.conn.LocalAddr().String()); err == nil && host != s.myself.IP {
				s.myself.IP = host
				s.logf("IP address for this node updated to %s", host)
				s.changed()
			}
		}
		if sender == nil && m.Type == TypeMeet {
			n := s.newNode(randomName(), FlagHandshake)
			n.IP = m.IP
			if n.IP == "" {
				n.IP, _, _ = net.SplitHostPort(l.conn.RemoteAddr().String())
			}
			n.Port, n.PPort, n.CPort = int(m.Port), int(m.PPort), int(m.CPort)
			s.addNode(n)
			s.changed()
			s.processGossip(m, nil)
		}
		s.sendPing(l, TypePong)
	}

	switch m.Type {
	case TypePing, TypePong, TypeMeet:
		if !l.inbound {
			n := l.node
			if n.Flags&FlagHandshake != 0 {
				if sender != nil && sender != n {
					// Already known under its real name: keep that one.
					s.updateAddress(sender, l, m)
					s.delNode(n)
					return
				}
				s.renameNode(n, m.Sender)
				n.Flags &^= FlagHandshake
				n.Flags |= m.Flags & (FlagMaster | FlagReplica)
				sender = n
				s.changed()
			} else if n.Name != m.Sender {
				// Another node answers at this address now.
				n.Flags |= FlagNoAddr
				n.IP, n.Port, n.PPort, n.CPort = "", 0, 0, 0
				s.freeLink(l)
				s.changed()
				return
			}
		}
		if sender != nil && m.Type == TypePing && sender.Flags&FlagHandshake == 0 && s.updateAddress(sender, l, m) {
			s.changed()
		}
		if !l.inbound && m.Type == TypePong {
			n := l.node
			n.pongReceived = now
			n.pingSent = 0
			if n.timedOut() {
				n.Flags &^= FlagPFail
				s.changed()
			} else if n.failed() {
				s.clearFailureIfNeeded(n)
			}
		}
		if sender == nil {
			return
		}
		if sender.Flags&FlagHandshake != 0 {
			return
		}
		if m.MasterOf == "" {
			if !sender.isMaster() {
				sender.Flags = sender.Flags&^FlagReplica | FlagMaster
				sender.Master = nil
				s.changed()
			}
		} else if master := s.nodes[m.MasterOf]; master != nil {
			if sender.isMaster() {
				for slot := range SlotCount {
					if s.slots[slot] == sender {
						s.delSlot(slot)
					}
				}
				sender.Flags = sender.Flags&^FlagMaster | FlagReplica
				s.changed()
			}
			if sender.Master != master {
				sender.Master = master
				s.changed()
			}
		}
		senderMaster := sender
		if sender.isReplica() {
			senderMaster = sender.Master
		}
		dirty := senderMaster != nil && senderMaster.Slots != m.Slots
		if dirty && sender.isMaster() {
			s.updateSlotsWith(sender, senderConfigEpoch, &m.Slots)
		}
		if dirty {
			for slot := range SlotCount {
				if !m.Slots.Has(slot) {
					continue
				}
				owner := s.slots[slot]
				if owner == nil || owner == sender {
					continue
				}
				if owner.ConfigEpoch > senderConfigEpoch {
					s.sendUpdate(sender.link, owner)
					break
				}
			}
		}
		if s.myself.isMaster() && sender.isMaster() && senderConfigEpoch == s.myself.ConfigEpoch {
			s.handleEpochCollision(sender)
		}
		s.processGossip(m, sender)
		if sender.Hostname != m.Hostname {
			sender.Hostname = m.Hostname
			s.changed()
		}
		if m.ShardID != "" {
			sender.ShardID = m.ShardID
		}
		// My paused master's offset, which a manual failover waits for:
		// each paused message's, as the first may be read before the
		// pause took hold of a write in flight.
		if s.manual.end != 0 && sender == s.myself.Master && m.MFlags[0]&mflagPaused != 0 && s.manual.masterOffset != int64(m.Offset) {
			s.manual.masterOffset = int64(m.Offset)
			s.logf("Received replication offset for paused master manual failover: %d", m.Offset)
		}
	case TypeFail:
		if sender == nil {
			return
		}
		if failing := s.nodes[m.FailedNode]; failing != nil && failing.Flags&(FlagFail|FlagMyself) == 0 {
			s.logf("FAIL message received from %.40s about %.40s", m.Sender, m.FailedNode)
			failing.Flags = failing.Flags&^FlagPFail | FlagFail
			failing.failTime = now
			s.changed()
		}
	case TypePublish, TypePublishShard:
		if sender != nil {
			channel, payload := string(m.Channel), string(m.Payload) // m's bytes are the read buffer's
			s.later = append(s.later, func() { s.host.Deliver([]byte(channel), []byte(payload), m.Type == TypePublishShard) })
		}
	case TypeMFStart:
		if sender != nil {
			s.mfStart(sender)
		}
	case TypeAuthRequest:
		if sender != nil {
			s.voteIfNeeded(sender, m)
		}
	case TypeAuthAck:
		// A vote counts from a master serving slots, for this election.
		if sender != nil && sender.isMaster() && sender.NumSlots > 0 && m.CurrentEpoch >= s.election.epoch {
			s.election.votes++
			s.handleReplicaFailover()
		}
	case TypeUpdate:
		if sender == nil {
			return
		}
		n := s.nodes[m.UpdateNode]
		if n == nil || n.ConfigEpoch >= m.UpdateEpoch {
			return
		}
		if n.isReplica() {
			n.Flags = n.Flags&^FlagReplica | FlagMaster
			n.Master = nil
		}
		n.ConfigEpoch = m.UpdateEpoch
		s.changed()
		s.updateSlotsWith(n, m.UpdateEpoch, m.UpdateSlots)
	}
}

// updateAddress takes the address a node announces (or the link's peer
// address) when it changed; it reports whether it did.
func (s *State) updateAddress(n *Node, l *link, m *Message) bool {
	if n == s.myself {
		return false
	}
	ip := m.IP
	if ip == "" {
		ip, _, _ = net.SplitHostPort(l.conn.RemoteAddr().String())
	}
	if n.IP == ip && n.Port == int(m.Port) && n.CPort == int(m.CPort) && n.PPort == int(m.PPort) {
		return false
	}
	n.IP, n.Port, n.CPort, n.PPort = ip, int(m.Port), int(m.CPort), int(m.PPort)
	n.Flags &^= FlagNoAddr
	if n.link != nil && n.link != l {
		s.freeLink(n.link)
	}
	return true
}

// updateSlotsWith takes the slots a master claims with a newer config
// epoch than their owners'. Keys this node held in slots it lost are
// deleted (their new owner has the current version), unless it becomes
// the new owner's replica, as Redis: its data is then the new master's
// business, and a DEL of each key in its stream would reach whoever
// continues that stream (a promoted replica in durable mode takes it).
func (s *State) updateSlotsWith(sender *Node, epoch uint64, slots *Slots) {
	if sender == s.myself {
		return
	}
	myMaster := s.myself
	if s.myself.isReplica() {
		myMaster = s.myself.Master
	}
	tookMine := 0
	var lost []int // slots of mine taken: their keys go, unless I follow sender
	for slot := range SlotCount {
		if !slots.Has(slot) {
			continue
		}
		owner := s.slots[slot]
		if owner == sender || s.importing[slot] != nil {
			continue
		}
		if owner == nil || owner.ConfigEpoch < epoch {
			if owner == s.myself {
				lost = append(lost, slot)
			}
			if owner != nil && owner == myMaster {
				tookMine++
			}
			s.delSlot(slot)
			s.addSlot(sender, slot)
		}
	}
	// The shard's master lost its last slot to sender: a replica follows
	// the new master; a master only when sender took exactly its slots (a
	// replica of it won an election while it was away), not when a
	// resharding emptied it.
	if tookMine > 0 && myMaster.NumSlots == 0 && sender.isMaster() &&
		(s.myself.isReplica() || sender.NumSlots == tookMine) {
		s.logf("Configuration change detected. Reconfiguring myself as a replica of %.40s", sender.Name)
		s.setMaster(sender)
		return
	}
	for _, slot := range lost {
		s.later = append(s.later, func() { s.host.DeleteKeysInSlot(slot) })
	}
}

func (s *State) sendUpdate(l *link, about *Node) {
	if l == nil {
		return
	}
	slots := about.Slots
	s.send(l, &Message{Header: s.header(TypeUpdate), UpdateEpoch: about.ConfigEpoch, UpdateNode: about.Name, UpdateSlots: &slots})
}

// handleEpochCollision gives myself a new epoch when another master has
// the same one and a greater name: of two colliding masters, the one with
// the smaller name moves.
func (s *State) handleEpochCollision(sender *Node) {
	if sender.Name <= s.myself.Name {
		return
	}
	s.currentEpoch++
	s.myself.ConfigEpoch = s.currentEpoch
	s.changed()
	s.logf("WARNING: configEpoch collision with node %.40s. configEpoch set to %d", sender.Name, s.myself.ConfigEpoch)
}

// processGossip applies what a message says about other nodes: failure
// reports from masters, newer pong times, new nodes.
func (s *State) processGossip(m *Message, sender *Node) {
	now := s.now()
	for _, g := range m.Gossip {
		n := s.nodes[g.Name]
		if n != nil {
			if sender != nil && sender.isMaster() && n != s.myself {
				if g.Flags&(FlagFail|FlagPFail) != 0 {
					n.failReports[sender] = now
					s.markFailingIfNeeded(n)
				} else {
					delete(n.failReports, sender)
				}
			}
			if g.Flags&(FlagFail|FlagPFail) == 0 && n.pingSent == 0 && len(n.failReports) == 0 {
				if pong := int64(g.PongReceived) * 1000; pong <= now+500 && pong > n.pongReceived {
					n.pongReceived = pong
				}
			}
			if n.Flags&(FlagFail|FlagPFail) != 0 && g.Flags&(FlagNoAddr|FlagFail|FlagPFail) == 0 &&
				(n.IP != g.IP || n.Port != int(g.Port) || n.CPort != int(g.CPort)) {
				s.freeLink(n.link)
				n.IP, n.Port, n.PPort, n.CPort = g.IP, int(g.Port), int(g.PPort), int(g.CPort)
				n.Flags &^= FlagNoAddr
				s.changed()
			}
			continue
		}
		if sender != nil && g.Flags&FlagNoAddr == 0 && !s.isForgotten(g.Name) {
			n := s.newNode(g.Name, g.Flags&(FlagMaster|FlagReplica))
			n.IP, n.Port, n.PPort, n.CPort = g.IP, int(g.Port), int(g.PPort), int(g.CPort)
			s.addNode(n)
			s.changed()
		}
	}
}

func (s *State) isForgotten(name string) bool {
	until, ok := s.forgotten[name]
	if ok && until < s.now() {
		delete(s.forgotten, name)
		return false
	}
	return ok
}

// cleanFailureReports drops reports older than twice the node timeout.
func (s *State) cleanFailureReports(n *Node) {
	limit := s.now() - 2*s.opt.NodeTimeout.Milliseconds()
	for r, t := range n.failReports {
		if t < limit {
			delete(n.failReports, r)
		}
	}
}

// markFailingIfNeeded flags n fail when a majority of the masters see it
// failing, and tells everyone.
func (s *State) markFailingIfNeeded(n *Node) {
	if !n.timedOut() || n.failed() {
		return
	}
	s.cleanFailureReports(n)
	failures := len(n.failReports)
	if s.myself.isMaster() {
		failures++
	}
	if failures < s.size/2+1 {
		return
	}
	s.logf("Marking node %.40s as failing (quorum reached).", n.Name)
	n.Flags = n.Flags&^FlagPFail | FlagFail
	n.failTime = s.now()
	s.changed()
	s.broadcast(&Message{Header: s.header(TypeFail), FailedNode: n.Name})
}

// clearFailureIfNeeded clears fail from a node that answers again: at once
// for a replica or a master without slots, after a while for a master
// whose slots nobody took.
func (s *State) clearFailureIfNeeded(n *Node) {
	if n.isReplica() || n.NumSlots == 0 {
		s.logf("Clear FAIL state for node %.40s: is reachable again.", n.Name)
		n.Flags &^= FlagFail
		s.changed()
		return
	}
	if n.isMaster() && s.now()-n.failTime > 2*s.opt.NodeTimeout.Milliseconds() {
		s.logf("Clear FAIL state for node %.40s: is reachable again and nobody is serving its slots after some time.", n.Name)
		n.Flags &^= FlagFail
		s.changed()
	}
}

// cron is Redis's clusterCron, ten times a second: connect to nodes,
// ping, detect timeouts.
func (s *State) cron() {
	defer s.wg.Done()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-tick.C:
		}
		s.lock()
		s.cronOnce()
		s.unlock()
	}
}

func (s *State) cronOnce() {
	s.iteration++
	now := s.now()
	timeout := s.opt.NodeTimeout.Milliseconds()
	handshakeTimeout := max(timeout, 1000)
	for _, n := range s.nodes {
		if n == s.myself || n.Flags&FlagNoAddr != 0 {
			continue
		}
		if n.Flags&FlagHandshake != 0 && now-n.created > handshakeTimeout {
			s.delNode(n)
			continue
		}
		if n.link == nil && !n.connecting {
			n.connecting = true
			s.wg.Add(1)
			go s.connect(n, n.IP, n.CPort, timeout)
		}
	}
	// Every second, ping the node among five random ones whose pong is oldest.
	if s.iteration%10 == 0 {
		var oldest *Node
		var pool []*Node
		for _, n := range s.nodes {
			pool = append(pool, n)
		}
		for range 5 {
			n := randomNode(pool)
			if n == nil || n == s.myself || n.link == nil || n.pingSent != 0 || n.Flags&FlagHandshake != 0 {
				continue
			}
			if oldest == nil || n.pongReceived < oldest.pongReceived {
				oldest = n
			}
		}
		if oldest != nil {
			s.sendPing(oldest.link, TypePing)
		}
	}
	for _, n := range s.nodes {
		if n == s.myself || n.Flags&(FlagNoAddr|FlagHandshake) != 0 {
			continue
		}
		l := n.link
		pingDelay := now - n.pingSent
		dataDelay := now - n.dataReceived
		if l != nil && now-l.created > timeout && n.pingSent != 0 && pingDelay > timeout/2 && dataDelay > timeout/2 {
			s.freeLink(l) // reconnect a link that seems stuck
		}
		if n.link != nil && n.pingSent == 0 && now-n.pongReceived > timeout/2 {
			s.sendPing(n.link, TypePing)
			continue
		}
		if n.pingSent == 0 {
			continue
		}
		if min(pingDelay, dataDelay) > timeout && !n.timedOut() && !n.failed() {
			s.logf("*** NODE %.40s possibly failing", n.Name)
			n.Flags |= FlagPFail
			s.changed()
		}
	}
	s.updateState()
	s.manualFailoverCron()
	s.handleReplicaFailover()
}

// connect opens the outbound link to n, then greets it with a MEET (when
// meeting it) or a PING.
func (s *State) connect(n *Node, ip string, port int, timeout int64) {
	defer s.wg.Done()
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(ip, strconv.Itoa(port)), time.Duration(max(timeout, 1000))*time.Millisecond)
	s.lock()
	defer s.unlock()
	n.connecting = false
	if err != nil {
		if n.pingSent == 0 {
			n.pingSent = s.now() // counts toward a timeout, as a ping would
		}
		return
	}
	if isDone(s.done) || s.nodes[n.Name] != n || n.link != nil {
		conn.Close()
		return
	}
	n.link = s.newLink(conn, n, false)
	old := n.pingSent
	if n.Flags&FlagMeet != 0 {
		s.sendPing(n.link, TypeMeet)
	} else {
		s.sendPing(n.link, TypePing)
	}
	if old != 0 {
		n.pingSent = old
	}
	n.Flags &^= FlagMeet
}
