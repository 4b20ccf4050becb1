package server_test

import (
	"bufio"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// Pub/Sub across replication, against redis-server 7.4.1 playing every
// role: a master, its replica and the replica's replica, with subscribers
// on each; the messages every subscriber receives are compared byte for
// byte, and so is the master's AOF. Redis propagates PUBLISH (and SPUBLISH outside a cluster) to
// replicas and not to the AOF, as a command of a transaction or a script
// where it ran in one; a replica delivers it to its own subscribers and
// forwards it to its replicas.

// replPubSubSubscriber is a connection subscribed on one of the servers.
type replPubSubSubscriber struct {
	name string
	conn *difftest.Conn
}

// subscribeAll subscribes a new connection on n to the channel news, the
// pattern n* and the shard channel news (resp3: after HELLO 3).
func subscribeAll(t *testing.T, n *replNode, name string, resp3 bool) replPubSubSubscriber {
	t.Helper()
	c, err := difftest.Dial(n.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if resp3 {
		if r, err := c.Do("HELLO", "3"); err != nil || r.IsError() {
			t.Fatalf("HELLO 3 on %s: %v %v", n.name, r, err)
		}
	}
	for _, cmd := range [][]any{{"SUBSCRIBE", "news"}, {"PSUBSCRIBE", "n*"}, {"SSUBSCRIBE", "news"}} {
		if r, err := c.Do(cmd...); err != nil || r.IsError() {
			t.Fatalf("%v on %s: %v %v", cmd, n.name, r, err)
		}
	}
	return replPubSubSubscriber{name: name, conn: c}
}

// receiveUntil reads s's messages up to and including the message "end"
// on the channel news (not its pattern message), each as its wire bytes.
func (s replPubSubSubscriber) receiveUntil(t *testing.T) []string {
	t.Helper()
	var got []string
	for {
		r, err := s.conn.Read()
		if err != nil {
			t.Fatalf("%s after %q: %v", s.name, got, err)
		}
		got = append(got, strconv.Quote(string(r.Raw)))
		if len(r.Elems) == 3 && r.Elems[0].Str == "message" && r.Elems[2].Str == "end" {
			return got
		}
	}
}

// aofCommands are the commands of n's incremental AOF file but SELECT, one
// string each.
func aofCommands(t *testing.T, n *replNode) []string {
	t.Helper()
	dir := n.ok(t, "CONFIG", "GET", "dir").Elems[1].Str
	f, err := os.Open(incrFile(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds []string
	for br := bufio.NewReader(f); ; {
		r, err := difftest.ReadReply(br)
		if err == io.EOF {
			return cmds
		}
		if err != nil {
			t.Fatalf("%s's AOF after %q: %v", n.name, cmds, err)
		}
		if !strings.EqualFold(r.Elems[0].Str, "SELECT") {
			cmds = append(cmds, r.String())
		}
	}
}

// replStarter starts a server of a replication test.
type replStarter func(t *testing.T, directives ...string) *replNode

// replPubSubScenario runs the scenario on a master (with the AOF on), its
// replica and the replica's replica that start makes, and returns what
// each subscriber received, the master's replies and its AOF.
func replPubSubScenario(t *testing.T, start [3]replStarter) map[string][]string {
	// appendfsync always: under everysec Redis postpones its AOF write
	// while the last second's fsync is still running, so the file read
	// below could miss the last commands on a loaded machine.
	master, replica, chained := start[0](t, "--appendonly", "yes", "--appendfsync", "always"), start[1](t), start[2](t)
	replicate(t, master, replica)
	replicate(t, replica, chained)
	subs := []replPubSubSubscriber{
		subscribeAll(t, master, "master", false),
		subscribeAll(t, replica, "replica", false),
		subscribeAll(t, chained, "chained", false),
		subscribeAll(t, chained, "chained-resp3", true),
	}
	got := map[string][]string{}
	// A replica's own PUBLISH reaches its subscribers only.
	got["replica replies"] = append(got["replica replies"], replica.ok(t, "PUBLISH", "news", "on the replica").String())
	for _, cmd := range [][]any{
		{"PUBLISH", "news", "m1"},
		{"SPUBLISH", "news", "s1"},
		{"PUBLISH", "nothing", "pattern only"},
		{"SELECT", 3}, {"PUBLISH", "news", "from db 3"}, {"SELECT", 0},
		{"MULTI"}, {"SET", "k", "1"}, {"PUBLISH", "news", "in a transaction"}, {"EXEC"},
		{"MULTI"}, {"PUBLISH", "news", "t1"}, {"SPUBLISH", "news", "t2"}, {"EXEC"},
		{"EVAL", "redis.call('set', KEYS[1], '2') return redis.call('publish', 'news', 'in a script')", 1, "k"},
		{"EVAL", "redis.call('publish', 'news', 'p1') return redis.call('spublish', 'news', 'p2')", 0},
		{"EVAL", "return redis.call('publish', 'news', 'alone in a script')", 0},
		{"PUBLISH", "news", "end"},
	} {
		got["master replies"] = append(got["master replies"], master.ok(t, cmd...).String())
	}
	for _, s := range subs {
		got[s.name] = s.receiveUntil(t)
	}
	got["chained GET k"] = []string{chained.ok(t, "GET", "k").String()}
	// The AOF has no PUBLISH: a transaction of PUBLISHes is an empty
	// MULTI/EXEC there, as Redis writes it. (SELECTs are left out: Redis
	// writes a transaction's SELECT after its MULTI, Keyhive before.)
	got["master AOF"] = aofCommands(t, master)
	return got
}

func TestReplPubSubReachesReplicas(t *testing.T) {
	oracle, err := difftest.Oracle74()
	if err != nil {
		t.Skip(err)
	}
	redis := func(t *testing.T, directives ...string) *replNode {
		return processNode(t, oracle, "redis 7.4", directives...)
	}
	keyhive := func(t *testing.T, directives ...string) *replNode {
		return startReplNode(t, false, append([]string{"--repl-diskless-sync-delay", "0"}, directives...)...)
	}
	want := replPubSubScenario(t, [3]replStarter{redis, redis, redis})
	for _, c := range []struct {
		name  string
		start [3]replStarter
	}{
		{"keyhive", [3]replStarter{keyhive, keyhive, keyhive}},
		// A Keyhive replica between redis-servers: what it applies and
		// forwards.
		{"redis-keyhive-redis", [3]replStarter{redis, keyhive, redis}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := replPubSubScenario(t, c.start)
			names := make([]string, 0, len(want))
			for name := range want {
				names = append(names, name)
			}
			slices.Sort(names)
			for _, name := range names {
				if !slices.Equal(want[name], got[name]) {
					t.Errorf("%s:\nredis   %s\n%s %s", name, strings.Join(want[name], "\n        "), c.name, strings.Join(got[name], "\n        "))
				}
			}
		})
	}
}
