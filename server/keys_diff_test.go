package server_test

// Differential tests of the generic key commands (and DBSIZE, FLUSHDB,
// FLUSHALL, SWAPDB, SELECT) against redis-server. Wrong-type cases are not
// covered yet: Keyhive has no command that creates a non-string value.

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// skScanIterate runs a full SCAN iteration on one side and returns how many
// times each key was returned. It fails the test if the iteration does not
// end within maxCalls calls.
func skScanIterate(t testing.TB, c *difftest.Client, maxCalls int, opts ...string) map[string]int {
	t.Helper()
	seen := map[string]int{}
	cursor := "0"
	for calls := 0; ; calls++ {
		if calls == maxCalls {
			t.Fatalf("%s: SCAN did not finish within %d calls", c.Name(), maxCalls)
		}
		r := c.Do("SCAN", cursor, opts)
		if r.Kind != difftest.KindArray || len(r.Elems) != 2 {
			t.Fatalf("%s: SCAN %s replied %s", c.Name(), cursor, r)
		}
		for _, k := range r.Elems[1].Elems {
			seen[k.Str]++
		}
		cursor = r.Elems[0].Str
		if cursor == "0" {
			return seen
		}
	}
}

// skSameKeys reports keys returned by one side's iteration and not the other's.
func skSameKeys(t testing.TB, redis, keyhive map[string]int) {
	t.Helper()
	for k := range redis {
		if keyhive[k] == 0 {
			t.Errorf("SCAN iteration: key %q returned by redis only", k)
		}
	}
	for k := range keyhive {
		if redis[k] == 0 {
			t.Errorf("SCAN iteration: key %q returned by keyhive only", k)
		}
	}
}

// skMset stores n keys prefix0..prefix(n-1) on both sides.
func skMset(p *difftest.Pair, prefix string, n int) {
	args := []string{"MSET"}
	for i := range n {
		args = append(args, prefix+strconv.Itoa(i), strconv.Itoa(i))
	}
	p.Do(args)
}

func TestKeyDelUnlinkExists(t *testing.T) {
	p := difftest.Start(t)
	for _, del := range []string{"DEL", "UNLINK", "del", "unlink"} {
		p.Do("MSET", "a", "1", "b", "2", "c", "3", "\x00\r\n", "4", "", "5")
		p.Do("EXISTS", "a", "b", "c", "d")
		p.Do("EXISTS", "a", "a", "a")
		p.Do("EXISTS", "d", "d")
		p.Do("EXISTS", "\x00\r\n", "")
		p.Do(del, "missing")
		p.Do(del, "a", "a")
		p.Do(del, "b", "c", "d", "b")
		p.Do(del, "\x00\r\n", "")
		p.Do("EXISTS", "a", "b", "c", "\x00\r\n", "")
		p.Do(del)
		p.Do("DBSIZE")
	}
	// An expired key is not counted.
	p.Do("SET", "e", "v", "PX", "20")
	p.Do("SET", "f", "v", "PX", "20")
	p.Do("EXISTS", "e")
	skSleep(50)
	p.Do("EXISTS", "e")
	p.Do("DEL", "e", "f")
	p.Do("EXISTS")
	p.Do("exists", "x")
}

func TestKeyType(t *testing.T) {
	p := difftest.Start(t)
	p.Do("TYPE", "missing")
	p.Do("SET", "s", "v")
	p.Do("TYPE", "s")
	p.Do("SET", "i", "123")
	p.Do("TYPE", "i")
	p.Do("SET", "t", "v", "PX", "20")
	p.Do("TYPE", "t")
	skSleep(50)
	p.Do("TYPE", "t")
	p.Do("DEL", "s")
	p.Do("TYPE", "s")
	p.Do("TYPE")
	p.Do("TYPE", "a", "b")
}

func TestKeyRename(t *testing.T) {
	p := difftest.Start(t)
	for _, cmd := range []string{"RENAME", "RENAMENX"} {
		p.Do("FLUSHDB")
		p.Do(cmd, "missing", "x")
		p.Do(cmd, "missing", "missing")
		p.Do("SET", "a", "1")
		p.Do(cmd, "a", "a")
		p.Do("GET", "a")
		p.Do(cmd, "a", "b")
		p.Do("MGET", "a", "b")
		// TTL moves with the key.
		p.Do("SET", "t", "v", "EX", "100")
		p.Do(cmd, "t", "t2")
		skState(t, p, "t")
		skState(t, p, "t2")
		// An existing destination: replaced by RENAME (losing its TTL),
		// kept by RENAMENX.
		p.Do("SET", "src", "s")
		p.Do("SET", "dst", "d", "EX", "100")
		p.Do(cmd, "src", "dst")
		skState(t, p, "src")
		skState(t, p, "dst")
		p.Do("SET", "src", "s", "EX", "200")
		p.Do("SET", "dst", "d")
		p.Do(cmd, "src", "dst")
		skState(t, p, "src")
		skState(t, p, "dst")
		// Binary names and the encoding are kept.
		p.Do("SET", "\x00a\r\n", "123")
		p.Do(cmd, "\x00a\r\n", "\xff")
		p.Do("GET", "\xff")
		p.Do("OBJECT", "ENCODING", "\xff")
		p.Do("SET", "e", strings.Repeat("x", 50))
		p.Do(cmd, "e", "")
		p.Do("OBJECT", "ENCODING", "")
		p.Do("STRLEN", "")
		// An expired source is missing; an expired destination is free.
		p.Do("SET", "x", "v", "PX", "20")
		p.Do("SET", "y", "w", "PX", "20")
		p.Do("SET", "z", "w")
		skSleep(50)
		p.Do(cmd, "x", "z")
		p.Do(cmd, "z", "y")
		skState(t, p, "y")
		p.Do("EXISTS", "x", "z")
		p.Do(cmd, "a")
		p.Do(cmd, "a", "b", "c")
		p.Do("DBSIZE")
	}
}

