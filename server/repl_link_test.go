package server_test

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReplLinkOptions: a replica authenticates with masteruser and
// masterauth, announces replica-announce-ip/port, shows its master's
// connection with flag M and the master its replica's with flag S; ROLE on
// both sides; a resized backlog reports its new size.
func TestReplLinkOptions(t *testing.T) {
	master := startReplNode(t, false, "--repl-diskless-sync-delay", "0")
	master.ok(t, "ACL", "SETUSER", "repl", "on", ">secret", "+psync", "+replconf", "+ping")
	master.ok(t, "CONFIG", "SET", "requirepass", "pw")
	master.ok(t, "AUTH", "pw")
	replica := startReplNode(t, false, "--masteruser", "repl", "--masterauth", "secret",
		"--replica-announce-ip", "10.1.2.3", "--replica-announce-port", "7777")
	master.ok(t, "SET", "k", "v")
	replicate(t, master, replica)
	sameData(t, master, replica)
	if got := master.info(t, "replication", "slave0"); !strings.HasPrefix(got, "ip=10.1.2.3,port=7777,state=online,") {
		t.Fatalf("slave0:%s", got)
	}
	if list := master.ok(t, "CLIENT", "LIST", "TYPE", "replica").Str; !strings.Contains(list, " flags=S ") {
		t.Fatalf("master's CLIENT LIST TYPE replica: %q", list)
	}
	if list := replica.ok(t, "CLIENT", "LIST", "TYPE", "master").Str; !strings.Contains(list, " flags=M ") {
		t.Fatalf("replica's CLIENT LIST TYPE master: %q", list)
	}
	role := master.ok(t, "ROLE")
	if len(role.Elems) != 3 || role.Elems[0].Str != "master" || len(role.Elems[2].Elems) != 1 || role.Elems[2].Elems[0].Elems[1].Str != "7777" {
		t.Fatalf("master's ROLE: %v", role)
	}
	host, port := master.hostPort()
	role = replica.ok(t, "ROLE")
	if len(role.Elems) != 5 || role.Elems[0].Str != "slave" || role.Elems[1].Str != host || strconv.FormatInt(role.Elems[2].Int, 10) != port || role.Elems[3].Str != "connected" {
		t.Fatalf("replica's ROLE: %v", role)
	}
	master.ok(t, "CONFIG", "SET", "repl-backlog-size", "2mb")
	if got := master.info(t, "replication", "repl_backlog_size"); got != "2097152" {
		t.Fatalf("repl_backlog_size %s", got)
	}
}

// TestReplConnectedClients: a replica's link is not one of the master's
// connected_clients, as on redis-server: one client and one replica count 1.
// On the replica, its master's link is one (2 with the test's client).
func TestReplConnectedClients(t *testing.T) {
	for _, redis := range []bool{false, true} {
		master := startReplNode(t, redis, "--repl-diskless-sync-delay", "0")
		replica := startReplNode(t, redis)
		replicate(t, master, replica)
		if n := master.info(t, "clients", "connected_clients"); n != "1" {
			t.Errorf("%s master: connected_clients %s with one client and one replica, want 1", master.name, n)
		}
		if n := replica.info(t, "clients", "connected_clients"); n != "2" {
			t.Errorf("%s replica: connected_clients %s with one client and its master, want 2", replica.name, n)
		}
	}
}

// TestReplBufferMemory: with a replica attached and writes made, INFO
// memory reports the replication buffer (mem_total_replication_buffers,
// the backlog's part and the replicas' beyond repl-backlog-size), as
// redis-server does (its backlog figure adds a few bytes of bookkeeping).
func TestReplBufferMemory(t *testing.T) {
	for _, redis := range []bool{false, true} {
		master := startReplNode(t, redis, "--repl-diskless-sync-delay", "0")
		replicate(t, master, startReplNode(t, redis))
		for i := range 200 {
			master.ok(t, "SET", "k"+strconv.Itoa(i), strings.Repeat("v", 100))
		}
		total, _ := strconv.Atoi(master.info(t, "memory", "mem_total_replication_buffers"))
		backlog, _ := strconv.Atoi(master.info(t, "memory", "mem_replication_backlog"))
		replicas, _ := strconv.Atoi(master.info(t, "memory", "mem_clients_slaves"))
		if total < 200*100 || backlog < total-replicas {
			t.Errorf("%s: mem_total_replication_buffers %d, mem_replication_backlog %d, mem_clients_slaves %d after 20 KB of writes",
				master.name, total, backlog, replicas)
		}
	}
}

