package server_test

import (
	"bytes"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// lostPublishes writes SUBSCRIBE on one open connection and at once PUBLISH
// on another, rounds times, and counts the publishes that found nobody
// subscribed: the server ran them out of the order they arrived in.
func lostPublishes(t *testing.T, addr string, payload, rounds int) int {
	t.Helper()
	sub, err := difftest.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	pub, err := difftest.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	body := strings.Repeat("x", payload)
	lost := 0
	for i := range rounds {
		ch := fmt.Sprintf("order:%d", i)
		subCmd := fmt.Sprintf("*2\r\n$9\r\nSUBSCRIBE\r\n$%d\r\n%s\r\n", len(ch), ch)
		pubCmd := fmt.Sprintf("*3\r\n$7\r\nPUBLISH\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(ch), ch, len(body), body)
		if err := sub.SendRaw([]byte(subCmd)); err != nil {
			t.Fatal(err)
		}
		if err := pub.SendRaw([]byte(pubCmd)); err != nil {
			t.Fatal(err)
		}
		r, err := pub.Read()
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(r.Raw, []byte(":0\r\n")) {
			lost++
		}
		if _, err := sub.Read(); err != nil { // the confirmation
			t.Fatal(err)
		}
		if !bytes.Equal(r.Raw, []byte(":0\r\n")) {
			if _, err := sub.Read(); err != nil { // the message
				t.Fatal(err)
			}
		}
		if _, err := sub.Do("UNSUBSCRIBE", ch); err != nil {
			t.Fatal(err)
		}
	}
	return lost
}

func TestArrivalOrderProbe(t *testing.T) {
	p := difftest.StartIsolated(t)
	for _, size := range []int{5, 128 << 10} {
		for range 3 {
			r := lostPublishes(t, p.Redis().Addr(), size, 300)
			k := lostPublishes(t, p.Keyhive().Addr(), size, 300)
			t.Logf("payload %d: lost publishes redis %d keyhive %d of 300", size, r, k)
		}
	}
	_ = net.Dial
	_ = time.Now
}
