package logging

import (
	"bytes"
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
