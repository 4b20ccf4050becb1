package replication

import "sync/atomic"

// Peer is what replication knows of one client connection: where its
// writes ended when its replies last left (WAIT, WAITAOF), and its part in
// replication when it has one: a replica's connection on a master, or the
// client a replica runs its master's stream as. A Client holds one, by
// value: a client that is neither costs nothing more.
type Peer struct {
	// replica is set on a master by REPLCONF, SYNC or PSYNC.
	replica *Replica
	// listed: replica is attached, for other goroutines (CLIENT LIST's
	// flag S, CLIENT KILL TYPE replica).
	listed atomic.Bool
	// master: it runs the master's stream on a replica.
	master bool
	// aofEnd and replEnd are where its changes ended in the AOF's stream
	// and the replication stream when its replies last left.
	aofEnd, replEnd int64
}

// MarkMaster makes p the client a replica runs its master's stream as.
func (p *Peer) MarkMaster() { p.master = true }

// IsMaster reports whether p runs the master's stream (CLIENT LIST's flag
// M, type master).
func (p *Peer) IsMaster() bool { return p.master }

// IsReplica reports, from any goroutine, whether p is a replica's
// connection (CLIENT LIST's flag S, type replica).
func (p *Peer) IsReplica() bool { return p.listed.Load() }

// Serving reports whether p became a replica by SYNC or PSYNC: its
// connection is the Manager's to serve (Serve) from now on.
func (p *Peer) Serving() bool { return p.replica != nil && p.replica.attached }

// Replied records where the client's changes end, as its replies leave:
// at aofEnd in the AOF's stream and replEnd in the replication stream.
func (p *Peer) Replied(aofEnd, replEnd int64) { p.aofEnd, p.replEnd = aofEnd, replEnd }

// Ends are where the client's changes ended in the AOF's stream and the
// replication stream when its replies last left.
func (p *Peer) Ends() (aofEnd, replEnd int64) { return p.aofEnd, p.replEnd }
