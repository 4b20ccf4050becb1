package server_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/persistence"
)

// fill writes n string keys of size bytes with pipelined MSETs.
func fill(t *testing.T, c *difftest.Conn, n, size int) {
	t.Helper()
	value := strings.Repeat("v", size)
	const batch = 1000
	for i := 0; i < n; i += batch {
		args := []any{"MSET"}
		for j := i; j < min(i+batch, n); j++ {
			args = append(args, "key:"+strconv.Itoa(j), value)
		}
		if err := c.Send(args...); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i += batch {
		if _, err := c.Read(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBgsaveUnderWrites checks that BGSAVE saves one instant while writers
// continue: pairs of counters in different shards, always incremented
// together in MULTI, are equal in the file; writes complete during the
// save; and the extra memory (records of keys changed ahead of the saver)
// is a small part of the file.
func TestBgsaveUnderWrites(t *testing.T) {
	dir := t.TempDir()
	srv, err := newKeyhive(t, "--dir", dir, "--rdbcompression", "no")
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, srv.Addr())
	fill(t, c, 100000, 100)
	const pairs = 4
	var stop atomic.Bool
	var during atomic.Int64
	var saving atomic.Bool
	var wg sync.WaitGroup
	for w := range pairs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wc, err := difftest.Dial(srv.Addr())
			if err != nil {
				t.Error(err)
				return
			}
			defer wc.Close()
			a, b := fmt.Sprintf("a%d{x%d}", w, w), fmt.Sprintf("b%d{y%d}", w, w)
			for !stop.Load() {
				wc.Send("MULTI")
				wc.Send("INCR", a)
				wc.Send("INCR", b)
				wc.Send("EXEC")
				for range 4 {
					if _, err := wc.Read(); err != nil {
						t.Error(err)
						return
					}
				}
				if saving.Load() {
					during.Add(1)
				}
			}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	saving.Store(true)
	if r := do(t, c, "BGSAVE"); r.Str != "Background saving started" {
		t.Fatalf("BGSAVE: %v", r)
	}
	deadline := time.Now().Add(30 * time.Second)
	for info(t, c, "rdb_bgsave_in_progress") != "0" {
		if time.Now().After(deadline) {
			t.Fatal("BGSAVE did not finish")
		}
		time.Sleep(time.Millisecond)
	}
	saving.Store(false)
	stop.Store(true)
	wg.Wait()
	if s := info(t, c, "rdb_last_bgsave_status"); s != "ok" {
		t.Fatalf("rdb_last_bgsave_status:%s", s)
	}
	data, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	counters := map[string]string{}
	keys := 0
	err = persistence.Load(data, true, persistence.Handler{Key: func(r *persistence.Record) error {
		keys++
		if r.Key[0] != 'k' {
			counters[string(r.Key)] = string(r.Value.Str)
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	for w := range pairs {
		a, b := counters[fmt.Sprintf("a%d{x%d}", w, w)], counters[fmt.Sprintf("b%d{y%d}", w, w)]
		if a != b || a == "" {
			t.Errorf("pair %d: a=%q b=%q in the snapshot", w, a, b)
		}
	}
	extra, _ := strconv.Atoi(info(t, c, "rdb_last_cow_size"))
	t.Logf("%d keys, file %d bytes, %d transactions during the save, extra memory %d bytes (%.2f%% of the file)",
		keys, len(data), during.Load(), extra, 100*float64(extra)/float64(len(data)))
	if keys < 100000 {
		t.Errorf("%d keys in the file", keys)
	}
	if extra > len(data)/10 {
		t.Errorf("extra memory %d for a %d-byte file", extra, len(data))
	}
}

// TestStartupLoadAndShutdownSave covers the server's life cycle: SHUTDOWN
// saves when save points are configured, start-up loads the file (expired
// keys skipped), SHUTDOWN NOSAVE does not save, and a corrupt file stops
// start-up with an error naming the file and the offset.
func TestStartupLoadAndShutdownSave(t *testing.T) {
	dir := t.TempDir()
	srv, err := newKeyhive(t, "--dir", dir, "--save", "3600 1")
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, srv.Addr())
	do(t, c, "SET", "k", "v")
	do(t, c, "SET", "gone", "v", "PX", "100")
	do(t, c, "HSET", "h", "f", "v")
	c.Send("SHUTDOWN")
	<-srv.Done()
	time.Sleep(150 * time.Millisecond) // "gone" expires while the server is down

	srv, err = newKeyhive(t, "--dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	c = dial(t, srv.Addr())
	if r := do(t, c, "GET", "k"); r.Str != "v" {
		t.Fatalf("GET k after restart: %v", r)
	}
	if r := do(t, c, "DBSIZE"); r.Int != 2 {
		t.Fatalf("DBSIZE after restart: %v", r)
	}
	if v := info(t, c, "rdb_last_load_keys_expired"); v != "1" {
		t.Errorf("rdb_last_load_keys_expired:%s", v)
	}
	do(t, c, "SET", "unsaved", "v")
	c.Send("SHUTDOWN", "NOSAVE")
	<-srv.Done()
	srv, err = newKeyhive(t, "--dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	if r := do(t, dial(t, srv.Addr()), "EXISTS", "unsaved"); r.Int != 0 {
		t.Fatal("SHUTDOWN NOSAVE saved")
	}
	srv.Close()

	path := filepath.Join(dir, "dump.rdb")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, data[:len(data)-30], 0o644)
	_, err = newKeyhive(t, "--dir", dir)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "offset") {
		t.Fatalf("start-up on a truncated file: %v", err)
	}
}

// TestSavePoint checks that a save point (3 changes, more than a second
// after the last save) triggers a background save from the cron.
func TestSavePoint(t *testing.T) {
	dir := t.TempDir()
	srv, err := newKeyhive(t, "--dir", dir, "--save", "1 3")
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, srv.Addr())
	before := info(t, c, "rdb_saves")
	do(t, c, "MSET", "a", "1", "b", "2", "c", "3")
	waitUntil(t, "a background save after the save point's changes", func() bool {
		return info(t, c, "rdb_saves") != before && info(t, c, "rdb_bgsave_in_progress") == "0"
	})
	if v := info(t, c, "rdb_changes_since_last_save"); v != "0" {
		t.Errorf("rdb_changes_since_last_save:%s", v)
	}
	if _, err := os.Stat(filepath.Join(dir, "dump.rdb")); err != nil {
		t.Fatal(err)
	}
}

// TestRestorePropagation checks what RESTORE propagates: a relative TTL as
// an absolute one with ABSTTL appended, and an already expired restore over
// an existing key as its deletion (Redis's restoreCommand rewrites).
func TestRestorePropagation(t *testing.T) {
	srv, err := newKeyhive(t, "--dir", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []string
	srv.OnPropagate(func(db int, argv [][]byte) {
		mu.Lock()
		defer mu.Unlock()
		words := make([]string, len(argv))
		for i, a := range argv {
			words[i] = string(a)
			if len(a) > 20 {
				words[i] = "<payload>"
			}
		}
		got = append(got, strings.Join(words, " "))
	})
	c := dial(t, srv.Addr())
	do(t, c, "SET", "k", strings.Repeat("v", 30))
	payload := do(t, c, "DUMP", "k").Str
	before := time.Now().UnixMilli()
	do(t, c, "RESTORE", "a", "100000", payload)
	do(t, c, "RESTORE", "b", "0", payload)
	do(t, c, "RESTORE", "c", "4102444800000", payload, "ABSTTL")
	do(t, c, "RESTORE", "k", "1", payload, "ABSTTL", "REPLACE")
	do(t, c, "RESTORE", "missing", "1", payload, "ABSTTL")
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 5 || !strings.HasPrefix(got[1], "RESTORE a ") || !strings.HasSuffix(got[1], " <payload> ABSTTL") ||
		got[2] != "RESTORE b 0 <payload>" || got[3] != "RESTORE c 4102444800000 <payload> ABSTTL" || got[4] != "DEL k" {
		t.Fatalf("propagated %q", got)
	}
	at, _ := strconv.ParseInt(strings.Fields(got[1])[2], 10, 64)
	if at < before+100000 || at > time.Now().UnixMilli()+100000 {
		t.Fatalf("RESTORE a propagated with %d, not about now+100s", at)
	}
}

// TestBgsaveIsPointInTime hammers the data set during a BGSAVE (writes,
// deletes, expiry, RENAME, collection edits, then FLUSHDB, SWAPDB and a
// second FLUSHDB, early enough to come while the saver runs; FLUSHALL aborts
// the save, TestFlushallAbortsBgsave) and
// checks that the file holds exactly the data set of the instant BGSAVE
// replied: every key with its type, value and expire time. Nothing writes
// between the reading of the expected data set and BGSAVE, and the writers
// start after its reply.
func TestBgsaveIsPointInTime(t *testing.T) {
	dir := t.TempDir()
	srv, err := newKeyhive(t, "--dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, srv.Addr())
	send := func(args ...any) {
		if err := c.Send(args...); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for db := range 2 {
		send("SELECT", db)
		n++
		for i := range 20000 / (1 + 3*db) {
			switch k := fmt.Sprintf("s:%d", i); {
			case i%10 == 1:
				send("SET", k, strings.Repeat("v", i%90), "PX", 3_600_000+i)
			case i%100 == 2:
				send("SET", k, i, "PX", 300) // expires during the save
			default:
				send("SET", k, i)
			}
			n++
		}
		for i := range 100 {
			size := 5
			if i%50 == 0 {
				size = 1000 // hashtable, skiplist, quicklist of several nodes
			}
			for j := range size {
				send("HSET", fmt.Sprint("h:", i), fmt.Sprint("f", j), j*i)
				send("SADD", fmt.Sprint("set:", i), fmt.Sprint("m", j))
				send("SADD", fmt.Sprint("ints:", i), j)
				send("ZADD", fmt.Sprint("z:", i), j%7, fmt.Sprint("m", j))
				send("RPUSH", fmt.Sprint("l:", i), fmt.Sprint("e", j))
				n += 5
			}
		}
	}
	for range n {
		if r, err := c.Read(); err != nil || r.IsError() {
			t.Fatal(r, err)
		}
	}
	want := [2]map[string]string{dataSet(t, c, 0), dataSet(t, c, 1)}
	var stop atomic.Bool
	var writes atomic.Int64
	var wg sync.WaitGroup
	started := make(chan struct{})
	for w := range 4 {
		wc := dial(t, srv.Addr())
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-started
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := 0; !stop.Load(); i++ {
				k, h := fmt.Sprint("s:", rng.IntN(20000)), fmt.Sprint(rng.IntN(100))
				var cmd []any
				switch r := rng.IntN(1000); {
				case w == 1 && i == 150:
					cmd = []any{"FLUSHDB"}
				case w == 2 && i == 200:
					cmd = []any{"SWAPDB", 0, 1}
				case w == 3 && i == 300:
					cmd = []any{"FLUSHDB"}
				case r < 150:
					cmd = []any{"SET", k, "new"}
				case r < 250:
					cmd = []any{"DEL", k}
				case r < 300:
					cmd = []any{"PEXPIRE", k, 1}
				case r < 350:
					cmd = []any{"APPEND", k, "+"}
				case r < 400:
					cmd = []any{"RENAME", k, fmt.Sprint("s:", rng.IntN(20000))}
				case r < 450:
					cmd = []any{"SET", fmt.Sprint("new:", w, ":", i), i}
				case r < 550:
					cmd = []any{"HSET", "h:" + h, "f1", "x", "new", "y"}
				case r < 600:
					cmd = []any{"HDEL", "h:" + h, "f2"}
				case r < 650:
					cmd = []any{"SADD", "set:" + h, "new"}
				case r < 700:
					cmd = []any{"SREM", "ints:" + h, 3}
				case r < 750:
					cmd = []any{"ZADD", "z:" + h, 100, "m1"}
				case r < 800:
					cmd = []any{"LPUSH", "l:" + h, "new"}
				case r < 850:
					cmd = []any{"RPOP", "l:" + h}
				case r < 900:
					cmd = []any{"RENAME", "h:" + h, "set:" + h}
				case r < 950:
					cmd = []any{"SELECT", rng.IntN(2)}
				default:
					cmd = []any{"DEL", "z:" + h, "l:" + h}
				}
				if _, err := wc.Do(cmd...); err != nil {
					t.Error(err)
					return
				}

				writes.Add(1)
			}
		}()
	}
	if r := do(t, c, "BGSAVE"); r.Str != "Background saving started" {
		t.Fatalf("BGSAVE: %v", r)
	}
	instant := time.Now().UnixMilli()
	close(started)
	deadline := time.Now().Add(60 * time.Second)
	for info(t, c, "rdb_bgsave_in_progress") != "0" {
		if time.Now().After(deadline) {
			t.Fatal("BGSAVE did not finish")
		}
		time.Sleep(time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	if s := info(t, c, "rdb_last_bgsave_status"); s != "ok" {
		t.Fatalf("rdb_last_bgsave_status:%s", s)
	}
	t.Logf("%d writes during the save, %s bytes kept ahead of the saver", writes.Load(), info(t, c, "rdb_last_cow_size"))

	// Every key of the instant is in the file with its expire time, the
	// ones that expired during the save included.
	data, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	inFile := [2]map[string]int64{{}, {}}
	err = persistence.Load(data, true, persistence.Handler{Key: func(r *persistence.Record) error {
		inFile[r.DB][string(r.Key)] = r.ExpireAt
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	for db := range want {
		for k, v := range want[db] {
			at, ok := inFile[db][k]
			wantAt := expireOf(v)
			switch {
			case !ok && wantAt > 0 && wantAt <= instant: // expired before the instant
			case !ok:
				t.Errorf("db %d: %s missing from the file", db, k)
			case at != wantAt:
				t.Errorf("db %d: %s expires at %d in the file, %d at the instant", db, k, at, wantAt)
			}
		}
		for k, at := range inFile[db] {
			if _, ok := want[db][k]; !ok && (at == -1 || at > instant) {
				t.Errorf("db %d: %s in the file, absent at the instant", db, k)
			}
		}
	}

	// Loaded, the file gives the values of the instant.
	time.Sleep(time.Until(time.UnixMilli(instant + 300)))
	loaded, err := newKeyhive(t, "--dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	lc := dial(t, loaded.Addr())
	for db := range want {
		got := dataSet(t, lc, db)
		for k, v := range want[db] {
			if at := expireOf(v); at > 0 && at < time.Now().UnixMilli()+60_000 {
				continue // a short TTL: checked in the file above
			}
			if got[k] != v {
				t.Errorf("db %d: %s = %.80q after loading, %.80q at the instant", db, k, got[k], v)
			}
		}
		for k := range got {
			if _, ok := want[db][k]; !ok {
				t.Errorf("db %d: %s loaded, absent at the instant", db, k)
			}
		}
	}
}

// expireOf returns the expire time in a dataSet value, -1 for none.
func expireOf(v string) int64 {
	at, _ := strconv.ParseInt(strings.SplitN(v, "|", 3)[1], 10, 64)
	return at
}

// dataSet reads every key of database db as "type|pexpiretime|value", the
// value in one canonical form per type (hash fields and set members sorted).
func dataSet(t *testing.T, c *difftest.Conn, db int) map[string]string {
	t.Helper()
	do(t, c, "SELECT", db)
	var keys []string
	for cursor := "0"; ; {
		r := do(t, c, "SCAN", cursor, "COUNT", 1000)
		for _, k := range r.Elems[1].Elems {
			keys = append(keys, k.Str)
		}
		if cursor = r.Elems[0].Str; cursor == "0" {
			break
		}
	}
	for _, k := range keys {
		c.Send("TYPE", k)
		c.Send("PEXPIRETIME", k)
	}
	types, expires := make([]string, len(keys)), make([]int64, len(keys))
	for i := range keys {
		r1, err1 := c.Read()
		r2, err2 := c.Read()
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		types[i], expires[i] = r1.Str, r2.Int
	}
	for i, k := range keys {
		switch types[i] {
		case "string":
			c.Send("GET", k)
		case "hash":
			c.Send("HGETALL", k)
		case "set":
			c.Send("SMEMBERS", k)
		case "zset":
			c.Send("ZRANGE", k, 0, -1, "WITHSCORES")
		case "list":
			c.Send("LRANGE", k, 0, -1)
		case "none": // expired since SCAN
			c.Send("PING")
		default:
			t.Fatalf("%s: type %s", k, types[i])
		}
	}
	set := map[string]string{}
	for i, k := range keys {
		r, err := c.Read()
		if err != nil {
			t.Fatal(err)
		}
		var elems []string
		for j := 0; j < len(r.Elems); j++ {
			if types[i] == "hash" {
				elems = append(elems, r.Elems[j].Str+"="+r.Elems[j+1].Str)
				j++
				continue
			}
			elems = append(elems, r.Elems[j].Str)
		}
		if types[i] == "none" || expires[i] == -2 { // expired since SCAN, or since TYPE
			continue
		}
		if types[i] == "hash" || types[i] == "set" {
			slices.Sort(elems)
		}
		set[k] = fmt.Sprintf("%s|%d|%s%s", types[i], expires[i], r.Str, strings.Join(elems, ","))
	}
	return set
}

// TestFlushallAbortsBgsave: FLUSHALL while a BGSAVE writes the old data
// aborts it (Redis kills its save child) and, with save points, saves the
// empty data set at once: after a kill -9 and a restart the flushed keys do
// not come back, and the aborted save counts neither as a success nor as a
// failure. The same steps on redis-server 7.4.1 and Keyhive, compared.
func TestFlushallAbortsBgsave(t *testing.T) {
	oracle := difftest.Need74(t)
	bin := buildKeyhiveBinary(t)
	var got [2][]string
	for i, s := range []struct{ name, bin string }{{"redis", oracle}, {"keyhive", bin}} {
		dir := t.TempDir()
		n := processNode(t, s.bin, s.name, "--dir", dir, "--save", "3600 1", "--rdb-key-save-delay", "1000")
		step := func(what, v string) { got[i] = append(got[i], what+": "+v) }
		n.ok(t, "SET", "x", "1")
		n.ok(t, "FLUSHALL")
		step("rdb_changes_since_last_save after FLUSHALL alone", n.info(t, "persistence", "rdb_changes_since_last_save"))
		fill(t, n.conn, 2000, 10)
		step("BGSAVE", n.ok(t, "BGSAVE").Str)
		waitUntil(t, s.name+"'s background save to start", func() bool {
			return n.info(t, "persistence", "rdb_bgsave_in_progress") == "1"
		})
		step("FLUSHALL", n.ok(t, "FLUSHALL").Str)
		step("rdb_changes_since_last_save", n.info(t, "persistence", "rdb_changes_since_last_save"))
		n.ok(t, "CONFIG", "SET", "rdb-key-save-delay", "0")
		waitUntil(t, s.name+"'s aborted save to end", func() bool {
			return n.info(t, "persistence", "rdb_bgsave_in_progress") == "0"
		})
		step("rdb_last_bgsave_status", n.info(t, "persistence", "rdb_last_bgsave_status"))
		n.stop() // SIGKILL
		again := processNode(t, s.bin, s.name, "--dir", dir, "--save", "")
		step("DBSIZE after kill -9 and a restart", strconv.FormatInt(again.ok(t, "DBSIZE").Int, 10))
	}
	sameSteps(t, got[0], got[1])
}
