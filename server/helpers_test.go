package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc64"
	"io"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keyhive/keyhive/cmdspec"
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/server"
	"github.com/keyhive/keyhive/workloads"
	"github.com/redis/go-redis/v9"
)

// The helpers that more than one test file of package server_test uses,
// by subject; a helper that one file alone uses stays in that file, and
// moves here when a second file needs it. One way to start each kind of
// server, one dial, one waitUntil: a test that needs a variant passes
// directives (--dir, --appendonly, ...), not a new start function.
// Differential tests reach their servers through package difftest (see its
// doc for what belongs there); helpers that know the server's unexported
// fields are in helpers_internal_test.go.

// In-process Keyhive, connections, waiting.

// startKeyhive runs an in-process Keyhive on a free port of 127.0.0.1, in
// a directory of its own unless directives name one (a SAVE or
// BGREWRITEAOF must not leave files where other tests' servers would load
// them), with no save points; it is closed when the test ends.
func startKeyhive(t testing.TB, directives ...string) *server.Server {
	t.Helper()
	srv, err := newKeyhive(t, directives...)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// newKeyhive is startKeyhive returning Start's error, for tests of a start
// that fails (an AOF that does not load, a port taken).
func newKeyhive(t testing.TB, directives ...string) (*server.Server, error) {
	t.Helper()
	cfg, err := config.FromArgs(append([]string{"--port", "0", "--bind", "127.0.0.1", "--save", "", "--dir", t.TempDir()}, directives...))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		return nil, err
	}
	t.Cleanup(func() { srv.Close() })
	return srv, nil
}

// dial connects to addr, closed when the test ends.
func dial(t testing.TB, addr string) *difftest.Conn {
	t.Helper()
	c, err := difftest.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// slowTest skips t in -short mode (./test.sh -short, the edit-test loop):
// why says what takes the time.
func slowTest(t *testing.T, why string) {
	t.Helper()
	if testing.Short() {
		t.Skip("slow, skipped with -short: " + why)
	}
}

// waitUntil polls cond until it holds, and fails the test after a minute,
// naming what it waited for (beside a CPU hog under -race the server's
// tests run 10 to 20 times slower than alone).
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for pause := 5 * time.Millisecond; !cond(); pause = min(2*pause, 20*time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(pause)
	}
}

// Replication tests' servers.

// replNode is one server of a replication test.
type replNode struct {
	name string
	addr string
	conn *difftest.Conn
	stop func()
}

// startReplNode starts a Keyhive (in-process) or, with redis, a
// redis-server as a replNode.
func startReplNode(t *testing.T, redis bool, directives ...string) *replNode {
	t.Helper()
	start, name := difftest.StartKeyhive, "keyhive"
	if redis {
		start, name = difftest.StartRedis, "redis"
	}
	addr, stop, err := start(directives...)
	return openReplNode(t, name, addr, stop, err)
}

// processNode starts the server binary bin (a built Keyhive, or a
// redis-server such as the 7.4 oracle) as a replNode, to be killed with
// SIGKILL; it syncs without a diskless delay.
func processNode(t *testing.T, bin, name string, directives ...string) *replNode {
	t.Helper()
	addr, stop, err := difftest.StartProcess(bin, append([]string{"--repl-diskless-sync-delay", "0"}, directives...)...)
	return openReplNode(t, name, addr, stop, err)
}

// openReplNode connects to a server just started (what a Start function
// returned) as a replNode, stopped at the test's end.
func openReplNode(t *testing.T, name, addr string, stop func(), err error) *replNode {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := difftest.Dial(addr)
	if err != nil {
		stop()
		t.Fatal(err)
	}
	n := &replNode{name: name, addr: addr, conn: conn, stop: stop}
	t.Cleanup(func() { conn.Close(); stop() })
	return n
}

func (n *replNode) do(t *testing.T, args ...any) difftest.Reply {
	t.Helper()
	r, err := n.conn.Do(args...)
	if err != nil { // killed (Sentinel's CLIENT KILL TYPE normal): once more
		n.conn.Close()
		if n.conn, err = difftest.Dial(n.addr); err == nil {
			r, err = n.conn.Do(args...)
		}
	}
	if err != nil {
		t.Fatalf("%s %v: %v", n.name, args, err)
	}
	return r
}

func (n *replNode) ok(t *testing.T, args ...any) difftest.Reply {
	t.Helper()
	r := n.do(t, args...)
	if r.IsError() {
		t.Fatalf("%s %v: %s", n.name, args, r.Str)
	}
	return r
}

// info returns one field of INFO section.
func (n *replNode) info(t *testing.T, section, name string) string {
	t.Helper()
	for _, line := range strings.Split(n.ok(t, "INFO", section).Str, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v
		}
	}
	return ""
}

func (n *replNode) infoInt(t *testing.T, section, name string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(n.info(t, section, name), 10, 64)
	if err != nil {
		t.Fatalf("%s INFO %s: %v", n.name, name, err)
	}
	return v
}

// sameSteps compares what a scenario observed step by step on redis-server
// and on Keyhive.
func sameSteps(t *testing.T, redis, keyhive []string) {
	t.Helper()
	for j := range max(len(redis), len(keyhive)) {
		var r, k string
		if j < len(redis) {
			r = redis[j]
		}
		if j < len(keyhive) {
			k = keyhive[j]
		}
		if r != k {
			t.Errorf("step %d:\nredis   %q\nkeyhive %q", j, r, k)
		}
	}
}

func (n *replNode) hostPort() (string, string) {
	host, port, _ := net.SplitHostPort(n.addr)
	return host, port
}

// Replication: making a replica, comparing its data, loads.

// replicate makes replica a replica of master and waits for the link.
func replicate(t *testing.T, master, replica *replNode) {
	t.Helper()
	host, port := master.hostPort()
	replica.ok(t, "REPLICAOF", host, port)
	waitUntil(t, replica.name+" linked to "+master.name, func() bool {
		return replica.info(t, "replication", "master_link_status") == "up"
	})
}

// fillAllTypes writes a data set with every type and encoding, in two
// databases, some keys with a TTL.
func fillAllTypes(t *testing.T, n *replNode) {
	for _, db := range []int{0, 3} {
		n.ok(t, "SELECT", db)
		for i := range 300 {
			k := fmt.Sprintf("db%d:%d", db, i)
			n.ok(t, "SET", "str:"+k, strings.Repeat("v", i%70))
			n.ok(t, "SET", "int:"+k, i*1000)
			n.ok(t, "RPUSH", "list:"+k, "a", "b", i)
			n.ok(t, "SADD", "iset:"+k, 1, 2, i)
			n.ok(t, "SADD", "set:"+k, "x", "y", k)
			n.ok(t, "ZADD", "zset:"+k, 1.5, "a", i, "b")
			n.ok(t, "HSET", "hash:"+k, "f", i, "g", k)
			if i%10 == 0 {
				n.ok(t, "SET", "ttl:"+k, i, "EX", 10000)
				n.ok(t, "PEXPIRE", "hash:"+k, 5000000)
			}
		}
		for i := range 600 { // large encodings
			n.ok(t, "RPUSH", "biglist", strings.Repeat("e", i%100))
			n.ok(t, "SADD", "bigset", "m"+strconv.Itoa(i))
			n.ok(t, "SADD", "bigintset", i*7)
			n.ok(t, "ZADD", "bigzset", i, "m"+strconv.Itoa(i))
			n.ok(t, "HSET", "bighash", "f"+strconv.Itoa(i), strings.Repeat("h", i%90))
			n.ok(t, "XADD", "stream", "*", "f", i, "g", "v")
		}
		n.ok(t, "XGROUP", "CREATE", "stream", "g1", "0")
		n.ok(t, "XGROUP", "CREATE", "stream", "g2", "$")
		n.ok(t, "XREADGROUP", "GROUP", "g1", "alice", "COUNT", 50, "STREAMS", "stream", ">")
		n.ok(t, "XREADGROUP", "GROUP", "g1", "bob", "COUNT", 20, "STREAMS", "stream", ">")
		n.ok(t, "SET", "counter", 0)
	}
	n.ok(t, "SELECT", 0)
}

// writeLoad runs a mixed write load of count commands, in two databases,
// with transactions and a script.
func writeLoad(t *testing.T, n *replNode, seed int64, count int) {
	rng := rand.New(rand.NewSource(seed))
	for i := range count {
		db := []int{0, 3}[rng.Intn(2)]
		n.ok(t, "SELECT", db)
		k := fmt.Sprintf("db%d:%d", db, rng.Intn(300))
		switch rng.Intn(14) {
		case 0:
			n.ok(t, "SET", "str:"+k, rng.Int63())
		case 1:
			n.ok(t, "INCRBY", "counter", rng.Intn(100))
		case 2:
			n.ok(t, "LPUSH", "list:"+k, i)
		case 3:
			n.ok(t, "RPOP", "biglist")
		case 4:
			n.ok(t, "SADD", "set:"+k, rng.Intn(1000))
		case 5:
			n.ok(t, "ZINCRBY", "bigzset", 2.5, "m"+strconv.Itoa(rng.Intn(700)))
		case 6:
			n.ok(t, "HSET", "hash:"+k, "n"+strconv.Itoa(rng.Intn(5)), i)
		case 7:
			n.ok(t, "HDEL", "bighash", "f"+strconv.Itoa(rng.Intn(600)))
		case 8:
			n.ok(t, "XADD", "stream", "MAXLEN", "~", 500, "*", "i", i)
		case 9:
			n.ok(t, "SET", "ttl:"+k, i, "PX", 1000000+rng.Intn(1000))
		case 10:
			n.ok(t, "DEL", "str:"+k)
		case 11:
			n.ok(t, "MULTI")
			n.ok(t, "INCR", "counter")
			n.ok(t, "RPUSH", "list:"+k, "tx")
			n.ok(t, "EXEC")
		case 12:
			n.ok(t, "EVAL", "redis.call('INCRBYFLOAT', KEYS[1], ARGV[1]) return redis.call('HINCRBY', KEYS[2], 'x', 1)", 2, "float:"+k, "hash:"+k, "0.25")
		case 13:
			n.ok(t, "XREADGROUP", "GROUP", "g2", "carol", "COUNT", 2, "STREAMS", "stream", ">")
		}
	}
	n.ok(t, "SELECT", 0)
}

// sameData waits until replica has master's offset and compares their
// DEBUG DIGEST.
func sameData(t *testing.T, master, replica *replNode) {
	t.Helper()
	// WAIT returns once the replica acknowledged, each call within the
	// connection's read timeout; a full sync on a loaded machine may take
	// several.
	waitUntil(t, "WAIT 1 on "+master.name, func() bool { return master.ok(t, "WAIT", 1, 1000).Int == 1 })
	off := master.infoInt(t, "replication", "master_repl_offset")
	waitUntil(t, "replica offset", func() bool {
		return replica.infoInt(t, "replication", "slave_repl_offset") >= off
	})
	m, r := master.ok(t, "DEBUG", "DIGEST").Str, replica.ok(t, "DEBUG", "DIGEST").Str
	if m != r || m == strings.Repeat("0", 40) {
		t.Fatalf("digest: %s master %s, %s replica %s; keys that differ: %v", master.name, m, replica.name, r, differentKeys(t, master, replica))
	}
}

// sameAs waits until replica has applied master's whole stream and
// compares their DEBUG DIGEST (no WAIT: the replica may be a replica's).
func sameAs(t *testing.T, master, replica *replNode) {
	t.Helper()
	off := master.infoInt(t, "replication", "master_repl_offset")
	for deadline := time.Now().Add(time.Minute); replica.infoInt(t, "replication", "master_repl_offset") < off; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not reach offset %d of %s:\n%s\n%s", replica.name, off, master.name,
				master.ok(t, "INFO", "replication").Str, replica.ok(t, "INFO", "replication").Str)
		}
	}
	if m, r := master.ok(t, "DEBUG", "DIGEST").Str, replica.ok(t, "DEBUG", "DIGEST").Str; m != r {
		t.Fatalf("digest: master %s, replica %s", m, r)
	}
}

// differentKeys lists the keys of databases 0 and 3 whose DEBUG
// DIGEST-VALUE differs between a and b, for a failure's message.
func differentKeys(t *testing.T, a, b *replNode) []string {
	var diff []string
	for _, db := range []int{0, 3} {
		a.ok(t, "SELECT", db)
		b.ok(t, "SELECT", db)
		for _, k := range a.ok(t, "KEYS", "*").Elems {
			if va, vb := a.ok(t, "DEBUG", "DIGEST-VALUE", k.Str), b.ok(t, "DEBUG", "DIGEST-VALUE", k.Str); string(va.Raw) != string(vb.Raw) {
				diff = append(diff, fmt.Sprintf("%d:%s", db, k.Str))
			}
		}
		if len(diff) > 10 {
			break
		}
	}
	a.ok(t, "SELECT", 0)
	b.ok(t, "SELECT", 0)
	return diff
}

// Connections and replies: raw clients, INFO fields, addresses.

func do(t *testing.T, c *difftest.Conn, args ...any) difftest.Reply {
	t.Helper()
	r, err := c.Do(args...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func info(t *testing.T, c *difftest.Conn, field string) string {
	t.Helper()
	for _, line := range strings.Split(do(t, c, "INFO", "persistence").Str, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	t.Fatalf("INFO has no %s", field)
	return ""
}

func infoField(info, name string) string {
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v
		}
	}
	return ""
}

// startWithPassword returns isolated servers that require the password
// "secret", and a fresh unauthenticated connection to each. (Servers started
// with --requirepass could not be FLUSHALLed by the harness, so the password
// is set after startup.)
func startWithPassword(t *testing.T) *difftest.Pair {
	t.Helper()
	p := difftest.StartIsolated74(t)
	p.Do("CONFIG", "SET", "requirepass", "secret")
	p.Reconnect()
	return p
}

// infoFields parses a CLIENT INFO line ("id=1 addr=... resp=2") into a map.
func infoFields(line string) map[string]string {
	m := map[string]string{}
	for _, f := range strings.Fields(line) {
		k, v, _ := strings.Cut(f, "=")
		m[k] = v
	}
	return m
}

// clientLinesCompare compares CLIENT LIST / CLIENT INFO replies by reply type,
// line count and field names per line: the values (ids, addresses, buffer
// sizes) legitimately differ.
func clientLinesCompare(r, k difftest.Reply) error {
	if r.Kind != k.Kind || r.IsError() || k.IsError() {
		return difftest.Exact(r, k)
	}
	rl := strings.Split(strings.TrimSuffix(r.Str, "\n"), "\n")
	kl := strings.Split(strings.TrimSuffix(k.Str, "\n"), "\n")
	if r.Str == "" || k.Str == "" {
		if r.Str != k.Str {
			return fmt.Errorf("one reply is empty: %q vs %q", r.Str, k.Str)
		}
		return nil
	}
	if len(rl) != len(kl) {
		return fmt.Errorf("%d lines vs %d", len(rl), len(kl))
	}
	if strings.HasSuffix(r.Str, "\n") != strings.HasSuffix(k.Str, "\n") {
		return fmt.Errorf("trailing newline differs")
	}
	for i := range rl {
		if rn, kn := fieldNames(rl[i]), fieldNames(kl[i]); !slices.Equal(rn, kn) {
			return fmt.Errorf("line %d: field names %v vs %v", i, rn, kn)
		}
	}
	return nil
}

// infoInt reads an integer field of an INFO reply.
func infoInt(t *testing.T, info, name string) int64 {
	t.Helper()
	v := infoField(info, name)
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("INFO %s: %q", name, v)
	}
	return n
}

// sameInfoLines compares the lines starting with prefix exactly (sorted:
// commandstats' order is the command table's).
func sameInfoLines(prefix string, mask *regexp.Regexp) func(r, k difftest.Reply) error {
	return func(r, k difftest.Reply) error {
		rl, kl := infoLines(r, prefix), infoLines(k, prefix)
		if mask != nil {
			for i := range rl {
				rl[i] = mask.ReplaceAllString(rl[i], "")
			}
			for i := range kl {
				kl[i] = mask.ReplaceAllString(kl[i], "")
			}
		}
		if !slices.Equal(rl, kl) {
			return fmt.Errorf("lines differ:\nredis   %q\nkeyhive %q", rl, kl)
		}
		return nil
	}
}

func hostPort(t *testing.T, addr string) (string, string) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return host, port
}

// commandInfoCompare compares COMMAND INFO replies on the first 7 fields of
// each command: name, arity, flags, first key, last key, step, ACL
// categories. Tips, key specs and subcommands are a simplification in Keyhive.
func commandInfoCompare(r, k difftest.Reply) error {
	if r.Kind != k.Kind || len(r.Elems) != len(k.Elems) || r.IsError() {
		return difftest.Exact(r, k)
	}
	for i := range r.Elems {
		re, ke := r.Elems[i], k.Elems[i]
		if re.Null || ke.Null {
			if !re.Equal(ke) {
				return fmt.Errorf("command %d: %s vs %s", i, re, ke)
			}
			continue
		}
		if len(re.Elems) < 7 || len(ke.Elems) < 7 {
			return fmt.Errorf("command %d: %d and %d fields", i, len(re.Elems), len(ke.Elems))
		}
		for j := range 7 {
			if !re.Elems[j].Equal(ke.Elems[j]) {
				return fmt.Errorf("command %s field %d: %s vs %s", re.Elems[0].Str, j, re.Elems[j], ke.Elems[j])
			}
		}
	}
	return nil
}

// commandInfoField maps every command and subcommand in a COMMAND INFO reply
// to one field of its entry (6: ACL categories, 7: tips).
func commandInfoField(r difftest.Reply, field int) map[string]difftest.Reply {
	m := map[string]difftest.Reply{}
	var add func(e difftest.Reply)
	add = func(e difftest.Reply) {
		m[e.Elems[0].Str] = e.Elems[field]
		for _, sub := range e.Elems[9].Elems {
			add(sub)
		}
	}
	for _, e := range r.Elems {
		add(e)
	}
	return m
}

// fieldNames returns the field names of a CLIENT LIST / CLIENT INFO line, in
// order, without the Redis 7.2 lib-name and lib-ver fields (CLIENT SETINFO is
// a 7.2 feature Keyhive has).
func fieldNames(line string) []string {
	var names []string
	for _, f := range strings.Fields(line) {
		k, _, _ := strings.Cut(f, "=")
		if k == "lib-name" || k == "lib-ver" {
			continue
		}
		names = append(names, k)
	}
	return names
}

// infoSection returns the lines of an INFO reply that start with prefix.
func infoLines(r difftest.Reply, prefix string) []string {
	var out []string
	for _, line := range strings.Split(r.Str, "\r\n") {
		if strings.HasPrefix(line, prefix) {
			out = append(out, line)
		}
	}
	sort.Strings(out)
	return out
}

// Server processes: built binaries, ports, memory as the kernel counts it.

// pipe sends commands in pipelined batches and counts replies by kind.
type pipe struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
	w *bufio.Writer
	n int
}

func dialPipe(t *testing.T, addr string) *pipe {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &pipe{t: t, c: c, r: bufio.NewReaderSize(c, 1<<16), w: bufio.NewWriterSize(c, 1<<16)}
}

func (p *pipe) send(args ...string) {
	fmt.Fprintf(p.w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(p.w, "$%d\r\n%s\r\n", len(a), a)
	}
	p.n++
}

// flush reads the pending replies and returns them (bulk payloads, "" for
// integers and statuses, "<nil>" for nulls).
func (p *pipe) flush() []string {
	if err := p.w.Flush(); err != nil {
		p.t.Fatal(err)
	}
	out := make([]string, 0, p.n)
	for ; p.n > 0; p.n-- {
		line, err := p.r.ReadString('\n')
		if err != nil {
			p.t.Fatal(err)
		}
		switch line[0] {
		case '-':
			p.t.Fatalf("error reply: %s", line)
		case '$':
			n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
			if n < 0 {
				out = append(out, "<nil>")
				continue
			}
			buf := make([]byte, n+2)
			if _, err := ioReadFull(p.r, buf); err != nil {
				p.t.Fatal(err)
			}
			out = append(out, string(buf[:n]))
		default:
			out = append(out, strings.TrimSpace(line[1:]))
		}
	}
	return out
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// startKeyhiveBinary builds and runs cmd/keyhive, so that its RSS is its own.
func startKeyhiveBinary(t *testing.T, args ...string) (addr string, pid int) {
	bin := filepath.Join(t.TempDir(), "keyhive")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/keyhive").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return startProcess(t, bin, args...)
}

// statusKB reads a field of /proc/<pid>/status in kB.
func statusKB(t *testing.T, pid int, field string) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	t.Fatalf("no %s in status", field)
	return 0
}

func ioReadFull(r *bufio.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// startProcess runs a server binary on a free port until the test ends.
func startProcess(t *testing.T, bin string, args ...string) (addr string, pid int) {
	port := freePort(t)
	cmd := exec.Command(bin, append([]string{"--port", port, "--save", ""}, args...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr = "127.0.0.1:" + port
	for range 100 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr, cmd.Process.Pid
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s did not start", bin)
	return "", 0
}

// Persistence: RDB and AOF files, data sets to save and compare.

// copyAOFDir replaces to's append-only directory with a copy of from's.
func copyAOFDir(t *testing.T, from, to *difftest.Client) {
	t.Helper()
	src, dst := filepath.Join(dirOf(t, from), "appendonlydir"), filepath.Join(dirOf(t, to), "appendonlydir")
	entries, err := os.ReadDir(dst)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		os.Remove(filepath.Join(dst, e.Name()))
	}
	entries, err = os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func loadAOF(t *testing.T, c *difftest.Client) {
	t.Helper()
	if r := c.Do("DEBUG", "LOADAOF"); r.Str != "OK" {
		t.Fatalf("%s: DEBUG LOADAOF: %v", c.Name(), r)
	}
}

// waitInfo waits until INFO persistence shows line.
func waitInfo(t *testing.T, c *difftest.Client, line string) {
	t.Helper()
	waitUntil(t, fmt.Sprintf("%s: INFO persistence to show %q", c.Name(), line), func() bool {
		return strings.Contains(c.Do("INFO", "persistence").Str, line)
	})
}

// reopenAOF starts a server on dir's AOF and a client of it.
func reopenAOF(t *testing.T, dir string, directives ...string) (*server.Server, *redis.Client) {
	t.Helper()
	srv, err := newKeyhive(t, append([]string{"--dir", dir, "--appendonly", "yes"}, directives...)...)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { rdb.Close() })
	return srv, rdb
}

func incrFile(t *testing.T, dir string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "appendonlydir", "*.incr.aof"))
	if err != nil || len(m) != 1 {
		t.Fatalf("incremental files: %v %v", m, err)
	}
	return m[0]
}

const farFuture = "4102444800000" // 2100-01-01, a fixed PEXPIREAT both sides report alike

