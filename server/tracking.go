package server

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/keyhive/keyhive/cmdspec"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/resp"
)

// Client-side caching (CLIENT TRACKING) as Redis 6+ serves it. In the default
// mode the server remembers which clients read which keys and tells each, once,
// when such a key changes; in BCAST mode a client hears about every change to
// keys under its prefixes, batched per command. Changes arrive through the
// keyspace's Modified hook with the client that made them (for NOLOOP).
// Messages go out through the Pub/Sub delivery path: a RESP3 push to the
// client itself, or a message on __redis__:invalidate to the client it
// redirects to.

// trackingOpts is a client's CLIENT TRACKING ON state; immutable once set.
type trackingOpts struct {
	bcast, optin, optout, noloop bool
	redirect                     int64 // client id; 0: none
	prefixes                     [][]byte
}

// clientTracking is a client's part.
type clientTracking struct {
	opts        atomic.Pointer[trackingOpts] // nil: off
	brokenRedir atomic.Bool
	// caching is CLIENT CACHING YES (1) or NO (-1) for the next command.
	caching atomic.Int32
}

type tracking struct {
	mu       sync.Mutex
	clients  atomic.Int64 // clients tracking: writes look at nothing while 0
	keys     map[string]map[*Client]struct{}
	items    int                  // client entries in keys
	prefixes map[string][]*Client // BCAST prefixes ("" for all keys)
	// pending holds the BCAST keys to send at the end of the command, by
	// prefix and client: one message per prefix, in prefix order, as Redis.
	pending map[string]map[*Client][][]byte
	// self holds a client's invalidations of its own changes, sent after the
	// command's reply as Redis does (nil for a flush).
	self   map[*Client][][]byte
	queued atomic.Bool // pending or self is not empty
}

var (
	trackingChannel = []byte("__redis__:invalidate")
	msgInvalidate   = []byte("invalidate")
)

// remember records the keys a read command of c read, as Redis's
// trackingRememberKeys does, and evicts keys past tracking-table-max-keys.
func (s *Server) remember(c *Client, o *trackingOpts, keys [][]byte) {
	switch caching := c.tracking.caching.Load(); {
	case o.bcast, o.optin && caching != 1, o.optout && caching == -1:
		return
	}
	t := &s.tracking
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.keys == nil {
		t.keys = map[string]map[*Client]struct{}{}
	}
	for _, k := range keys {
		set := t.keys[string(k)]
		if set == nil {
			set = map[*Client]struct{}{}
			t.keys[string(k)] = set
		}
		if _, ok := set[c]; !ok {
			set[c] = struct{}{}
			t.items++
		}
	}
	s.limitTracked()
}

// limitTracked forgets remembered keys, telling their readers, until at
// most tracking-table-max-keys are left. Needs tracking.mu.
func (s *Server) limitTracked() {
	t := &s.tracking
	if max := s.cfg.TrackingTableMaxKeys(); max > 0 {
		for key := range t.keys {
			if int64(len(t.keys)) <= max {
				break
			}
			s.invalidateReaders([]byte(key), nil)
		}
	}
}

// watchTrackingLimit makes a CONFIG SET that lowers tracking-table-max-keys
// evict at once, as Redis does before its next command.
func (s *Server) watchTrackingLimit() {
	s.cfg.OnApply("tracking-table-max-keys", func() error {
		if s.tracking.clients.Load() > 0 {
			s.tracking.mu.Lock()
			s.limitTracked()
			s.tracking.mu.Unlock()
		}
		return nil
	})
}

// trackAfter does a command's tracking work while its keys are still locked:
// remember what a read command of a tracking client read, send the BCAST
// invalidations it caused, and end a CLIENT CACHING that applied to it.
func (s *Server) trackAfter(c *Client, cmd *Command) {
	o := c.tracking.opts.Load()
	// Keys are collected (keyBuf) for commands not under the exclusive lock;
	// the scripts' own keys are not remembered, only what their commands
	// read (trackInner).
	if o != nil && cmd.Flags&(cmdspec.FlagReadonly|cmdspec.FlagAllKeys) == cmdspec.FlagReadonly && len(c.ctx.keyBuf) > 0 {
		s.remember(c, o, c.ctx.keyBuf)
	}
	if s.tracking.queued.Load() {
		s.flushBroadcasts(c)
	}
	// CLIENT CACHING applies to the next command, or to a whole
	// transaction, as Redis keeps it across CLIENT commands and MULTI.
	if o != nil && c.multi == nil && !strings.HasPrefix(cmd.Name, "client|") {
		c.tracking.caching.Store(0)
	}
}

