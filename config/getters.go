package config

import "math"

// Indexes of the directives that have typed getters, resolved once so the
// getters are a slice index, an atomic load and a type assertion: no lock,
// no allocation.
var (
	ixACLFile                 = mustIdx("aclfile")
	ixACLLogMaxLen            = mustIdx("acllog-max-len")
	ixACLPubsubDefault        = mustIdx("acl-pubsub-default")
	ixActiveExpireEffort      = mustIdx("active-expire-effort")
	ixActiveRehashing         = mustIdx("activerehashing")
	ixAOFLoadTruncated        = mustIdx("aof-load-truncated")
	ixAOFUseRDBPreamble       = mustIdx("aof-use-rdb-preamble")
	ixAppendDirname           = mustIdx("appenddirname")
	ixAppendFilename          = mustIdx("appendfilename")
	ixAppendFsync             = mustIdx("appendfsync")
	ixAppendOnly              = mustIdx("appendonly")
	ixAutoAOFRewritePct       = mustIdx("auto-aof-rewrite-percentage")
	ixAutoAOFRewriteMinSize   = mustIdx("auto-aof-rewrite-min-size")
	ixBind                    = mustIdx("bind")
	ixBusyReplyThreshold      = mustIdx("busy-reply-threshold")
	ixClientOutputBufferLimit = mustIdx("client-output-buffer-limit")
	ixClientQueryBufferLimit  = mustIdx("client-query-buffer-limit")
	ixClusterEnabled          = mustIdx("cluster-enabled")
	ixDaemonize               = mustIdx("daemonize")
	ixDatabases               = mustIdx("databases")
	ixDBFilename              = mustIdx("dbfilename")
	ixDir                     = mustIdx("dir")
	ixDynamicHz               = mustIdx("dynamic-hz")
	ixEnableDebugCommand      = mustIdx("enable-debug-command")
	ixEnableModuleCommand     = mustIdx("enable-module-command")
	ixEnableProtectedConfigs  = mustIdx("enable-protected-configs")
	ixHashMaxListpackEntries  = mustIdx("hash-max-listpack-entries")
	ixHashMaxListpackValue    = mustIdx("hash-max-listpack-value")
	ixHLLSparseMaxBytes       = mustIdx("hll-sparse-max-bytes")
	ixHz                      = mustIdx("hz")
	ixRDBKeySaveDelay         = mustIdx("rdb-key-save-delay")
	ixIOThreads               = mustIdx("io-threads")
	ixLatencyMonitorThreshold = mustIdx("latency-monitor-threshold")
	ixLatencyTracking         = mustIdx("latency-tracking")
	ixLatencyPercentiles      = mustIdx("latency-tracking-info-percentiles")
	ixLazyFreeLazyEviction    = mustIdx("lazyfree-lazy-eviction")
	ixLazyFreeLazyExpire      = mustIdx("lazyfree-lazy-expire")
	ixLazyFreeLazyServerDel   = mustIdx("lazyfree-lazy-server-del")
	ixLazyFreeLazyUserDel     = mustIdx("lazyfree-lazy-user-del")
	ixLazyFreeLazyUserFlush   = mustIdx("lazyfree-lazy-user-flush")
	ixLFUDecayTime            = mustIdx("lfu-decay-time")
	ixLFULogFactor            = mustIdx("lfu-log-factor")
	ixListCompressDepth       = mustIdx("list-compress-depth")
	ixListMaxListpackSize     = mustIdx("list-max-listpack-size")
	ixLogFile                 = mustIdx("logfile")
	ixLogLevel                = mustIdx("loglevel")
	ixMasterAuth              = mustIdx("masterauth")
	ixMasterUser              = mustIdx("masteruser")
	ixMaxClients              = mustIdx("maxclients")
	ixMaxMemory               = mustIdx("maxmemory")
	ixMaxMemoryClients        = mustIdx("maxmemory-clients")
	ixMaxMemoryEvictionTenac  = mustIdx("maxmemory-eviction-tenacity")
	ixMaxMemoryPolicy         = mustIdx("maxmemory-policy")
	ixMaxMemorySamples        = mustIdx("maxmemory-samples")
	ixNotifyKeyspaceEvents    = mustIdx("notify-keyspace-events")
	ixPidFile                 = mustIdx("pidfile")
	ixPort                    = mustIdx("port")
	ixMetricsPort             = mustIdx("metrics-port")
	ixConsolePort             = mustIdx("console-port")
	ixConsoleBind             = mustIdx("console-bind")
	ixDiscovery               = mustIdx("namespace-discovery")
	ixDiscoveryCapacity       = mustIdx("namespace-discovery-capacity")
	ixDiscoveryDelimiter      = mustIdx("namespace-discovery-delimiter")
	ixDiscoveryDepth          = mustIdx("namespace-discovery-depth")
	ixMetricsBind             = mustIdx("metrics-bind")
	ixProtectedMode           = mustIdx("protected-mode")
	ixAlwaysShowLogo          = mustIdx("always-show-logo")
	ixProtoMaxBulkLen         = mustIdx("proto-max-bulk-len")
	ixRDBChecksum             = mustIdx("rdbchecksum")
	ixRDBCompression          = mustIdx("rdbcompression")
	ixReplicaOf               = mustIdx("replicaof")
	ixReplicaReadOnly         = mustIdx("replica-read-only")
	ixReplicaIgnoreMaxMemory  = mustIdx("replica-ignore-maxmemory")
	ixReplicaServeStaleData   = mustIdx("replica-serve-stale-data")
	ixRequirePass             = mustIdx("requirepass")
	ixSave                    = mustIdx("save")
	ixSetMaxIntsetEntries     = mustIdx("set-max-intset-entries")
	ixSetMaxListpackEntries   = mustIdx("set-max-listpack-entries")
	ixSetMaxListpackValue     = mustIdx("set-max-listpack-value")
	ixShutdownOnSigint        = mustIdx("shutdown-on-sigint")
	ixShutdownOnSigterm       = mustIdx("shutdown-on-sigterm")
	ixShutdownTimeout         = mustIdx("shutdown-timeout")
	ixSlowlogLogSlowerThan    = mustIdx("slowlog-log-slower-than")
	ixSlowlogMaxLen           = mustIdx("slowlog-max-len")
	ixSlowlogMaxArgc          = mustIdx("slowlog-max-argc")
	ixStopWritesOnBgsaveError = mustIdx("stop-writes-on-bgsave-error")
	ixStreamNodeMaxBytes      = mustIdx("stream-node-max-bytes")
	ixStreamNodeMaxEntries    = mustIdx("stream-node-max-entries")
	ixTCPBacklog              = mustIdx("tcp-backlog")
	ixTCPKeepAlive            = mustIdx("tcp-keepalive")
	ixTimeout                 = mustIdx("timeout")
	ixTLSCACertDir            = mustIdx("tls-ca-cert-dir")
	ixTLSCiphers              = mustIdx("tls-ciphers")
	ixTLSSessionCaching       = mustIdx("tls-session-caching")
	ixTLSAuthClients          = mustIdx("tls-auth-clients")
	ixTLSCACertFile           = mustIdx("tls-ca-cert-file")
	ixTLSCertFile             = mustIdx("tls-cert-file")
	ixTLSCiphersuites         = mustIdx("tls-ciphersuites")
	ixTLSKeyFile              = mustIdx("tls-key-file")
	ixTLSPort                 = mustIdx("tls-port")
	ixTLSProtocols            = mustIdx("tls-protocols")
	ixTrackingTableMaxKeys    = mustIdx("tracking-table-max-keys")
	ixUnixSocket              = mustIdx("unixsocket")
	ixUnixSocketPerm          = mustIdx("unixsocketperm")
	ixZsetMaxListpackEntries  = mustIdx("zset-max-listpack-entries")
	ixZsetMaxListpackValue    = mustIdx("zset-max-listpack-value")
	ixClusterNodeTimeout      = mustIdx("cluster-node-timeout")
	ixClusterConfigFile       = mustIdx("cluster-config-file")
	ixClusterPort             = mustIdx("cluster-port")
	ixClusterAnnounceIP       = mustIdx("cluster-announce-ip")
	ixClusterAnnounceHostname = mustIdx("cluster-announce-hostname")
	ixClusterAnnouncePort     = mustIdx("cluster-announce-port")
	ixClusterAnnounceBusPort  = mustIdx("cluster-announce-bus-port")
	ixClusterFullCoverage     = mustIdx("cluster-require-full-coverage")
	ixClusterNoFailover       = mustIdx("cluster-replica-no-failover")
	ixClusterValidity         = mustIdx("cluster-replica-validity-factor")
	ixClusterReadsWhenDown    = mustIdx("cluster-allow-reads-when-down")
	ixClusterPubsubWhenDown   = mustIdx("cluster-allow-pubsubshard-when-down")
	ixClusterSlotStats        = mustIdx("cluster-slot-stats-enabled")
	ixClusterCompatSample     = mustIdx("cluster-compatibility-sample-ratio")
	ixReplBacklogSize         = mustIdx("repl-backlog-size")
	ixReplBacklogTTL          = mustIdx("repl-backlog-ttl")
	ixReplDisklessSync        = mustIdx("repl-diskless-sync")
	ixReplDisklessSyncDelay   = mustIdx("repl-diskless-sync-delay")
	ixReplDisklessMaxReplicas = mustIdx("repl-diskless-sync-max-replicas")
	ixReplPingReplicaPeriod   = mustIdx("repl-ping-replica-period")
	ixReplTimeout             = mustIdx("repl-timeout")
	ixMinReplicasToWrite      = mustIdx("min-replicas-to-write")
	ixMinReplicasToAck        = mustIdx("min-replicas-to-ack")
	ixMinReplicasAckTimeout   = mustIdx("min-replicas-ack-timeout")
	ixMinReplicasMaxLag       = mustIdx("min-replicas-max-lag")
	ixReplicaPriority         = mustIdx("replica-priority")
	ixReplicaAnnounceIP       = mustIdx("replica-announce-ip")
	ixReplicaAnnouncePort     = mustIdx("replica-announce-port")
	ixReplicaAnnounced        = mustIdx("replica-announced")
)

