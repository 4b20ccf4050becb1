package server_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// Pub/Sub: subscribers are extra connections (NewConn); every confirmation
// and message is read and compared on both servers, and NoReply checks that
// nothing else arrived.

const noMessage = 50 * time.Millisecond

// readN reads and compares the next n replies (confirmations of a
// multi-channel SUBSCRIBE, messages).
func readN(p *difftest.Pair, n int) {
	for range n {
		p.Read()
	}
}

func TestPubSubChannels(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			pub := difftest.Start(t)
			s1, s2 := pub.NewConn(), pub.NewConn()
			s1.Proto(proto)
			s2.Proto(proto)
			pub.Do("PUBLISH", "news", "nobody")
			s1.Do("SUBSCRIBE", "news", "sport", "news")
			readN(s1, 2)
			s2.Do("SUBSCRIBE", "news")
			pub.Do("PUBLISH", "news", "hello")
			s1.Read()
			s2.Read()
			pub.Do("PUBLISH", "sport", "")
			s1.Read()
			s2.NoReply(noMessage)
			pub.Do("PUBLISH", "weather", "rain")
			pub.Do("PUBLISH", "news", strings.Repeat("x", 100000))
			s1.Read()
			s2.Read()
			pub.Do("PUBLISH", "news", "bin\x00\r\nary")
			s1.Read()
			s2.Read()
			pub.DoUnordered("PUBSUB", "CHANNELS")
			pub.DoUnordered("PUBSUB", "channels", "s*")
			pub.Do("PUBSUB", "CHANNELS", "nomatch*")
			pub.Do("PUBSUB", "NUMSUB", "news", "sport", "weather")
			pub.Do("PUBSUB", "NUMSUB")
			pub.Do("PUBSUB", "NUMPAT")

			s1.Do("UNSUBSCRIBE", "news", "nosuch")
			s1.Read()
			pub.Do("PUBLISH", "news", "only s2")
			s2.Read()
			s1.NoReply(noMessage)
			s1.Do("UNSUBSCRIBE")
			s1.Do("UNSUBSCRIBE")
			s2.Do("UNSUBSCRIBE", "news")
			pub.Do("PUBLISH", "news", "nobody")
			pub.Do("PUBSUB", "CHANNELS")
			s1.NoReply(noMessage)
			s2.NoReply(noMessage)
		})
	}
}

func TestPubSubPatterns(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			// 7.4.1 unsubscribes patterns in its dict's order, which changes from run to run.
			pub := difftest.Start70(t)
			s1, s2 := pub.NewConn(), pub.NewConn()
			s1.Proto(proto)
			s2.Proto(proto)
			s1.Do("PSUBSCRIBE", "news.*", "h?llo", "[ab]*", "news.*")
			readN(s1, 3)
			s1.Do("SUBSCRIBE", "news.it")
			s2.Do("PSUBSCRIBE", "*")
			pub.Do("PUBLISH", "news.it", "m1") // s1: message, then pmessage
			readN(s1, 2)
			s2.Read()
			pub.Do("PUBLISH", "hallo", "m2")
			pub.Do("PUBLISH", "bx", "m3")
			pub.Do("PUBLISH", "c", "m4")
			readN(s1, 2)
			readN(s2, 3)
			s1.NoReply(noMessage)
			pub.Do("PUBSUB", "NUMPAT")
			pub.Do("PUBSUB", "NUMSUB", "news.*", "news.it")
			pub.DoUnordered("PUBSUB", "CHANNELS")
			// Patterns are unsubscribed in subscription order (a list in 7.0).
			s1.Do("PUNSUBSCRIBE", "h?llo", "nosuch")
			s1.Read()
			s1.Do("PUNSUBSCRIBE")
			s1.Read()
			s1.Do("PUNSUBSCRIBE")
			pub.Do("PUBLISH", "news.it", "m5")
			s1.Read()
			s2.Read()
			s1.Do("UNSUBSCRIBE")
			s2.Do("PUNSUBSCRIBE", "*")
			pub.Do("PUBSUB", "NUMPAT")
			pub.Do("PUBLISH", "x", "none")
		})
	}
}

