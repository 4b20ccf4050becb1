package server

import (
	"bytes"
	"strconv"

	"github.com/keyhive/keyhive/cluster"
	"github.com/keyhive/keyhive/cmdspec"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/resp"
	"github.com/keyhive/keyhive/scripting"
)

// The dispatch path's cluster check (admit calls routed when the server is
// a cluster node): a command's keys must hash to one slot this node serves,
// else the client is redirected with Redis's errors. It reads the node's
// routing snapshot without a lock and allocates nothing unless it
// redirects.

// clusterConn is a connection's cluster state.
type clusterConn struct {
	asking   bool // ASKING: the next command may touch a slot being imported
	readonly bool // READONLY: reads may be served by a replica of the slot's master
}

// The commands routing treats apart: ASKING and MULTI keep the ASKING
// state, MIGRATE runs on a slot being moved, the shard channel commands
// route by their channel's slot.
var cmdAsking, cmdMulti, cmdMigrate, cmdSpublish, cmdSsubscribe, cmdSunsubscribe *Command

func init() {
	cmdAsking, cmdMulti, cmdMigrate = table["asking"], table["multi"], table["migrate"]
	cmdSpublish, cmdSsubscribe, cmdSunsubscribe = table["spublish"], table["ssubscribe"], table["sunsubscribe"]
}

// Redis's redirect texts.
const (
	errCrossSlot      = "CROSSSLOT Keys in request don't hash to the same slot"
	errTryAgain       = "TRYAGAIN Multiple keys request during rehashing of slot"
	errClusterDown    = "CLUSTERDOWN The cluster is down"
	errClusterDownRO  = "CLUSTERDOWN The cluster is down and only accepts read commands"
	errSlotNotServed  = "CLUSTERDOWN Hash slot not served"
	errSelectCluster  = "ERR SELECT is not allowed in cluster mode"
	errClusterDisable = "ERR This instance has cluster support disabled"
)

// routed reports whether this node serves cmd; if not it refuses it with
// the redirect (an EXEC so refused discards its transaction).
func (c *Client) routed(cmd *Command, args [][]byte) bool {
	asking := c.clusterConn.asking
	if cmd != cmdAsking && cmd != cmdMulti && c.multi == nil {
		c.clusterConn.asking = false // ASKING covers one command, or one transaction
	}
	if msg, _ := c.route(cmd, args, asking, false); msg != "" {
		return c.redirect(cmd, msg)
	}
	return true
}

// scriptRouted is the check of a script's redis.call: its keys must be
// served here, and on the script's one slot, with Redis's texts for
// scripts.
func (h *scriptHost) scriptRouted(cmd *Command, args [][]byte) bool {
	// The script client's key buffer is free; the script holds every lock.
	msg, slot := h.x.s.scriptClient.route(cmd, args, h.x.c.clusterConn.asking, true)
	switch {
	case msg == errClusterDownRO:
		return h.reject(cmd, "ERR Script attempted to execute a write command while the cluster is down and readonly")
	case msg == errClusterDown:
		return h.reject(cmd, "ERR Script attempted to execute a command while the cluster is down")
	case msg != "":
		return h.reject(cmd, "ERR Script attempted to access a non local key in a cluster node")
	case slot < 0 || h.crossSlotKeyOK:
		return true
	case h.slot < 0:
		h.slot = slot
	case h.slot != slot:
		return h.reject(cmd, "ERR Script attempted to access keys that do not hash to the same slot")
	}
	return true
}

// startCluster sets a script's slot from its declared keys (their check
// refused the EVAL if they span slots), and whether it may use several:
// scripts without a shebang may, as in Redis.
func (h *scriptHost) startCluster(keys [][]byte, script *scripting.Script, fn *scripting.Function) {
	h.slot = -1
	if len(keys) > 0 {
		h.slot = keyspace.Slot(keys[0])
	}
	var flags scripting.Flags
	switch {
	case script != nil && !script.Shebang:
		flags = scripting.FlagAllowCrossSlotKeys // compatibility mode, as in Redis
	case script != nil:
		flags = script.Flags
	default:
		flags = fn.Flags
	}
	h.crossSlotKeyOK = flags&scripting.FlagAllowCrossSlotKeys != 0
}

// refusedNoCluster refuses a script or function flagged no-cluster on a
// cluster node; elsewhere it is one cluster mode would refuse.
func (x *Ctx) refusedNoCluster(flags scripting.Flags) bool {
	if flags&scripting.FlagNoCluster == 0 {
		return false
	}
	if x.s.cluster != nil {
		x.W.Error("ERR Can not run script on cluster, 'no-cluster' flag is set.")
		return true
	}
	x.c.ClusterIncompatible()
	return false
}

