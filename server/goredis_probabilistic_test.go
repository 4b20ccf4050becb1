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
	runGoRedisSpecs(t, "probabilistic_test.go")
}

// runGoRedisSpecs runs one of go-redis's Ginkgo spec files (package
// redis_test) against a Keyhive started here. go-redis's module is copied
// from the module cache (a spec may use its internal packages) with its
// test files left out but specFile, unchanged, beside the helpers the
// go-redis suite would give it: its connection options point at Keyhive,
// its subject is the plain client (redisOptions' speaks the protocol env
// names in KEYHIVE_PROTOCOL, go-redis's default without), and the server
// counts as Redis 8.4 for the specs that check the version.
func runGoRedisSpecs(t *testing.T, specFile string) {
	runGoRedisSpecsAs(t, goRedisRun{file: specFile, version: "8.4"})
}

// goRedisRun is one run of go-redis's specs.
type goRedisRun struct {
	file    string
	version string // the Redis version (major.minor) the specs' checks see
	// focus, when set, runs only the specs whose text it matches
	// (-ginkgo.focus); commandsSuite gives the specs of commands_test.go
	// the rest of the helpers of go-redis's main_test.go they call, and
	// keeps export_test.go (the package's own test exports).
	focus         string
	commandsSuite bool
	env           []string // more of the suite's environment
}

// runGoRedisSpecsAs is runGoRedisSpecs with the version, focus and helpers
// of r.
func runGoRedisSpecsAs(t *testing.T, r goRedisRun) {
	if testing.Short() {
		t.Skip("builds and runs go-redis's suite")
	}
	specFile := r.file
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
		if base := filepath.Base(f); base != specFile && !(r.commandsSuite && base == "export_test.go") {
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
	major, minor, _ := strings.Cut(r.version, ".")
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

// The version the specs see: Redis `+r.version+`, whose commands Keyhive has.
func redisVersionAtLeast(version string) bool {
	var major, minor int
	fmt.Sscanf(version, "%d.%d", &major, &minor)
	return major < `+major+` || major == `+major+` && minor <= `+minor+`
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
	if r.commandsSuite {
		write("harness_commands_test.go", `package redis_test

import (
	"context"
	"fmt"
	"os"

	. "github.com/bsm/ginkgo/v2"

	"github.com/redis/go-redis/v9"
)

const redisSecondaryPort = "6381"

func reNewClient(protocol int, unstableResp3 bool) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: os.Getenv("KEYHIVE_ADDR"), Protocol: protocol, UnstableResp3: unstableResp3})
}

func SkipAfterRedisVersion(version string, msg string) {
	var major, minor int
	fmt.Sscanf(version, "%d.%d", &major, &minor)
	if `+major+` > major || `+major+` == major && `+minor+` > minor {
		Skip(msg)
	}
}

func skipIfClientTrackingUnavailable(ctx context.Context, client *redis.Client) {}
`)
	}
	args := []string{"test", "-v", "-count=1", "-run", "TestSpecs", ".", "-args", "-ginkgo.v", "-ginkgo.no-color"}
	if r.focus != "" {
		args = append(args, "-ginkgo.focus", r.focus)
	}
	// The modules come from the cache only; their sums are the cache's.
	run := exec.Command("go", args...)
	run.Dir = dir
	run.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOPROXY=off", "GOSUMDB=off", "KEYHIVE_ADDR="+srv.Addr())
	run.Env = append(run.Env, r.env...)
	out, err := run.CombinedOutput()
	if strings.Contains(string(out), "module lookup disabled") {
		t.Skipf("go-redis's test dependencies are not in the module cache (go mod download github.com/bsm/ginkgo/v2@v2.12.0 github.com/bsm/gomega@v1.27.10):\n%s", out)
	}
	if err != nil {
		t.Fatalf("go-redis's %s failed: %v\n%s", specFile, err, out)
	}
	if !strings.Contains(string(out), "Passed") || strings.Contains(string(out), "Ran 0 of") {
		t.Fatalf("no specs ran:\n%s", out)
	}
	t.Logf("%s", out[max(0, len(out)-400):])
}
