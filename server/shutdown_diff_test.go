//go:build unix

package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestShutdownRefusalsLikeRedis: what stops a shutdown and what does not,
// for SHUTDOWN and for SIGINT/SIGTERM (with shutdown-on-sigint and
// shutdown-on-sigterm), against redis-server (Redis's shutdown.tcl): a
// shutdown is refused while the first AOF is being written, unless FORCE; a
// failed final save keeps the server running after a signal as after
// SHUTDOWN, unless NOSAVE or FORCE; a background save running is abandoned,
// not waited for.
func TestShutdownRefusalsLikeRedis(t *testing.T) {
	bin, err := difftest.BuildKeyhive(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	scenarios := []struct {
		name string
		run  func(n *replNode, st *shutdownSteps)
	}{
		{"initial AOF rewrite", func(n *replNode, st *shutdownSteps) {
			n.ok(t, "DEBUG", "POPULATE", 1000)
			n.ok(t, "CONFIG", "SET", "rdb-key-save-delay", 1000000)
			n.ok(t, "CONFIG", "SET", "appendonly", "yes")
			waitUntil(t, n.name+" rewriting", func() bool { return n.info(t, "persistence", "aof_rewrite_in_progress") == "1" })
			st.command("SHUTDOWN")
			st.command("SHUTDOWN", "NOSAVE")
			st.signal(syscall.SIGTERM, "")
			st.signal(syscall.SIGINT, "nosave force")
		}},
		{"failed final save", func(n *replNode, st *shutdownSteps) {
			dir := n.ok(t, "CONFIG", "GET", "dir").Elems[1].Str
			if err := os.Mkdir(filepath.Join(dir, "dump.rdb"), 0o755); err != nil {
				t.Fatal(err)
			}
			n.ok(t, "CONFIG", "SET", "save", "900 1")
			n.ok(t, "SET", "k", "v")
			st.signal(syscall.SIGINT, "")
			st.command("SHUTDOWN")
			st.signal(syscall.SIGTERM, "nosave")
		}},
		{"background save running", func(n *replNode, st *shutdownSteps) {
			n.ok(t, "DEBUG", "POPULATE", 1000)
			n.ok(t, "CONFIG", "SET", "rdb-key-save-delay", 1000000)
			n.ok(t, "BGSAVE")
			waitUntil(t, n.name+" saving", func() bool { return n.info(t, "persistence", "rdb_bgsave_in_progress") == "1" })
			dir := n.ok(t, "CONFIG", "GET", "dir").Elems[1].Str
			st.signal(syscall.SIGTERM, "")
			// The listener closes before the process ends: its last
			// cleanup gets 5 s.
			var files []string
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				files, _ = filepath.Glob(filepath.Join(dir, "*"))
				if len(files) == 0 || time.Now().After(deadline) {
					break
				}
			}
			st.note("files left in dir", fmt.Sprint(len(files)))
		}},
		{"background save running, save points", func(n *replNode, st *shutdownSteps) {
			n.ok(t, "DEBUG", "POPULATE", 1000)
			n.ok(t, "CONFIG", "SET", "save", "900 1")
			n.ok(t, "CONFIG", "SET", "rdb-key-save-delay", 1000000)
			n.ok(t, "BGSAVE")
			waitUntil(t, n.name+" saving", func() bool { return n.info(t, "persistence", "rdb_bgsave_in_progress") == "1" })
			n.ok(t, "CONFIG", "SET", "rdb-key-save-delay", 0) // the final save's
			dir := n.ok(t, "CONFIG", "GET", "dir").Elems[1].Str
			st.signal(syscall.SIGTERM, "")
			_, err := os.Stat(filepath.Join(dir, "dump.rdb"))
			st.note("dump.rdb written", fmt.Sprint(err == nil))
		}},
	}
	for _, sc := range scenarios {
		var got [2][]string
		for i, redis := range []bool{true, false} {
			var n *replNode
			if redis {
				n = startReplNode(t, true, "--save", "", "--shutdown-timeout", "0")
			} else {
				n = processNode(t, bin, "keyhive", "--save", "", "--shutdown-timeout", "0")
			}
			sc.run(n, &shutdownSteps{t: t, n: n, scenario: sc.name, got: &got[i]})
		}
		sameSteps(t, got[0], got[1])
	}
}

// shutdownSteps runs a scenario's shutdown attempts on one server, noting
// each outcome; once the server has exited the later steps are noted as
// not run.
type shutdownSteps struct {
	t        *testing.T
	n        *replNode
	scenario string
	got      *[]string
	exited   bool
}

func (st *shutdownSteps) note(what, outcome string) {
	*st.got = append(*st.got, st.scenario+": "+what+": "+outcome)
}

// command sends a SHUTDOWN and notes its error, or that the server exited.
func (st *shutdownSteps) command(args ...any) {
	what := strings.TrimSpace(strings.Repeat("%v ", len(args)))
	what = fmt.Sprintf(what, args...)
	if st.exited {
		st.note(what, "not run")
		return
	}
	r, err := st.n.conn.Do(args...)
	if err != nil {
		st.exited = st.goneWithin(10 * time.Second)
		st.note(what, fmt.Sprint("connection closed, exited ", st.exited))
		return
	}
	st.note(what, strings.TrimSpace(string(r.Raw)))
}

// signal sets the signal's shutdown flags (unless "") and sends it, noting
// whether the process exited.
func (st *shutdownSteps) signal(sig syscall.Signal, flags string) {
	t, n := st.t, st.n
	what := strings.TrimSpace(map[syscall.Signal]string{syscall.SIGINT: "SIGINT ", syscall.SIGTERM: "SIGTERM "}[sig] + flags)
	if st.exited {
		st.note(what, "not run")
		return
	}
	if flags != "" {
		n.ok(t, "CONFIG", "SET", map[syscall.Signal]string{syscall.SIGINT: "shutdown-on-sigint", syscall.SIGTERM: "shutdown-on-sigterm"}[sig], flags)
	}
	pid, _ := strconv.Atoi(n.info(t, "server", "process_id"))
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatal(err)
	}
	// A server that shuts down may answer PING while it ends a save: 5 s
	// to exit (on a loaded machine Keyhive's abandoned background save and
	// final save outlasted the half second this waited before).
	st.exited = st.goneWithin(5 * time.Second)
	st.note(what, fmt.Sprint("exited ", st.exited))
}

// goneWithin reports whether the server stops accepting connections within
// d.
func (st *shutdownSteps) goneWithin(d time.Duration) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		c, err := difftest.Dial(st.n.addr)
		if err != nil {
			return true
		}
		c.Close()
	}
	return false
}
