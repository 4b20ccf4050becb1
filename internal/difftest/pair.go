package difftest

import (
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// Pair is one connection to redis-server and one to Keyhive. Every method
// sends the same bytes to both and checks the replies. Methods must be called
// from the test's goroutine: I/O failures (a timeout, a dropped connection)
// end the test with t.Fatal, because the reply stream can no longer be trusted;
// differing replies are reported with t.Errorf and the test goes on.
type Pair struct {
	tb      testing.TB
	env     *env
	redis   *Client
	keyhive *Client
	timeout time.Duration
	verbose bool
	// slowest is the longest exchange so far, from sending a command to
	// reading both replies (DoApprox).
	slowest time.Duration
}

// Start returns a Pair on servers shared by every test of the package that
// passes the same directives (command-line style, e.g. "--maxmemory", "1mb";
// redis-server and Keyhive both get them). It resets the data with FLUSHALL on
// both sides and opens fresh RESP2 connections, closed when the test ends.
//
// Shared servers keep other state (CONFIG SET, DEBUG flags, scripts, stats):
// a test that changes such state, or calls t.Parallel, must use StartIsolated.
// Start fails a test that would share servers with another running test.
func Start(tb testing.TB, directives ...string) *Pair {
	tb.Helper()
	target, err := defaultTarget()
	if err != nil {
		tb.Fatal(err)
	}
	return start(tb, target, defaultOracle(tb), directives, true)
}

// StartIsolated is Start on servers of the test's own, stopped when it ends.
func StartIsolated(tb testing.TB, directives ...string) *Pair {
	tb.Helper()
	target, err := defaultTarget()
	if err != nil {
		tb.Fatal(err)
	}
	return start(tb, target, defaultOracle(tb), directives, false)
}

// Start74 is Start with redis-server 7.4.1 as the oracle, for behaviour newer
// than Debian's 7.0.15 (Redis 7.2 and 7.4 commands, RDB 12). Without that
// oracle it skips tb (see Need74).
func Start74(tb testing.TB, directives ...string) *Pair {
	tb.Helper()
	return start74(tb, directives, true)
}

// StartIsolated74 is StartIsolated with redis-server 7.4.1 as the oracle.
func StartIsolated74(tb testing.TB, directives ...string) *Pair {
	tb.Helper()
	return start74(tb, directives, false)
}

// Start70 is Start with Debian's redis-server 7.0.15 (the one on PATH) as the
// oracle whatever OracleEnv says, for a test of behaviour a 7.0 client relies
// on or one that 7.4.1 gets wrong; each caller says which in one line.
func Start70(tb testing.TB, directives ...string) *Pair {
	tb.Helper()
	target, err := defaultTarget()
	if err != nil {
		tb.Fatal(err)
	}
	return start(tb, target, "", directives, true)
}

func start74(tb testing.TB, directives []string, shared bool) *Pair {
	tb.Helper()
	target, err := defaultTarget()
	if err != nil {
		tb.Fatal(err)
	}
	return start(tb, target, Need74(tb), directives, shared)
}

// Main runs the tests and then stops the shared servers. Using it is optional
// (servers die with the test binary anyway) but tidier:
//
//	func TestMain(m *testing.M) { os.Exit(difftest.Main(m)) }
func Main(m *testing.M) int {
	code := m.Run()
	stopShared()
	return code
}

func start(tb testing.TB, target, oracle string, directives []string, shared bool) *Pair {
	tb.Helper()
	var e *env
	var err error
	if shared {
		e, err = sharedEnv(target, oracle, directives)
	} else {
		e, err = newEnv(target, oracle, directives, false)
		if err == nil {
			tb.Cleanup(e.close)
		}
	}
	if err != nil {
		tb.Fatal(err.Error())
	}
	if shared {
		e.acquire(tb)
	}
	p := &Pair{tb: tb, env: e, timeout: pairTimeout, verbose: os.Getenv(VerboseEnv) != ""}
	p.connect()
	for _, c := range []*Client{p.redis, p.keyhive} {
		if r := c.Do("FLUSHALL"); r.Kind != KindSimple || r.Str != "OK" {
			tb.Fatalf("difftest: %s: FLUSHALL (resetting state for the test) replied %s", c.name, r)
		}
	}
	return p
}

// acquire records tb as a user of a shared env, failing it if an unrelated
// test (not an ancestor) is using the env concurrently: FLUSHALL from one
// would wipe the other's data and make failures nondeterministic.
func (e *env) acquire(tb testing.TB) {
	tb.Helper()
	name := tb.Name()
	e.mu.Lock()
	for _, u := range e.users {
		if u != name && !strings.HasPrefix(name, u+"/") {
			e.mu.Unlock()
			tb.Fatalf("difftest: shared servers are in use by %s; parallel tests must use StartIsolated", u)
		}
	}
	e.users = append(e.users, name)
	e.mu.Unlock()
	tb.Cleanup(func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		for i, u := range e.users {
			if u == name {
				e.users = append(e.users[:i], e.users[i+1:]...)
				break
			}
		}
	})
}