func (c *Config) i64(i int) int64    { return c.vals[i].Load().(int64) }
func (c *Config) boolean(i int) bool { return c.vals[i].Load().(bool) }
func (c *Config) str(i int) string   { return c.vals[i].Load().(string) }
func (c *Config) enum(i int) string  { return specs[i].enumName(c.i64(i)) }

// Int returns an integer-valued directive by name or alias: numbers, byte
// counts (maxmemory is capped at MaxInt64), enum and flag values. It panics
// on an unknown or non-integer directive, which is a programming error.
func (c *Config) Int(name string) int64 {
	s := lookup(name)
	if s == nil {
		panic("config: unknown directive " + name)
	}
	switch v := c.vals[s.idx].Load().(type) {
	case int64:
		return v
	case uint64:
		return capInt64(v)
	}
	panic("config: directive " + name + " is not an integer")
}

// Bool returns a yes/no directive by name or alias; it panics on an unknown
// or non-boolean directive.
func (c *Config) Bool(name string) bool {
	s := lookup(name)
	if s == nil || s.kind != kBool {
		panic("config: not a boolean directive: " + name)
	}
	return c.boolean(s.idx)
}

func capInt64(v uint64) int64 {
	if v > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(v)
}

// Network.

func (c *Config) Port() int { return int(c.i64(ixPort)) }

