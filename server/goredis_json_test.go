package server_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGoRedisJSONSpecs runs go-redis v9.22.0's own JSON specs (the Ginkgo
// specs of its json_test.go labelled json, RESP2 and RESP3) against a
// Keyhive started here. The module's source is copied from the module
// cache, json_test.go's fixed address pointed at Keyhive, and its suite run
// with RE_CLUSTER=true, which keeps the suite's setup from dialling the
// other servers of go-redis's own test environment. Left out: the specs
// that need RediSearch (label search), and, by the suite's own version
// check (REDIS_VERSION 8.4), JSON.SET's FPHA (Redis 8.8).
func TestGoRedisJSONSpecs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs go-redis's test suite")
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "github.com", "redis", "go-redis", "v9@v9.22.0")
	if _, err := os.Stat(filepath.Join(src, "json_test.go")); err != nil {
		t.Skipf("go-redis v9.22.0's source is not in the module cache: %v", err)
	}
	srv := startKeyhive(t)
	dir := t.TempDir()
	if err := copyTree(src, dir); err != nil {
		t.Fatal(err)
	}
	specs := filepath.Join(dir, "json_test.go")
	b, err := os.ReadFile(specs)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"localhost:6379"`) {
		t.Fatal("json_test.go no longer dials localhost:6379")
	}
	b = []byte(strings.ReplaceAll(string(b), `"localhost:6379"`, `"`+srv.Addr()+`"`))
	if err := os.WriteFile(specs, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "test", "-count=1", "-run", "TestGinkgoSuite",
		"-ginkgo.label-filter=json && !search", "-ginkgo.no-color", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "RE_CLUSTER=true", "GOFLAGS=-mod=mod", "GOWORK=off", "GOPROXY=off")
	res, err := cmd.CombinedOutput()
	summary := regexp.MustCompile(`Ran (\d+) of \d+ Specs.*\n\D*(\d+) Passed \| (\d+) Failed`).FindSubmatch(res)
	if err != nil || summary == nil || string(summary[3]) != "0" {
		t.Fatalf("go-redis's JSON specs: %v\n%s", err, res)
	}
	if ran := string(summary[1]); ran == "0" {
		t.Fatalf("no JSON spec ran:\n%s", res)
	}
	t.Logf("go-redis's JSON specs: %s", summary[0])
}

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