// TestReplHandshakeState: a replica whose master accepts the connection but
// never answers shows "handshake" in ROLE and a link down, as on
// redis-server.
func TestReplHandshakeState(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			conn, err := silent.Accept()
			if err != nil {
				return
			}
			defer conn.Close() // held open, never answered
		}
	}()
	port := strconv.Itoa(silent.Addr().(*net.TCPAddr).Port)
	for _, redis := range []bool{false, true} {
		replica := startReplNode(t, redis)
		replica.ok(t, "REPLICAOF", "127.0.0.1", port)
		waitUntil(t, replica.name+" in the handshake", func() bool {
			r := replica.ok(t, "ROLE")
			return len(r.Elems) == 5 && r.Elems[3].Str == "handshake"
		})
		if s := replica.info(t, "replication", "master_link_status"); s != "down" {
			t.Errorf("%s: master_link_status:%s in the handshake", replica.name, s)
		}
		replica.ok(t, "REPLICAOF", "NO", "ONE")
	}
}

// TestReplHandshakeTimeout: a replica whose master stalls in the handshake
// gives up after repl-timeout, logging "Timeout connecting to the MASTER...",
// and tries again, as redis-server does.
func TestReplHandshakeTimeout(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	accepted := make(chan struct{}, 16)
	go func() {
		for {
			conn, err := silent.Accept()
			if err != nil {
				return
			}
			defer conn.Close() // held open, never answered
			accepted <- struct{}{}
		}
	}()
	port := strconv.Itoa(silent.Addr().(*net.TCPAddr).Port)
	for _, redis := range []bool{false, true} {
		var replica *replNode
		var logged func() string
		if redis {
			logfile := filepath.Join(t.TempDir(), "log")
			replica = startReplNode(t, true, "--logfile", logfile, "--repl-timeout", "1")
			logged = func() string { b, _ := os.ReadFile(logfile); return string(b) }
		} else {
			var out lockedBuffer
			srv := startLoggedKeyhive(t, &out, "--repl-timeout", "1")
			replica = openReplNode(t, "keyhive", srv.Addr(), func() {}, nil)
			logged = out.String
		}
		replica.ok(t, "REPLICAOF", "127.0.0.1", port)
		<-accepted
		waitUntil(t, replica.name+" giving up on the stalled handshake", func() bool {
			return strings.Contains(logged(), "Timeout connecting to the MASTER...")
		})
		select {
		case <-accepted:
		case <-time.After(10 * time.Second):
			t.Errorf("%s: no new connection after the handshake's timeout", replica.name)
		}
		replica.ok(t, "REPLICAOF", "NO", "ONE")
		for len(accepted) > 0 {
			<-accepted
		}
	}
}

// TestReplDisklessMaxReplicas: with repl-diskless-sync-max-replicas 2 the
// full sync of two replicas starts as soon as both wait, not after the 60 s
// repl-diskless-sync-delay, on Keyhive as on redis-server.
func TestReplDisklessMaxReplicas(t *testing.T) {
	for _, redis := range []bool{false, true} {
		master := startReplNode(t, redis, "--repl-diskless-sync-delay", "60", "--repl-diskless-sync-max-replicas", "2")
		master.ok(t, "SET", "k", "v")
		host, port := master.hostPort()
		a, b := startReplNode(t, redis), startReplNode(t, redis)
		start := time.Now()
		a.ok(t, "REPLICAOF", host, port)
		b.ok(t, "REPLICAOF", host, port)
		for _, r := range []*replNode{a, b} {
			waitUntil(t, r.name+" replica linked", func() bool {
				return r.info(t, "replication", "master_link_status") == "up"
			})
		}
		if took := time.Since(start); took > 30*time.Second {
			t.Errorf("%s: two replicas synced after %v, with max-replicas 2 and a 60 s delay", master.name, took)
		}
	}
}