func TestPubSubShard(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			pub := difftest.Start(t)
			s1 := pub.NewConn()
			s1.Proto(proto)
			s1.Do("SSUBSCRIBE", "orders", "orders")
			s1.Read()
			s1.Do("SUBSCRIBE", "orders") // counted apart from shard channels
			s1.Do("PSUBSCRIBE", "ord*")
			pub.Do("SPUBLISH", "orders", "s1") // shard subscribers only
			s1.Read()
			pub.Do("PUBLISH", "orders", "p1")
			readN(s1, 2)
			pub.Do("SPUBLISH", "nobody", "x")
			pub.Do("PUBSUB", "SHARDCHANNELS")
			pub.Do("PUBSUB", "SHARDCHANNELS", "o*")
			pub.Do("PUBSUB", "SHARDCHANNELS", "x*")
			pub.Do("PUBSUB", "SHARDNUMSUB", "orders", "nobody")
			pub.Do("PUBSUB", "SHARDNUMSUB")
			pub.Do("PUBSUB", "CHANNELS")
			s1.Do("SUNSUBSCRIBE", "orders", "x")
			s1.Read()
			s1.Do("SUNSUBSCRIBE")
			s1.Do("UNSUBSCRIBE")
			s1.Do("PUNSUBSCRIBE")
			// Still in Pub/Sub mode while any subscription remains.
			s1.Do("SSUBSCRIBE", "a")
			s1.Do("UNSUBSCRIBE")
			s1.Do("GET", "k")
			s1.Do("SUNSUBSCRIBE", "a")
			s1.Do("GET", "k")
		})
	}
}

// TestPubSubUnsubscribeAll: Redis 7.0 unsubscribes all channels in hash
// order, so the confirmations are compared as a set of channels with the
// counts going down in order.
func TestPubSubUnsubscribeAll(t *testing.T) {
	for _, proto := range []int{2, 3} {
		for _, cmd := range []string{"SUBSCRIBE", "SSUBSCRIBE"} {
			t.Run(fmt.Sprintf("%s/RESP%d", cmd, proto), func(t *testing.T) {
				p := difftest.Start(t)
				p.Proto(proto)
				chans := []any{"a", "b", "c", "d", "e", "f"}
				p.Do(append([]any{cmd}, chans...)...)
				readN(p, len(chans)-1)
				unsub := "UN" + cmd
				if cmd == "SSUBSCRIBE" {
					unsub = "SUNSUBSCRIBE"
				}
				p.Send(unsub)
				var names [2][]string
				var kinds [2]byte
				for i := range chans {
					for side, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
						r := c.Read()
						if len(r.Elems) != 3 || r.Elems[2].Int != int64(len(chans)-1-i) || !strings.EqualFold(r.Elems[0].Str, unsub) {
							t.Errorf("%s: confirmation %d: %s", c.Name(), i, r)
						}
						names[side] = append(names[side], r.Elems[1].Str)
						kinds[side] = r.Kind
					}
				}
				if kinds[0] != kinds[1] {
					t.Errorf("reply types: redis %v, keyhive %v", kinds[0], kinds[1])
				}
				slices.Sort(names[0])
				slices.Sort(names[1])
				if !slices.Equal(names[0], names[1]) {
					t.Errorf("unsubscribed channels: redis %v, keyhive %v", names[0], names[1])
				}
				p.Do("PING")
			})
		}
	}
}

