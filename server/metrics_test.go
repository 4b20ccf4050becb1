//go:build unix

package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// The metric names the two standard Grafana dashboards query. Dashboard
// 763 is redis_exporter's contrib/grafana_prometheus_redis_dashboard.json
// (the JSON grafana.com serves as revision 6). Dashboard 11835 ("helm
// stable/redis-ha") could not be fetched here: its names come from its
// twelve panels' titles and its template variables (label_values of
// redis_up), which are those of the exporter's 2019 dashboard it was made
// from, whose queries add redis_commands_processed_total.
var (
	dashboard763 = []string{
		"redis_up", "redis_uptime_in_seconds", "redis_connected_clients", "redis_blocked_clients",
		"redis_memory_used_bytes", "redis_memory_max_bytes",
		"redis_commands_total", "redis_commands_duration_seconds_total",
		"redis_keyspace_hits_total", "redis_keyspace_misses_total",
		"redis_net_input_bytes_total", "redis_net_output_bytes_total",
		"redis_db_keys", "redis_db_keys_expiring", "redis_expired_keys_total", "redis_evicted_keys_total",
	}
	dashboard11835 = []string{
		"redis_up", "redis_uptime_in_seconds", "redis_connected_clients",
		"redis_memory_used_bytes", "redis_memory_max_bytes",
		"redis_commands_processed_total", "redis_commands_total",
		"redis_keyspace_hits_total", "redis_keyspace_misses_total",
		"redis_net_input_bytes_total", "redis_net_output_bytes_total",
		"redis_db_keys", "redis_db_keys_expiring", "redis_expired_keys_total", "redis_evicted_keys_total",
	}
)

func dashboardMetrics() []string {
	names := slices.Concat(dashboard763, dashboard11835)
	slices.Sort(names)
	return slices.Compact(names)
}

// debianTool finds a binary of a Debian package test.sh installs; only a
// machine where it cannot be installed skips.
func debianTool(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not found: it comes with Debian's %s package, which test.sh installs (apt-get); it could not be installed here", name, pkg)
	}
	return p
}

// exercise gives a server something to count: keys with and without a
// TTL, hits, misses, a subcommand and an error reply.
func exercise(t testing.TB, addr string) {
	t.Helper()
	c, err := difftest.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, cmd := range [][]any{
		{"SET", "plain", "1"}, {"SET", "ttl", "v", "EX", "1000"}, {"GET", "plain"}, {"GET", "missing"},
		{"CONFIG", "GET", "maxmemory"}, {"NOSUCHCOMMAND"},
		{"RPUSH", "list", "a", "b"}, {"HSET", "hash", "f", "v"}, {"XADD", "stream", "*", "f", "v"},
		{"SELECT", "1"}, {"SET", "other", "x"},
	} {
		if _, err := c.Do(cmd...); err != nil {
			t.Fatal(err)
		}
	}
}

func httpGet(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %v %v\n%s", u, resp.Status, err, body)
	}
	return string(body)
}

// metricLabels parses an exposition: every sample's metric name with the
// names of its labels (sorted, joined by commas).
func metricLabels(t *testing.T, text string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		end := strings.IndexAny(line, "{ ")
		if end < 0 {
			t.Fatalf("bad sample line %q", line)
		}
		name, rest := line[:end], line[end:]
		var labels []string
		if rest[0] == '{' {
			rest = rest[1:]
			for rest != "" && rest[0] != '}' {
				eq := strings.Index(rest, `="`)
				if eq < 0 {
					t.Fatalf("bad labels in %q", line)
				}
				labels = append(labels, rest[:eq])
				i := eq + 2
				for i < len(rest) && rest[i] != '"' {
					if rest[i] == '\\' {
						i++
					}
					i++
				}
				if i >= len(rest) {
					t.Fatalf("unterminated label value in %q", line)
				}
				rest = strings.TrimPrefix(rest[i+1:], ",")
			}
			if rest == "" {
				t.Fatalf("unterminated labels in %q", line)
			}
			rest = rest[1:]
		}
		if _, err := strconv.ParseFloat(strings.TrimSpace(rest), 64); err != nil {
			t.Fatalf("bad value in %q: %v", line, err)
		}
		sort.Strings(labels)
		out[name] = strings.Join(labels, ",")
	}
	return out
}