// Discovery reports whether the discovered prefixes are kept, split at
// DiscoveryDelimiter to DiscoveryDepth, with DiscoveryCapacity buckets per
// sketch row.
func (c *Config) Discovery() bool          { return c.boolean(ixDiscovery) }
func (c *Config) DiscoveryCapacity() int   { return int(c.i64(ixDiscoveryCapacity)) }
func (c *Config) DiscoveryDelimiter() byte { return c.str(ixDiscoveryDelimiter)[0] }
func (c *Config) DiscoveryDepth() int      { return int(c.i64(ixDiscoveryDepth)) }

// MetricsPort is the Prometheus endpoint's port, 0 when it is off;
// MetricsBind its addresses, as Bind's (shared: do not modify).
func (c *Config) MetricsPort() int      { return int(c.i64(ixMetricsPort)) }
func (c *Config) MetricsBind() []string { return c.vals[ixMetricsBind].Load().([]string) }
func (c *Config) ConsolePort() int      { return int(c.i64(ixConsolePort)) }
func (c *Config) ConsoleBind() []string { return c.vals[ixConsoleBind].Load().([]string) }

// Bind returns the bind addresses (a "-" prefix marks an optional one). The
// slice is shared: do not modify it.
func (c *Config) Bind() []string        { return c.vals[ixBind].Load().([]string) }
func (c *Config) UnixSocket() string    { return c.str(ixUnixSocket) }
func (c *Config) UnixSocketPerm() int   { return int(c.i64(ixUnixSocketPerm)) }
func (c *Config) TCPBacklog() int       { return int(c.i64(ixTCPBacklog)) }
func (c *Config) TCPKeepAlive() int     { return int(c.i64(ixTCPKeepAlive)) }
func (c *Config) Timeout() int          { return int(c.i64(ixTimeout)) }
func (c *Config) ProtectedMode() bool   { return c.boolean(ixProtectedMode) }
func (c *Config) AlwaysShowLogo() bool  { return c.boolean(ixAlwaysShowLogo) }
func (c *Config) MaxClients() int       { return int(c.i64(ixMaxClients)) }
func (c *Config) TLSPort() int          { return int(c.i64(ixTLSPort)) }
func (c *Config) TLSCertFile() string   { return c.str(ixTLSCertFile) }
func (c *Config) TLSKeyFile() string    { return c.str(ixTLSKeyFile) }
func (c *Config) TLSCACertFile() string { return c.str(ixTLSCACertFile) }
func (c *Config) TLSCACertDir() string  { return c.str(ixTLSCACertDir) }
func (c *Config) TLSCiphers() string    { return c.str(ixTLSCiphers) }
func (c *Config) TLSSessionCaching() bool {
	return c.boolean(ixTLSSessionCaching)
}

