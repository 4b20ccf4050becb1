package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/redis/go-redis/v9"
)

// TestAOFInterop: each server's multi-part AOF directory (base + incremental
// commands, then after BGREWRITEAOF an RDB-preamble or command base) is
// loaded by the other, and the contents compared.
func TestAOFInterop(t *testing.T) {
	for _, preamble := range []string{"yes", "no"} {
		t.Run("aof-use-rdb-preamble="+preamble, func(t *testing.T) {
			p := difftest.StartIsolated(t, "--appendonly", "yes", "--aof-use-rdb-preamble", preamble, "--appendfsync", "always")
			withSets70(p)
			populateAllTypes(p)
			p.Do("MULTI")
			p.Do("INCR", "tx:counter")
			p.Do("LPUSH", "tx:list", "a")
			p.Do("EXEC")
			p.Do("EVAL", "redis.call('set', KEYS[1], 'from-script'); return redis.call('incr', KEYS[2])", 2, "script:s", "script:n")
			p.Do("SET", "gone", "v", "PX", "1")
			// Long enough for both servers' active expiry (hz 10) to have
			// removed it: DBSIZE counts an expired key until then.
			time.Sleep(300 * time.Millisecond)
			compareAll(t, p)

			// Incremental commands: redis-server -> Keyhive -> redis-server.
			copyAOFDir(t, p.Redis(), p.Keyhive())
			loadAOF(t, p.Keyhive())
			compareAll(t, p)
			copyAOFDir(t, p.Keyhive(), p.Redis())
			loadAOF(t, p.Redis())
			compareAll(t, p)

			// Rewritten bases, both ways.
			for _, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
				if r := c.Do("BGREWRITEAOF"); !strings.HasPrefix(r.Str, "Background append only file rewriting") {
					t.Fatalf("%s: BGREWRITEAOF: %v", c.Name(), r)
				}
				waitInfo(t, c, "aof_rewrite_in_progress:0")
			}
			p.Do("SET", "after:rewrite", "1")
			copyAOFDir(t, p.Redis(), p.Keyhive())
			loadAOF(t, p.Keyhive())
			compareAll(t, p)
			copyAOFDir(t, p.Keyhive(), p.Redis())
			loadAOF(t, p.Redis())
			compareAll(t, p)
		})
	}
}

func TestAOFInfoFields(t *testing.T) {
	p := difftest.StartIsolated(t, "--appendonly", "yes")
	info := func(c *difftest.Client) map[string]string {
		m := map[string]string{}
		for _, l := range strings.Split(c.Do("INFO", "persistence").Str, "\r\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.HasPrefix(k, "aof_") {
				m[k] = v
			}
		}
		return m
	}
	r, k := info(p.Redis()), info(p.Keyhive())
	for name := range r {
		if _, ok := k[name]; !ok {
			t.Errorf("INFO persistence lacks %s", name)
		}
	}
	for _, name := range []string{"aof_enabled", "aof_rewrite_in_progress", "aof_last_bgrewrite_status", "aof_last_write_status", "aof_rewrites"} {
		if r[name] != k[name] {
			t.Errorf("%s: redis %q, keyhive %q", name, r[name], k[name])
		}
	}
	p.Do("BGREWRITEAOF")
}

// TestAOFTruncatedAndCorrupt: a file cut inside a command loads up to the
// last whole command under aof-load-truncated yes (and is cut back), and is
// refused under no; bytes that are not a command are refused; both with
// Redis's message naming the file.
func TestAOFTruncatedAndCorrupt(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	srv, rdb := reopenAOF(t, dir)
	for i := range 10 {
		rdb.Set(ctx, "k"+strconv.Itoa(i), i, 0)
	}
	rdb.Close()
	srv.Close()
	path := incrFile(t, dir)
	data, _ := os.ReadFile(path)
	os.WriteFile(path, data[:len(data)-5], 0o644) // the last SET cut short

	name := filepath.Base(path)
	if _, err := newKeyhive(t, "--dir", dir, "--appendonly", "yes", "--aof-load-truncated", "no"); err == nil || !strings.HasPrefix(err.Error(), "Unexpected end of file reading the append only file "+name+". ") {
		t.Fatalf("aof-load-truncated no: %v", err)
	}
	srv, rdb = reopenAOF(t, dir)
	if n := rdb.DBSize(ctx).Val(); n != 9 {
		t.Errorf("after a truncated load: %d keys, want 9", n)
	}
	rdb.Set(ctx, "after", "1", 0)
	rdb.Close()
	srv.Close()
	// The cut-back file and the new write load cleanly.
	srv, rdb = reopenAOF(t, dir, "--aof-load-truncated", "no")
	if n := rdb.DBSize(ctx).Val(); n != 10 {
		t.Errorf("after reopening: %d keys, want 10", n)
	}
	rdb.Close()
	srv.Close()

	data, _ = os.ReadFile(path)
	corrupt := append(append([]byte{}, data[:40]...), "garbage\r\n"...)
	corrupt = append(corrupt, data[40:]...)
	os.WriteFile(path, corrupt, 0o644)
	if _, err := newKeyhive(t, "--dir", dir, "--appendonly", "yes"); err == nil || !strings.HasPrefix(err.Error(), "Bad file format reading the append only file "+name+": ") {
		t.Fatalf("corrupt AOF: %v", err)
	}
}

