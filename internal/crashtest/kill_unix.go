//go:build unix

package crashtest

import (
	"os"
	"syscall"
)

// ownGroup starts the server in a process group of its own, so that the
// kill also takes redis-server's forked children (a rewrite or save in
// progress).
func ownGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killServer sends SIGKILL to the server's process group.
func killServer(p *os.Process) { syscall.Kill(-p.Pid, syscall.SIGKILL) }