// TLSAuthClients is "no", "yes" or "optional".
func (c *Config) TLSAuthClients() string  { return c.enum(ixTLSAuthClients) }
func (c *Config) TLSProtocols() string    { return c.str(ixTLSProtocols) }
func (c *Config) TLSCiphersuites() string { return c.str(ixTLSCiphersuites) }

// Protocol and clients.

func (c *Config) Databases() int                { return int(c.i64(ixDatabases)) }
func (c *Config) ProtoMaxBulkLen() int64        { return c.i64(ixProtoMaxBulkLen) }
func (c *Config) ClientQueryBufferLimit() int64 { return c.i64(ixClientQueryBufferLimit) }

// ClientOutputBufferLimit returns the limits of one client class.
func (c *Config) ClientOutputBufferLimit(class ClientClass) OutputBufferLimit {
	return c.vals[ixClientOutputBufferLimit].Load().(obufLimits)[class]
}

// Server.

func (c *Config) Hz() int { return int(c.i64(ixHz)) }

func (c *Config) DynamicHz() bool           { return c.boolean(ixDynamicHz) }
func (c *Config) Daemonize() bool           { return c.boolean(ixDaemonize) }
func (c *Config) PidFile() string           { return c.str(ixPidFile) }
func (c *Config) LogFile() string           { return c.str(ixLogFile) }
func (c *Config) IOThreads() int            { return int(c.i64(ixIOThreads)) }
func (c *Config) ClusterEnabled() bool      { return c.boolean(ixClusterEnabled) }
func (c *Config) ClusterNodeTimeout() int64 { return c.i64(ixClusterNodeTimeout) }

