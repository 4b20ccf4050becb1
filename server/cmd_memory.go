package server

import (
	"fmt"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"

	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/values"
)

func init() {
	bindSub("memory", "doctor", memoryDoctor)
	bindSub("memory", "help", memoryHelp)
	bindSub("memory", "malloc-stats", func(x *Ctx) { x.W.Verbatim("txt", "Stats not supported for the current allocator") })
	bindSub("memory", "purge", func(x *Ctx) { debug.FreeOSMemory(); x.W.OK() })
	bindSub("memory", "stats", memoryStats)
	bindSub("memory", "usage", memoryUsage)
}

func memoryHelp(x *Ctx) {
	writeHelp(x, "MEMORY", []string{
		"DOCTOR", "    Return memory problems reports.",
		"MALLOC-STATS", "    Return internal statistics report from the memory allocator.",
		"PURGE", "    Attempt to purge dirty pages for reclamation by the allocator.",
		"STATS", "    Return information about the memory usage of the server.",
		"USAGE <key> [SAMPLES <count>]", "    Return memory in bytes used by <key> and its value. Nested values are",
		"    sampled up to <count> times (default: 5, 0 means sample all).",
	})
}

// memoryFigures are the numbers INFO memory, MEMORY STATS and MEMORY DOCTOR
// report, taken at one moment.
type memoryFigures struct {
	used, rss, peak, dataset, clients, system int64
}

func (s *Server) memoryFigures() memoryFigures {
	m := memoryFigures{used: s.usedMemory(monoNow(), 0), rss: processRSS()}
	m.peak = s.notePeak(m.used)
	s.mu.Lock()
	for _, c := range s.clients {
		m.clients += initialReadBuf + c.qbuf.Load() + c.omem.Load()
	}
	s.mu.Unlock()
	m.dataset = max(m.used-s.startupMemory-m.clients, 0)
	m.system = systemMemory()
	return m
}

func (m memoryFigures) fragmentation() float64 {
	if m.used == 0 {
		return 0
	}
	return float64(m.rss) / float64(m.used)
}

func percent(part, whole int64) string {
	if whole <= 0 {
		return "0.00%"
	}
	return fmt.Sprintf("%.2f%%", 100*float64(part)/float64(whole))
}

// memoryStats replies MEMORY STATS with Redis 7.0's fields in its order.
// The allocator's figures are the Go heap's (goHeapFigures).
func memoryStats(x *Ctx) {
	s := x.s
	m := s.memoryFigures()
	heap := goHeap()
	var keys int64
	var dbs []int
	for i := range s.ks.Len() {
		if n := s.ks.DB(i).Len(); n > 0 {
			keys += n
			dbs = append(dbs, i)
		}
	}
	overhead := m.used - m.dataset
	perKey := int64(0)
	if keys > 0 {
		perKey = (m.used - s.startupMemory) / keys
	}
	sm := s.scripts.MemoryStats()
	x.W.Map(27 + len(dbs))
	ints := func(name string, v int64) { x.W.BulkString(name); x.W.Int(v) }
	doubles := func(name string, v float64) { x.W.BulkString(name); x.W.Double(v) }
	ints("peak.allocated", m.peak)
	ints("total.allocated", m.used)
	ints("startup.allocated", s.startupMemory)
	backlog, replicas := x.s.repl.BufferBytes()
	ints("replication.backlog", backlog)
	ints("clients.slaves", replicas)
	ints("clients.normal", m.clients)
	ints("cluster.links", 0)
	ints("aof.buffer", 0)
	ints("lua.caches", sm.ScriptBytes)
	ints("functions.caches", sm.FunctionBytes)
	for _, i := range dbs {
		db := s.ks.DB(i)
		x.W.BulkString("db." + strconv.Itoa(i))
		x.W.Map(3)
		ints("overhead.hashtable.main", db.Len()*8)         // one index slot per key
		ints("overhead.hashtable.expires", db.Volatile()*8) // the expire time a volatile entry carries
		ints("overhead.hashtable.slot-to-keys", 0)          // no cluster mode
	}
	ints("overhead.total", overhead)
	ints("keys.count", keys)
	ints("keys.bytes-per-key", perKey)
	ints("dataset.bytes", m.dataset)
	doubles("dataset.percentage", ratio(m.dataset, m.used-s.startupMemory)*100)
	doubles("peak.percentage", ratio(m.used, m.peak)*100)
	ints("allocator.allocated", heap.allocated)
	ints("allocator.active", heap.active)
	ints("allocator.resident", heap.resident)
	doubles("allocator-fragmentation.ratio", ratio(heap.active, heap.allocated))
	ints("allocator-fragmentation.bytes", heap.active-heap.allocated)
	doubles("allocator-rss.ratio", ratio(heap.resident, heap.active))
	ints("allocator-rss.bytes", heap.resident-heap.active)
	doubles("rss-overhead.ratio", ratio(m.rss, heap.resident))
	ints("rss-overhead.bytes", m.rss-heap.resident)
	doubles("fragmentation", m.fragmentation())
	ints("fragmentation.bytes", m.rss-m.used)
}

