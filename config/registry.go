package config

import (
	"math"
	"strings"
)

// kind is how a directive's value is parsed, stored and formatted.
type kind uint8

const (
	kBool    kind = iota // bool
	kInt                 // int64 within [min, max]
	kOctal               // int64 within [min, max], read and shown in octal
	kMem                 // int64 byte count within [min, max], accepts units
	kMemU                // uint64 byte count, no bounds (maxmemory)
	kMemPct              // int64 byte count, or "N%" stored as -N
	kEnum                // int64: value of one of enum
	kFlags               // int64: OR of several enum values
	kString              // string
	kSpecial             // custom type, see special
)

const (
	fImmutable     = 1 << iota // CONFIG SET refuses it
	fProtected                 // CONFIG SET needs enable-protected-configs
	fHidden                    // not matched by CONFIG GET patterns
	fMulti                     // several words: file args are joined, SET values split on spaces
	fAlwaysRewrite             // CONFIG REWRITE writes it even when it equals the default
	fOwn                       // Keyhive's own: redis-server does not know it
	fRedis8                    // Redis 8.x's: the 7.x oracles do not know it
)

const (
	intMax  = math.MaxInt32
	intMin  = math.MinInt32
	uintMax = math.MaxUint32
	llMax   = math.MaxInt64
)

type enumVal struct {
	name string
	val  int64
	// unlisted values are accepted but left out of the error's list, which
	// stays Redis 7.0's (the 8.x eviction policies).
	unlisted bool
}

// spec describes one directive. Every behaviour of the package (file
// parsing, CONFIG GET/SET/REWRITE, defaults, typed getters) is driven by the
// specs table below.
type spec struct {
	name  string
	alias string // older name still accepted everywhere (and listed by CONFIG GET)
	kind  kind
	def   string // default, written as it would appear in a config file
	min   int64
	max   int64
	enum  []enumVal
	flags uint8
	check func(v any) error // extra validation of an already parsed value
	norm  func(int64) int64 // silent adjustment after validation (hz)
	sp    *special          // for kSpecial
	idx   int               // position in specs, set at init
}

// special implements a directive whose value is not a scalar.
type special struct {
	// parse turns the words of a directive into a value; cur is the current
	// value (client-output-buffer-limit only updates the classes it names).
	parse  func(args []string, cur any) (any, error)
	format func(v any) string // CONFIG GET form
	// rewrite produces the config file lines (without the directive name)
	// and whether each must be written even if absent from the file.
	rewrite func(v, def any) []rwLine
	// merge combines a repeated directive while loading one configuration
	// (several "save" lines add up instead of overriding).
	merge func(old, new any) any
}

type rwLine struct {
	text  string
	force bool
}

func ev(names ...string) []enumVal {
	e := make([]enumVal, len(names))
	for i, n := range names {
		e[i] = enumVal{name: n, val: int64(i)}
	}
	return e
}

