//go:build unix

package difftest

import (
	"errors"
	"syscall"
)

// KillGroup kills the process group StartChild gave the process pid.
func KillGroup(pid int) { syscall.Kill(-pid, syscall.SIGKILL) }

// processGone reports whether no process has that pid.
func processGone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }
