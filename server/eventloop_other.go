//go:build !linux

package server

import (
	"net"
	"syscall"
)

// Without epoll there are no event loops: every client has a goroutine of
// its own (Client.serve) on Go's network poller, the path TLS clients take
// on Linux. The declarations below only let the loops' call sites compile:
// no loopConn is made, Client.lc and waiter.lc stay nil, and none of these
// methods runs.

type eventLoop struct{}

type loopConn struct {
	net.Conn
	loop   *eventLoop
	client *Client
}

type taskKind uint8

const (
	taskAdd taskKind = iota
	taskWake
)

func (s *Server) startLoops() error                       { return nil }
func (s *Server) stopLoops()                              {}
func (s *Server) loopConnOf(net.Conn) *loopConn           { return nil }
func (l *eventLoop) post(taskKind, *loopConn)             {}
func (lc *loopConn) writeNow([]byte) (int, syscall.Errno) { return 0, syscall.EINVAL }
func (lc *loopConn) writeSome([]byte, bool) (int, error)  { return 0, syscall.EINVAL }
func (lc *loopConn) shutdown()                            {}
