//go:build unix

package durability

import (
	"errors"
	"syscall"
)

// processGone reports whether no process has the id pid.
func processGone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }
