package server

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/resp"
)

// CLUSTER SLOT-STATS, from https://redis.io/docs/latest/commands/cluster-slot-stats/
// (Redis 8.2; no Redis 8 binary here): each expected reply is written out
// from the page's reply schema, an array of [slot, map of metrics], the
// map holding key-count alone unless cluster-slot-stats-enabled is on. The
// error texts are Redis 8.2's for the same input.

// startClusterTestNode starts a one-node Keyhive cluster serving slots
// [from, to] and waits for it to be ok.
func startClusterTestNode(t testing.TB, from, to int, extra ...string) *Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	busPort := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	s := newTestServer(t, append([]string{"--cluster-enabled", "yes", "--cluster-port", busPort, "--bind", "127.0.0.1"}, extra...)...)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.cluster.AddSlots([][2]int{{from, to}}, false); err != nil {
		t.Fatal(err)
	}
	// A master turns ok a moment after it starts, as Redis's (cluster.State's rejoin delay).
	for deadline := time.Now().Add(time.Minute); !s.cluster.Routes().OK; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the cluster is not ok after a minute")
		}
	}
	return s
}

// run executes one inline command on c and returns its raw reply.
func runLine(c *Client, line string) string {
	args, _ := resp.SplitArgs([]byte(line), nil)
	c.execute(args)
	out := string(c.out.B)
	c.out.B = c.out.B[:0]
	return out
}

// slotReply writes the expected RESP of one [slot, {metric: value...}].
func slotReply(proto, slot int, pairs ...any) string {
	var b strings.Builder
	b.WriteString("*2\r\n:" + strconv.Itoa(slot) + "\r\n")
	if proto == 3 {
		b.WriteString("%" + strconv.Itoa(len(pairs)/2) + "\r\n")
	} else {
		b.WriteString("*" + strconv.Itoa(len(pairs)) + "\r\n")
	}
	for i := 0; i < len(pairs); i += 2 {
		name := pairs[i].(string)
		b.WriteString("$" + strconv.Itoa(len(name)) + "\r\n" + name + "\r\n:" + strconv.Itoa(pairs[i+1].(int)) + "\r\n")
	}
	return b.String()
}

// TestClusterSlotStatsKeyCount: with the counters off (the default) each
// slot reports key-count alone, in RESP2 and RESP3; SLOTSRANGE lists the
// node's slots of the range in order, ORDERBY key-count sorts descending
// by default, ties by slot ascending, and LIMIT cuts the list.
func TestClusterSlotStatsKeyCount(t *testing.T) {
	s := startClusterTestNode(t, 0, 99, "--cluster-require-full-coverage", "no") // the node serves slots 0-99 only
	c := pipeClient(t, s)
	// Keys in slots 0 ("{06S}"), 1 ("{Qi}") and 2 ("{5L5}").
	for _, k := range []string{"{06S}a", "{Qi}a", "{Qi}b", "{5L5}a", "{5L5}b", "{5L5}c"} {
		if r := runLine(c, "SET "+k+" v"); r != "+OK\r\n" {
			t.Fatalf("SET %s: %q", k, r)
		}
	}
	for _, k := range []string{"{06S}", "{Qi}", "{5L5}"} {
		if slot := keyspace.Slot([]byte(k)); slot != map[string]int{"{06S}": 0, "{Qi}": 1, "{5L5}": 2}[k] {
			t.Fatalf("%s hashes to slot %d", k, slot)
		}
	}
	for _, proto := range []int{2, 3} {
		runLine(c, "HELLO "+strconv.Itoa(proto))
		// SLOTSRANGE 98 101: 100 and 101 are not this node's.
		want := "*2\r\n" + slotReply(proto, 98, "key-count", 0) + slotReply(proto, 99, "key-count", 0)
		if got := runLine(c, "CLUSTER SLOT-STATS SLOTSRANGE 98 101"); got != want {
			t.Errorf("RESP%d SLOTSRANGE 98 101:\n got %q\nwant %q", proto, got, want)
		}
		want = "*3\r\n" + slotReply(proto, 0, "key-count", 1) + slotReply(proto, 1, "key-count", 2) + slotReply(proto, 2, "key-count", 3)
		if got := runLine(c, "CLUSTER SLOT-STATS SLOTSRANGE 0 2"); got != want {
			t.Errorf("RESP%d SLOTSRANGE 0 2:\n got %q\nwant %q", proto, got, want)
		}
		want = "*4\r\n" + slotReply(proto, 2, "key-count", 3) + slotReply(proto, 1, "key-count", 2) +
			slotReply(proto, 0, "key-count", 1) + slotReply(proto, 3, "key-count", 0)
		if got := runLine(c, "CLUSTER SLOT-STATS ORDERBY KEY-COUNT LIMIT 4"); got != want {
			t.Errorf("RESP%d ORDERBY KEY-COUNT LIMIT 4:\n got %q\nwant %q", proto, got, want)
		}
		// Ascending: the 97 empty slots first (3..99), ties by slot.
		want = "*2\r\n" + slotReply(proto, 3, "key-count", 0) + slotReply(proto, 4, "key-count", 0)
		if got := runLine(c, "CLUSTER SLOT-STATS ORDERBY key-count ASC LIMIT 2"); got != want {
			t.Errorf("RESP%d ORDERBY key-count ASC LIMIT 2:\n got %q\nwant %q", proto, got, want)
		}
	}
	runLine(c, "HELLO 2")
	// Without LIMIT every slot of the node: 100.
	if got := runLine(c, "CLUSTER SLOT-STATS ORDERBY key-count"); !strings.HasPrefix(got, "*100\r\n") {
		t.Errorf("ORDERBY key-count: %.40q...", got)
	}
}

