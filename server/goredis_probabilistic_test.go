package server_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/keyhivetest"
)

// goRedisVersion is the go-redis whose specs run against Keyhive: the one
// go.mod requires.
const goRedisVersion = "v9.22.0"

// TestGoRedisProbabilisticSpecs runs go-redis's own probabilistic specs
// (probabilistic_test.go: Bloom, Cuckoo, Count-Min, Top-K, t-digest, in
// RESP2 and RESP3) against Keyhive, issue 39's acceptance. The spec file
// is taken unchanged from the module cache into a scratch module, beside
// the two helpers the go-redis suite would give it: its connection
// options point at Keyhive, and its subject is the plain client.
func TestGoRedisProbabilisticSpecs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs go-redis's suite")
	}
	modCache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(strings.TrimSpace(string(modCache)), "github.com/redis/go-redis/v9@"+goRedisVersion)
	spec, err := os.ReadFile(filepath.Join(src, "probabilistic_test.go"))
	if err != nil {
		t.Skipf("go-redis %s's sources are not in the module cache: %v", goRedisVersion, err)
	}
	srv := keyhivetest.Run(t)
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module specs\n\ngo 1.24\n\nrequire (\n\tgithub.com/redis/go-redis/v9 "+goRedisVersion+
		"\n\tgithub.com/bsm/ginkgo/v2 v2.12.0\n\tgithub.com/bsm/gomega v1.27.10\n)\n")
	write("probabilistic_test.go", string(spec))
	write("harness_test.go", `package redis_test

import (
	"os"
	"testing"

	. "github.com/bsm/ginkgo/v2"
	. "github.com/bsm/gomega"

	"github.com/redis/go-redis/v9"
)

func applyREConnection(opt *redis.Options) { opt.Addr = os.Getenv("KEYHIVE_ADDR") }

func newUniversalSubject(c *redis.Client) (redis.UniversalClient, func() error) { return c, c.Close }

func TestSpecs(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "go-redis probabilistic specs against Keyhive")
}
`)
	// The modules come from the cache only; their sums are the cache's.
	run := exec.Command("go", "test", "-v", "-count=1", "-run", "TestSpecs", ".", "-args", "-ginkgo.v", "-ginkgo.no-color")
	run.Dir = dir
	run.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off", "KEYHIVE_ADDR="+srv.Addr())
	out, err := run.CombinedOutput()
	if strings.Contains(string(out), "module lookup disabled") {
		t.Skipf("go-redis's test dependencies are not in the module cache (go mod download github.com/bsm/ginkgo/v2@v2.12.0 github.com/bsm/gomega@v1.27.10):\n%s", out)
	}
	if err != nil {
		t.Fatalf("go-redis's probabilistic specs failed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Passed") {
		t.Fatalf("no specs ran:\n%s", out)
	}
	t.Logf("%s", out[max(0, len(out)-400):])
}
