package server

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"runtime/metrics"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/keyhive/keyhive/cmdspec"
	"github.com/keyhive/keyhive/glob"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/resp"
	"github.com/keyhive/keyhive/values"
)

func init() {
	bind("time", timeCommand)
	bind("info", infoCommand)
	bind("shutdown", shutdownCommand)
	bind("debug", debugCommand)
	bind("role", roleCommand)
	bindSub("module", "help", moduleHelp)
	bindSub("module", "list", func(x *Ctx) { x.W.Array(0) })
	bindSub("module", "load", moduleLoad)
	bindSub("module", "loadex", moduleLoad)
	bindSub("module", "unload", func(x *Ctx) {
		if moduleCommandAllowed(x) {
			x.W.Error("ERR Error unloading module: no such module with that name")
		}
	})
	bind("command", commandInfoAll)
	bindSub("config", "get", func(x *Ctx) { writeStringMap(x, x.s.cfg.GetMany(argStrings(x.Args[2:]))) })
	bindSub("config", "set", configSet)
	bindSub("config", "resetstat", configResetStat)
	bindSub("config", "rewrite", configRewrite)
	bindSub("config", "help", configHelp)
	bindSub("command", "count", func(x *Ctx) { x.W.Int(int64(len(table))) })
	bindSub("command", "info", commandInfo)
	bindSub("command", "docs", commandDocs)
	bindSub("command", "list", commandList)
	bindSub("command", "getkeys", func(x *Ctx) { commandGetKeys(x, false) })
	bindSub("command", "getkeysandflags", func(x *Ctx) { commandGetKeys(x, true) })
	bindSub("command", "help", commandHelp)
}

// roleCommand is ROLE: a master, its replication offset and its replicas
// (none until replication exists).
func roleCommand(x *Ctx) {
	x.W.Array(3)
	x.W.BulkString("master")
	x.W.Int(0)
	x.W.Array(0)
}

// MODULE: Keyhive is not a host for Redis modules (C shared libraries), so
// it lists none and cannot load one, with Redis's replies for a module that
// fails to load or is not there.

// moduleCommandAllowed applies enable-module-command to the subcommands
// that load and unload, replying Redis's refusal.
func moduleCommandAllowed(x *Ctx) bool {
	mode := x.s.cfg.EnableModuleCommand()
	if mode == "yes" || (mode == "local" && x.c.isLocal()) {
		return true
	}
	x.W.Error("ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.")
	return false
}

func moduleLoad(x *Ctx) {
	if moduleCommandAllowed(x) {
		x.s.log.Printf("Module %s failed to load: Keyhive does not load modules", cString(x.Args[2]))
		x.W.Error("ERR Error loading the extension. Please check the server logs.")
	}
}

func moduleHelp(x *Ctx) {
	writeHelp(x, "MODULE", []string{
		"LIST", "    Return a list of loaded modules.",
		"LOAD <path> [<arg> ...]", "    Load a module library from <path>, passing to it any optional arguments.",
		"LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]", "    Load a module library from <path>, while passing it module configurations and optional arguments.",
		"UNLOAD <name>", "    Unload a module.",
	})
}

func argStrings(args [][]byte) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = string(a)
	}
	return out
}

// writeStrings writes a list of strings as an array.
func writeStrings(x *Ctx, list []string) {
	x.W.Array(len(list))
	for _, s := range list {
		x.W.BulkString(s)
	}
}

// writeStringMap writes a flat name, value list as a map.
func writeStringMap(x *Ctx, kv []string) {
	x.W.Map(len(kv) / 2)
	for _, s := range kv {
		x.W.BulkString(s)
	}
}

func timeCommand(x *Ctx) {
	now := time.Now()
	x.W.Array(2)
	x.W.BulkInt(now.Unix())
	x.W.BulkInt(int64(now.Nanosecond() / 1000))
}

func configSet(x *Ctx) {
	if len(x.Args)%2 != 0 {
		x.W.Error(errSyntax)
		return
	}
	if err := x.s.cfg.Set(argStrings(x.Args[2:])); err != nil {
		x.W.Error(err.Error())
		return
	}
	x.W.OK()
}

func configRewrite(x *Ctx) {
	if err := x.s.cfg.Rewrite(); err != nil {
		x.W.Error(err.Error())
		return
	}
	x.W.OK()
}