// TestAOFRewriteUnderWrites: BGREWRITEAOF while clients write; after a
// restart every acknowledged write is there.
func TestAOFRewriteUnderWrites(t *testing.T) {
	dir := t.TempDir()
	srv, err := newKeyhive(t, "--dir", dir, "--appendonly", "yes")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: 8})
	for i := range 20000 {
		rdb.Set(ctx, "pre:"+strconv.Itoa(i), strings.Repeat("v", 50), 0)
	}
	var wg sync.WaitGroup
	const writers, perWriter = 8, 2000
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				rdb.Incr(ctx, "counter:"+strconv.Itoa(w))
				rdb.RPush(ctx, "list:"+strconv.Itoa(w), i)
			}
		})
	}
	for range 3 {
		rdb.BgRewriteAOF(ctx)
		time.Sleep(20 * time.Millisecond)
	}
	wg.Wait()
	for {
		info := rdb.Info(ctx, "persistence").Val()
		if strings.Contains(info, "aof_rewrite_in_progress:0") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	rdb.Close()
	srv.Close()
	srv, rdb = reopenAOF(t, dir)
	defer rdb.Close()
	for w := range writers {
		if v, _ := rdb.Get(ctx, "counter:"+strconv.Itoa(w)).Int(); v != perWriter {
			t.Errorf("counter %d = %d, want %d", w, v, perWriter)
		}
		if n := rdb.LLen(ctx, "list:"+strconv.Itoa(w)).Val(); n != perWriter {
			t.Errorf("list %d has %d elements, want %d", w, n, perWriter)
		}
	}
	if n := rdb.DBSize(ctx).Val(); n != 20000+2*writers {
		t.Errorf("%d keys, want %d", n, 20000+2*writers)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "appendonlydir", "*"))
	if len(files) != 3 {
		t.Errorf("after rewrites the directory holds %v, want a base, one incremental file and the manifest", files)
	}
}

// TestAOFEnableAtRunTime: CONFIG SET appendonly yes writes a base of the
// data set and logs what follows; no stops it.
func TestAOFEnableAtRunTime(t *testing.T) {
	dir := t.TempDir()
	srv := startKeyhive(t, "--dir", dir)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	rdb.Set(ctx, "before", "1", 0)
	if err := rdb.ConfigSet(ctx, "appendonly", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(rdb.Info(ctx, "persistence").Val(), "aof_rewrite_in_progress:0") {
		time.Sleep(10 * time.Millisecond)
	}
	rdb.Set(ctx, "after", "2", 0)
	rdb.Close()
	srv.Close()
	_, rdb = reopenAOF(t, dir)
	if v := rdb.MGet(ctx, "before", "after").Val(); len(v) != 2 || v[0] != "1" || v[1] != "2" {
		t.Errorf("after a restart: %v", v)
	}
}

// TestAOFStopDuringRewrite: CONFIG SET appendonly no while a rewrite runs
// (slowed by rdb-key-save-delay) cancels it, as Redis kills its rewrite
// child, instead of waiting for it while holding the locks it needs (the
// whole server stopped). appendonly yes right after starts a new one once
// the cancelled one ends, and the AOF it writes has every key.
func TestAOFStopDuringRewrite(t *testing.T) {
	dir := t.TempDir()
	srv := startKeyhive(t, "--dir", dir, "--appendonly", "yes", "--rdb-key-save-delay", "1000")
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	for i := range 2000 {
		rdb.Set(ctx, fmt.Sprint("k", i), i, 0)
	}
	if err := rdb.BgRewriteAOF(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the rewrite to start", func() bool {
		return strings.Contains(rdb.Info(ctx, "persistence").Val(), "aof_rewrite_in_progress:1")
	})
	done := make(chan error, 1)
	go func() { done <- rdb.ConfigSet(ctx, "appendonly", "no").Err() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("CONFIG SET appendonly no waited for the rewrite (2000 keys at 1 ms each)")
	}
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	rdb.ConfigSet(ctx, "rdb-key-save-delay", "0")
	if err := rdb.ConfigSet(ctx, "appendonly", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the AOF to be on again", func() bool {
		info := rdb.Info(ctx, "persistence").Val()
		return strings.Contains(info, "aof_enabled:1") && strings.Contains(info, "aof_rewrite_in_progress:0")
	})
	rdb.Set(ctx, "after", "x", 0)
	rdb.Close()
	srv.Close()
	_, rdb = reopenAOF(t, dir)
	if n := rdb.DBSize(ctx).Val(); n != 2001 {
		t.Errorf("after a restart from the AOF: %d keys, want 2001", n)
	}
}