func TestKeyCopy(t *testing.T) {
	p := difftest.Start(t)
	p.Do("COPY", "missing", "x")
	p.Do("SET", "a", "1")
	p.Do("COPY", "a", "b")
	p.Do("MGET", "a", "b")
	p.Do("SET", "a", "2")
	p.Do("COPY", "a", "b")
	p.Do("GET", "b")
	p.Do("COPY", "a", "b", "REPLACE")
	p.Do("GET", "b")
	p.Do("COPY", "a", "b", "replace", "REPLACE")
	p.Do("COPY", "a", "a")
	p.Do("COPY", "a", "a", "REPLACE")
	p.Do("COPY", "a", "a", "DB", "0")
	p.Do("COPY", "missing", "missing")
	p.Do("COPY", "a", "a", "DB", "1")
	p.Do("COPY", "a", "a", "db", "1")
	p.Do("COPY", "a", "a", "DB", "1", "REPLACE")
	p.Do("SELECT", "1")
	p.Do("GET", "a")
	p.Do("COPY", "a", "c", "DB", "0")
	p.Do("SELECT", "0")
	p.Do("GET", "c")
	// Bad options, checked before the keys.
	for _, opts := range [][]string{
		{"DB", "16"}, {"DB", "-1"}, {"DB", "abc"}, {"DB", ""}, {"DB", "4294967296"}, {"DB", "2147483648"},
		{"DB", "9223372036854775808"}, {"DB", "1.0"}, {"DB"}, {"REPLACE", "DB"}, {"FOO"}, {"REPLACE", "x"},
		{"DB", "1", "DB", "2"}, {"DB", "1", "DB", "99"}, {"DB", " 1"},
	} {
		p.Do("COPY", "a", "x", opts)
		p.Do("COPY", "missing", "x", opts)
		p.Do("COPY", "a", "a", opts)
	}
	p.Do("EXISTS", "x")
	// TTLs: the source's is copied, the destination's dropped.
	p.Do("SET", "t", "v", "EX", "100")
	p.Do("COPY", "t", "t2")
	skState(t, p, "t2")
	p.Do("SET", "nt", "v")
	p.Do("COPY", "nt", "t2", "REPLACE")
	skState(t, p, "t2")
	p.Do("COPY", "t", "t3", "DB", "2")
	p.Do("SELECT", "2")
	skState(t, p, "t3")
	p.Do("SELECT", "0")
	// Encodings are kept; the copy is independent of the source.
	for i, v := range []string{"123", "12345", "abc", strings.Repeat("r", 60), "", "\x00\xff"} {
		src, dst := "src"+strconv.Itoa(i), "dst"+strconv.Itoa(i)
		p.Do("SET", src, v)
		p.Do("COPY", src, dst)
		p.Do("OBJECT", "ENCODING", dst)
		p.Do("APPEND", dst, "!")
		p.Do("MGET", src, dst)
	}
	p.Do("SET", "shared", "123")
	p.Do("COPY", "shared", "copied")
	p.DoDifferent("Keyhive does not share objects: OBJECT REFCOUNT reports small integers as shared whoever made them", "OBJECT", "REFCOUNT", "copied")
	// An expired source copies nothing; an expired destination is replaced.
	p.Do("SET", "es", "v", "PX", "20")
	p.Do("SET", "ed", "v", "PX", "20")
	skSleep(50)
	p.Do("COPY", "es", "n")
	p.Do("COPY", "a", "ed")
	p.Do("GET", "ed")
	p.Do("COPY", "a")
	p.Do("COPY")
}

func TestKeyMove(t *testing.T) {
	p := difftest.Start(t)
	p.Do("SET", "k", "v")
	p.Do("MOVE", "k", "1")
	p.Do("GET", "k")
	p.Do("SELECT", "1")
	p.Do("GET", "k")
	p.Do("MOVE", "k", "0")
	p.Do("SELECT", "0")
	p.Do("GET", "k")
	p.Do("MOVE", "missing", "1")
	p.Do("MOVE", "k", "0")
	p.Do("MOVE", "missing", "0")
	for _, db := range []string{"16", "-1", "abc", "", "4294967296", "2147483648", "1.0", " 1", "9223372036854775808"} {
		p.Do("MOVE", "k", db)
		p.Do("MOVE", "missing", db)
	}
	// The target key exists: nothing moves.
	p.Do("SELECT", "3")
	p.Do("SET", "k", "other")
	p.Do("SELECT", "0")
	p.Do("MOVE", "k", "3")
	p.Do("GET", "k")
	// TTL and encoding move with the key.
	p.Do("SET", "t", "12345", "EX", "100")
	p.Do("MOVE", "t", "4")
	p.Do("SELECT", "4")
	skState(t, p, "t")
	p.Do("OBJECT", "ENCODING", "t")
	// An expired key is not moved; an expired target key does not block.
	p.Do("SET", "e", "v", "PX", "20")
	p.Do("SET", "b", "old", "PX", "20")
	p.Do("SELECT", "0")
	p.Do("SET", "b", "new")
	skSleep(50)
	p.Do("MOVE", "b", "4")
	p.Do("SELECT", "4")
	p.Do("MOVE", "e", "0")
	p.Do("GET", "b")
	p.Do("DBSIZE")
	p.Do("MOVE", "k")
	p.Do("MOVE", "k", "1", "2")
}

// skGlobKeys are keys with every character glob patterns treat specially.
var skGlobKeys = []string{
	"hello", "hallo", "hxllo", "hllo", "heeeello", "h*llo", "h?llo", "h[a]llo", "h\\llo", "h-llo", "h]llo", "h^llo",
	"a", "ab", "abc", "abcabc", "aXbXc", "A", "B", "z", "foo:bar:baz", "foo:1", "foo:", ":foo", "x\x00y",
	"\xff", "\xfe\xff", "[", "]", "-", "^", "\\", "*", "?", "a-b", "abc\r\n", "user:1000", "user:{1}:name",
	"ääh", "a*b", "a?c", "[abc]", "\\x", "",
}

var skGlobPatterns = []string{
	"*", "**", "***", "h?llo", "h*llo", "h[ae]llo", "h[^e]llo", "h[!e]llo", "h[a-b]llo", "h[b-a]llo",
	"h[a-z]llo", "h[z-a]llo", "h\\*llo", "h\\?llo", "h\\[a]llo", "h\\\\llo", "*\\[*", "[", "[a", "[a-", "[a-]", "[]",
	"[]]", "[\\]]", "[^]", "[^]]", "\\", "a\\", "\\a", "*a*b*", "*a*b*c", "*o*o*", "?", "??", "???", "", "[a-c]*",
	"[A-C]", "[[]", "[\\-]", "*[", "x\x00y", "x?y", "x*y", "\xff", "[\xfe-\xff]", "*:*:*", "foo:*", "*:*", "[^a-z]*",
	"h[e-]llo", "h[-e]llo", "h[-]llo", "h[^-]llo", "user:*", "user:{*}:*", "*{*", "a[bc", "a[b-", "[^",
	"[a-c][a-c][a-c]", "*c", "*abc", "a*", "abc*abc", "*x", "h[\\]]llo", "h[\\^]llo", "[*]", "[?]", "\\*", "\\?",
	"?*", "*?", "*?*?*?", "ä*", "[ä]*", "h[a-]llo", "[-a]", "[a-z-]", "*\r\n", "\\\\", "\\x",
}

func TestKeysGlob(t *testing.T) {
	p := difftest.Start(t)
	p.Do("KEYS", "*")
	p.Do("KEYS", "")
	args := []string{"MSET"}
	for _, k := range skGlobKeys {
		args = append(args, k, "v")
	}
	p.Do(args)
	for _, pat := range skGlobPatterns {
		p.DoUnordered("KEYS", pat)
		p.DoCompare(skScanAll, "SCAN", "0", "MATCH", pat, "COUNT", "100000")
	}
	// Hostile patterns stay fast.
	p.Do("SET", strings.Repeat("a", 100), "v")
	p.DoUnordered("KEYS", strings.Repeat("*a", 30)+"b")
	p.DoUnordered("KEYS", "*"+strings.Repeat("?", 90)+"*")
	// Expired keys are not listed.
	p.Do("SET", "exp1", "v", "PX", "20")
	p.DoUnordered("KEYS", "exp*")
	skSleep(50)
	p.DoUnordered("KEYS", "exp*")
	p.Do("KEYS")
	p.Do("KEYS", "a", "b")
}

func TestScanBasics(t *testing.T) {
	p := difftest.Start74(t)
	p.Do("SCAN", "0")
	p.Do("SCAN", "0", "COUNT", "1")
	p.Do("SCAN", "0", "MATCH", "*", "TYPE", "string")
	p.Do("SET", "only", "v")
	p.Do("SCAN", "0")
	p.Do("SCAN", "0", "MATCH", "x*")
	p.Do("SCAN", "0", "TYPE", "list")
	p.Do("DEL", "only")
	skMset(p, "key:", 1000)
	p.Do("MSET", "other1", "1", "other2", "2", "\x00bin", "3")
	p.DoCompare(skScanAll, "SCAN", "0", "COUNT", "10000")
	p.DoCompare(skScanAll, "SCAN", "0", "COUNT", "10000", "MATCH", "key:1*")
	p.DoCompare(skScanAll, "SCAN", "0", "MATCH", "other*", "COUNT", "10000")
	p.DoCompare(skScanAll, "scan", "0", "match", "*9", "count", "5000", "type", "STRING")
	for _, typ := range []string{"string", "STRING", "String", "list", "set", "zset", "hash", "stream", "none", "foo", ""} {
		p.DoCompare(skScanAll, "SCAN", "0", "TYPE", typ, "COUNT", "10000")
		p.DoCompare(skScanAll, "SCAN", "0", "COUNT", "10000", "TYPE", typ, "MATCH", "other*")
	}
	p.DoCompare(skScanAll, "SCAN", "0", "COUNT", "10000", "COUNT", "20000")
	p.DoCompare(skScanAll, "SCAN", "0", "MATCH", "nomatch", "COUNT", "10000", "MATCH", "other*")
	p.DoCompare(skScanAll, "SCAN", "0", "COUNT", "9223372036854775807")
	// Option errors.
	for _, opts := range [][]string{
		{"COUNT", "0"}, {"COUNT", "-1"}, {"COUNT", "abc"}, {"COUNT", ""}, {"COUNT", "9223372036854775808"},
		{"COUNT", "1.5"}, {"COUNT"}, {"MATCH"}, {"TYPE"}, {"FOO", "bar"}, {"FOO"}, {"COUNT", "10", "MATCH"},
		{"MATCH", "*", "COUNT", "0"}, {"COUNT", "0", "FOO"}, {"COUNT", "-9223372036854775808"},
	} {
		p.Do("SCAN", "0", opts)
	}
	// Cursors: what is an error must match; valid cursors are
	// implementation-specific positions.
	for _, c := range []string{
		"abc", "", " 1", "1 ", "+1", "-1", "-0", "1.5", "0x10", "18446744073709551615", "18446744073709551616",
		"-18446744073709551615", "-18446744073709551616", "99999999999999999999", "00012", "-", "+", "1a", "\t1",
		"1\x00x", "\x001", "-9223372036854775808", "-9223372036854775809", "-01", "\v-5",
	} {
		p.DoCompare(skScanShape, "SCAN", c)
		p.DoCompare(skScanShape, "SCAN", c, "COUNT", "0")
	}
	p.Do("SCAN")
}

