package server

import (
	"bytes"
	"net"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/keyhive/keyhive/acl"
	"github.com/keyhive/keyhive/cmdspec"
	"github.com/keyhive/keyhive/internal/osmem"
	"github.com/keyhive/keyhive/internal/sample"
	"github.com/keyhive/keyhive/replication"
	"github.com/keyhive/keyhive/resp"
)

// Buffer sizes of a connection. A client starts small (10,000 idle connections
// must stay cheap) and grows with what it sends; big buffers are dropped once
// they are empty again.
const (
	initialReadBuf = 4 * 1024
	idleReadBufMax = 64 * 1024
	// A read buffer growing past mappedReadBuf (a big argument) is mapped
	// outside the Go heap: it grows without copying (mremap) and is
	// unmapped as soon as it is empty, where a heap buffer would count in
	// used memory until a collection that may not come for minutes.
	mappedReadBuf = 1 << 20
	flushAt       = 64 * 1024 // write replies out mid-batch past this size
	idleWriteMax  = 1 << 20
)

type replyMode uint8

const (
	replyOn replyMode = iota
	replyOff
	replySkipNext
	replySkipThis
)

// Client is one connection. Only its own goroutine touches the unexported
// plain fields; the atomic ones are read by CLIENT LIST / INFO from others.
type Client struct {
	s    *Server
	id   uint64
	conn net.Conn
	in   []byte
	r, w int
	// inMapped: in is a mapping (mappedReadBuf), counted in s.mappedBufs.
	inMapped bool
	// lc is the connection when an event loop serves it (eventloop_linux.go),
	// nil for a TLS client or on the portable path, served by its own goroutine.
	lc *loopConn
	// onLoop: the loop runs its commands now (no write may wait);
	// pendingWrite: it is in the loop's list of replies to write;
	// outBlocked: the socket did not take all of out, which the goroutine
	// holding the client writes before anything else.
	onLoop, pendingWrite, outBlocked bool
	parser                           resp.Parser
	out                              resp.Writer
	ctx                              Ctx
	nesting                          execution // its command's and those nested in it (call)

	authenticated bool
	// obeys: its commands ran already elsewhere (the AOF's loader, a
	// master's stream), Redis's mustObeyClient: they are replayed as
	// written, without the checks that protect a user from a mistake.
	obeys bool
	// peer is the connection's part in replication: a replica's, the
	// master's stream on a replica, or where its writes ended (WAIT).
	peer replication.Peer
	// wrote: a command changed the data set since the replies last left
	// (under appendfsync always they are not sent unless the AOF took it).
	wrote   bool
	monitor atomic.Bool // in MONITOR mode (monitor.go)
	// confirming: the command's reply is Pub/Sub (un)subscribe
	// confirmations, which CLIENT REPLY OFF and SKIP do not drop (Redis's
	// CLIENT_PUSHING).
	confirming      bool
	overMaxMemory   bool                     // at the last outOfMemory check: Redis's pre_command_oom_state, which scripts obey
	user            atomic.Pointer[acl.User] // the user it runs commands as (acl.go)
	aclKeys         []cmdspec.KeyRef         // key arguments for the ACL check
	reply           replyMode
	closeAfterReply bool
	created         time.Time

	db       atomic.Int32
	proto    atomic.Int32
	name     atomic.Pointer[string]
	libName  atomic.Pointer[string]
	libVer   atomic.Pointer[string]
	lastCmd  atomic.Pointer[Command]
	lastSeen atomic.Int64 // Unix ms of the last command
	noEvict  atomic.Bool
	noTouch  atomic.Bool
	qbuf     atomic.Int64
	omem     atomic.Int64
	traffic  trafficStats
	// reads draws which of the client's key lookups prefix discovery
	// samples; like traffic, only the goroutine running its command uses it.
	reads sample.Sampler

	// The command time is derived from one wall-clock read per batch and the
	// monotonic clock, which also times each command: one clock read per
	// command instead of three.
	batchWall, batchMono, mono int64

	// The last command name looked up, as sent: pipelines repeat one command,
	// and comparing bytes is cheaper than the table lookup.
	lastName   []byte
	lastLookup *Command

	// notifyBuf builds keyspace notification channel names.
	notifyBuf []byte
	// subkeyMsg builds subkey notifications' payloads.
	subkeyMsg []byte

	// blocked is set by a blocking command that found nothing to pop, for
	// process to wait on; waiting is the same waiter for other goroutines
	// (CLIENT UNBLOCK, CLIENT LIST) until the client wakes.
	blocked *waiter
	waiting atomic.Pointer[waiter]
	// waitingFor is the waiter of a client blocked on its loop.
	waitingFor *waiter
	// postponed is set by admit when a CLIENT PAUSE holds the command
	// back, for execute to wait on (pause.go); paused is true meanwhile.
	postponed *postponed
	paused    atomic.Bool

	tracking    clientTracking
	multi       *transaction // in MULTI
	clusterConn clusterConn  // ASKING and READONLY (cluster_redirect.go)
	queued      atomic.Int32 // commands queued in MULTI, for CLIENT LIST; -1 outside
	watched     []blockKey   // WATCHed keys
	nWatched    atomic.Int32 // len(watched), for CLIENT LIST (watch=)
	watchBroken atomic.Bool  // a watched key changed: EXEC fails

	ps pubsubClient // subscriptions and the output queue (pubsub.go)
}

