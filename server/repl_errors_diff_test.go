package server_test

import (
	"net"
	"os"
	"strconv"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestReplErrorTexts: replication's refusals and errors, byte for byte as
// redis-server 7.0.15's, on a master and on a replica whose master is down.
func TestReplErrorTexts(t *testing.T) {
	redis := startReplNode(t, true)
	keyhive := startReplNode(t, false)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	downPort := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close() // nothing listens there: the link stays down
	steps := [][]any{
		{"REPLCONF", "listening-port"},
		{"REPLCONF", "nosuch", "1"},
		{"REPLCONF", "listening-port", "abc"},
		{"REPLCONF", "capa", "eof", "capa", "psync2"},
		{"REPLICAOF", "127.0.0.1", "notaport"},
		{"REPLICAOF", "NO", "ONE"},
		{"SLAVEOF", "no", "one"},
		{"WAIT", 0, 0},
		{"CONFIG", "SET", "min-replicas-to-write", 1},
		{"SET", "k", "v"},
		{"GET", "k"},
		{"CONFIG", "SET", "min-replicas-to-write", 0},
		{"SET", "k", "v"},
		{"REPLICAOF", "127.0.0.1", downPort},
		{"CONFIG", "GET", "replicaof"},
		{"CONFIG", "GET", "slaveof"},
		{"SET", "k", "v2"},
		{"MULTI"}, {"SET", "k", "v3"}, {"EXEC"},
		{"GET", "k"},
		{"WAIT", 1, 0},
		{"PSYNC", "?", "-1"},
		{"CONFIG", "SET", "replica-serve-stale-data", "no"},
		{"GET", "k"},
		{"PING"},
		{"INFO", "nosuchsection"},
		{"CONFIG", "SET", "replica-read-only", "no"},
		{"CONFIG", "SET", "replica-serve-stale-data", "yes"},
		{"SET", "k", "local"},
		{"GET", "k"},
		{"REPLICAOF", "NO", "ONE"},
		{"GET", "k"},
		{"CONFIG", "GET", "replicaof"},
	}
	for _, args := range steps {
		r, k := redis.do(t, args...), keyhive.do(t, args...)
		if string(r.Raw) != string(k.Raw) {
			t.Errorf("%v:\nredis   %q\nkeyhive %q", args, r.Raw, k.Raw)
		}
	}
}

// TestReplRefusalsInScriptsAndExec: min-replicas-to-write and a read-only
// replica refuse writes inside scripts and functions (at the script's start
// when it declares that it writes, at the write otherwise) and an EXEC
// whose queue writes (checked again at EXEC), byte for byte as
// redis-server 7.4 (7.0 words the refusal of a script that declares writes
// on a replica as a plain write's).
func TestReplRefusalsInScriptsAndExec(t *testing.T) {
	addr, stop, err := difftest.StartProcess(difftest.Need74(t))
	redis := openReplNode(t, "redis 7.4", addr, stop, err)
	keyhive := startReplNode(t, false)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	downPort := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	const lib = "#!lua name=lib\n" +
		"redis.register_function('w', function() return redis.call('set', 'a', 'w') end)\n" +
		"redis.register_function{function_name='r', callback=function() return redis.call('get', 'a') end, flags={'no-writes'}}"
	scripts := [][]any{
		{"EVAL", "return redis.call('set', 'a', 'e')", 0},
		{"EVAL", "return redis.pcall('set', 'a', 'e')", 0},
		{"EVAL", "#!lua\nreturn redis.call('set', 'a', 'e')", 0},
		{"EVAL", "#!lua flags=no-writes\nreturn redis.call('get', 'a')", 0},
		{"EVAL", "return redis.call('get', 'a')", 0},
		{"EVAL_RO", "return redis.call('get', 'a')", 0},
		{"FCALL", "w", 0},
		{"FCALL", "r", 0},
		{"FCALL_RO", "r", 0},
		{"GET", "a"},
	}
	var got [2][][]byte
	for i, n := range []*replNode{redis, keyhive} {
		other := openReplNode(t, n.name+" (second connection)", n.addr, func() {}, nil)
		steps := [][]any{{"FUNCTION", "LOAD", lib}, {"SET", "a", "1"}, {"MULTI"}, {"SET", "a", "2"}}
		var replies [][]byte
		for _, args := range steps {
			replies = append(replies, n.do(t, args...).Raw)
		}
		other.ok(t, "CONFIG", "SET", "min-replicas-to-write", 1)
		for _, args := range append([][]any{{"EXEC"}, {"MULTI"}, {"GET", "a"}, {"EXEC"}}, scripts...) {
			replies = append(replies, n.do(t, args...).Raw)
		}
		n.ok(t, "CONFIG", "SET", "min-replicas-to-write", 0)
		n.ok(t, "REPLICAOF", "127.0.0.1", downPort)
		for _, args := range scripts {
			replies = append(replies, n.do(t, args...).Raw)
		}
		n.ok(t, "REPLICAOF", "NO", "ONE")
		got[i] = replies
	}
	for i := range got[0] {
		if string(got[0][i]) != string(got[1][i]) {
			t.Errorf("reply %d:\nredis   %q\nkeyhive %q", i, got[0][i], got[1][i])
		}
	}
}

// TestBgsaveErrorStopsWrites: after a background save fails (its dir was
// removed) with save points set, writes and PING are refused with MISCONF
// until stop-writes-on-bgsave-error is turned off, byte for byte as
// redis-server 7.0.15.
func TestBgsaveErrorStopsWrites(t *testing.T) {
	var got [2][][]byte
	for i, redis := range []bool{true, false} {
		n := startReplNode(t, redis, "--save", "3600 1", "--enable-protected-configs", "yes")
		dir := t.TempDir()
		n.ok(t, "CONFIG", "SET", "dir", dir)
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		n.ok(t, "SET", "k", "v")
		n.ok(t, "BGSAVE")
		waitUntil(t, n.name+" background save to fail", func() bool {
			return n.info(t, "persistence", "rdb_last_bgsave_status") == "err"
		})
		for _, args := range [][]any{{"SET", "k", "v2"}, {"PING"}, {"GET", "k"}, {"MULTI"}, {"INCR", "n"}, {"EXEC"},
			{"EVAL", "return redis.call('set', 'k', 'e')", 0}, {"EVAL", "return redis.call('get', 'k')", 0},
			{"CONFIG", "SET", "stop-writes-on-bgsave-error", "no"}, {"SET", "k", "v3"}, {"PING"}} {
			got[i] = append(got[i], n.do(t, args...).Raw)
		}
	}
	for i := range got[0] {
		if string(got[0][i]) != string(got[1][i]) {
			t.Errorf("reply %d:\nredis   %q\nkeyhive %q", i, got[0][i], got[1][i])
		}
	}
}
