package server_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/server"
)

// TestEmbeddedServerLeavesWorkingDirectory: server.New as the README's
// Embedding section calls it, in a working directory holding a dump.rdb,
// neither loads that file nor writes anything there, and takes no snapshots
// (save points off). Given a config file, even one that says only `dir ./`,
// the server keeps Redis's defaults and loads the same file.
func TestEmbeddedServerLeavesWorkingDirectory(t *testing.T) {
	dump := dumpHolding(t, "stray", "loaded")
	t.Chdir(t.TempDir())
	if err := os.WriteFile("dump.rdb", dump, 0o644); err != nil {
		t.Fatal(err)
	}

	start := func(args ...string) (*server.Server, string) {
		t.Helper()
		cfg, err := config.FromArgs(args)
		if err != nil {
			t.Fatal(err)
		}
		srv, err := server.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		return srv, srv.Addr()
	}

	srv, addr := start("--port", "0")
	if r := difftest.InlineLine(addr, "GET stray"); r != "$-1" {
		t.Errorf("GET stray: %q: the working directory's dump.rdb was loaded", r)
	}
	if r, err := difftest.Inline(addr, "CONFIG GET save"); err != nil || len(r.Elems) != 2 || r.Elems[1].Str != "" {
		t.Errorf("CONFIG GET save: %q %v, want no save points", r.Raw, err)
	}
	if r := difftest.InlineLine(addr, "SET k v"); r != "+OK" {
		t.Fatalf("SET: %q", r)
	}
	srv.Close()
	checkOnly(t, ".", "dump.rdb", dump)

	if err := os.WriteFile("keyhive.conf", []byte("dir ./\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, addr = start("keyhive.conf", "--port", "0")
	defer srv.Close()
	if r := difftest.InlineLine(addr, "GET stray"); r != "$6" {
		t.Errorf("GET stray with a config file: %q, want the dump's value", r)
	}
	if r, err := difftest.Inline(addr, "CONFIG GET save"); err != nil || len(r.Elems) != 2 || r.Elems[1].Str != "3600 1 300 100 60 10000" {
		t.Errorf("CONFIG GET save with a config file: %q %v, want Redis's default", r.Raw, err)
	}
}

// TestEmbeddedReplicaLeavesWorkingDirectory: a replica without persistence
// loads its master's data set through a file in its working directory, as
// Redis's disk-based sync does, but keeps no dump.rdb there afterwards.
func TestEmbeddedReplicaLeavesWorkingDirectory(t *testing.T) {
	master := startKeyhive(t)
	if r := difftest.InlineLine(master.Addr(), "SET k v"); r != "+OK" {
		t.Fatalf("SET: %q", r)
	}
	wd := t.TempDir()
	t.Chdir(wd)
	host, port, _ := strings.Cut(master.Addr(), ":")
	cfg, err := config.FromArgs([]string{"--port", "0", "--replicaof", host, port})
	if err != nil {
		t.Fatal(err)
	}
	replica, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := replica.Start(); err != nil {
		t.Fatal(err)
	}
	defer replica.Close()
	waitUntil(t, "the replica's sync", func() bool { return difftest.InlineLine(replica.Addr(), "GET k") == "$1" })
	if entries, _ := os.ReadDir(wd); len(entries) != 0 {
		t.Errorf("the working directory holds %v after the sync, want nothing", entries)
	}
}

// dumpHolding is a dump.rdb's bytes holding one string key.
func dumpHolding(t *testing.T, key, value string) []byte {
	t.Helper()
	dir := t.TempDir()
	srv := startKeyhive(t, "--dir", dir)
	defer srv.Close()
	if r := difftest.InlineLine(srv.Addr(), "SET "+key+" "+value); r != "+OK" {
		t.Fatalf("SET: %q", r)
	}
	if r := difftest.InlineLine(srv.Addr(), "SAVE"); r != "+OK" {
		t.Fatalf("SAVE: %q", r)
	}
	data, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// checkOnly fails unless dir holds exactly the file name, with content.
func checkOnly(t *testing.T, dir, name string, content []byte) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{name}) {
		t.Errorf("%s holds %q, want only %s", dir, names, name)
	}
	if data, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !slices.Equal(data, content) {
		t.Errorf("%s changed (%v)", name, err)
	}
}
