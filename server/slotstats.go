package server

import (
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/keyhive/keyhive/cluster"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/values"
)

// CLUSTER SLOT-STATS (Redis 8.2, https://redis.io/docs/latest/commands/cluster-slot-stats/):
// each slot of this node's shard with its key count and, when
// cluster-slot-stats-enabled is on, the CPU time, the request and reply bytes
// of the commands that ran on it and the memory its keys use. The counters
// are a fixed array of atomics allocated when the node opens: recording a
// command is three atomic adds, and with the directive off it is one atomic
// load in call.

// slotStats is a cluster node's per-slot counters.
type slotStats struct {
	on    atomic.Bool // cluster-slot-stats-enabled on a cluster node: the one check per command
	slots *[keyspace.SlotCount]slotCounters
}

type slotCounters struct {
	cpuUsec, bytesIn, bytesOut atomic.Uint64
}

// startSlotStats allocates the counters and follows the directive; called
// once the node is open.
func (s *Server) startSlotStats() {
	st := &s.slotStats
	st.slots = new([keyspace.SlotCount]slotCounters)
	sync := func() { st.on.Store(s.cfg.ClusterSlotStatsEnabled()) }
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

// record adds a command's time and bytes to its slot.
func (st *slotStats) record(slot int, elapsedNs int64, bytesIn, bytesOut int) {
	sc := &st.slots[slot]
	sc.cpuUsec.Add(uint64(max(elapsedNs, 0) / 1000))
	sc.bytesIn.Add(uint64(bytesIn))
	sc.bytesOut.Add(uint64(bytesOut))
}

// resetSlots zeroes the counters of the slots has names: those that left
// this node's shard, as Redis does when a slot is deleted from a node, or
// every slot (CONFIG RESETSTAT).
func (st *slotStats) resetSlots(has func(slot int) bool) {
	if st.slots == nil {
		return
	}
	for slot := range st.slots {
		if has(slot) {
			sc := &st.slots[slot]
			sc.cpuUsec.Store(0)
			sc.bytesIn.Store(0)
			sc.bytesOut.Store(0)
		}
	}
}

// The metrics, in the order the page lists them; every one but key-count
// needs cluster-slot-stats-enabled.
var slotMetrics = [...]string{"key-count", "cpu-usec", "memory-bytes", "network-bytes-in", "network-bytes-out"}

const (
	metricKeyCount = iota
	metricCPU
	metricMemory
	metricBytesIn
	metricBytesOut
)

// slotRow is one slot's figures, indexed by metric.
type slotRow struct {
	slot int
	v    [len(slotMetrics)]uint64
}

func slotStatsCommand(x *Ctx, node *cluster.State) {
	args := x.Args
	enabled := x.s.slotStats.on.Load()
	switch {
	case len(args) == 5 && cstr.ArgIs(args[2], "slotsrange"):
		start, ok := slotArg(x, args[3])
		if !ok {
			return
		}
		end, ok := slotArg(x, args[4])
		if !ok {
			return
		}
		if start > end {
			x.W.Error("ERR Start slot number " + strconv.Itoa(start) + " is greater than end slot number " + strconv.Itoa(end))
			return
		}
		writeSlotRows(x, slotRows(x, node, start, end, enabled), enabled)
	case len(args) >= 4 && cstr.ArgIs(args[2], "orderby"):
		metric := slices.IndexFunc(slotMetrics[:], func(m string) bool { return cstr.ArgIs(args[3], m) })
		if metric < 0 || metric != metricKeyCount && !enabled {
			x.W.Error("ERR Unrecognized sort metric for ORDERBY.")
			return
		}
		limit, desc := keyspace.SlotCount, true
		limits, orders := 0, 0
		for i := 4; i < len(args); i++ {
			switch {
			case cstr.ArgIs(args[i], "limit") && i+1 < len(args):
				n, err := strconv.ParseInt(string(args[i+1]), 10, 64)
				if err != nil || n < 1 || n > keyspace.SlotCount {
					x.W.Error("ERR Limit has to lie in between 1 and 16384 (maximum number of slots).")
					return
				}
				limit = int(n)
				limits++
				i++
			case cstr.ArgIs(args[i], "asc"):
				desc = false
				orders++
			case cstr.ArgIs(args[i], "desc"):
				desc = true
				orders++
			default:
				x.W.Error(errSyntax)
				return
			}
			if limits > 1 || orders > 1 {
				x.W.Error("ERR Multiple filters of the same type are disallowed.")
				return
			}
		}
		rows := slotRows(x, node, 0, keyspace.SlotCount-1, enabled)
		// Ties go by slot number, ascending, in both orders.
		slices.SortStableFunc(rows, func(a, b slotRow) int {
			va, vb := a.v[metric], b.v[metric]
			switch {
			case va == vb:
				return 0
			case (va < vb) != desc:
				return -1
			}
			return 1
		})
		writeSlotRows(x, rows[:min(limit, len(rows))], enabled)
	default:
		x.W.Error(errClusterSyntax(args[1]))
	}
}

// slotRows returns the figures of the slots from start to end that this
// node's shard serves (its own, or its master's on a replica), in slot
// order; memory and the counters only when enabled. The command holds the
// exclusive lock, and each shard holding those slots is walked once.
func slotRows(x *Ctx, node *cluster.State, start, end int, enabled bool) []slotRow {
	r := node.Routes()
	index := make([]int32, keyspace.SlotCount) // slot -> its position in rows + 1, 0 when left out
	var rows []slotRow
	for slot := start; slot <= end; slot++ {
		if mine, _, _ := r.Owner(slot); mine || r.MastersSlot(slot) {
			rows = append(rows, slotRow{slot: slot})
			index[slot] = int32(len(rows))
		}
	}
	if len(rows) == 0 {
		return rows
	}
	db := x.s.ks.DB(0)
	shards := make([]bool, keyspace.Shards)
	for _, row := range rows {
		shards[row.slot%keyspace.Shards] = true
	}
	for shard, walk := range shards {
		if !walk {
			continue
		}
		db.EachEntry(shard, func(e *keyspace.Entry) {
			i := index[keyspace.Slot(e.Key())] - 1
			if i < 0 {
				return
			}
			rows[i].v[metricKeyCount]++
			if enabled {
				rows[i].v[metricMemory] += uint64(keyspace.EntryBytes(e) + values.ObjectBytes(e.Object(), memorySamples))
			}
		})
	}
	if enabled {
		for i := range rows {
			sc := &x.s.slotStats.slots[rows[i].slot]
			rows[i].v[metricCPU] = sc.cpuUsec.Load()
			rows[i].v[metricBytesIn] = sc.bytesIn.Load()
			rows[i].v[metricBytesOut] = sc.bytesOut.Load()
		}
	}
	return rows
}

// memorySamples is how many elements of a collection memory-bytes looks at,
// MEMORY USAGE's default.
const memorySamples = 5

// writeSlotRows writes each row as [slot, {metric: value...}]: key-count
// alone unless the counters are enabled.
func writeSlotRows(x *Ctx, rows []slotRow, enabled bool) {
	n := 1
	if enabled {
		n = len(slotMetrics)
	}
	x.W.Array(len(rows))
	for _, row := range rows {
		x.W.Array(2)
		x.W.Int(int64(row.slot))
		x.W.Map(n)
		for m := range n {
			x.W.BulkString(slotMetrics[m])
			x.W.Int(int64(row.v[m]))
		}
	}
}
