// Package slotstats is CLUSTER SLOT-STATS (Redis 8.2,
// https://redis.io/docs/latest/commands/cluster-slot-stats/): each slot of
// a node's shard with its key count and, when cluster-slot-stats-enabled is
// on, the CPU time, the request and reply bytes of the commands that ran on
// it and the memory its keys use.
//
// The counters are a fixed array of atomics allocated when the node opens:
// recording a command is three atomic adds, and with the directive off the
// dispatch path pays one atomic load (On). The command reads the keys
// through a Host the server implements; this package knows nothing of
// clients.
package slotstats

import (
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/resp"
)

// Counters are a cluster node's per-slot counters.
type Counters struct {
	on    atomic.Bool // cluster-slot-stats-enabled on a cluster node: the one check per command
	slots *[keyspace.SlotCount]slotCounters
}

type slotCounters struct {
	cpuUsec, bytesIn, bytesOut atomic.Uint64
}

// Open allocates the counters, once the node is open.
func (c *Counters) Open() { c.slots = new([keyspace.SlotCount]slotCounters) }

// SetOn follows cluster-slot-stats-enabled.
func (c *Counters) SetOn(on bool) { c.on.Store(on) }

// On reports whether commands are counted.
func (c *Counters) On() bool { return c.on.Load() }

// Record adds a command's time and bytes to its slot.
func (c *Counters) Record(slot int, elapsedNs int64, bytesIn, bytesOut int) {
	sc := &c.slots[slot]
	sc.cpuUsec.Add(uint64(max(elapsedNs, 0) / 1000))
	sc.bytesIn.Add(uint64(bytesIn))
	sc.bytesOut.Add(uint64(bytesOut))
}

// Load returns a slot's counters.
func (c *Counters) Load(slot int) (cpuUsec, bytesIn, bytesOut uint64) {
	sc := &c.slots[slot]
	return sc.cpuUsec.Load(), sc.bytesIn.Load(), sc.bytesOut.Load()
}

// Reset zeroes the counters of the slots has names: those that left this
// node's shard, as Redis does when a slot is deleted from a node, or every
// slot (CONFIG RESETSTAT).
func (c *Counters) Reset(has func(slot int) bool) {
	if c.slots == nil {
		return
	}
	for slot := range c.slots {
		if has(slot) {
			sc := &c.slots[slot]
			sc.cpuUsec.Store(0)
			sc.bytesIn.Store(0)
			sc.bytesOut.Store(0)
		}
	}
}

// Host is what the command needs of the node: which slots its shard
// serves, and its keys.
type Host interface {
	// Serves reports whether this node's shard serves slot (its own, or
	// its master's on a replica).
	Serves(slot int) bool
	// EachKey calls fn with the slot of each key of keyspace shard
	// shard, and a function that returns the memory it uses.
	EachKey(shard int, fn func(slot int, memory func() uint64))
}

// The metrics, in the order the page lists them; every one but key-count
// needs cluster-slot-stats-enabled.
var metrics = [...]string{"key-count", "cpu-usec", "memory-bytes", "network-bytes-in", "network-bytes-out"}

const (
	metricKeyCount = iota
	metricCPU
	metricMemory
	metricBytesIn
	metricBytesOut
)

// row is one slot's figures, indexed by metric.
type row struct {
	slot int
	v    [len(metrics)]uint64
}

