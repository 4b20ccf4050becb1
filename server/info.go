package server

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"

	"github.com/keyhive/keyhive/internal/version"
	"github.com/keyhive/keyhive/keyspace"
)

// infoSections lists INFO's sections in the order Redis prints them, with
// their headers; "default" prints those marked, "all" and "everything" all.
// Keysizes is left out of the default, where Redis 8 has it: Keyhive reports
// 7.4.1, and tools of that era read every "db..." line of a plain INFO as a
// database's.
var infoSections = []struct {
	name, header string
	byDefault    bool
}{
	{"server", "Server", true}, {"clients", "Clients", true}, {"memory", "Memory", true},
	{"persistence", "Persistence", true}, {"threads", "Threads", false}, {"stats", "Stats", true}, {"replication", "Replication", true},
	{"cpu", "CPU", true}, {"modules", "Modules", true}, {"commandstats", "Commandstats", false},
	{"errorstats", "Errorstats", true}, {"latencystats", "Latencystats", false},
	{"cluster", "Cluster", true}, {"keyspace", "Keyspace", true}, {"keysizes", "Keysizes", false},
}

func infoCommand(x *Ctx) {
	want := map[string]bool{}
	for _, a := range x.Args[1:] {
		want[strings.ToLower(string(a))] = true
	}
	all := want["all"] || want["everything"]
	def := len(want) == 0 || want["default"]
	var b strings.Builder
	first := true
	for _, sec := range infoSections {
		if !all && !want[sec.name] && !(def && sec.byDefault) {
			continue
		}
		if !first {
			b.WriteString("\r\n")
		}
		first = false
		b.WriteString("# " + sec.header + "\r\n")
		x.s.writeInfoSection(&b, sec.name)
	}
	if want["namespaces"] { // Keyhive's own, only when named: "all" stays Redis's
		if !first {
			b.WriteString("\r\n")
		}
		first = false
		b.WriteString("# Namespaces\r\n")
		x.s.writeNamespacesInfo(&b)
	}
	if want["hotkeys"] { // Redis 8.6's, only when named: "all" stays 7.0's
		if !first {
			b.WriteString("\r\n")
		}
		b.WriteString("# Hotkeys\r\n")
		x.s.writeHotkeysInfo(&b)
	}
	x.W.Verbatim("txt", b.String())
}

func field(b *strings.Builder, name string, v any) {
	fmt.Fprintf(b, "%s:%v\r\n", name, v)
}

// multiplexingAPI names what waits for the clients' sockets: the event
// loops' epoll, or Go's network poller on the portable path.
func (s *Server) multiplexingAPI() string {
	if len(s.loops) > 0 {
		return "epoll"
	}
	return "go-netpoll"
}