// trackInner is tracking for a command run inside EXEC or a script by c:
// when the command is a read, the keys of keysOf's arguments args are
// remembered for c (the command's own, or in a script the script's).
func (s *Server) trackInner(c *Client, cmd, keysOf *Command, args [][]byte) {
	if s.tracking.clients.Load() == 0 || cmd.Flags&cmdspec.FlagReadonly == 0 {
		return
	}
	if o := c.tracking.opts.Load(); o != nil {
		keys, _ := keysOf.keyArgs(args, nil)
		s.remember(c, o, keys)
	}
}

// keyModified is the keyspace's Modified hook: WATCH and tracking.
func (s *Server) keyModified(db int, key []byte, owner keyspace.Owner) {
	s.watches.touched(db, key)
	if s.tracking.clients.Load() == 0 {
		return
	}
	by, _ := owner.(*Client)
	s.tracking.mu.Lock()
	s.invalidateKey(key, by)
	s.tracking.mu.Unlock()
}

// invalidateKey tells the clients that read key, and queues it for the BCAST
// clients whose prefix it has. Needs tracking.mu.
func (s *Server) invalidateKey(key []byte, by *Client) {
	s.invalidateReaders(key, by)
	s.queueBroadcasts(key, by)
}

// invalidateReaders tells the clients that read key, and forgets them.
// Needs tracking.mu.
func (s *Server) invalidateReaders(key []byte, by *Client) {
	t := &s.tracking
	if set, ok := t.keys[string(key)]; ok {
		delete(t.keys, string(key))
		t.items -= len(set)
		for c := range set {
			o := c.tracking.opts.Load()
			switch {
			case o == nil || o.bcast || o.noloop && c == by:
			case c == by:
				t.postpone(c, bytes.Clone(key))
			default:
				s.sendInvalidation(c, o, [][]byte{key}, false, by)
			}
		}
	}
}

// queueBroadcasts queues key for the BCAST clients whose prefix it has.
// Needs tracking.mu.
func (s *Server) queueBroadcasts(key []byte, by *Client) {
	t := &s.tracking
	for prefix, cs := range t.prefixes {
		if !bytes.HasPrefix(key, []byte(prefix)) {
			continue
		}
		for _, c := range cs {
			if o := c.tracking.opts.Load(); o != nil && !(o.noloop && c == by) {
				if t.pending == nil {
					t.pending = map[string]map[*Client][][]byte{}
				}
				if t.pending[prefix] == nil {
					t.pending[prefix] = map[*Client][][]byte{}
				}
				t.pending[prefix][c] = append(t.pending[prefix][c], bytes.Clone(key))
				t.queued.Store(true)
			}
		}
	}
}

// postpone keeps an invalidation of c's own change (key; nil for all) for
// after its reply. Needs mu.
func (t *tracking) postpone(c *Client, key []byte) {
	if t.self == nil {
		t.self = map[*Client][][]byte{}
	}
	t.self[c] = append(t.self[c], key)
	t.queued.Store(true)
}

// flushBroadcasts sends the BCAST invalidations queued so far, and by's
// invalidations of its own changes.
func (s *Server) flushBroadcasts(by *Client) {
	t := &s.tracking
	t.mu.Lock()
	defer t.mu.Unlock()
	prefixes := make([]string, 0, len(t.pending))
	for p := range t.pending {
		prefixes = append(prefixes, p)
	}
	slices.Sort(prefixes)
	for _, p := range prefixes {
		for c, keys := range t.pending[p] {
			if o := c.tracking.opts.Load(); o != nil {
				s.sendInvalidation(c, o, keys, false, by)
			}
		}
		delete(t.pending, p)
	}
	if keys, ok := t.self[by]; ok && by != nil {
		if o := by.tracking.opts.Load(); o != nil {
			for _, k := range keys {
				if k == nil {
					s.sendInvalidation(by, o, nil, true, by)
				} else {
					s.sendInvalidation(by, o, [][]byte{k}, false, by)
				}
			}
		}
		delete(t.self, by)
	}
	t.queued.Store(len(t.self) > 0)
}

// invalidateAll tells every tracking client that everything changed (a
// flush) and forgets the remembered keys, as Redis does.
func (s *Server) invalidateAll(by *Client) {
	if s.tracking.clients.Load() == 0 {
		return
	}
	t := &s.tracking
	t.mu.Lock()
	defer t.mu.Unlock()
	t.keys, t.items = nil, 0
	s.mu.Lock()
	clients := make([]*Client, 0, len(s.clients))
	for _, c := range s.clients {
		clients = append(clients, c)
	}
	s.mu.Unlock()
	for _, c := range clients {
		o := c.tracking.opts.Load()
		switch {
		case o == nil:
		case c == by: // NOLOOP too, as Redis 7.0
			t.postpone(c, nil)
		default:
			s.sendInvalidation(c, o, nil, true, by)
		}
	}
}