var (
	noYesLocal = ev("no", "yes", "local")
	evPolicy   = append(ev("volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
		"allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"),
		enumVal{"volatile-lrm", 8, true}, enumVal{"allkeys-lrm", 9, true}, // Redis 8.6
		enumVal{"volatile-lrfu", 10, true}, enumVal{"allkeys-lrfu", 11, true}) // Keyhive's (docs/eviction.md)
	evLoglevel   = append(ev("debug", "verbose", "notice", "warning"), enumVal{"nothing", 4, true}) // Redis 7.2
	evFsync      = ev("everysec", "always", "no")
	evSupervised = ev("upstart", "systemd", "auto", "no")
	evFacility   = ev("user", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7")
	evShutdown   = []enumVal{{"default", 0, false}, {"save", 1, false}, {"nosave", 2, false}, {"now", 4, false}, {"force", 8, false}}
	// "yes" is a synonym of "relative"; CONFIG GET shows the first name.
	evOOM = []enumVal{{"no", 0, false}, {"yes", 1, false}, {"relative", 1, false}, {"absolute", 2, false}}
)

var specs = []spec{
	{name: "acl-pubsub-default", kind: kEnum, def: "resetchannels", enum: ev("allchannels", "resetchannels")},
	{name: "aclfile", kind: kString, def: "", flags: fImmutable},
	{name: "acllog-max-len", kind: kInt, def: "128", min: 0, max: llMax},
	{name: "active-defrag-cycle-max", kind: kInt, def: "25", min: 1, max: 99},
	{name: "active-defrag-cycle-min", kind: kInt, def: "1", min: 1, max: 99},
	{name: "active-defrag-ignore-bytes", kind: kMem, def: "104857600", min: 1, max: llMax},
	{name: "active-defrag-max-scan-fields", kind: kInt, def: "1000", min: 1, max: llMax},
	{name: "active-defrag-threshold-lower", kind: kInt, def: "10", min: 0, max: 1000},
	{name: "active-defrag-threshold-upper", kind: kInt, def: "100", min: 0, max: 1000},
	{name: "active-expire-effort", kind: kInt, def: "1", min: 1, max: 10},
	{name: "activedefrag", kind: kBool, def: "no"},
	{name: "activerehashing", kind: kBool, def: "yes"},
	{name: "always-show-logo", kind: kBool, def: "no", flags: fImmutable},
	{name: "aof-disable-auto-gc", kind: kBool, def: "no"},
	{name: "aof-load-truncated", kind: kBool, def: "yes"},
	{name: "aof-rewrite-incremental-fsync", kind: kBool, def: "yes"},
	{name: "aof-timestamp-enabled", kind: kBool, def: "no"},
	{name: "aof-use-rdb-preamble", kind: kBool, def: "yes"},
	{name: "aof_rewrite_cpulist", kind: kString, def: "", flags: fImmutable},
	{name: "appenddirname", kind: kString, def: "appendonlydir", flags: fImmutable, check: baseName("appenddirname can't be a path, just a dirname")},
	{name: "appendfilename", kind: kString, def: "appendonly.aof", flags: fImmutable, check: baseName("appendfilename can't be a path, just a filename")},
	{name: "appendfsync", kind: kEnum, def: "everysec", enum: evFsync},
	{name: "appendonly", kind: kBool, def: "no"},
	{name: "auto-aof-rewrite-min-size", kind: kMem, def: "67108864", min: 0, max: llMax},
	{name: "auto-aof-rewrite-percentage", kind: kInt, def: "100", min: 0, max: intMax},
	{name: "bgsave_cpulist", kind: kString, def: "", flags: fImmutable},
	{name: "bind", kind: kSpecial, def: "127.0.0.1 -::1", flags: fMulti, sp: spBind}, // Keyhive listens on loopback by default (as redis.conf does), not on every interface
	{name: "bind-source-addr", kind: kString, def: ""},
	{name: "bio_cpulist", kind: kString, def: "", flags: fImmutable},
	{name: "busy-reply-threshold", alias: "lua-time-limit", kind: kInt, def: "5000", min: 0, max: llMax},
	{name: "client-output-buffer-limit", kind: kSpecial, def: "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60", flags: fMulti, sp: spObuf},
	{name: "client-query-buffer-limit", kind: kMem, def: "1073741824", min: 1024 * 1024, max: llMax},
	{name: "cluster-allow-pubsubshard-when-down", kind: kBool, def: "yes"},
	{name: "cluster-allow-reads-when-down", kind: kBool, def: "no"},
	{name: "cluster-allow-replica-migration", kind: kBool, def: "yes"},
	{name: "cluster-announce-bus-port", kind: kInt, def: "0", min: 0, max: 65535},
	{name: "cluster-announce-hostname", kind: kString, def: "", check: checkHostname},
	{name: "cluster-announce-ip", kind: kString, def: ""},
	{name: "cluster-announce-port", kind: kInt, def: "0", min: 0, max: 65535},
	{name: "cluster-announce-tls-port", kind: kInt, def: "0", min: 0, max: 65535},
	{name: "cluster-compatibility-sample-ratio", kind: kInt, def: "0", min: 0, max: 100, flags: fRedis8},
	{name: "cluster-config-file", kind: kString, def: "nodes.conf", flags: fImmutable},
	{name: "cluster-enabled", kind: kBool, def: "no", flags: fImmutable},
	{name: "cluster-link-sendbuf-limit", kind: kMemU, def: "0"},
	{name: "cluster-migration-barrier", kind: kInt, def: "1", min: 0, max: intMax},
	{name: "cluster-node-timeout", kind: kInt, def: "15000", min: 0, max: llMax},
	{name: "cluster-port", kind: kInt, def: "0", min: 0, max: 65535, flags: fImmutable},
	{name: "cluster-preferred-endpoint-type", kind: kEnum, def: "ip", enum: ev("ip", "hostname", "unknown-endpoint")},
	{name: "cluster-replica-no-failover", alias: "cluster-slave-no-failover", kind: kBool, def: "no"},
	{name: "cluster-replica-validity-factor", alias: "cluster-slave-validity-factor", kind: kInt, def: "10", min: 0, max: intMax},
	{name: "cluster-require-full-coverage", kind: kBool, def: "yes"},
	{name: "cluster-slot-stats-enabled", kind: kBool, def: "no", flags: fRedis8},
	{name: "crash-log-enabled", kind: kBool, def: "yes"},
	{name: "crash-memcheck-enabled", kind: kBool, def: "yes"},
	{name: "daemonize", kind: kBool, def: "no", flags: fImmutable},
	{name: "databases", kind: kInt, def: "16", min: 1, max: intMax, flags: fImmutable},
	{name: "dbfilename", kind: kString, def: "dump.rdb", flags: fProtected, check: baseName("dbfilename can't be a path, just a filename")},
	{name: "dir", kind: kSpecial, def: "", flags: fProtected | fAlwaysRewrite, sp: spDir},
	{name: "disable-thp", kind: kBool, def: "yes", flags: fImmutable},
	{name: "dynamic-hz", kind: kBool, def: "yes"},
	{name: "enable-debug-command", kind: kEnum, def: "no", enum: noYesLocal, flags: fImmutable},
	{name: "enable-module-command", kind: kEnum, def: "no", enum: noYesLocal, flags: fImmutable},
	{name: "enable-protected-configs", kind: kEnum, def: "no", enum: noYesLocal, flags: fImmutable},
	{name: "hash-max-listpack-entries", alias: "hash-max-ziplist-entries", kind: kInt, def: "512", min: 0, max: llMax},
	{name: "hash-max-listpack-value", alias: "hash-max-ziplist-value", kind: kMem, def: "64", min: 0, max: llMax},
	{name: "hll-sparse-max-bytes", kind: kMem, def: "3000", min: 0, max: llMax},
	{name: "hz", kind: kInt, def: "10", min: 0, max: intMax, norm: clampHz},
	{name: "ignore-warnings", kind: kString, def: ""},
	{name: "io-threads", kind: kInt, def: "1", min: 1, max: 128, flags: fImmutable},
	{name: "io-threads-do-reads", kind: kBool, def: "no", flags: fImmutable},
	{name: "jemalloc-bg-thread", kind: kBool, def: "yes"},
	{name: "key-load-delay", kind: kInt, def: "0", min: intMin, max: intMax, flags: fHidden},
	// How often a long load serves clients: loading is not interleaved with
	// serving here, so it is accepted and kept for CONFIG GET/REWRITE only.
	{name: "loading-process-events-interval-bytes", kind: kInt, def: "2097152", min: 1024, max: intMax, flags: fHidden},
	{name: "latency-monitor-threshold", kind: kInt, def: "0", min: 0, max: llMax},
	{name: "latency-tracking", kind: kBool, def: "yes"},
	{name: "latency-tracking-info-percentiles", kind: kSpecial, def: "50 99 99.9", flags: fMulti, sp: spPercentiles},
	{name: "lazyfree-lazy-eviction", kind: kBool, def: "no"},
	{name: "lazyfree-lazy-expire", kind: kBool, def: "no"},
	{name: "lazyfree-lazy-server-del", kind: kBool, def: "no"},
	{name: "lazyfree-lazy-user-del", kind: kBool, def: "no"},
	{name: "lazyfree-lazy-user-flush", kind: kBool, def: "no"},
	{name: "lfu-decay-time", kind: kInt, def: "1", min: 0, max: intMax},
	{name: "lfu-log-factor", kind: kInt, def: "10", min: 0, max: intMax},
	{name: "list-compress-depth", kind: kInt, def: "0", min: 0, max: intMax},
	{name: "list-max-listpack-size", alias: "list-max-ziplist-size", kind: kInt, def: "-2", min: intMin, max: intMax},
	{name: "logfile", kind: kString, def: "", flags: fImmutable},
	{name: "loglevel", kind: kEnum, def: "notice", enum: evLoglevel},
	{name: "masterauth", kind: kString, def: ""},
	{name: "masteruser", kind: kString, def: ""},
	{name: "maxclients", kind: kInt, def: "10000", min: 1, max: uintMax},
	{name: "maxmemory", kind: kMemU, def: "0"},
	{name: "maxmemory-clients", kind: kMemPct, def: "0", min: -100, max: llMax},
	{name: "maxmemory-eviction-tenacity", kind: kInt, def: "10", min: 0, max: 100},
	{name: "maxmemory-policy", kind: kEnum, def: "noeviction", enum: evPolicy},
	{name: "maxmemory-samples", kind: kInt, def: "5", min: 1, max: intMax},
	// Keyhive's read-only web console (package console, server/console.go):
	// off while the port is 0; the bind list reads as bind's. Served over
	// TLS with the server's certificate when tls-port is set.
	{name: "console-bind", kind: kSpecial, def: "127.0.0.1 -::1", flags: fMulti | fImmutable | fOwn, sp: spBind},
	{name: "console-port", kind: kInt, def: "0", min: 0, max: 65535, flags: fImmutable | fOwn},
	// Keyhive's Prometheus endpoint (server/metrics.go): off while the port is 0;
	// the bind list reads as bind's ("-" marks an optional address, "*" all).
	{name: "metrics-bind", kind: kSpecial, def: "127.0.0.1 -::1", flags: fMulti | fImmutable | fOwn, sp: spBind},
	{name: "metrics-port", kind: kInt, def: "0", min: 0, max: 65535, flags: fImmutable | fOwn},
	// Keyhive's durable replies (server/durable.go): a write's reply waits
	// until this many replicas acknowledged it (0: off), for at most the
	// timeout in milliseconds.
	{name: "min-replicas-to-ack", kind: kInt, def: "0", min: 0, max: intMax, flags: fOwn},
	{name: "min-replicas-ack-timeout", kind: kInt, def: "10000", min: 1, max: intMax, flags: fOwn},
	{name: "min-replicas-max-lag", alias: "min-slaves-max-lag", kind: kInt, def: "10", min: 0, max: intMax},
	{name: "min-replicas-to-write", alias: "min-slaves-to-write", kind: kInt, def: "0", min: 0, max: intMax},
	// Keyhive's discovered prefixes (package discover): kept as keys
	// change while on, split at the delimiter (one byte) to the depth, with
	// capacity buckets per sketch row (a power of two; memory grows with it).
	{name: "namespace-discovery", kind: kBool, def: "yes", flags: fOwn},
	{name: "namespace-discovery-capacity", kind: kInt, def: "1024", min: 64, max: 65536, flags: fOwn, check: powerOfTwo("namespace-discovery-capacity must be a power of two")},
	{name: "namespace-discovery-delimiter", kind: kString, def: ":", flags: fOwn, check: oneByte("namespace-discovery-delimiter must be one byte")},
	{name: "namespace-discovery-depth", kind: kInt, def: "3", min: 1, max: 3, flags: fOwn},
	{name: "no-appendfsync-on-rewrite", kind: kBool, def: "no"},
	{name: "notify-keyspace-events", kind: kSpecial, def: "", sp: spKeyspace},
	{name: "oom-score-adj", kind: kEnum, def: "no", enum: evOOM},
	{name: "oom-score-adj-values", kind: kSpecial, def: "0 200 800", flags: fMulti, sp: spOOMValues},
	{name: "pidfile", kind: kString, def: "", flags: fImmutable},
	{name: "port", kind: kInt, def: "6379", min: 0, max: 65535},
	{name: "proc-title-template", kind: kString, def: "{title} {listen-addr} {server-mode}", check: checkProcTitle},
	{name: "propagation-error-behavior", kind: kEnum, def: "ignore", enum: ev("ignore", "panic", "panic-on-replicas")},
	{name: "protected-mode", kind: kBool, def: "yes"},
	{name: "proto-max-bulk-len", kind: kMem, def: "536870912", min: 1024 * 1024, max: llMax},
	{name: "rdb-del-sync-files", kind: kBool, def: "no"},
	{name: "rdb-key-save-delay", kind: kInt, def: "0", min: intMin, max: intMax, flags: fHidden},
	{name: "rdb-save-incremental-fsync", kind: kBool, def: "yes"},
	{name: "rdbchecksum", kind: kBool, def: "yes", flags: fImmutable},
	{name: "rdbcompression", kind: kBool, def: "yes"},
	{name: "repl-backlog-size", kind: kMem, def: "1048576", min: 1, max: llMax},
	{name: "repl-backlog-ttl", kind: kInt, def: "3600", min: 0, max: llMax},
	{name: "repl-disable-tcp-nodelay", kind: kBool, def: "no"},
	{name: "repl-diskless-load", kind: kEnum, def: "disabled", enum: ev("disabled", "on-empty-db", "swapdb")},
	{name: "repl-diskless-sync", kind: kBool, def: "yes"},
	{name: "repl-diskless-sync-delay", kind: kInt, def: "5", min: 0, max: intMax},
	{name: "repl-diskless-sync-max-replicas", kind: kInt, def: "0", min: 0, max: intMax},
	{name: "repl-ping-replica-period", alias: "repl-ping-slave-period", kind: kInt, def: "10", min: 1, max: intMax},
	{name: "repl-timeout", kind: kInt, def: "60", min: 1, max: intMax},
	{name: "replica-announce-ip", alias: "slave-announce-ip", kind: kString, def: ""},
	{name: "replica-announce-port", alias: "slave-announce-port", kind: kInt, def: "0", min: 0, max: 65535},
	{name: "replica-announced", kind: kBool, def: "yes"},
	{name: "replica-ignore-disk-write-errors", kind: kBool, def: "no"},
	{name: "replica-ignore-maxmemory", alias: "slave-ignore-maxmemory", kind: kBool, def: "yes"},
	{name: "replica-lazy-flush", alias: "slave-lazy-flush", kind: kBool, def: "no"},
	{name: "replica-priority", alias: "slave-priority", kind: kInt, def: "100", min: 0, max: intMax},
	{name: "replica-read-only", alias: "slave-read-only", kind: kBool, def: "yes"},
	{name: "replica-serve-stale-data", alias: "slave-serve-stale-data", kind: kBool, def: "yes"},
	{name: "replicaof", alias: "slaveof", kind: kSpecial, def: "no one", flags: fImmutable | fMulti, sp: spReplicaof},
	{name: "requirepass", kind: kString, def: ""},
	{name: "sanitize-dump-payload", kind: kEnum, def: "no", enum: ev("no", "yes", "clients")},
	{name: "save", kind: kSpecial, def: "3600 1 300 100 60 10000", flags: fMulti, sp: spSave},
	{name: "server_cpulist", kind: kString, def: "", flags: fImmutable},
	{name: "set-max-intset-entries", kind: kInt, def: "512", min: 0, max: llMax},
	// Redis 7.2's limits of a listpack set; the value is a plain integer
	// there, unlike the hash and zset ones.
	{name: "set-max-listpack-entries", kind: kInt, def: "128", min: 0, max: llMax},
	{name: "set-max-listpack-value", kind: kInt, def: "64", min: 0, max: llMax},
	{name: "set-proc-title", kind: kBool, def: "yes", flags: fImmutable},
	{name: "shutdown-on-sigint", kind: kFlags, def: "default", enum: evShutdown, flags: fMulti, check: checkShutdown},
	{name: "shutdown-on-sigterm", kind: kFlags, def: "default", enum: evShutdown, flags: fMulti, check: checkShutdown},
	{name: "shutdown-timeout", kind: kInt, def: "10", min: 0, max: intMax},
	{name: "slowlog-log-slower-than", kind: kInt, def: "10000", min: -1, max: llMax},
	{name: "slowlog-max-argc", kind: kInt, def: "32", min: 1, max: intMax, flags: fRedis8}, // Redis 8.10
	{name: "slowlog-max-len", kind: kInt, def: "128", min: 0, max: llMax},
	{name: "socket-mark-id", kind: kInt, def: "0", min: 0, max: uintMax, flags: fImmutable},
	{name: "stop-writes-on-bgsave-error", kind: kBool, def: "yes"},
	{name: "stream-node-max-bytes", kind: kMem, def: "4096", min: 0, max: llMax},
	{name: "stream-node-max-entries", kind: kInt, def: "100", min: 0, max: llMax},
	{name: "supervised", kind: kEnum, def: "no", enum: evSupervised, flags: fImmutable},
	{name: "syslog-enabled", kind: kBool, def: "no", flags: fImmutable},
	{name: "syslog-facility", kind: kEnum, def: "local0", enum: evFacility, flags: fImmutable},
	{name: "syslog-ident", kind: kString, def: "redis", flags: fImmutable},
	{name: "tcp-backlog", kind: kInt, def: "511", min: 0, max: intMax, flags: fImmutable},
	{name: "tcp-keepalive", kind: kInt, def: "300", min: 0, max: intMax},
	{name: "timeout", kind: kInt, def: "0", min: 0, max: intMax},
	{name: "tls-auth-clients", kind: kEnum, def: "yes", enum: ev("no", "yes", "optional")},
	{name: "tls-ca-cert-dir", kind: kString, def: ""},
	{name: "tls-ca-cert-file", kind: kString, def: ""},
	{name: "tls-cert-file", kind: kString, def: ""},
	{name: "tls-ciphers", kind: kString, def: ""},
	{name: "tls-ciphersuites", kind: kString, def: ""},
	{name: "tls-client-cert-file", kind: kString, def: ""},
	{name: "tls-client-key-file", kind: kString, def: ""},
	{name: "tls-client-key-file-pass", kind: kString, def: ""},
	{name: "tls-cluster", kind: kBool, def: "no"},
	{name: "tls-dh-params-file", kind: kString, def: ""},
	{name: "tls-key-file", kind: kString, def: ""},
	{name: "tls-key-file-pass", kind: kString, def: ""},
	{name: "tls-port", kind: kInt, def: "0", min: 0, max: 65535},
	{name: "tls-prefer-server-ciphers", kind: kBool, def: "no"},
	{name: "tls-protocols", kind: kString, def: ""},
	{name: "tls-replication", kind: kBool, def: "no"},
	{name: "tls-session-cache-size", kind: kInt, def: "20480", min: 0, max: intMax},
	{name: "tls-session-cache-timeout", kind: kInt, def: "300", min: 0, max: intMax},
	{name: "tls-session-caching", kind: kBool, def: "yes"},
	{name: "tracking-table-max-keys", kind: kInt, def: "1000000", min: 0, max: llMax},
	{name: "unixsocket", kind: kString, def: "", flags: fImmutable},
	{name: "unixsocketperm", kind: kOctal, def: "0", min: 0, max: 0777, flags: fImmutable},
	{name: "zset-max-listpack-entries", alias: "zset-max-ziplist-entries", kind: kInt, def: "128", min: 0, max: llMax},
	{name: "zset-max-listpack-value", alias: "zset-max-ziplist-value", kind: kMem, def: "64", min: 0, max: llMax},
}

// byName maps every lower-case name and alias to its index in specs.
var byName = func() map[string]int {
	m := make(map[string]int, 2*len(specs))
	for i := range specs {
		s := &specs[i]
		s.idx = i
		for _, n := range []string{s.name, s.alias} {
			if n == "" {
				continue
			}
			if n != strings.ToLower(n) {
				panic("config: directive names must be lower case: " + n)
			}
			if _, dup := m[n]; dup {
				panic("config: duplicate directive " + n)
			}
			m[n] = i
		}
	}
	return m
}()

// lookup finds a directive by name or alias, case-insensitively.
func lookup(name string) *spec {
	if i, ok := byName[name]; ok {
		return &specs[i]
	}
	if i, ok := byName[strings.ToLower(name)]; ok {
		return &specs[i]
	}
	return nil
}

// mustIdx resolves a directive name for the typed getters at init time, so a
// typo fails every test instead of returning a wrong value.
func mustIdx(name string) int {
	s := lookup(name)
	if s == nil {
		panic("config: unknown directive " + name)
	}
	return s.idx
}

// Directives that are accepted in a config file and ignored, as Redis 7.0
// does for options it dropped.
var deprecated = map[string]bool{
	"list-max-ziplist-entries": true,
	"list-max-ziplist-value":   true,
	"lua-replicate-commands":   true,
}

func clampHz(v int64) int64 {
	// Redis silently keeps hz within [1, 500].
	if v < 1 {
		return 1
	}
	if v > 500 {
		return 500
	}
	return v
}
