//go:build unix

package daemon

import (
	"os"
	"syscall"
)

// detachedAttr starts the daemon in a session of its own: no controlling
// terminal.
func detachedAttr() (*syscall.SysProcAttr, error) {
	return &syscall.SysProcAttr{Setsid: true}, nil
}

// stopForUpstart stops the process: Upstart's "expect stop" waits for the
// job to stop itself.
func stopForUpstart() { syscall.Kill(os.Getpid(), syscall.SIGSTOP) }