// TestScanFullIteration iterates 1000+ keys with small COUNTs on each side
// and compares the sets of keys returned.
func TestScanFullIteration(t *testing.T) {
	p := difftest.Start(t)
	skMset(p, "k", 1000)
	skMset(p, "other:", 100)
	for _, opts := range [][]string{nil, {"COUNT", "1"}, {"COUNT", "7"}, {"COUNT", "100"}, {"MATCH", "k1*"}, {"MATCH", "other:*", "COUNT", "3"}, {"TYPE", "string", "COUNT", "50"}} {
		r := skScanIterate(t, p.Redis(), 5000, opts...)
		k := skScanIterate(t, p.Keyhive(), 5000, opts...)
		skSameKeys(t, r, k)
	}
	// A cursor is not tied to the connection that got it, and resuming
	// from one mid-iteration completes the iteration.
	k := p.Keyhive()
	r := k.Do("SCAN", "0", "COUNT", "20")
	seen := map[string]bool{}
	for _, e := range r.Elems[1].Elems {
		seen[e.Str] = true
	}
	q := p.NewConn()
	cursor := r.Elems[0].Str
	for calls := 0; cursor != "0"; calls++ {
		if calls > 5000 {
			t.Fatal("SCAN from a resumed cursor did not finish")
		}
		r := q.Keyhive().Do("SCAN", cursor, "COUNT", "20")
		for _, e := range r.Elems[1].Elems {
			seen[e.Str] = true
		}
		cursor = r.Elems[0].Str
	}
	if len(seen) != 1100 {
		t.Errorf("resumed SCAN iteration returned %d distinct keys, want 1100", len(seen))
	}
	// Deleting most keys mid-iteration (shrinking the tables) still returns
	// every key that stayed.
	for _, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
		r := c.Do("SCAN", "0", "COUNT", "50")
		seen := map[string]bool{}
		for _, e := range r.Elems[1].Elems {
			seen[e.Str] = true
		}
		del := []string{"DEL"}
		for i := range 1000 {
			if i%10 != 0 {
				del = append(del, "k"+strconv.Itoa(i))
			}
		}
		c.Do(del)
		cursor := r.Elems[0].Str
		for cursor != "0" {
			r := c.Do("SCAN", cursor, "COUNT", "50")
			for _, e := range r.Elems[1].Elems {
				seen[e.Str] = true
			}
			cursor = r.Elems[0].Str
		}
		for i := 0; i < 1000; i += 10 {
			if !seen["k"+strconv.Itoa(i)] {
				t.Errorf("%s: key k%d present for the whole iteration was not returned", c.Name(), i)
			}
		}
		skMset(p, "k", 1000)
	}
}

// TestScanConcurrentModification iterates Keyhive with SCAN while other
// clients insert and delete keys: every key present for the whole iteration
// must be returned. Half the stable keys and all the churn share four hash
// tags, so four shards' tables grow and shrink many times under the cursor.
// The writers take turns with the SCAN calls, a round per four calls on any
// machine: left free on a loaded one they kept the SCAN waiting for their
// locks for minutes, and one round per call took five minutes under -race
// beside a CPU hog.
func TestScanConcurrentModification(t *testing.T) {
	p := difftest.Start(t)
	addr := p.Keyhive().Addr()
	var stable []string
	for i := range 1000 {
		stable = append(stable, "stable:"+strconv.Itoa(i), fmt.Sprintf("{tag%d}stable:%d", i%4, i))
	}
	p.Keyhive().Do("MSET", skPairs(stable))
	var rounds atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	turns := make(chan struct{}, 2)
	done := make(chan struct{})
	// The writers stop when the test ends, failed or not: the next test
	// shares the server.
	stopWriters := sync.OnceFunc(func() {
		close(done)
		wg.Wait()
	})
	t.Cleanup(stopWriters)
	for w := range 2 {
		wg.Go(func() {
			conn, err := difftest.Dial(addr)
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close()
			conn.Timeout = time.Minute // a DEL of 3000 keys took over 5 s under -race beside a CPU hog
			for round := 0; ; round++ {
				select {
				case <-done:
					return
				case <-turns:
				}
				// Grow two tagged shards by 1500 keys each, then shrink them.
				var keys []string
				for i := range 3000 {
					keys = append(keys, fmt.Sprintf("{tag%d}churn:%d:%d", w+2*(i%2), round, i))
				}
				for _, cmd := range [][]string{append([]string{"MSET"}, skPairs(keys)...), append([]string{"DEL"}, keys...)} {
					if r, err := conn.Do(cmd); err != nil || r.IsError() {
						errs <- fmt.Errorf("%s: %v %s", cmd[0], err, r)
						return
					}
				}
				rounds.Add(1)
			}
		})
	}
	seen := map[string]bool{}
	cursor := "0"
	k := p.Keyhive()
	calls := 0
	for ; ; calls++ {
		if calls > 100_000 {
			t.Fatal("SCAN did not finish")
		}
		r := k.Do("SCAN", cursor, "COUNT", "10")
		for _, e := range r.Elems[1].Elems {
			seen[e.Str] = true
		}
		cursor = r.Elems[0].Str
		if cursor == "0" {
			break
		}
		if calls%4 != 0 {
			continue
		}
		select {
		case turns <- struct{}{}: // a round changes the tables under the cursor
		case err := <-errs:
			t.Fatal(err)
		}
	}
	stopWriters()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	missing := 0
	for _, key := range stable {
		if !seen[key] {
			missing++
		}
	}
	t.Logf("%d SCAN calls during %d insert/delete rounds", calls, rounds.Load())
	if missing > 0 {
		t.Errorf("SCAN under concurrent inserts and deletes missed %d of %d stable keys", missing, len(stable))
	}
}

// skPairs turns keys into MSET arguments, each key its own value.
func skPairs(keys []string) []string {
	out := make([]string, 0, 2*len(keys))
	for _, k := range keys {
		out = append(out, k, k)
	}
	return out
}

func TestKeyRandomKey(t *testing.T) {
	p := difftest.Start(t)
	p.Do("RANDOMKEY")
	p.Do("SET", "only", "v")
	p.Do("RANDOMKEY")
	p.Do("DEL", "only")
	p.Do("SET", "\x00\r\n", "v")
	p.Do("RANDOMKEY")
	p.Do("FLUSHDB")
	p.Do("SET", "", "v")
	p.Do("RANDOMKEY")
	p.Do("RANDOMKEY", "x")
	// Several keys: each side returns one of its keys.
	skMset(p, "r", 50)
	for _, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
		got := map[string]bool{}
		for range 200 {
			r := c.Do("RANDOMKEY")
			n, err := strconv.Atoi(strings.TrimPrefix(r.Str, "r"))
			if r.Kind != difftest.KindBulk || !strings.HasPrefix(r.Str, "r") || err != nil || n >= 50 {
				if r.Str != "" {
					t.Fatalf("%s: RANDOMKEY = %s", c.Name(), r)
				}
			}
			got[r.Str] = true
		}
		if len(got) < 10 {
			t.Errorf("%s: 200 RANDOMKEYs over 50 keys gave only %d distinct keys", c.Name(), len(got))
		}
	}
	// Only expired keys left.
	p.Do("FLUSHDB")
	p.Do("SET", "e1", "v", "PX", "20")
	p.Do("SET", "e2", "v", "PX", "20")
	skSleep(50)
	p.Do("RANDOMKEY")
	p.Proto(3)
	p.Do("RANDOMKEY")
}

