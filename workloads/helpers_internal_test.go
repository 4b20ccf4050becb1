package workloads

import (
	"testing"
	"time"
)

// The helpers that more than one test file of package workloads uses;
// those of package workloads_test are in helpers_test.go.

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// waitUntil polls cond until it holds, and fails the test after 30 s,
// naming what it waited for (as server_test's waitUntil).
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
