package server_test

import (
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestInfoThreads: INFO threads (Redis 8.0, redis.io/docs/latest/commands/info/,
// "threads" section) has a line per I/O thread, io_thread_<n>:clients=..,
// reads=..,writes=..; Keyhive's I/O threads are its event loops
// (io-threads). The clients add up to the connected ones, and each
// command read and replied to counts; CONFIG RESETSTAT zeroes the counts.
// Named, or under ALL, not in the default sections.
func TestInfoThreads(t *testing.T) {
	srv, err := newKeyhive(t, "--io-threads", "2")
	if err != nil {
		t.Fatal(err)
	}
	conns := []string{}
	for range 4 {
		c := dial(t, srv.Addr())
		if r, err := c.Do("PING"); err != nil || r.Str != "PONG" {
			t.Fatalf("PING: %v %v", r, err)
		}
		conns = append(conns, srv.Addr())
	}
	c := dial(t, srv.Addr())
	line := regexp.MustCompile(`^io_thread_(\d+):clients=(\d+),reads=(\d+),writes=(\d+)$`)
	threads := func() (clients, reads, writes int, lines []string) {
		r, err := c.Do("INFO", "threads")
		if err != nil {
			t.Fatal(err)
		}
		body, ok := strings.CutPrefix(r.Str, "# Threads\r\n")
		if !ok {
			t.Fatalf("INFO threads: %q", r.Str)
		}
		for i, l := range strings.Split(strings.TrimSuffix(body, "\r\n"), "\r\n") {
			m := line.FindStringSubmatch(l)
			if m == nil || m[1] != strconv.Itoa(i) {
				t.Fatalf("INFO threads line %d: %q", i, l)
			}
			n, _ := strconv.Atoi(m[2])
			rd, _ := strconv.Atoi(m[3])
			wr, _ := strconv.Atoi(m[4])
			clients, reads, writes = clients+n, reads+rd, writes+wr
			lines = append(lines, l)
		}
		return
	}
	clients, reads, writes, lines := threads()
	// One line per event loop; the portable path has none and counts
	// every client under thread 0.
	wantLines := 2
	if os.Getenv("KEYHIVE_PORTABLE_IO") == "yes" || runtime.GOOS != "linux" {
		wantLines = 1
	}
	if len(lines) != wantLines || clients != len(conns)+1 || reads < len(conns)+1 || writes < len(conns) {
		t.Fatalf("INFO threads with io-threads 2 and %d clients: %q", len(conns)+1, lines)
	}
	if _, err := c.Do("CONFIG", "RESETSTAT"); err != nil {
		t.Fatal(err)
	}
	if _, reads, writes, lines = threads(); reads != 1 || writes != 1 { // CONFIG RESETSTAT's reply, this INFO's read
		t.Fatalf("after CONFIG RESETSTAT: %q", lines)
	}
	for _, args := range [][]any{{"INFO"}, {"INFO", "default"}} {
		if r, _ := c.Do(args...); strings.Contains(r.Str, "# Threads") {
			t.Errorf("%v shows the threads section", args)
		}
	}
	for _, args := range [][]any{{"INFO", "all"}, {"INFO", "everything"}} {
		if r, _ := c.Do(args...); !strings.Contains(r.Str, "\r\n# Persistence\r\n") || !strings.Contains(r.Str, "\r\n# Threads\r\nio_thread_0:") {
			t.Errorf("%v lacks the threads section", args)
		}
	}
}
