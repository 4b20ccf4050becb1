//go:build !linux

package server

import (
	"net"
	"time"
)

// waitReadable leaves the wait to the read that follows: the thread-blocking
// wait is Linux's (migrate_wait_linux.go).
func waitReadable(net.Conn, time.Time) {}
