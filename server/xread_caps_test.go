package server_test

import (
	"strings"
	"testing"
)

// XREAD and XREADGROUP MAXCOUNT and MAXSIZE (Redis 8.10), as
// https://redis.io/docs/latest/commands/xread/ and
// https://redis.io/docs/latest/commands/xreadgroup/ state them: MAXCOUNT
// caps the entries of the whole reply, across the streams, served in the
// order the keys are given (a stream left nothing is left out of the
// reply), COUNT still capping each stream; MAXSIZE is a soft cap of the
// reply's size: entries are taken until it is reached, the first one
// always. No 8.10 server runs here. The copies of the pages at hand end
// before the error texts: those below are the ones the client libraries'
// 8.10 tests expect (predis: "MAXCOUNT must be a positive integer",
// "MAXSIZE must be a positive integer", "MAXCOUNT must be greater than or
// equal to COUNT"). What MAXSIZE counts of an entry is Keyhive's choice:
// its field names' and values' bytes.

// xentries is the reply of one stream's entries, each with the field f
// and the value v.
func xentries(ids ...string) string {
	var b strings.Builder
	b.WriteString("*" + itoa(len(ids)) + "\r\n")
	for _, id := range ids {
		b.WriteString("*2\r\n" + bulk(id) + "*2\r\n$1\r\nf\r\n$1\r\nv\r\n")
	}
	return b.String()
}

// xstreams is a read's reply of streams (key, entries reply pairs).
func xstreams(proto int, kv ...string) string {
	n := len(kv) / 2
	var b strings.Builder
	if proto == 3 {
		b.WriteString("%" + itoa(n) + "\r\n")
	} else {
		b.WriteString("*" + itoa(n) + "\r\n")
	}
	for i := 0; i < len(kv); i += 2 {
		if proto < 3 {
			b.WriteString("*2\r\n")
		}
		b.WriteString(bulk(kv[i]) + kv[i+1])
	}
	return b.String()
}

