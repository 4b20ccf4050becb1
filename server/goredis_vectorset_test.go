package server_test

import "testing"

// TestGoRedisVectorSetSpecs runs go-redis's own vector set specs
// (vectorset_commands_integration_test.go: VADD to VRANGE, FILTER, REDUCE,
// in RESP2 and RESP3) against Keyhive, issue 39's acceptance.
func TestGoRedisVectorSetSpecs(t *testing.T) {
	runGoRedisSpecs(t, "vectorset_commands_integration_test.go", "8.4")
}
