package server_test

import "testing"

// TestGoRedisJSONSpecs runs go-redis v9.22.0's own JSON specs (the specs
// of its json_test.go labelled json, RESP2 and RESP3) against Keyhive, its
// fixed address pointed at Keyhive. Left out: the specs that need
// RediSearch (label search), and, by the suite's version check (8.4),
// JSON.SET's FPHA (Redis 8.8).
func TestGoRedisJSONSpecs(t *testing.T) {
	runGoRedisSpecsAs(t, goRedisRun{file: "json_test.go", version: "8.4", labels: "json && !search"})
}
