package difftest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// validReplies covers every RESP2/RESP3 type, nulls, empty and binary
// payloads, nesting and attributes. check inspects the parsed form.
var validReplies = []struct {
	raw   string
	check func(Reply) bool
}{
	{"+OK\r\n", func(r Reply) bool { return r.Kind == KindSimple && r.Str == "OK" }},
	{"+\r\n", func(r Reply) bool { return r.Kind == KindSimple && r.Str == "" }},
	{"-ERR unknown command 'x'\r\n", func(r Reply) bool { return r.IsError() && r.Str == "ERR unknown command 'x'" }},
	{":0\r\n", func(r Reply) bool { return r.Kind == KindInt && r.Int == 0 }},
	{":-9223372036854775808\r\n", func(r Reply) bool { return r.Int == math.MinInt64 }},
	{":9223372036854775807\r\n", func(r Reply) bool { return r.Int == math.MaxInt64 }},
	{"$3\r\nfoo\r\n", func(r Reply) bool { return r.Kind == KindBulk && r.Str == "foo" && !r.Null }},
	{"$0\r\n\r\n", func(r Reply) bool { return r.Kind == KindBulk && r.Str == "" && !r.Null }},
	{"$-1\r\n", func(r Reply) bool { return r.Kind == KindBulk && r.Null }},
	{"$6\r\na\r\nb\x00c\r\n", func(r Reply) bool { return r.Str == "a\r\nb\x00c" }},
	{"*0\r\n", func(r Reply) bool { return r.Kind == KindArray && len(r.Elems) == 0 && !r.Null }},
	{"*-1\r\n", func(r Reply) bool { return r.Kind == KindArray && r.Null }},
	{"*3\r\n:1\r\n$-1\r\n+x\r\n", func(r Reply) bool {
		return len(r.Elems) == 3 && r.Elems[0].Int == 1 && r.Elems[1].Null && r.Elems[2].Str == "x" &&
			string(r.Elems[1].Raw) == "$-1\r\n"
	}},
	{"*2\r\n*2\r\n:1\r\n*0\r\n*1\r\n*1\r\n$1\r\nz\r\n", func(r Reply) bool {
		return r.Elems[0].Elems[1].Kind == KindArray && r.Elems[1].Elems[0].Elems[0].Str == "z" &&
			string(r.Elems[1].Raw) == "*1\r\n*1\r\n$1\r\nz\r\n"
	}},
	{"_\r\n", func(r Reply) bool { return r.Kind == KindNull && r.Null }},
	{",3.14\r\n", func(r Reply) bool { return r.Kind == KindDouble && r.Float == 3.14 && r.Str == "3.14" }},
	{",-1e+300\r\n", func(r Reply) bool { return r.Float == -1e300 }},
	{",inf\r\n", func(r Reply) bool { return math.IsInf(r.Float, 1) }},
	{",-inf\r\n", func(r Reply) bool { return math.IsInf(r.Float, -1) }},
	{",nan\r\n", func(r Reply) bool { return math.IsNaN(r.Float) }},
	{"#t\r\n", func(r Reply) bool { return r.Kind == KindBool && r.Int == 1 }},
	{"#f\r\n", func(r Reply) bool { return r.Kind == KindBool && r.Int == 0 }},
	{"!21\r\nSYNTAX invalid syntax\r\n", func(r Reply) bool { return r.Kind == KindBlobError && r.IsError() && r.Str == "SYNTAX invalid syntax" }},
	{"=15\r\ntxt:Some string\r\n", func(r Reply) bool { return r.Kind == KindVerbatim && r.Format == "txt" && r.Str == "Some string" }},
	{"=4\r\nmkd:\r\n", func(r Reply) bool { return r.Format == "mkd" && r.Str == "" }},
	{"(3492890328409238509324850943850943825024385\r\n", func(r Reply) bool { return r.Kind == KindBigNumber && strings.HasPrefix(r.Str, "349") }},
	{"(-1\r\n", func(r Reply) bool { return r.Str == "-1" }},
	{"%2\r\n+first\r\n:1\r\n+second\r\n%0\r\n", func(r Reply) bool {
		return r.Kind == KindMap && len(r.Elems) == 4 && r.Elems[2].Str == "second" && r.Elems[3].Kind == KindMap
	}},
	{"~3\r\n+a\r\n+b\r\n+c\r\n", func(r Reply) bool { return r.Kind == KindSet && len(r.Elems) == 3 }},
	{">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n", func(r Reply) bool { return r.Kind == KindPush && r.Elems[2].Str == "hi" }},
	{"|1\r\n+key-popularity\r\n%2\r\n$1\r\na\r\n,0.1923\r\n$1\r\nb\r\n,0.0012\r\n*2\r\n:2039123\r\n:9543892\r\n", func(r Reply) bool {
		return r.Kind == KindArray && len(r.Elems) == 2 && len(r.Attrs) == 2 &&
			r.Attrs[0].Str == "key-popularity" && r.Attrs[1].Kind == KindMap && r.Elems[1].Int == 9543892
	}},
	// An attribute inside an aggregate belongs to that element.
	{"*2\r\n|1\r\n+ttl\r\n:3\r\n+a\r\n+b\r\n", func(r Reply) bool {
		return len(r.Elems) == 2 && len(r.Elems[0].Attrs) == 2 && r.Elems[0].Str == "a" &&
			string(r.Elems[0].Raw) == "|1\r\n+ttl\r\n:3\r\n+a\r\n"
	}},
}

func TestReadReplyEveryType(t *testing.T) {
	for _, tc := range validReplies {
		r, err := Parse([]byte(tc.raw))
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.raw, err)
			continue
		}
		if string(r.Raw) != tc.raw {
			t.Errorf("Parse(%q).Raw = %q", tc.raw, r.Raw)
		}
		if !tc.check(r) {
			t.Errorf("Parse(%q) = %#v: fields wrong", tc.raw, r)
		}
	}
}

// TestReadReplySplit feeds the replies back to back through readers that
// return one byte, or half the request, at a time: a reply may arrive in any
// number of pieces and must never swallow the next one.
func TestReadReplySplit(t *testing.T) {
	var all bytes.Buffer
	for _, tc := range validReplies {
		all.WriteString(tc.raw)
	}
	readers := map[string]func(io.Reader) io.Reader{
		"whole":   func(r io.Reader) io.Reader { return r },
		"onebyte": iotest.OneByteReader,
		"half":    iotest.HalfReader,
		"dataerr": iotest.DataErrReader,
	}
	for name, wrap := range readers {
		// A 16-byte buffer (bufio's minimum) forces long lines and payloads
		// across buffer refills.
		br := bufio.NewReaderSize(wrap(bytes.NewReader(all.Bytes())), 16)
		for _, tc := range validReplies {
			r, err := ReadReply(br)
			if err != nil || string(r.Raw) != tc.raw {
				t.Fatalf("%s: ReadReply = %q, %v; want %q", name, r.Raw, err, tc.raw)
			}
		}
		if _, err := ReadReply(br); err != io.EOF {
			t.Errorf("%s: at end of stream: err = %v, want io.EOF", name, err)
		}
	}
}

// TestReadReplyTruncated cuts every reply at every byte: the reader must
// report io.ErrUnexpectedEOF (or a syntax error), never a complete reply.
func TestReadReplyTruncated(t *testing.T) {
	for _, tc := range validReplies {
		for i := 1; i < len(tc.raw); i++ {
			r, err := ReadReply(bufio.NewReader(strings.NewReader(tc.raw[:i])))
			if err == nil {
				t.Errorf("ReadReply(%q) = %q, want an error", tc.raw[:i], r.Raw)
			}
			if err == io.EOF {
				t.Errorf("ReadReply(%q): io.EOF mid-reply, want io.ErrUnexpectedEOF", tc.raw[:i])
			}
		}
	}
}

