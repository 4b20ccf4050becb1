package server_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// goRedisVersion is the go-redis whose specs run against Keyhive: the one
// go.mod requires.
const goRedisVersion = "v9.22.0"

// goRedisSpecFiles are the spec files of go-redis's suite that run
// against Keyhive, each selected by its run's file.
var goRedisSpecFiles = []string{
	"probabilistic_test.go",
	"vectorset_commands_integration_test.go",
	"array_commands_test.go",
	"commands_test.go",
	"json_test.go",
	"pubsub_test.go",
}

// goRedisRun is one run of go-redis's specs: the specs of one file.
type goRedisRun struct {
	file    string
	version string // the Redis version (major.minor) the specs' checks see
	focus   string // when set, only the specs whose text it matches (-ginkgo.focus)
	labels  string // when set, only the specs these labels select (-ginkgo.label-filter)
	env     []string
}

// runGoRedisSpecs runs specFile's specs as Redis 8.4.
func runGoRedisSpecs(t *testing.T, specFile string) {
	runGoRedisSpecsAs(t, goRedisRun{file: specFile, version: "8.4"})
}

// runGoRedisSpecsAs runs r's specs against a Keyhive started here, with the
// suite binary built once for every run (goRedisSuite).
func runGoRedisSpecsAs(t *testing.T, r goRedisRun) {
	if testing.Short() {
		t.Skip("builds and runs go-redis's suite")
	}
	bin := goRedisSuite.build(t)
	srv := startKeyhive(t) // on the real clock: specs wait for expiries
	args := []string{"-test.run", "^TestSpecs$", "-ginkgo.v", "-ginkgo.no-color",
		"-ginkgo.focus-file", "/" + regexp.QuoteMeta(r.file) + "$"}
	if r.focus != "" {
		args = append(args, "-ginkgo.focus", r.focus)
	}
	if r.labels != "" {
		args = append(args, "-ginkgo.label-filter", r.labels)
	}
	run := exec.Command(bin, args...)
	run.Dir = goRedisSuite.dir
	run.Env = append(os.Environ(), "KEYHIVE_ADDR="+srv.Addr(), "KEYHIVE_REDIS_VERSION="+r.version)
	run.Env = append(run.Env, r.env...)
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("go-redis's %s failed: %v\n%s", r.file, err, out)
	}
	if !strings.Contains(string(out), "Passed") || strings.Contains(string(out), "Ran 0 of") {
		t.Fatalf("no specs ran:\n%s", out)
	}
	t.Logf("%s", out[max(0, len(out)-400):])
}

// goRedisSuite is go-redis's test package reduced to goRedisSpecFiles and
// export_test.go (the package's own test exports), beside the helpers
// go-redis's main_test.go would give them, compiled once per test process:
// a build of go-redis's tests takes tens of seconds.
var goRedisSuite suiteBinary

type suiteBinary struct {
	once sync.Once
	dir  string // the module copy, removed by TestMain
	bin  string
	skip string // why the suite cannot be built here
	err  string
}

func (s *suiteBinary) build(t *testing.T) string {
	s.once.Do(s.make)
	if s.skip != "" {
		t.Skip(s.skip)
	}
	if s.err != "" {
		t.Fatal(s.err)
	}
	return s.bin
}

