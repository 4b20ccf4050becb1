//go:build unix

package server

import "syscall"

type syscallRusage struct{ user, sys float64 }

func selfRusage(r *syscallRusage) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		r.user = float64(ru.Utime.Sec) + float64(ru.Utime.Usec)/1e6
		r.sys = float64(ru.Stime.Sec) + float64(ru.Stime.Usec)/1e6
	}
}