// TestPubSubSubscribedMode: a RESP2 subscriber may only (un)subscribe, PING,
// QUIT and RESET; RESP3 allows everything. A message to the publisher
// itself follows the command's reply, as in Redis 7.2+.
func TestPubSubSubscribedMode(t *testing.T) {
	p := difftest.Start74(t)
	p.Do("SET", "k", "v")
	p.Do("SUBSCRIBE", "c")
	p.Do("PING")
	p.Do("PING", "hi")
	p.Do("PING", "a", "b")
	p.Do("GET", "k")
	p.Do("GET")
	p.Do("NOSUCH", "x")
	p.Do("CLIENT", "LIST")
	p.Do("CLIENT", "NOSUCH")
	p.Do("MULTI")
	p.Do("HELLO", "3")
	p.Do("PUBLISH", "c", "m")
	p.Do("PUBSUB", "NUMSUB", "c")
	p.Do("psubscribe", "x*")
	p.Do("ssubscribe", "s")
	p.Do("PUNSUBSCRIBE")
	p.Do("SUNSUBSCRIBE")
	p.Do("RESET")
	p.Do("GET", "k")
	p.Do("PING")
	p.Do("PUBSUB", "NUMSUB", "c")

	p.Do("SUBSCRIBE", "c")
	p.Do("QUIT")
	p.Reconnect()
	p.Do("PUBSUB", "NUMSUB", "c")

	p.Proto(3)
	p.Do("SUBSCRIBE", "c")
	p.Do("GET", "k")
	p.Do("PING")
	p.Do("PING", "x")
	p.Do("PUBLISH", "c", "to myself") // the count, then the message
	p.Read()
	p.Do("MULTI")
	p.Do("PUBLISH", "c", "queued")
	p.Do("EXEC")
	p.Read()
	p.Proto(2)
	p.Do("GET", "k")
	p.Do("RESET")
	p.Do("GET", "k")
	// SUBSCRIBE inside a transaction.
	p.Do("MULTI")
	p.Do("SUBSCRIBE", "t")
	p.Do("EXEC")
	p.Do("GET", "k")
	p.Do("RESET")
	// Publishing to itself in the transaction that subscribes: the
	// messages follow EXEC's reply.
	for _, proto := range []int{3, 2} {
		p.Proto(proto)
		p.Do("MULTI")
		p.Do("SUBSCRIBE", "t")
		p.Do("PSUBSCRIBE", "t*")
		p.Do("SSUBSCRIBE", "t")
		p.Do("PUBLISH", "t", "x")
		p.Do("SPUBLISH", "t", "y")
		p.Do("EXEC")
		p.Read()
		p.Read()
		p.Do("RESET")
	}
}

// TestPubSubDisconnect: RESET and closing the connection drop every
// subscription.
func TestPubSubDisconnect(t *testing.T) {
	p := difftest.Start(t)
	s := p.NewConn()
	s.Do("SUBSCRIBE", "a", "b")
	s.Read()
	s.Do("PSUBSCRIBE", "p*")
	s.Do("SSUBSCRIBE", "sh")
	p.Do("PUBSUB", "NUMSUB", "a", "b")
	s.Do("RESET")
	p.Do("PUBSUB", "NUMSUB", "a", "b")
	p.Do("PUBSUB", "NUMPAT")
	p.Do("PUBSUB", "SHARDNUMSUB", "sh")
	s.Do("SUBSCRIBE", "a")
	s.Do("PSUBSCRIBE", "p*")
	s.Redis().Conn().Close()
	s.Keyhive().Conn().Close()
	waitUntil(t, "PUBSUB NUMPAT 0 on both servers", func() bool {
		r := p.Redis().Do("PUBSUB", "NUMPAT")
		k := p.Keyhive().Do("PUBSUB", "NUMPAT")
		return r.Int == 0 && k.Int == 0
	})
	p.Do("PUBSUB", "NUMSUB", "a")
	p.Do("PUBLISH", "a", "x")
	p.Do("PUBLISH", "pq", "x")
}

// TestPubSubPipelined: commands and messages pipelined in one write, and a
// subscriber's replies interleaved with messages in order.
func TestPubSubPipelined(t *testing.T) {
	p := difftest.Start74(t)
	s := p.NewConn()
	s.Proto(3)
	s.SendRaw([]byte("SET k v\r\nSUBSCRIBE a\r\nGET k\r\nPUBLISH a self\r\nUNSUBSCRIBE a\r\nPUBLISH a gone\r\nGET k\r\n"))
	readN(s, 8)
	s.NoReply(noMessage)
	p.SendRaw([]byte("PUBLISH a 1\r\nPUBLISH a 2\r\nPUBSUB NUMSUB a\r\n"))
	readN(p, 3)
}

