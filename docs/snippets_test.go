//go:build linux

// Package docs_test runs the shell snippets of the README and of the user
// guides in docs/, so that what they tell a reader to type works.
package docs_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A snippet is one fenced ```sh block of a Markdown file.
type snippet struct {
	file string
	line int      // of the opening fence
	info []string // the fence's words after "sh"; "no-run" skips it
	text string
}

var fence = regexp.MustCompile("^```(\\S*)(.*)$")

// parseSnippets returns the ```sh blocks of a Markdown document.
func parseSnippets(file, md string) []snippet {
	var out []snippet
	var cur *snippet
	var body []string
	for i, line := range strings.Split(md, "\n") {
		m := fence.FindStringSubmatch(line)
		switch {
		case cur == nil && m != nil && m[1] != "":
			if m[1] == "sh" {
				cur = &snippet{file: file, line: i + 1, info: strings.Fields(m[2])}
			} else {
				cur = &snippet{} // another language: read past it
			}
			body = nil
		case cur == nil && m != nil:
			cur = &snippet{}
			body = nil
		case cur != nil && strings.HasPrefix(line, "```"):
			if cur.file != "" {
				cur.text = strings.Join(body, "\n") + "\n"
				out = append(out, *cur)
			}
			cur = nil
		case cur != nil:
			body = append(body, line)
		}
	}
	return out
}

// optionalTools are the commands a snippet may use that a machine may
// lack (test.sh installs redis-server, redis-cli and redis-sentinel): a
// snippet calling a missing one is skipped, saying so.
var optionalTools = []string{"curl", "openssl", "redis-sentinel", "shuf"}

func (s snippet) missingTool() string {
	for _, tool := range optionalTools {
		if regexp.MustCompile(`(^|[\s;|(])` + tool + `\s`).MatchString(s.text) {
			if _, err := exec.LookPath(tool); err != nil {
				return tool
			}
		}
	}
	return ""
}

func (s snippet) noRun() bool {
	for _, w := range s.info {
		if w == "no-run" {
			return true
		}
	}
	return false
}

// skippedSnippet: snippets that need what a test machine lacks, with why.
var skippedSnippet = []struct {
	re     *regexp.Regexp
	reason string
}{
	{regexp.MustCompile(`(?m)^\s*(\$ )?docker `), "needs a Docker daemon (packaging's tests build the binary as the Dockerfile does and run it with the image's arguments)"},
	{regexp.MustCompile(`(?m)\bsystemctl `), "installs a system service (packaging's TestSystemdUnit checks the unit)"},
}

// skippedLine: single lines left out of a snippet, with why.
var skippedLine = []struct {
	re     *regexp.Regexp
	reason string
}{
	{regexp.MustCompile(`^\./test\.sh\b`), "the whole test suite, which runs this test"},
	{regexp.MustCompile(`^go install `), "fetches the module over the network (the binary built for the test stands in)"},
	{regexp.MustCompile(`^go test `), "tests that ./test.sh runs anyway"},
	{regexp.MustCompile(`^(bench/|go run \./bench/|go run \./cmd/keyhive-bench)`), "a benchmark of minutes"},
}

// fixedPort matches the ports the docs use: 6379-6389, 7000-7009,
// 26379-26389, 9121 (metrics) and 8089 (console).
var fixedPort = regexp.MustCompile(`\b(63[78]\d|700\d|263[78]\d|9121|8089)\b`)

// Paths the docs write to, moved into the snippet's scratch directory.
var scratchPaths = []string{"/tmp/", "/var/lib/keyhive", "/var/log/keyhive"}

var (
	serverLine  = regexp.MustCompile(`^(\$ )?(keyhive|\./keyhive|redis-server|redis-sentinel)( |$)`)
	notServing  = regexp.MustCompile(`--daemonize yes|--version|\s-v\b|--ping|--help`)
	expectation = regexp.MustCompile(`^(.*?)\s+# -> (.*)$`)
	anyServer   = regexp.MustCompile(`(?m)(^|[\s;(])(keyhive|\./keyhive|redis-server|redis-sentinel) `)
)

// A run is the preparation of a snippet: the script bash runs and the
// lines left out.
type run struct {
	script  string
	skipped []string
	runs    bool // false: every line was left out
}

