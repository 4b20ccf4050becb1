//go:build linux

package daemon

import (
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/server"
)

// serverEnv makes the test binary run as keyhive (Run with its arguments),
// so the tests start real server processes without building one.
const serverEnv = "KEYHIVE_DAEMON_TEST_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "1" {
		cfg, err := config.FromArgs(os.Args[1:])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(Run(cfg))
	}
	// A daemon's parent exits; as the subreaper the test binary inherits the
	// daemon and can reap it (PR_SET_CHILD_SUBREAPER).
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, 36, 1, 0); errno != 0 {
		fmt.Fprintln(os.Stderr, "prctl(PR_SET_CHILD_SUBREAPER):", errno)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// keyhive returns a command running the test binary as keyhive on a free
// port of 127.0.0.1 with no save points, its files in dir, plus args.
func keyhive(t *testing.T, dir string, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, append([]string{"--port", "0", "--bind", "127.0.0.1", "--save", "", "--dir", dir}, args...)...)
	cmd.Env = append(os.Environ(), serverEnv+"=1")
	return cmd
}

var portLine = regexp.MustCompile(`Running mode=standalone, port=(\d+)\.`)

// waitLog waits until the log file at path has a line matching re and
// returns its first submatch (or the line).
func waitLog(t *testing.T, path string, re *regexp.Regexp) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		data, _ := os.ReadFile(path)
		if m := re.FindStringSubmatch(string(data)); m != nil {
			return m[len(m)-1]
		}
		time.Sleep(10 * time.Millisecond)
	}
	data, _ := os.ReadFile(path)
	t.Fatalf("no line matching %s in %s:\n%s", re, path, data)
	return ""
}

// reap waits for the process pid (a child or an inherited daemon) to exit
// and returns its exit status.
func reap(t *testing.T, pid int) int {
	t.Helper()
	var ws syscall.WaitStatus
	done := make(chan error, 1)
	go func() {
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("wait4(%d): %v", pid, err)
		}
		return ws.ExitStatus()
	case <-time.After(10 * time.Second):
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("process %d did not exit", pid)
		return -1
	}
}

// TestDaemonizePidFile: daemonize yes returns once the daemon serves; the
// daemon is another process in a session of its own, its pid is in the
// pidfile, and SHUTDOWN removes the pidfile.
func TestDaemonizePidFile(t *testing.T) {
	dir := t.TempDir()
	pidFile, logFile := filepath.Join(dir, "keyhive.pid"), filepath.Join(dir, "keyhive.log")
	// supervised systemd without a notify socket: no supervisor, so it
	// daemonizes, and the warning is logged once (by the daemon).
	cmd := keyhive(t, dir, "--daemonize", "yes", "--pidfile", pidFile, "--logfile", logFile, "--supervised", "systemd")
	cmd.Env = append(cmd.Env, "NOTIFY_SOCKET=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("keyhive --daemonize yes: %v\n%s", err, out)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSuffix(string(data), "\n"))
	if err != nil {
		t.Fatalf("pidfile holds %q", data)
	}
	defer syscall.Kill(pid, syscall.SIGKILL) // on failure
	if pid == cmd.Process.Pid {
		t.Fatal("the pidfile names the parent, which has exited")
	}
	if sid := session(t, pid); sid != pid {
		t.Errorf("daemon %d: session %d, want its own", pid, sid)
	}
	// The parent exited only after the daemon listened: no waiting here.
	data, _ = os.ReadFile(logFile)
	port := portLine.FindStringSubmatch(string(data))
	if port == nil {
		t.Fatalf("log has no port line:\n%s", data)
	}
	if i := info(t, port[1]); !strings.Contains(i, "\r\nprocess_id:"+strconv.Itoa(pid)+"\r\n") || !strings.Contains(i, "\r\nprocess_supervised:no\r\n") {
		t.Errorf("INFO server of the daemon %d:\n%s", pid, i)
	}
	if !strings.Contains(string(data), fmt.Sprintf("pid=%d, just started", pid)) {
		t.Errorf("log does not come from the daemon %d:\n%s", pid, data)
	}
	if n := strings.Count(string(data), "NOTIFY_SOCKET environment variable is not set"); n != 1 {
		t.Errorf("the supervision warning is logged %d times:\n%s", n, data)
	}
	difftest.InlineLine("127.0.0.1:"+port[1], "SHUTDOWN")
	if code := reap(t, pid); code != 0 {
		t.Errorf("daemon exited %d", code)
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Errorf("pidfile left after SHUTDOWN: %v", err)
	}
	waitLog(t, logFile, regexp.MustCompile(`Removing the pid file\.`))
}

// session is process pid's session id, from /proc/<pid>/stat ("pid (comm)
// state ppid pgrp session ...").
func session(t *testing.T, pid int) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	sid, _ := strconv.Atoi(f[3])
	return sid
}

