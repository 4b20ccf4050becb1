package server

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/keyhive/keyhive/internal/promtext"
)

// The Prometheus endpoint: /metrics in the text format, with the metric
// names and labels of redis_exporter (oliver006/redis_exporter), so that the
// dashboards built on it (Grafana 763 and 11835) work unchanged, plus
// Keyhive's own series under keyhive_. A scrape reads counters only, never
// the keys: the INFO sections it reads are counters themselves, and the key
// counts per database are the keyspace's.

// httpEndpoint is an HTTP listener: metrics-port's or console-port's (none
// when 0).
type httpEndpoint struct {
	srv *http.Server
	lns []net.Listener
}

// startMetrics listens on metrics-bind:metrics-port when the port is set.
func (s *Server) startMetrics() error {
	port := s.cfg.MetricsPort()
	if port == 0 {
		return nil
	}
	lns, failed, err := listenAll(s.cfg.MetricsBind(), port)
	if err != nil {
		return fmt.Errorf("could not open the metrics listener %s: %w", failed, err)
	}
	if len(lns) == 0 {
		return errors.New("no metrics listening socket could be opened")
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", s.MetricsHandler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: s.log}
	s.metrics = httpEndpoint{srv: srv, lns: lns}
	for _, l := range lns {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			srv.Serve(l) // returns at Close
		}()
	}
	return nil
}

// stopMetrics closes the listener and its connections.
func (s *Server) stopMetrics() {
	if s.metrics.srv != nil {
		s.metrics.srv.Close()
	}
}

// MetricsAddr returns the address of the metrics listener, "" when
// metrics-port is 0.
func (s *Server) MetricsAddr() string {
	if len(s.metrics.lns) == 0 {
		return ""
	}
	return s.metrics.lns[0].Addr().String()
}

// MetricsHandler serves the metrics in the Prometheus text format, for an
// embedding program that mounts it on its own HTTP server.
func (s *Server) MetricsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		p := metricsBufs.Get().(*promtext.Writer)
		p.Buf = p.Buf[:0]
		s.writeMetrics(p)
		w.Header().Set("Content-Type", promtext.ContentType)
		w.Header().Set("Content-Length", strconv.Itoa(len(p.Buf)))
		if r.Method == http.MethodGet {
			w.Write(p.Buf)
		}
		metricsBufs.Put(p)
	})
}

// metricsBufs keeps scrape buffers: a scrape is tens of KB.
var metricsBufs = sync.Pool{New: func() any { return &promtext.Writer{} }}

// infoMetric is how redis_exporter names an INFO field: redis_ + name, a
// counter or a gauge, its value multiplied by scale.
type infoMetric struct {
	name, typ string
	scale     float64
}

func gaugeMetric(name string) infoMetric   { return infoMetric{name, promtext.Gauge, 1} }
func counterMetric(name string) infoMetric { return infoMetric{name, promtext.Counter, 1} }