// populateAllTypes writes, to both servers, a data set with every type and
// every encoding Redis 7.0 keeps (small and large of each), TTLs, three
// databases and a function library.
func populateAllTypes(p *difftest.Pair) {
	p.Do("SET", "str:int", "12345")
	p.Do("SET", "str:negint", "-7")
	p.Do("SET", "str:int64", "1234567890123456")
	p.Do("SET", "str:leadingzero", "007")
	p.Do("SET", "str:embstr", "hello")
	p.Do("SET", "str:compressible", strings.Repeat("abc", 100))
	var noise strings.Builder
	for i := range 200 {
		noise.WriteByte(byte(i*131 + i*i*7))
	}
	p.Do("SET", "str:incompressible", noise.String())
	p.Do("SET", "str:empty", "")
	p.Do("SET", "str:binary", "\x00\xff\r\n")

	p.Do("RPUSH", "list:small", "a", "1", "-300", "70000", "4294967296", "-9223372036854775808", strings.Repeat("x", 100))
	big := make([]any, 0, 5002)
	big = append(big, "RPUSH", "list:big")
	for i := range 5000 {
		if i%3 == 0 {
			big = append(big, "element-"+strconv.Itoa(i))
		} else {
			big = append(big, strconv.Itoa(i*7919-1000000))
		}
	}
	p.Do(big...)
	p.Do("RPUSH", "list:hugeelement", "a", strings.Repeat("y", 10000), "b")

	p.Do("SADD", "set:intset16", "1", "2", "3", "-5")
	p.Do("SADD", "set:intset32", "100000", "-100000", "7")
	p.Do("SADD", "set:intset64", "5000000000", "-1")
	p.Do("SADD", "set:strings", "a", "b", "c", "1")
	ints := []any{"SADD", "set:manyints"}
	for i := range 600 {
		ints = append(ints, strconv.Itoa(i*3))
	}
	p.Do(ints...)

	p.Do("ZADD", "zset:small", "1.5", "a", "2", "b", "-inf", "c", "inf", "d", "0", "e", "3.141592653589793", "pi", "1e300", "huge", "-42", "neg", "4503599627370496", "twoto52")
	zs := []any{"ZADD", "zset:big"}
	for i := range 200 {
		zs = append(zs, strconv.FormatFloat(float64(i)*0.5-17, 'g', -1, 64), "member-"+strconv.Itoa(i))
	}
	p.Do(zs...)
	p.Do("ZADD", "zset:longmember", "1", strings.Repeat("m", 100), "2", "short")

	p.Do("HSET", "hash:small", "f", "v", "n", "12", "neg", "-5", "empty", "")
	hs := []any{"HSET", "hash:big"}
	for i := range 600 {
		hs = append(hs, "field-"+strconv.Itoa(i), strconv.Itoa(i*i))
	}
	p.Do(hs...)
	p.Do("HSET", "hash:longvalue", "f", strings.Repeat("v", 100))

	populateStreams(p)

	for _, k := range []string{"str:int", "list:small", "set:strings", "zset:big", "hash:big", "stream:small"} {
		p.Do("PEXPIREAT", k, farFuture)
	}
	p.Do("SELECT", "1")
	p.Do("SET", "db1:string", "one")
	p.Do("HSET", "db1:hash", "a", "1")
	p.Do("PEXPIREAT", "db1:string", farFuture)
	p.Do("SELECT", "2")
	p.Do("RPUSH", "db2:list", "x", "y")
	p.Do("SELECT", "0")
	p.Do("FUNCTION", "LOAD", "#!lua name=interop\nredis.register_function('answer', function() return 42 end)")
}

// compareAll compares the data set's digest, every key of databases 0-2
// (type, expire time, encoding, contents) and the functions.
func compareAll(t *testing.T, p *difftest.Pair) {
	t.Helper()
	compareDataSet(t, p, true, func(key string) { compareStream(p, key) })
}

// compareDataSet compares the digest, every key of databases 0-2 (type,
// expire time, encoding if withEncoding, contents; streams by stream) and the
// functions, and ends the test on a difference.
func compareDataSet(t *testing.T, p *difftest.Pair, withEncoding bool, stream func(key string)) {
	t.Helper()
	p.Do("DEBUG", "DIGEST")
	for db := range 3 {
		p.Do("SELECT", strconv.Itoa(db))
		p.Do("DBSIZE")
		keys := p.DoUnordered("KEYS", "*")
		for _, k := range keys.Elems {
			key := k.Str
			typ := p.Do("TYPE", key)
			p.Do("PEXPIRETIME", key)
			if withEncoding {
				p.Do("OBJECT", "ENCODING", key)
			}
			switch typ.Str {
			case "string":
				p.Do("GET", key)
			case "list":
				p.Do("LRANGE", key, "0", "-1")
			case "set":
				p.DoUnordered("SMEMBERS", key)
			case "zset":
				p.Do("ZRANGE", key, "0", "-1", "WITHSCORES")
			case "hash":
				p.DoUnorderedPairs("HGETALL", key)
			case "stream":
				stream(key)
			default:
				t.Errorf("key %q: unexpected type %q", key, typ.Str)
			}
		}
	}
	p.Do("SELECT", "0")
	p.Do("FUNCTION", "LIST", "WITHCODE")
	if t.Failed() {
		t.FailNow()
	}
}

func dirOf(t *testing.T, c *difftest.Client) string {
	t.Helper()
	r := c.Do("CONFIG", "GET", "dir")
	if len(r.Elems) != 2 {
		t.Fatalf("%s: CONFIG GET dir: %v", c.Name(), r)
	}
	return r.Elems[1].Str
}

// copyDump copies from's dump.rdb over to's.
// reloadFrom replaces to's data set with from's by file: from saves, its
// dump.rdb is copied over to's, and to loads it (DEBUG RELOAD NOSAVE).
func reloadFrom(t *testing.T, from, to *difftest.Client) {
	t.Helper()
	if r := from.Do("SAVE"); r.Str != "OK" {
		t.Fatalf("%s SAVE: %v", from.Name(), r)
	}
	copyDump(t, from, to)
	to.Do("FLUSHALL")
	if r := to.Do("DEBUG", "RELOAD", "NOSAVE"); r.Str != "OK" {
		t.Fatalf("%s DEBUG RELOAD NOSAVE of %s's file: %v", to.Name(), from.Name(), r)
	}
}

func copyDump(t *testing.T, from, to *difftest.Client) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dirOf(t, from), "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirOf(t, to), "dump.rdb"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// withDumpFooter appends a DUMP footer (RDB version 10 and Redis's CRC-64)
// to a hand-made value, so the value itself is what is tested.
func withDumpFooter(body string, version uint16) string {
	b := binary.LittleEndian.AppendUint16([]byte(body), version)
	sum := ^crc64.Update(^uint64(0), crc64.MakeTable(0x95AC9329AC4BC9B5), b)
	return string(binary.LittleEndian.AppendUint64(b, sum))
}

// populateStreams writes streams in every shape a file holds: several
// nodes with deleted entries (the first of a node among them), emptied by
// XDEL and by XTRIM, made by XGROUP CREATE MKSTREAM, long values (LZF),
// and consumer groups with pending entries,
// consumers with and without pending entries, known and unknown
// entries-read, and names that are integers. (A PEL entry whose entry was
// deleted is in TestStreamRDBInterop: Redis's AOF rewrite drops it.)
func populateStreams(p *difftest.Pair) {
	p.Do("XADD", "stream:small", "1-1", "name", "ann", "age", "31")
	p.Do("XADD", "stream:small", "1-2", "name", "bob", "age", "-7")
	p.Do("XADD", "stream:small", "2-0", "other", "fields", "n", "12345678901")
	p.Do("XADD", "stream:small", "3-5", "name", strings.Repeat("long", 30), "age", "1.5")

	for i := range 350 {
		args := []any{"XADD", "stream:nodes", fmt.Sprintf("%d-%d", 1000+i/3, i%3), "i", strconv.Itoa(i)}
		if i%7 == 0 {
			args = append(args, "extra", "x"+strconv.Itoa(i))
		}
		p.Do(args...)
	}
	p.Do("XDEL", "stream:nodes", "1000-0", "1033-1", "1034-0", "1066-1", "1100-2", "1116-1")
	for i := 200; i < 300; i++ { // one whole node
		p.Do("XDEL", "stream:nodes", fmt.Sprintf("%d-%d", 1000+i/3, i%3))
	}

	p.Do("XADD", "stream:deleted", "5-1", "a", "1")
	p.Do("XADD", "stream:deleted", "5-2", "a", "2")
	p.Do("XDEL", "stream:deleted", "5-1", "5-2")
	p.Do("XADD", "stream:trimmed", "7-1", "a", "1")
	p.Do("XADD", "stream:trimmed", "7-2", "b", "2")
	p.Do("XTRIM", "stream:trimmed", "MAXLEN", "0")
	p.Do("XGROUP", "CREATE", "stream:mkstream", "g", "$", "MKSTREAM")

	p.Do("XADD", "stream:compress", "1-1", "v", strings.Repeat("compressible ", 40))
	p.Do("XADD", "stream:compress", "1-2", "v", strings.Repeat("more ", 40))

	for i := 1; i <= 12; i++ {
		p.Do("XADD", "stream:groups", strconv.Itoa(i)+"-0", "n", strconv.Itoa(i))
	}
	p.Do("XGROUP", "CREATE", "stream:groups", "g1", "0")
	p.DoCompare(idleTimes, "XREADGROUP", "GROUP", "g1", "alice", "COUNT", "3", "STREAMS", "stream:groups", ">")
	p.DoCompare(idleTimes, "XREADGROUP", "GROUP", "g1", "bob", "COUNT", "2", "STREAMS", "stream:groups", ">")
	p.DoCompare(idleTimes, "XREADGROUP", "GROUP", "g1", "42", "COUNT", "1", "STREAMS", "stream:groups", ">")
	p.Do("XACK", "stream:groups", "g1", "2-0")
	p.Do("XCLAIM", "stream:groups", "g1", "bob", "0", "1-0", "TIME", "1700000000000", "RETRYCOUNT", "5", "JUSTID")
	p.Do("XGROUP", "CREATECONSUMER", "stream:groups", "g1", "carol")
	// Redis 7.0's AOF does not carry the entries-read XREADGROUP sets (it
	// propagates XCLAIM ... LASTID): set it in a command the AOF keeps.
	p.Do("XGROUP", "SETID", "stream:groups", "g1", "6-0", "ENTRIESREAD", "6")
	p.Do("XDEL", "stream:groups", "9-0")
	p.Do("XGROUP", "CREATE", "stream:groups", "g2", "$", "ENTRIESREAD", "3")
	p.Do("XGROUP", "CREATE", "stream:groups", "7", "5-0")
	p.Do("XGROUP", "CREATE", "stream:groups", "g3", "0")
	p.Do("XADD", "stream:groups", "13-0", "n", "13")
}

