package server_test

import (
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// toolPath finds one of Redis's command-line tools, installed with the
// redis-server package the test command sets up.
func toolPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found: run the README test command, which installs it", name)
	}
	return p
}

// TestRedisCLI uses redis-cli unchanged: plain commands, --scan, and --pipe
// mass insertion (which ends with an ECHO of a random marker).
func TestRedisCLI(t *testing.T) {
	srv := startKeyhive(t)
	host, port := hostPort(t, srv.Addr())
	cli := toolPath(t, "redis-cli")
	run := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command(cli, append([]string{"-h", host, "-p", port}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("redis-cli %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := run("", "PING"); got != "PONG" {
		t.Fatalf("PING: %q", got)
	}
	var pipe strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&pipe, "*3\r\n$3\r\nSET\r\n$%d\r\nql:v1:link:%d\r\n$1\r\nx\r\n", len(fmt.Sprintf("ql:v1:link:%d", i)), i)
	}
	if got := run(pipe.String(), "--pipe"); !strings.Contains(got, "errors: 0, replies: 1000") {
		t.Fatalf("--pipe: %q", got)
	}
	if got := run("", "DBSIZE"); got != "1000" {
		t.Fatalf("DBSIZE after --pipe: %q", got)
	}
	keys := strings.Fields(run("", "--scan", "--pattern", "ql:v1:link:1*"))
	if len(keys) != 111 { // 1, 10-19, 100-199
		t.Fatalf("--scan found %d keys", len(keys))
	}
	if got := run("", "SET", "greeting", "hello world", "EX", "100"); got != "OK" {
		t.Fatalf("SET: %q", got)
	}
	if got := run("", "GET", "greeting"); got != "hello world" {
		t.Fatalf("GET: %q", got)
	}
	if got := run("", "INFO", "keyspace"); !strings.Contains(got, "db0:keys=1001,expires=1") {
		t.Fatalf("INFO keyspace: %q", got)
	}
	if got := run("", "-3", "HELLO"); !strings.Contains(got, "proto") {
		t.Fatalf("RESP3 HELLO: %q", got)
	}
}

// TestRedisBenchmark runs redis-benchmark unchanged, pipelined and not.
func TestRedisBenchmark(t *testing.T) {
	srv := startKeyhive(t)
	host, port := hostPort(t, srv.Addr())
	bench := toolPath(t, "redis-benchmark")
	for _, pipeline := range []string{"1", "16"} {
		out, err := exec.Command(bench, "-h", host, "-p", port, "-t", "ping,set,get,incr,mset", "-n", "2000", "-c", "10",
			"-r", "1000", "-P", pipeline, "-q").CombinedOutput()
		if err != nil {
			t.Fatalf("redis-benchmark -P %s: %v\n%s", pipeline, err, out)
		}
		for _, test := range []string{"PING_INLINE: ", "PING_MBULK: ", "SET: ", "GET: ", "INCR: ", "MSET (10 keys): "} {
			if !strings.Contains(string(out), test) || strings.Contains(string(out), "ERR") {
				t.Fatalf("redis-benchmark -P %s: no result for %s\n%s", pipeline, test, out)
			}
		}
	}
}

// TestShutdown stops the server from a client, as SHUTDOWN does in Redis: no
// reply, the connection closes, and the server is done.
func TestShutdown(t *testing.T) {
	srv := startKeyhive(t)
	conn, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte("SHUTDOWN NOSAVE\r\n"))
	select {
	case <-srv.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("server still running after SHUTDOWN")
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, _ := conn.Read(make([]byte, 16)); n != 0 {
		t.Fatal("SHUTDOWN replied")
	}
	if _, err := net.DialTimeout("tcp", srv.Addr(), time.Second); err == nil {
		t.Fatal("server still accepts connections")
	}
}
