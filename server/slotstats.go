package server

import (
	"github.com/keyhive/keyhive/cluster"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/values"
)

// CLUSTER SLOT-STATS' counters and command are package cluster/slotstats;
// here is what only the server knows: a command's slot and request bytes,
// and the keys the command reads (its Host).

// startSlotStats allocates the counters and follows the directive; called
// once the node is open.
func (s *Server) startSlotStats() {
	s.slotStats.Open()
	sync := func() { s.slotStats.SetOn(s.cfg.ClusterSlotStatsEnabled()) }
	sync()
	s.cfg.OnChange("cluster-slot-stats-enabled", sync)
}

// multiRequestBytes is MULTI's request, "*1\r\n$5\r\nmulti\r\n", which a
// transaction's EXEC counts as Redis does.
const multiRequestBytes = 15

// namedKeys is the keys a client's command names: those it locked, or, for
// a command that takes every lock (a script, SORT), its key specs' (the
// context's key buffer is free then).
func (c *Client) namedKeys(cmd *Command, args, locked [][]byte) [][]byte {
	if len(locked) > 0 || cmd == cmdExec || !cmd.spec.HasKeys() {
		return locked
	}
	c.ctx.keyBuf, _ = cmd.keyArgs(args, c.ctx.keyBuf[:0])
	return c.ctx.keyBuf
}

// commandSlot is the slot a client's command runs on and its request
// bytes, before it runs (EXEC's queue is gone after): its keys' slot (the
// routing check made them one), or -1 when it names none.
func (c *Client) commandSlot(cmd *Command, args, keys [][]byte) (slot, bytesIn int) {
	if cmd == cmdExec {
		t := c.multi
		if t == nil || len(t.keys) == 0 {
			return -1, 0
		}
		bytesIn = requestBytes(args) + multiRequestBytes
		for _, q := range t.cmds {
			bytesIn += requestBytes(q.args)
		}
		return keyspace.Slot(t.keys[0]), bytesIn
	}
	if len(keys) == 0 {
		return -1, 0
	}
	return keyspace.Slot(keys[0]), requestBytes(args)
}

func slotStatsCommand(x *Ctx, node *cluster.State) {
	x.s.slotStats.Command(x.W, x.Args, slotStatsHost{x.s.ks.DB(0), node.Routes()})
}

// slotStatsHost is the node as SLOT-STATS reads it, under the exclusive
// lock.
type slotStatsHost struct {
	db     *keyspace.DB
	routes *cluster.Routes
}

func (h slotStatsHost) Serves(slot int) bool {
	mine, _, _ := h.routes.Owner(slot)
	return mine || h.routes.MastersSlot(slot)
}

func (h slotStatsHost) EachKey(shard int, fn func(slot int, memory func() uint64)) {
	h.db.EachEntry(shard, func(e *keyspace.Entry) {
		fn(keyspace.Slot(e.Key()), func() uint64 {
			return uint64(keyspace.EntryBytes(e) + values.ObjectBytes(e.Object(), memorySamples))
		})
	})
}

// memorySamples is how many elements of a collection memory-bytes looks at,
// MEMORY USAGE's default.
const memorySamples = 5
