package server_test

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestReplSyncFootprint measures a full sync of a large data set under a
// write load, for Keyhive and redis-server as the master (a redis-server
// replica for both): the master's peak RSS during the sync against its RSS
// before, and the writes' p99 without and during the sync. It runs with
// KEYHIVE_REPL_FOOTPRINT=<keys> (e.g. 5000000).
func TestReplSyncFootprint(t *testing.T) {
	keys, _ := strconv.Atoi(os.Getenv("KEYHIVE_REPL_FOOTPRINT"))
	if keys == 0 {
		t.Skip("set KEYHIVE_REPL_FOOTPRINT=<keys> to measure")
	}
	bin, err := difftest.BuildKeyhive(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"keyhive", "redis"} {
		var master *replNode
		if name == "keyhive" {
			master = processNode(t, bin, "keyhive", "--repl-diskless-sync", "yes")
		} else {
			master = startReplNode(t, true, "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0")
		}
		master.conn.Timeout = 5 * time.Minute
		master.ok(t, "DEBUG", "POPULATE", keys, "key", 16)
		pid := master.info(t, "server", "process_id")
		os.WriteFile("/proc/"+pid+"/clear_refs", []byte("5"), 0) // resets VmHWM
		before := procKB(t, pid, "VmRSS")

		var mu sync.Mutex
		var lat []time.Duration
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			c, err := difftest.Dial(master.addr)
			if err != nil {
				return
			}
			defer c.Close()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				c.Do("SET", "key:"+strconv.Itoa(i*7919%keys), i)
				mu.Lock()
				lat = append(lat, time.Since(start))
				mu.Unlock()
			}
		}()
		take := func() []time.Duration {
			mu.Lock()
			defer mu.Unlock()
			l := lat
			lat = nil
			return l
		}
		time.Sleep(3 * time.Second)
		quiet := take()
		replica := startReplNode(t, true)
		began := time.Now()
		replicate(t, master, replica)
		took := time.Since(began)
		during := take()
		close(stop)
		<-done
		peak := procKB(t, pid, "VmHWM")
		cow := master.info(t, "persistence", "rdb_last_cow_size")
		t.Logf("%s master, %d keys: RSS %d MB before, peak %d MB during the sync (%.2fx; its process only, a fork's child not counted; rdb_last_cow_size %s); sync %v; SET p99 %v without, %v during (%d, %d samples)",
			name, keys, before>>10, peak>>10, float64(peak)/float64(before), cow, took.Round(time.Millisecond),
			p99(quiet), p99(during), len(quiet), len(during))
	}
}

func p99(l []time.Duration) time.Duration {
	if len(l) == 0 {
		return 0
	}
	slices.Sort(l)
	return l[len(l)*99/100]
}

// procKB reads a field of /proc/<pid>/status, in kB.
func procKB(t *testing.T, pid, field string) int64 {
	data, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return kb
		}
	}
	t.Fatalf("no %s in /proc/%s/status", field, pid)
	return 0
}