// route returns "" when this node serves cmd, else the redirect's text:
// the keys hash to one slot, served here (or imported, after ASKING).
// locked says the caller holds the keys' locks already. slot is the keys'
// slot, -1 when the command names none.
func (c *Client) route(cmd *Command, args [][]byte, asking, locked bool) (redirect string, slot int) {
	shardChannels := cmd == cmdSpublish || cmd == cmdSsubscribe || cmd == cmdSunsubscribe
	var keys [][]byte
	write := cmd.Flags&cmdspec.FlagWrite != 0
	switch {
	case cmd == cmdExec:
		if c.multi == nil {
			return "", -1
		}
		keys = c.multi.keys
		for _, q := range c.multi.cmds {
			write = write || q.cmd.Flags&cmdspec.FlagWrite != 0
		}
	case shardChannels:
		keys = args[1:]
		if cmd == cmdSpublish {
			keys = args[1:2]
		}
	case cmd.spec.HasKeys():
		c.ctx.keyBuf, _ = cmd.keyArgs(args, c.ctx.keyBuf[:0])
		keys = c.ctx.keyBuf
	default:
		return "", -1
	}
	if len(keys) == 0 {
		return "", -1
	}
	r := c.s.cluster.Routes()
	slot = keyspace.Slot(keys[0])
	mine, assigned, addr := r.Owner(slot)
	if !assigned { // as Redis, before looking at the other keys
		return errSlotNotServed, slot
	}
	multiple := false
	for _, k := range keys[1:] {
		if bytes.Equal(k, keys[0]) {
			continue
		}
		if keyspace.Slot(k) != slot {
			return errCrossSlot, slot
		}
		multiple = true
	}
	var migrateTo string
	migrating, importing := false, false
	if mine {
		migrateTo, migrating = r.Migrating(slot)
	}
	if !migrating {
		importing = r.Importing(slot)
	}
	if !r.OK {
		cfg := c.s.cfg
		switch {
		case shardChannels:
			if !cfg.ClusterAllowPubsubshardWhenDown() {
				return errClusterDown, slot
			}
		case !cfg.ClusterAllowReadsWhenDown():
			return errClusterDown, slot
		case write:
			return errClusterDownRO, slot
		}
	}
	served := r.Serves(slot, (c.clusterConn.readonly || shardChannels) && !write)
	if !migrating && !importing {
		if served {
			return "", slot
		}
		return redirectText("MOVED ", slot, addr), slot
	}
	if cmd == cmdMigrate {
		return "", slot
	}
	missing, existing := 0, 0
	if !shardChannels {
		missing, existing = c.countPresent(keys, locked)
	}
	if migrating && missing > 0 {
		if existing > 0 {
			return errTryAgain, slot
		}
		return redirectText("ASK ", slot, migrateTo), slot
	}
	if importing && (asking || cmd.Flags&cmdspec.FlagAsking != 0) {
		if multiple && missing > 0 {
			return errTryAgain, slot
		}
		return "", slot
	}
	if served {
		return "", slot
	}
	return redirectText("MOVED ", slot, addr), slot
}

func redirectText(kind string, slot int, addr string) string {
	return kind + strconv.Itoa(slot) + " " + addr
}

// countPresent counts the keys that exist and those that do not (an
// expired key is missing), under their shards' locks unless the caller
// holds them.
func (c *Client) countPresent(keys [][]byte, locked bool) (missing, existing int) {
	now := c.s.clock.UnixMilli()
	if locked {
		db := c.s.ks.DB(0)
		for _, k := range keys {
			if _, found := db.Lookup(k, now, false); found {
				existing++
			} else {
				missing++
			}
		}
		return missing, existing
	}
	var set keyspace.LockSet
	for _, k := range keys {
		set.Add(k)
	}
	db := c.s.ks.Lock(0, &set)
	for _, k := range keys {
		if _, found := db.LookupIn(&set, k, now, false); found {
			existing++
		} else {
			missing++
		}
	}
	c.s.ks.Unlock(db, &set)
	return missing, existing
}

// redirect refuses cmd with a redirect. Unlike other refusals, an EXEC
// refused so gets the redirect itself, its transaction discarded.
func (c *Client) redirect(cmd *Command, msg string) bool {
	if cmd == cmdExec {
		c.s.cmdStats[cmd.id].rejected.Add(1)
		c.setMulti(nil)
		c.s.watches.unwatchAll(c)
		c.out.Error(msg)
		return false
	}
	c.reject(cmd, msg)
	return false
}

// redirectBlocked ends the waits of clients blocked on keys this node no
// longer serves, as Redis's cron does: CLUSTERDOWN when the cluster is down
// or the keys' slot is unassigned, MOVED when the slot went to another node
// (not while it is being imported here, nor for a READONLY client's read of
// its master's slot on a replica). Without it they would wait for a write
// that can never come here.
func (s *Server) redirectBlocked() {
	if s.cluster == nil || s.blocking.waiting.Load() == 0 {
		return
	}
	r := s.cluster.Routes()
	type redirect struct {
		w   *waiter
		msg string
	}
	var ended []redirect
	seen := make(map[*waiter]bool)
	s.blocking.mu.Lock()
	for _, q := range s.blocking.queues {
		for _, w := range q {
			if seen[w] || len(w.keys) == 0 {
				continue
			}
			seen[w] = true
			if msg := blockedRedirect(r, w); msg != "" {
				ended = append(ended, redirect{w, msg})
			}
		}
	}
	s.blocking.mu.Unlock()
	for _, e := range ended {
		msg := e.msg
		s.blocking.unblock(e.w, func(w *resp.Writer) { w.Error(msg) })
	}
}

// blockedRedirect is the redirect that ends w's wait, or "".
func blockedRedirect(r *cluster.Routes, w *waiter) string {
	if !r.OK {
		return errClusterDown
	}
	slot := keyspace.Slot(w.keys[0]) // a command's keys share one slot
	_, assigned, addr := r.Owner(slot)
	read := w.ctx.cmd != nil && w.ctx.cmd.Flags&cmdspec.FlagWrite == 0
	switch {
	case r.Serves(slot, w.c.clusterConn.readonly && read), r.Importing(slot):
		return ""
	case !assigned:
		return errSlotNotServed
	}
	return redirectText("MOVED ", slot, addr)
}
