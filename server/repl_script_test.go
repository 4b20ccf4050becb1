package server_test

import (
	"fmt"
	"testing"
)

// TestReplScriptSetRepl: redis.set_repl sends a script's next writes to
// the AOF and replicas (REPL_ALL), to replicas only, to the AOF only, or
// nowhere, as in redis-server: the replica holds the keys written under
// REPL_ALL and REPL_REPLICA, and the master reloaded from its AOF (DEBUG
// LOADAOF) those written under REPL_ALL and REPL_AOF.
func TestReplScriptSetRepl(t *testing.T) {
	const script = `
redis.set_repl(redis.REPL_NONE)
redis.call('SET', 'none', '1')
redis.set_repl(redis.REPL_REPLICA)
redis.call('SET', 'replica', '1')
redis.call('SET', 'replica2', '1')
redis.set_repl(redis.REPL_AOF)
redis.call('SET', 'aof', '1')
redis.set_repl(redis.REPL_ALL)
redis.call('SET', 'all', '1')
return redis.pcall('SET', 'x', 1) and redis.set_repl(7)`
	var got [2][]string
	for i, redis := range []bool{true, false} {
		master := startReplNode(t, redis, "--appendonly", "yes", "--repl-diskless-sync-delay", "0")
		replica := startReplNode(t, redis)
		replicate(t, master, replica)
		steps := &got[i]
		step := func(what string, v any) { *steps = append(*steps, fmt.Sprintf("%s: %v", what, v)) }
		step("EVAL", master.do(t, "EVAL", script, 0).Str)
		step("EVAL after", master.do(t, "EVAL", "redis.call('SET', 'later', '1') return 1", 0).Int)
		off := master.infoInt(t, "replication", "master_repl_offset")
		waitUntil(t, "the replica at the master's offset", func() bool {
			return replica.infoInt(t, "replication", "master_repl_offset") >= off
		})
		for _, key := range []string{"none", "replica", "replica2", "aof", "all", "x", "later"} {
			step("replica EXISTS "+key, replica.ok(t, "EXISTS", key).Int)
		}
		master.ok(t, "DEBUG", "LOADAOF")
		for _, key := range []string{"none", "replica", "replica2", "aof", "all", "x", "later"} {
			step("reloaded master EXISTS "+key, master.ok(t, "EXISTS", key).Int)
		}
	}
	sameSteps(t, got[0], got[1])
}