// sendInvalidation sends c an invalidation of keys (or of everything, as a
// null), to the client it redirects to when it does.
func (s *Server) sendInvalidation(c *Client, o *trackingOpts, keys [][]byte, all bool, by *Client) {
	target := c
	if o.redirect != 0 {
		if target = s.clientByID(o.redirect); target == nil {
			c.tracking.brokenRedir.Store(true)
			if c.proto.Load() == 3 {
				w := resp.Writer{Proto: 2}
				w.Array(2)
				w.BulkString("tracking-redir-broken")
				w.Int(o.redirect)
				s.deliver(c, w.B, by)
			}
			return
		}
	}
	resp3 := target.proto.Load() == 3
	subscribed := target.ps.nsub.Load()+target.ps.npsub.Load()+target.ps.nssub.Load() > 0
	if !resp3 && (o.redirect == 0 || !subscribed) {
		return // RESP2 has no pushes on the same connection
	}
	w := resp.Writer{Proto: 2}
	if resp3 {
		w.Array(2)
		w.Bulk(msgInvalidate)
	} else {
		w.Array(3)
		w.BulkString("message")
		w.Bulk(trackingChannel)
	}
	if all {
		if resp3 {
			w.B = append(w.B, "_\r\n"...)
		} else {
			w.Null()
		}
	} else {
		w.Array(len(keys))
		for _, k := range keys {
			w.Bulk(k)
		}
	}
	s.deliver(target, w.B, by)
}

// enableTracking turns tracking on for c, or updates it (new prefixes).
func (s *Server) enableTracking(c *Client, o *trackingOpts) {
	t := &s.tracking
	t.mu.Lock()
	defer t.mu.Unlock()
	old := c.tracking.opts.Swap(o)
	if old == nil {
		t.clients.Add(1)
	}
	c.tracking.brokenRedir.Store(false)
	if !o.bcast {
		return
	}
	if t.prefixes == nil {
		t.prefixes = map[string][]*Client{}
	}
	if len(o.prefixes) == 0 {
		o.prefixes = [][]byte{{}}
	}
	var all [][]byte // prefixes add up across CLIENT TRACKING ON calls
	if old != nil {
		all = old.prefixes
	}
	for _, p := range o.prefixes {
		if !hasPrefix(old, p) {
			t.prefixes[string(p)] = append(t.prefixes[string(p)], c)
			all = append(all, p)
		}
	}
	o.prefixes = all
}

func hasPrefix(o *trackingOpts, p []byte) bool {
	if o == nil {
		return false
	}
	for _, q := range o.prefixes {
		if bytes.Equal(p, q) {
			return true
		}
	}
	return false
}

// disableTracking turns tracking off for c; its remembered keys are dropped
// lazily, when they change.
func (s *Server) disableTracking(c *Client) {
	t := &s.tracking
	t.mu.Lock()
	defer t.mu.Unlock()
	o := c.tracking.opts.Swap(nil)
	if o == nil {
		return
	}
	t.clients.Add(-1)
	c.tracking.caching.Store(0)
	for _, p := range o.prefixes {
		removeFrom(t.prefixes, string(p), c)
	}
	for _, cs := range t.pending {
		delete(cs, c)
	}
	delete(t.self, c)
}