// exporter runs Debian's prometheus-redis-exporter against addr with args
// and returns its metrics URL and its log.
func exporter(t *testing.T, addr string, args ...string) (metricsURL string, log *lockedBuffer) {
	t.Helper()
	bin := debianTool(t, "prometheus-redis-exporter", "prometheus-redis-exporter")
	listen := "127.0.0.1:" + freePort(t)
	log = &lockedBuffer{}
	cmd := exec.Command(bin, append([]string{"-redis.addr", "redis://" + addr, "-web.listen-address", listen, "-redis-only-metrics"}, args...)...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	metricsURL = "http://" + listen + "/metrics"
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(metricsURL); err == nil {
			resp.Body.Close()
			return metricsURL, log
		}
		if time.Now().After(deadline) {
			t.Fatalf("the exporter did not answer:\n%s", log.String())
		}
	}
}

// exporterOwn are the exporter's metrics about itself, which a server has
// no reason to serve.
func exporterOwn(name string) bool {
	return strings.HasPrefix(name, "redis_exporter_") || name == "redis_target_scrape_request_errors_total" ||
		name == "redis_last_key_groups_scrape_duration_milliseconds"
}

// TestMetricsMatchExporter scrapes Debian's prometheus-redis-exporter run
// against redis-server and Keyhive's native /metrics after the same
// commands: every metric the exporter produces (its own aside), and so
// every one the dashboards use, is served natively with the same labels.
func TestMetricsMatchExporter(t *testing.T) {
	redisAddr, stop, err := difftest.StartRedis()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	exercise(t, redisAddr)
	exporterURL, log := exporter(t, redisAddr)
	want := metricLabels(t, httpGet(t, exporterURL))

	srv := startKeyhive(t, "--metrics-port", freePort(t), "--metrics-bind", "127.0.0.1")
	exercise(t, srv.Addr())
	got := metricLabels(t, httpGet(t, "http://"+srv.MetricsAddr()+"/metrics"))

	for _, name := range dashboardMetrics() {
		if _, ok := want[name]; !ok {
			t.Errorf("the exporter does not produce %s, which a dashboard uses: is the list stale?\n%s", name, log.String())
		}
		if g, ok := got[name]; !ok || g != want[name] {
			t.Errorf("dashboard metric %s: Keyhive serves it %v with labels %q, the exporter with %q", name, ok, g, want[name])
		}
	}
	for name, labels := range want {
		if exporterOwn(name) {
			continue
		}
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s{%s}: produced by the exporter, not served natively", name, labels)
		case name == "redis_instance_info":
			// Newer exporters add master_replid: Keyhive serves it too.
			for _, l := range strings.Split(labels, ",") {
				if !slices.Contains(strings.Split(g, ","), l) {
					t.Errorf("redis_instance_info lacks label %s: %q", l, g)
				}
			}
		case g != labels:
			t.Errorf("%s: Keyhive serves labels %q, the exporter %q", name, g, labels)
		}
	}
}

// TestMetricsExporterOnKeyhive points Debian's prometheus-redis-exporter at
// Keyhive with the options that make it send every command it knows
// (INFO ALL, CONFIG GET *, SLOWLOG, LATENCY LATEST, CLIENT LIST, SCAN,
// TYPE, MEMORY USAGE, XINFO, EVAL of its key-group script, a user script):
// its log has no error or warning, and it produces every metric (names and
// labels) it produces against redis-server holding the same keys.
func TestMetricsExporterOnKeyhive(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "collect.lua")
	if err := os.WriteFile(script, []byte(`return {"keys_in_db", tostring(redis.call("DBSIZE"))}`), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-debug", "-export-client-list", "-export-client-port", "-include-config-metrics", "-ping-on-connect",
		"-check-keys", "plain,list,hash", "-check-single-keys", "db0=plain", "-check-streams", "stream",
		"-check-single-streams", "db0=stream", "-count-keys", "db0=*", "-check-key-groups", "^(l)", "-script", script}
	scrape := func(addr string) (map[string]string, string) {
		u, log := exporter(t, addr, args...)
		httpGet(t, u)
		return metricLabels(t, httpGet(t, u)), log.String()
	}
	redisAddr, stop, err := difftest.StartRedis()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	exercise(t, redisAddr)
	want, _ := scrape(redisAddr)

	srv := startKeyhive(t)
	exercise(t, srv.Addr())
	got, log := scrape(srv.Addr())
	if bad := regexp.MustCompile(`(?m)^.*level=(error|warning|fatal|panic).*$`).FindAllString(log, -1); len(bad) > 0 {
		t.Errorf("the exporter logged errors against Keyhive:\n%s", strings.Join(bad, "\n"))
	}
	for name, labels := range want {
		if got[name] != labels {
			t.Errorf("exporter against redis-server: %s{%s}; against Keyhive: %q", name, labels, got[name])
		}
	}
	if t.Failed() {
		t.Logf("exporter log:\n%s", log)
	}
}

