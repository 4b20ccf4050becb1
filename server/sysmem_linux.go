package server

import "syscall"

// systemMemory is the machine's RAM in bytes (INFO's total_system_memory).
func systemMemory() int64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}