// LockOwner makes a client the keyspace.Owner of its commands' locks: the
// keyspace's hooks name it as the author of a change (NOLOOP, "new").
func (c *Client) LockOwner() {}

// command looks a command name up in the table, remembering the last one.
func (c *Client) command(name []byte) *Command {
	if c.lastLookup != nil && bytes.Equal(name, c.lastName) {
		return c.lastLookup
	}
	cmd := lookupCommand(table, name)
	if cmd != nil && len(name) <= 64 {
		c.lastName = append(c.lastName[:0], name...)
		c.lastLookup = cmd
	}
	return cmd
}

// monoEpoch anchors monotonic readings; time.Since reads only the monotonic clock.
var monoEpoch = time.Now()

func monoNow() int64 { return int64(time.Since(monoEpoch)) }

// newClient sets up the state of a client on conn.
func (s *Server) newClient(conn net.Conn) *Client {
	c := &Client{s: s, id: s.nextClientID.Add(1), conn: conn, created: time.Now()}
	if lc, ok := conn.(*loopConn); ok {
		c.lc, lc.client = lc, c
	}
	c.out.Proto = 2
	c.out.Errors = &s.stats.errors
	c.proto.Store(2)
	c.lastSeen.Store(s.clock.UnixMilli())
	c.resetAuth()
	c.ctx = newCtx(s, c, &c.out)
	c.ctx.Locks.Owner = c // for NOLOOP: the client behind a change
	c.queued.Store(-1)
	return c
}

func (s *Server) accept(conn net.Conn) {
	s.stats.connectionsReceived.Add(1)
	if tcp, ok := conn.(*net.TCPConn); ok {
		tcp.SetNoDelay(true)
		if ka := s.cfg.TCPKeepAlive(); ka > 0 {
			tcp.SetKeepAlivePeriod(time.Duration(ka) * time.Second)
		}
	}
	if lc := s.loopConnOf(conn); lc != nil {
		conn = lc
	}
	c := s.newClient(conn)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		conn.Close()
		return
	}
	if len(s.clients) >= s.cfg.MaxClients() {
		s.mu.Unlock()
		s.stats.rejectedConnections.Add(1)
		conn.Write([]byte("-ERR max number of clients reached\r\n"))
		conn.Close()
		return
	}
	if s.refusedByProtectedMode(conn) {
		s.mu.Unlock()
		s.stats.rejectedConnections.Add(1)
		conn.Write([]byte(errProtectedMode))
		conn.Close()
		return
	}
	s.clients[c.id] = c
	s.noteClients()
	s.wg.Add(1) // done when the client's connection is closed
	s.mu.Unlock()
	if c.lc != nil {
		c.in = make([]byte, initialReadBuf)
		c.lc.loop.post(taskAdd, c.lc)
		return
	}
	go c.serve()
}

