package server

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/resp"
)

// TestMigrateWaitsForTheTarget: MIGRATE waits for its target's reply (a
// slow one included) and gives up at its timeout when none comes.
func TestMigrateWaitsForTheTarget(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	replyAfter := make(chan time.Duration, 2)
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				buf := make([]byte, 64<<10)
				for {
					// A MIGRATE's request (SELECT, RESTORE) is one small
					// write: one read here, one +OK per command.
					n, err := conn.Read(buf)
					if err != nil {
						return
					}
					d := <-replyAfter
					if d < 0 {
						continue // never answers: MIGRATE times out
					}
					time.Sleep(d)
					conn.Write([]byte(strings.Repeat("+OK\r\n", countCommands(buf[:n]))))
				}
			}()
		}
	}()
	s := newTestServer(t)
	c := pipeClient(t, s)
	run := func(line string) string {
		args, _ := resp.SplitArgs([]byte(line), nil)
		c.out.B = c.out.B[:0]
		c.execute(args)
		return string(c.out.B)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)

	run("SET k1 v")
	replyAfter <- 50 * time.Millisecond
	if got := run("MIGRATE 127.0.0.1 " + port + " k1 0 2000"); got != "+OK\r\n" {
		t.Fatalf("MIGRATE to a target answering after 50 ms: %q", got)
	}
	run("SET k2 v")
	replyAfter <- -1
	start := time.Now()
	got := run("MIGRATE 127.0.0.1 " + port + " k2 0 200")
	if took := time.Since(start); !strings.HasPrefix(got, "-IOERR") || took < 200*time.Millisecond || took > 5*time.Second {
		t.Errorf("MIGRATE to a silent target with timeout 200: %q after %v", got, took)
	}
	if got := run("EXISTS k2"); got != ":1\r\n" {
		t.Errorf("the key not migrated is gone: EXISTS %q", got)
	}
}

// countCommands counts the RESP arrays of bulk strings in b.
func countCommands(b []byte) int {
	n := 0
	for len(b) > 0 && b[0] == '*' {
		end := strings.Index(string(b), "\r\n")
		args, _ := strconv.Atoi(string(b[1:end]))
		b = b[end+2:]
		for range args {
			end = strings.Index(string(b), "\r\n")
			size, _ := strconv.Atoi(string(b[1:end]))
			b = b[end+2+size+2:]
		}
		n++
	}
	return n
}
