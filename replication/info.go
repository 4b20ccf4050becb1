package replication

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/keyhive/keyhive/resp"
)

// What replication reports: INFO replication with Redis's fields, ROLE,
// and the acknowledgements WAIT and WAITAOF count.

// ReplicasAt is the number of online replicas that acknowledged the
// stream up to offset: applied (WAIT), or fsynced to their AOF (aof,
// WAITAOF: REPLCONF ACK's FACK).
func (m *Manager) ReplicasAt(offset int64, aof bool) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for _, r := range m.replicas {
		acked := r.ackOff.Load()
		if aof {
			acked = r.aofAckOff.Load()
		}
		if r.state.Load() == replicaOnline && acked >= offset {
			n++
		}
	}
	return n
}

func field(b *strings.Builder, name string, v any) {
	fmt.Fprintf(b, "%s:%v\r\n", name, v)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func upDown(up bool) string {
	if up {
		return "up"
	}
	return "down"
}

// WriteInfo writes INFO's replication section.
func (m *Manager) WriteInfo(b *strings.Builder) {
	cfg := m.opt.Config
	m.mu.Lock()
	ids, link := m.ids, m.link
	replicas := append([]*Replica(nil), m.replicas...)
	m.mu.Unlock()
	now := time.Now()
	off := m.Offset()
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
		// Redis 8.2's attempts, link age and disconnected time
		// (https://redis.io/docs/latest/operate/oss_and_stack/stack-with-enterprise/release-notes/redisce/redisos-8.2-release-notes/).
		field(b, "master_current_sync_attempts", link.currentAttempts.Load())
		field(b, "master_total_sync_attempts", link.totalAttempts.Load())
		downTotal := link.downSeconds.Load()
		if state == linkConnected {
			up := link.upSince.Load()
			if up == 0 { // the link dropped as this was read
				up = now.Unix()
			}
			field(b, "master_link_up_since_seconds", now.Unix()-up)
		} else {
			down := int64(-1)
			if t := link.downSince.Load(); t != 0 {
				down = now.Unix() - t
				downTotal += down
			}
			field(b, "master_link_down_since_seconds", down)
		}
		field(b, "total_disconnect_time_sec", downTotal)
		field(b, "slave_priority", cfg.ReplicaPriority())
		field(b, "slave_read_only", boolInt(cfg.ReplicaReadOnly()))
		field(b, "replica_announced", boolInt(cfg.ReplicaAnnounced()))
	}
	field(b, "connected_slaves", len(replicas))
	if link == nil && cfg.MinReplicasToWrite() > 0 && cfg.MinReplicasMaxLag() > 0 {
		field(b, "min_slaves_good_slaves", m.goodReplicas.Load())
	}
	for i, r := range replicas {
		lag := (now.UnixMilli() - r.ackTime.Load()) / 1000
		if r.ackTime.Load() == 0 {
			lag = 0
		}
		field(b, "slave"+strconv.Itoa(i), fmt.Sprintf("ip=%s,port=%d,state=%s,offset=%d,lag=%d",
			r.addr(), r.port.Load(), replicaStateNames[r.state.Load()], r.ackOff.Load(), lag))
	}
	field(b, "master_failover_state", failoverStateNames[m.failoverState()])
	field(b, "master_replid", ids.ID)
	field(b, "master_replid2", ids.ID2)
	field(b, "master_repl_offset", off)
	field(b, "second_repl_offset", ids.Second)
	bl := m.backlog.Load()
	field(b, "repl_backlog_active", boolInt(bl != nil))
	field(b, "repl_backlog_size", cfg.ReplBacklogSize())
	if bl != nil {
		start, end := bl.Offsets()
		field(b, "repl_backlog_first_byte_offset", start+1)
		field(b, "repl_backlog_histlen", end-start)
	} else {
		field(b, "repl_backlog_first_byte_offset", 0)
		field(b, "repl_backlog_histlen", 0)
	}
}

// Role is ROLE: a master, its offset and its replicas (ip, port,
// acknowledged offset); or a replica, its master, link state and offset.
func (m *Manager) Role(w *resp.Writer) {
	m.mu.Lock()
	link := m.link
	replicas := append([]*Replica(nil), m.replicas...)
	m.mu.Unlock()
	if link != nil {
		w.Array(5)
		w.BulkString("slave")
		w.BulkString(link.host)
		w.Int(int64(link.port))
		w.BulkString(linkStateNames[link.state.Load()])
		off := int64(-1)
		if link.state.Load() == linkConnected {
			off = m.Offset()
		}
		w.Int(off)
		return
	}
	w.Array(3)
	w.BulkString("master")
	w.Int(m.Offset())
	online := replicas[:0:0]
	for _, r := range replicas {
		if r.state.Load() == replicaOnline {
			online = append(online, r)
		}
	}
	w.Array(len(online))
	for _, r := range online {
		w.Array(3)
		w.BulkString(r.addr())
		w.BulkString(strconv.FormatInt(r.port.Load(), 10))
		w.BulkString(strconv.FormatInt(r.ackOff.Load(), 10))
	}
}