func TestKeyTouch(t *testing.T) {
	p := difftest.Start(t)
	p.Do("TOUCH", "missing")
	p.Do("MSET", "a", "x", "b", "y") // not small integers: see TestObjectIdletimeTouch
	p.Do("TOUCH", "a", "b", "c", "a")
	p.Do("SET", "e", "v", "PX", "20")
	skSleep(50)
	p.Do("TOUCH", "e", "a")
	p.Do("TOUCH")
	p.DoApprox(1, "OBJECT", "IDLETIME", "a")
}

// TestExpireOptions runs every expire command with every option combination
// on a missing key, a key without TTL and a key with a TTL.
func TestExpireOptions(t *testing.T) {
	p := difftest.Start(t)
	now := time.Now()
	at := func(d time.Duration) (string, string) {
		return strconv.FormatInt(now.Add(d).Unix(), 10), strconv.FormatInt(now.Add(d).UnixMilli(), 10)
	}
	shortS, shortMs := at(50 * time.Second)
	longS, longMs := at(500 * time.Second)
	cmds := [][]string{
		{"EXPIRE", "50"}, {"EXPIRE", "500"}, {"EXPIRE", "-1"}, {"EXPIRE", "0"},
		{"PEXPIRE", "50000"}, {"PEXPIRE", "500000"}, {"PEXPIRE", "-5"},
		{"EXPIREAT", shortS}, {"EXPIREAT", longS}, {"EXPIREAT", "1"},
		{"PEXPIREAT", shortMs}, {"PEXPIREAT", longMs}, {"PEXPIREAT", "0"},
	}
	flagSets := [][]string{
		nil, {"NX"}, {"XX"}, {"GT"}, {"LT"}, {"nx"}, {"Gt"}, {"NX", "NX"}, {"GT", "GT"},
		{"NX", "XX"}, {"NX", "GT"}, {"NX", "LT"}, {"XX", "NX"}, {"GT", "LT"}, {"LT", "GT"},
		{"XX", "GT"}, {"XX", "LT"}, {"GT", "XX"}, {"NX", "GT", "LT"}, {"FOO"}, {"NX", "FOO"}, {""},
	}
	for state := range 3 {
		for _, c := range cmds {
			for _, f := range flagSets {
				p.Do("DEL", "k")
				switch state {
				case 1:
					p.Do("SET", "k", "v")
				case 2:
					p.Do("SET", "k", "v", "EX", "100")
				}
				p.Do(c[0], "k", c[1], f)
				skState(t, p, "k")
			}
		}
	}
}

// TestExpireValues feeds the expire commands odd numbers and overflows.
func TestExpireValues(t *testing.T) {
	p := difftest.Start(t)
	values := []string{
		"abc", "", "1.5", " 1", "+1", "-0", "0x10",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
		"9223372036854775", "9223372036854776", "-9223372036854775", "-9223372036854776",
		"9223370000000000000", "9223372036854", "92233720368547758",
	}
	for _, cmd := range []string{"EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"} {
		for _, v := range values {
			p.Do("SET", "k", "v")
			p.Do(cmd, "k", v)
			skState(t, p, "k")
			p.Do(cmd, "missing", v)
			// Options are parsed before the time.
			p.Do(cmd, "k", v, "NX", "XX")
			p.Do(cmd, "k", v, "GT", "LT")
			p.Do(cmd, "k", v, "BAD")
			p.Do(cmd, "missing", v, "NX", "GT")
		}
		p.Do(cmd, "k", "10", "a\r\nb")
		p.Do(cmd, "k", "10", "NX", "x\x00y")
		p.Do(cmd, "k")
		p.Do(cmd)
	}
	// A negative time deletes the key; GT/LT still apply first.
	p.Do("SET", "k", "v", "EX", "100")
	p.Do("EXPIRE", "k", "-10", "GT")
	skState(t, p, "k")
	p.Do("EXPIRE", "k", "-10", "LT")
	skState(t, p, "k")
	p.Do("SET", "k", "v")
	p.Do("EXPIRE", "k", "-10", "LT")
	skState(t, p, "k")
	p.Do("SET", "k", "v")
	p.Do("PEXPIREAT", "k", "-9223372036854775808")
	skState(t, p, "k")
}

func TestExpireTTLCommands(t *testing.T) {
	p := difftest.Start(t)
	for _, cmd := range []string{"TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"} {
		p.Do(cmd, "missing")
		p.Do("SET", "k", "v")
		p.Do(cmd, "k")
		p.Do(cmd)
		p.Do(cmd, "a", "b")
	}
	// Absolute times compare exactly, including EXPIRETIME's rounding.
	base := (time.Now().Unix() + 1000) * 1000
	for _, off := range []int64{0, 1, 499, 500, 501, 999} {
		ms := strconv.FormatInt(base+off, 10)
		p.Do("PEXPIREAT", "k", ms)
		p.Do("EXPIRETIME", "k")
		p.Do("PEXPIRETIME", "k")
		p.DoApprox(1, "TTL", "k")
		p.DoApprox(1000, "PTTL", "k")
	}
	p.Do("EXPIREAT", "k", strconv.FormatInt(base/1000, 10))
	p.Do("EXPIRETIME", "k")
	p.Do("PEXPIRETIME", "k")
	p.Do("PEXPIREAT", "k", "9223372036854775807")
	p.Do("EXPIRETIME", "k")
	p.Do("PEXPIRETIME", "k")
	p.DoApprox(2, "TTL", "k")
	p.Do("SET", "k", "v", "PXAT", "9223372036854775000")
	p.Do("EXPIRETIME", "k")
	p.Do("SET", "k", "v", "EXAT", "9223372036854775")
	p.Do("PEXPIRETIME", "k")
	// PERSIST.
	p.Do("PERSIST", "missing")
	p.Do("SET", "k", "v")
	p.Do("PERSIST", "k")
	p.Do("EXPIRE", "k", "100")
	p.Do("PERSIST", "k")
	p.Do("PERSIST", "k")
	skState(t, p, "k")
	p.Do("PEXPIRE", "k", "20")
	skSleep(50)
	p.Do("PERSIST", "k")
	p.Do("PERSIST")
	p.Do("PERSIST", "a", "b")
	// A TTL survives overwriting commands that keep it and lapses on time.
	p.Do("SET", "k", "v")
	p.Do("PEXPIRE", "k", "60")
	p.Do("APPEND", "k", "x")
	p.Do("SETRANGE", "k", "0", "y")
	p.Do("INCRBYFLOAT", "missing-f", "1")
	p.Do("EXPIRE", "k", "100", "LT")
	skState(t, p, "k")
}

