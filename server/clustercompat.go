package server

import (
	"bytes"
	"math/rand/v2"
	"sync/atomic"

	"github.com/keyhive/keyhive/keyspace"
)

// Redis 8.0's cluster compatibility check
// (https://redis.io/docs/latest/commands/info/, cluster_incompatible_ops;
// cluster-compatibility-sample-ratio): outside cluster mode, a sample of
// the clients' commands is checked for what a cluster node would refuse,
// each such command counted once in INFO stats. call samples a command as
// it starts (the one atomic load per command when the check is off) and
// checks its keys, or a transaction's; the handlers that would refuse in
// cluster mode (SELECT of a database but 0, SWAPDB, MOVE, COPY ... DB, a
// no-cluster script, SORT patterns on other slots) and a script's calls
// report to ClusterIncompatible.

// clusterCompat is the check's state.
type clusterCompat struct {
	ratio atomic.Int32 // the sample percentage; 0 on a cluster node or when off
	ops   atomic.Int64 // cluster_incompatible_ops
}

// compatCheck is an execution's part of the check: whether its command was
// sampled, and whether it was counted already.
type compatCheck struct {
	sampled, counted bool
}

// watchClusterCompat follows cluster-compatibility-sample-ratio; a cluster
// node has nothing to check.
func (s *Server) watchClusterCompat() {
	sync := func() {
		if !s.cfg.ClusterEnabled() {
			s.compat.ratio.Store(int32(s.cfg.ClusterCompatibilitySampleRatio()))
		}
	}
	sync()
	s.cfg.OnChange("cluster-compatibility-sample-ratio", sync)
}

// sample decides whether the command starting now is checked.
func (cc *clusterCompat) sample() bool {
	r := cc.ratio.Load()
	return r > 0 && (r >= 100 || rand.Int32N(100) < r)
}

// ClusterIncompatible counts the running command as one cluster mode would
// refuse, once per sampled command.
func (c *Client) ClusterIncompatible() {
	e := c.execution()
	if e.compat.sampled && !e.compat.counted {
		e.compat.counted = true
		c.s.compat.ops.Add(1)
	}
}

// compatSampled reports whether the check samples c's running command.
func (c *Client) compatSampled() bool { return c.execution().compat.sampled }

// checkCompat samples a client's command as it starts and counts it when
// the keys it names (a transaction's queue's, a shard channel command's
// channels) hash to several slots.
func (c *Client) checkCompat(cmd *Command, args, keys [][]byte) {
	e := c.execution()
	e.compat.sampled = c.s.compat.sample()
	if !e.compat.sampled {
		return
	}
	switch {
	case cmd == cmdExec && c.multi != nil:
		keys = c.multi.keys
	case cmd == cmdSsubscribe || cmd == cmdSunsubscribe:
		keys = args[1:]
	}
	if spansSlots(keys) {
		c.ClusterIncompatible()
	}
}

// spansSlots reports whether keys hash to more than one slot.
func spansSlots(keys [][]byte) bool {
	if len(keys) < 2 {
		return false
	}
	slot := keyspace.Slot(keys[0])
	for _, k := range keys[1:] {
		if !bytes.Equal(k, keys[0]) && keyspace.Slot(k) != slot {
			return true
		}
	}
	return false
}

// checkCompat counts a script's call that cluster mode would refuse: its
// keys on several slots or, unless the script may use several, on another
// slot than the script's keys so far.
func (h *scriptHost) checkCompat(cmd *Command, args [][]byte) {
	if !cmd.spec.HasKeys() {
		return
	}
	sx := &h.x.s.scriptClient.ctx // the script holds every lock: its key buffer is free
	sx.keyBuf, _ = cmd.keyArgs(args, sx.keyBuf[:0])
	keys := sx.keyBuf
	if len(keys) == 0 {
		return
	}
	slot := keyspace.Slot(keys[0])
	switch {
	case spansSlots(keys):
	case h.crossSlotKeyOK:
		return
	case h.slot < 0:
		h.slot = slot
		return
	case h.slot == slot:
		return
	}
	h.x.c.ClusterIncompatible()
}
