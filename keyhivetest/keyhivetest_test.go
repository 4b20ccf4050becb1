package keyhivetest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/keyhivetest"
)

func client(t *testing.T, srv *keyhivetest.Server) *redis.Client {
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// TestChecks writes with a client and with the checks and reads each back
// the other way.
func TestChecks(t *testing.T) {
	srv := keyhivetest.Run(t)
	rdb := client(t, srv)
	ctx := context.Background()

	srv.Set("greeting", "hello")
	if v := rdb.Get(ctx, "greeting").Val(); v != "hello" {
		t.Errorf("GET greeting: %q", v)
	}
	rdb.RPush(ctx, "queue", "a", "b", "c")
	rdb.SAdd(ctx, "tags", "x", "z", "y")
	srv.HSet("user:1", "name", "ada", "lang", "go")
	if v := rdb.HGet(ctx, "user:1", "lang").Val(); v != "go" {
		t.Errorf("HGET user:1 lang: %q", v)
	}

	srv.CheckGet(t, "greeting", "hello")
	srv.CheckList(t, "queue", "a", "b", "c")
	srv.CheckMembers(t, "tags", "y", "x", "z")
	if v, ok := srv.HGet("user:1", "name"); !ok || v != "ada" {
		t.Errorf("HGet: %q %v", v, ok)
	}
	if _, ok := srv.HGet("user:1", "age"); ok {
		t.Error("HGet found a missing field")
	}
	if _, ok := srv.Get("missing"); ok {
		t.Error("Get found a missing key")
	}
	if got, want := srv.Keys(), []string{"greeting", "queue", "tags", "user:1"}; !slices.Equal(got, want) {
		t.Errorf("Keys: %q, want %q", got, want)
	}
	if got := srv.Type("user:1"); got != "hash" {
		t.Errorf("Type: %q", got)
	}
	if got := srv.Type("missing"); got != "none" {
		t.Errorf("Type of a missing key: %q", got)
	}
	if !srv.Del("greeting") || srv.Del("greeting") || srv.Exists("greeting") {
		t.Error("Del: the key was not deleted once")
	}

	srv.FlushAll()
	if keys := srv.Keys(); len(keys) != 0 {
		t.Errorf("after FlushAll: %q", keys)
	}
}

// TestFlushAllDatabases checks that FlushAll empties every database, not
// only the checks' database 0.
func TestFlushAllDatabases(t *testing.T) {
	srv := keyhivetest.Run(t)
	ctx := context.Background()
	db3 := redis.NewClient(&redis.Options{Addr: srv.Addr(), DB: 3})
	defer db3.Close()
	db3.Set(ctx, "k", "v", 0)
	srv.FlushAll()
	if n := db3.DBSize(ctx).Val(); n != 0 {
		t.Errorf("database 3 has %d keys after FlushAll", n)
	}
}

// TestFastForwardLazyExpiry moves the clock to just before and just past a
// TTL: the key, read at once, is there and then gone, as on Redis.
func TestFastForwardLazyExpiry(t *testing.T) {
	srv := keyhivetest.Run(t)
	rdb := client(t, srv)
	ctx := context.Background()

	rdb.Set(ctx, "lock", "1", 10*time.Second)
	srv.Set("plain", "v")
	srv.SetTTL("plain", 2500*time.Millisecond)
	if ttl := srv.TTL("lock"); ttl != 10*time.Second {
		t.Errorf("TTL: %v", ttl)
	}
	start := srv.Now()
	srv.FastForward(9 * time.Second)
	if got := srv.Now().Sub(start); got != 9*time.Second {
		t.Errorf("Now moved by %v", got)
	}
	if ttl := rdb.TTL(ctx, "lock").Val(); ttl != time.Second {
		t.Errorf("TTL after 9s: %v", ttl)
	}
	if srv.Exists("plain") {
		t.Error("a key with a TTL of 2.5s exists after 9s")
	}
	srv.FastForward(time.Second)
	if srv.Exists("lock") || srv.TTL("lock") != 0 {
		t.Error("the key outlived its TTL")
	}
	if ok, err := rdb.SetNX(ctx, "lock", "2", 10*time.Second).Result(); err != nil || !ok {
		t.Errorf("SET NX after the TTL: %v %v", ok, err)
	}
	if srv.TTL("missing") != 0 {
		t.Error("TTL of a missing key is not 0")
	}
}

// TestFastForwardActiveExpiry moves the clock past the TTL of keys nothing
// reads: the server's active expiry cycle removes them, as Redis's does.
func TestFastForwardActiveExpiry(t *testing.T) {
	srv := keyhivetest.Run(t)
	rdb := client(t, srv)
	ctx := context.Background()
	for i := range 200 {
		rdb.Set(ctx, fmt.Sprint("temp:", i), "v", time.Minute)
	}
	rdb.Set(ctx, "kept", "v", 0)
	srv.FastForward(time.Minute)
	deadline := time.Now().Add(5 * time.Second)
	for rdb.DBSize(ctx).Val() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("DBSIZE still %d after 5s", rdb.DBSize(ctx).Val())
		}
		time.Sleep(10 * time.Millisecond)
	}
	info := rdb.Info(ctx, "stats").Val()
	if !strings.Contains(info, "expired_keys:200\r\n") {
		t.Errorf("INFO stats does not count 200 expired keys:\n%s", info)
	}
}

