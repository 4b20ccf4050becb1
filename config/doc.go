// Package config implements the Redis 7.0 configuration: redis.conf and
// command-line parsing, CONFIG GET / SET / REWRITE, and typed getters.
//
// Every directive is described once, in the specs table (registry.go): name,
// alias, type, default, bounds and flags. The file parser, CONFIG
// GET/SET/REWRITE, the defaults and the typed getters are all driven by it.
// Defaults, value formats, bounds and error texts were checked against
// redis-server 7.0.15, and the tests compare with a live redis-server.
//
// Concurrency: each value lives in an atomic.Value, so getters never lock
// and never allocate; Set, Rewrite and hook registration serialise on a
// mutex. A multi-directive Set is all or nothing, but a concurrent reader
// may see its directives change one after the other.
//
// Side effects are the server's business: register OnApply (may refuse a
// change, e.g. a port that cannot be bound) or OnChange (after success).
//
// Deliberate differences from redis-server 7.0:
//
//   - dir: the process never chdirs. Dir() is an absolute path (symlinks
//     resolved, like getcwd); a relative dir, and a relative include, are
//     resolved against the current dir, which is what Redis's chdir gives.
//   - include: a file that includes itself (directly or not) is an error
//     instead of unbounded recursion, and only regular files are read (an
//     include of /dev/zero or a FIFO would hang).
//   - loadmodule is refused (no module support); sentinel lines are refused
//     as by a non-sentinel redis-server.
//   - rename-command and user lines are recorded (RenamedCommands, Users)
//     but not validated; the server applies them. CONFIG REWRITE keeps user
//     lines as they are instead of regenerating them from the ACL state.
//   - namespace lines (Keyhive's key schema, NAMESPACE DEFINE's arguments)
//     are recorded likewise (Namespaces); CONFIG REWRITE keeps them as they
//     are (declarations made at run time are kept with the data instead).
//   - metrics-port and metrics-bind are Keyhive's own: the Prometheus
//     endpoint (off while the port is 0; the bind list reads as bind's).
//     CONFIG SET refuses them; the endpoint starts and stops with the server.
//   - console-port and console-bind are Keyhive's own too: the read-only
//     web console (package console), off while the port is 0, refused by
//     CONFIG SET likewise.
//   - Of Redis's hidden debugging directives only rdb-key-save-delay and
//     key-load-delay exist.
//   - CONFIG GET lists directives in name order (Redis: hash order), and
//     CONFIG REWRITE appends new lines in name order. Redis 7.0 always
//     rewrites latency-tracking-info-percentiles (a bug); this package
//     writes it only when changed.
//   - enable-protected-configs "local": Set is for remote clients, SetLocal
//     for loopback/unix-socket ones.
//   - Nothing is applied when set: CONFIG SET bind/port succeed unless an
//     OnApply hook fails; TLS files are not loaded or checked here.
//   - ParseError's text is Redis's banner without the leading blank line;
//     its File field names the file, which Redis's message does not.
//   - MaxMemory() caps values above MaxInt64 (CONFIG GET shows them as set).
package config
