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
	if !me.isReplica() || master == nil || !master.failed() || master.NumSlots == 0 {
		return
	}
	if f := s.opt.Failover.NoFailover; f != nil && f() {
		return
	}
	now := s.now()
	timeout := s.opt.NodeTimeout.Milliseconds()
	if f := s.opt.Failover.ValidityFactor; f != nil && f() > 0 && s.opt.Failover.PingPeriod != nil {
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
		s.logf("Start of election delayed for %d milliseconds (rank #%d, offset %d).", e.start-now, e.rank, s.host.ReplicationOffset())
		return
	}
	if !e.sent {
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
	if !node.isReplica() || master == nil || !master.failed() {
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
