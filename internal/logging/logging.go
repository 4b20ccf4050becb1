// Package logging is the server process's log, in Redis's format and with
// Redis's directives: logfile (empty: standard output), loglevel, and
// syslog-enabled / syslog-ident / syslog-facility. A line reads
//
//	12345:M 26 Nov 2026 19:11:08.123 * Ready to accept connections tcp
//
// (pid, role, time to the millisecond, level mark, message), as redis-server
// writes it. The role is M on a master and S on a replica (SetRole). The file is opened for each line, as Redis does, so a log rotator
// may move it away without telling the server.
//
// The server library logs through a *log.Logger (server.WithLogger); Std
// gives one whose lines enter this log at a fixed level, except Lua's
// redis.log lines, which the server passes with their own level.
package logging

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Level is a line's importance, Redis's loglevel.
type Level int32

// Redis's levels, lowest first; Nothing (Redis 7.2) logs nothing.
const (
	Debug Level = iota
	Verbose
	Notice
	Warning
	Nothing
)

var levelNames = [...]string{"debug", "verbose", "notice", "warning", "nothing"}

// marks are Redis's level characters in a log line.
const marks = ".-*#"

// ParseLevel reads a loglevel value.
func ParseLevel(s string) (Level, error) {
	for i, n := range levelNames {
		if n == s {
			return Level(i), nil
		}
	}
	return 0, fmt.Errorf("unknown loglevel %q", s)
}

// Options are the directives the log follows.
type Options struct {
	File           string    // "" logs to Stdout
	Stdout         io.Writer // where File "" logs (os.Stdout when nil)
	Level          Level
	Syslog         bool
	SyslogIdent    string
	SyslogFacility string // user, local0 ... local7
}

// Logger is one process's log; safe for concurrent use.
type Logger struct {
	file   string
	stdout io.Writer
	level  atomic.Int32
	syslog syslogWriter
	pid    int
	role   atomic.Uint32 // the role mark, 'M' or 'S'

	mu  sync.Mutex // one line at a time
	buf []byte
}

// syslogWriter is a connection to the syslog daemon (*syslog.Writer).
type syslogWriter interface {
	Debug(string) error
	Info(string) error
	Notice(string) error
	Warning(string) error
	Close() error
}

// New opens the log. As redis-server, it fails when the log file cannot be
// opened for appending; a syslog daemon that cannot be reached is not an
// error (Redis's openlog never fails): its lines are lost and the log says so.
func New(o Options) (*Logger, error) {
	l := &Logger{file: o.File, stdout: o.Stdout, pid: os.Getpid()}
	if l.stdout == nil {
		l.stdout = os.Stdout
	}
	l.level.Store(int32(o.Level))
	l.role.Store('M')
	if o.File != "" {
		f, err := os.OpenFile(o.File, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("Can't open the log file: %w", err)
		}
		f.Close()
	}
	if o.Syslog {
		w, err := openSyslog(o.SyslogFacility, o.SyslogIdent)
		var unreachable errSyslogUnreachable
		switch {
		case errors.As(err, &unreachable):
			l.Logf(Warning, "syslog-enabled is yes but syslog is unavailable: %v", unreachable.err)
		case err != nil:
			return nil, err
		default:
			l.syslog = w
		}
	}
	return l, nil
}

// SetRole sets the role mark of the lines that follow: 'S' while the
// server is a replica, 'M' while it is a master.
func (l *Logger) SetRole(mark byte) { l.role.Store(uint32(mark)) }

// SetLevel changes the level below which lines are dropped (CONFIG SET loglevel).
func (l *Logger) SetLevel(level Level) { l.level.Store(int32(level)) }

// Logf writes one line at level, unless the level is below the log's.
func (l *Logger) Logf(level Level, format string, args ...any) {
	if level < Level(l.level.Load()) || level >= Nothing {
		return
	}
	l.write(level, fmt.Sprintf(format, args...))
}

func (l *Logger) write(level Level, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := fmt.Appendf(l.buf[:0], "%d:%c ", l.pid, byte(l.role.Load()))
	b = time.Now().AppendFormat(b, "02 Jan 2006 15:04:05.000")
	b = append(b, ' ', marks[level], ' ')
	b = append(b, msg...)
	b = append(b, '\n')
	l.buf = b
	if l.file == "" {
		l.stdout.Write(b)
	} else if f, err := os.OpenFile(l.file, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err == nil {
		f.Write(b)
		f.Close()
	}
	if l.syslog != nil {
		// Syslog stamps its own time and ident: the message alone, at
		// Redis's mapping of levels to priorities.
		switch level {
		case Debug:
			l.syslog.Debug(msg)
		case Verbose:
			l.syslog.Info(msg)
		case Notice:
			l.syslog.Notice(msg)
		default:
			l.syslog.Warning(msg)
		}
	}
}

// Std returns a *log.Logger whose lines enter this log at level.
func (l *Logger) Std(level Level) *log.Logger {
	return log.New(stdWriter{l, level}, "", 0)
}

type stdWriter struct {
	l     *Logger
	level Level
}

// Write takes one line from log.Logger (which adds the final newline).
func (w stdWriter) Write(p []byte) (int, error) {
	if w.level >= Level(w.l.level.Load()) {
		w.l.write(w.level, string(bytes.TrimSuffix(p, []byte("\n"))))
	}
	return len(p), nil
}

// LogLevel writes msg at level (Debug ... Warning, Redis's numbering) instead
// of the writer's own: the server sends Lua's redis.log lines here.
func (w stdWriter) LogLevel(level int, msg string) {
	w.l.Logf(Level(min(max(level, int(Debug)), int(Warning))), "%s", msg)
}

// SetRole sets the log's role mark: the server finds it through its
// *log.Logger's writer when it becomes a replica or a master.
func (w stdWriter) SetRole(mark byte) { w.l.SetRole(mark) }

// errSyslogUnreachable: the syslog daemon could not be reached.
type errSyslogUnreachable struct{ err error }

func (e errSyslogUnreachable) Error() string { return e.err.Error() }

// Close disconnects from syslog.
func (l *Logger) Close() {
	if l.syslog != nil {
		l.syslog.Close()
	}
}
