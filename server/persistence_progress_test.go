package server_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestBgsaveProgressInfo: while a slowed-down BGSAVE runs, INFO persistence
// reports its progress as redis-server 7.4 reports its child's
// (current_save_keys_total, _processed, current_fork_perc); when it ends
// they go back to 0 and rdb_changes_since_last_save keeps the writes made
// during the save, and the next BGSAVE clears it (Redis's rdb.tcl "bgsave
// resets the change counter").
func TestBgsaveProgressInfo(t *testing.T) {
	p := difftest.StartIsolated74(t)
	watchSnapshotProgress(t, p, "BGSAVE", "rdb_bgsave_in_progress")
	idle := func() {
		t.Helper()
		for _, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
			inf := c.Do("INFO", "persistence").Str
			for _, name := range []string{"current_save_keys_total", "current_save_keys_processed", "current_cow_size", "current_cow_peak"} {
				if v := infoField(inf, name); v != "0" {
					t.Errorf("%s: %s:%s with no save running, want 0", c.Name(), name, v)
				}
			}
			if v := infoField(inf, "current_fork_perc"); v != "0.00" {
				t.Errorf("%s: current_fork_perc:%s with no save running, want 0.00", c.Name(), v)
			}
		}
	}
	idle()
	changes := func() {
		t.Helper()
		r := infoField(p.Redis().Do("INFO", "persistence").Str, "rdb_changes_since_last_save")
		k := infoField(p.Keyhive().Do("INFO", "persistence").Str, "rdb_changes_since_last_save")
		if r != k {
			t.Errorf("rdb_changes_since_last_save: redis %s, keyhive %s", r, k)
		}
	}
	changes() // the two writes made during the save
	p.Do("BGSAVE")
	for _, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
		waitUntil(t, c.Name()+": the second BGSAVE to end", func() bool {
			inf := c.Do("INFO", "persistence").Str
			return infoField(inf, "rdb_bgsave_in_progress") == "0" && infoField(inf, "rdb_last_bgsave_status") == "ok" && infoInt(t, inf, "rdb_saves") >= 2
		})
	}
	changes()
	idle()
}

// TestRewriteProgressInfo: INFO persistence follows a BGREWRITEAOF's
// snapshot as it follows a BGSAVE's.
func TestRewriteProgressInfo(t *testing.T) {
	p := difftest.StartIsolated74(t, "--appendonly", "yes")
	watchSnapshotProgress(t, p, "BGREWRITEAOF", "aof_rewrite_in_progress")
	for _, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
		inf := c.Do("INFO", "persistence").Str
		if v := infoField(inf, "current_save_keys_total"); v != "0" {
			t.Errorf("%s: current_save_keys_total:%s after the rewrite, want 0", c.Name(), v)
		}
	}
}

// watchSnapshotProgress fills both servers, starts a slowed-down snapshot
// with start and, while running (an INFO persistence field) is 1, checks
// that both report its progress alike: all the keys as the total, some
// processed, the percentage of them; then lets it finish. Two writes are
// made while it runs.
func watchSnapshotProgress(t *testing.T, p *difftest.Pair, start, running string) {
	t.Helper()
	const keys = 3000
	value := strings.Repeat("v", 100)
	for i := range keys {
		p.Send("SET", "key"+strconv.Itoa(i), value)
	}
	for range keys {
		p.Read()
	}
	// 1 ms a key: Redis's child reports its progress once a second.
	p.Do("CONFIG", "SET", "rdb-key-save-delay", "1000")
	p.Do(start)
	p.Do("SET", "during:1", "x")
	p.Do("SET", "during:2", "x")
	for _, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
		waitUntil(t, c.Name()+": current_save_keys_processed > 0", func() bool {
			inf := c.Do("INFO", "persistence").Str
			return infoInt(t, inf, "current_save_keys_processed") > 0 || infoField(inf, running) == "0"
		})
		inf := c.Do("INFO", "persistence").Str
		if infoField(inf, running) != "1" {
			t.Fatalf("%s: the %s ended before its progress was seen", c.Name(), start)
		}
		total, done := infoInt(t, inf, "current_save_keys_total"), infoInt(t, inf, "current_save_keys_processed")
		if total != keys || done <= 0 || done > total {
			t.Errorf("%s: current_save_keys_processed %d of current_save_keys_total %d, want 0 < processed <= %d", c.Name(), done, total, keys)
		}
		perc, err := strconv.ParseFloat(infoField(inf, "current_fork_perc"), 64)
		if want := float64(done) * 100 / float64(total); err != nil || perc < want-0.01 || perc > want+0.01 {
			t.Errorf("%s: current_fork_perc %q, want %.2f", c.Name(), infoField(inf, "current_fork_perc"), want)
		}
	}
	p.Do("CONFIG", "SET", "rdb-key-save-delay", "0")
	for _, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
		waitInfo(t, c, running+":0")
	}
}

// TestRewriteInsideExec: BGREWRITEAOF inside MULTI is scheduled (the
// transaction holds what the snapshot instant needs) and the cron runs it,
// as Redis's in_exec case.
func TestRewriteInsideExec(t *testing.T) {
	p := difftest.StartIsolated74(t, "--appendonly", "yes")
	p.Do("SET", "k", "v")
	before := map[string]int64{}
	for _, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
		before[c.Name()] = infoInt(t, c.Do("INFO", "persistence").Str, "aof_rewrites")
	}
	p.Do("MULTI")
	p.Do("BGREWRITEAOF")
	p.Do("SET", "k", "w")
	p.Do("EXEC")
	for _, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
		waitUntil(t, c.Name()+": the scheduled rewrite to run", func() bool {
			inf := c.Do("INFO", "persistence").Str
			return infoField(inf, "aof_rewrite_in_progress") == "0" && infoField(inf, "aof_rewrite_scheduled") == "0" &&
				infoField(inf, "aof_last_bgrewrite_status") == "ok" && infoInt(t, inf, "aof_rewrites") > before[c.Name()]
		})
	}
	p.Do("DEBUG", "LOADAOF")
	p.Do("GET", "k")
}