// infoMetrics maps the INFO fields Keyhive reports to redis_exporter's
// metric names. INFO reads counters only, so a metric is the very figure
// INFO shows; fields left out are text, or have no exporter metric.
var infoMetrics = map[string]infoMetric{
	// Server
	"uptime_in_seconds": gaugeMetric("uptime_in_seconds"),
	"process_id":        gaugeMetric("process_id"),
	"io_threads_active": gaugeMetric("io_threads_active"),
	// Clients
	"connected_clients":               gaugeMetric("connected_clients"),
	"cluster_connections":             gaugeMetric("cluster_connections"),
	"maxclients":                      gaugeMetric("max_clients"),
	"client_recent_max_input_buffer":  gaugeMetric("client_recent_max_input_buffer_bytes"),
	"client_recent_max_output_buffer": gaugeMetric("client_recent_max_output_buffer_bytes"),
	"blocked_clients":                 gaugeMetric("blocked_clients"),
	"tracking_clients":                gaugeMetric("tracking_clients"),
	"clients_in_timeout_table":        gaugeMetric("clients_in_timeout_table"),
	// Memory
	"used_memory":                   gaugeMetric("memory_used_bytes"),
	"used_memory_rss":               gaugeMetric("memory_used_rss_bytes"),
	"used_memory_peak":              gaugeMetric("memory_used_peak_bytes"),
	"used_memory_overhead":          gaugeMetric("memory_used_overhead_bytes"),
	"used_memory_startup":           gaugeMetric("memory_used_startup_bytes"),
	"used_memory_dataset":           gaugeMetric("memory_used_dataset_bytes"),
	"allocator_allocated":           gaugeMetric("allocator_allocated_bytes"),
	"allocator_active":              gaugeMetric("allocator_active_bytes"),
	"allocator_resident":            gaugeMetric("allocator_resident_bytes"),
	"used_memory_lua":               gaugeMetric("memory_used_lua_bytes"),
	"used_memory_vm_eval":           gaugeMetric("memory_used_vm_eval_bytes"),
	"used_memory_scripts_eval":      gaugeMetric("memory_used_scripts_eval_bytes"),
	"number_of_cached_scripts":      gaugeMetric("number_of_cached_scripts"),
	"number_of_functions":           gaugeMetric("number_of_functions"),
	"number_of_libraries":           gaugeMetric("number_of_libraries"),
	"used_memory_vm_functions":      gaugeMetric("memory_used_vm_functions_bytes"),
	"used_memory_vm_total":          gaugeMetric("memory_used_vm_total"),
	"used_memory_functions":         gaugeMetric("memory_used_functions_bytes"),
	"used_memory_scripts":           gaugeMetric("memory_used_scripts_bytes"),
	"maxmemory":                     gaugeMetric("memory_max_bytes"),
	"allocator_frag_ratio":          gaugeMetric("allocator_frag_ratio"),
	"allocator_frag_bytes":          gaugeMetric("allocator_frag_bytes"),
	"allocator_rss_ratio":           gaugeMetric("allocator_rss_ratio"),
	"allocator_rss_bytes":           gaugeMetric("allocator_rss_bytes"),
	"mem_fragmentation_ratio":       gaugeMetric("mem_fragmentation_ratio"),
	"mem_fragmentation_bytes":       gaugeMetric("mem_fragmentation_bytes"),
	"mem_not_counted_for_evict":     gaugeMetric("mem_not_counted_for_eviction_bytes"),
	"mem_replication_backlog":       gaugeMetric("mem_replication_backlog_bytes"),
	"mem_total_replication_buffers": gaugeMetric("mem_total_replication_buffers_bytes"),
	"mem_clients_slaves":            gaugeMetric("mem_clients_slaves"),
	"mem_clients_normal":            gaugeMetric("mem_clients_normal"),
	"mem_cluster_links":             gaugeMetric("mem_cluster_links_bytes"),
	"mem_aof_buffer":                gaugeMetric("mem_aof_buffer_bytes"),
	"active_defrag_running":         gaugeMetric("active_defrag_running"),
	"lazyfree_pending_objects":      gaugeMetric("lazyfree_pending_objects"),
	"lazyfreed_objects":             gaugeMetric("lazyfreed_objects"),
	// Persistence
	"loading":                      gaugeMetric("loading_dump_file"),
	"async_loading":                gaugeMetric("async_loading"),
	"rdb_changes_since_last_save":  gaugeMetric("rdb_changes_since_last_save"),
	"rdb_bgsave_in_progress":       gaugeMetric("rdb_bgsave_in_progress"),
	"rdb_last_save_time":           gaugeMetric("rdb_last_save_timestamp_seconds"),
	"rdb_last_bgsave_status":       gaugeMetric("rdb_last_bgsave_status"),
	"rdb_last_bgsave_time_sec":     gaugeMetric("rdb_last_bgsave_duration_sec"),
	"rdb_current_bgsave_time_sec":  gaugeMetric("rdb_current_bgsave_duration_sec"),
	"rdb_saves":                    gaugeMetric("rdb_saves_total"),
	"rdb_last_cow_size":            gaugeMetric("rdb_last_cow_size_bytes"),
	"rdb_last_load_keys_expired":   gaugeMetric("rdb_last_load_expired_keys"),
	"rdb_last_load_keys_loaded":    gaugeMetric("rdb_last_load_loaded_keys"),
	"aof_enabled":                  gaugeMetric("aof_enabled"),
	"aof_rewrite_in_progress":      gaugeMetric("aof_rewrite_in_progress"),
	"aof_rewrite_scheduled":        gaugeMetric("aof_rewrite_scheduled"),
	"aof_last_rewrite_time_sec":    gaugeMetric("aof_last_rewrite_duration_sec"),
	"aof_current_rewrite_time_sec": gaugeMetric("aof_current_rewrite_duration_sec"),
	"aof_last_bgrewrite_status":    gaugeMetric("aof_last_bgrewrite_status"),
	"aof_last_write_status":        gaugeMetric("aof_last_write_status"),
	"aof_last_cow_size":            gaugeMetric("aof_last_cow_size_bytes"),
	"aof_current_size":             gaugeMetric("aof_current_size_bytes"),
	"aof_base_size":                gaugeMetric("aof_base_size_bytes"),
	"aof_pending_rewrite":          gaugeMetric("aof_pending_rewrite"),
	"aof_buffer_length":            gaugeMetric("aof_buffer_length"),
	"aof_pending_bio_fsync":        gaugeMetric("aof_pending_bio_fsync"),
	"aof_delayed_fsync":            gaugeMetric("aof_delayed_fsync"),
	"module_fork_in_progress":      gaugeMetric("module_fork_in_progress"),
	"module_fork_last_cow_size":    gaugeMetric("module_fork_last_cow_size"),
	// Stats
	"total_connections_received":     counterMetric("connections_received_total"),
	"total_commands_processed":       counterMetric("commands_processed_total"),
	"total_net_input_bytes":          counterMetric("net_input_bytes_total"),
	"total_net_output_bytes":         counterMetric("net_output_bytes_total"),
	"total_net_repl_input_bytes":     counterMetric("net_repl_input_bytes_total"),
	"total_net_repl_output_bytes":    counterMetric("net_repl_output_bytes_total"),
	"rejected_connections":           counterMetric("rejected_connections_total"),
	"sync_full":                      gaugeMetric("replica_resyncs_full"),
	"sync_partial_ok":                gaugeMetric("replica_partial_resync_accepted"),
	"sync_partial_err":               gaugeMetric("replica_partial_resync_denied"),
	"expired_keys":                   counterMetric("expired_keys_total"),
	"expired_stale_perc":             gaugeMetric("expired_stale_percentage"),
	"expired_time_cap_reached_count": counterMetric("expired_time_cap_reached_total"),
	"expire_cycle_cpu_milliseconds":  counterMetric("expire_cycle_cpu_time_ms_total"),
	"evicted_keys":                   counterMetric("evicted_keys_total"),
	"evicted_clients":                counterMetric("evicted_clients_total"),
	"total_eviction_exceeded_time":   counterMetric("eviction_exceeded_time_ms_total"),
	"current_eviction_exceeded_time": gaugeMetric("current_eviction_exceeded_time_ms"),
	"keyspace_hits":                  counterMetric("keyspace_hits_total"),
	"keyspace_misses":                counterMetric("keyspace_misses_total"),
	"pubsub_channels":                gaugeMetric("pubsub_channels"),
	"pubsub_patterns":                gaugeMetric("pubsub_patterns"),
	"pubsubshard_channels":           gaugeMetric("pubsubshard_channels"),
	"latest_fork_usec":               {"latest_fork_seconds", promtext.Gauge, 1e-6},
	"migrate_cached_sockets":         gaugeMetric("migrate_cached_sockets_total"),
	"slave_expires_tracked_keys":     gaugeMetric("slave_expires_tracked_keys"),
	"active_defrag_hits":             gaugeMetric("defrag_hits"),
	"active_defrag_misses":           gaugeMetric("defrag_misses"),
	"active_defrag_key_hits":         gaugeMetric("defrag_key_hits"),
	"active_defrag_key_misses":       gaugeMetric("defrag_key_misses"),
	"tracking_total_keys":            gaugeMetric("tracking_total_keys"),
	"tracking_total_items":           gaugeMetric("tracking_total_items"),
	"tracking_total_prefixes":        gaugeMetric("tracking_total_prefixes"),
	"unexpected_error_replies":       counterMetric("unexpected_error_replies"),
	"total_error_replies":            counterMetric("total_error_replies"),
	"dump_payload_sanitizations":     counterMetric("dump_payload_sanitizations"),
	"total_reads_processed":          counterMetric("total_reads_processed"),
	"total_writes_processed":         counterMetric("total_writes_processed"),
	"io_threaded_reads_processed":    counterMetric("io_threaded_reads_processed"),
	"io_threaded_writes_processed":   counterMetric("io_threaded_writes_processed"),
	"reply_buffer_shrinks":           counterMetric("reply_buffer_shrinks_total"),
	"reply_buffer_expands":           counterMetric("reply_buffer_expands_total"),
	// Replication
	"connected_slaves":               gaugeMetric("connected_slaves"),
	"master_repl_offset":             gaugeMetric("master_repl_offset"),
	"second_repl_offset":             gaugeMetric("second_repl_offset"),
	"repl_backlog_active":            gaugeMetric("repl_backlog_is_active"),
	"repl_backlog_size":              gaugeMetric("replication_backlog_bytes"),
	"repl_backlog_first_byte_offset": gaugeMetric("repl_backlog_first_byte_offset"),
	"repl_backlog_histlen":           gaugeMetric("repl_backlog_history_bytes"),
	// CPU
	"used_cpu_sys":              counterMetric("cpu_sys_seconds_total"),
	"used_cpu_user":             counterMetric("cpu_user_seconds_total"),
	"used_cpu_sys_children":     counterMetric("cpu_sys_children_seconds_total"),
	"used_cpu_user_children":    counterMetric("cpu_user_children_seconds_total"),
	"used_cpu_sys_main_thread":  counterMetric("cpu_sys_main_thread_seconds_total"),
	"used_cpu_user_main_thread": counterMetric("cpu_user_main_thread_seconds_total"),
	// Cluster
	"cluster_enabled": gaugeMetric("cluster_enabled"),
}

