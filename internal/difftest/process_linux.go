package difftest

import "syscall"

// childAttr puts a child in a process group of its own, killed when the
// thread that started it exits (see StartChild).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
