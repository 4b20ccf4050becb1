package server_test

import (
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// Client-side caching: invalidation pushes compared byte for byte. Client ids
// differ between the servers, so REDIRECT is set up per side.

func TestTrackingCommands(t *testing.T) {
	p := difftest.Start(t)
	p.Do("CLIENT", "TRACKING", "on", "PREFIX", "a")
	p.Do("CLIENT", "TRACKING", "on", "BCAST", "OPTIN")
	p.Do("CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT")
	p.Do("CLIENT", "TRACKING", "on", "REDIRECT", 999999)
	p.Do("CLIENT", "TRACKING", "maybe")
	p.Do("CLIENT", "TRACKING", "on", "bogus")
	p.Do("CLIENT", "CACHING", "yes")
	p.Do("CLIENT", "GETREDIR")
	p.Do("CLIENT", "TRACKINGINFO")
	p.Do("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a", "PREFIX", "ab")
	p.Do("CLIENT", "TRACKING", "on", "OPTOUT")
	p.Do("CLIENT", "CACHING", "yes")
	p.Do("CLIENT", "CACHING", "no")
	p.Do("CLIENT", "TRACKINGINFO")
	p.Do("CLIENT", "CACHING", "maybe")
	p.Do("CLIENT", "GETREDIR")
	p.Do("CLIENT", "TRACKING", "on", "BCAST")
	p.Do("CLIENT", "TRACKING", "off")
	p.Do("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a")
	p.Do("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "b")
	p.Do("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "bc")
	p.Do("CLIENT", "TRACKINGINFO")
	p.Do("CLIENT", "TRACKING", "on")
	p.Do("CLIENT", "TRACKING", "off")
	p.Do("CLIENT", "TRACKING", "off")
	p.Do("CLIENT", "TRACKINGINFO")
	p.Proto(3)
	p.Do("CLIENT", "TRACKING", "on", "OPTIN", "NOLOOP")
	p.Do("CLIENT", "TRACKINGINFO")
}

// TestTrackingDefaultMode: a RESP3 client hears once about each key it read
// when another client changes it (writes, deletes, expiry, flushes), and,
// without NOLOOP, about its own changes.
func TestTrackingDefaultMode(t *testing.T) {
	p := difftest.Start(t)
	other := p.NewConn()
	p.Proto(3)
	p.Do("CLIENT", "TRACKING", "on")
	p.Do("SET", "k", 1) // not read yet: nothing
	p.Do("GET", "k")
	p.Do("MGET", "k", "k2")
	other.Do("SET", "k", 2)
	p.Read() // invalidate [k]
	other.Do("SET", "k", 3)
	p.NoReply(stillBlocked) // told once until read again
	other.Do("SET", "k2", 1)
	p.Read()
	p.Do("HGET", "h", "f")
	other.Do("HSET", "h", "f", 1)
	p.Read()
	p.Do("GET", "k")
	p.Do("SET", "k", "mine")
	p.Read() // its own write: the invalidation comes after the reply
	p.Do("GET", "k")
	other.Do("EXPIRE", "k", 100)
	p.Read()
	p.Do("GET", "k")
	other.Do("FLUSHALL")
	p.Read() // invalidate null
	p.Do("GET", "k")
	p.Do("CLIENT", "TRACKING", "off")
	other.Do("SET", "k", 4)
	p.NoReply(stillBlocked)
}

func TestTrackingOptInOutNoloop(t *testing.T) {
	p := difftest.Start(t)
	other := p.NewConn()
	p.Proto(3)
	p.Do("CLIENT", "TRACKING", "on", "OPTIN")
	p.Do("GET", "a") // not cached
	p.Do("CLIENT", "CACHING", "yes")
	p.Do("GET", "b") // cached
	p.Do("GET", "c") // caching applied to one command only
	other.Do("MSET", "a", 1, "b", 1, "c", 1)
	p.Read()
	p.NoReply(stillBlocked)
	p.Do("CLIENT", "TRACKING", "off")
	p.Do("CLIENT", "TRACKING", "on", "OPTOUT", "NOLOOP")
	p.Do("CLIENT", "CACHING", "no")
	p.Do("GET", "a") // not cached
	p.Do("GET", "b")
	p.Do("SET", "b", 2) // NOLOOP: its own write says nothing
	p.Do("GET", "b")
	other.Do("MSET", "a", 2, "b", 3)
	p.Read()
	p.NoReply(stillBlocked)
}

func TestTrackingBroadcast(t *testing.T) {
	p := difftest.Start(t)
	other := p.NewConn()
	p.Proto(3)
	p.Do("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "user:", "PREFIX", "cfg:")
	other.Do("SET", "user:1", "x")
	p.Read()
	other.Do("MSET", "user:2", "x", "other", "y", "cfg:a", "z")
	p.Read()
	p.Read()
	other.Do("DEL", "other")
	p.NoReply(stillBlocked)
	other.Do("FLUSHDB")
	p.Read()
}

// TestTrackingRedirect: a RESP2 client redirects its invalidations to a
// subscriber of __redis__:invalidate.
func TestTrackingRedirect(t *testing.T) {
	p := difftest.Start(t)
	sub, other := p.NewConn(), p.NewConn()
	ids := [2]difftest.Reply{sub.Redis().Do("CLIENT", "ID"), sub.Keyhive().Do("CLIENT", "ID")}
	sub.Do("SUBSCRIBE", "__redis__:invalidate")
	for i, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
		if r := c.Do("CLIENT", "TRACKING", "on", "REDIRECT", ids[i].Int); r.Str != "OK" {
			t.Fatalf("%s: %v", c.Name(), r)
		}
	}
	p.Do("GET", "k")
	other.Do("SET", "k", 1)
	sub.Read()
	for i, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
		if r := c.Do("CLIENT", "GETREDIR"); r.Int != ids[i].Int {
			t.Errorf("%s: CLIENT GETREDIR %v", c.Name(), r)
		}
	}
	other.Do("FLUSHALL")
	sub.Read()
}

// Keys read by commands inside EXEC are tracked for the client that ran
// EXEC. Inside a script Redis 7.0 tracks, for each read command the script
// runs, the script's declared keys (not what the command read); a script
// that reads nothing tracks nothing. CLIENT CACHING yes covers a whole
// transaction.
func TestTrackingExecAndScripts(t *testing.T) {
	p := difftest.Start(t)
	other := p.NewConn()
	p.Proto(3)
	p.Do("CLIENT", "TRACKING", "on")
	p.Do("MULTI")
	p.Do("GET", "tx1")
	p.Do("HGET", "tx2", "f")
	p.Do("EXEC")
	other.Do("SET", "tx1", 1)
	p.Read()
	other.Do("HSET", "tx2", "f", 1)
	p.Read()
	p.Do("EVAL", "return redis.call('get', 'sc1')", 1, "declared")
	other.Do("SET", "sc1", 1)
	p.NoReply(stillBlocked)
	other.Do("SET", "declared", 1)
	p.Read()
	p.Do("EVAL", "return 1", 1, "unread")
	other.Do("SET", "unread", 1)
	p.NoReply(stillBlocked)
	p.Do("EVAL", "redis.call('set', KEYS[1], 1); return 1", 1, "written")
	other.Do("SET", "written", 2)
	p.NoReply(stillBlocked)
	p.Do("EVAL_RO", "return redis.call('get', KEYS[1])", 1, "ro1")
	other.Do("SET", "ro1", 1)
	p.Read()
	p.Do("CLIENT", "TRACKING", "off")

	p.Do("CLIENT", "TRACKING", "on", "OPTIN")
	p.Do("CLIENT", "CACHING", "yes")
	p.Do("MULTI")
	p.Do("GET", "in1")
	p.Do("GET", "in2")
	p.Do("EXEC")
	p.Do("GET", "out1")
	other.Do("MSET", "in1", 1, "in2", 2, "out1", 3)
	p.Read()
	p.Read()
	p.NoReply(stillBlocked)
	p.Do("CLIENT", "CACHING", "yes")
	p.Do("EVAL", "redis.call('get', 'x'); return redis.call('get', 'y')", 2, "sin1", "sin2")
	other.Do("MSET", "sin1", 1, "sin2", 2)
	p.Read()
	p.Read()
}

// TestResetEndsTracking: RESET turns CLIENT TRACKING off, its options
// (redirection, prefixes, BCAST) with it, as Redis does.
func TestResetEndsTracking(t *testing.T) {
	p := difftest.StartIsolated(t)
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		p.Do("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a:")
		p.Do("RESET")
		p.Do("CLIENT", "TRACKINGINFO")
		p.Do("CLIENT", "TRACKING", "ON", "OPTIN")
		p.Do("RESET")
		p.Do("CLIENT", "TRACKINGINFO")
		p.Do("CLIENT", "GETREDIR")
	}
}

// TestTrackingTableLimit: lowering tracking-table-max-keys with CONFIG SET
// forgets remembered keys at once, telling their readers (Redis picks them
// at random: only the number of messages is compared).
func TestTrackingTableLimit(t *testing.T) {
	p := difftest.StartIsolated(t)
	a := p.NewConn()
	a.Proto(3)
	a.Do("CLIENT", "TRACKING", "on")
	a.Do("MGET", "k1", "k2", "k3", "k4")
	p.Do("CONFIG", "SET", "tracking-table-max-keys", 1)
	for _, c := range []*difftest.Client{a.Redis(), a.Keyhive()} {
		forgot := map[string]bool{}
		for range 3 {
			r := c.Read()
			if r.Kind != difftest.KindPush || len(r.Elems) != 2 || r.Elems[0].Str != "invalidate" || len(r.Elems[1].Elems) != 1 {
				t.Fatalf("%s: not an invalidation of one key: %q", c.Name(), r.Raw)
			}
			forgot[r.Elems[1].Elems[0].Str] = true
		}
		if len(forgot) != 3 {
			t.Errorf("%s: invalidated %v", c.Name(), forgot)
		}
	}
	a.Do("PING")
	p.Do("MSET", "k1", 1, "k2", 2, "k3", 3, "k4", 4)
	for _, c := range []*difftest.Client{a.Redis(), a.Keyhive()} {
		if r := c.Read(); r.Kind != difftest.KindPush || len(r.Elems) != 2 || len(r.Elems[1].Elems) != 1 {
			t.Errorf("%s: the key still remembered: %q", c.Name(), r.Raw)
		}
	}
	p.Do("CONFIG", "SET", "tracking-table-max-keys", 0)
}

// TestTrackingFlushNoloop: a flush tells every tracking client, the
// flushing one too, even with NOLOOP (after its reply), and empties the
// table: a key read before it is not invalidated again.
func TestTrackingFlushNoloop(t *testing.T) {
	p := difftest.Start(t)
	other := p.NewConn()
	p.Proto(3)
	other.Proto(3)
	p.Do("CLIENT", "TRACKING", "on", "NOLOOP")
	other.Do("CLIENT", "TRACKING", "on", "BCAST")
	p.Do("GET", "k")
	p.Do("FLUSHDB")
	p.Read()
	other.Read()
	p.Do("SELECT", 1)
	p.Do("FLUSHALL")
	p.Read()
	other.Read()
	other.Do("SET", "k", 1)
	p.NoReply(stillBlocked)
}

// TestTrackingBlockedPop: a blocked client served a pop or move gets its
// reply before the invalidation of the keys its own command changed; a key
// another client's push changed is invalidated before.
func TestTrackingBlockedPop(t *testing.T) {
	p := difftest.Start(t)
	other := p.NewConn()
	p.Proto(3)
	p.Do("CLIENT", "TRACKING", "on")
	p.Do("GET", "dst")
	p.Send("BLMOVE", "src", "dst", "LEFT", "RIGHT", 0)
	p.NoReply(stillBlocked)
	other.Do("RPUSH", "src", "x")
	p.Read() // "x"
	p.Read() // invalidate [dst]
	p.Do("GET", "q")
	p.Do("LRANGE", "dst", 0, -1)
	p.Send("BLPOP", "q", 0)
	p.NoReply(stillBlocked)
	other.Do("RPUSH", "q", "y")
	p.Read() // invalidate [q], by the push
	p.Read()
	p.Do("CLIENT", "TRACKING", "on", "NOLOOP")
	p.Do("GET", "dst")
	p.Send("BLMOVE", "src", "dst", "LEFT", "RIGHT", 0)
	p.NoReply(stillBlocked)
	other.Do("RPUSH", "src", "z")
	p.Read()
	p.NoReply(stillBlocked) // NOLOOP: its own move says nothing
}
