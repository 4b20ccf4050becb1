package server_test

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/internal/logging"
	"github.com/keyhive/keyhive/server"
)

// lockedBuffer is a log sink read while the server writes to it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startLoggedKeyhive starts an in-process Keyhive logging at notice level to
// out, closed when the test ends.
func startLoggedKeyhive(t *testing.T, out *lockedBuffer, directives ...string) *server.Server {
	t.Helper()
	lg, err := logging.New(logging.Options{Stdout: out, Level: logging.Notice})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.FromArgs(append([]string{"--port", "0", "--bind", "127.0.0.1", "--save", "", "--dir", t.TempDir()}, directives...))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(cfg, server.WithLogger(lg.Std(logging.Notice)))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// TestReplicaLogRole: as Redis, a replica's log lines carry the role mark
// S and a master's M, following REPLICAOF and REPLICAOF NO ONE.
func TestReplicaLogRole(t *testing.T) {
	master := startKeyhive(t)
	var out lockedBuffer
	srv := startLoggedKeyhive(t, &out)
	c := dial(t, srv.Addr())
	host, port, _ := strings.Cut(master.Addr(), ":")
	if r, err := c.Do("REPLICAOF", host, port); err != nil || r.Str != "OK" {
		t.Fatalf("REPLICAOF: %v %v", r, err)
	}
	waitUntil(t, "the replica's link", func() bool {
		r, err := c.Do("ROLE")
		return err == nil && len(r.Elems) == 5 && r.Elems[3].Str == "connected"
	})
	if r, err := c.Do("REPLICAOF", "NO", "ONE"); err != nil || r.Str != "OK" {
		t.Fatalf("REPLICAOF NO ONE: %v %v", r, err)
	}
	line := regexp.MustCompile(`(?m)^\d+:([A-Z]) .{24} . (.*)$`)
	marks := map[string]string{}
	for _, m := range line.FindAllStringSubmatch(out.String(), -1) {
		for _, msg := range []string{"REPLICAOF " + master.Addr() + " enabled", "MASTER MODE enabled"} {
			if strings.HasPrefix(m[2], msg) {
				marks[msg] = m[1]
			}
		}
	}
	if marks["REPLICAOF "+master.Addr()+" enabled"] != "S" || marks["MASTER MODE enabled"] != "M" {
		t.Errorf("role marks %v (want S as a replica, M as a master); log:\n%s", marks, out.String())
	}
}
