package server_test

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestPubSubOrderUnderLoad: publishers pipeline concurrently to subscribers,
// some of which run commands meanwhile (RESP3); every subscriber must see
// each publisher's messages complete and in order, and its own replies in
// the order it sent the commands.
func TestPubSubOrderUnderLoad(t *testing.T) {
	srv := startKeyhive(t)
	const publishers, perPublisher, batch = 4, 3000, 50
	type sub struct {
		conn    *difftest.Conn
		resp3   bool
		pattern bool
	}
	var subs []sub
	for i := range 5 {
		c := dial(t, srv.Addr())
		s := sub{conn: c, resp3: i >= 3, pattern: i == 2}
		if s.resp3 {
			mustDo(t, c, "HELLO", "3")
		}
		mustDo(t, c, "SUBSCRIBE", "load")
		if s.pattern {
			mustDo(t, c, "PSUBSCRIBE", "lo*")
		}
		subs = append(subs, s)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for p := range publishers {
		wg.Go(func() {
			c, err := difftest.Dial(srv.Addr())
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for seq := 0; seq < perPublisher; seq += batch {
				var b strings.Builder
				for i := seq; i < seq+batch; i++ {
					msg := fmt.Sprintf("%d:%d", p, i)
					fmt.Fprintf(&b, "*3\r\n$7\r\nPUBLISH\r\n$4\r\nload\r\n$%d\r\n%s\r\n", len(msg), msg)
				}
				if err := c.SendRaw([]byte(b.String())); err != nil {
					errs <- err
					return
				}
				for range batch {
					if r, err := c.Read(); err != nil || r.Kind != difftest.KindInt {
						errs <- fmt.Errorf("PUBLISH: %v %v", r, err)
						return
					}
				}
			}
		})
	}
	for i, s := range subs {
		wg.Go(func() {
			next := make([]int, publishers)
			pnext := make([]int, publishers)
			pings, pongs := 0, 0
			want := publishers * perPublisher
			if s.pattern {
				want *= 2
			}
			for got := 0; got < want || pongs < pings; {
				if s.resp3 && got%500 == 0 && pings == pongs {
					// PINGs pipelined between the messages.
					for range 3 {
						pings++
						if err := s.conn.Send("PING", strconv.Itoa(pings)); err != nil {
							errs <- err
							return
						}
					}
				}
				r, err := s.conn.Read()
				if err != nil {
					errs <- fmt.Errorf("subscriber %d after %d messages: %v", i, got, err)
					return
				}
				if r.Kind == difftest.KindBulk {
					pongs++
					if r.Str != strconv.Itoa(pongs) {
						errs <- fmt.Errorf("subscriber %d: PING reply %q, want %d", i, r.Str, pongs)
						return
					}
					continue
				}
				kind := r.Elems[0].Str
				body := r.Elems[len(r.Elems)-1].Str
				pub, seq, _ := strings.Cut(body, ":")
				pi, _ := strconv.Atoi(pub)
				si, _ := strconv.Atoi(seq)
				expect := next
				if kind == "pmessage" {
					expect = pnext
				}
				if si != expect[pi] {
					errs <- fmt.Errorf("subscriber %d: %s from publisher %d: seq %d, want %d", i, kind, pi, si, expect[pi])
					return
				}
				expect[pi]++
				got++
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func mustDo(t *testing.T, c *difftest.Conn, args ...any) difftest.Reply {
	t.Helper()
	r, err := c.Do(args...)
	if err != nil || r.IsError() {
		t.Fatalf("%v: %v %v", args, r, err)
	}
	return r
}

// TestPubSubSlowSubscriber: a subscriber that stops reading is disconnected
// at client-output-buffer-limit's hard limit while 1 GB is published to
// it; the server's memory (its own process, as it runs in production)
// stays bounded and other clients are served.
func TestPubSubSlowSubscriber(t *testing.T) {
	if testing.Short() {
		t.Skip("publishes 1 GB")
	}
	addr, pid := startKeyhiveBinary(t, "--client-output-buffer-limit", "pubsub 32mb 8mb 60")
	slow := dial(t, addr)
	mustDo(t, slow, "SUBSCRIBE", "firehose")
	fast := dial(t, addr)
	mustDo(t, fast, "SUBSCRIBE", "firehose")
	// The fast subscriber must stay fast on a loaded machine too: the
	// publisher waits for it to read all but fastWindow bytes of what was
	// published, so its output buffer never nears the 32 MB limit (this
	// process, not the server, is what falls behind under load).
	const fastWindow = 4 << 20
	var fastRead atomic.Int64
	fastReadMore := make(chan struct{}, 1)
	fastGot := make(chan int64, 1)
	go func() {
		fast.NetConn().SetReadDeadline(time.Time{})
		buf := make([]byte, 1<<20)
		for {
			n, err := fast.NetConn().Read(buf)
			fastRead.Add(int64(n))
			select {
			case fastReadMore <- struct{}{}:
			default:
			}
			if err != nil {
				fastGot <- fastRead.Load()
				return
			}
		}
	}()

	rss := func() int64 { return statusKB(t, pid, "VmRSS") << 10 }
	base := rss()
	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			peak.Store(max(peak.Load(), rss()))
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	pub := dial(t, addr)
	msg := strings.Repeat("m", 64<<10)
	cmd := fmt.Sprintf("*3\r\n$7\r\nPUBLISH\r\n$8\r\nfirehose\r\n$%d\r\n%s\r\n", len(msg), msg)
	const total = 1 << 30
	delivered := int64(len(fmt.Sprintf("*3\r\n$7\r\nmessage\r\n$8\r\nfirehose\r\n$%d\r\n%s\r\n", len(msg), msg)))
	receivers := map[int64]int{}
	reply := make([]byte, 4)
	for sent := 0; sent < total; sent += len(msg) {
		for published := int64(sent/len(msg)) * delivered; published-fastRead.Load() > fastWindow; {
			select {
			case <-fastReadMore:
			case <-time.After(time.Minute):
				t.Fatalf("the fast subscriber read nothing for a minute (%d of %d bytes)", fastRead.Load(), published)
			}
		}
		if _, err := io.WriteString(pub.NetConn(), cmd); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(pub.NetConn(), reply); err != nil {
			t.Fatal(err)
		}
		receivers[int64(reply[1]-'0')]++
	}
	close(stop)
	<-sampled
	// The fast subscriber got everything, the slow one was cut off.
	if receivers[2] == 0 || receivers[1] == 0 {
		t.Errorf("PUBLISH receivers: %v, want 2 and then 1", receivers)
	}
	grown := peak.Load() - base
	t.Logf("RSS grew by %d MB", grown>>20)
	if grown > (32+100)<<20 {
		t.Errorf("RSS grew by %d MB, more than the 32 MB limit + 100 MB", grown>>20)
	}
	mustDo(t, pub, "SET", "k", "v")
	if r := mustDo(t, pub, "PUBSUB", "NUMSUB", "firehose"); r.Elems[1].Int != 1 {
		t.Errorf("NUMSUB after the cut: %v", r)
	}
	slow.Timeout = 10 * time.Second
	for {
		if _, err := slow.Read(); err != nil {
			break // what the socket held, then the close
		}
	}
	fast.Close()
	if n, want := <-fastGot, int64(total/len(msg))*delivered; n != want {
		t.Errorf("fast subscriber got %d bytes, want %d", n, want)
	}
}

// TestPubSubSoftLimit: over the soft limit for longer than its seconds.
func TestPubSubSoftLimit(t *testing.T) {
	srv := startKeyhive(t, "--client-output-buffer-limit", "pubsub 0 1mb 1")
	slow := dial(t, srv.Addr())
	mustDo(t, slow, "SUBSCRIBE", "c")
	pub := dial(t, srv.Addr())
	msg := strings.Repeat("m", 64<<10)
	for range 400 { // 25 MB: far past what the socket buffers hold
		if r := mustDo(t, pub, "PUBLISH", "c", msg); r.Int != 1 {
			t.Fatalf("dropped before the soft limit's time: %v", r)
		}
	}
	time.Sleep(2100 * time.Millisecond)
	// The limit is checked when a message arrives; on a loaded machine give
	// the check a few more messages.
	for range 50 {
		if r := mustDo(t, pub, "PUBLISH", "c", "x"); r.Int == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Error("still subscribed after 3s over the soft limit of 1 s")
}

// TestGoRedisPubSub uses go-redis's PubSub in RESP2 and RESP3.
func TestGoRedisPubSub(t *testing.T) {
	srv := startKeyhive(t)
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: proto})
			defer rdb.Close()
			ps := rdb.Subscribe(ctx, "orders")
			defer ps.Close()
			if _, err := ps.Receive(ctx); err != nil { // the confirmation
				t.Fatal(err)
			}
			if err := ps.PSubscribe(ctx, "ord*"); err != nil {
				t.Fatal(err)
			}
			// PSubscribe only sends: wait for the confirmation before
			// another connection asks PUBSUB NUMPAT.
			if _, err := ps.Receive(ctx); err != nil {
				t.Fatal(err)
			}
			ch := ps.Channel()
			if n, err := rdb.PubSubNumPat(ctx).Result(); err != nil || n != 1 {
				t.Fatalf("PUBSUB NUMPAT: %d %v", n, err)
			}
			if n, err := rdb.Publish(ctx, "orders", "o1").Result(); err != nil || n != 2 {
				t.Fatalf("PUBLISH: %d %v", n, err)
			}
			got := map[string]bool{}
			for range 2 {
				select {
				case m := <-ch:
					got[m.Pattern+"|"+m.Channel+"|"+m.Payload] = true
				case <-time.After(5 * time.Second):
					t.Fatal("no message")
				}
			}
			if !got["|orders|o1"] || !got["ord*|orders|o1"] {
				t.Errorf("messages: %v", got)
			}
			if err := ps.Ping(ctx, "hi"); err != nil {
				t.Fatal(err)
			}
			if err := ps.Unsubscribe(ctx, "orders"); err != nil {
				t.Fatal(err)
			}
			if err := ps.PUnsubscribe(ctx); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for {
				n, err := rdb.Publish(ctx, "orders", "gone").Result()
				if err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("still subscribed")
				}
				time.Sleep(10 * time.Millisecond)
			}
			ss := rdb.SSubscribe(ctx, "shard")
			defer ss.Close()
			if _, err := ss.Receive(ctx); err != nil {
				t.Fatal(err)
			}
			if n, err := rdb.SPublish(ctx, "shard", "s1").Result(); err != nil || n != 1 {
				t.Fatalf("SPUBLISH: %d %v", n, err)
			}
			m, err := ss.ReceiveMessage(ctx)
			if err != nil || m.Channel != "shard" || m.Payload != "s1" {
				t.Fatalf("smessage: %v %v", m, err)
			}
		})
	}
}
