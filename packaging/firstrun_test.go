//go:build unix

package packaging

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestFirstRunLeavesNoFiles: the binary started as the README's first
// command starts it (--port and nothing else) in an empty working directory
// and stopped with Ctrl-C (SIGINT) leaves the directory empty. With a config
// file that says `dir ./`, it keeps Redis's defaults: SIGINT saves dump.rdb
// there and the next start loads it. Started bare again beside that file, it
// does not load it.
func TestFirstRunLeavesNoFiles(t *testing.T) {
	bin := binary(t)
	wd := t.TempDir()

	addr, stop := runIn(t, bin, wd)
	if r := difftest.InlineLine(addr, "SET greeting hello"); r != "+OK" {
		t.Fatalf("SET: %q", r)
	}
	stop()
	if entries, _ := os.ReadDir(wd); len(entries) != 0 {
		t.Fatalf("the working directory holds %v after SIGINT, want nothing", entries)
	}

	if err := os.WriteFile(filepath.Join(wd, "redis.conf"), []byte("dir ./\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	addr, stop = runIn(t, bin, wd, "redis.conf")
	difftest.InlineLine(addr, "SET greeting hello")
	stop()
	if _, err := os.Stat(filepath.Join(wd, "dump.rdb")); err != nil {
		t.Fatalf("with a config file, no dump.rdb after SIGINT: %v", err)
	}
	addr, stop = runIn(t, bin, wd, "redis.conf")
	if r := difftest.InlineLine(addr, "GET greeting"); r != "$5" {
		t.Errorf("with a config file, GET greeting after a restart: %q, want the saved value", r)
	}
	stop()

	addr, stop = runIn(t, bin, wd)
	defer stop()
	if r := difftest.InlineLine(addr, "GET greeting"); r != "$-1" {
		t.Errorf("started bare, GET greeting: %q: it loaded the working directory's dump.rdb", r)
	}
}

// runIn starts bin with args and --port on a free port in the working
// directory wd; stop sends SIGINT and waits for the exit (harmless twice).
func runIn(t *testing.T, bin, wd string, args ...string) (addr string, stop func()) {
	t.Helper()
	port := freePort(t)
	args = append(args, "--port", port)
	cmd := exec.Command(bin, args...)
	cmd.Dir = wd
	logBuf := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = logBuf, logBuf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cmd.Process.Signal(syscall.SIGINT)
		if err := cmd.Wait(); err != nil {
			t.Errorf("%s %q: exit after SIGINT: %v\n%s", bin, args, err, logBuf)
		}
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	addr = "127.0.0.1:" + port
	for deadline := time.Now().Add(10 * time.Second); difftest.InlineLine(addr, "PING") != "+PONG"; {
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("%s %q did not answer PING:\n%s", bin, args, logBuf)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return addr, stop
}
