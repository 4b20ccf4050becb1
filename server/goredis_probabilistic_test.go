package server_test

import "testing"

// TestGoRedisProbabilisticSpecs runs go-redis's own probabilistic specs
// (probabilistic_test.go: Bloom, Cuckoo, Count-Min, Top-K, t-digest, in
// RESP2 and RESP3) against Keyhive, issue 39's acceptance.
func TestGoRedisProbabilisticSpecs(t *testing.T) {
	runGoRedisSpecs(t, "probabilistic_test.go")
}
