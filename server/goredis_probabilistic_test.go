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
// RESP2 and RESP3) against Keyhive, issue 39's acceptance.
func TestGoRedisProbabilisticSpecs(t *testing.T) {
	runGoRedisSpecs(t, "probabilistic_test.go", "8.4")
}

// runGoRedisSpecs runs one of go-redis's Ginkgo spec files (package
// redis_test) against a Keyhive started here. go-redis's module is copied
// from the module cache (a spec may use its internal packages) with its
// test files left out but specFile, unchanged, beside the helpers the
// go-redis suite would give it: its connection options point at Keyhive,
// its subject is the plain client (redisOptions' speaks the protocol env
// names in KEYHIVE_PROTOCOL, go-redis's default without), and the server
// counts as Redis version (8.4, or the version whose commands the specs
// test) for the specs that check the version.
func runGoRedisSpecs(t *testing.T, specFile, version string, env ...string) {
	if testing.Short() {
		t.Skip("builds and runs go-redis's suite")
	}
	modCache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(strings.TrimSpace(string(modCache)), "github.com/redis/go-redis/v9@"+goRedisVersion)
	if _, err := os.Stat(filepath.Join(src, specFile)); err != nil {
		t.Skipf("go-redis %s's sources are not in the module cache: %v", goRedisVersion, err)
	}
	srv := keyhivetest.Run(t)
	dir := t.TempDir()
	if err := copyTree(src, dir); err != nil {
		t.Fatal(err)
	}
	tests, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	for _, f := range tests {
		if filepath.Base(f) != specFile {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("harness_test.go", `package redis_test

import (
	"fmt"
	"os"
	"testing"

	. "github.com/bsm/ginkgo/v2"
	. "github.com/bsm/gomega"

	"github.com/redis/go-redis/v9"
)

func applyREConnection(opt *redis.Options) { opt.Addr = os.Getenv("KEYHIVE_ADDR") }

func redisOptions() *redis.Options {
	opt := &redis.Options{Addr: os.Getenv("KEYHIVE_ADDR")}
	fmt.Sscan(os.Getenv("KEYHIVE_PROTOCOL"), &opt.Protocol)
	return opt
}

func newUniversalSubject(c *redis.Client) (redis.UniversalClient, func() error) { return c, c.Close }

// The version the specs see.
func redisVersionAtLeast(version string) bool {
	var major, minor int
	fmt.Sscanf(version, "%d.%d", &major, &minor)
	return major < 8 || major == 8 && minor <= `+strings.TrimPrefix(version, "8.")+`
}

func SkipBeforeRedisVersion(version string, msg string) {
	if !redisVersionAtLeast(version) {
		Skip(msg)
	}
}

func TestSpecs(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "go-redis specs against Keyhive")
}
`)
	// The modules come from the cache only; their sums are the cache's.
	run := exec.Command("go", "test", "-v", "-count=1", "-run", "TestSpecs", ".", "-args", "-ginkgo.v", "-ginkgo.no-color")
	run.Dir = dir
	run.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOPROXY=off", "GOSUMDB=off", "KEYHIVE_ADDR="+srv.Addr())
	run.Env = append(run.Env, env...)
	out, err := run.CombinedOutput()
	if strings.Contains(string(out), "module lookup disabled") {
		t.Skipf("go-redis's test dependencies are not in the module cache (go mod download github.com/bsm/ginkgo/v2@v2.12.0 github.com/bsm/gomega@v1.27.10):\n%s", out)
	}
	if err != nil {
		t.Fatalf("go-redis's %s failed: %v\n%s", specFile, err, out)
	}
	if !strings.Contains(string(out), "Passed") {
		t.Fatalf("no specs ran:\n%s", out)
	}
	t.Logf("%s", out[max(0, len(out)-400):])
}