// infoMetricSections are the INFO sections whose fields infoMetrics maps.
var infoMetricSections = []string{"server", "clients", "memory", "persistence", "stats", "replication", "cpu", "cluster"}

// instanceInfoLabels are redis_instance_info's labels, each an INFO field.
var instanceInfoLabels = []string{"role", "redis_version", "redis_build_id", "redis_mode", "os",
	"maxmemory_policy", "tcp_port", "run_id", "process_id", "master_replid"}

// writeMetrics writes every family of a scrape.
func (s *Server) writeMetrics(p *promtext.Writer) {
	p.One("redis_up", promtext.Gauge, "1 while the server answers (the exporter's up)", 1)
	p.One("redis_start_time_seconds", promtext.Gauge, "When the server started, in Unix seconds", float64(s.started.Unix()))
	s.writeInfoMetrics(p)
	s.writeKeyspaceMetrics(p)
	s.writeCommandMetrics(p)
	s.writeErrorMetrics(p)
	s.writeLogMetrics(p)
	p.One("redis_config_maxclients", promtext.Gauge, "The maxclients directive", float64(s.cfg.MaxClients()))
	p.One("redis_config_maxmemory", promtext.Gauge, "The maxmemory directive, in bytes", float64(s.cfg.MaxMemory()))
	p.One("redis_config_io_threads", promtext.Gauge, "The io-threads directive", float64(s.cfg.IOThreads()))
	s.writeKeyhiveMetrics(p)
}