// TestPubSubInfo compares the INFO fields and CLIENT LIST columns that show
// subscriptions.
func TestPubSubInfo(t *testing.T) {
	p := difftest.Start(t)
	s := p.NewConn()
	s.Do("SUBSCRIBE", "a", "b")
	s.Read()
	s.Do("PSUBSCRIBE", "x*")
	s.Do("SSUBSCRIBE", "s1")
	r, k := p.DoDifferent("INFO holds other fields", "INFO", "stats")
	for _, f := range []string{"pubsub_channels", "pubsub_patterns", "pubsubshard_channels"} {
		if rv, kv := infoField(r.Str, f), infoField(k.Str, f); rv == "" || rv != kv {
			t.Errorf("%s: redis %q, keyhive %q", f, rv, kv)
		}
	}
	clientFields := func(list string) []string {
		var out []string
		for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
			var keep []string
			for _, kv := range strings.Fields(line) {
				for _, f := range []string{"flags=", "sub=", "psub=", "ssub="} {
					if strings.HasPrefix(kv, f) {
						keep = append(keep, kv)
					}
				}
			}
			out = append(out, strings.Join(keep, " "))
		}
		return out
	}
	r, k = p.DoDifferent("addresses and ids", "CLIENT", "LIST", "TYPE", "pubsub")
	if rf, kf := clientFields(r.Str), clientFields(k.Str); !slices.Equal(rf, kf) {
		t.Errorf("CLIENT LIST TYPE pubsub: redis %q, keyhive %q", rf, kf)
	}
	r, k = p.DoDifferent("addresses and ids", "CLIENT", "LIST", "TYPE", "normal")
	if rf, kf := clientFields(r.Str), clientFields(k.Str); !slices.Equal(rf, kf) {
		t.Errorf("CLIENT LIST TYPE normal: redis %q, keyhive %q", rf, kf)
	}
	p.Do("CLIENT", "KILL", "TYPE", "pubsub")
	p.Do("CLIENT", "KILL", "TYPE", "pubsub")
	p.Do("CLIENT", "LIST", "TYPE", "pubsub")
}

func TestPubSubCommandInfo(t *testing.T) {
	p := difftest.Start(t)
	for _, name := range []string{"subscribe", "unsubscribe", "psubscribe", "punsubscribe", "publish",
		"ssubscribe", "sunsubscribe", "spublish", "pubsub|channels", "pubsub|numsub", "pubsub|numpat",
		"pubsub|shardchannels", "pubsub|shardnumsub", "pubsub|help"} {
		p.Do("COMMAND", "INFO", name)
	}
	p.Do("COMMAND", "GETKEYS", "SSUBSCRIBE", "a", "b")
	p.DoCompare(commandInfoCompare, "COMMAND", "INFO", "pubsub")
	p.Do("COMMAND", "GETKEYS", "SPUBLISH", "ch", "msg")
	p.Do("COMMAND", "GETKEYS", "PUBLISH", "ch", "msg")
	p.Do("PUBSUB", "help", "x")
	p.Do("PUBSUB")
	p.Do("PUBSUB", "nosuch")
	p.Do("PUBSUB", "CHANNELS", "a", "b")
	p.Do("PUBSUB", "SHARDCHANNELS", "a", "b")
	p.Do("PUBSUB", "NUMPAT", "x")
	p.Do("SUBSCRIBE")
	p.Do("PSUBSCRIBE")
	p.Do("SSUBSCRIBE")
	p.Do("PUBLISH", "a")
	p.Do("SPUBLISH", "a", "b", "c")
	p.Do("UNSUBSCRIBE")
	p.Do("PUNSUBSCRIBE", "x")
	p.Do("SUNSUBSCRIBE", "x")
	p.Do("GET", "k") // unsubscribing from nothing does not enter Pub/Sub mode
}

