package workloads_test

import (
	"context"
	"fmt"
	"html"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/server"
	"github.com/keyhive/keyhive/workloads"
)

// The console in a real browser: Keyhive with the seeds' schema and data,
// the page opened in headless Chromium (Debian's chromium, which test.sh
// installs), the namespaces and prefixes it shows after its script ran
// compared with NAMESPACE STATS and NAMESPACE DISCOVER, and screenshots at
// a desktop and a phone width kept in $KEYHIVE_ARTIFACTS (default
// $TMPDIR/keyhive-console-artifacts).

// chromiumArgs are the flags a headless run needs on a closed network, as
// root, with a profile of its own.
func chromiumArgs(t *testing.T, extra ...string) []string {
	return append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--hide-scrollbars", "--user-data-dir=" + t.TempDir()}, extra...)
}

func runChromium(t *testing.T, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, chromiumArgs(t, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return string(out)
}

// shownRow is a table row the page drew: its name and the figures in its
// cells.
type shownRow struct {
	name                  string
	keys, volatile, bytes int64
}

var (
	rowRE  = regexp.MustCompile(`<tr data-(ns|prefix)="([^"]*)"[^>]*>(.*?)</tr>`)
	cellRE = regexp.MustCompile(`<td class="(keys|volatile|bytes)"[^>]*>(\d+)</td>`)
	// depthRE finds each depth's table of prefixes.
	depthRE = regexp.MustCompile(`(?s)<table data-depth="(\d+)">(.*?)</table>`)
)

// shownRows parses the rows of kind ("ns" or "prefix") in dom, with the
// figures as the cells' text shows them.
func shownRows(t *testing.T, dom, kind string) []shownRow {
	t.Helper()
	var rows []shownRow
	for _, m := range rowRE.FindAllStringSubmatch(dom, -1) {
		if m[1] != kind {
			continue
		}
		r := shownRow{name: html.UnescapeString(m[2])}
		for _, c := range cellRE.FindAllStringSubmatch(m[3], -1) {
			v, _ := strconv.ParseInt(c[2], 10, 64)
			switch c[1] {
			case "keys":
				r.keys = v
			case "volatile":
				r.volatile = v
			case "bytes":
				r.bytes = v
			}
		}
		rows = append(rows, r)
	}
	return rows
}

func TestConsoleInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("slow, skipped with -short: Chromium renders the console")
	}
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not installed (test.sh installs Debian's chromium): the console's browser test skipped")
	}
	ctx := context.Background()
	schema, err := filepath.Abs("schema.conf")
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	consolePort := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	cfg, err := config.FromArgs([]string{"--port", "0", "--bind", "127.0.0.1", "--save", "", "--dir", t.TempDir(),
		"--include", schema, "--enable-debug-command", "yes", "--namespace-discovery", "yes", "--console-port", consolePort})
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
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: 2})
	defer rdb.Close()
	// The hot keys and slow log sections get something to show.
	for _, c := range [][]any{{"HOTKEYS", "START", "METRICS", 2, "CPU", "NET"}, {"CONFIG", "SET", "slowlog-log-slower-than", 500}} {
		if err := rdb.Do(ctx, c...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for i, w := range workloads.All {
		if err := w.Prepare(ctx, rdb); err != nil {
			t.Fatalf("%s: Prepare: %v", w.Name, err)
		}
		rng := rand.New(rand.NewPCG(41, uint64(i)))
		for range 2000 {
			if err := w.Op(ctx, rdb, rng); err != nil && err != redis.Nil {
				t.Fatalf("%s: %v", w.Name, err)
			}
		}
	}
	// Nothing may change between the page's figures and the commands':
	// no key expires meanwhile.
	if err := rdb.Do(ctx, "DEBUG", "SET-ACTIVE-EXPIRE", 0).Err(); err != nil {
		t.Fatal(err)
	}

	dom := runChromium(t, bin, "--virtual-time-budget=10000", "--dump-dom", srv.ConsoleURL())
	if !strings.Contains(dom, `data-loaded="1"`) {
		t.Fatalf("the page's script did not draw the state:\n%s", dom)
	}

	stats := map[string]map[string]int64{}
	flat, err := rdb.Do(ctx, "NAMESPACE", "STATS").Slice()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(flat); i += 2 {
		f := flat[i+1].([]any)
		m := map[string]int64{}
		for j := 0; j+1 < len(f); j += 2 {
			m[f[j].(string)] = f[j+1].(int64)
		}
		stats[flat[i].(string)] = m
	}
	shown := shownRows(t, dom, "ns")
	if len(stats) == 0 {
		t.Fatal("NAMESPACE STATS is empty: schema.conf was not loaded")
	}
	if len(shown) != len(stats) {
		t.Fatalf("the page shows %d namespaces, NAMESPACE STATS %d", len(shown), len(stats))
	}
	for _, r := range shown {
		want, ok := stats[r.name]
		if !ok {
			t.Fatalf("the page shows namespace %q, NAMESPACE STATS does not", r.name)
		}
		if r.keys != want["keys"] || r.volatile != want["volatile"] || r.bytes != want["bytes"] {
			t.Errorf("namespace %s: page keys=%d volatile=%d bytes=%d, NAMESPACE STATS %v", r.name, r.keys, r.volatile, r.bytes, want)
		}
	}

	tables := depthRE.FindAllStringSubmatch(dom, -1)
	if len(tables) == 0 {
		t.Fatal("the page shows no discovered prefixes")
	}
	for _, tb := range tables {
		depth, _ := strconv.Atoi(tb[1])
		rows := shownRows(t, tb[2], "prefix")
		top, err := rdb.Do(ctx, "NAMESPACE", "DISCOVER", "DEPTH", depth, "COUNT", len(rows), "BY", "bytes").Slice()
		if err != nil {
			t.Fatal(err)
		}
		if len(top) != len(rows) {
			t.Fatalf("depth %d: the page shows %d prefixes, DISCOVER %d", depth, len(rows), len(top))
		}
		for i, e := range top {
			f := e.([]any)
			m := map[string]any{}
			for j := 0; j+1 < len(f); j += 2 {
				m[f[j].(string)] = f[j+1]
			}
			r := rows[i]
			if r.name != m["prefix"] || r.keys != m["keys"] || r.volatile != m["volatile"] || r.bytes != m["bytes"] {
				t.Errorf("depth %d #%d: page %+v, DISCOVER %v", depth, i, r, m)
			}
		}
		t.Logf("depth %d: %d prefixes shown, equal to DISCOVER", depth, len(rows))
	}

	dir := os.Getenv("KEYHIVE_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "keyhive-console-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, size := range []struct {
		name string
		w, h int
	}{{"desktop", 1440, 4400}, {"narrow", 390, 7000}} {
		path := filepath.Join(dir, "console-"+size.name+".png")
		runChromium(t, bin, "--virtual-time-budget=10000", fmt.Sprintf("--window-size=%d,%d", size.w, size.h), "--screenshot="+path, srv.ConsoleURL())
		if st, err := os.Stat(path); err != nil || st.Size() == 0 {
			t.Fatalf("no screenshot at %s: %v", path, err)
		}
		t.Logf("screenshot (%s, %dpx wide): %s", size.name, size.w, path)
	}
}