func TestReadReplyMalformed(t *testing.T) {
	for _, raw := range []string{
		"",          // nothing at all
		"\r\n",      // no type byte
		"+OK\n",     // LF without CR
		"+O\rK\r\n", // stray CR
		"?x\r\n",    // unknown type
		":12a\r\n",  // bad integer
		":\r\n",     // empty integer
		":+1\r\n",   // sign not allowed
		":99999999999999999999\r\n",
		"$-2\r\n",                   // bad length
		"$01\r\nx\r\n",              // leading zero
		"$+1\r\nx\r\n",              // sign
		"$3\r\nabcd\r\n",            // payload longer than declared
		"$3\r\nab\r\n",              // payload shorter than declared
		"$?\r\n;3\r\nabc\r\n;0\r\n", // streamed strings: not used by Redis
		"*-2\r\n",                   // bad count
		"%-1\r\n",                   // only arrays have a RESP2 null
		"!-1\r\n",
		"*1\r\n",    // missing element
		"#x\r\n",    // bad boolean
		"_x\r\n",    // null with payload
		",1.5x\r\n", // bad double
		",\r\n",
		"(12a\r\n", // bad big number
		"(\r\n",
		"=3\r\ntxt\r\n",      // verbatim without format separator
		"|1\r\n+a\r\n+b\r\n", // attribute with nothing after it
		"+OK\r\n+OK\r\n",     // Parse wants exactly one reply
	} {
		if r, err := Parse([]byte(raw)); err == nil {
			t.Errorf("Parse(%q) = %#v, want an error", raw, r)
		}
	}
	deep := strings.Repeat("*1\r\n", maxDepth+2) + ":1\r\n"
	if _, err := Parse([]byte(deep)); err == nil {
		t.Errorf("Parse of %d nested arrays succeeded, want a depth error", maxDepth+2)
	}
}

// TestConnPartialReads checks the timeout path over a real connection: half
// a reply and then silence must fail with a deadline error (reporting the
// bytes so far), and a reply written in slow pieces must still be read.
func TestConnPartialReads(t *testing.T) {
	client, srv := net.Pipe()
	defer srv.Close()
	c := newConn(client)
	defer c.Close()
	c.Timeout = 50 * time.Millisecond

	go srv.Write([]byte("*2\r\n$3\r\nfo"))
	r, err := c.Read()
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read of half a reply: err = %v, want a deadline error", err)
	}
	if string(r.Raw) != "*2\r\n$3\r\nfo" {
		t.Errorf("bytes so far = %q", r.Raw)
	}

	c2srv, c2 := net.Pipe()
	defer c2srv.Close()
	cc := newConn(c2)
	defer cc.Close()
	cc.Timeout = time.Second
	go func() {
		for _, piece := range []string{"*2", "\r", "\n$3\r\nfo", "o\r\n", ":", "7\r", "\n+next\r\n"} {
			c2srv.Write([]byte(piece))
			time.Sleep(5 * time.Millisecond)
		}
	}()
	for _, want := range []string{"*2\r\n$3\r\nfoo\r\n:7\r\n", "+next\r\n"} {
		r, err := cc.Read()
		if err != nil || string(r.Raw) != want {
			t.Fatalf("Read = %q, %v; want %q", r.Raw, err, want)
		}
	}
}

func TestEncodeCommand(t *testing.T) {
	got := EncodeCommand("SET", []byte("k\r\n\x00"), 42, int64(-1), uint8(7), 1.5, true,
		[]string{"a", "b"}, [][]byte{[]byte("c")}, []any{"d", 3}, "")
	want := "*13\r\n$3\r\nSET\r\n$4\r\nk\r\n\x00\r\n$2\r\n42\r\n$2\r\n-1\r\n$1\r\n7\r\n$3\r\n1.5\r\n$1\r\n1\r\n" +
		"$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\n3\r\n$0\r\n\r\n"
	if string(got) != want {
		t.Errorf("EncodeCommand = %q\nwant %q", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("EncodeCommand(struct{}{}) did not panic")
		}
	}()
	EncodeCommand(struct{}{})
}