// writeInfoMetrics writes the INFO fields under their exporter names, in
// INFO's order, and redis_instance_info from the text fields.
func (s *Server) writeInfoMetrics(p *promtext.Writer) {
	var b strings.Builder
	for _, sec := range infoMetricSections {
		s.writeInfoSection(&b, sec)
	}
	info := make(map[string]string, len(instanceInfoLabels))
	for _, line := range strings.Split(b.String(), "\r\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		if slices.Contains(instanceInfoLabels, name) {
			info[name] = value
		}
		m, ok := infoMetrics[name]
		if !ok {
			continue
		}
		var v float64
		switch value {
		case "ok":
			v = 1
		case "err":
			v = 0
		default:
			f, err := strconv.ParseFloat(value, 64)
			if err != nil {
				continue
			}
			v = f * m.scale
		}
		p.One("redis_"+m.name, m.typ, "INFO "+name, v)
	}
	labels := make([]string, 0, 2*len(instanceInfoLabels))
	for _, l := range instanceInfoLabels {
		labels = append(labels, l, info[l])
	}
	p.Family("redis_instance_info", promtext.Gauge, "The server's identity (INFO fields) in labels; the value is 1")
	p.Sample("redis_instance_info", 1, labels...)
}

// writeKeyspaceMetrics writes the keyspace's key counts: every database's,
// as the exporter does, and the average TTL of the non-empty ones.
func (s *Server) writeKeyspaceMetrics(p *promtext.Writer) {
	dbName := func(i int) string { return "db" + strconv.Itoa(i) }
	p.Family("redis_db_keys", promtext.Gauge, "Keys in the database (INFO keyspace keys)")
	for i := range s.ks.Len() {
		p.Sample("redis_db_keys", float64(s.ks.DB(i).Len()), "db", dbName(i))
	}
	p.Family("redis_db_keys_expiring", promtext.Gauge, "Keys with a TTL in the database (INFO keyspace expires)")
	for i := range s.ks.Len() {
		p.Sample("redis_db_keys_expiring", float64(s.ks.DB(i).Volatile()), "db", dbName(i))
	}
	p.Family("redis_db_avg_ttl_seconds", promtext.Gauge, "Estimated mean TTL of the database's keys with one, in seconds")
	for i := range s.ks.Len() {
		if db := s.ks.DB(i); db.Len() > 0 {
			p.Sample("redis_db_avg_ttl_seconds", float64(db.AvgTTL())/1000, "db", dbName(i))
		}
	}
}

