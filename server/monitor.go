package server

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/keyhive/keyhive/cmdspec"
	"github.com/keyhive/keyhive/internal/quote"
)

// MONITOR. A monitoring client receives a line for every command the server
// runs, as Redis writes it: the time, the database and the client's address
// ("lua" for a script's commands), then the arguments quoted. dispatch feeds
// the line after the command ran, under its locks, so the lines of commands
// on the same keys come in the order they ran: a command EXEC runs shows
// before the EXEC, a script's commands after the EVAL (which shows itself
// before it runs, skip_monitor keeping dispatch from showing it again).
// Administrative and skip_monitor commands, refused commands, commands
// queued in MULTI and loaded ones are not shown. Credentials are redacted as
// in the slow log. The lines go through the monitors' output queues (as
// Pub/Sub messages do), as simple strings in RESP2 and RESP3 alike.

func init() {
	bind("monitor", monitorCommand)
}

type monitors struct {
	mu    sync.Mutex
	list  []*Client
	count atomic.Int32 // len(list): dispatch reads it on every command
}

func monitorCommand(x *Ctx) {
	c := x.c
	if x.blockingDenied() {
		// Inside EXEC, as Redis refuses a client that expects one reply per command.
		x.W.Error("ERR MONITOR isn't allowed for DENY BLOCKING client")
		return
	}
	if c.monitor.Load() {
		return // as Redis: no reply
	}
	c.monitor.Store(true)
	c.ps.queued = true // lines from other goroutines and replies stay in order
	m := &x.s.monitors
	m.mu.Lock()
	m.list = append(m.list, c)
	m.count.Store(int32(len(m.list)))
	m.mu.Unlock()
	x.W.OK()
}

// stopMonitor takes c out of the monitors (RESET, disconnection).
func (s *Server) stopMonitor(c *Client) {
	if !c.monitor.Load() {
		return
	}
	c.monitor.Store(false)
	m := &s.monitors
	m.mu.Lock()
	m.list = without(m.list, c)
	m.count.Store(int32(len(m.list)))
	m.mu.Unlock()
}

// feedMonitors shows a command c ran to the monitors; by is the client
// whose command it is (the EVAL's for a script's commands), whose flush
// writes the monitors' output.
func (s *Server) feedMonitors(c, by *Client, cmd *Command, args [][]byte) {
	if cmd.Flags&(cmdspec.FlagSkipMonitor|cmdspec.FlagAdmin) != 0 {
		return
	}
	s.showToMonitors(c, by, cmd, args)
}

// showToMonitors writes the MONITOR line of a command c runs.
func (s *Server) showToMonitors(c, by *Client, cmd *Command, args [][]byte) {
	m := &s.monitors
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.list) == 0 {
		return
	}
	line := monitorLine(c, cmd, args, s.now())
	for _, t := range m.list {
		s.deliverAs(t, line, by, false)
	}
}

// now is the server's time with microseconds: the wall clock, or the manual
// clock (whole milliseconds) of tests and embedders.
func (s *Server) now() time.Time {
	if s.wallClock {
		return time.Now()
	}
	return time.UnixMilli(s.clock.UnixMilli())
}

// monitorLine formats a MONITOR line.
func monitorLine(c *Client, cmd *Command, args [][]byte, now time.Time) []byte {
	b := []byte{'+'}
	b = strconv.AppendInt(b, now.Unix(), 10)
	b = append(b, '.')
	us := now.Nanosecond() / 1000
	for d := 100000; d > 1 && us < d; d /= 10 {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, int64(us), 10)
	b = append(b, " ["...)
	b = strconv.AppendInt(b, int64(c.db.Load()), 10)
	b = append(b, ' ')
	switch {
	case c == c.s.scriptClient:
		b = append(b, "lua"...)
	case c.isUnix():
		b = append(b, "unix:"...)
		b = append(b, c.s.cfg.UnixSocket()...)
	default:
		b = append(b, c.peerAddr()...)
	}
	b = append(b, ']')
	lo, hi := redacted(cmd, args)
	for i, a := range args {
		b = append(b, ' ')
		if i >= lo && i < hi {
			b = append(b, `"(redacted)"`...)
			continue
		}
		b = quote.Append(b, a)
	}
	return append(b, '\r', '\n')
}

// showSelf shows the running command to the monitors as it starts, for the
// commands that run scripts (skip_monitor keeps dispatch from showing them
// after): their script's commands then follow them, as in Redis.
func (x *Ctx) showSelf() {
	if x.s.monitors.count.Load() > 0 && !x.c.obeys {
		x.s.showToMonitors(x.c, x.c, x.cmd, x.Args)
	}
}