// Command is CLUSTER SLOT-STATS SLOTSRANGE start end | ORDERBY metric
// [LIMIT n] [ASC|DESC] (args as sent), with the exclusive lock held.
func (c *Counters) Command(w *resp.Writer, args [][]byte, h Host) {
	enabled := c.On()
	switch {
	case len(args) == 5 && cstr.ArgIs(args[2], "slotsrange"):
		start, ok := slotArg(w, args[3])
		if !ok {
			return
		}
		end, ok := slotArg(w, args[4])
		if !ok {
			return
		}
		if start > end {
			w.Error("ERR Start slot number " + strconv.Itoa(start) + " is greater than end slot number " + strconv.Itoa(end))
			return
		}
		writeRows(w, c.rows(h, start, end, enabled), enabled)
	case len(args) >= 4 && cstr.ArgIs(args[2], "orderby"):
		metric := slices.IndexFunc(metrics[:], func(m string) bool { return cstr.ArgIs(args[3], m) })
		if metric < 0 || metric != metricKeyCount && !enabled {
			w.Error("ERR Unrecognized sort metric for ORDERBY.")
			return
		}
		limit, desc := keyspace.SlotCount, true
		limits, orders := 0, 0
		for i := 4; i < len(args); i++ {
			switch {
			case cstr.ArgIs(args[i], "limit") && i+1 < len(args):
				n, err := strconv.ParseInt(string(args[i+1]), 10, 64)
				if err != nil || n < 1 || n > keyspace.SlotCount {
					w.Error("ERR Limit has to lie in between 1 and 16384 (maximum number of slots).")
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
				w.Error("ERR syntax error")
				return
			}
			if limits > 1 || orders > 1 {
				w.Error("ERR Multiple filters of the same type are disallowed.")
				return
			}
		}
		rows := c.rows(h, 0, keyspace.SlotCount-1, enabled)
		// Ties go by slot number, ascending, in both orders.
		slices.SortStableFunc(rows, func(a, b row) int {
			va, vb := a.v[metric], b.v[metric]
			switch {
			case va == vb:
				return 0
			case (va < vb) != desc:
				return -1
			}
			return 1
		})
		writeRows(w, rows[:min(limit, len(rows))], enabled)
	default:
		w.Error("ERR unknown subcommand or wrong number of arguments for '" + cstr.String(args[1]) + "'. Try CLUSTER HELP.")
	}
}

// slotArg parses a slot number, replying Redis's error when it is none.
func slotArg(w *resp.Writer, arg []byte) (int, bool) {
	v, ok := strnum.ParseInt(arg)
	if !ok || v < 0 || v >= keyspace.SlotCount {
		w.Error("ERR Invalid or out of range slot")
		return 0, false
	}
	return int(v), true
}

// rows returns the figures of the slots from start to end that the node's
// shard serves, in slot order; memory and the counters only when enabled.
// Each keyspace shard holding those slots is walked once.
func (c *Counters) rows(h Host, start, end int, enabled bool) []row {
	index := make([]int32, keyspace.SlotCount) // slot -> its position in rows + 1, 0 when left out
	var rows []row
	for slot := start; slot <= end; slot++ {
		if h.Serves(slot) {
			rows = append(rows, row{slot: slot})
			index[slot] = int32(len(rows))
		}
	}
	if len(rows) == 0 {
		return rows
	}
	shards := make([]bool, keyspace.Shards)
	for _, r := range rows {
		shards[r.slot%keyspace.Shards] = true
	}
	for shard, walk := range shards {
		if !walk {
			continue
		}
		h.EachKey(shard, func(slot int, memory func() uint64) {
			i := index[slot] - 1
			if i < 0 {
				return
			}
			rows[i].v[metricKeyCount]++
			if enabled {
				rows[i].v[metricMemory] += memory()
			}
		})
	}
	if enabled {
		for i := range rows {
			r := &rows[i]
			r.v[metricCPU], r.v[metricBytesIn], r.v[metricBytesOut] = c.Load(r.slot)
		}
	}
	return rows
}

// writeRows writes each row as [slot, {metric: value...}]: key-count alone
// unless the counters are enabled.
func writeRows(w *resp.Writer, rows []row, enabled bool) {
	n := 1
	if enabled {
		n = len(metrics)
	}
	w.Array(len(rows))
	for _, r := range rows {
		w.Array(2)
		w.Int(int64(r.slot))
		w.Map(n)
		for m := range n {
			w.BulkString(metrics[m])
			w.Int(int64(r.v[m]))
		}
	}
}