// TestMetricsPrometheus starts Debian's Prometheus scraping Keyhive's
// /metrics and asks its HTTP API for every metric name the dashboards use:
// each has a value.
func TestMetricsPrometheus(t *testing.T) {
	slowTest(t, "runs Prometheus and scrapes")
	bin := debianTool(t, "prometheus", "prometheus")
	srv := startKeyhive(t, "--metrics-port", freePort(t), "--metrics-bind", "127.0.0.1")
	exercise(t, srv.Addr())
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`global:
  scrape_interval: 1s
scrape_configs:
  - job_name: keyhive
    static_configs:
      - targets: ['%s']
`, srv.MetricsAddr())), 0o644); err != nil {
		t.Fatal(err)
	}
	web := "127.0.0.1:" + freePort(t)
	log := &lockedBuffer{}
	cmd := exec.Command(bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+web, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus log:\n%s", log.String())
		}
	}()
	query := func(expr string) (values []string, err error) {
		resp, err := http.Get("http://" + web + "/api/v1/query?query=" + url.QueryEscape(expr))
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		var r struct {
			Status string
			Error  string
			Data   struct {
				Result []struct {
					Value [2]any
				}
			}
		}
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			return nil, err
		}
		if r.Status != "success" {
			return nil, fmt.Errorf("%s: %s", r.Status, r.Error)
		}
		for _, s := range r.Data.Result {
			v, _ := s.Value[1].(string)
			values = append(values, v)
		}
		return values, nil
	}
	deadline := time.Now().Add(60 * time.Second)
	for _, name := range dashboardMetrics() {
		for {
			values, err := query(name)
			if err == nil && len(values) > 0 {
				for _, v := range values {
					if _, err := strconv.ParseFloat(v, 64); err != nil {
						t.Errorf("%s: value %q", name, v)
					}
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s has no value in Prometheus (last answer: %v %v)", name, values, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	// The dashboards' own arithmetic works on the scraped series.
	if v, err := query(`sum(redis_db_keys) - sum(redis_db_keys_expiring)`); err != nil || len(v) != 1 || v[0] != "5" {
		t.Errorf("not-expiring keys: %v %v, want 5", v, err)
	}
}

// TestMetricsEndpoint checks the listener's life: off by default, served
// while the server runs, closed with it; and the handler for embedding.
func TestMetricsEndpoint(t *testing.T) {
	if srv := startKeyhive(t); srv.MetricsAddr() != "" {
		t.Fatalf("metrics listener without metrics-port: %s", srv.MetricsAddr())
	}
	srv := startKeyhive(t, "--metrics-port", freePort(t), "--metrics-bind", "127.0.0.1")
	exercise(t, srv.Addr())
	text := httpGet(t, "http://"+srv.MetricsAddr()+"/metrics")
	for _, want := range []string{
		"# TYPE redis_commands_total counter\n", `redis_commands_total{cmd="config|get"} 1` + "\n",
		`redis_db_keys{db="db0"} 5` + "\n", `redis_db_keys_expiring{db="db0"} 1` + "\n", `redis_db_keys{db="db15"} 0` + "\n",
		`redis_errors_total{err="ERR"} 1` + "\n", "redis_keyspace_misses_total 1\n", "redis_up 1\n",
		`redis_latency_percentiles_usec_count{cmd="get"} 2` + "\n", "# TYPE keyhive_gc_pause_seconds histogram\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	rec := httptest.NewRecorder()
	srv.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); ct != "text/plain; version=0.0.4; charset=utf-8" || !strings.Contains(rec.Body.String(), "redis_up 1\n") {
		t.Errorf("handler: %q\n%s", ct, rec.Body.String())
	}
	addr := srv.MetricsAddr()
	srv.Close()
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Errorf("metrics listener %s still open after Close", addr)
	}
	// A port that cannot be bound fails Start, as the main port does.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	_, port, _ := net.SplitHostPort(busy.Addr().String())
	if _, err := newKeyhive(t, "--metrics-port", port, "--metrics-bind", "127.0.0.1"); err == nil || !strings.Contains(err.Error(), "metrics") {
		t.Errorf("Start with a busy metrics port: %v", err)
	}
}

// TestMetricsSnapshotProgress follows a slowed-down BGSAVE through
// keyhive_snapshot_keys and keyhive_snapshot_keys_saved.
func TestMetricsSnapshotProgress(t *testing.T) {
	srv := startKeyhive(t, "--metrics-port", freePort(t), "--metrics-bind", "127.0.0.1")
	c := dial(t, srv.Addr())
	for i := range 200 {
		c.Do("SET", "k"+strconv.Itoa(i), "v")
	}
	c.Do("CONFIG", "SET", "rdb-key-save-delay", "2000") // 2 ms a key: the save takes 0.4 s
	if r, _ := c.Do("BGSAVE"); r.Str != "Background saving started" {
		t.Fatalf("BGSAVE: %q", r.Str)
	}
	value := func(text, name string) float64 {
		for _, line := range strings.Split(text, "\n") {
			if v, ok := strings.CutPrefix(line, name+" "); ok {
				f, _ := strconv.ParseFloat(v, 64)
				return f
			}
		}
		t.Fatalf("no %s", name)
		return 0
	}
	u := "http://" + srv.MetricsAddr() + "/metrics"
	var sawProgress bool
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		text := httpGet(t, u)
		total, saved := value(text, "keyhive_snapshot_keys"), value(text, "keyhive_snapshot_keys_saved")
		if total == 0 {
			if !sawProgress {
				t.Fatal("the save ended before a scrape saw it")
			}
			return
		}
		if total != 200 || saved > total {
			t.Fatalf("snapshot keys %v, saved %v", total, saved)
		}
		sawProgress = sawProgress || saved > 0 && saved < total
	}
	t.Fatal("the save did not end")
}

// BenchmarkMetricsScrape measures a scrape's CPU time with many keys
// (KEYHIVE_METRICS_BENCH_KEYS, default 10M, filled with DEBUG POPULATE),
// as cpu-us/scrape: "handler" is the handler's own thread CPU, "http" the
// whole process's over real HTTP scrapes (server and the client in it).
//
//	go test -run '^$' -bench MetricsScrape -benchtime 200x ./server/
func BenchmarkMetricsScrape(b *testing.B) {
	keys := 10_000_000
	if v := os.Getenv("KEYHIVE_METRICS_BENCH_KEYS"); v != "" {
		keys, _ = strconv.Atoi(v)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	srv := startKeyhive(b, "--enable-debug-command", "yes", "--metrics-port", port, "--metrics-bind", "127.0.0.1")
	c := dial(b, srv.Addr())
	c.Timeout = 10 * time.Minute
	if r, err := c.Do("DEBUG", "POPULATE", keys); err != nil || r.Str != "OK" {
		b.Fatal(r, err)
	}
	if r, _ := c.Do("DBSIZE"); r.Int != int64(keys) {
		b.Fatalf("DBSIZE %d", r.Int)
	}
	exercise(b, srv.Addr())
	cpu := func(who int) time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(who, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	const rusageThread = 1
	b.Run("handler", func(b *testing.B) {
		h := srv.MetricsHandler()
		req := httptest.NewRequest("GET", "/metrics", nil)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		start := cpu(rusageThread)
		for range b.N {
			h.ServeHTTP(httptest.NewRecorder(), req)
		}
		b.ReportMetric(float64(cpu(rusageThread)-start)/float64(time.Microsecond)/float64(b.N), "cpu-us/scrape")
	})
	b.Run("http", func(b *testing.B) {
		u := "http://" + srv.MetricsAddr() + "/metrics"
		start := cpu(syscall.RUSAGE_SELF)
		for range b.N {
			resp, err := http.Get(u)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		b.ReportMetric(float64(cpu(syscall.RUSAGE_SELF)-start)/float64(time.Microsecond)/float64(b.N), "cpu-us/scrape")
	})
}