// serve is the goroutine serving a client that no loop serves (TLS).
func (c *Client) serve() {
	defer c.s.wg.Done()
	defer c.close()
	defer c.freeIn() // the blocked read's goroutine, if any, has returned
	c.in = make([]byte, initialReadBuf)
	for {
		n, err := c.read(c.in[c.w:])
		if n > 0 {
			c.w += n
			c.traffic.read(int64(n))
			keep := c.run()
			if !keep {
				// QUIT and the like: drop subscriptions, watches and
				// tracking before the reply goes, so a client that
				// reconnects on seeing it finds them gone, as on Redis.
				c.release()
			}
			if !c.flush() || !keep {
				return
			}
			if c.peer.Serving() {
				c.serveReplica()
				return
			}
		}
		if err != nil {
			return
		}
		if !c.prepareRead() {
			return
		}
	}
}

// startBatch reads the clock for a batch of commands: the time of each is
// derived from it and the monotonic clock.
func (c *Client) startBatch() {
	t := time.Now()
	c.batchWall, c.batchMono = t.UnixMilli(), int64(t.Sub(monoEpoch))
	c.mono = c.batchMono
}

// run runs every complete command in the read buffer, waiting at each
// blocking command for its wake-up, timeout or the client's disconnect. It
// returns false when the connection must close after the replies are
// written.
func (c *Client) run() bool {
	for {
		keep := c.process()
		if !keep || c.blocked == nil && c.postponed == nil {
			return keep
		}
		if !c.resume() {
			return false
		}
	}
}

// resume waits for what stopped the commands: a command a CLIENT PAUSE
// postponed, then runs it; a blocked command's wake-up. It reports whether
// the connection is still good.
func (c *Client) resume() bool {
	if c.postponed != nil && !c.resumePaused() {
		return false
	}
	if c.blocked == nil {
		return true
	}
	if !c.waitBlocked() || c.closeAfterReply {
		return false
	}
	if c.ps.queued {
		c.queueReplies()
	}
	return true
}

// process runs the complete commands in the read buffer until one blocks
// (c.blocked is set: the caller waits, see run). It returns false when the
// connection must close after the replies are written.
func (c *Client) process() bool {
	c.startBatch()
	for c.r < c.w {
		// Limits are read per command: an AUTH or CONFIG SET earlier in the
		// same batch applies to the commands after it.
		c.parser.Unauthenticated = c.authRequired()
		c.parser.MaxBulk = c.s.cfg.ProtoMaxBulkLen()
		n, err := c.parser.Parse(c.in[c.r:c.w])
		if err != nil {
			// Under CLIENT REPLY OFF (or a SKIP in effect) Redis drops the
			// error text too, and closes all the same.
			if c.reply != replyOff && c.reply != replySkipThis {
				c.out.Error(err.Error())
			}
			return false
		}
		if n == 0 {
			break
		}
		c.r += n
		if len(c.parser.Args) > 0 {
			c.execute(c.parser.Args)
		}
		if c.blocked != nil || c.postponed != nil || c.peer.Serving() {
			// SYNC or PSYNC: what follows is for the replica's goroutines
			break
		}
		if c.ps.queued {
			c.queueReplies()
		}
		if c.closeAfterReply {
			return false
		}
		if len(c.out.B) > flushAt {
			if !c.flushMidBatch() {
				return false
			}
			if c.outBlocked {
				break // the goroutine holding the client writes the rest, then runs the rest
			}
		}
	}
	c.qbuf.Store(int64(c.w - c.r))
	if c.inMapped && c.r == c.w && c.blocked == nil && c.postponed == nil {
		// A big argument ran: its buffer goes before the reply does, so
		// that whatever the client does next sees the memory given back.
		c.freeIn()
		c.in, c.r, c.w = make([]byte, initialReadBuf), 0, 0
	}
	return true
}

