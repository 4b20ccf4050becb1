// Package server is Keyhive's Redis-compatible server as a library: create it
// from a config, Start it, and Close it. Several servers may run in one
// process.
//
// The package ties the layers below it together (docs/architecture.md has
// the map); its files, by concern:
//
// Connections
//   - server.go: the Server, New/Start/Close, the cron.
//   - eventloop_linux.go: the event loops that serve plain TCP and
//     unix-socket clients in arrival order (epoll), and the goroutines that
//     hold a client while it waits for what a loop must not; elsewhere, or
//     with KEYHIVE_PORTABLE_IO=yes, each client has a goroutine
//     (eventloop_other.go).
//   - network.go: listeners' policy (protected mode, idle timeouts, TLS
//     settings).
//   - client.go: a client's state and its commands' path: read buffer,
//     parse, execute each command, write the replies (a TLS client's
//     goroutine).
//   - pubsub_output.go: the output queue of a client that receives messages
//     from other goroutines (subscribers, MONITOR, tracking).
//
// The command core
//   - command.go: the command table, built from package cmdspec's entries,
//     the data commands package family binds and the handlers the server's
//     own files bind; flags; Ctx, the server's side of a handler's
//     command.Ctx (its client, its command, how commands nest).
//   - host.go: the server as its handlers' command.Host and a client as
//     their command.Conn: what package family's handlers may reach.
//   - dispatch.go: the one dispatch path every command takes (clients, EXEC,
//     scripts, the AOF loader): resolve, checks, MULTI queueing, and call,
//     with the nesting of EXEC's and scripts' commands: locks, the
//     handler, propagation, statistics, the slow log, MONITOR.
//   - propagate.go: how what a handler left (package command's verbs)
//     reaches the change stream (package changes); loading.go: the AOF
//     loader's client.
//
// The data commands (strings, hashes, lists, sets, sorted sets, streams,
// HyperLogLog, geo, SORT, LCS, the generic keyspace commands) are package
// family's, written against package command's toolkit. The server's own
// command families, one file each: cmd_transactions.go, cmd_scripting.go,
// cmd_pubsub.go, cmd_connection.go, cmd_acl.go, cmd_server.go,
// cmd_debug.go, cmd_memory.go, cmd_persistence.go, cmd_cluster.go,
// cmd_namespace.go (Keyhive's own NAMESPACE). A family file binds its
// handlers to the names cmdspec declares, and holds them.
//
// What the families share
//   - acl.go: which user a client acts as and admit's permission check;
//     the users, rules and ACL LOG are package acl's.
//   - blocking.go: blocked clients (a handler's block request) and serving
//     them after a write.
//   - pause.go: CLIENT PAUSE, the clients it postpones (admit's gate) and
//     their release in order; wait.go: WAIT and WAITAOF.
//   - tracking.go: client-side caching; notify.go: keyspace notifications;
//     field_expiry.go: the active expiry of hash fields.
//   - pubsub.go: the Pub/Sub registry and delivery; monitor.go: MONITOR.
//   - slowlog.go, stats.go, rusage.go: the slow log, INFO's counters;
//     info.go: INFO's sections; latency.go: the latency monitor and the
//     per-command latency histograms (LATENCY, INFO latencystats).
//   - metrics.go: the Prometheus endpoint (metrics-port), redis_exporter's
//     metric names over INFO's counters, and keyhive_ series.
//   - console.go: the web console's listener (console-port) and its Host
//     (package console): ACL users as viewers, snapshots of the counters.
//   - hotkeys.go: HOTKEYS, a tracking session charging each command's CPU
//     time and bytes to its keys, kept in top-K sketches.
//   - evict.go, memrelease.go: maxmemory and eviction, the access clocks'
//     policy; giving memory back.
//   - cluster.go: a cluster node (package cluster) in the server, and the
//     server as its host (a cluster replica replicates, and a failover
//     winner is promoted, through replication's paths); cluster_redirect.go: the dispatch path's slot
//     check (MOVED, ASK, TRYAGAIN, CROSSSLOT, CLUSTERDOWN), also for
//     scripts' calls; cluster_migrate.go: MIGRATE and RESTORE-ASKING.
//   - replication.go: the server as replication's host (package
//     replication runs both sides), its commands' bindings and a
//     replica's connection; replication_replica.go: the client a replica
//     runs its master's stream as, through dispatch; wait.go: WAIT and
//     WAITAOF's blocking (replication counts the acknowledgements).
//   - namespace.go: the key schema's policies in the dispatch path (checks
//     before a write, TTL rules after it, quota evictions after its
//     unlock); the counters are package namespace's.
package server
