package server_test

import "testing"

// TestGoRedisRedis8CommandSpecs runs go-redis v9.22.0's specs in
// commands_test.go of the Redis 8.x commands Keyhive has and the suite
// gates on the server version (Redis 8.8 here): AGGREGATE COUNT of
// ZUNION, ZINTER and their STORE forms, XNACK, and XADD IDMP/IDMPAUTO and
// XCFGSET. Not go-redis's "should XINFO STREAM" spec: at 8.6 it expects
// the idmp fields on every stream, where Keyhive gives them, as the XINFO
// STREAM page says, once a stream used IDMP (docs/differences.md).
func TestGoRedisRedis8CommandSpecs(t *testing.T) {
	runGoRedisSpecsAs(t, goRedisRun{file: "commands_test.go", version: "8.8",
		focus: "COUNT aggregate|XNack|XAdd with IDMP|XCfgSet"})
}

// TestGoRedisXReadCapSpecs runs go-redis v9.22.0's specs of XREAD and
// XREADGROUP MAXCOUNT and MAXSIZE (Redis 8.10) against Keyhive.
func TestGoRedisXReadCapSpecs(t *testing.T) {
	runGoRedisSpecsAs(t, goRedisRun{file: "commands_test.go", version: "8.10",
		focus: "XRead with MAXCOUNT|XRead with MAXSIZE|XReadGroup with MAXCOUNT"})
}