// ClusterConfigFile is the node's nodes.conf, relative to dir.
func (c *Config) ClusterConfigFile() string       { return c.str(ixClusterConfigFile) }
func (c *Config) ClusterPort() int                { return int(c.i64(ixClusterPort)) }
func (c *Config) ClusterAnnounceIP() string       { return c.str(ixClusterAnnounceIP) }
func (c *Config) ClusterAnnounceHostname() string { return c.str(ixClusterAnnounceHostname) }
func (c *Config) ClusterAnnouncePort() int        { return int(c.i64(ixClusterAnnouncePort)) }
func (c *Config) ClusterAnnounceBusPort() int     { return int(c.i64(ixClusterAnnounceBusPort)) }
func (c *Config) ClusterRequireFullCoverage() bool {
	return c.boolean(ixClusterFullCoverage)
}
func (c *Config) ClusterAllowReadsWhenDown() bool { return c.boolean(ixClusterReadsWhenDown) }
func (c *Config) ClusterReplicaNoFailover() bool  { return c.boolean(ixClusterNoFailover) }
func (c *Config) ClusterReplicaValidityFactor() int {
	return int(c.i64(ixClusterValidity))
}
func (c *Config) ClusterAllowPubsubshardWhenDown() bool {
	return c.boolean(ixClusterPubsubWhenDown)
}

// ClusterSlotStatsEnabled turns on the per-slot counters of CLUSTER
// SLOT-STATS beyond KEY-COUNT (Redis 8.2).
func (c *Config) ClusterSlotStatsEnabled() bool { return c.boolean(ixClusterSlotStats) }

// ClusterCompatibilitySampleRatio is the percentage of commands checked for
// cluster compatibility outside cluster mode (Redis 8.0); 0 is off.
func (c *Config) ClusterCompatibilitySampleRatio() int { return int(c.i64(ixClusterCompatSample)) }

// RDBKeySaveDelay is the pause per key a save or rewrite makes, in
// microseconds: tests slow a save down with it, as Redis's do.
func (c *Config) RDBKeySaveDelay() int64 { return c.i64(ixRDBKeySaveDelay) }

// LogLevel is "debug", "verbose", "notice", "warning" or "nothing".
func (c *Config) LogLevel() string { return c.enum(ixLogLevel) }

// EnableDebugCommand is "no", "yes" or "local".
func (c *Config) EnableDebugCommand() string { return c.enum(ixEnableDebugCommand) }

// EnableModuleCommand is "no", "yes" or "local".
func (c *Config) EnableModuleCommand() string { return c.enum(ixEnableModuleCommand) }

// EnableProtectedConfigs is "no", "yes" or "local".
func (c *Config) EnableProtectedConfigs() string { return c.enum(ixEnableProtectedConfigs) }

// ShutdownFlags is shutdown-on-sigint/sigterm as bits.
type ShutdownFlags int64

const (
	ShutdownSave   ShutdownFlags = 1
	ShutdownNoSave ShutdownFlags = 2
	ShutdownNow    ShutdownFlags = 4
	ShutdownForce  ShutdownFlags = 8
)

func (c *Config) ShutdownOnSigint() ShutdownFlags  { return ShutdownFlags(c.i64(ixShutdownOnSigint)) }
func (c *Config) ShutdownOnSigterm() ShutdownFlags { return ShutdownFlags(c.i64(ixShutdownOnSigterm)) }
func (c *Config) ShutdownTimeout() int             { return int(c.i64(ixShutdownTimeout)) }

