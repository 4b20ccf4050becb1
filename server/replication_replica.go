package server

import (
	"net"
	"time"
)

// The client a replica runs its master's stream as: replication's link
// reads the stream and hands each command to it (masterClient.Apply),
// which runs it through dispatch.

// masterClient is the master's client as replication applies the stream
// through it.
type masterClient struct{ c *Client }

// Apply runs one command of the master's stream.
func (m masterClient) Apply(args [][]byte) (inMulti bool) {
	m.c.s.applyFromMaster(m.c, args)
	return m.c.multi != nil
}

func (m masterClient) DB() int { return int(m.c.db.Load()) }

// Close removes the client once the link drops; expiry no longer spares
// what it touches.
func (m masterClient) Close() {
	s := m.c.s
	s.ks.SetReplica(s.IsReplica(), nil)
	s.removeClient(m.c)
}

// applyFromMaster runs one command of the master's stream.
func (s *Server) applyFromMaster(mc *Client, args [][]byte) {
	mc.traffic.commands.add(1)
	mc.ctx.Now = s.clock.UnixMilli()
	mc.lastSeen.Store(mc.ctx.Now)
	mc.dispatch(args, fromMaster)
	if len(mc.ps.wake) > 0 {
		mc.writeWoken() // a PUBLISH's subscribers
	}
	if len(mc.out.B) > 0 && mc.out.B[0] == '-' {
		s.log.Printf("== CRITICAL == This replica is sending an error to its master: '%s' after processing the command '%s'",
			trimCRLF(string(mc.out.B)), args[0])
	}
	mc.out.B = mc.out.B[:0]
}

// newMasterClient is the client a replica runs its master's commands as:
// it obeys (no checks), starts in database db, and shows in CLIENT LIST
// with flag M. Expiry spares what it touches from now on.
func (s *Server) newMasterClient(conn net.Conn, db int) *Client {
	c := &Client{s: s, id: s.nextClientID.Add(1), conn: conn, created: time.Now(), authenticated: true, obeys: true}
	c.peer.MarkMaster()
	c.out.Proto = 2
	c.out.Errors = &s.stats.errors
	c.proto.Store(2)
	c.setUser(s.acl.Default())
	c.ctx = newCtx(s, c, &c.out)
	c.ctx.Locks.Owner = c
	c.queued.Store(-1)
	c.db.Store(int32(db))
	c.lastSeen.Store(s.clock.UnixMilli())
	s.mu.Lock()
	s.clients[c.id] = c
	s.mu.Unlock()
	s.ks.SetReplica(true, c)
	return c
}