// prepareRead makes room for the next read: it drops consumed bytes, shrinks a
// big idle buffer and grows a full one up to client-query-buffer-limit.
func (c *Client) prepareRead() bool {
	switch {
	case c.r == c.w:
		c.r, c.w = 0, 0
		if len(c.in) > idleReadBufMax {
			c.freeIn()
			c.in = make([]byte, initialReadBuf)
		}
	case c.r > 0:
		c.w = copy(c.in, c.in[c.r:c.w])
		c.r = 0
	}
	if c.w < len(c.in) {
		return true
	}
	if int64(c.w) >= c.s.cfg.ClientQueryBufferLimit() {
		c.s.log.Printf("closing client id=%d that reached max query buffer length", c.id)
		return false
	}
	// Grow by doubling, so memory follows what the client actually sent, not a
	// length it declared.
	size := 2 * len(c.in)
	if need := c.parser.Need(); need > len(c.in) && need < size {
		size = need
	}
	if size >= mappedReadBuf {
		c.growMapped(size)
		return true
	}
	grown := make([]byte, size)
	copy(grown, c.in[:c.w])
	c.in = grown
	return true
}

// growMapped makes the read buffer a mapping of at least size bytes, moved
// by the kernel when it is one already (the parser keeps offsets, not
// slices, across reads).
func (c *Client) growMapped(size int) {
	size = osmem.Round(size)
	old := len(c.in)
	if c.inMapped {
		c.in = osmem.Remap(c.in, size)
		c.s.mappedBufs.Add(int64(size - old))
		return
	}
	m := osmem.Map(size)
	copy(m, c.in[:c.w])
	c.in, c.inMapped = m, true
	c.s.mappedBufs.Add(int64(size))
}

// freeIn unmaps a mapped read buffer, when the client is done with its
// bytes: no command's arguments point into it any more.
func (c *Client) freeIn() {
	if c.inMapped {
		c.s.mappedBufs.Add(-int64(len(c.in)))
		osmem.Unmap(c.in)
		c.in, c.inMapped = nil, false
	}
}

// flush writes the pending replies in one write, then the messages this
// client published to subscribers, from a goroutine that may wait for the
// socket.
func (c *Client) flush() bool {
	// The clients whose requests arrived with this one's run first, so that
	// all their replies leave together, as Redis writes them after a round
	// of its event loop: a client woken by the first reply then finds the
	// others ready instead of sleeping and being woken for each.
	if len(c.out.B) > 0 {
		runtime.Gosched()
	}
	return c.sendReplies(true)
}

// flushMidBatch writes the replies of a long batch before it goes on; on
// the loop what the socket does not take at once is left for the
// goroutine that will hold the client (outBlocked).
func (c *Client) flushMidBatch() bool {
	if c.onLoop {
		return c.sendReplies(false)
	}
	return c.flush()
}

// hasOutput reports whether the loop has replies or messages to write for
// the client at the end of its wake-up.
func (c *Client) hasOutput() bool {
	return len(c.out.B) > 0 || c.wrote || c.ps.queued || len(c.ps.wake) > 0
}

// sendReplies writes the replies (waiting for the socket when wait is set)
// and the messages this client published. It reports whether the
// connection is still good.
func (c *Client) sendReplies(wait bool) bool {
	// An acknowledged write is in the AOF before its reply leaves. Under
	// appendfsync always a write that failed is not acknowledged: the
	// client is disconnected with its replies unsent (Redis exits).
	fed, durable := c.s.barrier()
	if c.wrote {
		if !durable {
			c.resetOut()
			return false
		}
		c.peer.Replied(fed, c.s.repl.Offset())
		c.wrote = false
	}
	ok := c.flushReplies(wait)
	if len(c.ps.wake) > 0 {
		c.writeWoken()
	}
	return ok
}