func (s *Server) writeInfoSection(b *strings.Builder, name string) {
	now := time.Now()
	switch name {
	case "server":
		var uts string
		if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
			uts = "Linux " + strings.TrimSpace(string(data)) + " " + runtime.GOARCH
		}
		field(b, "redis_version", version.Redis)
		field(b, "redis_git_sha1", version.GitSHA1())
		field(b, "redis_git_dirty", boolInt(version.GitDirty()))
		field(b, "redis_build_id", "keyhive")
		field(b, "redis_mode", "standalone")
		field(b, "os", uts)
		field(b, "arch_bits", strconv.IntSize)
		field(b, "monotonic_clock", "POSIX clock_gettime")
		field(b, "multiplexing_api", s.multiplexingAPI())
		field(b, "atomicvar_api", "go-sync-atomic")
		// No C compiler built Keyhive: gcc_version is 0.0.0 (tools parse it
		// as a version) and keyhive_go_version names the Go release.
		field(b, "gcc_version", "0.0.0")
		field(b, "keyhive_go_version", runtime.Version())
		field(b, "keyhive_version", version.Keyhive)
		field(b, "keyhive_git_sha1", version.GitSHA1())
		field(b, "process_id", os.Getpid())
		field(b, "process_supervised", s.supervised)
		field(b, "run_id", s.runID)
		field(b, "tcp_port", s.listenPort())
		field(b, "server_time_usec", now.UnixMicro())
		field(b, "uptime_in_seconds", int64(now.Sub(s.started).Seconds()))
		field(b, "uptime_in_days", int64(now.Sub(s.started).Hours()/24))
		field(b, "hz", s.cfg.Hz())
		field(b, "configured_hz", s.cfg.Hz())
		field(b, "lru_clock", keyspace.LRUClock(s.clock.UnixMilli()))
		exe, _ := os.Executable()
		field(b, "executable", exe)
		field(b, "config_file", s.cfg.ConfigFile())
		field(b, "io_threads_active", 0)
		if run := s.shutdown.Load(); run != nil && run.waiting.Load() {
			field(b, "shutdown_in_milliseconds", max(run.deadline-now.UnixMilli(), 0))
		}
	case "clients":
		// The largest pending input and queued output now (Redis keeps
		// the largest of the last seconds).
		var maxIn, maxOut int64
		s.mu.Lock()
		n := 0 // replicas are not clients here, as in Redis
		for _, c := range s.clients {
			maxIn, maxOut = max(maxIn, c.qbuf.Load()), max(maxOut, c.omem.Load())
			if !c.peer.IsReplica() {
				n++
			}
		}
		s.mu.Unlock()
		field(b, "connected_clients", n)
		field(b, "cluster_connections", 0)
		field(b, "maxclients", s.cfg.MaxClients())
		field(b, "client_recent_max_input_buffer", maxIn)
		field(b, "client_recent_max_output_buffer", maxOut)
		field(b, "blocked_clients", s.blocking.waiting.Load()+s.pause.waiting()) // paused clients count, as Redis
		field(b, "tracking_clients", s.tracking.clients.Load())
		field(b, "clients_in_timeout_table", 0)
	case "memory":
		s.writeMemoryInfo(b)
	case "persistence":
		s.writePersistenceInfo(b)
	case "stats":
		s.writeStatsInfo(b)
	case "replication":
		s.repl.WriteInfo(b)
	case "cpu":
		var ru syscallRusage
		selfRusage(&ru)
		field(b, "used_cpu_sys", fmt.Sprintf("%.6f", ru.sys))
		field(b, "used_cpu_user", fmt.Sprintf("%.6f", ru.user))
		// Saves run in the process (no forked children). Commands run on
		// every thread the Go scheduler uses, so the "main thread" is the
		// whole process.
		field(b, "used_cpu_sys_children", "0.000000")
		field(b, "used_cpu_user_children", "0.000000")
		field(b, "used_cpu_sys_main_thread", fmt.Sprintf("%.6f", ru.sys))
		field(b, "used_cpu_user_main_thread", fmt.Sprintf("%.6f", ru.user))
	case "errorstats":
		s.stats.errors.write(b)
	case "latencystats":
		s.writeLatencyStats(b)
	case "cluster":
		field(b, "cluster_enabled", boolInt(s.cluster != nil))
	case "keyspace":
		for i := range s.ks.Len() {
			db := s.ks.DB(i)
			if n := db.Len(); n > 0 {
				fmt.Fprintf(b, "db%d:keys=%d,expires=%d,avg_ttl=%d,subexpiry=%d\r\n", i, n, db.Volatile(), db.AvgTTL(), db.Subexpiry())
			}
		}
	case "threads":
		clients, t := s.threadTraffic()
		for i := range t {
			fmt.Fprintf(b, "io_thread_%d:clients=%d,reads=%d,writes=%d\r\n", i, clients[i], t[i].reads, t[i].writes)
		}
	case "keysizes":
		t := s.schema.Load()
		var line []byte
		for i := range s.ks.Len() {
			line = t.AppendKeySizes(line[:0], i)
			b.Write(line)
		}
	case "commandstats":
		forEachCommand(func(c *Command) {
			st := &s.cmdStats[c.id]
			if calls := st.calls.Load(); calls > 0 || st.rejected.Load() > 0 {
				usec := st.usec.Load()
				perCall := 0.0
				if calls > 0 {
					perCall = float64(usec) / float64(calls)
				}
				fmt.Fprintf(b, "cmdstat_%s:calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d\r\n",
					c.Name, calls, usec, perCall, st.rejected.Load(), st.failed.Load())
			}
		})
	}
}

