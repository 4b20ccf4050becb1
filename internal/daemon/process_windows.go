package daemon

import (
	"errors"
	"syscall"
)

// detachedAttr refuses: a daemon here is a Unix session leader handed a
// pipe as an extra descriptor, which Windows processes have neither of.
func detachedAttr() (*syscall.SysProcAttr, error) {
	return nil, errors.New("daemonize yes is not supported on Windows: run keyhive as a service or from a background job instead")
}

// stopForUpstart does nothing: Upstart is a Linux init system, and the
// supervised directive finds it only through its UPSTART_JOB variable.
func stopForUpstart() {}