// Security.

func (c *Config) RequirePass() string { return c.str(ixRequirePass) }
func (c *Config) ACLFile() string     { return c.str(ixACLFile) }
func (c *Config) ACLLogMaxLen() int64 { return c.i64(ixACLLogMaxLen) }

// ACLPubsubDefault is "allchannels" or "resetchannels".
func (c *Config) ACLPubsubDefault() string { return c.enum(ixACLPubsubDefault) }

// Memory and eviction.

// MaxMemory is in bytes, 0 for no limit (values above MaxInt64 are capped).
func (c *Config) MaxMemory() int64 { return capInt64(c.vals[ixMaxMemory].Load().(uint64)) }

// MaxMemoryClients returns the limit either in bytes or as a percentage of
// maxmemory (exactly one is non-zero, or both are zero for no limit).
func (c *Config) MaxMemoryClients() (bytes int64, percent int) {
	if v := c.i64(ixMaxMemoryClients); v < 0 {
		return 0, int(-v)
	} else {
		return v, 0
	}
}

// MaxMemoryPolicy is one of volatile-lru, volatile-lfu, volatile-random,
// volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction, Redis
// 8.6's volatile-lrm and allkeys-lrm, and Keyhive's volatile-lrfu and
// allkeys-lrfu.
func (c *Config) MaxMemoryPolicy() string        { return c.enum(ixMaxMemoryPolicy) }
func (c *Config) MaxMemorySamples() int          { return int(c.i64(ixMaxMemorySamples)) }
func (c *Config) MaxMemoryEvictionTenacity() int { return int(c.i64(ixMaxMemoryEvictionTenac)) }
func (c *Config) LFULogFactor() int              { return int(c.i64(ixLFULogFactor)) }
func (c *Config) LFUDecayTime() int              { return int(c.i64(ixLFUDecayTime)) }
func (c *Config) LazyFreeLazyEviction() bool     { return c.boolean(ixLazyFreeLazyEviction) }
func (c *Config) LazyFreeLazyExpire() bool       { return c.boolean(ixLazyFreeLazyExpire) }
func (c *Config) LazyFreeLazyServerDel() bool    { return c.boolean(ixLazyFreeLazyServerDel) }
func (c *Config) LazyFreeLazyUserDel() bool      { return c.boolean(ixLazyFreeLazyUserDel) }
func (c *Config) LazyFreeLazyUserFlush() bool    { return c.boolean(ixLazyFreeLazyUserFlush) }
func (c *Config) ActiveExpireEffort() int        { return int(c.i64(ixActiveExpireEffort)) }
func (c *Config) ActiveRehashing() bool          { return c.boolean(ixActiveRehashing) }

// Persistence.

// Dir is the absolute working directory for RDB/AOF files. Unlike Redis,
// the package never calls chdir; relative paths are resolved instead.
func (c *Config) Dir() string        { return c.str(ixDir) }
func (c *Config) DBFilename() string { return c.str(ixDBFilename) }

// Save returns the save points as (seconds, changes) pairs; empty disables
// snapshotting. The slice is shared: do not modify it.
func (c *Config) Save() [][2]int64              { return c.vals[ixSave].Load().([][2]int64) }
func (c *Config) RDBCompression() bool          { return c.boolean(ixRDBCompression) }
func (c *Config) RDBChecksum() bool             { return c.boolean(ixRDBChecksum) }
func (c *Config) StopWritesOnBgsaveError() bool { return c.boolean(ixStopWritesOnBgsaveError) }
func (c *Config) AppendOnly() bool              { return c.boolean(ixAppendOnly) }
func (c *Config) AppendFilename() string        { return c.str(ixAppendFilename) }
func (c *Config) AppendDirname() string         { return c.str(ixAppendDirname) }