// dial connects to *s, restarting a shared server that stopped accepting
// connections (a previous test ran SHUTDOWN or crashed it).
func (e *env) dial(tb testing.TB, s **instance) (*Conn, *instance) {
	tb.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	c, err := Dial((*s).addr)
	if err != nil && e.shared {
		tb.Logf("difftest: %s at %s is gone (%v); restarting it", (*s).name, (*s).addr, err)
		if rerr := e.restart(s); rerr != nil {
			tb.Fatalf("difftest: restarting %s: %v", (*s).name, rerr)
		}
		c, err = Dial((*s).addr)
	}
	if err != nil {
		tb.Fatalf("difftest: connecting to %s at %s: %v%s", (*s).name, (*s).addr, err, (*s).logTail())
	}
	return c, *s
}

// connect opens a fresh connection to each side, closed when the test ends.
func (p *Pair) connect() {
	p.tb.Helper()
	rc, rs := p.env.dial(p.tb, &p.env.redis)
	kc, ks := p.env.dial(p.tb, &p.env.keyhive)
	rc.Timeout, kc.Timeout = p.timeout, p.timeout
	p.redis = &Client{tb: p.tb, name: rs.name, srv: rs, conn: rc}
	p.keyhive = &Client{tb: p.tb, name: ks.name, srv: ks, conn: kc}
	p.tb.Cleanup(func() { rc.Close(); kc.Close() })
}

// NewConn opens another connection to each server (same data), for tests
// with several clients: blocking commands, pub/sub, transactions, CLIENT.
func (p *Pair) NewConn() *Pair {
	p.tb.Helper()
	q := &Pair{tb: p.tb, env: p.env, timeout: p.timeout, verbose: p.verbose}
	q.connect()
	return q
}

// Reconnect replaces both connections with fresh RESP2 ones (data is kept).
func (p *Pair) Reconnect() {
	p.tb.Helper()
	p.redis.conn.Close()
	p.keyhive.conn.Close()
	p.connect()
}

// Redis returns the redis-server side, for setup or intended differences.
func (p *Pair) Redis() *Client { return p.redis }

// Keyhive returns the Keyhive side, for setup or intended differences.
func (p *Pair) Keyhive() *Client { return p.keyhive }

// pairTimeout bounds a Pair's reads and writes: wider than DefaultTimeout,
// as the differential tests run an in-process Keyhive under -race, where a
// heavy command (a SCAN behind writers of 3000 keys, DEBUG STRINGMATCH-TEST)
// took more than 5 s beside a CPU hog.
const pairTimeout = 30 * time.Second

// SetTimeout changes how long each read may wait (default pairTimeout);
// raise it before blocking commands with long timeouts.
func (p *Pair) SetTimeout(d time.Duration) {
	p.timeout = d
	p.redis.conn.Timeout, p.keyhive.conn.Timeout = d, d
}

// Do sends a command to both servers and requires byte-identical replies
// (HELLO's: the same apart from the client id and version, see HelloCompare).
// It returns redis's reply, e.g. to feed a SCAN cursor to the next call.
func (p *Pair) Do(args ...any) Reply {
	p.tb.Helper()
	if len(args) > 0 && strings.EqualFold(fmt.Sprint(args[0]), "HELLO") {
		return p.DoCompare(HelloCompare, args...)
	}
	return p.DoCompare(Exact, args...)
}

// DoUnordered is Do for replies whose element order is unspecified (SMEMBERS,
// KEYS, HKEYS): a top-level aggregate is compared as a multiset of elements,
// a map as a multiset of key-value pairs; other replies must be identical.
func (p *Pair) DoUnordered(args ...any) Reply {
	p.tb.Helper()
	return p.DoCompare(Unordered, args...)
}

// DoUnorderedPairs is DoUnordered for flat RESP2 arrays of pairs (HGETALL,
// CONFIG GET): consecutive pairs stay together, pair order may differ.
func (p *Pair) DoUnorderedPairs(args ...any) Reply {
	p.tb.Helper()
	return p.DoCompare(UnorderedPairs, args...)
}

