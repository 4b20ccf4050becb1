//go:build !linux

package server

// systemMemory is the machine's RAM in bytes (INFO's total_system_memory):
// 0, unknown, where package syscall cannot ask the OS.
func systemMemory() int64 { return 0 }
