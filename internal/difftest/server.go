package difftest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// TargetEnv names the environment variable that picks the server compared
// against redis-server: "keyhive" (or unset) for the in-process Keyhive,
// "redis" for a second redis-server (to check the harness itself, or tests
// written before Keyhive supports a command).
const TargetEnv = "KEYHIVE_DIFF_TARGET"

// VerboseEnv, when set to a non-empty value, logs every command and reply.
const VerboseEnv = "KEYHIVE_DIFF_VERBOSE"

const (
	targetKeyhive = "keyhive"
	targetRedis   = "redis"
)

const noRedisMsg = "redis-server not found: run the README test command, which installs it"

// instance is one running server under test.
type instance struct {
	name string // "redis" or "keyhive" (or "keyhive[redis-server]")
	addr string
	stop func()
	log  *tailBuffer // redis-server output; nil in-process
}

// logTail returns the end of a redis-server's output for failure messages.
func (s *instance) logTail() string {
	if s.log == nil {
		return ""
	}
	return "\n--- " + s.name + " output (tail) ---\n" + s.log.String()
}

// env is the two servers a Pair talks to: reference redis and the target.
type env struct {
	target     string
	directives []string
	shared     bool
	oracle     string // redis-server binary; "" for the one on PATH (7.0.15)

	mu      sync.Mutex
	redis   *instance
	keyhive *instance
	users   []string // names of tests currently holding a Pair on a shared env
}

var (
	sharedMu   sync.Mutex
	sharedEnvs = map[string]*env{}
)

// defaultTarget reads TargetEnv; builds tagged difftest_redisonly default to
// redis because they have no in-process server.
func defaultTarget() (string, error) {
	switch v := os.Getenv(TargetEnv); v {
	case "":
		if !haveInProcess {
			return targetRedis, nil
		}
		return targetKeyhive, nil
	case targetKeyhive, targetRedis:
		return v, nil
	default:
		return "", fmt.Errorf("%s=%q: want %q or %q", TargetEnv, v, targetKeyhive, targetRedis)
	}
}

// sharedEnv returns the package-wide env for (target, directives), starting it
// on first use. Reusing servers keeps a test package to one startup.
func sharedEnv(target, oracle string, directives []string) (*env, error) {
	key := target + "\x00" + oracle + "\x00" + strings.Join(directives, "\x00")
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if e := sharedEnvs[key]; e != nil {
		return e, nil
	}
	e, err := newEnv(target, oracle, directives, true)
	if err != nil {
		return nil, err
	}
	sharedEnvs[key] = e
	return e, nil
}

func newEnv(target, oracle string, directives []string, shared bool) (*env, error) {
	e := &env{target: target, oracle: oracle, directives: slices.Clone(directives), shared: shared}
	var err error
	if e.redis, err = startOracle(oracle, "redis", directives); err != nil {
		return nil, err
	}
	if e.keyhive, err = e.startTarget(); err != nil {
		e.redis.stop()
		return nil, err
	}
	return e, nil
}

func (e *env) startTarget() (*instance, error) {
	if e.target == targetRedis {
		return startOracle(e.oracle, "keyhive[redis-server]", e.directives)
	}
	addr, stop, err := startInProcess(e.directives)
	if err != nil {
		return nil, fmt.Errorf("starting in-process keyhive: %w", err)
	}
	return &instance{name: "keyhive", addr: addr, stop: stop}, nil
}

// restart replaces a server that no longer accepts connections, e.g. after
// a test ran SHUTDOWN or crashed it with DEBUG.
func (e *env) restart(s **instance) error {
	old := *s
	old.stop()
	var err error
	var ns *instance
	if old.name == "redis" {
		ns, err = startOracle(e.oracle, old.name, e.directives)
	} else {
		ns, err = e.startTarget()
	}
	if err != nil {
		return err
	}
	*s = ns
	return nil
}

func (e *env) close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.redis.stop()
	e.keyhive.stop()
}

// stopShared stops every shared server; Main calls it after the tests.
func stopShared() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	for k, e := range sharedEnvs {
		e.close()
		delete(sharedEnvs, k)
	}
}

// freePort asks the kernel for an unused port. Another process may take it
// before redis-server binds, so startRedis retries.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

var sweepOnce sync.Once

// StartRedis starts a redis-server (found on PATH) on a free port with the
// given directives, for tools that drive it with their own client (the
// workloads and keyhive-bench). stop kills it and removes its directory.
func StartRedis(directives ...string) (addr string, stop func(), err error) {
	return exported(startRedis("redis", directives))
}

// StartProcess is StartRedis for any server binary taking redis-server's
// command line, such as a built cmd/keyhive.
func StartProcess(path string, directives ...string) (addr string, stop func(), err error) {
	return exported(startProcess(path, filepath.Base(path), directives))
}