// DoApprox is Do with numbers allowed to differ by tolerance, for time-based
// replies (TTL, PTTL, OBJECT IDLETIME); see Approx. Each server reads its
// clock when it runs a command, at any moment of the exchange: the
// tolerance also covers twice the slowest exchange so far (the command that
// set the time and this one), in the reply's unit (milliseconds for PTTL
// and HPTTL, else seconds). That adds nothing on a quiet machine, and the
// seconds a loaded one makes one server wait.
func (p *Pair) DoApprox(tolerance float64, args ...any) Reply {
	p.tb.Helper()
	desc, data := p.encode(args)
	r, k := p.exchange(desc, data)
	stall := 2 * p.slowest.Seconds()
	if name := strings.ToUpper(fmt.Sprint(args[0])); name == "PTTL" || name == "HPTTL" {
		stall *= 1000
	}
	p.check(desc, r, k, Approx(tolerance+math.Round(stall)))
	return r
}

// DoCompare sends a command to both and checks the replies with cmp, which
// returns nil if they match. Exact, Unordered, UnorderedPairs and Approx are
// ready-made comparators.
func (p *Pair) DoCompare(cmp func(redis, keyhive Reply) error, args ...any) Reply {
	p.tb.Helper()
	desc, data := p.encode(args)
	r, k := p.exchange(desc, data)
	p.check(desc, r, k, cmp)
	return r
}

// DoDifferent sends a command to both and only requires that both reply;
// reason (mandatory) says why the replies legitimately differ.
func (p *Pair) DoDifferent(reason string, args ...any) (redis, keyhive Reply) {
	p.tb.Helper()
	if strings.TrimSpace(reason) == "" {
		p.tb.Fatal("difftest: DoDifferent needs a reason for the difference")
	}
	desc, data := p.encode(args)
	return p.exchange(desc+" (may differ: "+reason+")", data)
}

// Send sends a command to both without reading replies; pair it with Read,
// e.g. to block one connection while another acts.
func (p *Pair) Send(args ...any) {
	p.tb.Helper()
	desc, data := p.encode(args)
	p.redis.sendRaw(desc, data)
	p.keyhive.sendRaw(desc, data)
}

// SendRaw sends data verbatim to both without reading: partial commands,
// split writes, pipelines.
func (p *Pair) SendRaw(data []byte) {
	p.tb.Helper()
	desc := "raw " + quoteTrunc(data, 200)
	p.redis.sendRaw(desc, data)
	p.keyhive.sendRaw(desc, data)
}

// Read reads the next reply on both connections and requires identical bytes.
func (p *Pair) Read() Reply {
	p.tb.Helper()
	r, k := p.read("next reply")
	p.check("next reply", r, k, Exact)
	return r
}

// Raw sends data verbatim to both and compares the next reply. For data that
// holds several commands, read the later replies with Read.
func (p *Pair) Raw(data []byte) Reply {
	p.tb.Helper()
	desc := "raw " + quoteTrunc(data, 200)
	r, k := p.exchange(desc, data)
	p.check(desc, r, k, Exact)
	return r
}

// RawExpectClose sends data that is a protocol error to both, compares the
// error replies (or that neither replied), then requires both servers to
// close the connection. Afterwards p has fresh RESP2 connections.
func (p *Pair) RawExpectClose(data []byte) {
	p.tb.Helper()
	desc := "raw " + quoteTrunc(data, 200)
	p.redis.sendRaw(desc, data)
	p.keyhive.sendRaw(desc, data)
	var replied [2]bool
	var replies [2]Reply
	var outcome [2]string
	for i, c := range []*Client{p.redis, p.keyhive} {
		r, err := c.conn.Read()
		switch {
		case err == nil:
			replied[i], replies[i], outcome[i] = true, r, fmt.Sprintf("%q", r.Raw)
		case isClosed(err) && len(r.Raw) == 0:
			outcome[i] = "(connection closed without a reply)"
		default:
			// Neither a reply nor a close: the data was not a protocol
			// error for this server, or it hangs.
			outcome[i] = fmt.Sprintf("(%v after %q)", err, r.Raw)
			p.tb.Errorf("difftest: %s: %s neither replied nor closed the connection: %s", desc, c.name, outcome[i])
		}
	}
	if replied[0] && replied[1] {
		p.check(desc, replies[0], replies[1], Exact)
	} else if outcome[0] != outcome[1] {
		rl, kl := p.labels()
		p.tb.Errorf("difftest: %s: replies differ\n\t%s %s\n\t%s %s", desc, rl, outcome[0], kl, outcome[1])
	}
	// Wait for both closes at once so a server that keeps the connection
	// open costs one timeout, not two.
	var wg sync.WaitGroup
	var errs [2]error
	for i, c := range []*Client{p.redis, p.keyhive} {
		if replied[i] {
			wg.Go(func() { errs[i] = c.conn.WaitClosed() })
		}
	}
	wg.Wait()
	for i, c := range []*Client{p.redis, p.keyhive} {
		if errs[i] != nil {
			p.tb.Errorf("difftest: %s: %s did not close the connection after the protocol error: %v", desc, c.name, errs[i])
		}
	}
	p.Reconnect()
}

