package config

// Tests that use a real redis-server as the reference for behaviour.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/version"
)

// redisServer is a redis-server child process plus one client connection.
type redisServer struct {
	cmd  *exec.Cmd
	conn net.Conn
	r    *bufio.Reader
}

func redisPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not on PATH")
	}
	return p
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startRedis runs redis-server with args plus a free port and returns the
// port too so the caller can mirror the arguments.
func startRedis(t *testing.T, dir string, args ...string) (*redisServer, int) {
	t.Helper()
	bin := redisPath(t)
	port := freePort(t)
	all := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1"}, args...)
	cmd := exec.Command(bin, all...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	deadline := time.Now().Add(5 * time.Second)
	for {
		conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			t.Cleanup(func() { conn.Close() })
			return &redisServer{cmd: cmd, conn: conn, r: bufio.NewReader(conn)}, port
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server did not start: %v\n%s", err, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// do sends a command and returns the reply: string, []any, int64, nil, or
// an error for an error reply.
func (s *redisServer) do(t *testing.T, args ...string) any {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	s.conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := s.conn.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	v, err := readReply(s.r)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func readReply(r *bufio.Reader) (any, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return nil, errors.New("empty reply line")
	}
	switch line[0] {
	case '+':
		return line[1:], nil
	case '-':
		return replyError(line[1:]), nil
	case ':':
		return strconv.ParseInt(line[1:], 10, 64)
	case '$':
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return nil, nil
		}
		buf := make([]byte, n+2)
		if _, err := io_ReadFull(r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, _ := strconv.Atoi(line[1:])
		out := make([]any, 0, max(n, 0))
		for i := 0; i < n; i++ {
			v, err := readReply(r)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("bad reply %q", line)
}

type replyError string

func (e replyError) Error() string { return string(e) }

func io_ReadFull(r *bufio.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func pairsToMap(t *testing.T, v any) map[string]string {
	t.Helper()
	m := map[string]string{}
	switch a := v.(type) {
	case []any:
		for i := 0; i+1 < len(a); i += 2 {
			m[a[i].(string)] = a[i+1].(string)
		}
	case []string:
		for i := 0; i+1 < len(a); i += 2 {
			m[a[i]] = a[i+1]
		}
	default:
		t.Fatalf("unexpected reply %#v", v)
	}
	return m
}

// The same command line given to redis-server and to FromArgs must give the
// same CONFIG GET * for every directive.
func TestDefaultsMatchRedis(t *testing.T) {
	dir := t.TempDir()
	srv, port := startRedis(t, dir, "--save", "")
	want := pairsToMap(t, srv.do(t, "CONFIG", "GET", "*"))

	wd, _ := os.Getwd()
	os.Chdir(dir) // dir defaults to the working directory in both
	defer os.Chdir(wd)
	c, err := FromArgs([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", ""})
	if err != nil {
		t.Fatal(err)
	}
	got := pairsToMap(t, c.Get("*"))
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("directive %q known to redis is missing", name)
			continue
		}
		if g != w {
			t.Errorf("%s: got %q, redis has %q", name, g, w)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok && !strings.HasPrefix(name, "set-max-listpack-") && lookup(name).flags&(fOwn|fRedis8) == 0 {
			t.Errorf("directive %q unknown to redis 7.0", name)
		}
	}
}

// A series of CONFIG SET commands must get the same reply from both and
// leave the same CONFIG GET * behind.
func TestSetMatchesRedis(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	srv, port := startRedis(t, dir, "--save", "", "--enable-protected-configs", "yes")
	wd, _ := os.Getwd()
	os.Chdir(dir)
	defer os.Chdir(wd)
	c, err := FromArgs([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--enable-protected-configs", "yes"})
	if err != nil {
		t.Fatal(err)
	}
	cases := [][]string{
		{"foo", "bar"},
		{"maxmemory", "10", "foo"},
		{"maxmemory", "10", "maxmemory", "20"},
		{"maxmemory", "10", "MAXMEMORY", "20"},
		{"hash-max-ziplist-entries", "3", "hash-max-listpack-entries", "4"},
		{"maxmemory", "1gb", "port", "abc"},
		{"port", "x", "databases", "3"},
		{"databases", "3"},
		{"daemonize", "yes"},
		{"loglevel", "WARNING"},
		{"appendfsync", "sometimes"},
		{"activerehashing", "NO"},
		{"activerehashing", "maybe"},
		{"maxmemory", "1GB"}, {"maxmemory", "2m"}, {"maxmemory", "3mb"}, {"maxmemory", "4K"},
		{"maxmemory", "5kb"}, {"maxmemory", "1b"}, {"maxmemory", ""}, {"maxmemory", "k"},
		{"maxmemory", "-1"}, {"maxmemory", "+5"}, {"maxmemory", " 5"}, {"maxmemory", "1.5gb"},
		{"maxmemory", "1t"}, {"maxmemory", "99999999999999999999"}, {"maxmemory", "18446744073709551615k"},
		{"hash-max-listpack-value", "99999999999999999999"}, {"hash-max-listpack-value", "2kb"},
		{"proto-max-bulk-len", "1000"}, {"proto-max-bulk-len", "1mb"},
		{"client-query-buffer-limit", "1"},
		{"timeout", "05"}, {"timeout", "+5"}, {"timeout", "-0"}, {"timeout", "-1"}, {"timeout", ""},
		{"timeout", "9223372036854775808"}, {"timeout", "2147483648"}, {"timeout", "30"},
		{"slowlog-log-slower-than", "-1"}, {"slowlog-log-slower-than", "-2"},
		{"hz", "0"}, {"hz", "1000"}, {"hz", "-1"}, {"hz", "20"},
		{"maxclients", "0"}, {"maxclients", "4294967296"}, {"maxclients", "50"},
		{"maxmemory-clients", "10%"}, {"maxmemory-clients", "101%"}, {"maxmemory-clients", "-5%"},
		{"maxmemory-clients", "0%"}, {"maxmemory-clients", "1k%"}, {"maxmemory-clients", "1mb"},
		{"maxmemory-policy", "allkeys-lru"}, {"maxmemory-policy", "lru"},
		{"notify-keyspace-events", "KEA"}, {"notify-keyspace-events", "Q"},
		{"notify-keyspace-events", "AKEn"}, {"notify-keyspace-events", "Kn"},
		{"notify-keyspace-events", "g$lshzxetd"}, {"notify-keyspace-events", "mn"},
		{"notify-keyspace-events", "Elg"}, {"notify-keyspace-events", ""},
		{"client-output-buffer-limit", "pubsub 1mb 2k 3"},
		{"client-output-buffer-limit", "replica 1 2 3 normal 4 5 6"},
		{"client-output-buffer-limit", "master 1 2 3"},
		{"client-output-buffer-limit", "normal 1 2"},
		{"client-output-buffer-limit", "normal 1 a 3"},
		{"client-output-buffer-limit", "normal 1 2 -3"},
		{"client-output-buffer-limit", ""},
		// Back to no normal limit: redis-server shrinks an idle client's
		// reply buffer, and a 4-byte limit would then cut off CONFIG GET *.
		{"client-output-buffer-limit", "normal 0 0 0"},
		{"save", "900 1 300 10"}, {"save", "900   1"}, {"save", "900"}, {"save", "0 0"},
		{"save", "05 1"}, {"save", "1 -0"}, {"save", `"900" 1`}, {"save", ""},
		{"oom-score-adj-values", "1 2"}, {"oom-score-adj-values", "1 2 3000"},
		{"oom-score-adj-values", "-5 0 2000"}, {"oom-score-adj-values", ""},
		// Applying oom-score-adj needs privileges redis may lack: only parse errors.
		{"oom-score-adj", "bogus"},
		{"latency-tracking-info-percentiles", "50.5 99.99 0 100 12.3456789"},
		{"latency-tracking-info-percentiles", "101"},
		{"latency-tracking-info-percentiles", "abc"},
		{"latency-tracking-info-percentiles", ""},
		{"shutdown-on-sigint", "nosave now"}, {"shutdown-on-sigint", "save nosave"},
		{"shutdown-on-sigint", ""}, {"shutdown-on-sigterm", "save force now"},
		{"shutdown-on-sigterm", "default now"}, {"shutdown-on-sigterm", "NOW"},
		{"proc-title-template", "{title}"}, {"proc-title-template", "x"},
		{"proc-title-template", "{{title}}"}, {"proc-title-template", "{title"},
		{"proc-title-template", "{TITLE}"}, {"proc-title-template", "title}"},
		{"proc-title-template", "{title} {listen-addr} {server-mode}"},
		{"cluster-announce-hostname", "a_b"}, {"cluster-announce-hostname", "a.b-c"},
		{"dbfilename", "a/b"}, {"dbfilename", "x.rdb"},
		{"dir", "/nonexistent-dir"}, {"dir", "/etc/passwd"}, {"dir", "sub"}, {"dir", ".."},
		{"appendfilename", "x"}, {"unixsocketperm", "700"}, {"replicaof", "h 1"},
		{"list-max-listpack-size", "-5"}, {"lua-time-limit", "100"},
		{"slave-read-only", "no"}, {"min-slaves-to-write", "2"},
		{"tls-auth-clients", "optional"}, {"sanitize-dump-payload", "clients"},
		{"masterauth", "a b"}, {"rdb-key-save-delay", "5"},
		{"maxmemory", "1mb", "maxmemory-policy", "volatile-lru", "hz", "abc"},
		{"maxmemory", "1mb", "maxmemory-policy", "volatile-lru", "hz", "15"},
		{"active-defrag-ignore-bytes", "0"}, {"repl-backlog-size", "0"},
		{"acllog-max-len", "-1"}, {"io-threads", "2"}, {"enable-debug-command", "yes"},
	}
	for _, args := range cases {
		wantReply := srv.do(t, append([]string{"CONFIG", "SET"}, args...)...)
		gotErr := c.Set(args)
		var want string
		if e, ok := wantReply.(error); ok {
			want = e.Error()
		} else {
			want = fmt.Sprint(wantReply)
		}
		got := "OK"
		if gotErr != nil {
			got = gotErr.Error()
		}
		if got != want {
			t.Errorf("CONFIG SET %q: got %q, redis replied %q", args, got, want)
		}
		// Exact-name CONFIG GET of what was touched.
		for i := 0; i < len(args); i += 2 {
			w := pairsToMap(t, srv.do(t, "CONFIG", "GET", args[i]))
			g := pairsToMap(t, c.Get(args[i]))
			if fmt.Sprint(w) != fmt.Sprint(g) {
				t.Errorf("after CONFIG SET %q: CONFIG GET %s: got %v, redis %v", args, args[i], g, w)
			}
		}
	}
	want := pairsToMap(t, srv.do(t, "CONFIG", "GET", "*"))
	got := pairsToMap(t, c.Get("*"))
	for name, w := range want {
		if got[name] != w {
			t.Errorf("final %s: got %q, redis %q", name, got[name], w)
		}
	}
	// Several patterns, duplicates and case.
	for _, pats := range [][]string{
		{"maxmemory", "maxmemory"}, {"maxmemory", "max*"}, {"MAXMEMORY"},
		{"hash-max-ziplist-entries"}, {"hash-max-*-entries", "hash-max-zip*"},
		{"nonexistent"}, {"MAXMEM*"}, {"rdb-key-save-delay"}, {"rdb*"},
	} {
		w := pairsToMap(t, srv.do(t, append([]string{"CONFIG", "GET"}, pats...)...))
		g := pairsToMap(t, c.GetMany(pats))
		if fmt.Sprint(w) != fmt.Sprint(g) {
			t.Errorf("CONFIG GET %q: got %v, redis %v", pats, g, w)
		}
	}
}

// exitingRedis prepares a redis-server run that is expected to exit at once
// on a configuration error; should it start after all, it is killed soon.
func exitingRedis(t *testing.T, bin string, args ...string) *exec.Cmd {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return exec.CommandContext(ctx, bin, args...)
}

// Broken configuration files must be refused with redis-server's message.
func TestFileErrorsMatchRedis(t *testing.T) {
	bin := redisPath(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "bad-inc.conf"), []byte("# c\nport 1 2\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "ok-inc.conf"), []byte("maxclients 100\n"), 0o644)
	cases := []string{
		"port abc", "foo bar", "\n\nport 1 2", `port "6379"x`, "port '6379'x", `port "abc`,
		"include /nonexistent.conf", "include " + filepath.Join(dir, "bad-inc.conf"),
		"include " + filepath.Join(dir, "ok-inc.conf") + "\nmaxclients 0",
		"maxmemory 1.5gb", "maxmemory -1", "databases 0", "io-threads 129",
		"unixsocketperm 800", "unixsocketperm 1000", "socket-mark-id -1", "save 900",
		"save abc 1", "bind 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17",
		"oom-score-adj-values 1 2", "oom-score-adj-values 1 a 3", "client-output-buffer-limit foo 1 2 3",
		"notify-keyspace-events Q", "notify-keyspace-events", "dbfilename a/b", "appenddirname a/b",
		"dir /nonexistent", "dir /etc/passwd", "dir", "include", "rename-command", "user",
		"sentinel foo", "maxmemory-policy foo", "enable-debug-command maybe", "appendonly maybe",
		"hz -1", "requirepass", "requirepass a b", "slaveof a", "replicaof a b", "replicaof h 65536",
		"timeout 1 2", "shutdown-on-sigint", "supervised foo", "syslog-facility foo",
		"cluster-announce-hostname a_b", "PORT x", "  port   x  ", "port \"a\\x41\"",
		"latency-tracking-info-percentiles 101", "proc-title-template {foo}",
		"# comment\nport 1\n\ttimeout x",
	}
	for _, text := range cases {
		f := filepath.Join(dir, "t.conf")
		os.WriteFile(f, []byte(text+"\n"), 0o644)
		cmd := exitingRedis(t, bin, f)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("redis-server accepted %q", text)
		}
		want := asKeyhiveBanner(out)
		_, gotErr := FromArgs([]string{f})
		if gotErr == nil {
			t.Errorf("%q: accepted, redis says %q", text, want)
			continue
		}
		got := gotErr.Error()
		// Redis prefixes "can't open" with a log header (pid, time).
		if got != want && !strings.HasSuffix(want, "# "+got) {
			t.Errorf("%q:\n got: %q\nwant: %q", text, got, want)
		}
	}
}

// Command-line options are turned into config lines like redis-server does.
func TestArgErrorsMatchRedis(t *testing.T) {
	bin := redisPath(t)
	dir := t.TempDir()
	inc := filepath.Join(dir, "inc.conf")
	os.WriteFile(inc, []byte("maxclients 100\n"), 0o644)
	cases := [][]string{
		{"--port", "1", "2"},
		{inc, "--port", "1", "--maxmemory", "1", "2"},
		{"--port"},
		{"--port", "--logfile", "x"},
		{"--foo", "bar"},
		{inc, "stray", "--port", "1"},
		{"--maxmemory", "abc"},
		{"--save", "1", "--save", "2", "--port", "x"},
		{"--port 1 2"},
		{"--requirepass", "a b", "c"},
	}
	for _, args := range cases {
		cmd := exitingRedis(t, bin, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("redis-server accepted %q", args)
		}
		want := asKeyhiveBanner(out)
		_, gotErr := FromArgs(args)
		if gotErr == nil {
			t.Errorf("%q: accepted, redis says %q", args, want)
			continue
		}
		if got := gotErr.Error(); got != want {
			t.Errorf("%q:\n got: %q\nwant: %q", args, got, want)
		}
	}
}

// CONFIG REWRITE must update the same lines Redis updates; the order of
// appended lines is arbitrary in Redis, so they are compared as sets.
func TestRewriteMatchesRedis(t *testing.T) {
	dir := t.TempDir()
	inc := filepath.Join(dir, "inc.conf")
	os.WriteFile(inc, []byte("maxclients 100\n"), 0o644)
	port := freePort(t)
	text := "# top comment\nport " + strconv.Itoa(port) + "\n   # indented comment\n\n" +
		"hash-max-ziplist-entries 100\nsave 900 1\nsave 300 10\ninclude " + inc + "\n" +
		"rename-command FLUSHALL \"\"\ntimeout 0\nMaxMemory 10mb\nloglevel notice\nbind 127.0.0.1\n" +
		"client-output-buffer-limit pubsub 32mb 8mb 60\nnotify-keyspace-events \"\"\n" +
		"latency-tracking yes\n"
	for _, name := range []string{"redis.conf", "ours.conf"} {
		os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
	}
	bin := redisPath(t)
	cmd := exec.Command(bin, filepath.Join(dir, "redis.conf"), "--tcp-keepalive", "100")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var srv *redisServer
	for i := 0; ; i++ {
		conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			defer conn.Close()
			srv = &redisServer{conn: conn, r: bufio.NewReader(conn)}
			break
		}
		if i > 500 {
			t.Fatal("redis-server did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	wd, _ := os.Getwd()
	os.Chdir(dir)
	defer os.Chdir(wd)
	c, err := FromArgs([]string{filepath.Join(dir, "ours.conf"), "--tcp-keepalive", "100"})
	if err != nil {
		t.Fatal(err)
	}
	sets := [][]string{
		{"maxmemory", "1gb"}, {"save", "60 5"}, {"hash-max-listpack-value", "100"},
		{"notify-keyspace-events", "KEA"}, {"client-output-buffer-limit", "normal 1mb 1025 3"},
		{"maxmemory-clients", "5%"}, {"stream-node-max-bytes", "3000"},
		{"hash-max-listpack-entries", "512"}, {"oom-score-adj-values", "1 2 3"},
		{"appendfsync", "always"}, {"masterauth", "p w\"x\n"},
	}
	for _, s := range sets {
		if r := srv.do(t, append([]string{"CONFIG", "SET"}, s...)...); r != "OK" {
			t.Fatalf("redis CONFIG SET %q: %v", s, r)
		}
		if err := c.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	if r := srv.do(t, "CONFIG", "REWRITE"); r != "OK" {
		t.Fatalf("redis CONFIG REWRITE: %v", r)
	}
	if err := c.Rewrite(); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join(dir, "redis.conf"))
	got, _ := os.ReadFile(filepath.Join(dir, "ours.conf"))
	// Lines Redis writes for its own reasons (ACL users, a 7.0 quirk that
	// always writes the percentiles) are not ours to produce.
	norm := func(b []byte) []string {
		var out []string
		for _, l := range strings.Split(string(b), "\n") {
			if l == "" || strings.HasPrefix(l, "user ") || strings.HasPrefix(l, "latency-tracking-info-percentiles") {
				continue
			}
			out = append(out, l)
		}
		return out
	}
	w, g := norm(want), norm(got)
	// The part before the signature is in place and must match exactly.
	split := func(l []string) ([]string, []string) {
		for i, s := range l {
			if s == rewriteSignature {
				return l[:i], l[i+1:]
			}
		}
		return l, nil
	}
	wHead, wTail := split(w)
	gHead, gTail := split(g)
	if strings.Join(wHead, "\n") != strings.Join(gHead, "\n") {
		t.Errorf("in-place part differs:\n got:\n%s\nwant:\n%s", strings.Join(gHead, "\n"), strings.Join(wHead, "\n"))
	}
	sort.Strings(wTail)
	sort.Strings(gTail)
	if strings.Join(wTail, "\n") != strings.Join(gTail, "\n") {
		t.Errorf("appended part differs:\n got:\n%s\nwant:\n%s", strings.Join(gTail, "\n"), strings.Join(wTail, "\n"))
	}
}

// asKeyhiveBanner is redis-server's config error output with the version its
// banner names replaced by the one Keyhive reports (7.4.1, see package version).
func asKeyhiveBanner(out []byte) string {
	return strings.Replace(strings.TrimSpace(string(out)), "(Redis 7.0.15)", "(Redis "+version.Redis+")", 1)
}