// commandsInOrder lists the commands and subcommands in INFO
// commandstats' order, sorted once: the table does not change.
var commandsInOrder = sync.OnceValue(func() []*Command {
	var list []*Command
	forEachCommand(func(c *Command) { list = append(list, c) })
	return list
})

// writeCommandMetrics writes INFO commandstats and latencystats per
// command ("config|get" for a subcommand, as INFO names it).
func (s *Server) writeCommandMetrics(p *promtext.Writer) {
	var cmds []*Command
	for _, c := range commandsInOrder() {
		if st := &s.cmdStats[c.id]; st.calls.Load() > 0 || st.rejected.Load() > 0 {
			cmds = append(cmds, c)
		}
	}
	family := func(name, help string, value func(st *commandStats) float64) {
		p.Family(name, promtext.Counter, help)
		for _, c := range cmds {
			p.Sample(name, value(&s.cmdStats[c.id]), "cmd", c.Name)
		}
	}
	family("redis_commands_total", "Calls of the command (INFO commandstats calls)",
		func(st *commandStats) float64 { return float64(st.calls.Load()) })
	family("redis_commands_duration_seconds_total", "Time the command ran, in seconds (INFO commandstats usec)",
		func(st *commandStats) float64 { return float64(st.usec.Load()) / 1e6 })
	family("redis_commands_rejected_calls_total", "Calls refused before the command ran (INFO commandstats rejected_calls)",
		func(st *commandStats) float64 { return float64(st.rejected.Load()) })
	family("redis_commands_failed_calls_total", "Calls whose command replied an error (INFO commandstats failed_calls)",
		func(st *commandStats) float64 { return float64(st.failed.Load()) })
	if !s.cfg.LatencyTracking() {
		return
	}
	// The exporter's summary: INFO latencystats' percentiles as quantiles
	// (named as INFO names them, "99.9"), commandstats' usec and calls as
	// its sum and count.
	const name = "redis_latency_percentiles_usec"
	p.Family(name, promtext.Summary, "The command's latency percentiles in microseconds (INFO latencystats), with commandstats' usec and calls as sum and count")
	percentiles := s.cfg.LatencyTrackingInfoPercentiles()
	var counts [histBuckets]int64
	for _, c := range cmds {
		st := &s.cmdStats[c.id]
		h := st.latency.Load()
		if h == nil {
			continue
		}
		total := h.snapshot(&counts)
		for _, pc := range percentiles {
			p.Sample(name, float64(percentile(&counts, total, pc))/1000, "cmd", c.Name, "quantile", trimmedPercentile(pc))
		}
		p.Sample(name+"_sum", float64(st.usec.Load()), "cmd", c.Name)
		p.Sample(name+"_count", float64(st.calls.Load()), "cmd", c.Name)
	}
}