func configResetStat(x *Ctx) {
	s := x.s
	st := &s.stats
	for _, c := range []interface{ Store(int64) }{&st.connectionsReceived, &st.rejectedConnections, &s.ks.ExpiredKeys} {
		c.Store(0)
	}
	s.resetTraffic()
	for i := range s.cmdStats {
		st := &s.cmdStats[i]
		st.calls.Store(0)
		st.usec.Store(0)
		st.rejected.Store(0)
		st.failed.Store(0)
	}
	x.W.OK()
}

func configHelp(x *Ctx) {
	writeHelp(x, "CONFIG", []string{
		"GET <pattern>", "    Return parameters matching the glob-like <pattern> and their values.",
		"SET <directive> <value>", "    Set the configuration <directive> to <value>.",
		"RESETSTAT", "    Reset statistics reported by the INFO command.",
		"REWRITE", "    Rewrite the configuration file.",
	})
}

// forEachCommand visits every command and subcommand in name order.
func forEachCommand(fn func(c *Command)) {
	for _, c := range sortedCommands(table) {
		fn(c)
		for _, sub := range sortedCommands(c.Sub) {
			fn(sub)
		}
	}
}

func sortedCommands(m map[string]*Command) []*Command {
	list := make([]*Command, 0, len(m))
	for _, c := range m {
		list = append(list, c)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	return list
}

// shutdownCommand stops the server, saving first when asked to (SAVE) or
// when save points are configured, unless NOSAVE; a failed save keeps the
// server running unless FORCE. The connection closes without a reply, as in
// Redis.
func shutdownCommand(x *Ctx) {
	var save, nosave, force bool
	for _, a := range x.Args[1:] {
		switch strings.ToLower(string(a)) {
		case "nosave":
			nosave = true
		case "save":
			save = true
		case "force":
			force = true
		case "now":
		case "abort":
			x.W.Error("ERR No shutdown in progress.")
			return
		default:
			x.W.Error(errSyntax)
			return
		}
	}
	if save && nosave {
		x.W.Error(errSyntax)
		return
	}
	x.s.log.Printf("User requested shutdown...")
	if err := x.s.shutdownSave(save, nosave); err != nil && !force {
		x.W.Error("ERR Errors trying to SHUTDOWN. Check logs.")
		return
	}
	x.c.closeAfterReply = true
	go x.s.Close() // Close waits for this client's goroutine, so not inline
}

func debugCommand(x *Ctx) {
	mode := x.s.cfg.EnableDebugCommand()
	if mode != "yes" && !(mode == "local" && x.c.isLocal()) {
		x.W.Error("ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.")
		return
	}
	switch sub := strings.ToLower(string(x.Args[1])); {
	case sub == "sleep" && len(x.Args) == 3:
		// Redis reads the value with strtod and no error check: junk sleeps 0.
		secs := cFloatPrefix(x.Args[2])
		if secs > 0 {
			time.Sleep(time.Duration(secs * float64(time.Second)))
		}
		x.W.OK()
	case sub == "set-active-expire" && len(x.Args) == 3:
		// atoi, as in Redis: anything not starting with a number is 0.
		x.s.activeExpireEnabled.Store(cFloatPrefix(x.Args[2]) >= 1 || cFloatPrefix(x.Args[2]) <= -1)
		x.W.OK()
	case sub == "object" && len(x.Args) == 3:
		debugObject(x)
	case sub == "reload":
		reloadCommand(x)
	case sub == "loadaof":
		debugLoadAOF(x)
	case sub == "help":
		writeHelp(x, "DEBUG", []string{
			"OBJECT <key>", "    Show low level info about the `key` and associated value.",
			"LOADAOF", "    Flush the AOF buffers on disk and reload the AOF in memory.",
			"RELOAD [option ...]", "    Save the RDB on disk and reload it back to memory. Valid <option> values:",
			"    * MERGE: conflicting keys will be loaded from RDB.",
			"    * NOFLUSH: the existing database will not be removed before load, but",
			"      conflicting keys will generate an exception and kill the server.",
			"    * NOSAVE: the database will be loaded from an existing RDB file.",
			"    Examples:",
			"    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
			"      the database.",
			"    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
			"      existing RDB file.",
			"    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
			"      file to the database.",
			"SET-ACTIVE-EXPIRE <0|1>", "    Setting it to 0 disables expiring keys in background when they are not",
			"    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
			"    default.",
			"SLEEP <seconds>", "    Stop the server for <seconds>. Decimals allowed.",
		})
	default:
		x.W.Error("ERR unknown subcommand or wrong number of arguments for '" + cString(x.Args[1]) + "'. Try DEBUG HELP.")
	}
}

// cFloatPrefix reads the longest prefix of b that is a decimal number, after
// leading spaces, as C's strtod does; 0 when there is none.
func cFloatPrefix(b []byte) float64 {
	s := strings.TrimLeft(string(b), " \t\n\v\f\r")
	end := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || ((c == '-' || c == '+') && (i == 0 || s[i-1] == 'e' || s[i-1] == 'E'))) {
			break
		}
		end = i + 1
	}
	for ; end > 0; end-- {
		if f, err := strconv.ParseFloat(s[:end], 64); err == nil {
			return f
		}
	}
	return 0
}