// TestExpireLazy checks that an expired key is gone for every key command.
func TestExpireLazy(t *testing.T) {
	p := difftest.Start(t)
	cases := [][]string{
		{"EXISTS", "k"}, {"TYPE", "k"}, {"TTL", "k"}, {"PTTL", "k"}, {"EXPIRETIME", "k"}, {"PEXPIRETIME", "k"},
		{"PERSIST", "k"}, {"EXPIRE", "k", "100"}, {"PEXPIREAT", "k", "99999999999999"}, {"DEL", "k"},
		{"UNLINK", "k"}, {"TOUCH", "k"}, {"RENAME", "k", "n"}, {"RENAMENX", "k", "n"}, {"COPY", "k", "n"},
		{"MOVE", "k", "1"}, {"OBJECT", "ENCODING", "k"}, {"OBJECT", "REFCOUNT", "k"}, {"KEYS", "k"},
		{"SCAN", "0", "MATCH", "k", "COUNT", "100000"},
	}
	// One key per case, all expiring together: "k" and "n" stand for the
	// case's own names.
	name := func(s string, i int) string {
		if s == "k" || s == "n" {
			return s + strconv.Itoa(i)
		}
		return s
	}
	cmds := make([][]string, len(cases))
	for i, c := range cases {
		for _, a := range c {
			cmds[i] = append(cmds[i], name(a, i))
		}
		p.Do("SET", name("k", i), "v", "PX", "30")
	}
	p.Do("EXISTS", name("k", 0))
	skSleep(60)
	for i, c := range cmds {
		p.DoUnordered(c)
		skState(t, p, name("k", i))
		p.Do("EXISTS", name("n", i))
	}
	p.Do("RANDOMKEY")
	p.Do("DBSIZE")
}

// TestExpireActive turns active expiry off, checks that expired keys still
// count in DBSIZE until touched, then turns it back on and waits for the
// background cycle to remove the rest.
func TestExpireActive(t *testing.T) {
	p := difftest.StartIsolated(t)
	p.Do("DEBUG", "SET-ACTIVE-EXPIRE", "0")
	args := []string{"MSET"}
	for i := range 20 {
		args = append(args, "e"+strconv.Itoa(i), "v")
	}
	p.Do(args)
	for i := range 20 {
		p.Do("PEXPIRE", "e"+strconv.Itoa(i), "30")
	}
	p.Do("SET", "keep", "v")
	skSleep(100)
	p.Do("DBSIZE")
	p.DoUnordered("KEYS", "*")
	p.Do("DBSIZE")
	p.Do("GET", "e0")
	p.Do("EXISTS", "e1", "e2")
	p.Do("DBSIZE")
	p.DoCompare(skScanAll, "SCAN", "0", "MATCH", "nomatch", "COUNT", "1000")
	p.Do("DBSIZE")
	p.DoCompare(skScanAll, "SCAN", "0", "MATCH", "e1*", "COUNT", "1000")
	p.Do("DBSIZE")
	// Times already past: stored, deleted at once, or left to expire.
	p.Do("SET", "past", "v", "PXAT", "1")
	p.Do("DBSIZE")
	p.Do("SET", "g", "v")
	p.Do("GETEX", "g", "PXAT", "1")
	p.Do("DBSIZE")
	p.Do("SET", "d", "v")
	p.Do("EXPIRE", "d", "-1")
	p.Do("DBSIZE")
	p.Do("SET", "d", "v", "EX", "100")
	p.Do("PEXPIREAT", "d", "1", "GT")
	p.Do("PEXPIREAT", "d", "1", "LT")
	p.Do("DBSIZE")
	p.Do("TYPE", "past")
	p.Do("DBSIZE")
	p.Do("DEBUG", "SET-ACTIVE-EXPIRE", "1")
	deadline := time.Now().Add(5 * time.Second)
	for _, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
		for {
			r := c.Do("DBSIZE")
			if r.Int == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: active expiry left DBSIZE at %d", c.Name(), r.Int)
			}
			skSleep(20)
		}
	}
	// Many volatile keys, most expiring: active expiry removes them all
	// without any access.
	args = []string{"MSET"}
	for i := range 2000 {
		args = append(args, "m"+strconv.Itoa(i), "v")
	}
	p.Do(args)
	for i := range 2000 {
		ms := "40"
		if i%100 == 0 {
			ms = "100000"
		}
		p.Do("PEXPIRE", "m"+strconv.Itoa(i), ms)
	}
	deadline = time.Now().Add(5 * time.Second)
	for _, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
		for {
			r := c.Do("DBSIZE")
			if r.Int == 21 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: active expiry left DBSIZE at %d, want 21", c.Name(), r.Int)
			}
			skSleep(20)
		}
	}
	p.DoUnordered("KEYS", "*")
}

