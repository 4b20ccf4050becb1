package workloads_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/workloads"
)

// servers is one redis-server and one in-process Keyhive shared by the tests
// (each test starts with FLUSHALL and SCRIPT FLUSH on both).
var servers struct {
	redis, keyhive string
}

func TestMain(m *testing.M) {
	var stops []func()
	for _, start := range []struct {
		addr *string
		fn   func(...string) (string, func(), error)
	}{{&servers.redis, difftest.StartRedis}, {&servers.keyhive, difftest.StartKeyhive}} {
		var args []string
		if start.addr == &servers.keyhive {
			// Keyhive knows the seeds' key schemas: the scenarios must
			// behave exactly as on redis-server with them declared.
			schema, err := filepath.Abs("schema.conf")
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			args = []string{"--include", schema}
		}
		addr, stop, err := start.fn(args...)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		*start.addr = addr
		stops = append(stops, stop)
	}
	code := m.Run()
	for _, stop := range stops {
		stop()
	}
	os.Exit(code)
}

func TestDNS(t *testing.T)         { checkWorkload(t, workloads.DNS) }
func TestQuickLink(t *testing.T)   { checkWorkload(t, workloads.QuickLink) }
func TestWaitingRoom(t *testing.T) { checkWorkload(t, workloads.WaitingRoom) }
func TestIPX(t *testing.T)         { checkWorkload(t, workloads.IPX) }
func TestCMS(t *testing.T)         { checkWorkload(t, workloads.CMS) }

// TestQuickLinkUnderMaxmemory runs seed 001's volatile-lru configuration on
// both servers and compares what the application relies on.
func TestQuickLinkUnderMaxmemory(t *testing.T) {
	ctx := context.Background()
	envs := map[string]*workloads.Env{}
	errs := map[string]error{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, addr := range map[string]string{"redis": servers.redis, "keyhive": servers.keyhive} {
		env := workloads.NewEnv(addr)
		defer env.Close()
		envs[name] = env
		wg.Go(func() {
			err := env.Unrecorded().FlushAll(ctx).Err()
			if err == nil {
				err = workloads.QuickLinkUnderMaxmemory(ctx, env)
			}
			mu.Lock()
			errs[name] = err
			mu.Unlock()
		})
	}
	wg.Wait()
	if errs["redis"] != nil || errs["keyhive"] != nil {
		t.Fatalf("redis: %v, keyhive: %v", errs["redis"], errs["keyhive"])
	}
	if diffs := workloads.Compare(envs["redis"].Transcripts(), envs["keyhive"].Transcripts(), 10); len(diffs) > 0 {
		t.Errorf("differences:\n%s", strings.Join(diffs, "\n"))
	}
	for _, r := range envs["keyhive"].Transcripts()["maxmemory"] {
		t.Log(r.Line)
	}
}

// checkWorkload runs w's scenario against redis-server and Keyhive at the
// same time (so their sleeps overlap) and compares every reply of every
// client and then the two data sets.
func checkWorkload(t *testing.T, w workloads.Workload) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runs := map[string]*run{}
	var wg sync.WaitGroup
	for name, addr := range map[string]string{"redis": servers.redis, "keyhive": servers.keyhive} {
		r := &run{env: workloads.NewEnv(addr)}
		runs[name] = r
		admin := redis.NewClient(&redis.Options{Addr: addr})
		defer admin.Close()
		if err := admin.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if err := admin.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			defer r.env.Close()
			if r.err = w.Scenario(ctx, r.env); r.err == nil {
				r.dump, r.err = workloads.Dump(ctx, admin)
			}
		})
	}
	wg.Wait()
	red, kh := runs["redis"], runs["keyhive"]
	if diffs := workloads.Compare(red.env.Transcripts(), kh.env.Transcripts(), 10); len(diffs) > 0 {
		t.Errorf("replies differ:\n%s", strings.Join(diffs, "\n"))
	}
	if red.err != nil || kh.err != nil {
		t.Fatalf("scenario failed: redis: %v, keyhive: %v", red.err, kh.err)
	}
	if len(red.dump) == 0 {
		t.Error("the scenario left an empty data set")
	}
	checkSchemaCovers(t, kh.dump)
	for i := range max(len(red.dump), len(kh.dump)) {
		var r, k string
		if i < len(red.dump) {
			r = red.dump[i]
		}
		if i < len(kh.dump) {
			k = kh.dump[i]
		}
		if r != k {
			t.Fatalf("data sets differ at key #%d of %d/%d:\n  redis:   %s\n  keyhive: %s", i, len(red.dump), len(kh.dump), r, k)
		}
	}
	n := 0
	for _, tr := range red.env.Transcripts() {
		n += len(tr)
	}
	t.Logf("%d replies and %d keys identical", n, len(red.dump))
}

// checkSchemaCovers checks that schema.conf declares a namespace for every
// key a scenario left (dump lines start with the key), from Keyhive's own
// attribution: the default namespace holds none of them.
func checkSchemaCovers(t *testing.T, dump []string) {
	t.Helper()
	admin := redis.NewClient(&redis.Options{Addr: servers.keyhive})
	defer admin.Close()
	info, err := admin.Info(context.Background(), "namespaces").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if strings.HasPrefix(line, "ns_default:keys=") && !strings.HasPrefix(line, "ns_default:keys=0,") {
			t.Errorf("keys outside every declared namespace: %s\n%s", line, strings.Join(dump, "\n"))
		}
	}
}