// writeStatsInfo is INFO stats, in Redis 7.0's order. Counters of what
// Keyhive does not do (replication, forks, defragmentation, I/O threads,
// client eviction) stay 0.
func (s *Server) writeStatsInfo(b *strings.Builder) {
	st := &s.stats
	field(b, "total_connections_received", st.connectionsReceived.Load())
	t := s.traffic()
	ops, inKbps, outKbps := s.rates.rates()
	field(b, "total_commands_processed", t.commands)
	field(b, "instantaneous_ops_per_sec", ops)
	field(b, "total_net_input_bytes", t.netIn)
	field(b, "total_net_output_bytes", t.netOut)
	repl := s.repl.Stats()
	field(b, "total_net_repl_input_bytes", repl.NetIn)
	field(b, "total_net_repl_output_bytes", repl.NetOut)
	field(b, "instantaneous_input_kbps", fmt.Sprintf("%.2f", inKbps))
	field(b, "instantaneous_output_kbps", fmt.Sprintf("%.2f", outKbps))
	field(b, "instantaneous_input_repl_kbps", "0.00")
	field(b, "instantaneous_output_repl_kbps", "0.00")
	field(b, "rejected_connections", st.rejectedConnections.Load())
	field(b, "sync_full", repl.FullSyncs)
	field(b, "sync_partial_ok", repl.PartialOK)
	field(b, "sync_partial_err", repl.PartialErr)
	field(b, "expired_keys", s.ks.ExpiredKeys.Load())
	e := &s.expiry
	e.mu.Lock()
	stale, capped, cpuUs := e.stalePerc, e.capped, e.cpuUs
	e.mu.Unlock()
	field(b, "expired_stale_perc", fmt.Sprintf("%.2f", stale*100))
	field(b, "expired_time_cap_reached_count", capped)
	field(b, "expire_cycle_cpu_milliseconds", cpuUs/1000)
	field(b, "evicted_keys", s.evict.evicted.Load())
	field(b, "evicted_clients", 0)
	overTotal, overNow := s.overMaxmemory.times()
	field(b, "total_eviction_exceeded_time", overTotal)
	field(b, "current_eviction_exceeded_time", overNow)
	field(b, "keyspace_hits", t.hits)
	field(b, "keyspace_misses", t.misses)
	s.writePubSubInfo(b)
	field(b, "latest_fork_usec", s.forks.latestUs.Load())
	field(b, "total_forks", s.forks.total.Load())
	field(b, "migrate_cached_sockets", 0)
	field(b, "slave_expires_tracked_keys", 0)
	for _, name := range []string{"active_defrag_hits", "active_defrag_misses", "active_defrag_key_hits",
		"active_defrag_key_misses", "total_active_defrag_time", "current_active_defrag_time"} {
		field(b, name, 0)
	}
	tr := &s.tracking
	tr.mu.Lock()
	keys, items, prefixes := len(tr.keys), tr.items, len(tr.prefixes)
	tr.mu.Unlock()
	field(b, "tracking_total_keys", keys)
	field(b, "tracking_total_items", items)
	field(b, "tracking_total_prefixes", prefixes)
	field(b, "unexpected_error_replies", st.errors.unexpected.Load())
	field(b, "total_error_replies", st.errors.total.Load())
	field(b, "dump_payload_sanitizations", 0)
	field(b, "total_reads_processed", t.reads)
	field(b, "total_writes_processed", t.writes)
	field(b, "io_threaded_reads_processed", 0)
	field(b, "io_threaded_writes_processed", 0)
	// A reply buffer grows by append as replies are written, with no
	// resize step of its own to count; past idleWriteMax it is dropped
	// once written, Keyhive's shrink.
	field(b, "reply_buffer_shrinks", t.replyShrinks)
	field(b, "reply_buffer_expands", 0)
	if s.cfg.ClusterCompatibilitySampleRatio() > 0 { // Redis 8.0's, shown while the check is on
		field(b, "cluster_incompatible_ops", s.compat.ops.Load())
	}
}

func (s *Server) listenPort() int {
	_, port, _ := net.SplitHostPort(s.Addr())
	n, _ := strconv.Atoi(port)
	return n
}

