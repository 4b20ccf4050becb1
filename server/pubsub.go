package server

import (
	"sync"
	"sync/atomic"

	"github.com/keyhive/keyhive/cmdspec"
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/glob"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/resp"
)

// Pub/Sub. The server keeps who listens to what (pubsubRegistry); a client
// keeps its own subscriptions (pubsubClient). A message is delivered in the
// publisher's goroutine: it is encoded once and appended to each
// subscriber's output queue (outQueue, pubsub_output.go); when the publisher
// flushes its replies it hands the subscribers to the queue writer, which
// writes each once for all the publishes of a round, without waiting, as
// Redis writes each client once per event-loop round. A subscriber whose
// socket is full gets a goroutine that waits for it; a subscriber whose
// queue passes client-output-buffer-limit is disconnected.
//
// Once a client has subscribed, all its output goes through its queue, its
// own replies included, so messages and replies reach it in order. A
// subscription enters the registry only after its confirmation is queued,
// and leaves it before the unsubscribe confirmation is written, so no
// message precedes the one or follows the other.

type pubsubRegistry struct {
	mu        sync.RWMutex
	channels  map[string][]*Client // in subscription order
	shard     map[string][]*Client
	patterns  []*patternSubs // in the order patterns first appeared
	byPattern map[string]*patternSubs
	writer    queueWriter
}

type patternSubs struct {
	pattern []byte
	clients []*Client
}

// pubsubClient is a client's side of Pub/Sub. The maps and slices are
// its goroutine's, but for shard, which the server also changes when the
// node stops serving a slot (unsubscribeSlots): mu guards it, and the
// client's goroutine changes the maps under it. The counters are for
// CLIENT LIST.
type pubsubClient struct {
	mu sync.Mutex
	// Subscriptions; the value tells whether it is in the registry yet.
	channels map[string]bool
	shard    map[string]bool
	patterns map[string]bool
	// patternOrder is the order PUNSUBSCRIBE without arguments follows.
	patternOrder []string
	// unregistered holds subscriptions waiting to enter the registry.
	unregistered []subscription
	// queued: output goes through q (set by the first subscription).
	queued             bool
	nsub, npsub, nssub atomic.Int32
	q                  outQueue

	// As a publisher: subscribers left with output to write at the next
	// flush, the buffer messages are encoded in, and the messages the
	// running command published to this client itself, sent after its
	// reply as Redis 7.2+ does (7.0 wrote them within it).
	wake     []*Client
	enc      []byte
	selfMsgs []byte
}

// appendOwnMessages sends, after a command's reply, the messages it
// published to its own client. CLIENT REPLY OFF does not drop them (Redis's
// CLIENT_PUSHING).
func (c *Client) appendOwnMessages() {
	if len(c.ps.selfMsgs) == 0 {
		return
	}
	c.out.B = append(c.out.B, c.ps.selfMsgs...)
	c.ps.selfMsgs = c.ps.selfMsgs[:0]
	if cap(c.ps.selfMsgs) > idleWriteMax {
		c.ps.selfMsgs = nil
	}
}

// deliverOwn holds msg, a message c published to itself, until its reply
// is written.
func (c *Client) deliverOwn(msg []byte) {
	start := len(c.ps.selfMsgs)
	c.ps.selfMsgs = append(c.ps.selfMsgs, msg...)
	if c.out.Proto == 3 {
		c.ps.selfMsgs[start] = '>'
	}
}

// subscribed reports whether the client is in Pub/Sub mode (Redis's
// CLIENT_PUBSUB): it has a subscription of any kind.
func (p *pubsubClient) subscribed() bool {
	return len(p.channels)+len(p.patterns) > 0 || p.nssub.Load() > 0
}

// count is what (P)SUBSCRIBE and (P)UNSUBSCRIBE confirmations report.
func (p *pubsubClient) count() int { return len(p.channels) + len(p.patterns) }

func (p *pubsubClient) updateCounts() {
	p.nsub.Store(int32(len(p.channels)))
	p.npsub.Store(int32(len(p.patterns)))
	p.mu.Lock()
	p.nssub.Store(int32(len(p.shard)))
	p.mu.Unlock()
}

// allowedSubscribed reports whether a RESP2 client in Pub/Sub mode may run cmd.
func allowedSubscribed(cmd *Command) bool { return cmd.Flags&cmdspec.FlagSubscribedOK != 0 }

func errSubscribedMode(cmd *Command) string {
	return "ERR Can't execute '" + cmd.Name + "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
}

