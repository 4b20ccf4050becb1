package cluster_test

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/keyhive/keyhive/cluster"
	"github.com/keyhive/keyhive/internal/difftest"
)

// TestClusterBusCapture has two redis-server 7.0.15 cluster nodes meet a
// fake node (a listener here that answers with this package's encoder), and
// checks that every message they send it parses and encodes back to the
// same bytes: MEET, PING and PONG with gossip and the hostname extension,
// PUBLISH, and FAIL once a node dies. With KEYHIVE_UPDATE_CORPUS=1 it saves
// them as the seed corpus of FuzzParse.
func TestClusterBusCapture(t *testing.T) {
	free := func() int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port
	}
	start := func(hostname string) *difftest.Conn {
		addr, stop, err := difftest.StartRedis("--cluster-enabled", "yes", "--cluster-node-timeout", "500",
			"--cluster-port", strconv.Itoa(free()), "--cluster-announce-hostname", hostname)
		if err != nil {
			t.Skip(err)
		}
		t.Cleanup(stop)
		c, err := difftest.Dial(addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	a, b := start("node-a"), start("node-b")
	do := func(c *difftest.Conn, args ...any) string {
		r, err := c.Do(args...)
		if err != nil {
			t.Fatal(err)
		}
		return r.Str
	}
	do(a, "CLUSTER", "ADDSLOTSRANGE", 0, 100)
	busPort := func(c *difftest.Conn) string {
		r, err := c.Do("CONFIG", "GET", "cluster-port")
		if err != nil || len(r.Elems) != 2 {
			t.Fatalf("CONFIG GET cluster-port: %v %v", r, err)
		}
		return r.Elems[1].Str
	}
	_, bPort, _ := net.SplitHostPort(b.NetConn().RemoteAddr().String())
	do(a, "CLUSTER", "MEET", "127.0.0.1", bPort, busPort(b))

	fake, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	var mu sync.Mutex
	var captured [][]byte
	myName := strings.Repeat("f", cluster.NameLen)
	// The fake node reports b failing in its gossip: once a sees b time
	// out too, the two masters' agreement makes a broadcast FAIL.
	bName := do(b, "CLUSTER", "MYID")
	serve := func(conn net.Conn) {
		defer conn.Close()
		r := bufio.NewReader(conn)
		for {
			head, err := r.Peek(8)
			if err != nil {
				return
			}
			msg := make([]byte, binary.BigEndian.Uint32(head[4:]))
			if _, err := io.ReadFull(r, msg); err != nil {
				return
			}
			mu.Lock()
			captured = append(captured, msg)
			mu.Unlock()
			m, err := cluster.Parse(msg)
			if err != nil || (m.Type != cluster.TypePing && m.Type != cluster.TypeMeet) {
				continue
			}
			pong := &cluster.Message{Header: cluster.Header{Type: cluster.TypePong, Sender: myName,
				Port: uint16(fake.Addr().(*net.TCPAddr).Port), CPort: uint16(fake.Addr().(*net.TCPAddr).Port),
				Flags: cluster.FlagMaster, CurrentEpoch: m.CurrentEpoch}, Hostname: "fake",
				Gossip: []cluster.Gossip{{Name: bName, IP: "127.0.0.1", Flags: cluster.FlagMaster | cluster.FlagPFail}}}
			conn.Write(pong.Encode(nil))
		}
	}
	go func() {
		for {
			conn, err := fake.Accept()
			if err != nil {
				return
			}
			go serve(conn)
		}
	}()
	fakePort := strconv.Itoa(fake.Addr().(*net.TCPAddr).Port)
	do(a, "CLUSTER", "MEET", "127.0.0.1", fakePort, fakePort)

	count := func(typ uint16) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, m := range captured {
			if binary.BigEndian.Uint16(m[12:]) == typ {
				n++
			}
		}
		return n
	}
	waitFor := func(what string, typ uint16) {
		deadline := time.Now().Add(10 * time.Second)
		for count(typ) == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("no %s message from redis-server", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor("MEET", cluster.TypeMeet)
	waitFor("PING", cluster.TypePing)
	// Once it knows the fake node, a PUBLISH reaches it.
	deadline := time.Now().Add(10 * time.Second)
	for count(cluster.TypePublish) == 0 && time.Now().Before(deadline) {
		do(a, "PUBLISH", "news", "hello")
		time.Sleep(50 * time.Millisecond)
	}
	waitFor("PUBLISH", cluster.TypePublish)
	// b stops answering.
	do(b, "DEBUG", "SLEEP", "3")
	waitFor("FAIL", cluster.TypeFail)

	mu.Lock()
	defer mu.Unlock()
	for i, raw := range captured {
		m, err := cluster.Parse(raw)
		if err != nil {
			t.Fatalf("message %d (type %d): %v", i, binary.BigEndian.Uint16(raw[12:]), err)
		}
		if again := m.Encode(nil); string(again) != string(raw) {
			t.Fatalf("message %d (type %d) encodes back differently", i, m.Type)
		}
	}
	if os.Getenv("KEYHIVE_UPDATE_CORPUS") == "" {
		return
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzParse")
	os.MkdirAll(dir, 0o755)
	kept := map[uint16]int{}
	for _, raw := range captured {
		typ := binary.BigEndian.Uint16(raw[12:])
		if kept[typ] >= 3 {
			continue
		}
		kept[typ]++
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", raw)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("redis70-type%d-%d", typ, kept[typ])), []byte(body), 0o644)
	}
}
