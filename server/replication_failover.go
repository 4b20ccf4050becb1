package server

import (
	"strconv"
	"time"

	"github.com/keyhive/keyhive/internal/strnum"
)

// FAILOVER: a master hands its role to a replica without losing writes.
// Writes are paused (as CLIENT PAUSE WRITE) until the target, or any
// replica, has acknowledged the whole stream; then the master becomes the
// target's replica and sends it PSYNC ... FAILOVER, which makes the
// target a master that continues the same history (+CONTINUE). A timeout
// aborts the failover, or with FORCE goes on without the acknowledgement.

func init() {
	bind("failover", failoverCommand)
}

// The states of a failover, as INFO's master_failover_state names them.
const (
	failoverNone int32 = iota
	failoverWaitSync
	failoverInProgress
)

var failoverStateNames = [...]string{"no-failover", "waiting-for-sync", "failover-in-progress"}

// failoverState is the failover under way; guarded by repl.mu.
type failoverState struct {
	state    int32
	host     string // the target ("": the first replica caught up)
	port     int
	force    bool
	deadline int64 // Unix ms it times out at (0: never)
}

// failoverCommand is FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms].
func failoverCommand(x *Ctx) {
	s := x.s
	if len(x.Args) == 2 && cArgIs(x.Args[1], "abort") {
		if s.failoverState() == failoverNone {
			x.W.Error("ERR No failover in progress.")
			return
		}
		s.abortFailover("Failover manually aborted")
		x.W.OK()
		return
	}
	var f failoverState
	var timeout int64
	for j := 1; j < len(x.Args); j++ {
		a := x.Args[j]
		switch {
		case cArgIs(a, "timeout") && j+1 < len(x.Args) && timeout == 0:
			ms, ok := strnum.ParseInt(x.Args[j+1])
			if !ok {
				x.W.Error(errNotInt)
				return
			}
			if ms <= 0 {
				x.W.Error("ERR FAILOVER timeout must be greater than 0")
				return
			}
			timeout = ms
			j++
		case cArgIs(a, "to") && j+2 < len(x.Args) && f.host == "":
			port, ok := strnum.ParseInt(x.Args[j+2])
			if !ok {
				x.W.Error(errNotInt)
				return
			}
			f.host, f.port = string(x.Args[j+1]), int(port)
			j += 2
		case cArgIs(a, "force") && !f.force:
			f.force = true
		default:
			x.W.Error(errSyntax)
			return
		}
	}
	r := &s.repl
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.failover.state != failoverNone:
		x.W.Error("ERR FAILOVER already in progress.")
		return
	case r.isReplica.Load():
		x.W.Error("ERR FAILOVER is not valid when server is a replica.")
		return
	case len(r.replicas) == 0:
		x.W.Error("ERR FAILOVER requires connected replicas.")
		return
	case f.force && (timeout == 0 || f.host == ""):
		x.W.Error("ERR FAILOVER with force option requires both a timeout and target HOST and IP.")
		return
	}
	if f.host != "" {
		rc := r.findReplica(f.host, f.port)
		if rc == nil {
			x.W.Error("ERR FAILOVER target HOST and PORT is not a replica.")
			return
		}
		if rc.state.Load() != replicaOnline {
			x.W.Error("ERR FAILOVER target replica is not online.")
			return
		}
		s.log.Printf("FAILOVER requested to %s:%d.", f.host, f.port)
	} else {
		s.log.Printf("FAILOVER requested to any replica.")
	}
	if timeout > 0 {
		f.deadline = time.Now().UnixMilli() + timeout
	}
	f.state = failoverWaitSync
	r.failover = f
	s.pauseClients(pauseWrite, time.Now().AddDate(100, 0, 0).UnixMilli())
	r.feed.add(argREPLCONF, argGETACK, argStar)
	x.W.OK()
}

// findReplica is the replica at host:port (its announced address and
// listening port). Needs repl.mu.
func (r *replState) findReplica(host string, port int) *replicaConn {
	for _, rc := range r.replicas {
		if rc.addr() == host && int(rc.port.Load()) == port {
			return rc
		}
	}
	return nil
}

func (s *Server) failoverState() int32 {
	s.repl.mu.Lock()
	defer s.repl.mu.Unlock()
	return s.repl.failover.state
}

// updateFailover moves a failover on: once its target (or any replica) has
// acknowledged the whole stream, or its timeout passed with FORCE, this
// master becomes the target's replica. The cron and every ACK call it.
func (s *Server) updateFailover() {
	r := &s.repl
	r.mu.Lock()
	f := &r.failover
	if f.state != failoverWaitSync {
		r.mu.Unlock()
		return
	}
	if f.deadline != 0 && time.Now().UnixMilli() >= f.deadline {
		if !f.force {
			r.mu.Unlock()
			s.abortFailover("Replica never caught up before timeout")
			return
		}
		s.log.Printf("FAILOVER to %s:%d time out exceeded, failing over.", f.host, f.port)
	} else {
		off := s.replOffset()
		var target *replicaConn
		for _, rc := range r.replicas {
			if (f.host == "" || rc.addr() == f.host && int(rc.port.Load()) == f.port) && rc.ackOff.Load() == off {
				target = rc
				break
			}
		}
		if target == nil {
			r.mu.Unlock()
			return
		}
		f.host, f.port = target.addr(), int(target.port.Load())
		s.log.Printf("Failover target %s:%d is synced, failing over.", f.host, f.port)
	}
	f.state = failoverInProgress
	host, port := f.host, f.port
	r.mu.Unlock()
	s.replicaOf(host, port)
}

// failingOver reports whether this server hands its role to the master
// it connects to: its PSYNC says FAILOVER.
func (s *Server) failingOver() bool { return s.failoverState() == failoverInProgress }

// endFailover ends a failover that succeeded: the target continued this
// server's history as its master.
func (s *Server) endFailover() {
	r := &s.repl
	r.mu.Lock()
	r.failover = failoverState{}
	r.mu.Unlock()
	s.unpauseClients()
	s.log.Printf("FAILOVER completed")
}

// abortFailover gives up a failover: a master again if it had become the
// target's replica, writes unpaused.
func (s *Server) abortFailover(why string) {
	r := &s.repl
	r.mu.Lock()
	f := r.failover
	r.failover = failoverState{}
	r.mu.Unlock()
	if f.state == failoverNone {
		return
	}
	if f.host != "" {
		s.log.Printf("FAILOVER to %s aborted: %s", f.host+":"+strconv.Itoa(f.port), why)
	} else {
		s.log.Printf("FAILOVER to any replica aborted: %s", why)
	}
	if f.state == failoverInProgress {
		s.becomeMaster()
	}
	s.unpauseClients()
}

// takeOverFromMaster answers a PSYNC ... FAILOVER: the master hands this
// replica its role, continuing the history this replica has. It reports
// the refusal, or "" once this server is a master.
func (s *Server) takeOverFromMaster(x *Ctx) string {
	s.log.Printf("Failover request received for replid %s.", x.Args[1])
	if !s.repl.isReplica.Load() {
		return "ERR PSYNC FAILOVER can't be sent to a master."
	}
	if string(x.Args[1]) != s.replIDs().ID {
		return "ERR PSYNC FAILOVER replid must match my replid."
	}
	s.becomeMaster()
	s.log.Printf("MASTER MODE enabled (failover request from '%s')", x.c.peerAddr())
	return ""
}
