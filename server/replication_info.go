package server

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// What replication reports: INFO replication with Redis's fields, ROLE.

// writeReplicationInfo writes INFO's replication section.
func (s *Server) writeReplicationInfo(b *strings.Builder) {
	r := &s.repl
	r.mu.Lock()
	ids, link := r.ids, r.link
	replicas := append([]*replicaConn(nil), r.replicas...)
	r.mu.Unlock()
	now := time.Now()
	off := s.replOffset()
	if link == nil {
		field(b, "role", "master")
	} else {
		field(b, "role", "slave")
		field(b, "master_host", link.host)
		field(b, "master_port", link.port)
		state := link.state.Load()
		field(b, "master_link_status", upDown(state == linkConnected))
		lastIO := int64(-1)
		if t := link.lastIO.Load(); t != 0 {
			lastIO = (now.UnixMilli() - t) / 1000
		}
		field(b, "master_last_io_seconds_ago", lastIO)
		field(b, "master_sync_in_progress", boolInt(state == linkTransfer))
		field(b, "slave_read_repl_offset", off)
		field(b, "slave_repl_offset", off)
		if state == linkTransfer {
			read := link.syncRead.Load()
			field(b, "master_sync_total_bytes", -1)
			field(b, "master_sync_read_bytes", read)
			field(b, "master_sync_left_bytes", -1)
			field(b, "master_sync_perc", "0.00")
			field(b, "master_sync_last_io_seconds_ago", lastIO)
		}
		if state != linkConnected {
			down := int64(-1)
			if t := link.downSince.Load(); t != 0 {
				down = now.Unix() - t
			}
			field(b, "master_link_down_since_seconds", down)
		}
		field(b, "slave_priority", s.cfg.ReplicaPriority())
		field(b, "slave_read_only", boolInt(s.cfg.ReplicaReadOnly()))
		field(b, "replica_announced", boolInt(s.cfg.ReplicaAnnounced()))
	}
	field(b, "connected_slaves", len(replicas))
	if link == nil && s.cfg.MinReplicasToWrite() > 0 && s.cfg.MinReplicasMaxLag() > 0 {
		field(b, "min_slaves_good_slaves", r.goodReplicas.Load())
	}
	for i, rc := range replicas {
		lag := (now.UnixMilli() - rc.ackTime.Load()) / 1000
		if rc.ackTime.Load() == 0 {
			lag = 0
		}
		field(b, "slave"+strconv.Itoa(i), fmt.Sprintf("ip=%s,port=%d,state=%s,offset=%d,lag=%d",
			rc.addr(), rc.port.Load(), replicaStateNames[rc.state.Load()], rc.ackOff.Load(), lag))
	}
	field(b, "master_failover_state", failoverStateNames[s.failoverState()])
	field(b, "master_replid", ids.ID)
	field(b, "master_replid2", ids.ID2)
	field(b, "master_repl_offset", off)
	field(b, "second_repl_offset", ids.Second)
	bl := r.backlog.Load()
	field(b, "repl_backlog_active", boolInt(bl != nil))
	field(b, "repl_backlog_size", s.cfg.ReplBacklogSize())
	if bl != nil {
		start, end := bl.Offsets()
		field(b, "repl_backlog_first_byte_offset", start+1)
		field(b, "repl_backlog_histlen", end-start)
	} else {
		field(b, "repl_backlog_first_byte_offset", 0)
		field(b, "repl_backlog_histlen", 0)
	}
}

func upDown(up bool) string {
	if up {
		return "up"
	}
	return "down"
}

// backlogBytes is the memory the backlog holds (MEMORY STATS
// replication.backlog).
func (s *Server) backlogBytes() int64 {
	if bl := s.repl.backlog.Load(); bl != nil {
		start, end := bl.Offsets()
		return end - start
	}
	return 0
}

// roleCommand is ROLE: a master, its offset and its replicas (ip, port,
// acknowledged offset); or a replica, its master, link state and offset.
func roleCommand(x *Ctx) {
	s := x.s
	r := &s.repl
	r.mu.Lock()
	link := r.link
	replicas := append([]*replicaConn(nil), r.replicas...)
	r.mu.Unlock()
	if link != nil {
		x.W.Array(5)
		x.W.BulkString("slave")
		x.W.BulkString(link.host)
		x.W.Int(int64(link.port))
		x.W.BulkString([...]string{"connect", "connecting", "sync", "connected"}[link.state.Load()])
		off := int64(-1)
		if link.state.Load() == linkConnected {
			off = s.replOffset()
		}
		x.W.Int(off)
		return
	}
	x.W.Array(3)
	x.W.BulkString("master")
	x.W.Int(s.replOffset())
	online := replicas[:0:0]
	for _, rc := range replicas {
		if rc.state.Load() == replicaOnline {
			online = append(online, rc)
		}
	}
	x.W.Array(len(online))
	for _, rc := range online {
		x.W.Array(3)
		x.W.BulkString(rc.addr())
		x.W.BulkString(strconv.FormatInt(rc.port.Load(), 10))
		x.W.BulkString(strconv.FormatInt(rc.ackOff.Load(), 10))
	}
}
