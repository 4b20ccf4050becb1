package server_test

import "testing"

// TestGoRedisArraySpecs runs go-redis's own array specs
// (array_commands_test.go: ARSET to ARINFO, rings, sparse pages, indexes
// past 2^63) against Keyhive as Redis 8.8, once per protocol, issue 40's
// acceptance.
func TestGoRedisArraySpecs(t *testing.T) {
	for _, proto := range []string{"2", "3"} {
		t.Run("RESP"+proto, func(t *testing.T) {
			runGoRedisSpecsAs(t, goRedisRun{file: "array_commands_test.go", version: "8.8", env: []string{"KEYHIVE_PROTOCOL=" + proto}})
		})
	}
}