func TestReplyString(t *testing.T) {
	for raw, want := range map[string]string{
		"+OK\r\n":                       "+OK",
		"-ERR x\r\n":                    "(error) ERR x",
		":5\r\n":                        "(integer) 5",
		"$-1\r\n":                       "(nil)",
		"*-1\r\n":                       "(nil array)",
		"*2\r\n$1\r\na\r\n_\r\n":        `["a", (null)]`,
		"%1\r\n+k\r\n#t\r\n":            "{+k: (true)}",
		"~1\r\n,1.5\r\n":                "(set) [(double) 1.5]",
		"|1\r\n+a\r\n:1\r\n$1\r\nx\r\n": `(attrs {+a: (integer) 1}) "x"`,
	} {
		if got := MustParse(raw).String(); got != want {
			t.Errorf("String(%q) = %s, want %s", raw, got, want)
		}
	}
}

func TestComparators(t *testing.T) {
	type tc struct {
		name string
		cmp  func(Reply, Reply) error
		a, b string
		ok   bool
	}
	for _, c := range []tc{
		{"exact same", Exact, "+OK\r\n", "+OK\r\n", true},
		{"exact differ", Exact, "+OK\r\n", "+Ok\r\n", false},
		{"unordered perm", Unordered, "*3\r\n+a\r\n+b\r\n+a\r\n", "*3\r\n+b\r\n+a\r\n+a\r\n", true},
		{"unordered dup count", Unordered, "*3\r\n+a\r\n+b\r\n+a\r\n", "*3\r\n+b\r\n+a\r\n+b\r\n", false},
		{"unordered length", Unordered, "*1\r\n+a\r\n", "*2\r\n+a\r\n+a\r\n", false},
		{"unordered kind", Unordered, "*1\r\n+a\r\n", "~1\r\n+a\r\n", false},
		{"unordered set", Unordered, "~2\r\n+a\r\n+b\r\n", "~2\r\n+b\r\n+a\r\n", true},
		{"unordered top-level only", Unordered, "*1\r\n*2\r\n+a\r\n+b\r\n", "*1\r\n*2\r\n+b\r\n+a\r\n", false},
		{"unordered scalar", Unordered, "-ERR x\r\n", "-ERR x\r\n", true},
		{"unordered null", Unordered, "*-1\r\n", "*0\r\n", false},
		{"unordered map pairs", Unordered, "%2\r\n+a\r\n:1\r\n+b\r\n:2\r\n", "%2\r\n+b\r\n:2\r\n+a\r\n:1\r\n", true},
		{"unordered map swapped values", Unordered, "%2\r\n+a\r\n:1\r\n+b\r\n:2\r\n", "%2\r\n+a\r\n:2\r\n+b\r\n:1\r\n", false},
		{"pairs", UnorderedPairs, "*4\r\n+a\r\n:1\r\n+b\r\n:2\r\n", "*4\r\n+b\r\n:2\r\n+a\r\n:1\r\n", true},
		{"pairs broken", UnorderedPairs, "*4\r\n+a\r\n:1\r\n+b\r\n:2\r\n", "*4\r\n+a\r\n:2\r\n+b\r\n:1\r\n", false},
		{"approx int", Approx(1), ":100\r\n", ":99\r\n", true},
		{"approx int far", Approx(1), ":100\r\n", ":98\r\n", false},
		{"approx sentinel", Approx(1), ":-1\r\n", ":-2\r\n", false},
		{"approx sentinel same", Approx(1), ":-2\r\n", ":-2\r\n", true},
		{"approx double", Approx(0.01), ",1.5\r\n", ",1.505\r\n", true},
		{"approx inf", Approx(0.01), ",inf\r\n", ",inf\r\n", true},
		{"approx bulk number", Approx(0.5), "$3\r\n1.5\r\n", "$1\r\n2\r\n", true},
		{"approx bulk text", Approx(0.5), "$1\r\na\r\n", "$1\r\nb\r\n", false},
		{"approx nested", Approx(2), "*2\r\n:10\r\n$1\r\nk\r\n", "*2\r\n:11\r\n$1\r\nk\r\n", true},
		{"approx kind", Approx(2), ":10\r\n", ",10\r\n", false},
		{"hello id", HelloCompare, "%2\r\n+proto\r\n:3\r\n+id\r\n:5\r\n", "%2\r\n+proto\r\n:3\r\n+id\r\n:9\r\n", true},
		{"hello field", HelloCompare, "%2\r\n+proto\r\n:3\r\n+id\r\n:5\r\n", "%2\r\n+proto\r\n:2\r\n+id\r\n:5\r\n", false},
	} {
		err := c.cmp(MustParse(c.a), MustParse(c.b))
		if (err == nil) != c.ok {
			t.Errorf("%s: %q vs %q: err = %v, want ok=%v", c.name, c.a, c.b, err, c.ok)
		}
	}
}