// writeErrorMetrics writes INFO errorstats: error replies by their code.
func (s *Server) writeErrorMetrics(p *promtext.Writer) {
	e := &s.stats.errors
	p.Family("redis_errors_total", promtext.Counter, "Error replies by their code (INFO errorstats)")
	e.mu.Lock()
	for code, n := range e.byCode {
		p.Sample("redis_errors_total", float64(*n), "err", infoSafe(code))
	}
	e.mu.Unlock()
}

// writeLogMetrics writes what the exporter reads from SLOWLOG and LATENCY
// LATEST.
func (s *Server) writeLogMetrics(p *promtext.Writer) {
	l := &s.slowlog
	l.mu.Lock()
	n := len(l.entries)
	var lastID, lastMicros int64
	if n > 0 {
		lastID, lastMicros = l.entries[n-1].id, l.entries[n-1].micros
	}
	l.mu.Unlock()
	p.One("redis_slowlog_length", promtext.Gauge, "Entries in the slow log", float64(n))
	p.One("redis_slowlog_last_id", promtext.Gauge, "ID of the newest slow log entry", float64(lastID))
	p.One("redis_last_slow_execution_duration_seconds", promtext.Gauge,
		"How long the newest slow log entry ran, in seconds", float64(lastMicros)/1e6)

	m := &s.latency
	m.mu.Lock()
	defer m.mu.Unlock()
	p.Family("redis_latency_spike_last", promtext.Gauge, "Unix time of the event's latest spike (LATENCY LATEST)")
	for event, ts := range m.events {
		last := ts.samples[(ts.next+latencyHistoryLen-1)%latencyHistoryLen]
		p.Sample("redis_latency_spike_last", float64(last.unix), "event_name", event)
	}
	p.Family("redis_latency_spike_duration_seconds", promtext.Gauge, "How long the event's latest spike took, in seconds")
	for event, ts := range m.events {
		last := ts.samples[(ts.next+latencyHistoryLen-1)%latencyHistoryLen]
		p.Sample("redis_latency_spike_duration_seconds", float64(last.ms)/1000, "event_name", event)
	}
}

// gcPauseBuckets are keyhive_gc_pause_seconds' upper bounds.
var gcPauseBuckets = []float64{10e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 50e-3, 100e-3}