// compareStream compares a stream's entries, XINFO STREAM FULL (clock
// times masked: a populated pair has its own), groups and consumers
// (idle times masked).
func compareStream(p *difftest.Pair, key string) {
	p.Do("XLEN", key)
	p.Do("XRANGE", key, "-", "+")
	p.DoCompare(clockTimes, "XINFO", "STREAM", key, "FULL")
	p.Do("XINFO", "STREAM", key)
	p.Do("XREVRANGE", key, "+", "-", "COUNT", "3")
	groups := p.Do("XINFO", "GROUPS", key)
	for _, g := range groups.Elems {
		p.DoCompare(idleTimes, "XINFO", "CONSUMERS", key, g.Elems[1].Str)
		p.DoCompare(idleTimes, "XPENDING", key, g.Elems[1].Str, "-", "+", "100")
	}
}

// clockTimes compares replies holding Unix ms times taken from each
// server's clock (delivery and seen times): equal once they are masked.
func clockTimes(r, k difftest.Reply) error {
	re := regexp.MustCompile(`:1[0-9]{12}\r\n`)
	if a, b := re.ReplaceAll(r.Raw, []byte(":T\r\n")), re.ReplaceAll(k.Raw, []byte(":T\r\n")); string(a) != string(b) {
		return fmt.Errorf("redis %q, keyhive %q", r.Raw, k.Raw)
	}
	return nil
}

// Propagation: what a command propagates, on Keyhive and on redis-server.

// propStep is one command and what it must propagate, one "db argv..." line
// per command (db defaults to the selected database).
type propStep struct {
	cmd   []string
	want  []string
	redis []string // when Redis differs on purpose: what it propagates
	why   string   // the reason for redis
	sleep time.Duration
}

// w builds a step from space-separated words.
func w(cmd string, want ...string) propStep {
	return propStep{cmd: strings.Fields(cmd), want: want}
}

// propagated is one command as published, or as read back from an AOF.
type propagated struct {
	db   int
	argv []string
}

func (p propagated) String() string {
	return fmt.Sprintf("%d %q", p.db, p.argv)
}

// rawConn sends commands and reads replies over TCP or a Unix socket.
type rawConn struct {
	nc net.Conn
	br *bufio.Reader
}

func dialRaw(t testing.TB, network, addr string) *rawConn {
	t.Helper()
	nc, err := net.DialTimeout(network, addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawConn{nc: nc, br: bufio.NewReader(nc)}
}

// allocsPerRound runs cmds repeatedly on c, reading their replies (the same
// bytes each round, checked) without allocating on the client side, and returns the
// average allocations per round of the whole process (testing.AllocsPerRun):
// with an in-process server, what its command path allocates. A deadline
// per measurement, not per test: with -race on a loaded machine a test's
// whole series of measurements takes minutes, one of them seconds.
func (c *rawConn) allocsPerRound(t testing.TB, rounds int, cmds ...[]any) float64 {
	c.nc.SetDeadline(time.Now().Add(time.Minute))
	var wire []byte
	for _, a := range cmds {
		wire = append(wire, difftest.EncodeCommand(a...)...)
	}
	// Twice: a first run may change state (ZADD CH of a new member), the
	// second's replies are the ones every round must repeat.
	var first []byte
	for range 2 {
		c.nc.Write(wire)
		first = first[:0]
		for range cmds {
			r, err := difftest.ReadReply(c.br)
			if err != nil {
				t.Fatal(err)
			}
			first = append(first, r.Raw...)
		}
	}
	buf := make([]byte, len(first))
	return testing.AllocsPerRun(rounds, func() {
		c.nc.Write(wire)
		if _, err := io.ReadFull(c.br, buf); err != nil {
			t.Fatalf("%v (a reply shorter than the first round's %q?)", err, first)
		}
		if !bytes.Equal(buf, first) {
			t.Fatalf("replies changed between rounds: %q, then %q", first, buf)
		}
	})
}

func (c *rawConn) do(t testing.TB, args ...string) difftest.Reply {
	t.Helper()
	c.nc.SetDeadline(time.Now().Add(5 * time.Second))
	a := make([]any, len(args))
	for i, s := range args {
		a[i] = s
	}
	if _, err := c.nc.Write(difftest.EncodeCommand(a...)); err != nil {
		t.Fatal(err)
	}
	r, err := difftest.ReadReply(c.br)
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return r
}

// propServer is one server under test: how to run a command and collect what
// it propagated since the previous call.
type propServer struct {
	name    string
	conn    *rawConn
	collect func() []propagated
}

// startKeyhiveProp runs Keyhive collecting its propagation stream.
func startKeyhiveProp(t *testing.T) *propServer {
	srv := startKeyhive(t, "--enable-debug-command", "yes")
	var mu sync.Mutex
	var got []propagated
	srv.OnPropagate(func(db int, argv [][]byte) {
		p := propagated{db: db}
		for _, a := range argv {
			p.argv = append(p.argv, string(a))
		}
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
	})
	return &propServer{
		name: "keyhive",
		conn: dialRaw(t, "tcp", srv.Addr()),
		collect: func() []propagated {
			mu.Lock()
			defer mu.Unlock()
			out := got
			got = nil
			return out
		},
	}
}

// startRedisAOF runs redis-server with an AOF written after every command and
// reads the commands back from it. It returns nil without redis-server.
func startRedisAOF(t *testing.T) *propServer {
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Log("redis-server not found: checking Keyhive alone")
		return nil
	}
	return startRedisAOFAt(t, path)
}

// startRedisAOFAt is startRedisAOF for the redis-server binary at path.
func startRedisAOFAt(t *testing.T, path string) *propServer {
	var err error
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(path, "--port", "0", "--unixsocket", sock, "--save", "",
		"--appendonly", "yes", "--appendfsync", "always", "--dir", dir,
		"--enable-debug-command", "yes", "--daemonize", "no")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	exited, err := difftest.StartChild(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	var nc net.Conn
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if nc, err = net.Dial("unix", sock); err == nil {
			nc.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server did not start: %v\n%s", err, log.String())
		}
	}
	conn := dialRaw(t, "unix", sock)
	var aof []byte // the incremental AOF read so far
	db := 0
	return &propServer{
		name: "redis",
		conn: conn,
		collect: func() []propagated {
			// redis-server creates the AOF files just after it starts accepting.
			var files []string
			for deadline := time.Now().Add(5 * time.Second); len(files) != 1 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				files, _ = filepath.Glob(filepath.Join(dir, "appendonlydir", "*.incr.aof"))
			}
			if len(files) != 1 {
				t.Fatalf("redis AOF files: %q", files)
			}
			data, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(data, aof) {
				t.Fatal("redis AOF rewritten during the test")
			}
			br := bufio.NewReader(bytes.NewReader(data[len(aof):]))
			aof = data
			var out []propagated
			for {
				r, err := difftest.ReadReply(br)
				if err != nil {
					break // the end of what was written
				}
				var argv []string
				for _, e := range r.Elems {
					argv = append(argv, e.Str)
				}
				if len(argv) == 2 && strings.EqualFold(argv[0], "SELECT") {
					db, _ = strconv.Atoi(argv[1])
					continue
				}
				out = append(out, propagated{db: db, argv: argv})
			}
			return out
		},
	}
}