func exported(s *instance, err error) (addr string, stop func(), _ error) {
	if err != nil {
		return "", nil, err
	}
	return s.addr, s.stop, nil
}

// StartKeyhive starts an in-process Keyhive on a free port with the given
// directives; stop closes it.
func StartKeyhive(directives ...string) (addr string, stop func(), err error) {
	return startInProcess(directives)
}

// startOracle starts the oracle binary at path, or the redis-server on PATH
// when path is empty.
func startOracle(path, name string, directives []string) (*instance, error) {
	if path == "" {
		return startRedis(name, directives)
	}
	return startProcess(path, name, directives)
}

// startRedis starts a redis-server on a free port and waits until it answers.
func startRedis(name string, directives []string) (*instance, error) {
	path, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errors.New(noRedisMsg)
	}
	return startProcess(path, name, directives)
}

func startProcess(path, name string, directives []string) (*instance, error) {
	sweepOnce.Do(sweepTempDirs)
	// A private --dir keeps SAVE/DEBUG RELOAD dumps out of the package
	// directory and away from other test binaries.
	dir, err := os.MkdirTemp("", tempPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, err
	}
	var lastErr error
	for range 5 {
		s, err := tryStartRedis(path, name, dir, directives)
		if err == nil {
			stop := s.stop
			s.stop = func() { stop(); os.RemoveAll(dir) }
			return s, nil
		}
		lastErr = err
		if !errors.Is(err, errPortTaken) {
			break
		}
	}
	os.RemoveAll(dir)
	return nil, lastErr
}

var errPortTaken = errors.New("port taken by another process")

func tryStartRedis(path, name, dir string, directives []string) (*instance, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := []string{
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--enable-debug-command", "yes",
		"--daemonize", "no", "--dir", dir,
	}
	args = append(args, directives...) // later arguments override earlier ones
	cmd := exec.Command(path, args...)
	log := &tailBuffer{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = log, log
	exited, err := StartChild(cmd)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	pid := cmd.Process.Pid
	stop := func() {
		KillGroup(pid)
		<-exited
	}
	s := &instance{name: name, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), stop: stop, log: log}

	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-exited:
			if strings.Contains(log.String(), "Address already in use") {
				return nil, errPortTaken
			}
			return nil, fmt.Errorf("redis-server %q exited during startup%s", args, s.logTail())
		default:
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("redis-server did not accept connections within 10s%s", s.logTail())
		}
		c, err := net.DialTimeout("tcp", s.addr, time.Second)
		if err != nil {
			time.Sleep(2 * time.Millisecond)
			continue
		}
		// The port answering is not proof it is ours: check the pid. A
		// server still loading its files answers LOADING to most commands:
		// ready is once it has loaded them.
		cc := newConn(c)
		r, err := cc.Do("INFO", "server", "persistence")
		cc.Close()
		if err != nil {
			stop()
			return nil, fmt.Errorf("redis-server on %s: INFO: %v%s", s.addr, err, s.logTail())
		}
		if !strings.Contains(r.Str, "process_id:"+strconv.Itoa(pid)+"\r\n") {
			stop()
			return nil, errPortTaken
		}
		if strings.Contains(r.Str, "\r\nloading:1\r\n") {
			time.Sleep(2 * time.Millisecond)
			continue
		}
		return s, nil
	}
}

const tempPrefix = "keyhive-difftest-"

// sweepTempDirs removes dump directories left by test binaries that died
// without running Main, identified by a pid that no longer exists.
func sweepTempDirs() {
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), tempPrefix+"*"))
	for _, m := range matches {
		rest := strings.TrimPrefix(filepath.Base(m), tempPrefix)
		pidStr, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidStr)
		if !ok || err != nil || pid == os.Getpid() {
			continue
		}
		if processGone(pid) {
			os.RemoveAll(m)
		}
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = bytes.Clone(t.b[len(t.b)-t.max:])
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// StartChild starts cmd in a process group of its own (Ctrl-C on go test
// does not race the cleanup, and killing the group takes a server's fork
// children too), killed if the test binary dies without cleanup (a panic,
// a timeout), so no server outlives its tests. exited closes when it ends.
// Tests that run a server process on their own terms (a fixed port, a
// restart on the same one) start it with StartChild too.
func StartChild(cmd *exec.Cmd) (exited <-chan struct{}, err error) {
	cmd.SysProcAttr = childAttr()
	started := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		// Pdeathsig fires when the thread that forked the child exits, not
		// the process; pin this goroutine to its thread for the child's life.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		cmd.Wait()
		close(done)
	}()
	return done, <-started
}