// goHeapFigures stand for the allocator's figures Redis reports (jemalloc's):
// allocated is the Go heap's objects, live or not yet collected; active
// adds the unused space of the heap's spans in use; resident is all the Go
// runtime has mapped less what it gave back to the OS. The key arenas,
// mapped outside the Go heap, count in used memory only.
type goHeapFigures struct{ allocated, active, resident int64 }

func goHeap() goHeapFigures {
	samples := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
	}
	metrics.Read(samples)
	allocated := int64(samples[0].Value.Uint64())
	return goHeapFigures{
		allocated: allocated,
		active:    allocated + int64(samples[1].Value.Uint64()),
		resident:  int64(samples[2].Value.Uint64() - samples[3].Value.Uint64()),
	}
}

func ratio(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// memoryDoctor reports memory problems in the spirit of Redis's: nothing to
// say about a near-empty instance, else peaks and fragmentation.
func memoryDoctor(x *Ctx) {
	m := x.s.memoryFigures()
	if m.used-x.s.startupMemory < 5<<20 {
		x.W.Verbatim("txt", "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n")
		return
	}
	var issues []string
	if m.peak > m.used*3/2 {
		issues = append(issues, fmt.Sprintf(" * Peak memory: at some point used memory was %s, %.0f%% more than the %s used now. MEMORY PURGE returns freed memory to the system.", humanBytes(m.peak), 100*(ratio(m.peak, m.used)-1), humanBytes(m.used)))
	}
	if f := m.fragmentation(); f > 1.4 {
		issues = append(issues, fmt.Sprintf(" * High fragmentation: the process RSS is %.2f times used memory. MEMORY PURGE may return some of it.", f))
	}
	if len(issues) == 0 {
		x.W.Verbatim("txt", "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n")
		return
	}
	x.W.Verbatim("txt", "Sam, I detected a few issues in this Keyhive instance memory implants:\n\n"+strings.Join(issues, "\n\n")+"\n\nI'm here to keep you safe, Sam. I want to help you.\n")
}

// memoryUsage is MEMORY USAGE key [SAMPLES count]: the entry and its index
// slot, plus, for a large collection, its elements, estimated from count
// sampled ones (0 samples them all).
func memoryUsage(x *Ctx) {
	samples := 5
	for i := 3; i < len(x.Args); i += 2 {
		if !strings.EqualFold(string(x.Args[i]), "samples") || i+1 >= len(x.Args) {
			x.W.Error(errSyntax)
			return
		}
		n, err := strconv.ParseInt(string(x.Args[i+1]), 10, 64)
		if err != nil {
			x.W.Error(errNotInt)
			return
		}
		samples = int(max(min(n, 1<<30), 0))
		if samples == 0 {
			samples = 1 << 30
		}
	}
	e, found := x.DB.Lookup(x.Args[2], x.Now, false)
	if !found {
		x.W.Null()
		return
	}
	x.W.Int(keyspace.EntryBytes(&e) + values.ObjectBytes(e.Object(), samples))
}