func (c *Client) isLocal() bool {
	switch a := c.conn.RemoteAddr().(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UnixAddr:
		return true
	}
	return false
}

// debugObject reports a key's internals in Redis's layout. The address is a
// stable per-key stand-in; serializedlength is the RDB length of a string.
func debugObject(x *Ctx) {
	e, found := x.DB.Lookup(x.Args[2], x.Now, false)
	if !found {
		x.W.Error(errNoSuchKey)
		return
	}
	refcount := int64(1)
	if isSharedInteger(&e, x.s.sharedIntegerPolicy()) {
		refcount = sharedIntegerRefcount
	}
	x.W.Simple(fmt.Sprintf("Value at:0x%x refcount:%d encoding:%s serializedlength:%d lru:%d lru_seconds_idle:%d",
		keyspace.Slot(e.Key()), refcount, e.Encoding().Name(), rdbStringLen(e.Value()), e.Access(), values.IdleSeconds(e.Access(), x.Now)))
}

// rdbStringLen is the length of a string in an RDB file: small integers are
// stored in 1, 2 or 4 bytes after a type byte, other strings after a length.
func rdbStringLen(v []byte) int {
	if n, ok := strnum.ParseInt(v); ok && len(v) <= 11 {
		switch {
		case n >= -1<<7 && n < 1<<7:
			return 2
		case n >= -1<<15 && n < 1<<15:
			return 3
		case n >= -1<<31 && n < 1<<31:
			return 5
		}
	}
	switch l := len(v); {
	case l < 1<<6:
		return 1 + l
	case l < 1<<14:
		return 2 + l
	case l <= 1<<32-1:
		return 5 + l
	default:
		return 9 + len(v)
	}
}

// INFO

// infoSections lists INFO's sections in the order Redis prints them, with
// their headers; "default" prints those marked, "all" and "everything" all.
var infoSections = []struct {
	name, header string
	byDefault    bool
}{
	{"server", "Server", true}, {"clients", "Clients", true}, {"memory", "Memory", true},
	{"persistence", "Persistence", true}, {"stats", "Stats", true}, {"replication", "Replication", true},
	{"cpu", "CPU", true}, {"modules", "Modules", true}, {"commandstats", "Commandstats", false},
	{"errorstats", "Errorstats", true}, {"latencystats", "Latencystats", false},
	{"cluster", "Cluster", true}, {"keyspace", "Keyspace", true},
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
	x.W.Verbatim("txt", b.String())
}

func field(b *strings.Builder, name string, v any) {
	fmt.Fprintf(b, "%s:%v\r\n", name, v)
}