// TestDaemonizeFailure: a daemon that cannot start makes the parent exit 1
// with the daemon's reason, and leaves no pidfile.
func TestDaemonizeFailure(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	_, port, _ := net.SplitHostPort(taken.Addr().String())
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "keyhive.pid")
	cmd := keyhive(t, dir, "--daemonize", "yes", "--pidfile", pidFile, "--port", port)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v, want 1\n%s", err, out)
	}
	if !strings.Contains(string(out), "address already in use") {
		t.Errorf("parent's output does not give the daemon's reason:\n%s", out)
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Errorf("pidfile left by a daemon that did not start: %v", err)
	}
}

// TestLogFileLevels: lines in Redis's format go to logfile; loglevel drops
// lines below it and CONFIG SET loglevel changes it while running.
func TestLogFileLevels(t *testing.T) {
	dir := t.TempDir()
	logFile := filepath.Join(dir, "keyhive.log")
	cmd := keyhive(t, dir, "--logfile", logFile, "--loglevel", "warning", "--enable-debug-command", "yes",
		"--supervised", "systemd") // without NOTIFY_SOCKET: a warning line
	cmd.Env = append(cmd.Env, "NOTIFY_SOCKET=")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// At warning, the port line (notice) is not logged: find the port in
	// /proc's socket list instead of the log.
	port := listeningPort(t, cmd.Process.Pid)
	difftest.InlineLine("127.0.0.1:"+port, "DEBUG LOG dropped-at-warning")
	// Lua's redis.log lines keep their level.
	difftest.InlineLine("127.0.0.1:"+port, `EVAL "redis.log(redis.LOG_WARNING, 'script-warning') redis.log(redis.LOG_NOTICE, 'script-dropped')" 0`)
	difftest.InlineLine("127.0.0.1:"+port, "CONFIG SET loglevel notice")
	difftest.InlineLine("127.0.0.1:"+port, "DEBUG LOG kept-at-notice")
	difftest.InlineLine("127.0.0.1:"+port, "CONFIG SET loglevel nothing")
	difftest.InlineLine("127.0.0.1:"+port, "DEBUG LOG dropped-at-nothing")
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
	data, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	log := string(data)
	line := regexp.MustCompile(`^` + strconv.Itoa(cmd.Process.Pid) + `:M \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d\.\d{3} [.\-*#] \S`)
	for _, l := range strings.Split(strings.TrimSuffix(log, "\n"), "\n") {
		if !line.MatchString(l) {
			t.Errorf("line not in Redis's format: %q", l)
		}
	}
	for _, want := range []string{"# systemd supervision requested or auto-detected, but NOTIFY_SOCKET environment variable is not set!", "* DEBUG LOG: kept-at-notice", "# script-warning"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	for _, unwanted := range []string{"dropped", "Keyhive is starting", "Received SIGTERM"} {
		if strings.Contains(log, unwanted) {
			t.Errorf("log has %q:\n%s", unwanted, log)
		}
	}
}

// listeningPort finds the TCP port process pid listens on, from
// /proc/<pid>/net/tcp and the process's socket inodes.
func listeningPort(t *testing.T, pid int) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		inodes := map[string]bool{}
		fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
		for _, fd := range fds {
			if l, err := os.Readlink(fd); err == nil && strings.HasPrefix(l, "socket:[") {
				inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
			}
		}
		data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/net/tcp", pid))
		for _, l := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(l)
			// local_address is f[1] (hex ip:port), st 0A is LISTEN, f[9] the inode.
			if len(f) > 9 && f[3] == "0A" && inodes[f[9]] {
				_, hexPort, _ := strings.Cut(f[1], ":")
				p, _ := strconv.ParseUint(hexPort, 16, 16)
				return strconv.FormatUint(p, 10)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d listens on no TCP port", pid)
	return ""
}

// TestSupervisedSystemd: with supervised systemd (which turns daemonize off)
// the server sends READY=1 on $NOTIFY_SOCKET once it accepts connections and
// STOPPING=1 when it shuts down; a name with @ is an abstract socket.
func TestSupervisedSystemd(t *testing.T) {
	for _, abstract := range []bool{false, true} {
		t.Run(fmt.Sprintf("abstract=%v", abstract), func(t *testing.T) {
			dir := t.TempDir()
			name := filepath.Join(dir, "notify")
			if abstract {
				name = fmt.Sprintf("@keyhive-test-notify-%d", os.Getpid())
			}
			sock, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
			if err != nil {
				t.Fatal(err)
			}
			defer sock.Close()
			logFile := filepath.Join(dir, "keyhive.log")
			cmd := keyhive(t, dir, "--supervised", "systemd", "--daemonize", "yes", "--logfile", logFile)
			cmd.Env = append(cmd.Env, "NOTIFY_SOCKET="+name)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			read := func() string {
				buf := make([]byte, 4096)
				sock.SetReadDeadline(time.Now().Add(10 * time.Second))
				n, err := sock.Read(buf)
				if err != nil {
					t.Fatalf("reading the notify socket: %v", err)
				}
				return string(buf[:n])
			}
			if msg := read(); msg != "STATUS=Ready to accept connections\nREADY=1\n" {
				t.Fatalf("first notification %q", msg)
			}
			// Ready means serving, and supervised kept the process in the
			// foreground: the pid systemd started is the server.
			port := waitLog(t, logFile, portLine)
			if i := info(t, port); !strings.Contains(i, "\r\nprocess_supervised:systemd\r\n") {
				t.Errorf("INFO server:\n%s", i)
			}
			cmd.Process.Signal(syscall.SIGTERM)
			if msg := read(); msg != "STOPPING=1\n" {
				t.Errorf("at shutdown: %q", msg)
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("exit: %v", err)
			}
		})
	}
}

// TestSupervisedUpstart: under upstart the server stops itself (SIGSTOP) once
// it accepts connections, and serves once continued.
func TestSupervisedUpstart(t *testing.T) {
	dir := t.TempDir()
	logFile := filepath.Join(dir, "keyhive.log")
	cmd := keyhive(t, dir, "--supervised", "auto", "--logfile", logFile)
	cmd.Env = append(cmd.Env, "UPSTART_JOB=keyhive", "NOTIFY_SOCKET=")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	defer syscall.Kill(pid, syscall.SIGKILL)
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, syscall.WUNTRACED, nil); err != nil || !ws.Stopped() || ws.StopSignal() != syscall.SIGSTOP {
		t.Fatalf("wait4: %v, status %v: want stopped by SIGSTOP", err, ws)
	}
	port := waitLog(t, logFile, portLine)
	syscall.Kill(pid, syscall.SIGCONT)
	if r := difftest.InlineLine("127.0.0.1:"+port, "PING"); r != "+PONG" {
		t.Fatalf("PING: %q", r)
	}
	difftest.InlineLine("127.0.0.1:"+port, "SHUTDOWN")
	if code := reap(t, pid); code != 0 {
		t.Errorf("exit %d", code)
	}
	waitLog(t, logFile, regexp.MustCompile(`supervised by upstart, will stop to signal readiness\.`))
}

