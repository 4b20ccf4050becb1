package server_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// Commands written at once on several open connections run in the order
// they arrived, on Redis as on Keyhive: a SUBSCRIBE before a PUBLISH on
// another connection, BLPOPs queued in the order they were sent. Client
// libraries' own test suites rely on it.

// needEventLoops skips a test of arrival order when Keyhive serves its
// clients on the portable path (other systems, KEYHIVE_PORTABLE_IO=yes):
// there a goroutine per connection waits in Go's network poller, which does
// not tell which socket's data came first, and the scheduler orders the
// commands of different connections.
func needEventLoops(t *testing.T, p *difftest.Pair) {
	t.Helper()
	c := dial(t, p.Keyhive().Addr())
	r, err := c.Do("INFO", "server")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Str, "multiplexing_api:epoll\r\n") {
		t.Skip("the portable I/O path does not run commands in arrival order")
	}
}

// dialAll opens n connections to addr, closed when the test ends.
func dialAll(t *testing.T, addr string, n int) []*difftest.Conn {
	t.Helper()
	conns := make([]*difftest.Conn, n)
	for i := range conns {
		conns[i] = dial(t, addr)
	}
	return conns
}

func sendRaw(t *testing.T, c *difftest.Conn, args ...string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if err := c.SendRaw([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, c *difftest.Conn) difftest.Reply {
	t.Helper()
	r, err := c.Read()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// lostPublishes writes SUBSCRIBE on one connection and at once PUBLISH on
// another, rounds times, and counts the publishes that found nobody
// subscribed: the server ran them out of the order they arrived in.
func lostPublishes(t *testing.T, addr string, payload, rounds int) int {
	t.Helper()
	conns := dialAll(t, addr, 2)
	sub, pub := conns[0], conns[1]
	body := strings.Repeat("x", payload)
	lost := 0
	for i := range rounds {
		ch := fmt.Sprintf("order:%d", i)
		sendRaw(t, sub, "SUBSCRIBE", ch)
		sendRaw(t, pub, "PUBLISH", ch, body)
		delivered := !bytes.Equal(read(t, pub).Raw, []byte(":0\r\n"))
		if !delivered {
			lost++
		}
		read(t, sub) // the confirmation
		if delivered {
			read(t, sub) // the message
		}
		sendRaw(t, sub, "UNSUBSCRIBE", ch)
		read(t, sub)
	}
	return lost
}

func TestArrivalOrderPublish(t *testing.T) {
	p := difftest.Start(t)
	needEventLoops(t, p)
	for _, size := range []int{5, 128 << 10} {
		r := lostPublishes(t, p.Redis().Addr(), size, 300)
		k := lostPublishes(t, p.Keyhive().Addr(), size, 300)
		t.Logf("payload %d bytes: publishes that found no subscriber: redis %d, keyhive %d of 300", size, r, k)
		if k > r {
			t.Errorf("payload %d bytes: keyhive lost %d publishes, redis %d: commands ran out of arrival order", size, k, r)
		}
	}
}

// misorderedPops has five clients send BLPOP at once, in turn, and then a
// sixth push five elements: the first client blocked must get the first
// element, as Redis serves blocked clients in the order they blocked. It
// counts the rounds where some client got another's element.
func misorderedPops(t *testing.T, addr string, rounds int) int {
	t.Helper()
	const n = 5
	conns := dialAll(t, addr, n+1)
	pusher := conns[n]
	bad := 0
	for i := range rounds {
		key := fmt.Sprintf("order:q:%d", i)
		for _, c := range conns[:n] {
			sendRaw(t, c, "BLPOP", key, "1")
		}
		sendRaw(t, pusher, "RPUSH", key, "0", "1", "2", "3", "4")
		read(t, pusher)
		wrong := false
		for j, c := range conns[:n] {
			want := fmt.Sprintf("*2\r\n$%d\r\n%s\r\n$1\r\n%d\r\n", len(key), key, j)
			if got := read(t, c); string(got.Raw) != want {
				wrong = true
			}
		}
		if wrong {
			bad++
			sendRaw(t, pusher, "DEL", key)
			read(t, pusher)
		}
	}
	return bad
}

func TestArrivalOrderBlockedPops(t *testing.T) {
	p := difftest.Start(t)
	needEventLoops(t, p)
	r := misorderedPops(t, p.Redis().Addr(), 100)
	k := misorderedPops(t, p.Keyhive().Addr(), 100)
	t.Logf("rounds where a blocked client got another's element: redis %d, keyhive %d of 100", r, k)
	if k > r {
		t.Errorf("keyhive served blocked clients out of order in %d rounds, redis in %d", k, r)
	}
}