func TestObjectCommand(t *testing.T) {
	p := difftest.Start(t)
	p.Do("OBJECT", "HELP", "extra")
	p.Do("OBJECT")
	p.Do("OBJECT", "FOO")
	p.Do("OBJECT", "FOO", "k")
	for _, sub := range []string{"ENCODING", "REFCOUNT", "IDLETIME", "FREQ", "encoding"} {
		p.Do("OBJECT", sub, "missing")
		p.Do("OBJECT", sub)
		p.Do("OBJECT", sub, "a", "b")
	}
	p.Do("SET", "k", "v")
	p.Do("OBJECT", "ENCODING", "k")
	p.Do("OBJECT", "REFCOUNT", "k")
	p.DoApprox(1, "OBJECT", "IDLETIME", "k")
	p.Do("OBJECT", "FREQ", "k")
	p.Proto(3)
	p.Do("OBJECT", "ENCODING", "missing")
	p.Do("OBJECT", "ENCODING", "k")
}

// TestObjectLFU checks OBJECT FREQ and IDLETIME under an LFU policy, and which
// commands count as accesses or keep the counter (RENAME and MOVE start it
// over in Redis 7.2+).
func TestObjectLFU(t *testing.T) {
	// lfu-log-factor 0 makes every access increment the counter; with the
	// default, increments above 5 are random on both servers.
	p := difftest.Start74(t, "--maxmemory-policy", "allkeys-lfu", "--lfu-log-factor", "0")
	p.Do("SET", "k", "v")
	p.Do("OBJECT", "IDLETIME", "k")
	p.Do("OBJECT", "FREQ", "k")
	p.Do("GET", "k")
	p.Do("OBJECT", "FREQ", "k")
	p.Do("SET", "k", "w")
	p.Do("OBJECT", "FREQ", "k")
	// Not integers: Redis would share the objects of 1 and 2, and their one
	// counter, with every test that ran before on this server.
	p.Do("MSET", "a", "x", "b", "y")
	p.Do("OBJECT", "FREQ", "a")
	p.Do("EXISTS", "a")
	p.Do("TYPE", "a")
	p.Do("OBJECT", "FREQ", "a")
	p.Do("GET", "a")
	p.Do("OBJECT", "FREQ", "a")
	p.Do("RENAME", "a", "c")
	p.Do("OBJECT", "FREQ", "c")
	p.Do("COPY", "c", "d")
	p.Do("OBJECT", "FREQ", "d")
	p.Do("SET", "e", "z")
	p.Do("GET", "e")
	p.Do("RENAME", "d", "e") // over a key with a higher counter: Redis 7.2+ starts the counter over
	p.Do("OBJECT", "FREQ", "e")
	p.Do("MOVE", "c", "1")
	p.Do("SELECT", "1")
	p.Do("OBJECT", "FREQ", "c")
	p.Do("SELECT", "0")
	p.Do("SET", "n", "123")
	p.Do("OBJECT", "REFCOUNT", "n")
	p.Do("OBJECT", "ENCODING", "n")
}

// TestObjectLFUConfigSet switches to and from LFU at run time.
func TestObjectLFUConfigSet(t *testing.T) {
	p := difftest.StartIsolated(t)
	p.Do("OBJECT", "FREQ", "k")
	p.Do("CONFIG", "SET", "maxmemory-policy", "volatile-lfu")
	p.Do("SET", "k", "v")
	p.Do("OBJECT", "FREQ", "k")
	p.Do("GET", "k")
	p.Do("OBJECT", "FREQ", "k")
	p.Do("CONFIG", "SET", "lfu-log-factor", "0")
	for range 20 {
		p.Do("GET", "k")
	}
	p.Do("OBJECT", "FREQ", "k")
	p.Do("CONFIG", "SET", "maxmemory-policy", "noeviction")
	p.Do("SET", "j", "v")
	p.DoApprox(1, "OBJECT", "IDLETIME", "j")
}

func TestObjectLRURefcount(t *testing.T) {
	p := difftest.Start(t, "--maxmemory-policy", "allkeys-lru")
	p.Do("SET", "n", "123")
	p.Do("OBJECT", "REFCOUNT", "n")
	p.Do("OBJECT", "ENCODING", "n")
	p.Do("OBJECT", "FREQ", "n")
	// Not "n": Redis's shared integer objects share one access time.
	p.Do("SET", "s", "v")
	p.DoApprox(1, "OBJECT", "IDLETIME", "s")
}

func TestObjectRefcountMaxmemory(t *testing.T) {
	p := difftest.Start(t, "--maxmemory", "1gb", "--maxmemory-policy", "allkeys-lru")
	p.Do("SET", "n", "123")
	p.Do("OBJECT", "REFCOUNT", "n")
	p.Do("INCR", "n")
	p.Do("OBJECT", "REFCOUNT", "n")
	p.Do("OBJECT", "ENCODING", "n")
}

func TestFlushDBAll(t *testing.T) {
	p := difftest.Start(t)
	for _, cmd := range []string{"FLUSHDB", "FLUSHALL"} {
		for _, opt := range [][]string{nil, {"ASYNC"}, {"SYNC"}, {"async"}, {"Sync"}, {"FOO"}, {"ASYNC", "SYNC"}, {"SYNC", "extra"}, {""}} {
			p.Do("SELECT", "0")
			skMset(p, "k", 10)
			p.Do("SELECT", "1")
			skMset(p, "j", 5)
			p.Do(cmd, opt)
			p.Do("DBSIZE")
			p.DoUnordered("KEYS", "*")
			p.Do("SELECT", "0")
			p.Do("DBSIZE")
			p.Do("FLUSHALL")
		}
	}
	p.Do("SET", "t", "v", "EX", "100")
	p.Do("FLUSHDB")
	skState(t, p, "t")
	p.Do("FLUSHDB")
	p.Do("FLUSHALL")
	p.Do("DBSIZE", "x")
}

