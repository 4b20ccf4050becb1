package crashtest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// proc is a running server process.
type proc struct {
	cmd    *exec.Cmd
	addr   string
	log    string // the file holding its output
	exited chan struct{}
	err    error // the exit status, once exited is closed
}

// serverArgs are the directives both servers are started with; redis-server
// and keyhive take the same command line.
func serverArgs(m Mode, dir string, port int) []string {
	args := []string{
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--dir", dir,
		"--appendonly", "yes",
		"--appendfsync", m.Fsync,
		"--io-threads", strconv.Itoa(m.IOThreads),
		"--save", "",
		"--enable-debug-command", "yes",
		"--daemonize", "no",
		"--logfile", "",
	}
	if m.Kill == KillAutoRewrite {
		// A rewrite whenever the file grew by 5% over at least 1 MB, so
		// that one is under way at most moments of the load.
		args = append(args, "--auto-aof-rewrite-percentage", "5", "--auto-aof-rewrite-min-size", "1mb")
	} else {
		args = append(args, "--auto-aof-rewrite-percentage", "0")
	}
	return args
}

// freePort asks the kernel for a port nobody listens on.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startServer starts bin on dir and waits until it answers PING (it may
// first reply LOADING while it reads its files). Output goes to logPath.
func startServer(bin string, m Mode, dir, logPath string, timeout time.Duration) (*proc, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		out, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(out, "=== %s %s\n", time.Now().Format(time.RFC3339Nano), strings.Join(serverArgs(m, dir, port), " "))
		cmd := exec.Command(bin, serverArgs(m, dir, port)...)
		cmd.Stdout, cmd.Stderr = out, out
		cmd.SysProcAttr = ownGroup()
		if err := cmd.Start(); err != nil {
			out.Close()
			return nil, err
		}
		p := &proc{cmd: cmd, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), log: logPath, exited: make(chan struct{})}
		go func() {
			p.err = cmd.Wait()
			out.Close()
			close(p.exited)
		}()
		lastErr = p.waitReady(timeout)
		if lastErr == nil {
			return p, nil
		}
		p.kill()
		// Someone else took the port between freePort and the bind: retry.
		if !strings.Contains(tail(logPath, 5), "in use") {
			break
		}
	}
	return nil, lastErr
}

func (p *proc) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	last := "no connection"
	for time.Now().Before(deadline) {
		select {
		case <-p.exited:
			return fmt.Errorf("server exited (%v): %s", p.err, tail(p.log, 3))
		default:
		}
		if c, err := dial(p.addr, time.Second); err == nil {
			c.conn.SetDeadline(time.Now().Add(5 * time.Second))
			v, err := c.do("PING")
			c.close()
			if v == "PONG" {
				return nil
			}
			last = fmt.Sprint(v, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("server not ready after %v (last: %s): %s", timeout, last, tail(p.log, 3))
}

// kill kills the server at once (killServer) and waits for it.
func (p *proc) kill() {
	killServer(p.cmd.Process)
	<-p.exited
}

// tail returns the last n lines of a file, joined with " | ".
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		lines = append(lines, s.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, " | ")
}

// info returns the fields of INFO section as a map.
func info(c *client, section string) (map[string]string, error) {
	v, err := c.do("INFO", section)
	if err != nil {
		return nil, err
	}
	s, err := asString(v)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, line := range strings.Split(s, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m, nil
}

// nextBaseNames returns the names a rewrite's new base file can take: the
// manifest's base sequence number plus one (redis-server numbers bases and
// incremental files separately) and its highest sequence number plus one
// (Keyhive numbers them together).
func nextBaseNames(dir string) ([]string, error) {
	aofDir := filepath.Join(dir, "appendonlydir")
	data, err := os.ReadFile(filepath.Join(aofDir, "appendonly.aof.manifest"))
	if err != nil {
		return nil, err
	}
	var base, highest int
	for _, line := range strings.Split(string(data), "\n") {
		// file appendonly.aof.1.base.rdb seq 1 type b
		f := strings.Fields(line)
		if len(f) < 6 || f[0] != "file" {
			continue
		}
		seq, err := strconv.Atoi(f[3])
		if err != nil {
			return nil, fmt.Errorf("manifest line %q", line)
		}
		if f[5] == "b" {
			base = seq
		}
		highest = max(highest, seq)
	}
	if base == 0 && highest == 0 {
		return nil, errors.New("empty manifest")
	}
	var names []string
	for _, seq := range []int{base + 1, highest + 1} {
		name := filepath.Join(aofDir, "appendonly.aof."+strconv.Itoa(seq)+".base.rdb")
		if len(names) == 0 || names[0] != name {
			names = append(names, name)
		}
	}
	return names, nil
}

// tempFiles lists the temporary files left in the data directory and the
// AOF directory (a save or rewrite interrupted by the kill).
func tempFiles(dir string) []string {
	var out []string
	for _, d := range []string{dir, filepath.Join(dir, "appendonlydir")} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "temp-") || strings.HasSuffix(e.Name(), ".tmp") {
				out = append(out, filepath.Join(filepath.Base(d), e.Name()))
			}
		}
	}
	return out
}