// matchPropagated checks got against want lines for a command run between
// t0 and t1 (Unix ms) in database db.
func matchPropagated(got []propagated, want []string, db int, t0, t1 int64) error {
	if len(got) != len(want) {
		return fmt.Errorf("propagated %v, want %q", got, want)
	}
	for i, line := range want {
		words := strings.Split(line, " ")
		wdb := db
		if n, err := strconv.Atoi(words[0]); err == nil {
			wdb, words = n, words[1:]
		}
		g := got[i]
		ok := g.db == wdb && len(g.argv) == len(words)
		for j := 0; ok && j < len(words); j++ {
			wa := words[j]
			if wa == `""` {
				wa = ""
			}
			if wa == "{*}" { // any value, e.g. an earlier command's time
				continue
			}
			if rel, found := strings.CutPrefix(wa, "{+"); found {
				num, suffix, _ := strings.Cut(rel, "}") // "{+0}-0": a time and "-0"
				d, _ := strconv.ParseInt(num, 10, 64)
				arg, hasSuffix := strings.CutSuffix(g.argv[j], suffix)
				ms, err := strconv.ParseInt(arg, 10, 64)
				ok = hasSuffix && err == nil && ms >= t0+d-1 && ms <= t1+d+1
				continue
			}
			ok = g.argv[j] == wa
		}
		if !ok {
			return fmt.Errorf("propagated %v, want %q (times in [%d, %d])", got, want, t0, t1)
		}
	}
	return nil
}

// checkPropagation runs steps on Keyhive and redis-server and checks what
// each propagates.
func checkPropagation(t *testing.T, steps []propStep) {
	checkPropagationWith(t, steps, startRedisAOF(t))
}

// checkPropagationWith is checkPropagation against redis (nil: Keyhive
// alone).
func checkPropagationWith(t *testing.T, steps []propStep, redis *propServer) {
	servers := []*propServer{startKeyhiveProp(t)}
	if redis != nil {
		servers = append(servers, redis)
	}
	for _, s := range servers {
		// Only lazy expiry, which is deterministic, may delete keys.
		if r := s.conn.do(t, "DEBUG", "SET-ACTIVE-EXPIRE", "0"); r.IsError() {
			t.Fatalf("%s: %v", s.name, r)
		}
		s.collect()
	}
	db := 0
	for _, step := range steps {
		for _, s := range servers {
			t0 := time.Now().UnixMilli()
			reply := s.conn.do(t, step.cmd...)
			t1 := time.Now().UnixMilli()
			want := step.want
			if s.name == "redis" && step.why != "" {
				want = step.redis
			}
			if err := matchPropagated(s.collect(), want, db, t0, t1); err != nil {
				t.Errorf("%s: %q (reply %v): %v", s.name, step.cmd, reply, err)
			}
		}
		if strings.EqualFold(step.cmd[0], "SELECT") {
			db, _ = strconv.Atoi(step.cmd[1])
		}
		time.Sleep(step.sleep)
	}
}

// keyspaceSince70 compares INFO keyspace with redis-server 7.0, which lacks
// Redis 7.4's subexpiry field, or exactly with 7.4.1.
func keyspaceSince70(redis, keyhive difftest.Reply) error {
	got := keyhive.Str
	if !strings.Contains(redis.Str, ",subexpiry=") {
		got = subexpiryField.ReplaceAllString(got, "")
	}
	if got != redis.Str {
		return fmt.Errorf("INFO keyspace: %q, redis %q", got, redis.Str)
	}
	return nil
}

var subexpiryField = regexp.MustCompile(`,subexpiry=\d+`)

// Cluster: node processes, redis-cli, agreement, a write load.

// startClusterNodeStop is startClusterNode returning the function that
// kills the node too.
func startClusterNodeStop(t *testing.T, bin string, extra ...string) (string, func()) {
	t.Helper()
	addr, stop, err := difftest.StartClusterNode(bin, extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addr, stop
}

func buildKeyhiveBinary(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Skip("redis-cli not found")
	}
	bin, err := difftest.BuildKeyhive(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// redisCli runs redis-cli with args, failing the test on an error exit.
func redisCli(t *testing.T, args ...string) string {
	t.Helper()
	return redisCliInput(t, "", args...)
}

func nodeID(t *testing.T, addr string) string {
	t.Helper()
	r, err := difftest.Inline(addr, "CLUSTER MYID")
	if err != nil {
		t.Fatal(err)
	}
	return r.Str
}

// inlineText is a command's bulk or status reply ("" on an error).
func inlineText(addr, command string) string {
	r, err := difftest.Inline(addr, command)
	if err != nil {
		return ""
	}
	return r.Str
}

// waitClusterAgrees waits until every node knows the others and says the
// cluster is ok, and redis-cli --cluster check passes.
func waitClusterAgrees(t *testing.T, addrs ...string) {
	t.Helper()
	if err := difftest.WaitClusterAgrees(addrs...); err != nil {
		t.Fatal(err)
	}
}

// clusterWriteLoad writes keys through go-redis's cluster client until stopped
// (SETs, and pipelines of a hash-tagged MSET and MGET): what it
// acknowledged, and any error it got (redirects are followed inside the
// client and are no error).
type clusterWriteLoad struct {
	client  *redis.ClusterClient
	addrs   []string
	stop    chan struct{}
	done    sync.WaitGroup
	mu      sync.Mutex
	acked   map[string]int
	errs    []error
	written atomic.Int64
}

func startWriteLoad(addrs []string, writers int) *clusterWriteLoad {
	w := &clusterWriteLoad{
		client: redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRedirects: 16}), addrs: addrs,
		stop: make(chan struct{}), acked: map[string]int{},
	}
	for g := range writers {
		w.done.Add(1)
		go func() {
			defer w.done.Done()
			ctx := context.Background()
			for i := 0; ; i++ {
				select {
				case <-w.stop:
					return
				default:
				}
				// Mostly single-key SETs; every fourth round, a multi-key
				// MSET of one hash tag (so on one slot: no CROSSSLOT), and
				// a read of it in a pipeline.
				var keys []string
				var err error
				if i%4 == 3 {
					tag := fmt.Sprintf("{load:%d:%d}", g, i%500)
					keys = []string{tag + "a", tag + "b"}
					pipe := w.client.Pipeline()
					pipe.MSet(ctx, keys[0], i, keys[1], i)
					get := pipe.MGet(ctx, keys...)
					if _, err = pipe.Exec(ctx); err == nil && fmt.Sprint(get.Val()) != fmt.Sprintf("[%d %d]", i, i) {
						err = fmt.Errorf("MGET after MSET read %v", get.Val())
					}
				} else {
					keys = []string{fmt.Sprintf("load:%d:%d", g, i%2000)}
					err = w.client.Set(ctx, keys[0], i, 0).Err()
				}
				w.mu.Lock()
				if err != nil {
					w.errs = append(w.errs, fmt.Errorf("write of %v: %w", keys, err))
				} else {
					for _, k := range keys {
						w.acked[k] = i
					}
				}
				w.mu.Unlock()
				w.written.Add(1)
			}
		}()
	}
	return w
}

// finish stops the load and checks that no write failed and every
// acknowledged value is there.
func (w *clusterWriteLoad) finish(t *testing.T) {
	t.Helper()
	w.stopWrites(t)
	w.check(t)
}

// stopWrites stops the load and checks that no write failed.
func (w *clusterWriteLoad) stopWrites(t *testing.T) {
	t.Helper()
	close(w.stop)
	w.done.Wait()
	w.client.Close()
	for _, err := range w.errs {
		t.Error(err)
	}
}

// check reads every acknowledged value back.
func (w *clusterWriteLoad) check(t *testing.T) {
	t.Helper()
	// A fresh client: the load's may still map a slot to a node since
	// removed from the cluster.
	check := redis.NewClusterClient(&redis.ClusterOptions{Addrs: w.addrs})
	defer check.Close()
	ctx := context.Background()
	for key, want := range w.acked {
		got, err := check.Get(ctx, key).Int()
		if err != nil || got != want {
			t.Fatalf("GET %s = %d, %v; the last acknowledged SET wrote %d", key, got, err, want)
		}
	}
	t.Logf("%d writes, %d keys checked", w.written.Load(), len(w.acked))
}