func TestSwapDB(t *testing.T) {
	p := difftest.Start(t)
	p.Do("SET", "a", "in0")
	p.Do("SET", "t", "v", "EX", "100")
	p.Do("SELECT", "1")
	p.Do("SET", "a", "in1")
	p.Do("SET", "b", "only1")
	q := p.NewConn() // stays in db 0
	p.Do("SWAPDB", "0", "1")
	p.Do("MGET", "a", "b", "t")
	skState(t, p, "t")
	q.Do("MGET", "a", "b", "t")
	q.Do("DBSIZE")
	p.Do("DBSIZE")
	p.Do("SWAPDB", "1", "0")
	q.Do("MGET", "a", "b")
	p.Do("SWAPDB", "0", "0")
	q.Do("GET", "a")
	p.Do("SWAPDB", "0", "15")
	q.Do("DBSIZE")
	p.Do("SWAPDB", "15", "0")
	for _, pair := range [][2]string{
		{"0", "16"}, {"16", "0"}, {"-1", "0"}, {"0", "-1"}, {"abc", "0"}, {"0", "abc"}, {"abc", "abc"},
		{"", "0"}, {"4294967296", "0"}, {"0", "4294967296"}, {"2147483648", "0"}, {"1.0", "0"}, {"16", "abc"},
	} {
		p.Do("SWAPDB", pair[0], pair[1])
	}
	p.Do("SWAPDB", "0")
	p.Do("SWAPDB", "0", "1", "2")
	q.Do("GET", "a")
}

func TestSelectDB(t *testing.T) {
	p := difftest.Start(t)
	for i := range 16 {
		p.Do("SELECT", strconv.Itoa(i))
		p.Do("SET", "k", "db"+strconv.Itoa(i))
	}
	for i := range 16 {
		p.Do("SELECT", strconv.Itoa(i))
		p.Do("GET", "k")
		p.Do("DBSIZE")
	}
	for _, db := range []string{"16", "-1", "abc", "", "1.0", " 1", "+1", "01", "2147483648", "-2147483649", "4294967296", "-4294967296", "9223372036854775808"} {
		p.Do("SELECT", db)
	}
	p.Do("GET", "k") // still in db 15
	p.Do("SELECT")
	p.Do("SELECT", "1", "2")
	q := p.NewConn()
	q.Do("GET", "k")
}

// TestKeyRESP3 checks key command replies under RESP3.
func TestKeyRESP3(t *testing.T) {
	p := difftest.Start(t)
	p.Proto(3)
	p.Do("SET", "k", "v")
	p.Do("TYPE", "k")
	p.Do("TYPE", "missing")
	p.Do("EXISTS", "k", "missing")
	p.Do("TTL", "k")
	p.Do("PTTL", "missing")
	p.Do("EXPIRETIME", "k")
	p.DoUnordered("KEYS", "*")
	p.Do("SCAN", "0", "MATCH", "k")
	p.Do("COPY", "k", "k2")
	p.Do("RENAME", "missing", "x")
	p.Do("RENAMENX", "k", "k2")
	p.Do("MOVE", "k", "1")
	p.Do("RANDOMKEY")
	p.Do("OBJECT", "REFCOUNT", "missing")
	p.Do("DBSIZE")
	p.Do("FLUSHDB")
	p.Do("RANDOMKEY")
	p.Do("SCAN", "0")
}

// TestObjectIdletimeTouch checks which commands update a key's access time:
// after two idle seconds, OBJECT IDLETIME tells touched keys (0) from the
// others (2) on both servers.
func TestObjectIdletimeTouch(t *testing.T) {
	p := difftest.Start(t)
	cmds := [][]string{
		{"EXISTS", "k"}, {"TYPE", "k"}, {"TTL", "k"}, {"PTTL", "k"}, {"EXPIRETIME", "k"}, {"PEXPIRETIME", "k"},
		{"OBJECT", "ENCODING", "k"}, {"OBJECT", "REFCOUNT", "k"}, {"KEYS", "k"}, {"SCAN", "0", "MATCH", "k", "TYPE", "string", "COUNT", "100000"},
		{"TOUCH", "k"}, {"GET", "k"}, {"STRLEN", "k"}, {"GETRANGE", "k", "0", "1"}, {"MGET", "k"}, {"GETEX", "k"},
		{"SET", "k", "v", "NX"}, {"SETNX", "k", "v"}, {"MSETNX", "k", "v"}, {"PERSIST", "k"}, {"EXPIRE", "k", "100", "GT"},
		{"COPY", "k", "n"}, {"COPY", "other", "k"}, {"COPY", "other", "k", "DB", "0"}, {"MOVE", "k", "1"}, {"MOVE", "other", "1"},
		{"RENAMENX", "k", "other"}, {"RENAMENX", "other", "k"}, {"RENAME", "k", "n"}, {"SET", "k", "new", "KEEPTTL", "XX"},
		{"APPEND", "k", ""}, {"SETRANGE", "k", "0", ""}, {"INCRBYFLOAT", "k", "0"}, {"DEBUG", "OBJECT", "k"},
	}
	name := func(s string, i int) string {
		if s == "k" || s == "n" {
			return s + strconv.Itoa(i)
		}
		return s
	}
	// Values are not small integers: Redis shares those between keys, and
	// with them their access time.
	p.Do("SET", "other", "o")
	p.Do("SELECT", "1")
	for i := range cmds {
		p.Do("SET", name("k", i), "1.5") // MOVE's target keys exist
	}
	p.Do("SET", "other", "o")
	p.Do("SELECT", "0")
	for i := range cmds {
		p.Do("SET", name("k", i), "1.5")
	}
	skSleep(2100)
	for i, c := range cmds {
		var args []string
		for _, a := range c {
			args = append(args, name(a, i))
		}
		p.DoCompare(skTouchCompare, args)
	}
	for i := range cmds {
		p.DoApprox(1, "OBJECT", "IDLETIME", name("k", i))
		p.DoApprox(1, "OBJECT", "IDLETIME", name("n", i))
	}
	p.DoApprox(1, "OBJECT", "IDLETIME", "other")
	p.Do("SELECT", "1")
	for i := range cmds {
		p.DoApprox(1, "OBJECT", "IDLETIME", name("k", i))
	}
	p.DoApprox(1, "OBJECT", "IDLETIME", "other")
}

// skTouchCompare compares replies exactly, except DEBUG OBJECT's (addresses
// and idle times) and SCAN's cursor.
func skTouchCompare(r, k difftest.Reply) error {
	if strings.HasPrefix(r.Str, "Value at:") && strings.HasPrefix(k.Str, "Value at:") {
		return nil
	}
	if r.Kind == difftest.KindArray && len(r.Elems) == 2 && r.Elems[0].Kind == difftest.KindBulk {
		return skScanAll(r, k)
	}
	return difftest.Exact(r, k)
}