func (s *suiteBinary) make() {
	modCache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		s.err = err.Error()
		return
	}
	src := filepath.Join(strings.TrimSpace(string(modCache)), "github.com/redis/go-redis/v9@"+goRedisVersion)
	if _, err := os.Stat(filepath.Join(src, "commands_test.go")); err != nil {
		s.skip = "go-redis " + goRedisVersion + "'s sources are not in the module cache: " + err.Error()
		return
	}
	if s.dir, err = os.MkdirTemp("", "keyhive-goredis-"); err != nil {
		s.err = err.Error()
		return
	}
	if err := copyTree(src, s.dir); err != nil {
		s.err = err.Error()
		return
	}
	keep := map[string]bool{"export_test.go": true}
	for _, f := range goRedisSpecFiles {
		keep[f] = true
	}
	tests, _ := filepath.Glob(filepath.Join(s.dir, "*_test.go"))
	for _, f := range tests {
		if !keep[filepath.Base(f)] {
			if err := os.Remove(f); err != nil {
				s.err = err.Error()
				return
			}
		}
	}
	// json_test.go dials a fixed address.
	jsonSpecs := filepath.Join(s.dir, "json_test.go")
	b, err := os.ReadFile(jsonSpecs)
	if err == nil && !strings.Contains(string(b), `"localhost:6379"`) {
		s.err = "json_test.go no longer dials localhost:6379"
		return
	}
	if err == nil {
		err = os.WriteFile(jsonSpecs, []byte(strings.ReplaceAll(string(b), `"localhost:6379"`, "keyhiveAddr")), 0o644)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(s.dir, "keyhive_harness_test.go"), []byte(goRedisHarness), 0o644)
	}
	if err != nil {
		s.err = err.Error()
		return
	}
	s.bin = filepath.Join(s.dir, "specs.test")
	build := exec.Command("go", "test", "-c", "-o", s.bin, ".")
	build.Dir = s.dir
	// The modules come from the cache only; their sums are the cache's.
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOPROXY=off", "GOSUMDB=off")
	if out, err := build.CombinedOutput(); err != nil {
		if strings.Contains(string(out), "module lookup disabled") {
			s.skip = "go-redis's test dependencies are not in the module cache (go mod download github.com/bsm/ginkgo/v2@v2.12.0 github.com/bsm/gomega@v1.27.10):\n" + string(out)
		} else {
			s.err = "building go-redis's specs: " + err.Error() + "\n" + string(out)
		}
	}
}

// goRedisHarness gives the spec files what go-redis's main_test.go would:
// connection options pointing at Keyhive (redisOptions speaks the protocol
// KEYHIVE_PROTOCOL names, go-redis's default without), the plain client as
// the subject, and the Redis version KEYHIVE_REDIS_VERSION names for the
// specs that check it.
const goRedisHarness = `package redis_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"testing"

	. "github.com/bsm/ginkgo/v2"
	. "github.com/bsm/gomega"

	"github.com/redis/go-redis/v9"
)

var keyhiveAddr = os.Getenv("KEYHIVE_ADDR")

var ctx = context.Background()

// badConn and bigVal are what pubsub_test.go's other specs take from
// go-redis's helpers: a connection whose reads and writes fail, a large
// value.
type badConn struct {
	net.TCPConn
	readErr, writeErr error
}

func (c *badConn) Read([]byte) (int, error)  { return 0, c.readErr }
func (c *badConn) Write([]byte) (int, error) { return 0, c.writeErr }

func bigVal() []byte { return make([]byte, 128<<10) }

const redisSecondaryPort = "6381"

func applyREConnection(opt *redis.Options) { opt.Addr = keyhiveAddr }

func redisOptions() *redis.Options {
	opt := &redis.Options{Addr: keyhiveAddr}
	fmt.Sscan(os.Getenv("KEYHIVE_PROTOCOL"), &opt.Protocol)
	return opt
}

func reNewClient(protocol int, unstableResp3 bool) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: keyhiveAddr, Protocol: protocol, UnstableResp3: unstableResp3})
}

func newUniversalSubject(c *redis.Client) (redis.UniversalClient, func() error) { return c, c.Close }

// redisVersionAtLeast tells whether the version the run names is at least v.
func redisVersionAtLeast(v string) bool {
	var major, minor, wantMajor, wantMinor int
	fmt.Sscanf(os.Getenv("KEYHIVE_REDIS_VERSION"), "%d.%d", &major, &minor)
	fmt.Sscanf(v, "%d.%d", &wantMajor, &wantMinor)
	return major > wantMajor || major == wantMajor && minor >= wantMinor
}

func SkipBeforeRedisVersion(version string, msg string) {
	if !redisVersionAtLeast(version) {
		Skip(msg)
	}
}

func SkipAfterRedisVersion(version string, msg string) {
	var major, minor int
	fmt.Sscanf(version, "%d.%d", &major, &minor)
	if redisVersionAtLeast(fmt.Sprintf("%d.%d", major, minor+1)) {
		Skip(msg)
	}
}

func skipIfClientTrackingUnavailable(ctx context.Context, client *redis.Client) {}

func TestSpecs(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "go-redis specs against Keyhive")
}
`

// copyTree copies the regular files under src to dst, writable.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

func TestMain(m *testing.M) {
	code := m.Run()
	if goRedisSuite.dir != "" {
		os.RemoveAll(goRedisSuite.dir)
	}
	os.Exit(code)
}