type subscription struct {
	kind subKind
	name string
}

// own is the client's set of subscriptions of a kind.
func (p *pubsubClient) own(kind subKind) *map[string]bool {
	switch kind {
	case subShard:
		return &p.shard
	case subPattern:
		return &p.patterns
	}
	return &p.channels
}

// add subscribes the client; the subscription enters the registry once its
// confirmation is queued (register).
func (p *pubsubClient) add(kind subKind, name []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.own(kind)
	if *m == nil {
		*m = map[string]bool{}
	}
	if _, ok := (*m)[string(name)]; ok {
		return
	}
	(*m)[string(name)] = false
	if kind == subPattern {
		p.patternOrder = append(p.patternOrder, string(name))
	}
	p.unregistered = append(p.unregistered, subscription{kind, string(name)})
	p.queued = true
}

// register enters c's new subscriptions in the registry. A shard channel
// whose slot left the node since its SSUBSCRIBE was routed is not entered:
// the client is told at once, as if the slot had left just after
// (unsubscribeSlots had not found it in the registry yet).
func (r *pubsubRegistry) register(c *Client) {
	p := &c.ps
	var gone []string
	r.mu.Lock()
	p.mu.Lock()
	for _, sub := range p.unregistered {
		own := *p.own(sub.kind)
		if in, ok := own[sub.name]; !ok || in {
			continue // unsubscribed since, in the same transaction
		}
		if sub.kind == subShard && !c.s.servesShard(sub.name) {
			delete(own, sub.name)
			gone = append(gone, sub.name)
			continue
		}
		own[sub.name] = true
		switch sub.kind {
		case subChannel:
			r.channels = addClient(r.channels, sub.name, c)
		case subShard:
			r.shard = addClient(r.shard, sub.name, c)
		case subPattern:
			ps := r.byPattern[sub.name]
			if ps == nil {
				if r.byPattern == nil {
					r.byPattern = map[string]*patternSubs{}
				}
				ps = &patternSubs{pattern: []byte(sub.name)}
				r.byPattern[sub.name] = ps
				r.patterns = append(r.patterns, ps)
			}
			ps.clients = append(ps.clients, c)
		}
	}
	left := len(p.shard)
	if len(gone) > 0 {
		p.nssub.Store(int32(left))
	}
	p.mu.Unlock()
	r.mu.Unlock()
	clear(p.unregistered)
	p.unregistered = p.unregistered[:0]
	for i, ch := range gone {
		c.s.deliver(c, unsubscribedMessage(ch, left+len(gone)-1-i), nil)
	}
}

// servesShard reports whether this node still serves the slot of a shard
// channel: its own, its master's (a replica), or one it imports.
func (s *Server) servesShard(channel string) bool {
	if s.cluster == nil {
		return true
	}
	r := s.cluster.Routes()
	slot := keyspace.Slot([]byte(channel))
	return r.Serves(slot, true) || r.Importing(slot)
}

// unsubscribedMessage is the sunsubscribe message of a shard channel taken
// away, with the client's count of shard channels left.
func unsubscribedMessage(channel string, left int) []byte {
	w := resp.Writer{Proto: 2}
	w.Array(3)
	w.BulkString("sunsubscribe")
	w.BulkString(channel)
	w.Int(int64(left))
	return w.B
}

func addClient(m map[string][]*Client, name string, c *Client) map[string][]*Client {
	if m == nil {
		m = map[string][]*Client{}
	}
	m[name] = append(m[name], c)
	return m
}

// without returns list less its first v.
func without[V comparable](list []V, v V) []V {
	for i, o := range list {
		if o == v {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}

// removeFrom takes v off m[k], dropping k once its list is empty: the
// registries of subscribers, watchers, waiters and tracking prefixes.
func removeFrom[K, V comparable](m map[K][]V, k K, v V) {
	if list := without(m[k], v); len(list) > 0 {
		m[k] = list
	} else {
		delete(m, k)
	}
}

// remove drops one subscription of c from the client and, if it got there,
// from the registry. It reports whether c had it.
func (r *pubsubRegistry) remove(c *Client, kind subKind, name string) bool {
	p := &c.ps
	p.mu.Lock()
	own := *p.own(kind)
	in, ok := own[name]
	delete(own, name)
	p.mu.Unlock()
	if !ok {
		return false
	}
	if kind == subPattern {
		p.patternOrder = without(p.patternOrder, name)
	}
	if !in {
		return true
	}
	r.mu.Lock()
	switch kind {
	case subChannel, subShard:
		m := r.channels
		if kind == subShard {
			m = r.shard
		}
		removeFrom(m, name, c)
	case subPattern:
		ps := r.byPattern[name]
		if ps.clients = without(ps.clients, c); len(ps.clients) == 0 {
			delete(r.byPattern, name)
			r.patterns = without(r.patterns, ps)
		}
	}
	r.mu.Unlock()
	return true
}

// shardChannels lists the client's shard channels.
func (p *pubsubClient) shardChannels() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return mapKeys(p.shard)
}

// shardCount is the number of the client's shard channels.
func (p *pubsubClient) shardCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.shard)
}

