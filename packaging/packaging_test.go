//go:build unix

// Package packaging holds no code: its tests check the files that ship
// Keyhive (the Dockerfile at the repository root, build.sh, keyhive.service,
// keyhive.conf) by building and running what they describe. docker build is
// not available to the tests, so they build the binary with build.sh, the
// script the Dockerfile runs, and run it as the image would.
package packaging

import (
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// binDir holds the binary build.sh builds, once per test run; readable by
// every user, since the image's user runs it.
var (
	binDir   string
	buildBin = sync.OnceValues(func() (string, error) {
		bin := filepath.Join(binDir, "keyhive")
		out, err := exec.Command("./build.sh", bin).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("build.sh: %v\n%s", err, out)
		}
		return bin, nil
	})
)

func TestMain(m *testing.M) {
	var err error
	if binDir, err = os.MkdirTemp("", "keyhive-packaging-"); err == nil {
		err = os.Chmod(binDir, 0o755)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(binDir)
	os.Exit(code)
}

func binary(t *testing.T) string {
	t.Helper()
	bin, err := buildBin()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// dockerfile is what the tests read of ../Dockerfile.
type dockerfile struct {
	from, user          string
	run, expose, volume []string
	healthcheck         []string // the CMD's exec form
	entrypoint, cmd     []string
}

func readDockerfile(t *testing.T) dockerfile {
	t.Helper()
	data, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var d dockerfile
	execForm := func(s string) []string {
		var argv []string
		if err := json.Unmarshal([]byte(s), &argv); err != nil {
			t.Fatalf("Dockerfile: %q is not in exec form: %v", s, err)
		}
		return argv
	}
	for _, line := range strings.Split(string(data), "\n") {
		instr, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch instr {
		case "FROM":
			if d.from == "" {
				d.from = arg // the build stage
			}
		case "USER":
			d.user = arg
		case "RUN":
			d.run = append(d.run, arg)
		case "EXPOSE":
			d.expose = append(d.expose, arg)
		case "VOLUME":
			d.volume = append(d.volume, arg)
		case "HEALTHCHECK":
			_, cmd, ok := strings.Cut(arg, "CMD ")
			if !ok {
				t.Fatalf("HEALTHCHECK without CMD: %q", arg)
			}
			d.healthcheck = execForm(cmd)
		case "ENTRYPOINT":
			d.entrypoint = execForm(arg)
		case "CMD":
			d.cmd = execForm(arg)
		}
	}
	return d
}

// TestDockerfile: the image is built by build.sh with go.mod's Go release,
// runs as a non-root user, exposes 6379, keeps dir in the /data volume, and
// its health check is the binary's own probe.
func TestDockerfile(t *testing.T) {
	d := readDockerfile(t)
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(gomod)
	if goVersion == nil || !strings.HasPrefix(d.from, "golang:"+string(goVersion[1])+" ") {
		t.Errorf("build stage FROM %q, want go.mod's golang:%s", d.from, goVersion[1])
	}
	if !slices.ContainsFunc(d.run, func(r string) bool { return strings.HasPrefix(r, "packaging/build.sh /out/keyhive") }) {
		t.Errorf("no RUN packaging/build.sh /out/keyhive in %q", d.run)
	}
	if uid, _, _ := strings.Cut(d.user, ":"); uid == "" || uid == "0" || uid == "root" {
		t.Errorf("USER %q: want a non-root user", d.user)
	}
	if strings.Join(d.expose, " ") != "6379" || strings.Join(d.volume, " ") != "/data" {
		t.Errorf("EXPOSE %q VOLUME %q", d.expose, d.volume)
	}
	if len(d.healthcheck) < 2 || d.healthcheck[0] != "/usr/local/bin/keyhive" || d.healthcheck[1] != "--ping" {
		t.Errorf("HEALTHCHECK CMD %q: want /usr/local/bin/keyhive --ping", d.healthcheck)
	}
	if !slices.Equal(d.entrypoint, []string{"/usr/local/bin/keyhive"}) {
		t.Errorf("ENTRYPOINT %q", d.entrypoint)
	}
	args := strings.Join(d.cmd, "\x00")
	for _, want := range []string{"--dir\x00/data", "--bind\x00* -::*"} {
		if !strings.Contains(args, want) {
			t.Errorf("CMD %q lacks %q", d.cmd, strings.ReplaceAll(want, "\x00", " "))
		}
	}
}

// TestStaticBinary: build.sh's binary has no dynamic section and no
// interpreter (it runs on an empty image), and its --version names the
// commit build.sh stamped from git.
func TestStaticBinary(t *testing.T) {
	bin := binary(t)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("program header %v: the binary is dynamically linked", p.Type)
		}
	}
	if f.Section(".dynamic") != nil {
		t.Error("the binary has a .dynamic section")
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary needs %q", libs)
	}

	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range info.Settings {
		if s.Key == "CGO_ENABLED" && s.Value != "0" {
			t.Errorf("built with CGO_ENABLED=%s", s.Value)
		}
	}
	sha, dirty := gitCommit(t)
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`^Keyhive server v=\d+\.\d+\.\d+ sha=` + sha + ":" + dirty + ` redis=7\.4\.1 go=` + regexp.QuoteMeta(info.GoVersion) + ` bits=64\n$`)
	if !want.Match(out) {
		t.Errorf("--version: %q, want %s", out, want)
	}
}

