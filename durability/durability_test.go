package durability

import (
	"bytes"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/keyhive/keyhive/changes"
	"github.com/keyhive/keyhive/clock"
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/namespace"
)

// testHost is a Host without a server: string keys only, each loaded AOF
// command recorded as "db:WORDS" (a SELECT switches db, SET stores).
type testHost struct {
	Host
	stream  changes.Stream
	dirty   atomic.Int64
	applied []string
}

func newTestHost(t *testing.T, dir string, directives ...string) *testHost {
	t.Helper()
	cfg, err := config.FromArgs(append([]string{"--dir", dir}, directives...))
	if err != nil {
		t.Fatal(err)
	}
	h := &testHost{}
	ks := keyspace.New(cfg.Databases(), keyspace.Hooks{})
	h.Host = Host{
		Config:       cfg,
		Keyspace:     ks,
		Clock:        clock.Real{},
		Log:          log.New(io.Discard, "", 0),
		Changes:      &h.stream,
		Dirty:        &h.dirty,
		Version:      "7.0.15",
		Functions:    func(b []byte) []byte { return b },
		FunctionCode: func() [][]byte { return nil },
		LoadFunction: func([]byte, bool) error { return nil },
		SchemaDefs:   func() []namespace.Def { return nil },
		Replay: func() func(argv [][]byte) error {
			db := 0
			return func(argv [][]byte) error {
				words := string(bytes.Join(argv, []byte(" ")))
				h.applied = append(h.applied, string(rune('0'+db))+":"+words)
				switch strings.ToUpper(string(argv[0])) {
				case "SELECT":
					db = int(argv[1][0] - '0')
				case "SET":
					ks.DB(db).Set(bytes.Clone(argv[1]), keyspace.TypeString, keyspace.EncRaw, argv[2], 0, 1)
				}
				return nil
			}
		},
		UsedMemory:     func() int64 { return 0 },
		DroppedGarbage: func(int64) {},
	}
	return h
}

func words(s string) [][]byte {
	var out [][]byte
	for _, w := range strings.Fields(s) {
		out = append(out, []byte(w))
	}
	return out
}

func equalStrings(a, b []string) bool {
	return strings.Join(a, "|") == strings.Join(b, "|")
}

// TestAOFWithoutServer runs an AOF on a keyspace of its own: it is
// created on start, takes the stream's commands (a block as MULTI ...
// EXEC), writes them before Write returns, and a restart replays them
// through Replay; a rewrite makes the data set the new base. The last file
// cut inside a transaction loads without it under aof-load-truncated.
func TestAOFWithoutServer(t *testing.T) {
	dir := t.TempDir()
	h := newTestHost(t, dir, "--appendonly", "yes", "--aof-use-rdb-preamble", "no")
	aof, _ := New(&h.Host)
	if err := aof.Start(); err != nil {
		t.Fatal(err)
	}
	if !aof.On() || !h.stream.Active() {
		t.Fatal("the AOF is not subscribed after Start")
	}
	h.stream.Publish(0, words("SET a 1"))
	h.stream.Publish(2, words("SET b 2"))
	h.stream.PublishBlock([]changes.Op{{DB: 2, Argv: words("SET c 3")}, {DB: 3, Argv: words("SET d 4")}})
	if st := aof.Status(); st.Buffered == 0 {
		t.Fatal("nothing buffered")
	}
	if err := aof.Write(); err != nil {
		t.Fatal(err)
	}
	incr := filepath.Join(dir, "appendonlydir", "appendonly.aof.1.incr.aof")
	data, err := os.ReadFile(incr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte("MULTI")) || !bytes.HasPrefix(data, []byte("*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n")) {
		t.Fatalf("incremental file %q", data)
	}
	aof.Stop()
	if h.stream.Active() {
		t.Fatal("the AOF is still subscribed after Stop")
	}

	h2 := newTestHost(t, dir, "--appendonly", "yes", "--aof-use-rdb-preamble", "no")
	aof2, _ := New(&h2.Host)
	if err := aof2.Start(); err != nil {
		t.Fatal(err)
	}
	want := []string{"0:SELECT 0", "0:SET a 1", "0:SELECT 2", "2:SET b 2", "2:SET c 3", "2:SELECT 3", "3:SET d 4"}
	if !equalStrings(h2.applied, want) {
		t.Fatalf("replayed %q, want %q", h2.applied, want)
	}
	// A rewrite: the data set becomes the base, a new incremental file
	// takes the writes.
	if !aof2.BGRewrite() {
		t.Fatal("rewrite did not start")
	}
	aof2.Wait()
	if st := aof2.Status(); !st.LastRewriteOK || st.Rewrites != 1 {
		t.Fatalf("rewrite status %+v", st)
	}
	h2.stream.Publish(0, words("SET e 5"))
	h2.stream.PublishBlock([]changes.Op{{DB: 0, Argv: words("SET f 6")}, {DB: 0, Argv: words("SET g 7")}})
	aof2.Stop()
	// A crash in the middle of writing the transaction: the file ends
	// inside MULTI.
	incr2 := filepath.Join(dir, "appendonlydir", "appendonly.aof.2.incr.aof")
	data, _ = os.ReadFile(incr2)
	cut := bytes.LastIndex(data, []byte("*3\r\n$3\r\nSET\r\n$1\r\ng"))
	if err := os.Truncate(incr2, int64(cut)); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "appendonlydir"))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"appendonly.aof.2.base.aof", "appendonly.aof.2.incr.aof", "appendonly.aof.manifest"}; !equalStrings(names, want) {
		t.Fatalf("files after the rewrite %q, want %q", names, want)
	}

	h3 := newTestHost(t, dir, "--appendonly", "yes")
	aof3, _ := New(&h3.Host)
	if err := aof3.Start(); err != nil {
		t.Fatal(err)
	}
	defer aof3.Stop()
	got := map[string]bool{}
	for _, a := range h3.applied {
		got[a[2:]] = true
	}
	for _, w := range []string{"SET a 1", "SET b 2", "SET c 3", "SET d 4", "SET e 5"} {
		if !got[w] {
			t.Errorf("%s not replayed after the rewrite (replayed %q)", w, h3.applied)
		}
	}
	if got["SET f 6"] {
		t.Errorf("a transaction cut by the end of the file was applied (replayed %q)", h3.applied)
	}
	if st, _ := os.Stat(incr2); st.Size() >= int64(cut) {
		t.Errorf("the truncated file was not cut back to its last whole command: %d bytes", st.Size())
	}
}

// TestSaverWithoutServer saves a keyspace of its own to dbfilename and
// loads it into another.
func TestSaverWithoutServer(t *testing.T) {
	dir := t.TempDir()
	h := newTestHost(t, dir)
	_, saver := New(&h.Host)
	h.Keyspace.DB(0).Set([]byte("a"), keyspace.TypeString, keyspace.EncRaw, []byte("1"), 0, 1)
	h.Keyspace.DB(5).Set([]byte("b"), keyspace.TypeString, keyspace.EncRaw, []byte("2"), 0, 1)
	h.dirty.Store(2)
	var all keyspace.LockSet
	all.All()
	db := h.Keyspace.Lock(0, &all)
	err := saver.Save(h.Clock.UnixMilli())
	h.Keyspace.Unlock(db, &all)
	if err != nil {
		t.Fatal(err)
	}
	if st := saver.Status(); st.Saves != 1 || h.dirty.Load() != 0 {
		t.Fatalf("after SAVE: %+v, dirty %d", st, h.dirty.Load())
	}

	h2 := newTestHost(t, dir)
	_, saver2 := New(&h2.Host)
	if err := saver2.Load(); err != nil {
		t.Fatal(err)
	}
	for _, k := range []struct {
		db       int
		key, val string
	}{{0, "a", "1"}, {5, "b", "2"}} {
		e, found := h2.Keyspace.DB(k.db).Lookup([]byte(k.key), h2.Clock.UnixMilli(), false)
		if !found || string(e.Value()) != k.val {
			t.Errorf("db %d key %s: found %v", k.db, k.key, found)
		}
	}
	// A background save writes the same file.
	if !saver2.BGSave() {
		t.Fatal("BGSAVE did not start")
	}
	saver2.Wait()
	if st := saver2.Status(); !st.LastOK || st.InProgress {
		t.Fatalf("after BGSAVE: %+v", st)
	}
}

// TestLeftTempFile checks which names are temporary files of a process
// that is gone: not this one's, nor those of another running process (a
// server sharing the directory).
func TestLeftTempFile(t *testing.T) {
	pid := os.Getpid()
	done := exec.Command("true")
	if err := done.Run(); err != nil {
		t.Skip(err)
	}
	gone := strconv.Itoa(done.Process.Pid)
	running := exec.Command("sleep", "10")
	if err := running.Start(); err != nil {
		t.Skip(err)
	}
	defer func() { running.Process.Kill(); running.Wait() }()
	alive := strconv.Itoa(running.Process.Pid)
	for name, want := range map[string]bool{
		"temp-rewriteaof-" + gone + ".aof":              true,
		"temp-" + gone + "-2.rdb":                       true,
		"temp-rewriteaof-" + alive + ".aof":             false,
		"temp-" + alive + "-2.rdb":                      false,
		"temp-file.rdb":                                 false,
		"temp-1-x.rdb":                                  false,
		"dump.rdb":                                      false,
		"temp-rewriteaof-" + strconv.Itoa(pid) + ".aof": false,
		"temp-" + strconv.Itoa(pid) + "-3.rdb":          false,
	} {
		if got := leftTempFile(name); got != want {
			t.Errorf("leftTempFile(%q) = %v, want %v", name, got, want)
		}
	}
}