// prepare turns a snippet into a script: fixed ports become the ones in
// ports, paths move to the scratch directory, a server the reader would run
// in the foreground runs in the background until it answers, and a line
// ending in "# -> text" checks that it prints text. A snippet of "$ "
// prompts checks that each command prints the lines under it, as redis-cli
// prints in a terminal.
func prepare(s snippet, repo string, ports map[string]string) run {
	var r run
	text := fixedPort.ReplaceAllStringFunc(s.text, func(p string) string { return ports[p] })
	for _, p := range scratchPaths {
		text = strings.ReplaceAll(text, p, "$KEYHIVE_DOC_SCRATCH"+p)
	}
	text = strings.ReplaceAll(text, "/path/to/redis.conf", filepath.Join(repo, "packaging/keyhive.conf"))
	text = regexp.MustCompile(`(^|\s)packaging/`).ReplaceAllString(text, "${1}"+repo+"/packaging/")
	text = regexp.MustCompile(`go build -o (\S+) \./cmd/keyhive`).ReplaceAllString(text, `cp "$$KEYHIVE_DOC_SHIM" $1`)
	text = regexp.MustCompile(`go run \./cmd/keyhive(\s|$)`).ReplaceAllString(text, "keyhive$1")

	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	prompted := false
	for _, l := range lines {
		if strings.HasPrefix(l, "$ ") {
			prompted = true
		}
	}
	var b strings.Builder
	b.WriteString(prelude)
	if !anyServer.MatchString(text) {
		b.WriteString("__serve keyhive\n") // the reader's running server
	}
	if prompted {
		b.WriteString("export KEYHIVE_DOC_TTY=1\n")
	} else {
		b.WriteString("set -e\n")
	}
	var cmd string
	var want []string
	flush := func() {
		for len(want) > 0 && strings.TrimSpace(want[len(want)-1]) == "" {
			want = want[:len(want)-1]
		}
		if cmd != "" {
			fmt.Fprintf(&b, "__expect %s %s\n", quote(strings.Join(want, "\n")), quote(cmd))
		}
		cmd, want = "", nil
	}
	for _, l := range lines {
		bare := strings.TrimPrefix(l, "$ ")
		if reason := lineSkip(bare); reason != "" {
			r.skipped = append(r.skipped, fmt.Sprintf("%s: %s", strings.TrimSpace(l), reason))
			if prompted {
				flush()
			}
			continue
		}
		if serverLine.MatchString(l) && !notServing.MatchString(l) {
			flush()
			code, _, _ := strings.Cut(bare, " #")
			fmt.Fprintf(&b, "__serve %s\n", strings.TrimSuffix(strings.TrimSpace(code), "&"))
			continue
		}
		if prompted {
			if strings.HasPrefix(l, "$ ") {
				flush()
				cmd = bare
			} else if cmd != "" {
				want = append(want, l)
			} else {
				b.WriteString(l + "\n")
			}
			continue
		}
		if m := expectation.FindStringSubmatch(l); m != nil && !strings.HasPrefix(strings.TrimSpace(l), "#") {
			fmt.Fprintf(&b, "__expect %s %s\n", quote(m[2]), quote(m[1]))
			continue
		}
		b.WriteString(l + "\n")
	}
	flush()
	r.runs = hasCommand(lines)
	b.WriteString("exit $__failed\n")
	r.script = b.String()
	return r
}

// hasCommand reports whether a snippet has a line to run besides those
// the rules leave out.
func hasCommand(lines []string) bool {
	for _, l := range lines {
		l = strings.TrimSpace(strings.TrimPrefix(l, "$ "))
		if l != "" && !strings.HasPrefix(l, "#") && lineSkip(l) == "" {
			return true
		}
	}
	return false
}

var download = regexp.MustCompile(`^(curl|wget)\b.*https?://`)

func lineSkip(line string) string {
	if download.MatchString(line) && !strings.Contains(line, "://127.0.0.1") && !strings.Contains(line, "://localhost") {
		return "downloads over the network"
	}
	for _, rule := range skippedLine {
		if rule.re.MatchString(line) {
			return rule.reason
		}
	}
	return ""
}