// recorder is a testing.TB that records failures instead of failing, to test
// that the harness reports differences. Fatal ends only the goroutine run by
// capture.
type recorder struct {
	testing.TB
	mu    sync.Mutex
	msgs  []string
	fatal bool
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(f string, a ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, fmt.Sprintf(f, a...))
}
func (r *recorder) Error(a ...any) { r.Errorf("%s", fmt.Sprint(a...)) }
func (r *recorder) Fatalf(f string, a ...any) {
	r.Errorf(f, a...)
	r.fatal = true
	runtime.Goexit()
}
func (r *recorder) Fatal(a ...any) { r.Fatalf("%s", fmt.Sprint(a...)) }

// capture runs fn on its own goroutine (so Fatal's Goexit ends only fn) and
// returns the recorded messages.
func capture(t *testing.T, fn func(tb testing.TB)) (msgs []string, fatal bool) {
	rec := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(rec)
	}()
	<-done
	return rec.msgs, rec.fatal
}

// on runs fn with p reporting to a recorder.
func (p *Pair) on(tb testing.TB) *Pair {
	q := *p
	q.tb = tb
	r, k := *p.redis, *p.keyhive
	r.tb, k.tb = tb, tb
	q.redis, q.keyhive = &r, &k
	return &q
}

// TestSmoke runs a few commands through the default target (Keyhive, unless
// KEYHIVE_DIFF_TARGET=redis).
func TestSmoke(t *testing.T) {
	p := Start(t)
	p.Do("PING")
	p.Do("PING", "hello")
	p.Do("SET", "k", "v")
	if r := p.Do("GET", "k"); r.Str != "v" {
		t.Errorf("GET k = %s", r)
	}
	p.Do("GET", "missing") // nil
	p.Do("INCR", "k")      // not an integer: error
	p.Do("GET")            // arity error
	p.Do("SET", "bin\x00\r\n", "\xff\x00")
	p.Do("GET", "bin\x00\r\n")
	p.Do("DEL", "k", "bin\x00\r\n", "missing")
}