// AppendFsync is "always", "everysec" or "no".
func (c *Config) AppendFsync() string     { return c.enum(ixAppendFsync) }
func (c *Config) AOFUseRDBPreamble() bool { return c.boolean(ixAOFUseRDBPreamble) }
func (c *Config) AOFLoadTruncated() bool  { return c.boolean(ixAOFLoadTruncated) }

// AutoAOFRewritePercentage and AutoAOFRewriteMinSize start a rewrite when
// the AOF grew by that percentage of its base and is at least that large.
func (c *Config) AutoAOFRewritePercentage() int { return int(c.i64(ixAutoAOFRewritePct)) }
func (c *Config) AutoAOFRewriteMinSize() int64  { return c.i64(ixAutoAOFRewriteMinSize) }

// Replication.

// ReplicaOf returns the configured master, ok=false when there is none.
func (c *Config) ReplicaOf() (host string, port int, ok bool) {
	hp := c.vals[ixReplicaOf].Load().(hostPort)
	return hp.host, int(hp.port), hp.host != ""
}

// SetReplicaOf records the master REPLICAOF chose (host "": none), so that
// CONFIG GET and CONFIG REWRITE show the current one, as Redis's do; the
// directive itself cannot be set at run time.
func (c *Config) SetReplicaOf(host string, port int) {
	c.vals[ixReplicaOf].Store(hostPort{host, int64(port)})
}

func (c *Config) MasterAuth() string          { return c.str(ixMasterAuth) }
func (c *Config) MasterUser() string          { return c.str(ixMasterUser) }
func (c *Config) ReplicaReadOnly() bool       { return c.boolean(ixReplicaReadOnly) }
func (c *Config) ReplicaServeStaleData() bool { return c.boolean(ixReplicaServeStaleData) }

// ReplicaIgnoreMaxMemory reports whether a replica leaves maxmemory to its
// master, evicting nothing itself.
func (c *Config) ReplicaIgnoreMaxMemory() bool { return c.boolean(ixReplicaIgnoreMaxMemory) }
func (c *Config) ReplBacklogSize() int64       { return c.i64(ixReplBacklogSize) }

// ReplBacklogTTL is how long, in seconds, a master without replicas keeps
// its backlog (0: for ever).
func (c *Config) ReplBacklogTTL() int64      { return c.i64(ixReplBacklogTTL) }
func (c *Config) ReplDisklessSync() bool     { return c.boolean(ixReplDisklessSync) }
func (c *Config) ReplDisklessSyncDelay() int { return int(c.i64(ixReplDisklessSyncDelay)) }

// ReplDisklessSyncMaxReplicas is how many waiting replicas start a diskless
// sync before its delay ends (0: the delay always runs out).
func (c *Config) ReplDisklessSyncMaxReplicas() int { return int(c.i64(ixReplDisklessMaxReplicas)) }

// ReplPingReplicaPeriod and ReplTimeout are in seconds.
func (c *Config) ReplPingReplicaPeriod() int { return int(c.i64(ixReplPingReplicaPeriod)) }
func (c *Config) ReplTimeout() int           { return int(c.i64(ixReplTimeout)) }

// MinReplicasToAck replicas must acknowledge a write before its reply
// leaves (0: none), within MinReplicasAckTimeout milliseconds.
func (c *Config) MinReplicasToAck() int      { return int(c.i64(ixMinReplicasToAck)) }
func (c *Config) MinReplicasAckTimeout() int { return int(c.i64(ixMinReplicasAckTimeout)) }