func TestXReadMaxCountMaxSize(t *testing.T) {
	skipOnRedisTarget(t)
	for _, proto := range []int{2, 3} {
		c, _ := setTTLConn(t, proto)
		null := "*-1\r\n"
		if proto == 3 {
			null = "_\r\n"
		}
		for _, id := range []string{"1-0", "2-0", "3-0"} {
			wantRaw(t, c, bulk(id), "XADD", "s1", id, "f", "v")
			wantRaw(t, c, bulk(id), "XADD", "s2", id, "f", "v")
		}
		all := xentries("1-0", "2-0", "3-0")
		// go-redis's spec: MAXCOUNT 4 over two streams of 3: 3 and 1.
		wantRaw(t, c, xstreams(proto, "s1", all, "s2", xentries("1-0")), "XREAD", "MAXCOUNT", "4", "STREAMS", "s1", "s2", "0", "0")
		// COUNT per stream within MAXCOUNT (predis's 8.10 test).
		wantRaw(t, c, xstreams(proto, "s1", xentries("1-0", "2-0"), "s2", xentries("1-0")), "XREAD", "COUNT", "2", "MAXCOUNT", "3", "STREAMS", "s1", "s2", "0", "0")
		// A stream left nothing is left out.
		wantRaw(t, c, xstreams(proto, "s1", xentries("1-0", "2-0")), "XREAD", "MAXCOUNT", "2", "STREAMS", "s1", "s2", "0", "0")
		wantRaw(t, c, xstreams(proto, "s2", xentries("3-0"), "s1", xentries("1-0")), "XREAD", "MAXCOUNT", "2", "STREAMS", "s2", "s1", "2-0", "0")
		wantRaw(t, c, xstreams(proto, "s1", all, "s2", all), "XREAD", "MAXCOUNT", "100", "STREAMS", "s1", "s2", "0", "0")
		// MAXSIZE: the first entry always, even past the cap.
		wantRaw(t, c, xstreams(proto, "s1", xentries("1-0")), "XREAD", "MAXSIZE", "1", "STREAMS", "s1", "s2", "0", "0")
		wantRaw(t, c, xstreams(proto, "s1", all, "s2", all), "XREAD", "MAXSIZE", "1048576", "STREAMS", "s1", "s2", "0", "0")
		// Each entry here counts 2 bytes: taken while fewer than 5 are.
		wantRaw(t, c, xstreams(proto, "s1", all), "XREAD", "MAXSIZE", "5", "STREAMS", "s1", "s2", "0", "0")
		wantRaw(t, c, xstreams(proto, "s1", all, "s2", xentries("1-0")), "XREAD", "MAXSIZE", "7", "STREAMS", "s1", "s2", "0", "0")
		wantRaw(t, c, xstreams(proto, "s1", xentries("1-0", "2-0")), "XREAD", "MAXCOUNT", "2", "MAXSIZE", "1048576", "STREAMS", "s1", "s2", "0", "0")
		// Nothing to read: the null reply, as without the options.
		wantRaw(t, c, null, "XREAD", "MAXCOUNT", "2", "MAXSIZE", "1024", "STREAMS", "s1", "nostream", "3-0", "0")
		// The errors.
		for _, opt := range []string{"MAXCOUNT", "MAXSIZE"} {
			for _, v := range []string{"0", "-1", "x"} {
				wantRaw(t, c, "-ERR "+opt+" must be a positive integer\r\n", "XREAD", opt, v, "STREAMS", "s1", "0")
				wantRaw(t, c, "-ERR "+opt+" must be a positive integer\r\n", "XREADGROUP", "GROUP", "g", "c", opt, v, "STREAMS", "s1", ">")
			}
		}
		wantRaw(t, c, "-ERR MAXCOUNT must be greater than or equal to COUNT\r\n", "XREAD", "COUNT", "2", "MAXCOUNT", "1", "STREAMS", "s1", "0")
		wantRaw(t, c, "-ERR MAXCOUNT must be a positive integer\r\n", "XREAD", "MAXCOUNT", "STREAMS", "s1", "0")

		// XREADGROUP: new entries, delivered only as far as the caps go.
		wantRaw(t, c, "+OK\r\n", "XGROUP", "CREATE", "s1", "g", "0")
		wantRaw(t, c, "+OK\r\n", "XGROUP", "CREATE", "s2", "g", "0")
		wantRaw(t, c, xstreams(proto, "s1", all, "s2", xentries("1-0")), "XREADGROUP", "GROUP", "g", "c", "MAXCOUNT", "4", "STREAMS", "s1", "s2", ">", ">")
		wantRaw(t, c, xstreams(proto, "s2", xentries("2-0")), "XREADGROUP", "GROUP", "g", "c", "MAXSIZE", "1", "STREAMS", "s1", "s2", ">", ">")
		wantRaw(t, c, ":3\r\n", "XACK", "s1", "g", "1-0", "2-0", "3-0")
		// The consumer's history: MAXCOUNT across its pending lists.
		wantRaw(t, c, xstreams(proto, "s1", xentries(), "s2", xentries("1-0")), "XREADGROUP", "GROUP", "g", "c", "MAXCOUNT", "1", "STREAMS", "s1", "s2", "0", "0")
		wantRaw(t, c, xstreams(proto, "s2", xentries("1-0", "2-0")), "XREADGROUP", "GROUP", "g", "c", "MAXCOUNT", "2", "STREAMS", "s2", "s1", "0", "0")
		wantRaw(t, c, xstreams(proto, "s2", xentries("1-0", "2-0"), "s1", xentries()), "XREADGROUP", "GROUP", "g", "c", "MAXCOUNT", "3", "STREAMS", "s2", "s1", "0", "0")
		wantRaw(t, c, xstreams(proto, "s2", xentries("1-0", "2-0")), "XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "MAXCOUNT", "2", "STREAMS", "s2", "s1", "0", "0")
	}
}

// TestXReadMaxCountBlocked: a blocked read served by a transaction's two
// XADDs gets MAXCOUNT's share of them.
func TestXReadMaxCountBlocked(t *testing.T) {
	skipOnRedisTarget(t)
	c, addr := setTTLConn(t, 2)
	writer := dial(t, addr)
	if err := c.Send("XREAD", "MAXCOUNT", "1", "BLOCK", "0", "STREAMS", "b", "$"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the read blocked", func() bool {
		return strings.Contains(do(t, writer, "INFO", "clients").Str, "blocked_clients:1")
	})
	do(t, writer, "MULTI")
	do(t, writer, "XADD", "b", "1-0", "f", "v")
	do(t, writer, "XADD", "b", "2-0", "f", "v")
	do(t, writer, "EXEC")
	r, err := c.Read()
	if err != nil {
		t.Fatal(err)
	}
	if want := xstreams(2, "b", xentries("1-0")); string(r.Raw) != want {
		t.Fatalf("served: %q, want %q", r.Raw, want)
	}
}