// TestClusterSlotStatsErrors: the refusals, with Redis 8.2's texts.
func TestClusterSlotStatsErrors(t *testing.T) {
	s := startClusterTestNode(t, 0, 16383)
	c := pipeClient(t, s)
	for _, tc := range []struct{ line, want string }{
		{"CLUSTER SLOT-STATS", "-ERR wrong number of arguments for 'cluster|slot-stats' command\r\n"},
		{"CLUSTER SLOT-STATS SLOTSRANGE 0", "-ERR unknown subcommand or wrong number of arguments for 'SLOT-STATS'. Try CLUSTER HELP.\r\n"},
		{"CLUSTER SLOT-STATS SLOTSRANGE 5 1", "-ERR Start slot number 5 is greater than end slot number 1\r\n"},
		{"CLUSTER SLOT-STATS SLOTSRANGE 0 16384", "-ERR Invalid or out of range slot\r\n"},
		{"CLUSTER SLOT-STATS SLOTSRANGE x 1", "-ERR Invalid or out of range slot\r\n"},
		{"CLUSTER SLOT-STATS SLOTSRANGE 0 1 2", "-ERR unknown subcommand or wrong number of arguments for 'SLOT-STATS'. Try CLUSTER HELP.\r\n"},
		{"CLUSTER SLOT-STATS FOO 0 1", "-ERR unknown subcommand or wrong number of arguments for 'SLOT-STATS'. Try CLUSTER HELP.\r\n"},
		{"CLUSTER SLOT-STATS ORDERBY nope", "-ERR Unrecognized sort metric for ORDERBY.\r\n"},
		// The counters are off: only key-count sorts.
		{"CLUSTER SLOT-STATS ORDERBY cpu-usec", "-ERR Unrecognized sort metric for ORDERBY.\r\n"},
		{"CLUSTER SLOT-STATS ORDERBY memory-bytes", "-ERR Unrecognized sort metric for ORDERBY.\r\n"},
		{"CLUSTER SLOT-STATS ORDERBY key-count LIMIT 0", "-ERR Limit has to lie in between 1 and 16384 (maximum number of slots).\r\n"},
		{"CLUSTER SLOT-STATS ORDERBY key-count LIMIT 16385", "-ERR Limit has to lie in between 1 and 16384 (maximum number of slots).\r\n"},
		{"CLUSTER SLOT-STATS ORDERBY key-count LIMIT x", "-ERR Limit has to lie in between 1 and 16384 (maximum number of slots).\r\n"},
		{"CLUSTER SLOT-STATS ORDERBY key-count LIMIT", "-ERR syntax error\r\n"},
		{"CLUSTER SLOT-STATS ORDERBY key-count ASC DESC", "-ERR Multiple filters of the same type are disallowed.\r\n"},
		{"CLUSTER SLOT-STATS ORDERBY key-count LIMIT 1 LIMIT 2", "-ERR Multiple filters of the same type are disallowed.\r\n"},
		{"CLUSTER SLOT-STATS ORDERBY key-count SIDEWAYS", "-ERR syntax error\r\n"},
	} {
		if got := runLine(c, tc.line); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.line, got, tc.want)
		}
	}
	// Outside cluster mode, as every CLUSTER subcommand.
	plain := pipeClient(t, newTestServer(t))
	if got, want := runLine(plain, "CLUSTER SLOT-STATS SLOTSRANGE 0 1"), "-"+errClusterDisable+"\r\n"; got != want {
		t.Errorf("without cluster mode: %q, want %q", got, want)
	}
}

