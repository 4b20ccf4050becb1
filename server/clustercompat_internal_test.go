package server

import (
	"strconv"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/resp"
)

// Redis 8.0's cluster compatibility check: INFO stats' cluster_incompatible_ops
// counts, outside cluster mode, the sampled commands a cluster node would
// refuse; cluster-compatibility-sample-ratio (0-100, default 0: off) is the
// percentage sampled. The copy of the INFO page at hand
// (https://redis.io/docs/latest/commands/info/) does not list the field yet;
// the cases below are the ones Redis 8.0 counts (its own tests of the
// feature), each with its expected count written out. No Redis 8 binary here.

// incompatibleOps reads cluster_incompatible_ops from INFO stats, -1 when
// INFO does not show it.
func incompatibleOps(t *testing.T, c *Client) int {
	t.Helper()
	info := runLine(c, "INFO stats")
	_, rest, found := strings.Cut(info, "cluster_incompatible_ops:")
	if !found {
		return -1
	}
	n, err := strconv.Atoi(rest[:strings.Index(rest, "\r\n")])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestClusterIncompatibleOps: each operation cluster mode refuses counts
// once with the ratio at 100, and what it accepts does not.
func TestClusterIncompatibleOps(t *testing.T) {
	s := newTestServer(t, "--cluster-compatibility-sample-ratio", "100")
	c := pipeClient(t, s)
	// foo and bar are on different slots; bar{foo} is on foo's.
	for _, tc := range []struct {
		lines []string
		adds  int
	}{
		{[]string{"SELECT 0"}, 0},
		{[]string{"SELECT 1"}, 1},
		{[]string{"SWAPDB 0 1"}, 1},
		{[]string{"SELECT 0", "SET key1 value1", "COPY key1 key2{key1}"}, 0},
		{[]string{"COPY key2{key1} key1 DB 1"}, 1},
		{[]string{"SET key3 value3", "MOVE key3 1"}, 1},
		{[]string{"MSET foo bar bar foo"}, 1},
		{[]string{"DEL foo bar"}, 1},
		{[]string{"MSET foo 1 bar{foo} 2", "MGET foo bar{foo}", "DEL foo foo"}, 0},
		// A transaction counts once, for the keys of its whole queue.
		{[]string{"MULTI", "EXEC"}, 0},
		{[]string{"MULTI", "SET foo bar", "DEL bar", "EXEC"}, 1},
		{[]string{"MULTI", "SET foo bar", "DEL bar{foo}", "EXEC"}, 0},
		// Scripts and functions flagged no-cluster.
		{[]string{"EVAL \"#!lua flags=no-cluster\nreturn 1\" 0"}, 1},
		{[]string{"EVAL \"#!lua\nreturn 1\" 0"}, 0},
		// A script's declared keys on two slots; its calls' keys on two slots.
		{[]string{"EVAL \"#!lua\nredis.call('mset', KEYS[1], 0, KEYS[2], 0)\" 2 foo bar"}, 1},
		{[]string{"EVAL \"#!lua\nredis.call('mset', 'foo', 0, 'bar', 0)\" 0"}, 1},
		// allow-cross-slot-keys lets a script's commands use several slots,
		// not one command several.
		{[]string{"EVAL \"#!lua flags=allow-cross-slot-keys\nredis.call('mset', 'foo', 0, 'bar', 0)\nredis.call('mset', KEYS[1], 0, KEYS[2], 0)\" 2 foo bar{foo}"}, 1},
		{[]string{"EVAL \"#!lua flags=allow-cross-slot-keys\nredis.call('set', 'foo', 0)\nredis.call('set', 'bar', 0)\nredis.call('mset', KEYS[1], 0, KEYS[2], 0)\" 2 foo bar{foo}"}, 0},
		// Without allow-cross-slot-keys, calls on two slots.
		{[]string{"EVAL \"#!lua\nredis.call('set', 'foo', 0)\nredis.call('set', 'bar', 0)\" 0"}, 1},
		// SORT patterns on another slot than the key's.
		{[]string{"RPUSH mylist 1 2 3", "SET weight_1 3", "SET weight_2 2", "SET weight_3 1", "SORT mylist BY weight_*"}, 1},
		{[]string{"SET weight{mylist}_1 3", "SET weight{mylist}_2 2", "SET weight{mylist}_3 1", "SORT mylist BY weight{mylist}_*"}, 0},
		{[]string{"SET object_1 o_1", "SORT mylist BY weight{mylist}_* GET object_*"}, 1},
		{[]string{"SET object{mylist}_1 o_1", "SORT mylist BY weight{mylist}_* GET object{mylist}_* GET #"}, 0},
		{[]string{"SORT mylist BY nosort"}, 0},
	} {
		before := incompatibleOps(t, c)
		for _, line := range tc.lines {
			if r := runLine(c, line); strings.HasPrefix(r, "-") {
				t.Fatalf("%q: %q", line, r)
			}
		}
		if got := incompatibleOps(t, c) - before; got != tc.adds {
			t.Errorf("%q: cluster_incompatible_ops grew by %d, want %d", tc.lines, got, tc.adds)
		}
	}
	// SSUBSCRIBE to channels of two slots.
	sub := pipeClient(t, s)
	before := incompatibleOps(t, c)
	args, _ := resp.SplitArgs([]byte("SSUBSCRIBE foo bar"), nil)
	sub.execute(args)
	if got := incompatibleOps(t, c) - before; got != 1 {
		t.Errorf("SSUBSCRIBE foo bar: cluster_incompatible_ops grew by %d, want 1", got)
	}
	runLine(c, "CONFIG RESETSTAT")
	if got := incompatibleOps(t, c); got != 0 {
		t.Errorf("after CONFIG RESETSTAT: %d", got)
	}
}

// TestClusterIncompatibleOpsSampling: at 0 the field is gone from INFO and
// nothing is counted; at 100 every incompatible command counts; at 30
// about 30% of them.
func TestClusterIncompatibleOpsSampling(t *testing.T) {
	s := newTestServer(t)
	c := pipeClient(t, s)
	if got := incompatibleOps(t, c); got != -1 {
		t.Fatalf("INFO shows cluster_incompatible_ops with the check off (%d)", got)
	}
	for i := range 100 {
		runLine(c, "MSET foo bar"+strconv.Itoa(i)+" bar foo")
	}
	runLine(c, "CONFIG SET cluster-compatibility-sample-ratio 1")
	if got := incompatibleOps(t, c); got != 0 {
		t.Errorf("counted with the check off: %d", got)
	}
	runLine(c, "CONFIG SET cluster-compatibility-sample-ratio 100")
	for i := range 100 {
		runLine(c, "MSET foo bar"+strconv.Itoa(i)+" bar foo")
	}
	if got := incompatibleOps(t, c); got != 100 {
		t.Errorf("ratio 100: %d of 100 counted", got)
	}
	runLine(c, "CONFIG SET cluster-compatibility-sample-ratio 30")
	for i := range 1000 {
		runLine(c, "MSET foo bar"+strconv.Itoa(i)+" bar foo")
	}
	if got := incompatibleOps(t, c) - 100; got < 200 || got > 400 {
		t.Errorf("ratio 30: %d of 1000 counted, want 200 to 400", got)
	}
	for _, bad := range []string{"-1", "101", "x"} {
		if r := runLine(c, "CONFIG SET cluster-compatibility-sample-ratio "+bad); !strings.HasPrefix(r, "-ERR") {
			t.Errorf("CONFIG SET cluster-compatibility-sample-ratio %s: %q", bad, r)
		}
	}
}

// TestClusterCompatCheckAllocs: sampling every command and checking its
// keys allocates nothing.
func TestClusterCompatCheckAllocs(t *testing.T) {
	c := pipeClient(t, newTestServer(t, "--cluster-compatibility-sample-ratio", "100"))
	expectNoAllocs(t, c, "SET k v", "GET k", "MSET {a}1 x {a}2 y", "MGET {a}1 {a}2", "MGET a b", "INCR n", "PING")
}

// TestClusterCompatOffOnClusterNode: a cluster node checks nothing (it
// refuses instead), whatever the ratio.
func TestClusterCompatOffOnClusterNode(t *testing.T) {
	s := startClusterTestNode(t, 0, 16383, "--cluster-compatibility-sample-ratio", "100")
	if r := s.compat.ratio.Load(); r != 0 {
		t.Errorf("a cluster node samples %d%%", r)
	}
}
