package server_test

import (
	"net"
	"strconv"
	"testing"
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
