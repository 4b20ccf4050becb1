package partition

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// Proc is a server process in a host's namespace.
type Proc struct {
	Addr    string
	logPath string
	pid     int
	exited  <-chan struct{}
}

// Start runs bin (redis-server, or a built keyhive: the same command line)
// in h's namespace on h.IP:port, with dir as its working directory and
// log, args after the defaults, and waits until it accepts connections.
func (h *Host) Start(bin, dir string, port int, args ...string) (*Proc, error) {
	return h.start(dir, port, append([]string{bin,
		"--bind", h.IP, "--port", strconv.Itoa(port), "--dir", dir, "--daemonize", "no",
		"--save", "", "--appendonly", "no", "--protected-mode", "no"}, args...))
}

// StartSentinel runs Debian's redis-sentinel in h's namespace on
// h.IP:port, monitoring the master at masterAddr as "mymaster" with quorum
// 2, down after 1 s and a failover timeout of 5 s, its configuration file
// (which Sentinel rewrites) and log in dir.
func (h *Host) StartSentinel(dir string, port int, masterAddr string) (*Proc, error) {
	bin, err := exec.LookPath("redis-sentinel")
	if err != nil {
		return nil, errors.New("redis-sentinel not found: apt-get install redis-sentinel")
	}
	host, mport, err := net.SplitHostPort(masterAddr)
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "sentinel.conf")
	text := fmt.Sprintf("port %d\nbind %s\ndir %s\nsentinel monitor mymaster %s %s 2\n"+
		"sentinel down-after-milliseconds mymaster 1000\nsentinel failover-timeout mymaster 5000\n", port, h.IP, dir, host, mport)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		return nil, err
	}
	return h.start(dir, port, []string{bin, conf})
}

// start runs argv in h's namespace with dir as its working directory and
// log, and waits until h.IP:port accepts connections.
func (h *Host) start(dir string, port int, argv []string) (*Proc, error) {
	logPath := filepath.Join(dir, "server.log")
	out, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	cmd := exec.Command("ip", append([]string{"netns", "exec", h.NS}, argv...)...) // ip execs argv in the namespace: the pid is the server's
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, out
	exited, err := difftest.StartChild(cmd)
	if err != nil {
		return nil, err
	}
	p := &Proc{Addr: net.JoinHostPort(h.IP, strconv.Itoa(port)), logPath: logPath, pid: cmd.Process.Pid, exited: exited}
	for deadline := time.Now().Add(20 * time.Second); ; {
		select {
		case <-exited:
			return nil, fmt.Errorf("%s exited at start:\n%s", argv[0], p.Log())
		default:
		}
		if c, err := net.DialTimeout("tcp", p.Addr, 200*time.Millisecond); err == nil {
			c.Close()
			return p, nil
		}
		if time.Now().After(deadline) {
			p.Kill()
			return nil, fmt.Errorf("%s does not answer on %s:\n%s", argv[0], p.Addr, p.Log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Kill sends SIGKILL and waits for the process to be gone.
func (p *Proc) Kill() {
	difftest.KillGroup(p.pid)
	<-p.exited
}

// Log is the last 8 KB the process wrote.
func (p *Proc) Log() string {
	b, _ := os.ReadFile(p.logPath)
	return string(b[max(0, len(b)-8<<10):])
}
