package server

import (
	"strconv"
	"sync"

	"github.com/keyhive/keyhive/cmdspec"
)

// slowLog is SLOWLOG's list: the commands that ran for at least
// slowlog-log-slower-than microseconds, at most slowlog-max-len of them.
// As in Redis, a script's calls are logged (as a client "?:0" without a
// name) and then the script, and EXEC's commands one by one, not EXEC.
type slowLog struct {
	mu      sync.Mutex
	entries []slowEntry // oldest first
	nextID  int64
}

type slowEntry struct {
	id, unix, micros int64
	args             []string
	addr, name       string
	argc             int64 // the command's arguments before args cut them (Redis 8.10)
}

// What an entry keeps of a command, as Redis: the first
// slowlog-max-argc - 1 arguments and a count of the rest (all of them when
// they are no more than slowlog-max-argc), the first slowlogString bytes
// of each.
const slowlogString = 128

func init() {
	bindSub("slowlog", "get", slowlogGet)
	bindSub("slowlog", "len", func(x *Ctx) {
		l := &x.s.slowlog
		l.mu.Lock()
		defer l.mu.Unlock()
		x.W.Int(int64(len(l.entries)))
	})
	bindSub("slowlog", "reset", func(x *Ctx) {
		l := &x.s.slowlog
		l.mu.Lock()
		l.entries = nil
		l.mu.Unlock()
		x.W.OK()
	})
	bindSub("slowlog", "help", func(x *Ctx) {
		writeHelp(x, "SLOWLOG", []string{
			"GET [<count>]",
			"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
			"    Entries are made of:",
			"    id, timestamp, time in microseconds, arguments array, client IP and port,",
			"    client name",
			"LEN",
			"    Return the length of the slowlog.",
			"RESET",
			"    Reset the slowlog.",
		})
	})
}

func slowlogGet(x *Ctx) {
	count := int64(10)
	if len(x.Args) > 2 {
		n, err := strconv.ParseInt(string(x.Args[2]), 10, 64)
		if err != nil || n < -1 {
			x.W.Error("ERR count should be greater than or equal to -1")
			return
		}
		count = n
	}
	l := &x.s.slowlog
	l.mu.Lock()
	defer l.mu.Unlock()
	if count < 0 || count > int64(len(l.entries)) {
		count = int64(len(l.entries))
	}
	x.W.Array(int(count))
	for i := len(l.entries) - 1; i >= len(l.entries)-int(count); i-- {
		e := &l.entries[i]
		x.W.Array(7)
		x.W.Int(e.id)
		x.W.Int(e.unix)
		x.W.Int(e.micros)
		x.W.Array(len(e.args))
		for _, a := range e.args {
			x.W.BulkString(a)
		}
		x.W.BulkString(e.addr)
		x.W.BulkString(e.name)
		x.W.Int(e.argc)
	}
}

// logIfSlow adds a command that ran for elapsed nanoseconds, at nowMs, to
// the slow log when it took long enough.
func (s *Server) logIfSlow(c *Client, cmd *Command, args [][]byte, elapsed, nowMs int64) {
	micros, threshold := elapsed/1000, s.cfg.SlowlogLogSlowerThan()
	if threshold < 0 || micros < threshold || cmd.Flags&cmdspec.FlagSkipSlowlog != 0 {
		return
	}
	e := slowEntry{unix: nowMs / 1000, micros: micros, addr: "?:0", name: loadString(c.name.Load()), argc: int64(len(args))}
	if c.conn != nil { // else the scripts' client, shown as Redis shows it
		e.addr = c.peerAddr()
	}
	maxArgc := s.cfg.SlowlogMaxArgc()
	kept := min(len(args), maxArgc)
	if len(args) > maxArgc {
		kept = maxArgc - 1
	}
	lo, hi := redacted(cmd, args)
	for i, a := range args[:kept] {
		switch {
		case i >= lo && i < hi:
			e.args = append(e.args, "(redacted)")
		case len(a) > slowlogString:
			e.args = append(e.args, string(a[:slowlogString])+"... ("+strconv.Itoa(len(a)-slowlogString)+" more bytes)")
		default:
			e.args = append(e.args, string(a))
		}
	}
	if kept < len(args) {
		e.args = append(e.args, "... ("+strconv.Itoa(len(args)-kept)+" more arguments)")
	}
	l := &s.slowlog
	l.mu.Lock()
	defer l.mu.Unlock()
	e.id = l.nextID
	l.nextID++
	l.entries = append(l.entries, e)
	if over := len(l.entries) - int(s.cfg.SlowlogMaxLen()); over > 0 {
		l.entries = append(l.entries[:0], l.entries[over:]...)
	}
}

// redacted is the range of arguments the slow log hides, as Redis does for
// credentials: every AUTH argument, HELLO's user and password after AUTH.
func redacted(cmd *Command, args [][]byte) (lo, hi int) {
	if cmd.spec.Redact == nil {
		return 0, 0
	}
	return cmd.spec.Redact(args)
}
