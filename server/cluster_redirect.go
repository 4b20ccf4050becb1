package server

import (
	"bytes"
	"strconv"

	"github.com/keyhive/keyhive/keyspace"
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

// The shard channel commands route by their channel's slot.
var cmdAsking, cmdMigrate, cmdSpublish, cmdSsubscribe, cmdSunsubscribe *Command

func init() {
	cmdAsking, cmdMigrate = table["asking"], table["migrate"]
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
	errMoveCluster    = "ERR MOVE is not allowed in cluster mode"
	errSwapdbCluster  = "ERR SWAPDB is not allowed in cluster mode"
	errCopyDBCluster  = "ERR Copying to another database is not allowed in cluster mode"
	errClusterDisable = "ERR This instance has cluster support disabled"
)

// routed reports whether this node serves cmd; if not it refuses it with
// the redirect (an EXEC so refused discards its transaction).
func (c *Client) routed(cmd *Command, args [][]byte) bool {
	asking := c.clusterConn.asking
	if cmd != cmdAsking && c.multi == nil {
		c.clusterConn.asking = false // ASKING covers one command, or one transaction
	}
	shardChannels := cmd == cmdSpublish || cmd == cmdSsubscribe || cmd == cmdSunsubscribe
	var keys [][]byte
	write := cmd.Flags&FlagWrite != 0
	switch {
	case cmd == cmdExec:
		if c.multi == nil {
			return true
		}
		keys = c.multi.keys
		for _, q := range c.multi.cmds {
			write = write || q.cmd.Flags&FlagWrite != 0
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
		return true
	}
	if len(keys) == 0 {
		return true
	}
	r := c.s.cluster.Routes()
	slot := keyspace.Slot(keys[0])
	mine, assigned, addr := r.Owner(slot)
	if !assigned { // as Redis, before looking at the other keys
		return c.redirect(cmd, errSlotNotServed)
	}
	multiple := false
	for _, k := range keys[1:] {
		if bytes.Equal(k, keys[0]) {
			continue
		}
		if keyspace.Slot(k) != slot {
			return c.redirect(cmd, errCrossSlot)
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
				return c.redirect(cmd, errClusterDown)
			}
		case !cfg.ClusterAllowReadsWhenDown():
			return c.redirect(cmd, errClusterDown)
		case write:
			return c.redirect(cmd, errClusterDownRO)
		}
	}
	if !migrating && !importing {
		if mine {
			return true
		}
		return c.redirect(cmd, redirectText("MOVED ", slot, addr))
	}
	if cmd == cmdMigrate {
		return true
	}
	missing, existing := 0, 0
	if !shardChannels {
		missing, existing = c.countPresent(keys)
	}
	if migrating && missing > 0 {
		if existing > 0 {
			return c.redirect(cmd, errTryAgain)
		}
		return c.redirect(cmd, redirectText("ASK ", slot, migrateTo))
	}
	if importing && (asking || cmd.Flags&FlagAsking != 0) {
		if multiple && missing > 0 {
			return c.redirect(cmd, errTryAgain)
		}
		return true
	}
	if mine {
		return true
	}
	return c.redirect(cmd, redirectText("MOVED ", slot, addr))
}

func redirectText(kind string, slot int, addr string) string {
	return kind + strconv.Itoa(slot) + " " + addr
}

// countPresent counts the keys that exist and those that do not (an
// expired key is missing), under their shards' locks.
func (c *Client) countPresent(keys [][]byte) (missing, existing int) {
	var set keyspace.LockSet
	for _, k := range keys {
		set.Add(k)
	}
	db := c.s.ks.Lock(0, &set)
	now := c.commandTime()
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