// MinReplicasToWrite replicas with a lag of at most MinReplicasMaxLag
// seconds are needed for writes (0: none).
func (c *Config) MinReplicasToWrite() int   { return int(c.i64(ixMinReplicasToWrite)) }
func (c *Config) MinReplicasMaxLag() int    { return int(c.i64(ixMinReplicasMaxLag)) }
func (c *Config) ReplicaPriority() int      { return int(c.i64(ixReplicaPriority)) }
func (c *Config) ReplicaAnnounceIP() string { return c.str(ixReplicaAnnounceIP) }
func (c *Config) ReplicaAnnouncePort() int  { return int(c.i64(ixReplicaAnnouncePort)) }
func (c *Config) ReplicaAnnounced() bool    { return c.boolean(ixReplicaAnnounced) }

// Encodings.

func (c *Config) HashMaxListpackEntries() int64 { return c.i64(ixHashMaxListpackEntries) }
func (c *Config) HashMaxListpackValue() int64   { return c.i64(ixHashMaxListpackValue) }
func (c *Config) ListMaxListpackSize() int      { return int(c.i64(ixListMaxListpackSize)) }
func (c *Config) ListCompressDepth() int        { return int(c.i64(ixListCompressDepth)) }
func (c *Config) SetMaxIntsetEntries() int64    { return c.i64(ixSetMaxIntsetEntries) }
func (c *Config) SetMaxListpackEntries() int64  { return c.i64(ixSetMaxListpackEntries) }
func (c *Config) SetMaxListpackValue() int64    { return c.i64(ixSetMaxListpackValue) }
func (c *Config) ZsetMaxListpackEntries() int64 { return c.i64(ixZsetMaxListpackEntries) }
func (c *Config) ZsetMaxListpackValue() int64   { return c.i64(ixZsetMaxListpackValue) }
func (c *Config) StreamNodeMaxBytes() int64     { return c.i64(ixStreamNodeMaxBytes) }
func (c *Config) StreamNodeMaxEntries() int64   { return c.i64(ixStreamNodeMaxEntries) }
func (c *Config) HLLSparseMaxBytes() int64      { return c.i64(ixHLLSparseMaxBytes) }

// Events, monitoring and scripting.

func (c *Config) NotifyKeyspaceEvents() KeyspaceEvents {
	return c.vals[ixNotifyKeyspaceEvents].Load().(KeyspaceEvents)
}

// BusyReplyThreshold (alias lua-time-limit) is in milliseconds.
func (c *Config) BusyReplyThreshold() int64      { return c.i64(ixBusyReplyThreshold) }
func (c *Config) SlowlogLogSlowerThan() int64    { return c.i64(ixSlowlogLogSlowerThan) }
func (c *Config) SlowlogMaxLen() int64           { return c.i64(ixSlowlogMaxLen) }
func (c *Config) SlowlogMaxArgc() int            { return int(c.i64(ixSlowlogMaxArgc)) }
func (c *Config) LatencyMonitorThreshold() int64 { return c.i64(ixLatencyMonitorThreshold) }
func (c *Config) LatencyTracking() bool          { return c.boolean(ixLatencyTracking) }

// LatencyTrackingInfoPercentiles is shared: do not modify it.
func (c *Config) LatencyTrackingInfoPercentiles() []float64 {
	return c.vals[ixLatencyPercentiles].Load().([]float64)
}
func (c *Config) TrackingTableMaxKeys() int64 { return c.i64(ixTrackingTableMaxKeys) }

// Process management (package internal/daemon).

var (
	ixSupervised     = mustIdx("supervised")
	ixSyslogEnabled  = mustIdx("syslog-enabled")
	ixSyslogIdent    = mustIdx("syslog-ident")
	ixSyslogFacility = mustIdx("syslog-facility")
)

// Supervised is "no", "upstart", "systemd" or "auto".
func (c *Config) Supervised() string { return c.enum(ixSupervised) }

func (c *Config) SyslogEnabled() bool { return c.boolean(ixSyslogEnabled) }
func (c *Config) SyslogIdent() string { return c.str(ixSyslogIdent) }

// SyslogFacility is "user" or "local0" ... "local7".
func (c *Config) SyslogFacility() string { return c.enum(ixSyslogFacility) }