type subKind uint8

const (
	subChannel subKind = iota
	subPattern
	subShard
)

// unsubscribeAll drops every subscription of c without confirmations
// (RESET, disconnect).
func (s *Server) unsubscribeAll(c *Client) {
	p := &c.ps
	if !p.subscribed() {
		return
	}
	for ch := range p.channels {
		s.pubsub.remove(c, subChannel, ch)
	}
	for _, ch := range p.shardChannels() {
		s.pubsub.remove(c, subShard, string(ch))
	}
	for len(p.patternOrder) > 0 {
		s.pubsub.remove(c, subPattern, p.patternOrder[0])
	}
	p.updateCounts()
}

// unsubscribeSlots ends every client's subscriptions to the shard channels
// of the slots gone reports, each with an sunsubscribe message carrying the
// client's count of shard channels left, as Redis does when a slot leaves
// the node or the shard it serves (removeChannelsInSlot): its clients then
// subscribe where the slot went. A client that had no other subscription
// leaves Pub/Sub mode.
func (s *Server) unsubscribeSlots(gone func(slot int) bool) {
	r := &s.pubsub
	r.mu.RLock()
	none := len(r.shard) == 0
	r.mu.RUnlock()
	if none {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for ch, clients := range r.shard {
		if !gone(keyspace.Slot([]byte(ch))) {
			continue
		}
		delete(r.shard, ch)
		for _, c := range clients {
			p := &c.ps
			p.mu.Lock()
			_, had := p.shard[ch]
			delete(p.shard, ch)
			left := len(p.shard)
			p.nssub.Store(int32(left))
			p.mu.Unlock()
			if !had {
				continue // its SUNSUBSCRIBE is under way and confirms it
			}
			s.deliver(c, unsubscribedMessage(ch, left), nil)
		}
	}
}

// Publish sends message to the subscribers of channel and of the patterns
// matching it, and returns how many received it. Server code (keyspace
// notifications) calls it; the messages are written before it returns.
func (s *Server) Publish(channel, message []byte) int {
	return s.publish(nil, channel, message, false)
}

// publish delivers a message published by the client by (nil: the server)
// and returns the number of receivers. by writes the subscribers' sockets at
// its next flush. shard publishes to shard channels (SPUBLISH).
func (s *Server) publish(by *Client, channel, message []byte, shard bool) int {
	if by != nil && by.conn == nil {
		by = nil // not a connection (a script's client): nobody flushes it
	}
	var enc []byte
	if by != nil {
		enc = by.ps.enc
	}
	w := resp.Writer{B: enc[:0], Proto: 2}
	// The publisher's own subscriptions made earlier in the same command
	// (a transaction) are not registered yet but receive it too, last.
	var own *pubsubClient
	if by != nil && len(by.ps.unregistered) > 0 {
		own = &by.ps
	}
	r := &s.pubsub
	r.mu.RLock()
	n := 0
	subs, kind, toSelf := r.channels[string(channel)], "message", false
	if shard {
		subs, kind = r.shard[string(channel)], "smessage"
	}
	if own != nil {
		m := own.channels
		own.mu.Lock()
		if shard {
			m = own.shard
		}
		if in, ok := m[string(channel)]; ok && !in {
			toSelf = true
		}
		own.mu.Unlock()
	}
	if len(subs) > 0 || toSelf {
		w.Array(3)
		w.BulkString(kind)
		w.Bulk(channel)
		w.Bulk(message)
		for _, t := range subs {
			s.deliverPublished(t, w.B, by)
		}
		n += len(subs)
		if toSelf {
			by.deliverOwn(w.B)
			n++
		}
	}
	if !shard {
		pmessage := func(pattern []byte, to []*Client) {
			w.B = w.B[:0]
			w.Array(4)
			w.BulkString("pmessage")
			w.Bulk(pattern)
			w.Bulk(channel)
			w.Bulk(message)
			for _, t := range to {
				s.deliverPublished(t, w.B, by)
			}
			n += len(to)
		}
		for _, ps := range r.patterns {
			if glob.Match(ps.pattern, channel, false) {
				pmessage(ps.pattern, ps.clients)
			}
		}
		if own != nil {
			for _, pat := range own.patternOrder {
				if !own.patterns[pat] && glob.Match([]byte(pat), channel, false) {
					pmessage([]byte(pat), []*Client{by})
				}
			}
		}
	}
	r.mu.RUnlock()
	if by != nil && cap(w.B) <= idleWriteMax {
		by.ps.enc = w.B
	}
	return n
}

// deliverPublished is deliver for a published message: one to its publisher
// waits for the reply.
func (s *Server) deliverPublished(t *Client, msg []byte, by *Client) {
	if t == by {
		by.deliverOwn(msg)
		return
	}
	s.deliver(t, msg, by)
}

// Push appends msg, one encoded RESP2 push message (an array), to t's output
// (written as a RESP3 push if t speaks RESP3) and writes it out. It is the
// server's way to send out-of-band messages: Pub/Sub, and later keyspace
// notifications and tracking invalidations.
func (s *Server) Push(t *Client, msg []byte) { s.deliver(t, msg, nil) }

// deliver queues msg, a push message, for t. Its socket is written by the
// queue writer, after the publishing client's next flush if there is one.
func (s *Server) deliver(t *Client, msg []byte, by *Client) { s.deliverAs(t, msg, by, true) }

// deliverAs is deliver for a message that is a push in RESP3 (push) or is
// sent as written (a MONITOR line).
func (s *Server) deliverAs(t *Client, msg []byte, by *Client, push bool) {
	if t == by {
		// Where its reply is being written, as Redis does: inside EXEC's
		// array, say.
		start := len(t.out.B)
		t.out.B = append(t.out.B, msg...)
		if push && t.out.Proto == 3 {
			t.out.B[start] = '>'
		}
		return
	}
	q := &t.ps.q
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	var first byte
	if push && t.proto.Load() == 3 {
		first = '>'
	}
	q.add(msg, first)
	if s.overLimit(t) {
		q.mu.Unlock()
		s.dropSlowClient(t)
		return
	}
	if q.writing || q.scheduled {
		q.mu.Unlock()
		return // whoever writes or will write takes it along
	}
	q.scheduled = true
	q.mu.Unlock()
	if by == nil {
		s.pubsub.writer.schedule(s, []*Client{t})
		return
	}
	by.ps.wake = append(by.ps.wake, t)
}

// writeWoken writes the queues of the subscribers this client's publishes
// left output for. Its loop writes them itself, at the end of its round
// (when every publish of the round has run, so a subscriber gets one write),
// without waiting for a socket; a client its own goroutine serves hands
// them to the queue writer.
func (c *Client) writeWoken() {
	if c.onLoop {
		for _, t := range c.ps.wake {
			t.writeQueue()
		}
	} else {
		c.s.pubsub.writer.schedule(c.s, c.ps.wake)
	}
	clear(c.ps.wake)
	c.ps.wake = c.ps.wake[:0]
}

// overLimit applies client-output-buffer-limit to t's queue, for the class
// t is in now. Needs t.ps.q.mu.
func (s *Server) overLimit(t *Client) bool {
	q := &t.ps.q
	class := config.ClassNormal
	if t.ps.nsub.Load()+t.ps.npsub.Load()+t.ps.nssub.Load() > 0 {
		class = config.ClassPubSub
	}
	lim := s.cfg.ClientOutputBufferLimit(class)
	used := q.used()
	if lim.Hard > 0 && used >= lim.Hard {
		return true
	}
	if lim.Soft <= 0 || used < lim.Soft {
		q.softSince = 0
		return false
	}
	now := s.clock.UnixMilli()
	if q.softSince == 0 {
		q.softSince = now
		return false
	}
	return (now-q.softSince)/1000 > lim.SoftSeconds
}

// dropSlowClient disconnects a client over its output limit, freeing its
// queue at once, as Redis closes such a client asynchronously.
func (s *Server) dropSlowClient(t *Client) {
	q := &t.ps.q
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.drop()
	q.mu.Unlock()
	s.log.Printf("Client id=%d addr=%s scheduled to be closed ASAP for overcoming of output buffer limits.", t.id, t.peerAddr())
	s.removeClient(t)
	t.disconnect()
}
