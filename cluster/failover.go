package cluster

import "math/rand/v2"

// Automatic failover, Redis's election: when its master is flagged fail,
// a replica waits a moment (longer the further its replication offset is
// behind its siblings'), takes a new currentEpoch and asks the masters for
// their vote (FAILOVER_AUTH_REQUEST). A master votes once per epoch, for
// one replica of a failed master per twice the node timeout, and only if
// no slot the replica claims has a newer config (FAILOVER_AUTH_ACK). With
// the votes of a majority of the slot-serving masters the replica takes
// its master's slots with the election's epoch as its config epoch, tells
// everyone (PONG) and promotes itself (Host.Replicate("", 0)).

// election is a replica's current (or last) election.
type election struct {
	start int64  // ms: when the request goes out
	epoch uint64 // the epoch asked for
	rank  int
	votes int
	sent  bool
}

// FailoverOptions are the settings of a replica's elections.
type FailoverOptions struct {
	// NoFailover is cluster-replica-no-failover.
	NoFailover func() bool
	// ValidityFactor is cluster-replica-validity-factor: a replica whose
	// data is older than node timeout x factor + the replication ping
	// period does not run for election (0: any data age).
	ValidityFactor func() int
	// PingPeriod is repl-ping-replica-period, in ms.
	PingPeriod func() int64
}

// rank is how many replicas of my master have a greater replication
// offset than mine: the seconds my election waits for theirs.
func (s *State) rank() int {
	mine := s.host.ReplicationOffset()
	rank := 0
	for _, n := range s.nodes {
		if n != s.myself && n.isReplica() && n.Master == s.myself.Master && n.Flags&FlagNoFailover == 0 && int64(n.replOffset) > mine {
			rank++
		}
	}
	return rank
}

// handleReplicaFailover is a replica's part of the cron: start, advance or
// win an election when its master failed.
func (s *State) handleReplicaFailover() {
	me := s.myself
	master := me.Master
	manual := s.manual.end != 0 && s.manual.canStart
	if !me.isReplica() || master == nil || (!master.failed() && !manual) || master.NumSlots == 0 {
		return
	}
	if f := s.opt.Failover.NoFailover; f != nil && f() && !manual {
		return
	}
	now := s.now()
	timeout := s.opt.NodeTimeout.Milliseconds()
	if f := s.opt.Failover.ValidityFactor; f != nil && f() > 0 && s.opt.Failover.PingPeriod != nil && !manual {
		age := s.host.ReplicationDataAge()
		if age > timeout {
			age -= timeout
		}
		if age > s.opt.Failover.PingPeriod()+timeout*int64(f()) {
			return // too old to be trusted: a human must decide
		}
	}
	authTimeout := max(timeout*2, 2000)
	e := &s.election
	age := now - e.start
	if age > authTimeout*2 {
		e.rank = s.rank()
		e.start = now + 500 + rand.Int64N(500) + int64(e.rank)*1000
		e.votes, e.sent = 0, false
		if manual { // no delay: the master is there, and chose this replica
			e.start, e.rank = now, 0
			age = 0
		} else {
			s.logf("Start of election delayed for %d milliseconds (rank #%d, offset %d).", e.start-now, e.rank, s.host.ReplicationOffset())
			return
		}
	}
	if !e.sent && !manual {
		if r := s.rank(); r > e.rank {
			e.start += int64(r-e.rank) * 1000
			e.rank = r
		}
	}
	if now < e.start || age > authTimeout {
		return
	}
	if !e.sent {
		s.currentEpoch++
		e.epoch, e.sent = s.currentEpoch, true
		s.logf("Starting a failover election for epoch %d.", e.epoch)
		h := s.header(TypeAuthRequest)
		if manual {
			h.MFlags[0] |= mflagForceAck
		}
		s.broadcast(&Message{Header: h})
		s.dirtyConfig = true
		return
	}
	if e.votes < s.size/2+1 {
		return
	}
	s.logf("Failover election won: I'm the new master.")
	if me.ConfigEpoch < e.epoch {
		me.ConfigEpoch = e.epoch
		s.logf("configEpoch set to %d after successful failover", e.epoch)
	}
	s.replaceMaster()
	s.resetManualFailover()
}

// replaceMaster makes myself a master serving its master's slots.
func (s *State) replaceMaster() {
	me, old := s.myself, s.myself.Master
	me.Flags = me.Flags&^FlagReplica | FlagMaster
	me.Master = nil
	for slot := range SlotCount {
		if s.slots[slot] == old {
			s.delSlot(slot)
			s.addSlot(me, slot)
		}
	}
	s.changed()
	s.updateState()
	s.broadcastPong()
	s.later = append(s.later, func() { s.host.Replicate("", 0) })
}