func (s *Server) writeInfoSection(b *strings.Builder, name string) {
	now := time.Now()
	switch name {
	case "server":
		host, _ := os.Hostname()
		var uts string
		if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
			uts = "Linux " + strings.TrimSpace(string(data)) + " " + runtime.GOARCH
		}
		_ = host
		field(b, "redis_version", Version)
		field(b, "redis_git_sha1", "00000000")
		field(b, "redis_git_dirty", 0)
		field(b, "redis_build_id", "keyhive")
		field(b, "redis_mode", "standalone")
		field(b, "os", uts)
		field(b, "arch_bits", strconv.IntSize)
		field(b, "monotonic_clock", "POSIX clock_gettime")
		field(b, "multiplexing_api", "epoll")
		field(b, "keyhive_go_version", runtime.Version())
		field(b, "process_id", os.Getpid())
		field(b, "process_supervised", "no")
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
		field(b, "config_file", "")
		field(b, "io_threads_active", 0)
	case "clients":
		s.mu.Lock()
		n := len(s.clients)
		s.mu.Unlock()
		field(b, "connected_clients", n)
		field(b, "cluster_connections", 0)
		field(b, "maxclients", s.cfg.MaxClients())
		field(b, "client_recent_max_input_buffer", 0)
		field(b, "client_recent_max_output_buffer", 0)
		field(b, "blocked_clients", s.blocking.waiting.Load()+s.pause.waiting()) // paused clients count, as Redis
		field(b, "tracking_clients", s.tracking.clients.Load())
		field(b, "clients_in_timeout_table", 0)
	case "memory":
		s.writeMemoryInfo(b)
	case "persistence":
		s.writePersistenceInfo(b)
	case "stats":
		st := &s.stats
		field(b, "total_connections_received", st.connectionsReceived.Load())
		t := s.traffic()
		field(b, "total_commands_processed", t.commands)
		field(b, "instantaneous_ops_per_sec", 0)
		field(b, "total_net_input_bytes", t.netIn)
		field(b, "total_net_output_bytes", t.netOut)
		field(b, "rejected_connections", st.rejectedConnections.Load())
		field(b, "expired_keys", s.ks.ExpiredKeys.Load())
		field(b, "evicted_keys", s.evict.evicted.Load())
		field(b, "keyspace_hits", t.hits)
		field(b, "keyspace_misses", t.misses)
		s.writePubSubInfo(b)
		field(b, "total_error_replies", t.errors)
	case "replication":
		field(b, "role", "master")
		field(b, "connected_slaves", 0)
		field(b, "master_replid", s.runID)
		field(b, "master_repl_offset", 0)
	case "cpu":
		var ru syscallRusage
		selfRusage(&ru)
		field(b, "used_cpu_sys", fmt.Sprintf("%.6f", ru.sys))
		field(b, "used_cpu_user", fmt.Sprintf("%.6f", ru.user))
	case "cluster":
		field(b, "cluster_enabled", 0)
	case "keyspace":
		for i := range s.ks.Len() {
			db := s.ks.DB(i)
			if n := db.Len(); n > 0 {
				fmt.Fprintf(b, "db%d:keys=%d,expires=%d,avg_ttl=0\r\n", i, n, db.Volatile())
			}
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
	field(b, "mem_fragmentation_ratio", fmt.Sprintf("%.2f", m.fragmentation()))
	field(b, "mem_fragmentation_bytes", m.rss-m.used)
	field(b, "mem_not_counted_for_evict", 0)
	field(b, "mem_clients_normal", m.clients)
	field(b, "mem_allocator", "go")
	field(b, "lazyfree_pending_objects", 0)
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

// COMMAND

func commandInfoAll(x *Ctx) {
	cmds := sortedCommands(table)
	x.W.Array(len(cmds))
	for _, c := range cmds {
		writeCommandInfo(x, c)
	}
}

func commandInfo(x *Ctx) {
	if len(x.Args) == 2 {
		commandInfoAll(x)
		return
	}
	x.W.Array(len(x.Args) - 2)
	for _, name := range x.Args[2:] {
		if c := commandByFullName(string(name)); c != nil {
			writeCommandInfo(x, c)
		} else {
			x.W.Null()
		}
	}
}

func writeCommandInfo(x *Ctx, c *Command) {
	w := x.W
	w.Array(10)
	w.BulkString(c.Name)
	w.Int(int64(c.Arity))
	n := 0
	for _, fn := range flagNames {
		if c.Flags&fn.f != 0 {
			n++
		}
	}
	w.Set(n)
	for _, fn := range flagNames {
		if c.Flags&fn.f != 0 {
			w.Simple(fn.name)
		}
	}
	first, last, step := c.spec.LegacyRange()
	w.Int(int64(first))
	w.Int(int64(last))
	w.Int(int64(step))
	cats := c.AllCategories()
	w.Set(len(cats))
	for _, cat := range cats {
		w.Simple(cat)
	}
	tips := strings.Fields(c.spec.Tips)
	w.Set(len(tips))
	for _, tip := range tips {
		w.BulkString(tip)
	}
	writeKeySpecs(w, c.spec.KeySpecs())
	subs := sortedCommands(c.Sub)
	if len(subs) == 0 {
		w.Set(0) // Redis's RESP3 quirk: an empty set, but an array of subcommands
	} else {
		w.Array(len(subs))
	}
	for _, sub := range subs {
		writeCommandInfo(x, sub)
	}
}

// writeKeySpecs writes COMMAND INFO's key specs field.
func writeKeySpecs(w *resp.Writer, specs []cmdspec.KeySpec) {
	w.Set(len(specs))
	for _, ks := range specs {
		if ks.Notes != "" {
			w.Map(4)
			w.BulkString("notes")
			w.BulkString(ks.Notes)
		} else {
			w.Map(3)
		}
		w.BulkString("flags")
		writeKeyFlags(w, ks.Flags)
		w.BulkString("begin_search")
		w.Map(2)
		w.BulkString("type")
		w.BulkString(ks.BeginSearch)
		w.BulkString("spec")
		switch ks.BeginSearch {
		case cmdspec.SearchIndex:
			w.Map(1)
			w.BulkString("index")
			w.Int(int64(ks.Index))
		case cmdspec.SearchKeyword:
			w.Map(2)
			w.BulkString("keyword")
			w.BulkString(ks.Keyword)
			w.BulkString("startfrom")
			w.Int(int64(ks.StartFrom))
		default:
			w.Map(0)
		}
		w.BulkString("find_keys")
		w.Map(2)
		w.BulkString("type")
		w.BulkString(ks.FindKeys)
		w.BulkString("spec")
		switch ks.FindKeys {
		case cmdspec.FindRange:
			writeIntMap(w, "lastkey", ks.LastKey, "keystep", ks.KeyStep, "limit", ks.Limit)
		case cmdspec.FindKeynum:
			writeIntMap(w, "keynumidx", ks.KeyNumIdx, "firstkey", ks.FirstKey, "keystep", ks.KeyStep)
		default:
			w.Map(0)
		}
	}
}

func writeIntMap(w *resp.Writer, k1 string, v1 int, k2 string, v2 int, k3 string, v3 int) {
	w.Map(3)
	w.BulkString(k1)
	w.Int(int64(v1))
	w.BulkString(k2)
	w.Int(int64(v2))
	w.BulkString(k3)
	w.Int(int64(v3))
}

func writeKeyFlags(w *resp.Writer, f cmdspec.KeyFlags) {
	names := f.Names()
	w.Set(len(names))
	for _, n := range names {
		w.Simple(n)
	}
}

func commandDocs(x *Ctx) {
	var cmds []*Command
	if len(x.Args) == 2 {
		cmds = sortedCommands(table)
	} else {
		for _, name := range x.Args[2:] {
			if c := commandByFullName(string(name)); c != nil {
				cmds = append(cmds, c)
			}
		}
	}
	x.W.Map(len(cmds))
	for _, c := range cmds {
		writeCommandDoc(x, c)
	}
}

// writeCommandDoc writes a command's COMMAND DOCS entry in Redis's order.
// Keyhive gives no history and no per-argument since: those are Redis's
// release notes, not the interface.
func writeCommandDoc(x *Ctx, c *Command) {
	w := x.W
	sp := c.spec
	w.BulkString(c.Name)
	n := 3 // summary, since, group
	for _, field := range []string{sp.Complexity, sp.DocFlags, sp.DeprecatedSince, sp.ReplacedBy} {
		if field != "" {
			n++
		}
	}
	if len(sp.Arguments()) > 0 {
		n++
	}
	if len(c.Sub) > 0 {
		n++
	}
	w.Map(n)
	w.BulkString("summary")
	w.BulkString(sp.Summary)
	w.BulkString("since")
	w.BulkString(sp.Since)
	w.BulkString("group")
	w.BulkString(sp.Group)
	if sp.Complexity != "" {
		w.BulkString("complexity")
		w.BulkString(sp.Complexity)
	}
	if sp.DocFlags != "" {
		w.BulkString("doc_flags")
		flags := strings.Fields(sp.DocFlags)
		w.Set(len(flags))
		for _, f := range flags {
			w.Simple(f)
		}
	}
	if sp.DeprecatedSince != "" {
		w.BulkString("deprecated_since")
		w.BulkString(sp.DeprecatedSince)
	}
	if sp.ReplacedBy != "" {
		w.BulkString("replaced_by")
		w.BulkString(sp.ReplacedBy)
	}
	if args := sp.Arguments(); len(args) > 0 {
		w.BulkString("arguments")
		writeDocArgs(w, args)
	}
	if len(c.Sub) > 0 {
		w.BulkString("subcommands")
		subs := sortedCommands(c.Sub)
		w.Map(len(subs))
		for _, sub := range subs {
			writeCommandDoc(x, sub)
		}
	}
}

func writeDocArgs(w *resp.Writer, args []cmdspec.Arg) {
	w.Array(len(args))
	for i := range args {
		a := &args[i]
		flags := a.Flags()
		n := 2
		for _, present := range []bool{a.KeySpecIndex >= 0, a.Token != "", a.DeprecatedSince != "", len(flags) > 0, a.Type == "oneof" || a.Type == "block"} {
			if present {
				n++
			}
		}
		w.Map(n)
		w.BulkString("name")
		w.BulkString(a.Name)
		w.BulkString("type")
		w.BulkString(a.Type)
		if a.KeySpecIndex >= 0 {
			w.BulkString("key_spec_index")
			w.Int(int64(a.KeySpecIndex))
		}
		if a.Token != "" {
			w.BulkString("token")
			w.BulkString(a.Token)
		}
		if a.DeprecatedSince != "" {
			w.BulkString("deprecated_since")
			w.BulkString(a.DeprecatedSince)
		}
		if len(flags) > 0 {
			w.BulkString("flags")
			w.Set(len(flags))
			for _, f := range flags {
				w.Simple(f)
			}
		}
		if a.Type == "oneof" || a.Type == "block" {
			w.BulkString("arguments")
			writeDocArgs(w, a.Args)
		}
	}
}

func commandList(x *Ctx) {
	var filter func(c *Command) bool
	if len(x.Args) > 2 {
		if len(x.Args) != 5 || !strings.EqualFold(string(x.Args[2]), "filterby") {
			x.W.Error(errSyntax)
			return
		}
		arg := string(x.Args[4])
		switch strings.ToLower(string(x.Args[3])) {
		case "module":
			filter = func(*Command) bool { return false }
		case "aclcat":
			filter = func(c *Command) bool { return has(c.AllCategories(), "@"+strings.ToLower(arg)) }
		case "pattern":
			filter = func(c *Command) bool { return glob.MatchString(arg, c.Name, true) }
		default:
			x.W.Error(errSyntax)
			return
		}
	}
	var names []string
	forEachCommand(func(c *Command) {
		if filter == nil || filter(c) {
			names = append(names, c.Name)
		}
	})
	writeStrings(x, names)
}

// commandGetKeys answers COMMAND GETKEYS and GETKEYSANDFLAGS with the keys
// ACL checks use, in Redis's order of checks and errors.
func commandGetKeys(x *Ctx, withFlags bool) {
	args := x.Args[2:]
	c := findCommand(args)
	switch {
	case c == nil:
		x.W.Error("ERR Invalid command specified")
		return
	case !c.spec.HasKeys():
		x.W.Error("ERR The command has no key arguments")
		return
	case !c.hasArity(len(args)):
		x.W.Error("ERR Invalid number of arguments specified for command")
		return
	}
	keys := c.keyRefs(args, nil)
	if len(keys) == 0 && c.Flags&FlagNoMandatoryKeys == 0 {
		x.W.Error("ERR Invalid arguments specified for command")
		return
	}
	x.W.Array(len(keys))
	for _, k := range keys {
		if withFlags {
			x.W.Array(2)
			x.W.Bulk(args[k.Pos])
			writeKeyFlags(x.W, k.Flags)
			continue
		}
		x.W.Bulk(args[k.Pos])
	}
}

func commandHelp(x *Ctx) {
	writeHelp(x, "COMMAND", []string{
		"(no subcommand)", "    Return details about all Redis commands.",
		"COUNT", "    Return the total number of commands in this Redis server.",
		"LIST", "    Return a list of all commands in this Redis server.",
		"INFO [<command-name> ...]", "    Return details about multiple Redis commands.",
		"    If no command names are given, documentation details for all",
		"    commands are returned.",
		"DOCS [<command-name> ...]", "    Return documentation details about multiple Redis commands.",
		"    If no command names are given, documentation details for all",
		"    commands are returned.",
		"GETKEYS <full-command>", "    Return the keys from a full Redis command.",
		"GETKEYSANDFLAGS <full-command>", "    Return the keys and the access flags from a full Redis command.",
	})
}
