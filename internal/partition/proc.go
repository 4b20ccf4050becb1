package partition

import (
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
	logPath := filepath.Join(dir, "server.log")
	out, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	cmdline := append([]string{"netns", "exec", h.NS, bin,
		"--bind", h.IP, "--port", strconv.Itoa(port), "--dir", dir, "--daemonize", "no",
		"--save", "", "--appendonly", "no", "--protected-mode", "no"}, args...)
	cmd := exec.Command("ip", cmdline...) // ip execs bin in the namespace: the pid is the server's
	cmd.Stdout, cmd.Stderr = out, out
	exited, err := difftest.StartChild(cmd)
	if err != nil {
		return nil, err
	}
	p := &Proc{Addr: net.JoinHostPort(h.IP, strconv.Itoa(port)), logPath: logPath, pid: cmd.Process.Pid, exited: exited}
	for deadline := time.Now().Add(20 * time.Second); ; {
		select {
		case <-exited:
			return nil, fmt.Errorf("%s exited at start:\n%s", bin, p.Log())
		default:
		}
		if c, err := net.DialTimeout("tcp", p.Addr, 200*time.Millisecond); err == nil {
			c.Close()
			return p, nil
		}
		if time.Now().After(deadline) {
			p.Kill()
			return nil, fmt.Errorf("%s does not answer on %s:\n%s", bin, p.Addr, p.Log())
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