// TestPing: keyhive --ping's probe passes for a server that answers PONG or
// NOAUTH, and fails for a closed port.
func TestPing(t *testing.T) {
	for _, args := range [][]string{nil, {"--requirepass", "secret"}} {
		cfg, err := config.FromArgs(append([]string{"--port", "0", "--bind", "127.0.0.1", "--save", ""}, args...))
		if err != nil {
			t.Fatal(err)
		}
		srv, err := server.New(cfg, server.WithLogger(log.New(io.Discard, "", 0)))
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		if err := Ping(srv.Addr(), 5*time.Second); err != nil {
			t.Errorf("Ping with %q: %v", args, err)
		}
		addr := srv.Addr()
		srv.Close()
		if err := Ping(addr, 5*time.Second); err == nil {
			t.Errorf("Ping of a closed server passed")
		}
	}
}

// info returns INFO server's text.
func info(t *testing.T, port string) string {
	t.Helper()
	r, err := difftest.Inline("127.0.0.1:"+port, "INFO server")
	if err != nil {
		t.Fatal(err)
	}
	return r.Str
}

// TestBannerPID: with always-show-logo (as Redis's test suite runs it) the
// start-up log names the port and "PID: <pid>", which tools that start
// servers wait for.
func TestBannerPID(t *testing.T) {
	dir := t.TempDir()
	logFile := filepath.Join(dir, "keyhive.log")
	cmd := keyhive(t, dir, "--always-show-logo", "yes", "--logfile", logFile)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	defer syscall.Kill(pid, syscall.SIGKILL)
	port := waitLog(t, logFile, regexp.MustCompile(`standalone mode, Port: (\d+),`))
	if got := waitLog(t, logFile, regexp.MustCompile(`PID: (\d+)`)); got != strconv.Itoa(pid) {
		t.Errorf("PID: %s, want %d", got, pid)
	}
	difftest.InlineLine("127.0.0.1:"+port, "SHUTDOWN")
	reap(t, pid)
}
