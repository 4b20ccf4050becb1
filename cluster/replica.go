package cluster

// Replicas: CLUSTER REPLICATE makes myself a replica of a master, and the
// host replicates from it (Host.Replicate); a replica's messages carry its
// master's name, slots and config epoch, and its replication offset.

// Replicate makes myself a replica of the master named name. hasKeys says
// the host's keyspace is not empty: a master with keys or slots may not
// become a replica.
func (s *State) Replicate(name string, hasKeys bool) error {
	s.lock()
	defer s.unlock()
	n := s.nodes[name]
	if n == nil {
		return errorf("Unknown node %s", name)
	}
	if n == s.myself {
		return errorf("Can't replicate myself")
	}
	if n.isReplica() {
		return errorf("I can only replicate a master, not a replica.")
	}
	if s.myself.isMaster() && (s.myself.NumSlots != 0 || hasKeys) {
		return errorf("To set a master the node must be empty and without assigned slots.")
	}
	s.setMaster(n)
	return nil
}

// setMaster makes myself a replica of n, in the table and in the host.
func (s *State) setMaster(n *Node) {
	me := s.myself
	if me.isMaster() {
		for slot := range SlotCount {
			s.setImporting(slot, nil)
			s.setMigrating(slot, nil)
			if s.slots[slot] == me {
				s.delSlot(slot)
			}
		}
		me.Flags = me.Flags&^FlagMaster | FlagReplica
	}
	me.Master = n
	me.ShardID = n.ShardID
	for slot := range SlotCount {
		if s.slots[slot] != n {
			s.unsubscribe.Set(slot)
		}
	}
	s.unsubscribeAny = true
	s.resetManualFailover()
	s.changed()
	s.broadcastPong() // the others learn the new role at once
	s.startReplication()
}

// startReplication tells the host to replicate from myself's master.
func (s *State) startReplication() {
	if m := s.myself.Master; m != nil && s.myself.isReplica() {
		ip, port := m.IP, m.Port
		s.later = append(s.later, func() { s.host.Replicate(ip, port) })
	}
}

// Replicas lists the CLUSTER NODES lines of a master's replicas.
func (s *State) Replicas(name string) ([]string, error) {
	s.lock()
	defer s.unlock()
	n := s.nodes[name]
	if n == nil {
		return nil, errorf("Unknown node %s", name)
	}
	if !n.isMaster() {
		return nil, errorf("The specified node is not a master")
	}
	var out []string
	for _, r := range s.sortedNodes() {
		if r.Master == n && r.isReplica() {
			out = append(out, string(s.describe(nil, r)))
		}
	}
	return out, nil
}

// ResumeReplication starts the replication of a replica loaded from its
// config file.
func (s *State) ResumeReplication() {
	s.lock()
	defer s.unlock()
	s.startReplication()
}