// writeMemoryInfo reports memory with Redis's field names. used_memory is
// what eviction compares with maxmemory (usedMemory, evict.go). The
// keyhive_gc_* fields expose the collector's cost, which the memory benchmark
// reads.
func (s *Server) writeMemoryInfo(b *strings.Builder) {
	samples := []metrics.Sample{
		{Name: "/gc/cycles/total:gc-cycles"},
		{Name: "/sched/pauses/total/gc:seconds"},
		{Name: "/cpu/classes/gc/total:cpu-seconds"},
	}
	metrics.Read(samples)
	m := s.memoryFigures()
	field(b, "used_memory", m.used)
	field(b, "used_memory_human", humanBytes(m.used))
	field(b, "used_memory_rss", m.rss)
	field(b, "used_memory_rss_human", humanBytes(m.rss))
	field(b, "used_memory_peak", m.peak)
	field(b, "used_memory_peak_human", humanBytes(m.peak))
	field(b, "used_memory_peak_perc", percent(m.used, m.peak))
	field(b, "used_memory_overhead", m.used-m.dataset)
	field(b, "used_memory_startup", s.startupMemory)
	field(b, "used_memory_dataset", m.dataset)
	field(b, "used_memory_dataset_perc", percent(m.dataset, m.used-s.startupMemory))
	heap := goHeap() // the Go heap stands for the allocator
	allocated, active, resident := heap.allocated, heap.active, heap.resident
	field(b, "allocator_allocated", allocated)
	field(b, "allocator_active", active)
	field(b, "allocator_resident", resident)
	field(b, "total_system_memory", m.system)
	field(b, "total_system_memory_human", humanBytes(m.system))
	// Redis's script fields (7.0 names, the deprecated _lua ones included).
	sm := s.scripts.MemoryStats()
	field(b, "used_memory_lua", sm.EvalVM)
	field(b, "used_memory_vm_eval", sm.EvalVM)
	field(b, "used_memory_lua_human", humanBytes(sm.EvalVM))
	field(b, "used_memory_scripts_eval", sm.ScriptBytes)
	field(b, "number_of_cached_scripts", sm.Scripts)
	field(b, "number_of_functions", sm.Functions)
	field(b, "number_of_libraries", sm.Libraries)
	field(b, "used_memory_vm_functions", sm.FunctionVM)
	field(b, "used_memory_vm_total", sm.EvalVM+sm.FunctionVM)
	field(b, "used_memory_vm_total_human", humanBytes(sm.EvalVM+sm.FunctionVM))
	field(b, "used_memory_functions", sm.FunctionBytes)
	field(b, "used_memory_scripts", sm.ScriptBytes+sm.FunctionBytes)
	field(b, "used_memory_scripts_human", humanBytes(sm.ScriptBytes+sm.FunctionBytes))
	field(b, "maxmemory", s.cfg.MaxMemory())
	field(b, "maxmemory_human", humanBytes(s.cfg.MaxMemory()))
	field(b, "maxmemory_policy", s.cfg.MaxMemoryPolicy())
	field(b, "allocator_frag_ratio", fmt.Sprintf("%.2f", ratio(active, allocated)))
	field(b, "allocator_frag_bytes", active-allocated)
	field(b, "allocator_rss_ratio", fmt.Sprintf("%.2f", ratio(resident, active)))
	field(b, "allocator_rss_bytes", resident-active)
	field(b, "rss_overhead_ratio", fmt.Sprintf("%.2f", ratio(m.rss, resident)))
	field(b, "rss_overhead_bytes", m.rss-resident)
	field(b, "mem_fragmentation_ratio", fmt.Sprintf("%.2f", m.fragmentation()))
	field(b, "mem_fragmentation_bytes", m.rss-m.used)
	field(b, "mem_not_counted_for_evict", 0)
	backlog, replicas := s.repl.BufferBytes()
	field(b, "mem_replication_backlog", backlog)
	field(b, "mem_total_replication_buffers", backlog+replicas)
	field(b, "mem_clients_slaves", replicas)
	field(b, "mem_clients_normal", m.clients)
	field(b, "mem_cluster_links", 0)
	field(b, "mem_aof_buffer", 0)
	field(b, "mem_allocator", "go")
	field(b, "active_defrag_running", 0)
	// Keys are freed when their command unlocks, never in the background.
	field(b, "lazyfree_pending_objects", 0)
	field(b, "lazyfreed_objects", 0)
	field(b, "keyhive_gc_cycles", samples[0].Value.Uint64())
	field(b, "keyhive_gc_pause_total_us", int64(histogramSum(samples[1].Value.Float64Histogram())*1e6))
	// GC share of the CPU the process used. The runtime's GC CPU estimate is
	// updated at each cycle; process CPU comes from getrusage. The raw seconds
	// let a benchmark compute the share over its own interval.
	var ru syscallRusage
	selfRusage(&ru)
	gcCPU, processCPU := samples[2].Value.Float64(), ru.user+ru.sys
	pct := 0.0
	if processCPU > 0 {
		pct = 100 * gcCPU / processCPU
	}
	field(b, "keyhive_gc_cpu_percent", fmt.Sprintf("%.2f", pct))
	field(b, "keyhive_gc_cpu_seconds", fmt.Sprintf("%.6f", gcCPU))
	field(b, "keyhive_process_cpu_seconds", fmt.Sprintf("%.6f", processCPU))
}

func (s *Server) notePeak(used int64) int64 {
	for {
		p := s.peakMemory.Load()
		if used <= p || s.peakMemory.CompareAndSwap(p, used) {
			return max(p, used)
		}
	}
}

// histogramSum approximates the total of a runtime histogram from its buckets.
func histogramSum(h *metrics.Float64Histogram) float64 {
	var sum float64
	for i, n := range h.Counts {
		lo, hi := h.Buckets[i], h.Buckets[i+1]
		if lo < 0 || hi > 1e9 {
			lo = max(lo, 0)
			hi = lo
		}
		sum += float64(n) * (lo + hi) / 2
	}
	return sum
}

func humanBytes(n int64) string {
	f := float64(n)
	for _, unit := range []string{"B", "K", "M", "G", "T"} {
		if f < 1024 || unit == "T" {
			if unit == "B" {
				return fmt.Sprintf("%dB", n)
			}
			return fmt.Sprintf("%.2f%s", f, unit)
		}
		f /= 1024
	}
	return ""
}

func processRSS() int64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data))
	if len(fields) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(fields[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// boolInt is b as INFO's 0 or 1.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
