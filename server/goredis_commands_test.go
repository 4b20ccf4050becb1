package server_test

import "testing"

// TestGoRedisRedis8CommandSpecs runs go-redis v9.22.0's specs in
// commands_test.go of the Redis 8.x commands Keyhive has and the suite
// gates on the server version (Redis 8.8 here): AGGREGATE COUNT of
// ZUNION, ZINTER and their STORE forms, and XNACK.
func TestGoRedisRedis8CommandSpecs(t *testing.T) {
	runGoRedisSpecsAs(t, goRedisRun{file: "commands_test.go", version: "8.8", commandsSuite: true,
		focus: "COUNT aggregate|XNack"})
}