// quote is a shell word holding s.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// prelude defines the script's helpers. __serve starts a server in the
// background, its output in servers.log, and waits until it accepts
// connections on the port its arguments (or its configuration file) give
// (Keyhive listens once its data is loaded); __expect runs a command and
// compares what it prints.
const prelude = `__serve() {
  local port="" tlsport="" prev="" a
  for a in "$@"; do
    [ "$prev" = --port ] && port=$a
    [ "$prev" = --tls-port ] && tlsport=$a
    prev=$a
  done
  if [ -z "$port" ] && [ -f "${2:-}" ]; then port=$(sed -n 's/^port \([0-9]*\).*/\1/p' "$2" | tail -1); fi
  port=${port:-$KEYHIVE_DOC_PORT}
  [ "$port" = 0 ] && port=$tlsport
  echo "== $*" >>"$KEYHIVE_DOC_SCRATCH/servers.log"
  "$@" >>"$KEYHIVE_DOC_SCRATCH/servers.log" 2>&1 &
  local pid=$! deadline=$((SECONDS + 60))
  until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
    if ! kill -0 $pid 2>/dev/null || [ $SECONDS -ge $deadline ]; then
      echo "server did not answer on port $port: $*"; return 1
    fi
    sleep 0.1
  done
}
__failed=0
__expect() {
  local got
  got=$(eval "$2" | tr -d '\r')
  if [ "$got" != "$1" ]; then
    printf '%s printed:\n%s\nwant:\n%s\n' "$2" "$got" "$1"; __failed=1; return 1
  fi
}
`

// The harness is Linux's: it finds the processes a snippet started in /proc.

// A machine holds the tools the snippets run: the keyhive binary built once
// and the stand-ins for keyhive and redis-cli that give a command without a
// port the snippet's substitute for 6379.
type machine struct {
	repo, shim, bin string
}

var (
	machineOnce sync.Once
	theMachine  machine
	machineErr  error
	machineDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if machineDir != "" {
		os.RemoveAll(machineDir)
	}
	os.Exit(code)
}