// TestRunWith starts a server with directives and checks they apply.
func TestRunWith(t *testing.T) {
	srv := keyhivetest.RunWith(t, "maxmemory", "100mb", "maxmemory-policy", "allkeys-lru", "requirepass", "secret")
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), Password: "secret"})
	defer rdb.Close()
	got := rdb.ConfigGet(context.Background(), "maxmemory*").Val()
	if got["maxmemory"] != "104857600" || got["maxmemory-policy"] != "allkeys-lru" {
		t.Errorf("CONFIG GET: %v", got)
	}
	srv.Set("k", "v") // the checks authenticate
	srv.CheckGet(t, "k", "v")
}

// TestIdleTimeout moves the clock past the timeout directive: the server
// closes the idle checks' connection, and the next check opens a new one.
func TestIdleTimeout(t *testing.T) {
	srv := keyhivetest.RunWith(t, "timeout", "1")
	srv.Set("k", "v")
	srv.FastForward(3 * time.Second)
	time.Sleep(300 * time.Millisecond) // the cron's next ticks close it
	srv.CheckGet(t, "k", "v")
}

func TestStartRefusesBadDirectives(t *testing.T) {
	for _, d := range [][]string{{"maxmemory"}, {"no-such-directive", "1"}, {"maxmemory", "lots"}} {
		if srv, err := keyhivetest.Start(d...); err == nil {
			srv.Close()
			t.Errorf("Start(%q) succeeded", d)
		}
	}
}

// recorder is a test that records its errors instead of failing.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestChecksReport checks that a mismatch and an unexpected reply (a key of
// another type) fail the test with a message naming the key.
func TestChecksReport(t *testing.T) {
	rec := &recorder{TB: t}
	srv := keyhivetest.Run(rec)
	srv.Set("s", "v")
	srv.HSet("h", "f", "v")
	srv.CheckGet(rec, "s", "other")
	srv.CheckGet(rec, "missing", "v")
	srv.CheckList(rec, "s")
	if v, ok := srv.Get("h"); ok || v != "" {
		t.Errorf("Get of a hash: %q %v", v, ok)
	}
	want := []string{
		`s: got "v", want "other"`,
		`missing: no such key, want "v"`,
		"keyhivetest: [LRANGE s 0 -1]: WRONGTYPE",
		"keyhivetest: [GET h]: WRONGTYPE",
	}
	if len(rec.errs) != len(want) {
		t.Fatalf("errors reported: %q", rec.errs)
	}
	for i, e := range rec.errs {
		if !strings.HasPrefix(e, want[i]) {
			t.Errorf("error %d: %q, want %q...", i, e, want[i])
		}
	}
}

// TestStartPanics checks that a server without a test panics where Run's
// would fail the test.
func TestStartPanics(t *testing.T) {
	srv, err := keyhivetest.Start()
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	srv.Close()
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "closed") {
			t.Errorf("recovered %v", r)
		}
	}()
	srv.Exists("k")
}

// TestConcurrent drives one server from many goroutines, through clients
// and the checks, while the clock moves (run with -race).
func TestConcurrent(t *testing.T) {
	srv := keyhivetest.Run(t)
	rdb := client(t, srv)
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				key := fmt.Sprintf("g%d:%d", g, i)
				rdb.Set(ctx, key, "v", time.Hour)
				if _, ok := srv.Get(key); !ok && srv.TTL(key) > 0 {
					t.Errorf("%s: a live key is missing", key)
				}
				rdb.Incr(ctx, fmt.Sprintf("count:%d", g))
				if i%10 == 0 {
					srv.FastForward(time.Second)
					srv.Keys()
				}
			}
		})
	}
	wg.Wait()
	for g := range 8 {
		srv.CheckGet(t, fmt.Sprintf("count:%d", g), "50")
	}
}

// TestRunLeavesWorkingDirectory: a server started in a working directory
// holding a dump.rdb does not load it, and after Close neither that
// directory nor the server's own data directory keeps anything of it.
func TestRunLeavesWorkingDirectory(t *testing.T) {
	saved := t.TempDir()
	writer := keyhivetest.RunWith(t, "dir", saved)
	writer.Set("stray", "loaded")
	if r := difftest.InlineLine(writer.Addr(), "SAVE"); r != "+OK" {
		t.Fatalf("SAVE: %q", r)
	}
	writer.Close()
	dump, err := os.ReadFile(filepath.Join(saved, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	wd := t.TempDir()
	t.Chdir(wd)
	if err := os.WriteFile("dump.rdb", dump, 0o644); err != nil {
		t.Fatal(err)
	}

	srv := keyhivetest.Run(t)
	if srv.Exists("stray") {
		t.Error("the working directory's dump.rdb was loaded")
	}
	srv.Set("k", "v")
	r, err := difftest.Inline(srv.Addr(), "CONFIG GET dir")
	if err != nil || len(r.Elems) != 2 {
		t.Fatalf("CONFIG GET dir: %q %v", r.Raw, err)
	}
	dataDir := r.Elems[1].Str
	srv.Close()
	if _, err := os.Stat(dataDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the data directory %s is still there after Close (%v)", dataDir, err)
	}
	entries, err := os.ReadDir(wd)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "dump.rdb" {
		t.Errorf("the working directory holds %v, want only dump.rdb", entries)
	}
	if data, err := os.ReadFile("dump.rdb"); err != nil || !slices.Equal(data, dump) {
		t.Errorf("dump.rdb changed (%v)", err)
	}
}