// NoReply checks that neither server sends anything within d, e.g. that a
// blocked command is still blocked or a subscriber got no message.
func (p *Pair) NoReply(d time.Duration) {
	p.tb.Helper()
	var wg sync.WaitGroup
	var errs [2]error
	for i, c := range []*Client{p.redis, p.keyhive} {
		wg.Go(func() { errs[i] = c.conn.Idle(d) })
	}
	wg.Wait()
	for i, c := range []*Client{p.redis, p.keyhive} {
		if errs[i] != nil {
			p.tb.Errorf("difftest: %s: expected no reply within %v: %v", c.name, d, errs[i])
		}
	}
}

// Proto switches both connections to RESP version v with HELLO and compares
// the HELLO replies, ignoring the client id.
func (p *Pair) Proto(v int) Reply {
	p.tb.Helper()
	return p.DoCompare(HelloCompare, "HELLO", v)
}

func (p *Pair) encode(args []any) (desc string, data []byte) {
	p.tb.Helper()
	data, err := appendCommand(nil, args)
	if err != nil {
		p.tb.Fatalf("difftest: %v", err)
	}
	return formatArgs(args), data
}

// exchange sends data to both before reading either reply, so blocking
// commands wait on both servers at the same time.
func (p *Pair) exchange(desc string, data []byte) (Reply, Reply) {
	p.tb.Helper()
	start := time.Now()
	p.redis.sendRaw(desc, data)
	p.keyhive.sendRaw(desc, data)
	r, k := p.read(desc)
	p.slowest = max(p.slowest, time.Since(start))
	return r, k
}

func (p *Pair) read(desc string) (Reply, Reply) {
	p.tb.Helper()
	r := p.redis.read(desc)
	k := p.keyhive.read(desc)
	if p.verbose {
		rl, kl := p.labels()
		p.tb.Logf("difftest: %s\n\t%s %q\n\t%s %q", desc, rl, r.Raw, kl, k.Raw)
	}
	return r, k
}

func (p *Pair) check(desc string, r, k Reply, cmp func(redis, keyhive Reply) error) {
	p.tb.Helper()
	if err := cmp(r, k); err != nil {
		off := commonPrefix(r.Raw, k.Raw)
		rl, kl := p.labels()
		p.tb.Errorf("difftest: %s: %v\n\t%s %s\n\t%s %s", desc, err, rl, quoteAround(r.Raw, off), kl, quoteAround(k.Raw, off))
	}
}

// labels returns the side names padded to one width so replies line up.
func (p *Pair) labels() (string, string) {
	w := max(len(p.redis.name), len(p.keyhive.name)) + 1
	return fmt.Sprintf("%-*s", w, p.redis.name+":"), fmt.Sprintf("%-*s", w, p.keyhive.name+":")
}

// Client is one side of a Pair, bound to the test: I/O errors are fatal.
type Client struct {
	tb   testing.TB
	name string
	srv  *instance
	conn *Conn
}

// Name is "redis" or "keyhive" ("keyhive[redis-server]" when the target is redis).
func (c *Client) Name() string { return c.name }

// Addr is the server's "host:port", for opening extra raw connections.
func (c *Client) Addr() string { return c.srv.addr }

// Conn returns the raw connection, for error-returning access.
func (c *Client) Conn() *Conn { return c.conn }

// Do sends a command to this side only and returns its reply.
func (c *Client) Do(args ...any) Reply {
	c.tb.Helper()
	c.Send(args...)
	return c.read(formatArgs(args))
}

// Send sends a command to this side only, without reading the reply.
func (c *Client) Send(args ...any) {
	c.tb.Helper()
	data, err := appendCommand(nil, args)
	if err != nil {
		c.tb.Fatalf("difftest: %v", err)
	}
	c.sendRaw(formatArgs(args), data)
}

// SendRaw sends data verbatim to this side only.
func (c *Client) SendRaw(data []byte) {
	c.tb.Helper()
	c.sendRaw("raw "+quoteTrunc(data, 200), data)
}

// Read reads the next reply from this side.
func (c *Client) Read() Reply {
	c.tb.Helper()
	return c.read("next reply")
}

func (c *Client) sendRaw(desc string, data []byte) {
	c.tb.Helper()
	if err := c.conn.SendRaw(data); err != nil {
		c.tb.Fatalf("difftest: %s: sending %s: %v%s", c.name, desc, err, c.srv.logTail())
	}
}

func (c *Client) read(desc string) Reply {
	c.tb.Helper()
	r, err := c.conn.Read()
	if err != nil {
		c.tb.Fatalf("difftest: %s: reading reply to %s: %v (bytes read: %s)%s",
			c.name, desc, err, quoteTrunc(r.Raw, 1000), c.srv.logTail())
	}
	return r
}
