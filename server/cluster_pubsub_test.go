package server_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/redis/go-redis/v9"
)

// Pub/Sub in a cluster, against redis-server 7.4.1 nodes doing the same:
// three masters A, B, C and a replica R of A. PUBLISH goes over the bus
// to every node, SPUBLISH to the nodes of the publishing node's shard (A
// and R, whose sharded subscribers need no READONLY). Whenever a slot's
// owner changes in a node's table (a failover, on the winner and on the
// old master; SETSLOT ... NODE, on the nodes that hear of it too;
// DELSLOTS), the node unsubscribes its clients from that slot's shard
// channels with an sunsubscribe message each, in RESP2 and RESP3, so that
// they subscribe again where the slot went.

// clusterSubscriber is a connection subscribed on one node.
type clusterSubscriber struct {
	name string
	conn *difftest.Conn
}

// clusterPubSubNodes are the nodes of the scenario.
type clusterPubSubNodes struct{ a, b, c, r string }

// startPubSubCluster starts the four nodes of bin (a built keyhive or the
// 7.4 oracle): three masters, and R a replica of A linked to it.
func startPubSubCluster(t *testing.T, bin string) clusterPubSubNodes {
	t.Helper()
	var addrs []string
	for range 4 {
		addr, _ := startClusterNodeStop(t, bin, "--repl-diskless-sync-delay", "0")
		addrs = append(addrs, addr)
	}
	n := clusterPubSubNodes{a: addrs[0], b: addrs[1], c: addrs[2], r: addrs[3]}
	redisCli(t, "--cluster", "create", n.a, n.b, n.c, "--cluster-replicas", "0", "--cluster-yes")
	waitClusterAgrees(t, n.a, n.b, n.c)
	redisCli(t, "--cluster", "add-node", n.r, n.a, "--cluster-slave", "--cluster-master-id", nodeID(t, n.a))
	waitClusterAgrees(t, addrs...)
	// Linked, and A counts R in its shard (Redis sends an SPUBLISH to the
	// shard A knows).
	aID, rID := nodeID(t, n.a), nodeID(t, n.r)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(inlineText(n.r, "INFO replication"), "master_link_status:up") || !sameShard(t, n.a, aID, rID) {
		if time.Now().After(deadline) {
			t.Fatalf("the replica did not link to its master:\n%s", inlineText(n.r, "INFO replication"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	return n
}

// sameShard reports whether addr's CLUSTER SHARDS lists the nodes a and b
// in one shard.
func sameShard(t *testing.T, addr, a, b string) bool {
	t.Helper()
	r, err := difftest.Inline(addr, "CLUSTER SHARDS")
	if err != nil {
		t.Fatal(err)
	}
	for _, shard := range r.Elems {
		if strings.Contains(string(shard.Raw), a) && strings.Contains(string(shard.Raw), b) {
			return true
		}
	}
	return false
}

// shardTag is a hash tag whose slot redis-cli gives the first of three
// masters (slots 0-5460).
func shardTag() (tag string, slot int) {
	for i := 0; ; i++ {
		tag = "{t" + strconv.Itoa(i) + "}"
		if slot = keyspace.Slot([]byte(tag)); slot <= 5460 {
			return tag, slot
		}
	}
}

// clusterPubSubScenario runs the scenario on a cluster of bin and returns,
// per step, what each subscriber received and the commands' replies;
// counts are what the oracle's subscribers received per step (nil on the
// oracle's run: each read until quiet).
func clusterPubSubScenario(t *testing.T, bin string, counts map[string]int) map[string][]string {
	n := startPubSubCluster(t, bin)
	tag, slot := shardTag()
	ch1, ch2 := tag+"1", tag+"2"
	got := map[string][]string{}
	do := func(step, addr string, args ...any) {
		t.Helper()
		r, err := difftest.Dial(addr)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		reply, err := r.Do(args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		got[step+" replies"] = append(got[step+" replies"], strconv.Quote(string(reply.Raw)))
	}
	subscriber := func(name, addr string, cmds ...[]any) clusterSubscriber {
		t.Helper()
		c, err := difftest.Dial(addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		for _, cmd := range cmds {
			if err := c.Send(cmd...); err != nil {
				t.Fatal(err)
			}
			for range max(1, len(cmd)-1) { // a confirmation per channel
				r, err := c.Read()
				if err != nil || r.IsError() {
					t.Fatalf("%s: %v: %v %v", name, cmd, r, err)
				}
				if slices.Contains([]string{"HELLO", "READONLY"}, cmd[0].(string)) {
					break
				}
			}
		}
		return clusterSubscriber{name: name, conn: c}
	}
	subs := []clusterSubscriber{
		subscriber("A resp2", n.a, []any{"SSUBSCRIBE", ch1, ch2}, []any{"SUBSCRIBE", "news"}),
		subscriber("A resp3", n.a, []any{"HELLO", "3"}, []any{"SSUBSCRIBE", ch1}),
		subscriber("A shard only", n.a, []any{"SSUBSCRIBE", ch1}),
		subscriber("R readonly", n.r, []any{"READONLY"}, []any{"SSUBSCRIBE", ch1, ch2}),
		subscriber("R plain", n.r, []any{"SSUBSCRIBE", ch1}, []any{"SUBSCRIBE", "news"}),
		subscriber("B", n.b, []any{"SUBSCRIBE", "news"}),
	}
	// collect reads what each subscriber receives in a step: the oracle's
	// until it is quiet (2 s for the step, then 300 ms each), Keyhive's as
	// many messages as the oracle's got, and then nothing more (300 ms for
	// the step).
	collect := func(step string) {
		t.Helper()
		if counts == nil {
			time.Sleep(2 * time.Second)
		}
		for _, s := range subs {
			key := step + ": " + s.name
			if counts == nil {
				for s.conn.Idle(300*time.Millisecond) != nil {
					r, err := s.conn.Read()
					if err != nil {
						t.Fatalf("%s: %v", key, err)
					}
					got[key] = append(got[key], strconv.Quote(string(r.Raw)))
				}
				got[key] = unorderedChannels(got[key])
				continue
			}
			for range counts[key] {
				r, err := s.conn.Read()
				if err != nil {
					t.Fatalf("%s after %q: %v", key, got[key], err)
				}
				got[key] = append(got[key], strconv.Quote(string(r.Raw)))
			}
		}
		if counts == nil {
			return
		}
		time.Sleep(300 * time.Millisecond)
		for _, s := range subs {
			key := step + ": " + s.name
			if err := s.conn.Idle(10 * time.Millisecond); err != nil {
				t.Errorf("%s after %q: %v", key, got[key], err)
			}
			got[key] = unorderedChannels(got[key])
		}
	}

	// A step per publishing node: messages from different nodes come over
	// different links, in any order.
	do("publish", n.a, "SPUBLISH", ch1, "on the master")
	do("publish", n.a, "PUBLISH", "news", "everywhere")
	collect("publish")
	do("replica publishes", n.r, "SPUBLISH", ch2, "on the replica")
	collect("replica publishes")
	do("another master publishes", n.c, "PUBLISH", "news", "from another master")
	collect("another master publishes")

	// R takes A's place (CLUSTER FAILOVER): R's subscribers are told as
	// it takes the slots, A's as A hears of it and follows R.
	bID, rID := nodeID(t, n.b), nodeID(t, n.r)
	do("failover", n.r, "CLUSTER", "FAILOVER")
	for start := time.Now(); !strings.Contains(inlineText(n.r, "INFO replication"), "role:master") ||
		!strings.Contains(inlineText(n.a, "CLUSTER NODES"), "myself,slave "+rID) ||
		!strings.Contains(inlineText(n.a, "INFO replication"), "master_link_status:up"); {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("CLUSTER FAILOVER: no swap\n%s\n%s", inlineText(n.r, "CLUSTER NODES"), inlineText(n.a, "CLUSTER NODES"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	collect("failover")
	// Out of Pub/Sub mode once its last subscription went; still in it with
	// a channel left.
	for _, i := range []int{0, 2} {
		r, err := subs[i].conn.Do("PING")
		if err != nil {
			t.Fatal(err)
		}
		got["PING after: "+subs[i].name] = []string{strconv.Quote(string(r.Raw))}
	}

	// The slot moves from R to B: R's subscribers are told at once, A's
	// when A hears that B took it.
	subs = append(subs,
		subscriber("R new master", n.r, []any{"SSUBSCRIBE", ch1, ch2}),
		subscriber("A new replica", n.a, []any{"SSUBSCRIBE", ch1}))
	do("migrate", n.b, "CLUSTER", "SETSLOT", slot, "IMPORTING", rID)
	do("migrate", n.r, "CLUSTER", "SETSLOT", slot, "MIGRATING", bID)
	do("migrate", n.r, "CLUSTER", "SETSLOT", slot, "NODE", bID)
	do("migrate", n.b, "CLUSTER", "SETSLOT", slot, "NODE", bID)
	collect("migrate")

	// B's subscriber loses its channel when B gives the slot up.
	subs = append(subs, subscriber("B shard", n.b, []any{"SSUBSCRIBE", ch1}))
	do("delslots", n.b, "SPUBLISH", ch1, "on the new owner")
	do("delslots", n.b, "CLUSTER", "DELSLOTS", slot)
	collect("delslots")
	return got
}

// unorderedChannels leaves the channels out of a run of sunsubscribe
// messages (quoted wire bytes), and lists them sorted after the run: Redis
// unsubscribes a slot's channels in its hash table's order, which a
// random seed makes differ from run to run; the counts they carry go down
// in order whatever the order of the channels.
func unorderedChannels(msgs []string) []string {
	var out, run []string
	for i, m := range msgs {
		raw, _ := strconv.Unquote(m)
		r := difftest.MustParse(raw)
		if len(r.Elems) == 3 && r.Elems[0].Str == "sunsubscribe" {
			run = append(run, r.Elems[1].Str)
			out = append(out, strconv.Quote(strings.Replace(raw, "\r\n"+r.Elems[1].Str+"\r\n", "\r\n<channel>\r\n", 1)))
		}
		if len(run) > 0 && (i == len(msgs)-1 || !strings.Contains(msgs[i+1], "sunsubscribe")) {
			slices.Sort(run)
			out = append(out, "channels "+strings.Join(run, " "))
			run = nil
		}
		if len(r.Elems) != 3 || r.Elems[0].Str != "sunsubscribe" {
			out = append(out, m)
		}
	}
	return out
}

func TestClusterPubSubDiff(t *testing.T) {
	slowTest(t, "two clusters of four processes")
	oracle, err := difftest.Oracle74()
	if err != nil {
		t.Skip(err)
	}
	bin := buildKeyhiveBinary(t)
	redis := clusterPubSubScenario(t, oracle, nil)
	// Guard against a scenario that tests nothing: the oracle unsubscribed
	// somebody at each of these steps.
	for _, step := range []string{"failover", "migrate", "delslots"} {
		found := false
		for k, v := range redis {
			found = found || strings.HasPrefix(k, step+": ") && slices.ContainsFunc(v, func(m string) bool { return strings.HasPrefix(m, "channels ") })
		}
		if !found {
			t.Fatalf("redis-server sent no sunsubscribe at step %s: %q", step, redis)
		}
	}
	counts := map[string]int{}
	for k, v := range redis {
		for _, m := range v {
			if !strings.HasPrefix(m, "channels ") {
				counts[k]++
			}
		}
	}
	keyhive := clusterPubSubScenario(t, bin, counts)
	keys := make([]string, 0, len(redis))
	for k := range redis {
		keys = append(keys, k)
	}
	for k := range keyhive {
		if _, ok := redis[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Equal(redis[k], keyhive[k]) {
			t.Errorf("%s:\nredis   %s\nkeyhive %s", k, strings.Join(redis[k], "\n        "), strings.Join(keyhive[k], "\n        "))
		}
	}
}

// TestClusterShardedPubSubReadOnly is go-redis's "sharded PubSub with
// ReadOnly" spec on a Keyhive cluster: a ReadOnly cluster client
// subscribes to a shard channel on the slot's replica, and what SPUBLISH
// sends to the master reaches it.
func TestClusterShardedPubSubReadOnly(t *testing.T) {
	slowTest(t, "a cluster of four processes")
	n := startPubSubCluster(t, buildKeyhiveBinary(t))
	tag, _ := shardTag()
	ctx := context.Background()
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{n.a}, ReadOnly: true})
	defer c.Close()
	sub := c.SSubscribe(ctx, tag+"ch")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	list, err := difftest.Inline(n.r, "PUBSUB SHARDNUMSUB "+tag+"ch")
	if err != nil || len(list.Elems) != 2 || list.Elems[1].Int != 1 {
		t.Fatalf("the replica's PUBSUB SHARDNUMSUB: %q %v (go-redis subscribed on the master)", list.Raw, err)
	}
	if err := c.SPublish(ctx, tag+"ch", "hello").Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-sub.Channel():
		if m.Channel != tag+"ch" || m.Payload != "hello" {
			t.Fatalf("received %+v", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the subscriber on the replica received nothing")
	}
}