// writeKeyhiveMetrics writes what Keyhive knows beyond Redis's INFO: the Go
// collector's work, the entry arenas and a running snapshot's progress.
func (s *Server) writeKeyhiveMetrics(p *promtext.Writer) {
	samples := []metrics.Sample{
		{Name: "/gc/cycles/total:gc-cycles"},
		{Name: "/sched/pauses/total/gc:seconds"},
		{Name: "/cpu/classes/gc/total:cpu-seconds"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/heap/goal:bytes"},
	}
	metrics.Read(samples)
	p.One("keyhive_gc_cycles_total", promtext.Counter, "Completed Go garbage collection cycles", float64(samples[0].Value.Uint64()))
	pauses := samples[1].Value.Float64Histogram()
	p.Family("keyhive_gc_pause_seconds", promtext.Histogram, "Stop-the-world pauses of the Go garbage collector")
	var cum uint64
	bucket := 0
	for i, n := range pauses.Counts {
		// A runtime bucket counts under the first bound at or above its top.
		for bucket < len(gcPauseBuckets) && pauses.Buckets[i+1] > gcPauseBuckets[bucket] {
			p.Sample("keyhive_gc_pause_seconds_bucket", float64(cum), "le", strconv.FormatFloat(gcPauseBuckets[bucket], 'g', -1, 64))
			bucket++
		}
		cum += n
	}
	for ; bucket < len(gcPauseBuckets); bucket++ {
		p.Sample("keyhive_gc_pause_seconds_bucket", float64(cum), "le", strconv.FormatFloat(gcPauseBuckets[bucket], 'g', -1, 64))
	}
	p.Sample("keyhive_gc_pause_seconds_bucket", float64(cum), "le", "+Inf")
	p.Sample("keyhive_gc_pause_seconds_sum", histogramSum(pauses))
	p.Sample("keyhive_gc_pause_seconds_count", float64(cum))
	p.One("keyhive_gc_cpu_seconds_total", promtext.Counter, "CPU time the Go garbage collector used (the runtime's estimate)", samples[2].Value.Float64())
	p.One("keyhive_go_heap_objects_bytes", promtext.Gauge, "Bytes of live and unswept objects on the Go heap", float64(samples[3].Value.Uint64()))
	p.One("keyhive_go_heap_goal_bytes", promtext.Gauge, "The Go heap size at which the next collection starts", float64(samples[4].Value.Uint64()))
	p.One("keyhive_goroutines", promtext.Gauge, "Goroutines (one per connection, plus the server's own)", float64(runtime.NumGoroutine()))
	held, garbage := s.ks.ArenaBytes()
	p.One("keyhive_arena_bytes", promtext.Gauge, "Bytes of the entries (live and dead) in the keyspace's arenas, outside the Go heap", float64(held))
	p.One("keyhive_arena_garbage_bytes", promtext.Gauge, "Of the arenas' bytes, those of dead entries not reused or given back yet", float64(garbage))
	saved, total := s.ks.SnapshotProgress()
	p.One("keyhive_snapshot_keys", promtext.Gauge, "Keys the running snapshot saves (0 when none runs)", float64(total))
	p.One("keyhive_snapshot_keys_saved", promtext.Gauge, "Keys the running snapshot's saver has written so far", float64(saved))
	s.writeNamespaceMetrics(p)
	s.writeDiscoveryMetrics(p)
}

// namespaceMetrics are NAMESPACE STATS' fields as series labelled by
// namespace, in statFields' order.
var namespaceMetrics = []struct {
	name, help string
	kind       string
}{
	{"keyhive_namespace_keys", "Keys in the namespace (NAMESPACE STATS keys)", promtext.Gauge},
	{"keyhive_namespace_keys_expiring", "Keys with a TTL in the namespace (NAMESPACE STATS volatile)", promtext.Gauge},
	{"keyhive_namespace_bytes", "Bytes the namespace's keys hold in the keyspace (NAMESPACE STATS bytes)", promtext.Gauge},
	{"keyhive_namespace_hits_total", "Lookups that found a key of the namespace (NAMESPACE STATS hits)", promtext.Counter},
	{"keyhive_namespace_misses_total", "Lookups of a missing key of the namespace (NAMESPACE STATS misses)", promtext.Counter},
	{"keyhive_namespace_writes_total", "Changes to keys of the namespace (NAMESPACE STATS writes)", promtext.Counter},
	{"keyhive_namespace_evictions_total", "Keys of the namespace evicted, by maxmemory or its quota (NAMESPACE STATS evictions)", promtext.Counter},
	{"keyhive_namespace_expirations_total", "Keys of the namespace removed as their TTL passed (NAMESPACE STATS expirations)", promtext.Counter},
	{"keyhive_namespace_refused_total", "Writes the namespace's policies refused (NAMESPACE STATS refused)", promtext.Counter},
}

// writeNamespaceMetrics writes each namespace's statistics (none when no
// namespace is declared).
func (s *Server) writeNamespaceMetrics(p *promtext.Writer) {
	t := s.schema.Load()
	if t == nil || !t.Declared() {
		return
	}
	totals := make([][]int64, t.Len())
	for ns := range totals {
		totals[ns] = statValues(t.Totals(ns))
	}
	for i, m := range namespaceMetrics {
		p.Family(m.name, m.kind, m.help)
		for ns := range totals {
			p.Sample(m.name, float64(totals[ns][i]), "namespace", t.Def(ns).Name)
		}
	}
}
