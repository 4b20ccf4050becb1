package server

import (
	"sort"
	"strings"

	"github.com/keyhive/keyhive/glob"
	"github.com/keyhive/keyhive/internal/cstr"
)

func init() {
	bind("subscribe", subscribeCommand)
	bind("unsubscribe", unsubscribeCommand)
	bind("psubscribe", psubscribeCommand)
	bind("punsubscribe", punsubscribeCommand)
	bind("publish", publishCommand)
	bind("ssubscribe", ssubscribeCommand)
	bind("sunsubscribe", sunsubscribeCommand)
	bind("spublish", spublishCommand)
	bindSub("pubsub", "channels", func(x *Ctx) { pubsubChannels(x, false) })
	bindSub("pubsub", "numsub", func(x *Ctx) { pubsubNumSub(x, false) })
	bindSub("pubsub", "numpat", pubsubNumPat)
	bindSub("pubsub", "shardchannels", func(x *Ctx) { pubsubChannels(x, true) })
	bindSub("pubsub", "shardnumsub", func(x *Ctx) { pubsubNumSub(x, true) })
	bindSub("pubsub", "help", pubsubHelp)
}

func subscribeCommand(x *Ctx) { subscribe(x, subChannel, "subscribe") }

func psubscribeCommand(x *Ctx) { subscribe(x, subPattern, "psubscribe") }

func ssubscribeCommand(x *Ctx) {
	if x.blockingDenied() {
		// Redis 7.0 refuses it to a client that cannot block (in EXEC),
		// unlike SUBSCRIBE.
		x.W.Error("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client")
		return
	}
	subscribe(x, subShard, "ssubscribe")
}

// subscribe adds the named subscriptions of a kind; like unsubscribe, it
// replies one confirmation each with the client's subscription count.
func subscribe(x *Ctx, kind subKind, name string) {
	x.c.confirming = true
	p := &x.c.ps
	for _, n := range x.Args[1:] {
		p.add(kind, n)
		confirm(x, name, n, subscriptionCount(p, kind))
	}
	p.updateCounts()
}

func unsubscribeCommand(x *Ctx) { unsubscribe(x, subChannel, "unsubscribe") }

func punsubscribeCommand(x *Ctx) { unsubscribe(x, subPattern, "punsubscribe") }

func sunsubscribeCommand(x *Ctx) { unsubscribe(x, subShard, "sunsubscribe") }

// unsubscribe removes the named subscriptions, or all of the kind, leaving
// the registry before each confirmation is written.
func unsubscribe(x *Ctx, kind subKind, name string) {
	c, p := x.c, &x.c.ps
	c.confirming = true
	names := x.Args[1:]
	if len(names) == 0 {
		switch kind {
		case subChannel:
			names = mapKeys(p.channels)
		case subShard:
			names = p.shardChannels()
		case subPattern:
			for _, pat := range p.patternOrder {
				names = append(names, []byte(pat))
			}
		}
		if len(names) == 0 {
			x.W.Push(3)
			x.W.BulkString(name)
			x.W.Null()
			x.W.Int(int64(subscriptionCount(p, kind)))
		}
	}
	for _, n := range names {
		x.s.pubsub.remove(c, kind, string(n))
		confirm(x, name, n, subscriptionCount(p, kind))
	}
	p.updateCounts()
}

func mapKeys(m map[string]bool) [][]byte {
	keys := make([][]byte, 0, len(m))
	for k := range m {
		keys = append(keys, []byte(k))
	}
	return keys
}

func confirm(x *Ctx, kind string, name []byte, count int) {
	x.W.Push(3)
	x.W.BulkString(kind)
	x.W.Bulk(name)
	x.W.Int(int64(count))
}

// publishCommand and spublishCommand deliver to this node's subscribers,
// then, as Redis does, to the other nodes': in a cluster over the bus
// (PUBLISH to every node, SPUBLISH to the nodes of this node's shard),
// otherwise through the replication stream, to replicas only.
func publishCommand(x *Ctx) {
	x.W.Int(int64(x.s.publish(x.c, x.Args[1], x.Args[2], false)))
	if x.s.cluster != nil {
		x.s.cluster.Publish(x.Args[1], x.Args[2])
	} else {
		x.PropagateToReplicas()
	}
}

