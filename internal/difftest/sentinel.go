package difftest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// StartSentinel starts Debian's redis-sentinel (found on PATH) on a free
// port, monitoring the master at masterAddr as "mymaster" with quorum 2
// and short timeouts (down after 1 s, failover timeout 5 s). Sentinel
// rewrites its configuration, so it gets a file in a directory of its own.
// Its log goes to log (discarded when nil). stop kills it and removes the
// directory.
func StartSentinel(masterAddr string, log io.Writer) (addr string, stop func(), err error) {
	path, err := exec.LookPath("redis-sentinel")
	if err != nil {
		return "", nil, errors.New("redis-sentinel not found: apt-get install redis-sentinel")
	}
	host, port, err := net.SplitHostPort(masterAddr)
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", tempPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", nil, err
	}
	own, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	conf := filepath.Join(dir, "sentinel.conf")
	text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor mymaster %s %s 2\n"+
		"sentinel down-after-milliseconds mymaster 1000\nsentinel failover-timeout mymaster 5000\n", own, dir, host, port)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	cmd := exec.Command(path, conf)
	cmd.Dir = dir
	cmd.Stdout = log
	exited, err := StartChild(cmd)
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	stop = func() {
		KillGroup(cmd.Process.Pid)
		<-exited
		os.RemoveAll(dir)
	}
	addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(own))
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return addr, stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, errors.New("redis-sentinel did not accept connections within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
