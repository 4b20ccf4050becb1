package server

import "syscall"

type syscallRusage struct{ user, sys float64 }

// selfRusage reads the process's CPU times, which Windows counts in 100 ns
// units.
func selfRusage(r *syscallRusage) {
	var created, exited, kernel, user syscall.Filetime
	p, err := syscall.GetCurrentProcess()
	if err != nil || syscall.GetProcessTimes(p, &created, &exited, &kernel, &user) != nil {
		return
	}
	r.user = filetimeSeconds(user)
	r.sys = filetimeSeconds(kernel)
}

func filetimeSeconds(t syscall.Filetime) float64 {
	return float64(uint64(t.HighDateTime)<<32|uint64(t.LowDateTime)) / 1e7
}