// TestHarness exercises every Pair method against two redis-servers, whose
// replies agree by construction, so failures here are harness bugs.
func TestHarness(t *testing.T) {
	p := start(t, targetRedis, "", nil, true)
	if p.Do("DBSIZE").Int != 0 {
		t.Fatal("Start did not flush")
	}
	p.Do("SADD", "s", "a", "b", "c", "d", "e", "f")
	p.DoUnordered("SMEMBERS", "s")
	p.DoUnordered("KEYS", "*")
	p.Do("HSET", "h", "f1", "v1", "f2", "v2")
	p.DoUnorderedPairs("HGETALL", "h")
	p.Do("SET", "t", "x", "EX", 100)
	p.DoApprox(1, "TTL", "t")
	p.DoApprox(1000, "PTTL", "t")
	p.DoApprox(0, "TTL", "nokey") // -2
	p.DoCompare(func(r, k Reply) error {
		if r.Kind != KindInt || k.Kind != KindInt {
			return fmt.Errorf("not integers")
		}
		return nil
	}, "CLIENT", "ID")
	r, k := p.DoDifferent("client ids depend on connection history", "CLIENT", "ID")
	if r.Kind != KindInt || k.Kind != KindInt {
		t.Errorf("DoDifferent returned %s, %s", r, k)
	}

	// Inline commands, pipelines and commands split over several writes.
	p.Raw([]byte("PING\r\n"))
	p.Raw([]byte("SET inl \"a b\"\r\nGET inl\r\n"))
	if p.Read().Str != "a b" {
		t.Error("pipelined inline GET")
	}
	cmd := EncodeCommand("SET", "split", "value")
	for i := range cmd[:len(cmd)-1] {
		p.SendRaw(cmd[i : i+1])
	}
	p.Raw(cmd[len(cmd)-1:])
	p.Do("GET", "split")

	// Protocol errors close the connection; p reconnects afterwards.
	p.RawExpectClose([]byte("*1\r\n$x\r\n"))
	p.RawExpectClose([]byte("*5000000000\r\n"))
	p.Do("PING")

	// RESP3.
	p.Proto(3)
	p.DoUnordered("SMEMBERS", "s") // now a set (~)
	p.DoUnordered("HGETALL", "h")  // now a map (%)
	p.Do("GET", "missing")         // _
	p.Do("ZADD", "z", 1.5, "m")
	p.Do("ZSCORE", "z", "m") // double
	p.Proto(2)

	// Several clients: a blocked BLPOP is served by another connection's LPUSH.
	q := p.NewConn()
	p.Send("BLPOP", "list", 5)
	p.NoReply(50 * time.Millisecond)
	q.Do("LPUSH", "list", "x")
	if got := p.Read(); len(got.Elems) != 2 || got.Elems[1].Str != "x" {
		t.Errorf("BLPOP = %s", got)
	}

	// Single-side access.
	if p.Redis().Do("EXISTS", "s").Int != 1 || p.Keyhive().Do("EXISTS", "s").Int != 1 {
		t.Error("single-side EXISTS")
	}
}

// TestHarnessReportsDifferences makes the two redis-servers disagree and
// checks that each comparison reports it, readably.
func TestHarnessReportsDifferences(t *testing.T) {
	p := start(t, targetRedis, "", nil, true)
	p.Redis().Do("SET", "k", "redis-value")
	p.Keyhive().Do("SET", "k", "other")
	p.Redis().Do("SADD", "s", "a", "b")
	p.Keyhive().Do("SADD", "s", "a", "c")
	p.Redis().Do("SET", "t", "x", "EX", 100)
	p.Keyhive().Do("SET", "t", "x", "EX", 50)

	for _, tc := range []struct {
		do   func(p *Pair)
		want []string
	}{
		{func(p *Pair) { p.Do("GET", "k") }, []string{"GET k", `"$11\r\nredis-value\r\n"`, `"$5\r\nother\r\n"`, "byte 1"}},
		{func(p *Pair) { p.Do("GET", "k\r\n") }, nil},
		{func(p *Pair) { p.DoUnordered("SMEMBERS", "s") }, []string{`only in redis: ["b"]`, `only in keyhive: ["c"]`}},
		{func(p *Pair) { p.DoApprox(1, "TTL", "t") }, []string{"differ by more than 1"}},
		{func(p *Pair) { p.DoDifferent("values differ on purpose", "GET", "k") }, nil},
		{func(p *Pair) { p.Raw([]byte("GET k\r\n")) }, []string{`raw "GET k\r\n"`}},
	} {
		msgs, fatal := capture(t, func(tb testing.TB) { tc.do(p.on(tb)) })
		if fatal {
			t.Fatalf("unexpected fatal: %q", msgs)
		}
		if tc.want == nil {
			if len(msgs) != 0 {
				t.Errorf("unexpected failure: %q", msgs)
			}
			continue
		}
		if len(msgs) != 1 {
			t.Errorf("got %d messages %q, want 1 containing %q", len(msgs), msgs, tc.want)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(msgs[0], w) {
				t.Errorf("message %q lacks %q", msgs[0], w)
			}
		}
	}

	// A missing reason, and a reply that never comes, are fatal.
	if msgs, fatal := capture(t, func(tb testing.TB) { p.on(tb).DoDifferent(" ", "PING") }); !fatal {
		t.Errorf("DoDifferent without reason: %q", msgs)
	}
	q := p.NewConn()
	q.SetTimeout(100 * time.Millisecond)
	msgs, fatal := capture(t, func(tb testing.TB) { q.on(tb).Do("BLPOP", "nolist", 0) })
	if !fatal || len(msgs) != 1 || !strings.Contains(msgs[0], "timeout") {
		t.Errorf("missing reply: fatal=%v %q", fatal, msgs)
	}
}

