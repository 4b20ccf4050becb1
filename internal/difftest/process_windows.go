package difftest

import (
	"os"
	"syscall"
)

// childAttr starts a child as any process: Windows has no process groups
// to kill at once, nor a signal on the parent's death.
func childAttr() *syscall.SysProcAttr { return nil }

// KillGroup kills the process pid (its own children, if any, live on).
func KillGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

// processGone reports whether no process has that pid.
func processGone(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	p.Release()
	return false
}
