//go:build unix

package server_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/persistence"
	"github.com/redis/go-redis/v9"
)

// Regression tests for the AOF's durability defects of issue 21. A crash is
// simulated by copying the AOF directory as it is on disk (every
// acknowledged write was written before its reply) and starting a server
// on the copy.

// crashCopy copies dir's append-only directory to a new directory, as a
// crash would leave it.
func crashCopy(t *testing.T, dir string) string {
	t.Helper()
	to := t.TempDir()
	src, dst := filepath.Join(dir, "appendonlydir"), filepath.Join(to, "appendonlydir")
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			continue // removed while copying: not part of the AOF
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

func persistenceField(t *testing.T, rdb *redis.Client, field string) string {
	t.Helper()
	for _, line := range strings.Split(rdb.Info(context.Background(), "persistence").Val(), "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	t.Fatalf("INFO has no %s", field)
	return ""
}

func waitRewriteEnd(t *testing.T, rdb *redis.Client) {
	t.Helper()
	waitUntil(t, "the rewrite to end", func() bool {
		return persistenceField(t, rdb, "aof_rewrite_in_progress") == "0"
	})
}

// checkKeys fails unless every key prefix:0 .. prefix:n-1 holds its index.
func checkKeys(t *testing.T, rdb *redis.Client, prefix string, n int) {
	t.Helper()
	missing := 0
	for i := range n {
		if v, err := rdb.Get(context.Background(), prefix+strconv.Itoa(i)).Result(); err != nil || v != strconv.Itoa(i) {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d acknowledged writes %s* lost", missing, n, prefix)
	}
}

func setKeys(t *testing.T, rdb *redis.Client, prefix string, n int) {
	t.Helper()
	for i := range n {
		if err := rdb.Set(context.Background(), prefix+strconv.Itoa(i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAOFCrashDuringRewrite (defect 1): the writes acknowledged while a
// rewrite runs go to a new incremental file, which the manifest on disk
// names from the snapshot instant on, so a crash before the rewrite ends
// loses none of them.
func TestAOFCrashDuringRewrite(t *testing.T) {
	slowTest(t, "kills a server process during AOF rewrites")
	for _, fsync := range []string{"always", "everysec"} {
		t.Run(fsync, func(t *testing.T) {
			dir := t.TempDir()
			_, rdb := reopenAOF(t, dir, "--appendfsync", fsync)
			setKeys(t, rdb, "before:", 2000)
			// 2000 keys at 1 ms each: the rewrite runs for about 2 s.
			rdb.ConfigSet(context.Background(), "rdb-key-save-delay", "1000")
			if err := rdb.BgRewriteAOF(context.Background()).Err(); err != nil {
				t.Fatal(err)
			}
			setKeys(t, rdb, "during:", 200)
			if persistenceField(t, rdb, "aof_rewrite_in_progress") != "1" {
				t.Fatal("the rewrite ended before the crash")
			}
			crashed := crashCopy(t, dir)
			_, after := reopenAOF(t, crashed)
			checkKeys(t, after, "before:", 2000)
			checkKeys(t, after, "during:", 200)
		})
	}
}

// TestAOFAfterRewriteFailure (defect 2): a rewrite that fails (its base
// cannot be renamed into place, or the manifest naming the new
// incremental file cannot be written) loses nothing: writes after it are
// loaded on restart, and the next rewrite succeeds and leaves only its
// own files.
func TestAOFAfterRewriteFailure(t *testing.T) {
	dir := t.TempDir()
	aofDir := filepath.Join(dir, "appendonlydir")
	srv, rdb := reopenAOF(t, dir)
	ctx := context.Background()
	setKeys(t, rdb, "a:", 100)

	// failRewrite makes a rewrite fail where a directory takes the name of
	// a file it writes, then writes keys with prefix and checks that a
	// crash right after keeps them.
	failRewrite := func(blocked, prefix string) {
		t.Helper()
		if err := os.Mkdir(filepath.Join(aofDir, blocked), 0o755); err != nil {
			t.Fatal(err)
		}
		rdb.BgRewriteAOF(ctx)
		waitRewriteEnd(t, rdb)
		if s := persistenceField(t, rdb, "aof_last_bgrewrite_status"); s != "err" {
			t.Fatalf("aof_last_bgrewrite_status:%s with %s blocked", s, blocked)
		}
		setKeys(t, rdb, prefix, 100)
		checkKeys(t, reopenCopy(t, dir), prefix, 100)
	}
	// The new base cannot be renamed into place.
	failRewrite("appendonly.aof.2.base.rdb", "b:")
	os.Remove(filepath.Join(aofDir, "appendonly.aof.2.base.rdb"))
	// The manifest cannot be replaced: the rewrite fails at its start and
	// the old incremental file stays in use.
	failRewrite("appendonly.aof.manifest.tmp", "c:")
	os.Remove(filepath.Join(aofDir, "appendonly.aof.manifest.tmp"))

	rdb.Close()
	srv.Close() // a clean shutdown
	srv, rdb = reopenAOF(t, dir)
	for _, p := range []string{"a:", "b:", "c:"} {
		checkKeys(t, rdb, p, 100)
	}
	rdb.BgRewriteAOF(ctx)
	waitRewriteEnd(t, rdb)
	if s := persistenceField(t, rdb, "aof_last_bgrewrite_status"); s != "ok" {
		t.Fatalf("aof_last_bgrewrite_status:%s, want ok", s)
	}
	setKeys(t, rdb, "d:", 100)
	rdb.Close()
	srv.Close()
	_, rdb = reopenAOF(t, dir)
	for _, p := range []string{"a:", "b:", "c:", "d:"} {
		checkKeys(t, rdb, p, 100)
	}
	var files []string
	entries, _ := os.ReadDir(aofDir)
	for _, e := range entries {
		if e.Type().IsRegular() {
			files = append(files, e.Name())
		}
	}
	// As Redis numbers them: the base after base 1, the incremental file
	// after the one the failed rewrite opened (2).
	want := []string{"appendonly.aof.2.base.rdb", "appendonly.aof.3.incr.aof", "appendonly.aof.manifest"}
	if !slices.Equal(files, want) {
		t.Errorf("the AOF directory holds %v, want %v", files, want)
	}
}

// reopenCopy starts a server on a copy of dir's AOF, as a crash would
// leave it.
func reopenCopy(t *testing.T, dir string) *redis.Client {
	t.Helper()
	_, rdb := reopenAOF(t, crashCopy(t, dir))
	return rdb
}

// TestAOFTransactionsContiguous (defect 3): transactions on different keys
// run in parallel, and each one's propagated MULTI ... EXEC block stays
// contiguous in the AOF, so that every acknowledged transaction is loaded.
func TestAOFTransactionsContiguous(t *testing.T) {
	dir := t.TempDir()
	srv, rdb := reopenAOF(t, dir, "--appendfsync", "no")
	// A consumer that yields at each command (as a slow replica link
	// would) lets another transaction in wherever a block is not
	// propagated under one hold of the stream.
	srv.OnPropagate(func(int, [][]byte) { runtime.Gosched() })
	ctx := context.Background()
	const conns, txs, cmds = 8, 150, 20
	var wg sync.WaitGroup
	for c := range conns {
		wg.Go(func() {
			cl := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: 1})
			defer cl.Close()
			for range txs {
				_, err := cl.TxPipelined(ctx, func(p redis.Pipeliner) error {
					for k := range cmds {
						p.Incr(ctx, "tx:"+strconv.Itoa(c)+":"+strconv.Itoa(k))
					}
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	rdb.Close()
	srv.Close()

	f, err := os.Open(incrFile(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	inMulti, blocks, nested := false, 0, 0
	persistence.ReadCommands(bufio.NewReader(f), func(args [][]byte) error {
		switch strings.ToUpper(string(args[0])) {
		case "MULTI":
			if inMulti {
				nested++
			}
			inMulti = true
		case "EXEC":
			inMulti = false
			blocks++
		}
		return nil
	})
	if nested > 0 {
		t.Errorf("%d MULTIs inside another transaction's block", nested)
	}
	if blocks != conns*txs {
		t.Errorf("%d transaction blocks in the AOF, want %d", blocks, conns*txs)
	}
	_, rdb = reopenAOF(t, dir)
	for c := range conns {
		for k := range cmds {
			if v, _ := rdb.Get(ctx, "tx:"+strconv.Itoa(c)+":"+strconv.Itoa(k)).Int(); v != txs {
				t.Fatalf("tx:%d:%d = %d after a restart, want %d", c, k, v, txs)
			}
		}
	}
}

// TestShutdownNoSaveDuringScript (defect 4): SHUTDOWN NOSAVE stops a busy
// script that wrote; none of its writes reach the AOF, as in Redis, which
// exits without returning to the script.
func TestShutdownNoSaveDuringScript(t *testing.T) {
	for round := range 3 {
		t.Run(strconv.Itoa(round), func(t *testing.T) {
			dir := t.TempDir()
			srv, rdb := reopenAOF(t, dir, "--busy-reply-threshold", "50")
			ctx := context.Background()
			rdb.Set(ctx, "before", "1", 0)
			go redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1}).Eval(ctx,
				"redis.call('set', 'half', '1') while true do end", nil)
			admin := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1})
			defer admin.Close()
			// Busy (past busy-reply-threshold), so past its write: a SCRIPT
			// KILL sent as it starts could stop it before the write, which
			// Keyhive, serving SCRIPT KILL at once, allows (Redis answers
			// nobody before the threshold).
			for {
				err := admin.Get(ctx, "before").Err()
				if err != nil && strings.HasPrefix(err.Error(), "BUSY") {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if err := admin.ScriptKill(ctx).Err(); err == nil || !strings.HasPrefix(err.Error(), "UNKILLABLE") {
				t.Fatalf("SCRIPT KILL of a script that wrote: %v", err)
			}
			admin.Do(ctx, "SHUTDOWN", "NOSAVE")
			<-srv.Done()
			srv.Close()
			_, rdb = reopenAOF(t, dir)
			if n := rdb.Exists(ctx, "half").Val(); n != 0 {
				t.Error("the stopped script's write was persisted")
			}
			if v := rdb.Get(ctx, "before").Val(); v != "1" {
				t.Errorf("before = %q", v)
			}
		})
	}
}

// TestAOFXAddLimitReplay (defect 5): an approximate trim with LIMIT
// propagates as the exact trim it did, with its LIMIT left in place as
// Redis writes it; replayed from the AOF it trims the same entries.
func TestAOFXAddLimitReplay(t *testing.T) {
	_, rdb := reopenAOF(t, t.TempDir(), "--stream-node-max-entries", "10", "--enable-debug-command", "yes")
	ctx := context.Background()
	for i := range 100 {
		rdb.Do(ctx, "XADD", "s", "MAXLEN", "~", "30", "LIMIT", "20", "*", "f", i)
		rdb.Do(ctx, "XADD", "m", "MINID", "~", "0-1", "LIMIT", "10", strconv.Itoa(i+1)+"-1", "f", i)
		rdb.Do(ctx, "XTRIM", "t", "MAXLEN", "~", "5", "LIMIT", "10")
		rdb.Do(ctx, "XADD", "t", "*", "f", i)
	}
	before := map[string][]redis.XMessage{}
	for _, k := range []string{"s", "m", "t"} {
		before[k] = rdb.XRange(ctx, k, "-", "+").Val()
	}
	if err := rdb.Do(ctx, "DEBUG", "LOADAOF").Err(); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"s", "m", "t"} {
		after := rdb.XRange(ctx, k, "-", "+").Val()
		if !slices.EqualFunc(after, before[k], func(a, b redis.XMessage) bool { return a.ID == b.ID }) {
			t.Errorf("%s: %d entries after DEBUG LOADAOF, %d before", k, len(after), len(before[k]))
		}
	}
}

// TestAOFOrphansRemoved (defect 6): start-up removes what a crash during a
// rewrite or a save leaves behind: files named like AOF files that the
// manifest does not list, and temporary files; history entries leave the
// manifest.
func TestAOFOrphansRemoved(t *testing.T) {
	dir := t.TempDir()
	aofDir := filepath.Join(dir, "appendonlydir")
	srv, rdb := reopenAOF(t, dir)
	setKeys(t, rdb, "k:", 50)
	rdb.Close()
	srv.Close()
	orphans := []string{
		"appendonlydir/appendonly.aof.7.base.rdb", "appendonlydir/appendonly.aof.8.incr.aof",
		"appendonlydir/appendonly.aof.0.base.aof", "appendonlydir/temp-rewriteaof-123.aof",
		"appendonlydir/temp-123-4.rdb", "appendonlydir/appendonly.aof.manifest.tmp", "temp-99-1.rdb", "temp-rewriteaof-99.aof",
	}
	for _, name := range orphans {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	kept := []string{"appendonlydir/notes.txt", "appendonlydir/appendonly.aof.x.incr.aof", "temp-file.rdb", "dump.rdb.bak"}
	for _, name := range kept {
		os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644)
	}
	manifest := filepath.Join(aofDir, "appendonly.aof.manifest")
	data, _ := os.ReadFile(manifest)
	os.WriteFile(filepath.Join(aofDir, "appendonly.aof.0.incr.aof"), nil, 0o644)
	os.WriteFile(manifest, append(data, "file appendonly.aof.0.incr.aof seq 1 type h\n"...), 0o644)

	_, rdb = reopenAOF(t, dir)
	checkKeys(t, rdb, "k:", 50)
	for _, name := range append(orphans, "appendonlydir/appendonly.aof.0.incr.aof") {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s was left", name)
		}
	}
	for _, name := range kept {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s was removed", name)
		}
	}
	if data, _ := os.ReadFile(manifest); strings.Contains(string(data), "type h") {
		t.Errorf("the manifest still lists history:\n%s", data)
	}
}

// TestAOFWriteError: a write to the AOF that fails (here the file size
// limit, EFBIG) loses nothing: under everysec the acknowledged write stays
// buffered and later writes get MISCONF until a retry succeeds; under
// always the write is not acknowledged (the client is disconnected). The
// file is cut back to its last whole command, so it loads after.
func TestAOFWriteError(t *testing.T) {
	for _, fsync := range []string{"everysec", "always"} {
		t.Run(fsync, func(t *testing.T) {
			dir := t.TempDir()
			srv, rdb := reopenAOF(t, dir, "--appendfsync", fsync)
			ctx := context.Background()
			rdb.Set(ctx, "before", "1", 0)
			st, err := os.Stat(incrFile(t, dir))
			if err != nil {
				t.Fatal(err)
			}
			var old syscall.Rlimit
			syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old)
			limit := old
			limit.Cur = uint64(st.Size()) + 20 // the next SET is written in part
			if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
				t.Skip(err)
			}
			restored := false
			restore := func() {
				if !restored {
					syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old)
					restored = true
				}
			}
			defer restore()
			err = rdb.Set(ctx, "failed", strings.Repeat("x", 100), 0).Err()
			if fsync == "always" && err == nil {
				t.Error("under always a write the AOF did not take was acknowledged")
			}
			if fsync == "everysec" && err != nil {
				t.Errorf("under everysec: %v", err)
			}
			if err := rdb.Set(ctx, "next", "1", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "MISCONF Errors writing to the AOF file: file too large") {
				t.Errorf("a write while the AOF cannot be written: %v", err)
			}
			if v := persistenceField(t, rdb, "aof_last_write_status"); v != "err" {
				t.Errorf("aof_last_write_status:%s", v)
			}
			restore()
			waitUntil(t, "the AOF written again", func() bool {
				return persistenceField(t, rdb, "aof_last_write_status") == "ok"
			})
			if err := rdb.Set(ctx, "next", "1", 0).Err(); err != nil {
				t.Fatal(err)
			}
			rdb.Close()
			srv.Close()
			_, rdb = reopenAOF(t, dir, "--aof-load-truncated", "no")
			for _, k := range []string{"before", "failed", "next"} {
				if rdb.Exists(ctx, k).Val() != 1 {
					t.Errorf("%s is missing after a restart", k)
				}
			}
		})
	}
}

// TestAOFXAddLimitInterop: the trims with LIMIT that each server writes to
// its AOF load in the other as they ran (Redis writes `MAXLEN = n LIMIT l`
// and its loader ignores the LIMIT, as Keyhive's must).
func TestAOFXAddLimitInterop(t *testing.T) {
	p := difftest.StartIsolated(t, "--appendonly", "yes", "--appendfsync", "always", "--stream-node-max-entries", "10")
	for i := range 100 {
		p.Do("XADD", "s", "MAXLEN", "~", "30", "LIMIT", "20", strconv.Itoa(i+1)+"-1", "f", "v")
		p.Do("XADD", "m", "MINID", "~", "50-1", "LIMIT", "10", strconv.Itoa(i+1)+"-1", "f", "v")
		p.Do("XTRIM", "t", "MAXLEN", "~", "5", "LIMIT", "10")
		p.Do("XADD", "t", strconv.Itoa(i+1)+"-1", "f", "v")
	}
	compare := func() {
		for _, k := range []string{"s", "m", "t"} {
			p.Do("XRANGE", k, "-", "+")
		}
	}
	compare()
	copyAOFDir(t, p.Redis(), p.Keyhive())
	loadAOF(t, p.Keyhive())
	compare()
	copyAOFDir(t, p.Keyhive(), p.Redis())
	loadAOF(t, p.Redis())
	compare()
}