// startReplicatedCluster starts six Keyhive nodes (with the extra
// directives) and has redis-cli create
// a cluster of three masters with a replica each. It returns the nodes'
// addresses, each master's replica, by address, and the functions that
// kill the nodes.
func startReplicatedCluster(t *testing.T, bin string, extra ...string) (addrs []string, replicaOf map[string]string, kill map[string]func()) {
	t.Helper()
	kill = map[string]func(){}
	for range 6 {
		addr, stop := startClusterNodeStop(t, bin, append([]string{"--repl-diskless-sync-delay", "0"}, extra...)...)
		addrs = append(addrs, addr)
		kill[addr] = stop
	}
	out := redisCli(t, append(append([]string{"--cluster", "create"}, addrs...), "--cluster-replicas", "1", "--cluster-yes")...)
	waitClusterAgrees(t, addrs...)
	byID := map[string]string{}
	for _, a := range addrs {
		byID[nodeID(t, a)] = a
	}
	// Every node learns the replicas' role from their next messages.
	deadline := time.Now().Add(10 * time.Second)
	for _, a := range addrs {
		for {
			nodes := inlineText(a, "CLUSTER NODES")
			replicaOf = map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(nodes), "\n") {
				if f := strings.Fields(line); len(f) > 3 && strings.Contains(f[2], "slave") {
					replicaOf[byID[f[3]]] = byID[f[0]]
				}
			}
			if len(replicaOf) == 3 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s does not see three masters with a replica each:\n%s\n%s", a, nodes, out)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return addrs, replicaOf, kill
}

// redisCliInput is redisCli answering its questions with input (fix asks
// even under --cluster-yes).
func redisCliInput(t *testing.T, input string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := difftest.RedisCli(ctx, input, args...)
	if err != nil {
		t.Fatalf("redis-cli %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Command descriptions: COMMAND INFO and DOCS compared, the newer interfaces.

// fieldsOf reads a map reply (RESP3) or its flat RESP2 form as key/value pairs.
func fieldsOf(r difftest.Reply) map[string]difftest.Reply {
	m := map[string]difftest.Reply{}
	for i := 0; i+1 < len(r.Elems); i += 2 {
		m[r.Elems[i].Str] = r.Elems[i+1]
	}
	return m
}

// canon renders a reply for comparison: kinds and values, without the
// length prefixes that dropped fields change; drop names the map fields left
// out at any depth.
func canon(r difftest.Reply, drop map[string]bool) string {
	var b strings.Builder
	var walk func(r difftest.Reply)
	walk = func(r difftest.Reply) {
		b.WriteByte(r.Kind)
		switch {
		case r.Null:
			b.WriteString("null")
		case r.IsAggregate():
			b.WriteByte('[')
			for i := 0; i < len(r.Elems); i++ {
				e := r.Elems[i]
				if r.Kind == difftest.KindMap && drop[e.Str] {
					i++
					continue
				}
				walk(e)
				b.WriteByte(' ')
			}
			b.WriteByte(']')
		default:
			fmt.Fprintf(&b, "%q%d", r.Str, r.Int)
		}
	}
	walk(r)
	return b.String()
}

// keySpecsCanon renders COMMAND INFO's key specs with only whether they
// have notes, which are Redis's prose or Keyhive's own words (in RESP2 a key
// spec is a flat array that starts with them when present).
func keySpecsCanon(r difftest.Reply) string {
	var parts []string
	for _, ks := range r.Elems {
		if len(ks.Elems) > 0 && ks.Elems[0].Str == "notes" {
			ks.Elems = ks.Elems[2:]
			parts = append(parts, "(notes)")
		}
		ks.Kind = difftest.KindArray // RESP3 maps and RESP2 arrays alike
		parts = append(parts, canon(ks, nil))
	}
	return strings.Join(parts, "; ")
}

// docEntries maps every command and subcommand of a COMMAND DOCS reply to
// its fields.
func docEntries(r difftest.Reply) map[string]map[string]difftest.Reply {
	m := map[string]map[string]difftest.Reply{}
	var add func(name string, d difftest.Reply)
	add = func(name string, d difftest.Reply) {
		f := fieldsOf(d)
		m[name] = f
		if subs, ok := f["subcommands"]; ok {
			for i := 0; i+1 < len(subs.Elems); i += 2 {
				add(subs.Elems[i].Str, subs.Elems[i+1])
			}
		}
	}
	for i := 0; i+1 < len(r.Elems); i += 2 {
		add(r.Elems[i].Str, r.Elems[i+1])
	}
	return m
}

// argsCanon renders an arguments tree without the arguments' since.
func argsCanon(r difftest.Reply) string {
	var parts []string
	for _, a := range r.Elems {
		f := fieldsOf(a)
		var keys []string
		for i := 0; i+1 < len(a.Elems); i += 2 {
			keys = append(keys, a.Elems[i].Str)
		}
		var b strings.Builder
		for _, k := range keys {
			switch k {
			case "since":
			case "arguments":
				b.WriteString("arguments=(" + argsCanon(f[k]) + ") ")
			default:
				b.WriteString(k + "=" + canon(f[k], nil) + " ")
			}
		}
		parts = append(parts, "{"+b.String()+"}")
	}
	return strings.Join(parts, " ")
}

// docCase sends args to Keyhive alone and requires the raw reply want.
func docCase(t *testing.T, p *difftest.Pair, want string, args ...any) {
	t.Helper()
	if got := p.Keyhive().Do(args...).Raw; string(got) != want {
		t.Errorf("%v: got %q, want %q", args, got, want)
	}
}

// skipOnRedisTarget skips a test of documented 8.x replies when the harness
// checks itself against a second redis-server, which lacks those commands.
func skipOnRedisTarget(t *testing.T) {
	if os.Getenv("KEYHIVE_DIFF_TARGET") == "redis" {
		t.Skip("documented Redis 8.x replies; the oracle is 7.x")
	}
}

// newerInterface names the commands both servers have whose COMMAND
// interface (arity, arguments) is a newer Redis's than 7.0.15's: the
// command-table tests leave them out and TestNewerCommandInterfaces
// compares them with redis-server 7.4.1 (7.2's changes) or checks the
// arguments the redis.io pages add (8.x's).
var newerInterface = map[string]bool{
	"zrank": true, "zrevrank": true, // 7.2: WITHSCORE
	"set":    true,                                                           // 8.4: IF conditions
	"bitop":  true,                                                           // 8.2: DIFF, DIFF1, ANDOR, ONE
	"zunion": true, "zinter": true, "zunionstore": true, "zinterstore": true, // 8.8: AGGREGATE COUNT
	"xadd":  true,                     // 8.2: KEEPREF, DELREF, ACKED; 8.6: IDMPAUTO, IDMP
	"xread": true, "xreadgroup": true, // 8.4: CLAIM; 8.10: MAXCOUNT, MAXSIZE
}

// sinceAfter70 reports whether Keyhive's command (or "parent|sub") is newer
// than Redis 7.0, so a 7.0.15 oracle lacks it.
// keyhiveOnly reports whether a command is Keyhive's own (NAMESPACE): no
// Redis has it, and the README's compatibility section lists it.
func keyhiveOnly(name string) bool {
	s := cmdspec.Lookup(name)
	return s != nil && s.Group == "keyhive"
}

func sinceAfter70(name string) bool {
	s := cmdspec.Lookup(name)
	if s == nil {
		return false
	}
	var major, minor int
	fmt.Sscanf(s.Since, "%d.%d", &major, &minor)
	return major > 7 || major == 7 && minor > 0
}

// newerThan70Rules are ACL rules that deny every command newer than Redis
// 7.0 (and every subcommand of one, as "-name|sub").
func newerThan70Rules() []any {
	var rules []any
	for _, c := range cmdspec.Commands() {
		if sinceAfter70(c.Name) {
			rules = append(rules, "-"+c.Name)
			continue
		}
		for _, sub := range c.Subcommands {
			if sinceAfter70(sub.FullName) {
				rules = append(rules, "-"+sub.FullName)
			}
		}
	}
	return rules
}

// Data families' differential tests: shared cases and scans.

// bmNonString makes key hold a list on both servers, or skips the test when
// Keyhive cannot create a non-string value yet.
func bmNonString(t *testing.T, p *difftest.Pair, key string) {
	t.Helper()
	if r := p.Keyhive().Do("RPUSH", key, "x"); r.IsError() {
		t.Skipf("Keyhive cannot create a non-string value yet (RPUSH: %s)", r.Str)
	}
	p.Redis().Do("RPUSH", key, "x")
}

// bmDocsHead compares COMMAND DOCS's since and group of a command; the
// summary is Keyhive's own words, so only its presence is checked
// (TestCommandDocsSpec compares the rest of the entry).
func bmDocsHead(t *testing.T, p *difftest.Pair, name string) {
	t.Helper()
	r := p.Redis().Do("COMMAND", "DOCS", name)
	k := p.Keyhive().Do("COMMAND", "DOCS", name)
	if len(r.Elems) != 2 || len(k.Elems) != 2 || len(r.Elems[1].Elems) < 6 || len(k.Elems[1].Elems) < 6 {
		t.Fatalf("COMMAND DOCS %s: redis %s, keyhive %s", name, r, k)
	}
	for i := 0; i < 6; i++ {
		if i == 1 && k.Elems[1].Elems[0].Str == "summary" && k.Elems[1].Elems[1].Str != "" {
			continue
		}
		if r.Elems[1].Elems[i].Str != k.Elems[1].Elems[i].Str {
			t.Errorf("COMMAND DOCS %s field %d: redis %q, keyhive %q", name, i, r.Elems[1].Elems[i].Str, k.Elems[1].Elems[i].Str)
		}
	}
}

// skScanAll compares SCAN replies that cover the whole keyspace in one call:
// both cursors must be "0" and the keys equal as a multiset.
func skScanAll(r, k difftest.Reply) error {
	if r.Kind != difftest.KindArray || k.Kind != difftest.KindArray || len(r.Elems) != 2 || len(k.Elems) != 2 {
		return difftest.Exact(r, k)
	}
	if r.Elems[0].Str != "0" || k.Elems[0].Str != "0" {
		return fmt.Errorf("cursors %s and %s, want both 0 (COUNT too small for one call?)", r.Elems[0], k.Elems[0])
	}
	return difftest.Unordered(r.Elems[1], k.Elems[1])
}

// skScanShape accepts any two well-formed SCAN replies (cursors and batches
// depend on each server's hash table) but requires identical errors.
func skScanShape(r, k difftest.Reply) error {
	if r.IsError() || k.IsError() {
		return difftest.Exact(r, k)
	}
	for _, x := range []difftest.Reply{r, k} {
		if x.Kind != difftest.KindArray || len(x.Elems) != 2 || x.Elems[0].Kind != difftest.KindBulk || x.Elems[1].Kind != difftest.KindArray {
			return fmt.Errorf("not a SCAN reply: %s", x)
		}
	}
	return nil
}

// skSleep sleeps for ms milliseconds; tests use it to let short TTLs pass.
func skSleep(ms int) { time.Sleep(time.Duration(ms) * time.Millisecond) }

// skState compares what a key looks like afterwards: value, existence, TTLs.
func skState(t testing.TB, p *difftest.Pair, key string) {
	t.Helper()
	p.Do("GET", key)
	p.Do("EXISTS", key)
	p.DoApprox(2, "TTL", key)
	p.DoApprox(2000, "PTTL", key)
}

// scanAll runs SSCAN to completion on keyhive's side and returns the members.
func scanAll(t *testing.T, c *difftest.Client, key string, count int) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	cursor := "0"
	for i := 0; ; i++ {
		r := c.Do("SSCAN", key, cursor, "COUNT", strconv.Itoa(count))
		if len(r.Elems) != 2 || i > 100000 {
			t.Fatalf("SSCAN: %s", r)
		}
		for _, m := range r.Elems[1].Elems {
			seen[m.Str] = true
		}
		cursor = r.Elems[0].Str
		if cursor == "0" {
			return seen
		}
	}
}

// idleTimes compares replies with idle times and delivery times, which
// depend on each server's clock: equal once integers are masked.
func idleTimes(r, k difftest.Reply) error {
	re := regexp.MustCompile(`:[0-9]+\r\n`)
	if a, b := re.ReplaceAll(r.Raw, []byte(":N\r\n")), re.ReplaceAll(k.Raw, []byte(":N\r\n")); string(a) != string(b) {
		return fmt.Errorf("redis %q, keyhive %q", r.Raw, k.Raw)
	}
	return nil
}

// seedScript returns one of seed 002's four Lua scripts (the waiting room),
// kept verbatim in the workloads package; bench/throughput.sh runs the
// enqueue script too.
func seedScript(t testing.TB, name string) string {
	src, ok := workloads.WaitingRoomScripts[name]
	if !ok {
		t.Fatalf("no seed 002 script %q", name)
	}
	return src
}

func anys(s []string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

// Blocking, pauses and keyspace events.

const stillBlocked = 100 * time.Millisecond

// waitBlockedCount waits until INFO clients reports n blocked clients on
// both servers (paused clients count, as in Redis).
func waitBlockedCount(t *testing.T, p *difftest.Pair, n string) {
	t.Helper()
	for _, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
		waitUntil(t, c.Name()+": blocked_clients to reach "+n, func() bool {
			return infoField(c.Do("INFO", "clients").Str, "blocked_clients") == n
		})
	}
}

type eventWatch struct {
	t   *testing.T
	p   *difftest.Pair // runs the commands
	sub *difftest.Pair // subscribed to __key*__:*
}

func watchEvents(t *testing.T, proto int, flags string) *eventWatch {
	p := difftest.Start(t, "--notify-keyspace-events", flags)
	sub := p.NewConn()
	sub.Proto(proto)
	sub.Do("PSUBSCRIBE", "__key*__:*")
	return &eventWatch{t, p, sub}
}

// do runs a command on both servers, compares the replies, then the events.
func (w *eventWatch) do(args ...any) {
	w.t.Helper()
	w.p.Do(args...)
	w.check(fmt.Sprint(args...))
}

// doRandom is do for a command whose reply is random (SPOP): only the
// events are compared.
func (w *eventWatch) doRandom(args ...any) {
	w.t.Helper()
	w.p.DoDifferent("random members", args...)
	w.check(fmt.Sprint(args...))
}

func (w *eventWatch) check(what string) {
	w.t.Helper()
	w.sub.Redis().Send("PING")
	w.sub.Keyhive().Send("PING")
	r, k := events(w.sub.Redis()), events(w.sub.Keyhive())
	if strings.Join(r, "\n") != strings.Join(k, "\n") {
		w.t.Errorf("events after %s:\nredis-server: %q\nkeyhive:      %q", what, r, k)
	}
}

// expectEvents subscribes to every keyevent channel of p's Keyhive and
// returns a check that runs a command on k and compares the events it
// raised with want.
func expectEvents(t *testing.T, p *difftest.Pair, k *difftest.Client) func(want []string, args ...any) {
	sub := p.NewConn().Keyhive()
	sub.Do("PSUBSCRIBE", "__keyevent@*__:*")
	return func(want []string, args ...any) {
		t.Helper()
		k.Do(args...)
		sub.Send("PING")
		if got := events(sub); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("events after %v:\ngot  %q\nwant %q", args, got, want)
		}
	}
}

// events reads what c received up to the PING reply.
func events(c *difftest.Client) []string {
	var got []string
	for {
		r := c.Read()
		switch {
		case r.Kind == '+' && r.Str == "PONG":
			return got
		case len(r.Elems) == 2 && r.Elems[0].Str == "pong":
			return got
		case len(r.Elems) == 4:
			got = append(got, r.Elems[2].Str+" "+r.Elems[3].Str)
		default:
			got = append(got, "unexpected "+r.String())
		}
	}
}

// keyEvents subscribes to database 0's keyevent channels on addr and returns
// a check that runs a command on c and compares the events it raised ("event
// key", comma-separated, in order) with want.
func keyEvents(t *testing.T, c *difftest.Conn, addr string) func(want string, args ...any) {
	sub := dial(t, addr)
	do(t, sub, "PSUBSCRIBE", "__keyevent@0__:*")
	return func(want string, args ...any) {
		t.Helper()
		do(t, c, args...)
		if err := sub.Send("PING"); err != nil {
			t.Fatal(err)
		}
		var got []string
		for {
			r, err := sub.Read()
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Elems) == 2 && r.Elems[0].Str == "pong" {
				break
			}
			got = append(got, strings.TrimPrefix(r.Elems[2].Str, "__keyevent@0__:")+" "+r.Elems[3].Str)
		}
		if strings.Join(got, ",") != want {
			t.Errorf("events after %v: got %q, want %q", args, strings.Join(got, ","), want)
		}
	}
}
