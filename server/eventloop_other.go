//go:build !linux

package server

import (
	"errors"
	"net"
)

// Without epoll every client is served by its own goroutine.
type eventLoop struct{}

func newEventLoop(*Server) (*eventLoop, error) { return nil, errors.ErrUnsupported }

func (*eventLoop) adopt(*Client, *net.TCPConn) bool { return false }
func (*eventLoop) run()                             {}
func (*eventLoop) stop()                            {}
func (*eventLoop) writeOut(*Client) bool            { return false }
