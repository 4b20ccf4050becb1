//go:build !windows

package logging

import (
	"bytes"
	"log/syslog"
	"net"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestSyslog: with syslog on, each line also goes to syslog with the ident,
// the facility and Redis's priority for its level, the message alone.
func TestSyslog(t *testing.T) {
	sockPath := filepath.Join(t.TempDir(), "log")
	sock, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sockPath, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	defer func(d func(syslog.Priority, string) (*syslog.Writer, error)) { dialSyslog = d }(dialSyslog)
	dialSyslog = func(p syslog.Priority, ident string) (*syslog.Writer, error) {
		return syslog.Dial("unixgram", sockPath, p, ident)
	}
	var out bytes.Buffer
	l, err := New(Options{Stdout: &out, Level: Debug, Syslog: true, SyslogIdent: "keyhive-test", SyslogFacility: "local3"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.Logf(Debug, "a debug line")
	l.Logf(Warning, "a warning line")
	// <PRI> is facility*8 + severity: local3 = 19, debug 7, warning 4.
	for _, want := range []string{`^<159>.* keyhive-test\[\d+\]: a debug line\n?$`, `^<156>.* keyhive-test\[\d+\]: a warning line\n?$`} {
		buf := make([]byte, 1024)
		sock.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := sock.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(want).Match(buf[:n]) {
			t.Errorf("syslog got %q, want %s", buf[:n], want)
		}
	}
	if strings.Count(out.String(), "\n") != 2 {
		t.Errorf("stdout has %q", out.String())
	}
}

// TestSyslogUnavailable: a syslog daemon that cannot be reached is a warning
// in the log, not a failure to start.
func TestSyslogUnavailable(t *testing.T) {
	defer func(d func(syslog.Priority, string) (*syslog.Writer, error)) { dialSyslog = d }(dialSyslog)
	dialSyslog = func(syslog.Priority, string) (*syslog.Writer, error) {
		return syslog.Dial("unixgram", filepath.Join(t.TempDir(), "none"), syslog.LOG_NOTICE, "x")
	}
	var out bytes.Buffer
	if _, err := New(Options{Stdout: &out, Level: Notice, Syslog: true, SyslogIdent: "x", SyslogFacility: "user"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), " # syslog-enabled is yes but syslog is unavailable: ") {
		t.Errorf("log: %q", out.String())
	}
}