// voteIfNeeded is a master's answer to a FAILOVER_AUTH_REQUEST from node.
func (s *State) voteIfNeeded(node *Node, m *Message) {
	me := s.myself
	if !me.isMaster() || me.NumSlots == 0 {
		return
	}
	if m.CurrentEpoch < s.currentEpoch || s.lastVote == s.currentEpoch {
		return
	}
	master := node.Master
	if !node.isReplica() || master == nil || (!master.failed() && m.MFlags[0]&mflagForceAck == 0) {
		return
	}
	now := s.now()
	if now-master.votedTime < s.opt.NodeTimeout.Milliseconds()*2 {
		return
	}
	for slot := range SlotCount {
		if owner := s.slots[slot]; m.Slots.Has(slot) && owner != nil && owner.ConfigEpoch > m.ConfigEpoch {
			return // the replica's claim is stale
		}
	}
	s.lastVote = s.currentEpoch
	master.votedTime = now
	s.dirtyConfig = true
	s.logf("Failover auth granted to %.40s for epoch %d", node.Name, s.currentEpoch)
	s.send(node.link, &Message{Header: s.header(TypeAuthAck)})
}

// Manual failover (CLUSTER FAILOVER): the replica sends MFSTART to its
// master, which pauses its writers and sends its replication offset in a
// PING flagged paused; once the replica's offset reaches it, the replica
// runs the election at once, and masters vote (force ack) though its
// master did not fail. FORCE skips the master's part, TAKEOVER the
// election: the replica takes a new epoch and the slots by itself.

// mfTimeout is how long a manual failover may take.
const mfTimeout = 5000

// Message flags, in the first byte of the header's.
const (
	mflagPaused   = 1
	mflagForceAck = 2
)

// manualFailover is the one in progress: end is 0 when none.
type manualFailover struct {
	end          int64
	replica      *Node // on the master: the replica taking over
	masterOffset int64 // on the replica: the paused master's offset, -1 unknown
	canStart     bool
}

// Failover starts a manual failover on a replica: mode is "", "force" or
// "takeover".
func (s *State) Failover(mode string) error {
	s.lock()
	defer s.unlock()
	me := s.myself
	if me.isMaster() {
		return errorf("You should send CLUSTER FAILOVER to a replica")
	}
	master := me.Master
	if master == nil {
		return errorf("I'm a replica but my master is unknown to me")
	}
	if mode == "" && (master.failed() || master.link == nil) {
		return errorf("Master is down or failed, please use CLUSTER FAILOVER FORCE")
	}
	s.resetManualFailover()
	s.manual.end = s.now() + mfTimeout
	switch mode {
	case "takeover":
		s.logf("Taking over the master (user request).")
		s.bumpEpoch()
		s.replaceMaster()
		s.resetManualFailover()
	case "force":
		s.logf("Forced failover user request accepted.")
		s.manual.canStart = true
	default:
		s.logf("Manual failover user request accepted.")
		s.send(master.link, &Message{Header: s.header(TypeMFStart)})
	}
	return nil
}

// resetManualFailover ends the manual failover, unpausing a master's writers.
func (s *State) resetManualFailover() {
	if s.manual.end != 0 && s.manual.replica != nil {
		s.later = append(s.later, func() { s.host.PauseWrites(0) })
	}
	s.manual = manualFailover{masterOffset: -1}
}

// mfStart is a master's answer to MFSTART from its replica.
func (s *State) mfStart(sender *Node) {
	if sender.Master != s.myself || !s.myself.isMaster() {
		return
	}
	s.resetManualFailover()
	s.logf("Manual failover requested by replica %.40s.", sender.Name)
	s.manual.end = s.now() + mfTimeout
	s.manual.replica = sender
	end := s.now() + 2*mfTimeout
	s.later = append(s.later, func() {
		s.host.PauseWrites(end)
		// Flagged paused, with the offset the replica waits for: read
		// once the pause holds the writers.
		s.lock()
		defer s.unlock()
		if s.manual.replica == sender {
			s.sendPing(sender.link, TypePing)
		}
	})
}

// manualFailoverCron times a manual failover out, and lets a replica start
// its election once it caught up with its paused master.
func (s *State) manualFailoverCron() {
	m := &s.manual
	if m.end == 0 {
		return
	}
	if s.now() > m.end {
		s.logf("Manual failover timed out.")
		s.resetManualFailover()
		return
	}
	if m.replica == nil && !m.canStart && m.masterOffset >= 0 && m.masterOffset == s.host.ReplicationOffset() {
		m.canStart = true
		s.logf("All master replication stream processed, manual failover can start.")
	}
}