// TestOutputLimitNormal: a reply beyond the normal class's hard limit closes
// the connection without it.
func TestOutputLimitNormal(t *testing.T) {
	p := difftest.StartIsolated(t, "--client-output-buffer-limit", "normal 1mb 0 0")
	p.Do("SET", "big", strings.Repeat("x", 2<<20))
	p.Do("SET", "small", strings.Repeat("x", 1000))
	p.Do("GET", "small")
	p.RawExpectClose([]byte("GET big\r\n"))
	p.Do("STRLEN", "big")
}

// TestPubSubTransaction: subscriptions made and dropped inside EXEC take
// effect in order.
func TestPubSubTransaction(t *testing.T) {
	p := difftest.Start(t)
	s := p.NewConn()
	s.Do("MULTI")
	s.Do("SUBSCRIBE", "a", "b")
	s.Do("UNSUBSCRIBE", "a")
	s.Do("PSUBSCRIBE", "x*")
	s.Do("PUNSUBSCRIBE", "x*")
	s.Do("SUBSCRIBE", "a")
	s.Do("EXEC")
	s.Read() // SUBSCRIBE a b confirms twice: one reply spills out of EXEC's array
	p.Do("PUBSUB", "NUMSUB", "a", "b")
	p.Do("PUBSUB", "NUMPAT")
	p.Do("PUBLISH", "a", "1")
	p.Do("PUBLISH", "xy", "2")
	s.Read()
	s.NoReply(noMessage)
}

// TestPubSubMixedProtocols: one message reaches RESP2 and RESP3 subscribers,
// by channel and by pattern, each in its own protocol.
func TestPubSubMixedProtocols(t *testing.T) {
	pub := difftest.Start(t)
	s2, s3 := pub.NewConn(), pub.NewConn()
	s3.Proto(3)
	for _, s := range []*difftest.Pair{s2, s3} {
		s.Do("SUBSCRIBE", "ch")
		s.Do("PSUBSCRIBE", "c?")
		s.Do("SSUBSCRIBE", "ch")
	}
	pub.Do("PUBLISH", "ch", "hi")
	pub.Do("SPUBLISH", "ch", "shard")
	for _, s := range []*difftest.Pair{s2, s3} {
		readN(s, 3)
	}
	pub.Do("PUBSUB", "NUMSUB", "ch")
	pub.Do("PUBSUB", "SHARDNUMSUB", "ch")
	s3.Proto(2) // now a RESP2 subscriber: the next messages are arrays
	pub.Do("PUBLISH", "cx", "to both")
	readN(s2, 1)
	readN(s3, 1)
	s3.Do("GET", "k")
}

// TestPubSubReplyOff: CLIENT REPLY OFF silences replies, not messages.
func TestPubSubReplyOff(t *testing.T) {
	pub := difftest.Start(t)
	s := pub.NewConn()
	s.Proto(3)
	s.Do("SUBSCRIBE", "a")
	s.Send("CLIENT", "REPLY", "OFF")
	s.Send("PING")
	pub.Do("PUBLISH", "a", "x")
	s.Read()
	s.Do("CLIENT", "REPLY", "ON")
}

// TestPubSubConfirmationsUnderClientReply: CLIENT REPLY OFF and SKIP drop
// replies but not the (un)subscribe confirmations, which Redis sends as it
// sends messages, or a client waiting for them would hang.
func TestPubSubConfirmationsUnderClientReply(t *testing.T) {
	for _, proto := range []int{2, 3} {
		p := difftest.StartIsolated(t)
		pub := p.NewConn()
		p.Proto(proto)
		p.Send("CLIENT", "REPLY", "OFF")
		p.Send("SUBSCRIBE", "ch")
		p.Read()
		pub.Do("PUBLISH", "ch", "hi")
		p.Read()
		p.Send("UNSUBSCRIBE", "ch")
		p.Send("PING")
		p.Read()
		p.NoReply(50 * time.Millisecond)
		p.Send("CLIENT", "REPLY", "ON")
		p.Read()
		p.Send("CLIENT", "REPLY", "SKIP")
		p.Send("PSUBSCRIBE", "c*")
		p.Read()
		p.Send("PUNSUBSCRIBE")
		p.Read()
		p.Do("PING")
	}
}