func (c *Client) flushReplies(wait bool) bool {
	if c.ps.queued {
		return c.flushQueued()
	}
	if len(c.out.B) == 0 {
		return true
	}
	if c.repliesOverLimit() {
		return false
	}
	if !wait && c.lc != nil { // on the loop
		n, errno := c.lc.writeNow(c.out.B)
		c.traffic.wrote(int64(n))
		if errno != 0 && errno != syscall.EAGAIN {
			return false
		}
		if n < len(c.out.B) {
			c.out.B = c.out.B[:copy(c.out.B, c.out.B[n:])]
			c.outBlocked = true
			return true
		}
		c.resetOut()
		return true
	}
	n, err := c.write(c.out.B)
	c.traffic.wrote(int64(n))
	c.resetOut()
	return err == nil
}

// read and write wait for the socket: a loop's connection waits for its
// loop's report, so only goroutines other than the loop call them.
func (c *Client) read(buf []byte) (int, error)  { return c.conn.Read(buf) }
func (c *Client) write(buf []byte) (int, error) { return c.conn.Write(buf) }

// resetOut empties the reply buffer once written, dropping a huge one.
func (c *Client) resetOut() {
	if n := cap(c.out.B); n > idleWriteMax {
		c.out.B = nil
		c.traffic.replyShrinks.add(1)
		if n >= bigReply {
			c.s.returnHeap()
		}
	} else {
		c.out.B = c.out.B[:0]
	}
}

// close drops the client from the server's list before closing the
// connection, so a peer that sees the close no longer finds it in CLIENT LIST.
func (c *Client) close() {
	c.release()
	if len(c.ps.wake) > 0 {
		c.writeWoken() // monitors and subscribers its last commands left lines for
	}
	if c.ps.queued && c.closeQueued() {
		return // the goroutine writing its output closes it
	}
	c.s.removeClient(c)
	c.conn.Close()
}

// release drops what the client holds in the server: MONITOR, WATCHed keys,
// tracking and subscriptions. It may run more than once.
func (c *Client) release() {
	c.s.stopMonitor(c)
	c.s.watches.unwatchAll(c)
	c.s.disableTracking(c)
	c.s.unsubscribeAll(c)
}

// clientByID returns the connected client with that id, or nil.
func (s *Server) clientByID(id int64) *Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clients[uint64(id)]
}

// removeClient drops c from the client list once, keeping its counters in the
// server's totals.
func (s *Server) removeClient(c *Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clients[c.id] == c {
		delete(s.clients, c.id)
		t := c.traffic.totals()
		s.closedTraffic = s.closedTraffic.plus(t)
		s.closedIO = addAt(s.closedIO, s.ioThread(c), t)
	}
}

// execute runs one command the client sent, through the one dispatch
// path, and applies CLIENT REPLY to its reply.
func (c *Client) execute(args [][]byte) {
	c.traffic.commands.add(1)
	c.ctx.Now = c.commandTime()
	c.lastSeen.Store(c.ctx.Now)
	mark := len(c.out.B)
	c.dispatch(args, fromClient)
	if c.postponed != nil {
		return // run waits for the pause to end, then runs it again (resumePaused)
	}
	c.applyReplyMode(mark)
	c.appendOwnMessages()
}

// applyReplyMode drops the command's reply under CLIENT REPLY OFF or SKIP.
func (c *Client) applyReplyMode(mark int) {
	drop := c.reply == replyOff || c.reply == replySkipThis
	switch c.reply {
	case replySkipThis:
		c.reply = replyOn
	case replySkipNext:
		c.reply = replySkipThis
	}
	if drop && !c.confirming {
		c.out.B = c.out.B[:mark]
	}
	c.confirming = false
}