// TestSharedServersAreExclusive: two unrelated tests may not hold the same
// shared servers at once, since one's FLUSHALL would wipe the other's data.
func TestSharedServersAreExclusive(t *testing.T) {
	start(t, targetRedis, "", nil, true)
	t.Run("subtest may share", func(t *testing.T) { start(t, targetRedis, "", nil, true) })
	other := &recorder{TB: fakeName{t, "TestSomethingElse"}}
	done := make(chan struct{})
	go func() { defer close(done); start(other, targetRedis, "", nil, true) }()
	<-done
	if !other.fatal || !strings.Contains(other.msgs[0], "StartIsolated") {
		t.Errorf("concurrent use of shared servers: %q", other.msgs)
	}
}

type fakeName struct {
	testing.TB
	name string
}

func (f fakeName) Name() string { return f.name }

func TestIsolatedAndDirectives(t *testing.T) {
	p := start(t, targetRedis, "", []string{"--maxmemory", "12345678"}, false)
	p.DoUnorderedPairs("CONFIG", "GET", "maxmemory")
	if r := p.Redis().Do("CONFIG", "GET", "maxmemory"); len(r.Elems) != 2 || r.Elems[1].Str != "12345678" {
		t.Errorf("directive not applied: %s", r)
	}
}

func TestRedisServerMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	msgs, fatal := capture(t, func(tb testing.TB) { start(tb, targetRedis, "", nil, false) })
	if !fatal || len(msgs) != 1 || msgs[0] != noRedisMsg {
		t.Errorf("got fatal=%v %q, want %q", fatal, msgs, noRedisMsg)
	}
}

// TestOracle74 checks that Start74's oracle is redis-server 7.4.1.
func TestOracle74(t *testing.T) {
	p := start(t, targetRedis, Need74(t), nil, false)
	info := p.Redis().Do("INFO", "server").Str
	if !strings.Contains(info, "redis_version:7.4.1") {
		t.Fatalf("Start74's oracle is not 7.4.1:\n%s", info)
	}
	p.Do("ZADD", "z", "1.5", "a")
	p.Do("ZRANK", "z", "a", "WITHSCORE")
}

// TestDoApproxCoversAStalledServer: one server runs a SET 1.5 s after the
// other (busy in a DEBUG SLEEP, as a loaded machine can leave one side
// waiting), so the PTTLs differ by more than the 1000 ms given; DoApprox
// also allows twice the slowest exchange and finds them alike.
func TestDoApproxCoversAStalledServer(t *testing.T) {
	p := start(t, targetRedis, "", nil, false)
	busy, err := Dial(p.Keyhive().Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	if err := busy.Send("DEBUG", "SLEEP", "1.5"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	p.Do("SET", "t", "x", "EX", 100)
	redisTTL, keyhiveTTL := p.Redis().Do("PTTL", "t").Int, p.Keyhive().Do("PTTL", "t").Int
	if keyhiveTTL-redisTTL <= 1000 {
		t.Fatalf("PTTLs %d and %d: the stall did not show", redisTTL, keyhiveTTL)
	}
	p.DoApprox(1000, "PTTL", "t")
	p.DoApprox(1, "TTL", "t")
}
