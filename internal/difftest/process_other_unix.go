//go:build unix && !linux

package difftest

import "syscall"

// childAttr puts a child in a process group of its own; only Linux kills
// it when the test binary dies.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
