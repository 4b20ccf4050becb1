package workloads_test

import (
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/workloads"
)

// The helpers that more than one test file of package workloads_test
// uses; those of package workloads are in helpers_internal_test.go.

// startCluster starts three master processes of bin (a built keyhive, or ""
// for redis-server) as one cluster; it returns their addresses.
func startCluster(t *testing.T, bin string) []string {
	t.Helper()
	addrs, stop, err := difftest.StartCluster(bin, 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addrs
}

// run is one server's side of a correctness run.
type run struct {
	env  *workloads.Env
	err  error
	dump []string
}