func setUp(t *testing.T) machine {
	t.Helper()
	for _, tool := range []string{"bash", "redis-cli", "redis-server"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	machineOnce.Do(func() {
		repo, err := filepath.Abs("..")
		if err != nil {
			machineErr = err
			return
		}
		if machineDir, machineErr = os.MkdirTemp("", "keyhive-docs-"); machineErr != nil {
			return
		}
		real := filepath.Join(machineDir, "keyhive.real")
		build := exec.Command("go", "build", "-o", real, "./cmd/keyhive")
		build.Dir = repo
		if out, err := build.CombinedOutput(); err != nil {
			machineErr = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		cli, _ := exec.LookPath("redis-cli")
		bin := filepath.Join(machineDir, "bin")
		os.Mkdir(bin, 0o755)
		shim := filepath.Join(bin, "keyhive")
		machineErr = os.WriteFile(shim, []byte(`#!/bin/sh
real=`+quote(real)+`
for a in "$@"; do
  case $a in --port|--version|-v|--help|-h|--test-memory) exec "$real" "$@";; esac
done
if [ "$1" = --ping ] && [ $# = 1 ]; then exec "$real" --ping "127.0.0.1:$KEYHIVE_DOC_PORT"; fi
if [ "$1" = --ping ]; then exec "$real" "$@"; fi
if [ $# -gt 0 ] && [ -f "$1" ] && grep -q '^port ' "$1"; then exec "$real" "$@"; fi
exec "$real" "$@" --port "$KEYHIVE_DOC_PORT"
`), 0o755)
		if machineErr == nil {
			machineErr = os.WriteFile(filepath.Join(bin, "redis-cli"), []byte(`#!/bin/sh
real=`+quote(cli)+`
for a in "$@"; do
  case $a in -p|-h|-u|-s|--cluster) exec "$real" ${KEYHIVE_DOC_TTY:+--no-raw} "$@";; esac
done
exec "$real" ${KEYHIVE_DOC_TTY:+--no-raw} -p "$KEYHIVE_DOC_PORT" "$@"
`), 0o755)
		}
		theMachine = machine{repo: repo, shim: shim, bin: bin}
	})
	if machineErr != nil {
		t.Fatal(machineErr)
	}
	return theMachine
}

var (
	portsMu sync.Mutex
	taken   = map[int]bool{}
)

// freePorts maps each fixed port of text, and 6379 always, to a free port
// whose cluster bus port (+10000) is free too, below the ephemeral range.
func freePorts(t *testing.T, text string, fixed map[string]string) map[string]string {
	t.Helper()
	ports := map[string]string{}
	for k, v := range fixed {
		ports[k] = v
	}
	want := append(fixedPort.FindAllString(text, -1), "6379")
	portsMu.Lock()
	defer portsMu.Unlock()
	for _, p := range want {
		if ports[p] != "" {
			continue
		}
		for try := 0; ; try++ {
			if try == 1000 {
				t.Fatal("no free port pair")
			}
			n := 10000 + rand.IntN(10000)
			if taken[n] || !free(n) || !free(n+10000) {
				continue
			}
			taken[n] = true
			ports[p] = strconv.Itoa(n)
			break
		}
	}
	return ports
}

func free(port int) bool {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// runSnippet runs a prepared snippet with bash in a scratch directory and
// fails the test when it exits non-zero; then, if it succeeded, check runs
// (when not nil) while its servers still do. Every process it started
// (daemons too) is killed after it.
func runSnippet(t *testing.T, m machine, s snippet, ports map[string]string, timeout time.Duration, check func()) run {
	t.Helper()
	r := prepare(s, m.repo, ports)
	if !r.runs {
		t.Skipf("%s:%d: every line is left out: %s", s.file, s.line, strings.Join(r.skipped, "; "))
	}
	scratch := t.TempDir()
	script := filepath.Join(scratch, "snippet.sh")
	if err := os.WriteFile(script, []byte(r.script), 0o644); err != nil {
		t.Fatal(err)
	}
	marker := fmt.Sprintf("%d-%d", os.Getpid(), rand.Int64())
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Dir = scratch
	cmd.Env = append(os.Environ(),
		"PATH="+m.bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"KEYHIVE_DOC_SHIM="+m.shim,
		"KEYHIVE_DOC_PORT="+ports["6379"],
		"KEYHIVE_DOC_SCRATCH="+scratch,
		"KEYHIVE_DOC_RUN="+marker)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	defer killMarked(marker, scratch)
	if err != nil {
		logs, _ := os.ReadFile(filepath.Join(scratch, "servers.log"))
		t.Errorf("%s:%d: %v after %v\nscript:\n%s\noutput:\n%s\nservers' output (last 4 kB):\n%s",
			s.file, s.line, err, time.Since(start).Round(time.Millisecond), r.script, out.String(), tail(logs, 4096))
	} else {
		t.Logf("%s:%d ran in %v", s.file, s.line, time.Since(start).Round(time.Millisecond))
		if check != nil {
			check()
		}
	}
	return r
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// killMarked kills the processes whose environment holds the run's marker
// (the snippet's servers, including those that daemonized) or whose working
// directory is the scratch directory (redis-sentinel and redis-server write
// their process title over their environment, so the marker is not readable
// there), and waits until they are gone, so that none writes to the scratch
// directory after.
func killMarked(marker, scratch string) {
	want := []byte("KEYHIVE_DOC_RUN=" + marker + "\x00")
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		found := false
		procs, _ := os.ReadDir("/proc")
		for _, p := range procs {
			pid, err := strconv.Atoi(p.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			// A zombie's environ reads empty: it is gone for this purpose.
			env, _ := os.ReadFile("/proc/" + p.Name() + "/environ")
			cwd, _ := os.Readlink("/proc/" + p.Name() + "/cwd")
			if bytes.Contains(env, want) || cwd == scratch || strings.HasPrefix(cwd, scratch+"/") {
				syscall.Kill(pid, syscall.SIGKILL)
				found = true
			}
		}
		if !found {
			return
		}
	}
}

// TestREADMESnippets runs every ```sh block of README.md (those marked
// no-run, and the lines and snippets the rules above name, excepted), each
// on its own free ports in a scratch directory, and checks that it exits 0
// and prints what it says it prints.
func TestREADMESnippets(t *testing.T) {
	t.Parallel()
	m := setUp(t)
	md, err := os.ReadFile(filepath.Join(m.repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	snippets := parseSnippets("README.md", string(md))
	if len(snippets) == 0 {
		t.Fatal("no ```sh block in README.md")
	}
	for _, s := range snippets {
		t.Run("line"+strconv.Itoa(s.line), func(t *testing.T) {
			if s.noRun() {
				t.Skipf("README.md:%d is marked no-run", s.line)
			}
			for _, rule := range skippedSnippet {
				if rule.re.MatchString(s.text) {
					t.Skipf("README.md:%d %s", s.line, rule.reason)
				}
			}
			if tool := s.missingTool(); tool != "" {
				t.Skipf("README.md:%d needs %s, which is not installed", s.line, tool)
			}
			t.Parallel()
			r := runSnippet(t, m, s, freePorts(t, s.text, nil), 3*time.Minute, nil)
			for _, l := range r.skipped {
				t.Logf("README.md:%d left out %s", s.line, l)
			}
		})
	}
}

// guide is the ```sh blocks of a page that runs as one session, in order,
// except those marked no-run.
func guide(t *testing.T, m machine, file string) snippet {
	t.Helper()
	md, err := os.ReadFile(filepath.Join(m.repo, file))
	if err != nil {
		t.Fatal(err)
	}
	var g snippet
	for _, s := range parseSnippets(file, string(md)) {
		if s.noRun() {
			continue
		}
		if g.file == "" {
			g = s
		} else {
			g.text += s.text
		}
	}
	if g.file == "" {
		t.Fatalf("no ```sh block in %s", file)
	}
	if tool := g.missingTool(); tool != "" {
		t.Skipf("%s needs %s, which is not installed", file, tool)
	}
	return g
}

// TestTLSGuide runs docs/tls.md's blocks: certificates made with openssl,
// a TLS-only Keyhive, redis-cli --tls with and without a client certificate.
func TestTLSGuide(t *testing.T) {
	t.Parallel()
	m := setUp(t)
	g := guide(t, m, "docs/tls.md")
	runSnippet(t, m, g, freePorts(t, g.text, nil), 2*time.Minute, nil)
}

// TestPrepare pins the harness's rules on a made-up page: blocks of other
// languages are passed over, fixed ports and paths are replaced, a
// foreground server runs in the background, skipped lines are reported,
// and "# -> text" and "$ " outputs become checks.
func TestPrepare(t *testing.T) {
	md := "```go\nx := 1\n```\n```sh no-run\nkeyhive\n```\n" +
		"```sh\nkeyhive --port 6380 --dir /tmp/k   # a comment\n./test.sh\nredis-cli -p 6380 GET k   # -> v\n```\n" +
		"```sh\n$ redis-cli PING\nPONG\n```\n"
	snippets := parseSnippets("page.md", md)
	if len(snippets) != 3 || !snippets[0].noRun() || snippets[1].noRun() || snippets[1].line != 7 {
		t.Fatalf("parsed %+v", snippets)
	}
	r := prepare(snippets[1], "/repo", map[string]string{"6379": "10001", "6380": "10002"})
	for _, want := range []string{
		"\n__serve keyhive --port 10002 --dir $KEYHIVE_DOC_SCRATCH/tmp/k\n",
		"\n__expect 'v' 'redis-cli -p 10002 GET k'\n",
		"\nset -e\n",
	} {
		if !strings.Contains(r.script, want) {
			t.Errorf("script lacks %q:\n%s", want, r.script)
		}
	}
	if strings.Contains(r.script, "test.sh") || len(r.skipped) != 1 || !r.runs {
		t.Errorf("skipped %q, runs %v:\n%s", r.skipped, r.runs, r.script)
	}
	r = prepare(snippets[2], "/repo", map[string]string{"6379": "10001"})
	for _, want := range []string{"\n__serve keyhive\n", "\nexport KEYHIVE_DOC_TTY=1\n", "\n__expect 'PONG' 'redis-cli PING'\n"} {
		if !strings.Contains(r.script, want) {
			t.Errorf("script lacks %q:\n%s", want, r.script)
		}
	}
}