// TestImageRunsAsItsUser runs the binary as the image does: as the
// Dockerfile's USER, with its CMD arguments (dir a fresh directory owned by
// that user instead of the /data volume, a free port), answering the
// HEALTHCHECK probe, and saving into its dir at SIGTERM.
func TestImageRunsAsItsUser(t *testing.T) {
	d := readDockerfile(t)
	bin := binary(t)
	uidStr, gidStr, _ := strings.Cut(d.user, ":")
	uid, err1 := strconv.Atoi(uidStr)
	gid, err2 := strconv.Atoi(gidStr)
	if err1 != nil || err2 != nil {
		t.Fatalf("USER %q is not numeric uid:gid (the image has no /etc/passwd)", d.user)
	}
	dataDir := filepath.Join(binDir, "data")
	if err := os.Mkdir(dataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dataDir)
	port := freePort(t)
	args := slicesReplace(d.cmd, "/data", dataDir)
	cmd := exec.Command(bin, append(args, "--port", port)...)
	logBuf := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = logBuf, logBuf
	if os.Getuid() == 0 {
		if err := os.Chown(dataDir, uid, gid); err != nil {
			t.Fatal(err)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	} else {
		uid = os.Getuid() // already not root: run as ourselves
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	probe := slicesReplace(d.healthcheck, "/usr/local/bin/keyhive", bin)
	probe = slicesReplace(probe, "127.0.0.1:6379", "127.0.0.1:"+port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, err := exec.Command(probe[0], probe[1:]...).CombinedOutput()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("health check %q: %v %s\nserver log:\n%s", probe, err, out, logBuf)
		}
		time.Sleep(20 * time.Millisecond)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?m)^Uid:\s+(\d+)`).FindSubmatch(status); m == nil || string(m[1]) != strconv.Itoa(uid) || uid == 0 {
		t.Errorf("server runs as uid %s, want %d (not root)", m[1], uid)
	}
	if r := difftest.InlineLine("127.0.0.1:"+port, "SET packaged yes"); r != "+OK" {
		t.Fatalf("SET: %q", r)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, logBuf)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "dump.rdb")); err != nil {
		t.Errorf("no dump.rdb in dir after SIGTERM: %v\n%s", err, logBuf)
	}
	// The probe fails once nothing answers.
	if err := exec.Command(probe[0], probe[1:]...).Run(); err == nil {
		t.Error("health check passed with the server stopped")
	}
}

// TestSystemdUnit verifies keyhive.service with systemd-analyze, and runs its
// ExecStart command line (with the sample keyhive.conf) as systemd would,
// expecting READY=1 on the notify socket.
func TestSystemdUnit(t *testing.T) {
	unit, err := os.ReadFile("keyhive.service")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\nType=notify\n", "--supervised systemd", "\nUser=keyhive\n", "\nNoNewPrivileges=yes\n"} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("keyhive.service lacks %q", strings.TrimSpace(want))
		}
	}
	m := regexp.MustCompile(`(?m)^ExecStart=(\S+) (.*)$`).FindSubmatch(unit)
	if m == nil {
		t.Fatal("keyhive.service has no ExecStart")
	}
	exe, execArgs := string(m[1]), strings.Fields(string(m[2]))
	bin := binary(t)

	t.Run("verify", func(t *testing.T) {
		analyze, err := exec.LookPath("systemd-analyze")
		if err != nil {
			t.Skip("systemd-analyze not found (Debian package systemd): keyhive.service not verified")
		}
		// verify checks that ExecStart's binary exists: point it at ours.
		path := filepath.Join(t.TempDir(), "keyhive.service")
		if err := os.WriteFile(path, []byte(strings.Replace(string(unit), "ExecStart="+exe, "ExecStart="+bin, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		// verify exits 0 on most warnings: any output fails.
		out, err := exec.Command(analyze, "verify", path).CombinedOutput()
		if err != nil || len(out) > 0 {
			t.Errorf("systemd-analyze verify keyhive.service: %v\n%s", err, out)
		}
	})

	sockPath := filepath.Join(t.TempDir(), "notify")
	sock, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sockPath, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	args := slicesReplace(execArgs, "/etc/keyhive/keyhive.conf", "keyhive.conf")
	args = slicesReplace(args, "/var/lib/keyhive", t.TempDir())
	port := freePort(t)
	cmd := exec.Command(bin, append(args, "--port", port)...)
	cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+sockPath)
	logBuf := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = logBuf, logBuf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	buf := make([]byte, 512)
	sock.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := sock.Read(buf)
	if err != nil || !strings.Contains(string(buf[:n]), "READY=1\n") {
		t.Fatalf("notify socket: %q %v\n%s", buf[:n], err, logBuf)
	}
	conf, _ := filepath.Abs("keyhive.conf")
	if i := info(t, port); !strings.Contains(i, "\r\nprocess_supervised:systemd\r\n") || !strings.Contains(i, "\r\nconfig_file:"+conf+"\r\n") {
		t.Errorf("INFO server after READY=1:\n%s", i)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v\n%s", err, logBuf)
	}
}

// gitCommit is the commit build.sh stamps: the first 8 hex digits of HEAD
// and 1 when the tree has changes, or Redis's unknown commit outside git.
func gitCommit(t *testing.T) (sha, dirty string) {
	t.Helper()
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "00000000", "0"
	}
	status, err := exec.Command("git", "status", "--porcelain").Output()
	if err != nil {
		t.Fatal(err)
	}
	dirty = "0"
	if len(status) > 0 {
		dirty = "1"
	}
	return string(head[:8]), dirty
}

func slicesReplace(ss []string, old, new string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.ReplaceAll(s, old, new)
	}
	return out
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
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
