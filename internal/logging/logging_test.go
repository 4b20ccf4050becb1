package logging

import (
	"bytes"
	"log/syslog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFormatAndLevels: Redis's line format and level marks; lines below the
// level are dropped, also those coming through Std; nothing drops all.
func TestFormatAndLevels(t *testing.T) {
	var out bytes.Buffer
	l, err := New(Options{Stdout: &out, Level: Verbose})
	if err != nil {
		t.Fatal(err)
	}
	l.Logf(Debug, "debug %d", 1)
	l.Logf(Verbose, "verbose %d", 2)
	l.Logf(Notice, "notice %d", 3)
	l.Logf(Warning, "warning %d", 4)
	l.Std(Notice).Printf("from std %s", "log")
	l.SetLevel(Warning)
	l.Std(Notice).Printf("dropped")
	l.Logf(Notice, "dropped")
	l.SetLevel(Nothing)
	l.Logf(Warning, "dropped")
	pid := strconv.Itoa(os.Getpid())
	re := regexp.MustCompile(`^` + pid + `:M (\d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d\.\d{3}) (.) (.*)$`)
	var got []string
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		m := re.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("line %q is not in Redis's format", line)
		}
		if ts, err := time.ParseInLocation("02 Jan 2006 15:04:05.000", m[1], time.Local); err != nil || time.Since(ts) > time.Minute {
			t.Errorf("time %q: %v", m[1], err)
		}
		got = append(got, m[2]+" "+m[3])
	}
	want := []string{"- verbose 2", "* notice 3", "# warning 4", "* from std log"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines %q, want %q", got, want)
	}
}

// TestLogFileReopened: each line opens the file, so a rotated (moved) log
// is followed by a new file, as with Redis.
func TestLogFileReopened(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keyhive.log")
	l, err := New(Options{File: path, Level: Notice})
	if err != nil {
		t.Fatal(err)
	}
	l.Logf(Notice, "first")
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	l.Logf(Warning, "second")
	old, _ := os.ReadFile(path + ".1")
	cur, _ := os.ReadFile(path)
	if !strings.HasSuffix(string(old), " * first\n") || !strings.HasSuffix(string(cur), " # second\n") || strings.Count(string(cur), "\n") != 1 {
		t.Errorf("rotated %q, current %q", old, cur)
	}
	if _, err := New(Options{File: filepath.Join(dir, "missing", "x.log")}); err == nil || !strings.HasPrefix(err.Error(), "Can't open the log file: ") {
		t.Errorf("a log file that cannot be opened: %v", err)
	}
}

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