// TestClusterSlotStatsCounters: with cluster-slot-stats-enabled yes every
// slot reports the five metrics in the page's order; a command's request
// and reply bytes go to its keys' slot (a transaction's, MULTI's 15 bytes
// and the queued commands' included, to the EXEC's slot), its CPU time
// too; a command without keys counts nowhere; ORDERBY sorts by any metric;
// turning the directive off hides the counters again, and CONFIG RESETSTAT
// zeroes them, as Redis's does.
func TestClusterSlotStatsCounters(t *testing.T) {
	s := startClusterTestNode(t, 0, 16383, "--cluster-slot-stats-enabled", "yes")
	c := pipeClient(t, s)
	runLine(c, "PING") // no key: no slot
	set := "SET {06S}k hello"
	if r := runLine(c, set); r != "+OK\r\n" {
		t.Fatal(r)
	}
	get := "GET {06S}k"
	if r := runLine(c, get); r != "$5\r\nhello\r\n" {
		t.Fatal(r)
	}
	in := len("*3\r\n$3\r\nSET\r\n$8\r\n{06S}k\r\n$5\r\nhello\r\n") + len("*2\r\n$3\r\nGET\r\n$6\r\n{06S}k\r\n")
	out := len("+OK\r\n") + len("$5\r\nhello\r\n")
	if _, gotIn, gotOut := s.slotStats.Load(0); int(gotIn) != in || int(gotOut) != out {
		t.Errorf("slot 0 network-bytes-in %d, out %d, want %d and %d", gotIn, gotOut, in, out)
	}
	// A transaction on slot 1: MULTI (15 bytes), the queued INCR, EXEC.
	runLine(c, "MULTI")
	runLine(c, "INCR {Qi}n")
	if r := runLine(c, "EXEC"); r != "*1\r\n:1\r\n" {
		t.Fatal(r)
	}
	in1 := 15 + len("*2\r\n$4\r\nINCR\r\n$5\r\n{Qi}n\r\n") + len("*1\r\n$4\r\nEXEC\r\n")
	out1 := len("*1\r\n:1\r\n")
	if _, gotIn, gotOut := s.slotStats.Load(1); int(gotIn) != in1 || int(gotOut) != out1 {
		t.Errorf("slot 1 network-bytes-in %d, out %d, want %d and %d", gotIn, gotOut, in1, out1)
	}
	// A script takes every lock: its declared keys give its slot (2).
	eval := "EVAL \"return redis.call('set', KEYS[1], 'x')\" 1 {5L5}s"
	if r := runLine(c, eval); r != "+OK\r\n" {
		t.Fatal(r)
	}
	in2 := len("*4\r\n$4\r\nEVAL\r\n$35\r\nreturn redis.call('set', KEYS[1], 'x')\r\n$1\r\n1\r\n$6\r\n{5L5}s\r\n")
	if _, got, _ := s.slotStats.Load(2); int(got) != in2 {
		t.Errorf("slot 2 network-bytes-in %d, want %d (the EVAL)", got, in2)
	}
	// MEMORY USAGE of slot 0's key counts on slot 0 too: the counters are
	// set to known values after it, so the whole reply can be written out
	// (a pipe client's first command also counts the time since it was
	// made: it read no batch).
	mem0 := keySlotMemory(t, s, 0)
	s.slotStats.Reset(func(int) bool { return true })
	s.slotStats.Record(0, 7000, in, out)
	s.slotStats.Record(1, 9000, in1, out1)
	s.slotStats.Record(2, 3000, 1, 1)
	for _, proto := range []int{2, 3} {
		runLine(c, "HELLO "+strconv.Itoa(proto))
		want := "*1\r\n" + slotReply(proto, 0, "key-count", 1, "cpu-usec", 7, "memory-bytes", mem0,
			"network-bytes-in", in, "network-bytes-out", out)
		if got := runLine(c, "CLUSTER SLOT-STATS SLOTSRANGE 0 0"); got != want {
			t.Errorf("RESP%d SLOTSRANGE 0 0:\n got %q\nwant %q", proto, got, want)
		}
	}
	runLine(c, "HELLO 2")
	// The HELLOs and SLOT-STATS name no key: still the figures above.
	for _, tc := range []struct {
		metric string
		first  int
	}{{"cpu-usec", 1}, {"network-bytes-in", 0}, {"network-bytes-out", 0}, {"memory-bytes", 0}} {
		got := runLine(c, "CLUSTER SLOT-STATS ORDERBY "+tc.metric+" LIMIT 1")
		if !strings.HasPrefix(got, "*1\r\n*2\r\n:"+strconv.Itoa(tc.first)+"\r\n") {
			t.Errorf("ORDERBY %s LIMIT 1: %.60q..., want slot %d first", tc.metric, got, tc.first)
		}
	}
	runLine(c, "CONFIG SET cluster-slot-stats-enabled no")
	want := "*1\r\n" + slotReply(2, 0, "key-count", 1)
	if got := runLine(c, "CLUSTER SLOT-STATS SLOTSRANGE 0 0"); got != want {
		t.Errorf("after CONFIG SET cluster-slot-stats-enabled no:\n got %q\nwant %q", got, want)
	}
	runLine(c, "GET {06S}k")
	if _, got, _ := s.slotStats.Load(0); int(got) != in {
		t.Errorf("counted while off: network-bytes-in %d, want %d", got, in)
	}
	// CONFIG RESETSTAT zeroes the counters.
	runLine(c, "CONFIG RESETSTAT")
	runLine(c, "CONFIG SET cluster-slot-stats-enabled yes")
	want = "*1\r\n" + slotReply(2, 0, "key-count", 1, "cpu-usec", 0, "memory-bytes", mem0,
		"network-bytes-in", 0, "network-bytes-out", 0)
	if got := runLine(c, "CLUSTER SLOT-STATS SLOTSRANGE 0 0"); got != want {
		t.Errorf("after CONFIG RESETSTAT:\n got %q\nwant %q", got, want)
	}
}

// keySlotMemory is memory-bytes of slot: its keys' MEMORY USAGE.
func keySlotMemory(t *testing.T, s *Server, slot int) int {
	c := pipeClient(t, s)
	var keys []string
	s.ks.DB(0).KeysInSlot(slot, 1<<30, func(k []byte) { keys = append(keys, string(k)) })
	total := 0
	for _, k := range keys {
		n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(runLine(c, "MEMORY USAGE "+k), ":")))
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	return total
}

// TestClusterSlotStatsAllocs: with the counters on, the per-slot
// accounting allocates nothing, long arguments (a length of 100 bytes or
// more) included.
func TestClusterSlotStatsAllocs(t *testing.T) {
	s := startClusterTestNode(t, 0, 16383, "--cluster-slot-stats-enabled", "yes")
	c := pipeClient(t, s)
	long := strings.Repeat("v", 300)
	expectNoAllocs(t, c, "SET k v", "GET k", "SET k "+long, "MSET {a}1 x {a}2 y", "MGET {a}1 {a}2", "INCR {a}n", "PING")
	if _, in, _ := s.slotStats.Load(keyspace.Slot([]byte("k"))); in == 0 {
		t.Error("nothing counted for k's slot")
	}
}
