package replication

import (
	"strconv"
	"time"

	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/resp"
)

// FAILOVER: a master hands its role to a replica without losing writes.
// Writes are paused (as CLIENT PAUSE WRITE) until the target, or any
// replica, has acknowledged the whole stream; then the master becomes the
// target's replica and sends it PSYNC ... FAILOVER, which makes the
// target a master that continues the same history (+CONTINUE). A timeout
// aborts the failover, or with FORCE goes on without the acknowledgement.

// The states of a failover, as INFO's master_failover_state names them.
const (
	failoverNone int32 = iota
	failoverWaitSync
	failoverInProgress
)

var failoverStateNames = [...]string{"no-failover", "waiting-for-sync", "failover-in-progress"}

// failover is the failover under way; guarded by Manager.mu.
type failover struct {
	state    int32
	host     string // the target ("": the first replica caught up)
	port     int
	force    bool
	deadline int64 // Unix ms it times out at (0: never)
}

// Failover is FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms] (args
// as sent).
func (m *Manager) Failover(w *resp.Writer, args [][]byte) {
	if len(args) == 2 && cstr.ArgIs(args[1], "abort") {
		if m.failoverState() == failoverNone {
			w.Error("ERR No failover in progress.")
			return
		}
		m.abortFailover("Failover manually aborted")
		w.OK()
		return
	}
	var f failover
	var timeout int64
	for j := 1; j < len(args); j++ {
		a := args[j]
		switch {
		case cstr.ArgIs(a, "timeout") && j+1 < len(args) && timeout == 0:
			ms, ok := strnum.ParseInt(args[j+1])
			if !ok {
				w.Error(errNotInt)
				return
			}
			if ms <= 0 {
				w.Error("ERR FAILOVER timeout must be greater than 0")
				return
			}
			timeout = ms
			j++
		case cstr.ArgIs(a, "to") && j+2 < len(args) && f.host == "":
			port, ok := strnum.ParseInt(args[j+2])
			if !ok {
				w.Error(errNotInt)
				return
			}
			f.host, f.port = string(args[j+1]), int(port)
			j += 2
		case cstr.ArgIs(a, "force") && !f.force:
			f.force = true
		default:
			w.Error(errSyntax)
			return
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.failover.state != failoverNone:
		w.Error("ERR FAILOVER already in progress.")
		return
	case m.isReplica.Load():
		w.Error("ERR FAILOVER is not valid when server is a replica.")
		return
	case len(m.replicas) == 0:
		w.Error("ERR FAILOVER requires connected replicas.")
		return
	case f.force && (timeout == 0 || f.host == ""):
		w.Error("ERR FAILOVER with force option requires both a timeout and target HOST and IP.")
		return
	}
	if f.host != "" {
		r := m.findReplica(f.host, f.port)
		if r == nil {
			w.Error("ERR FAILOVER target HOST and PORT is not a replica.")
			return
		}
		if r.state.Load() != replicaOnline {
			w.Error("ERR FAILOVER target replica is not online.")
			return
		}
		m.opt.Log.Printf("FAILOVER requested to %s:%d.", f.host, f.port)
	} else {
		m.opt.Log.Printf("FAILOVER requested to any replica.")
	}
	if timeout > 0 {
		f.deadline = time.Now().UnixMilli() + timeout
	}
	f.state = failoverWaitSync
	m.failover = f
	m.host.PauseWrites(time.Now().AddDate(100, 0, 0).UnixMilli())
	m.AskAcks()
	w.OK()
}

// findReplica is the replica at host:port (its announced address and
// listening port). Needs mu.
func (m *Manager) findReplica(host string, port int) *Replica {
	for _, r := range m.replicas {
		if r.addr() == host && int(r.port.Load()) == port {
			return r
		}
	}
	return nil
}

func (m *Manager) failoverState() int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.failover.state
}

// updateFailover moves a failover on: once its target (or any replica) has
// acknowledged the whole stream, or its timeout passed with FORCE, this
// master becomes the target's replica. The cron and every ACK call it.
func (m *Manager) updateFailover() {
	m.mu.Lock()
	f := &m.failover
	if f.state != failoverWaitSync {
		m.mu.Unlock()
		return
	}
	if f.deadline != 0 && time.Now().UnixMilli() >= f.deadline {
		if !f.force {
			m.mu.Unlock()
			m.abortFailover("Replica never caught up before timeout")
			return
		}
		m.opt.Log.Printf("FAILOVER to %s:%d time out exceeded, failing over.", f.host, f.port)
	} else {
		off := m.Offset()
		var target *Replica
		for _, r := range m.replicas {
			if (f.host == "" || r.addr() == f.host && int(r.port.Load()) == f.port) && r.ackOff.Load() == off {
				target = r
				break
			}
		}
		if target == nil {
			m.mu.Unlock()
			return
		}
		f.host, f.port = target.addr(), int(target.port.Load())
		m.opt.Log.Printf("Failover target %s:%d is synced, failing over.", f.host, f.port)
	}
	f.state = failoverInProgress
	host, port := f.host, f.port
	m.mu.Unlock()
	m.replicaOf(host, port)
}

// failingOver reports whether this server hands its role to the master
// it connects to: its PSYNC says FAILOVER.
func (m *Manager) failingOver() bool { return m.failoverState() == failoverInProgress }

// endFailover ends a failover that succeeded: the target continued this
// server's history as its master.
func (m *Manager) endFailover() {
	m.mu.Lock()
	m.failover = failover{}
	m.mu.Unlock()
	m.host.PauseWrites(0)
	m.opt.Log.Printf("FAILOVER completed")
}

// abortFailover gives up a failover: a master again if it had become the
// target's replica, writes unpaused.
func (m *Manager) abortFailover(why string) {
	m.mu.Lock()
	f := m.failover
	m.failover = failover{}
	m.mu.Unlock()
	if f.state == failoverNone {
		return
	}
	if f.host != "" {
		m.opt.Log.Printf("FAILOVER to %s aborted: %s", f.host+":"+strconv.Itoa(f.port), why)
	} else {
		m.opt.Log.Printf("FAILOVER to any replica aborted: %s", why)
	}
	if f.state == failoverInProgress {
		m.becomeMaster()
	}
	m.host.PauseWrites(0)
}

// takeOverFromMaster answers a PSYNC id ... FAILOVER from the client at
// addr: the master hands this replica its role, continuing the history
// this replica has. It reports the refusal, or "" once this server is a
// master.
func (m *Manager) takeOverFromMaster(id, addr string) string {
	m.opt.Log.Printf("Failover request received for replid %s.", id)
	if !m.isReplica.Load() {
		return "ERR PSYNC FAILOVER can't be sent to a master."
	}
	if id != m.IDs().ID {
		return "ERR PSYNC FAILOVER replid must match my replid."
	}
	m.becomeMaster()
	m.opt.Log.Printf("MASTER MODE enabled (failover request from '%s')", addr)
	return ""
}
