// Package difftest is the differential test harness: tests send the same
// commands to a real redis-server and to Keyhive and compare the raw RESP
// reply bytes, so any difference in type, formatting or error text fails.
//
//	func TestAppend(t *testing.T) {
//		p := difftest.Start(t)               // shared servers, FLUSHALL, fresh connections
//		p.Do("APPEND", "k", "abc")           // replies must be byte-identical
//		p.DoUnordered("KEYS", "*")           // element order may differ
//		p.DoApprox(1, "TTL", "k")            // numbers may differ by 1
//	}
//
// Start runs redis-server (found on PATH) on a free port, once per test binary
// and set of directives, and Keyhive in-process via config.FromArgs and
// server.New. Setting KEYHIVE_DIFF_TARGET=redis replaces Keyhive with a second
// redis-server, which checks the harness and the tests themselves; building
// with -tags difftest_redisonly does the same without compiling Keyhive at all.
// KEYHIVE_DIFF_VERBOSE=1 logs every command with both replies. Start74 and
// StartIsolated74 use redis-server 7.4.1 (built by test.sh with
// build-oracle.sh, see Oracle74) as the oracle for Redis 7.2/7.4 behaviour,
// and skip the test, in one line, where it could not be had (Need74);
// KEYHIVE_DIFF_ORACLE=7.4 makes every Start use it (see OracleEnv).
//
// Intended differences are explicit and explained: DoDifferent requires a
// reason, and Redis/Keyhive give single-side access for setup. Raw, SendRaw
// and RawExpectClose drive the protocol byte by byte; Proto switches to RESP3;
// NewConn adds clients. The RESP layer (ReadReply, Parse, Reply, EncodeCommand,
// Conn) is usable on its own. StartRedis, StartProcess (any binary taking
// redis-server's command line, e.g. BuildKeyhive's) and StartKeyhive start
// single servers for tools that bring their own client (package workloads,
// cmd/keyhive-bench).
//
// What belongs here: harness code that the tests of more than one package
// use, or would use, to reach a real server: starting the oracles
// (redis-server, redis-sentinel, a cluster node) and Keyhive (in-process or
// built), raw RESP clients and reply parsing, and the comparisons of
// replies. What stays in a package's own helpers file (helpers_test.go or
// helpers_internal_test.go, one per test package): helpers that know that
// package's internals or only its tests' scenarios, such as a server set up
// with a package's unexported fields, fixtures, or one test family's
// assertions. A helper moves here when a second package needs it, not
// before.
package difftest