// clientTracking handles CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p ...]
// [BCAST] [OPTIN] [OPTOUT] [NOLOOP], with Redis's checks in Redis's order.
func clientTrackingCommand(x *Ctx) {
	c := x.c
	var on bool
	switch {
	case cstr.ArgIs(x.Args[2], "on"):
		on = true
	case cstr.ArgIs(x.Args[2], "off"):
	default:
		x.W.Error(errSyntax)
		return
	}
	o := &trackingOpts{}
	for j := 3; j < len(x.Args); j++ {
		more := j+1 < len(x.Args)
		switch a := x.Args[j]; {
		case cstr.ArgIs(a, "redirect") && more:
			j++
			if o.redirect != 0 {
				x.W.Error("ERR A client can only redirect to a single other client")
				return
			}
			id, ok := strnum.ParseInt(x.Args[j])
			if !ok {
				x.W.Error(errNotInt)
				return
			}
			if x.s.clientByID(id) == nil {
				x.W.Error("ERR The client ID you want redirect to does not exist")
				return
			}
			o.redirect = id
		case cstr.ArgIs(a, "bcast"):
			o.bcast = true
		case cstr.ArgIs(a, "optin"):
			o.optin = true
		case cstr.ArgIs(a, "optout"):
			o.optout = true
		case cstr.ArgIs(a, "noloop"):
			o.noloop = true
		case cstr.ArgIs(a, "prefix") && more:
			j++
			o.prefixes = append(o.prefixes, bytes.Clone(x.Args[j]))
		default:
			x.W.Error(errSyntax)
			return
		}
	}
	if !on {
		x.s.disableTracking(c)
		x.W.OK()
		return
	}
	old := c.tracking.opts.Load()
	switch {
	case !o.bcast && len(o.prefixes) > 0:
		x.W.Error("ERR PREFIX option requires BCAST mode to be enabled")
	case old != nil && old.bcast != o.bcast:
		x.W.Error("ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.")
	case o.bcast && (o.optin || o.optout):
		x.W.Error("ERR OPTIN and OPTOUT are not compatible with BCAST")
	case o.optin && o.optout:
		x.W.Error("ERR You can't specify both OPTIN mode and OPTOUT mode")
	case old != nil && (o.optin && old.optout || o.optout && old.optin):
		x.W.Error("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.")
	case o.bcast && !x.checkPrefixes(old, o.prefixes):
	default:
		x.s.enableTracking(c, o)
		// Invalidations come from other goroutines: route this client's
		// replies through its output queue so they stay in order.
		c.ps.queued = true
		x.W.OK()
	}
}

// checkPrefixes rejects prefixes that overlap each other or the client's
// existing ones, as Redis does.
func (x *Ctx) checkPrefixes(old *trackingOpts, prefixes [][]byte) bool {
	overlap := func(a, b []byte) bool { return bytes.HasPrefix(a, b) || bytes.HasPrefix(b, a) }
	for i, p := range prefixes {
		if old != nil {
			for _, q := range old.prefixes {
				if overlap(p, q) && !bytes.Equal(p, q) {
					x.W.Error(fmt.Sprintf("ERR Prefix '%s' overlaps with an existing prefix '%s'. Prefixes for a single client must not overlap.", p, q))
					return false
				}
			}
		}
		for _, q := range prefixes[i+1:] {
			if overlap(p, q) {
				x.W.Error(fmt.Sprintf("ERR Prefix '%s' overlaps with another provided prefix '%s'. Prefixes for a single client must not overlap.", p, q))
				return false
			}
		}
	}
	return true
}

func clientCachingCommand(x *Ctx) {
	o := x.c.tracking.opts.Load()
	if o == nil || !(o.optin || o.optout) {
		x.W.Error("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled")
		return
	}
	switch {
	case cstr.ArgIs(x.Args[2], "yes") && o.optin:
		x.c.tracking.caching.Store(1)
	case cstr.ArgIs(x.Args[2], "yes"):
		x.W.Error("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")
		return
	case cstr.ArgIs(x.Args[2], "no") && o.optout:
		x.c.tracking.caching.Store(-1)
	case cstr.ArgIs(x.Args[2], "no"):
		x.W.Error("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
		return
	default:
		x.W.Error(errSyntax)
		return
	}
	x.W.OK()
}

// redirectID is CLIENT GETREDIR's and CLIENT LIST's redir: -1 when not
// tracking, 0 without a redirect.
func (c *Client) redirectID() int64 {
	o := c.tracking.opts.Load()
	if o == nil {
		return -1
	}
	return o.redirect
}

func clientTrackingInfo(x *Ctx) {
	c := x.c
	o := c.tracking.opts.Load()
	flags := []string{"off"}
	if o != nil {
		flags = []string{"on"}
		for _, f := range []struct {
			on   bool
			name string
		}{{o.bcast, "bcast"}, {o.optin, "optin"}, {o.optout, "optout"},
			{c.tracking.caching.Load() == 1, "caching-yes"}, {c.tracking.caching.Load() == -1, "caching-no"},
			{o.noloop, "noloop"}, {c.tracking.brokenRedir.Load(), "broken_redirect"}} {
			if f.on {
				flags = append(flags, f.name)
			}
		}
	}
	x.W.Map(3)
	x.W.BulkString("flags")
	x.W.Set(len(flags))
	for _, f := range flags {
		x.W.BulkString(f)
	}
	x.W.BulkString("redirect")
	x.W.Int(c.redirectID())
	x.W.BulkString("prefixes")
	if o == nil || !o.bcast {
		x.W.Array(0)
		return
	}
	x.W.Array(len(o.prefixes))
	for _, p := range o.prefixes {
		x.W.Bulk(p)
	}
}