func spublishCommand(x *Ctx) {
	x.W.Int(int64(x.s.publish(x.c, x.Args[1], x.Args[2], true)))
	if x.s.cluster != nil {
		x.s.cluster.PublishShard(x.Args[1], x.Args[2])
	} else {
		x.PropagateToReplicas()
	}
}

// pubsubChannels lists the (shard) channels with subscribers, matching the
// optional pattern.
func pubsubChannels(x *Ctx, shard bool) {
	if len(x.Args) > 3 {
		x.W.Error("ERR unknown subcommand or wrong number of arguments for '" + cstr.String(x.Args[1]) + "'. Try PUBSUB HELP.")
		return
	}
	r := &x.s.pubsub
	r.mu.RLock()
	m := r.channels
	if shard {
		m = r.shard
	}
	var names []string
	for ch := range m {
		if len(x.Args) == 2 || glob.Match(x.Args[2], []byte(ch), false) {
			names = append(names, ch)
		}
	}
	r.mu.RUnlock()
	sort.Strings(names)
	x.W.Array(len(names))
	for _, ch := range names {
		x.W.BulkString(ch)
	}
}

func pubsubNumSub(x *Ctx, shard bool) {
	r := &x.s.pubsub
	x.W.Array(2 * (len(x.Args) - 2))
	r.mu.RLock()
	m := r.channels
	if shard {
		m = r.shard
	}
	for _, ch := range x.Args[2:] {
		x.W.Bulk(ch)
		x.W.Int(int64(len(m[string(ch)])))
	}
	r.mu.RUnlock()
}

func pubsubNumPat(x *Ctx) {
	r := &x.s.pubsub
	r.mu.RLock()
	n := len(r.patterns)
	r.mu.RUnlock()
	x.W.Int(int64(n))
}

func pubsubHelp(x *Ctx) {
	writeHelp(x, "PUBSUB", []string{
		"CHANNELS [<pattern>]",
		"    Return the currently active channels matching a <pattern> (default: '*').",
		"NUMPAT",
		"    Return number of subscriptions to patterns.",
		"NUMSUB [<channel> ...]",
		"    Return the number of subscribers for the specified channels, excluding",
		"    pattern subscriptions(default: no channels).",
		"SHARDCHANNELS [<pattern>]",
		"    Return the currently active shard level channels matching a <pattern> (default: '*').",
		"SHARDNUMSUB [<shardchannel> ...]",
		"    Return the number of subscribers for the specified shard level channel(s)",
	})
}

// pingSubscribed is PING's reply in RESP2 Pub/Sub mode: a "pong" message.
func pingSubscribed(x *Ctx) {
	x.W.Array(2)
	x.W.BulkString("pong")
	if len(x.Args) == 2 {
		x.W.Bulk(x.Args[1])
	} else {
		x.W.BulkString("")
	}
}

// pubsubType reports whether c is of CLIENT LIST's type pubsub (it has a
// subscription); readable from any goroutine.
func (c *Client) pubsubType() bool {
	return c.ps.nsub.Load()+c.ps.npsub.Load()+c.ps.nssub.Load() > 0
}

// isType reports whether c is of the client type t (CLIENT LIST / KILL TYPE).
func (c *Client) isType(t []byte) bool {
	switch {
	case cstr.ArgIs(t, "master"):
		return c.peer.IsMaster()
	case cstr.ArgIs(t, "replica"), cstr.ArgIs(t, "slave"):
		return c.peer.IsReplica()
	case cstr.ArgIs(t, "normal"):
		return !c.pubsubType() && !c.peer.IsMaster() && !c.peer.IsReplica()
	case cstr.ArgIs(t, "pubsub"):
		return c.pubsubType()
	}
	return false
}

func (s *Server) writePubSubInfo(b *strings.Builder) {
	r := &s.pubsub
	r.mu.RLock()
	defer r.mu.RUnlock()
	field(b, "pubsub_channels", len(r.channels))
	field(b, "pubsub_patterns", len(r.patterns))
	field(b, "pubsubshard_channels", len(r.shard))
}

// subscriptionCount is the count a (un)subscribe confirmation carries: the
// client's shard channels for the shard kind, else its channels and
// patterns.
func subscriptionCount(p *pubsubClient, kind subKind) int {
	if kind == subShard {
		return p.shardCount()
	}
	return p.count()
}
