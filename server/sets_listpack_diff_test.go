package server_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// Small sets of strings are listpacks, as in Redis 7.2 and later: the
// members in the order added, OBJECT ENCODING "listpack", SSCAN returning
// them all at once, and the conversions of Redis's setTypeAdd between
// intset, listpack and hashtable (issue 40: BullMQ paginates a set of 65
// members with SSCAN COUNT 50 and expects one page). Compared with
// redis-server 7.4.1.

// members returns n members named prefix0, prefix1...
func members(prefix string, n int) []any {
	var m []any
	for i := range n {
		m = append(m, prefix+strconv.Itoa(i))
	}
	return m
}

func TestSetListpack(t *testing.T) {
	p := difftest.StartIsolated74(t)
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		p.Do("FLUSHALL")
		// 65 members: one SSCAN page whatever COUNT, in the order added.
		p.Do(append([]any{"SADD", "s"}, members("job:", 65)...)...)
		p.Do("OBJECT", "ENCODING", "s")
		p.Do("SSCAN", "s", "0", "COUNT", "50")
		p.Do("SSCAN", "s", "0", "COUNT", "1", "MATCH", "job:1*")
		p.Do("SMEMBERS", "s")
		p.Do("SREM", "s", "job:0", "job:10", "nope")
		p.Do("SADD", "s", "job:0", "7")
		p.Do("SMEMBERS", "s")
		p.Do("SISMEMBER", "s", "7")
		p.Do("SMISMEMBER", "s", "job:0", "job:10", "07")
		p.Do("SRANDMEMBER", "s", "100") // the whole set, in its order
		p.Do("SINTER", "s", "s")
		p.Do("SUNION", "s")

		// Up to set-max-listpack-entries (128) members, then a hashtable.
		p.Do(append([]any{"SADD", "full"}, members("m", 128)...)...)
		p.Do("OBJECT", "ENCODING", "full")
		p.Do("SADD", "full", "m0")
		p.Do("OBJECT", "ENCODING", "full")
		p.Do("SADD", "full", "m128")
		p.Do("OBJECT", "ENCODING", "full")
		p.Do("SREM", "full", "m128", "m127")
		p.Do("OBJECT", "ENCODING", "full") // never back
		p.Do(append([]any{"SADD", "new129"}, members("m", 129)...)...)
		p.Do("OBJECT", "ENCODING", "new129")
		// A count past the limit converts a listpack at once, duplicates or not.
		p.Do("SADD", "dups", "a", "b")
		dups := []any{"SADD", "dups"}
		for range 129 {
			dups = append(dups, "a")
		}
		p.Do(dups...)
		p.Do("OBJECT", "ENCODING", "dups")

		// Members up to set-max-listpack-value (64) bytes.
		long64, long65 := strings.Repeat("x", 64), strings.Repeat("y", 65)
		p.Do("SADD", "v", "a", long64)
		p.Do("OBJECT", "ENCODING", "v")
		p.Do("SADD", "v", long65)
		p.Do("OBJECT", "ENCODING", "v")
		p.Do("SADD", "v64", long64)
		p.Do("OBJECT", "ENCODING", "v64")
		p.Do("SADD", "v65", long65)
		p.Do("OBJECT", "ENCODING", "v65")

		// An intset takes a string as a listpack: its integers in order,
		// then the string; a string of set-max-listpack-value bytes, or an
		// intset of 128 members, makes a hashtable.
		p.Do("SADD", "i", "30", "-4", "7")
		p.Do("SADD", "i", "x", "2")
		p.Do("OBJECT", "ENCODING", "i")
		p.Do("SMEMBERS", "i")
		p.Do("SADD", "i64", "1")
		p.Do("SADD", "i64", long64)
		p.Do("OBJECT", "ENCODING", "i64")
		p.Do("SADD", "i63", "1", strings.Repeat("z", 63))
		p.Do("OBJECT", "ENCODING", "i63")
		p.Do(append([]any{"SADD", "i127"}, members("", 127)...)...)
		p.Do("SADD", "i127", "x")
		p.Do("OBJECT", "ENCODING", "i127")
		p.Do(append([]any{"SADD", "i128"}, members("", 128)...)...)
		p.Do("SADD", "i128", "x")
		p.Do("OBJECT", "ENCODING", "i128")

		// The set algebra builds its result from an empty intset.
		p.Do("SADD", "a", "b1", "3", "b2", "1")
		p.Do("SADD", "b", "1", "3", "b2", "zz")
		p.Do("SADD", "n", "5", "3", "1")
		for _, cmd := range [][]any{
			{"SINTERSTORE", "d", "a", "b"}, {"SINTERSTORE", "d", "a", "n"},
			{"SUNIONSTORE", "d", "a", "b"}, {"SUNIONSTORE", "d", "n", "a"},
			{"SDIFFSTORE", "d", "a", "b"}, {"SDIFFSTORE", "d", "a", "n"},
		} {
			p.Do(cmd...)
			p.Do("OBJECT", "ENCODING", "d")
			p.Do("SMEMBERS", "d")
		}
		// From a hashtable: a listpack when it fits, in the table's order.
		for _, cmd := range [][]any{{"SUNIONSTORE", "d", "full"}, {"SDIFFSTORE", "d", "v", "nokey"}} {
			p.Do(cmd...)
			p.Do("OBJECT", "ENCODING", "d")
			p.DoUnordered("SMEMBERS", "d")
		}
		p.Do("SINTER", "b", "a")
		p.Do("SUNION", "a", "b", "n")
		p.Do("SDIFF", "b", "a")

		// SMOVE makes a missing destination as SADD of one member does.
		p.Do("SADD", "src", long64, "1", "q")
		p.Do("SMOVE", "src", "to64", long64)
		p.Do("OBJECT", "ENCODING", "to64")
		p.Do("SMOVE", "src", "toint", "1")
		p.Do("OBJECT", "ENCODING", "toint")
		p.Do("SMOVE", "src", "toint", "q")
		p.Do("OBJECT", "ENCODING", "toint")
		p.Do("SMEMBERS", "toint")

		// SPOP of most of a set rebuilds it from the members that stay: a
		// listpack from a listpack or a hashtable, an intset from an intset.
		p.Do(append([]any{"SADD", "pop"}, members("p", 20)...)...)
		p.DoCompare(sameCount, "SPOP", "pop", "18")
		p.Do("OBJECT", "ENCODING", "pop")
		p.Do("SCARD", "pop")
		p.Do(append([]any{"SADD", "poph"}, members("p", 200)...)...)
		p.DoCompare(sameCount, "SPOP", "poph", "190")
		p.Do("OBJECT", "ENCODING", "poph")
		ints := []any{"SADD", "popi"}
		for i := range 600 {
			ints = append(ints, strconv.Itoa(i))
		}
		p.Do(ints...)
		p.Do("OBJECT", "ENCODING", "popi")
		p.DoCompare(sameCount, "SPOP", "popi", "590")
		p.Do("OBJECT", "ENCODING", "popi")
		p.DoCompare(sameCount, "SPOP", "s", "3")
		p.Do("OBJECT", "ENCODING", "s")
		p.Do("SCARD", "s")
		p.Do("SPOP", "v64", "5") // the whole set
		p.Do("EXISTS", "v64")
	}
}

// sameCount compares the number of members two random draws replied.
func sameCount(r, k difftest.Reply) error {
	if len(r.Elems) != len(k.Elems) || r.Kind != k.Kind {
		return difftest.Exact(r, k)
	}
	return nil
}

// TestSetListpackConfig: set-max-listpack-entries and set-max-listpack-value
// are read and set, and change where sets convert.
func TestSetListpackConfig(t *testing.T) {
	p := difftest.StartIsolated74(t, "--set-max-listpack-entries", "3", "--set-max-listpack-value", "5")
	p.DoUnorderedPairs("CONFIG", "GET", "set-max-listpack-*") // Redis lists them in hash order
	p.Do("SADD", "a", "x", "y", "z")
	p.Do("OBJECT", "ENCODING", "a")
	p.Do("SADD", "a", "w")
	p.Do("OBJECT", "ENCODING", "a")
	p.Do("SADD", "b", "12345")
	p.Do("OBJECT", "ENCODING", "b")
	p.Do("SADD", "c", "123456x")
	p.Do("OBJECT", "ENCODING", "c")
	p.Do("CONFIG", "SET", "set-max-listpack-entries", "0")
	p.Do("CONFIG", "GET", "set-max-listpack-entries")
	p.Do("SADD", "d", "x")
	p.Do("OBJECT", "ENCODING", "d")
	p.Do("CONFIG", "SET", "set-max-listpack-value", "1kb") // an integer, unlike hash-max-listpack-value
	p.Do("CONFIG", "SET", "set-max-listpack-entries", "128", "set-max-listpack-value", "1000")
	p.Do("CONFIG", "GET", "set-max-listpack-value")
	p.Do("SADD", "e", strings.Repeat("v", 1000))
	p.Do("OBJECT", "ENCODING", "e")
	p.Do("CONFIG", "SET", "set-max-listpack-value", "-1")
}

// TestSetListpackPersistence: a listpack set's DUMP payload is 7.4.1's byte
// for byte (RDB type 20, version 12); each server restores the other's, and
// a file round trip keeps the encoding.
func TestSetListpackPersistence(t *testing.T) {
	p := difftest.StartIsolated74(t)
	p.Do(append([]any{"SADD", "s"}, members("member-", 40)...)...)
	p.Do("SADD", "s", "12", "-7", "1000000", strings.Repeat("L", 64))
	p.Do("SADD", "one", "x")
	p.Do("DEBUG", "LISTPACK", "one") // logged: Keyhive's own text
	for _, key := range []string{"s", "one"} {
		p.Do("DUMP", key)
		payload := p.Redis().Do("DUMP", key).Str
		p.Do("RESTORE", key+":copy", "0", payload)
		p.Do("OBJECT", "ENCODING", key+":copy")
		p.Do("SMEMBERS", key+":copy")
		mine := p.Keyhive().Do("DUMP", key).Str
		p.Do("RESTORE", key+":mine", "0", mine)
		p.Do("SMEMBERS", key+":mine")
	}
	// A saved listpack stays one while its member count fits, whatever
	// its members' lengths; an intset or a set saved as a table is built
	// as SADD builds it.
	p.Do("CONFIG", "SET", "set-max-listpack-value", "100")
	p.Do("SADD", "wide", strings.Repeat("w", 90), "a")
	p.Do("OBJECT", "ENCODING", "wide")
	wide := p.Redis().Do("DUMP", "wide").Str
	p.Do("CONFIG", "SET", "set-max-listpack-value", "64")
	p.Do("RESTORE", "wide:copy", "0", wide)
	p.Do("OBJECT", "ENCODING", "wide:copy")
	p.Do("SMEMBERS", "wide:copy")
	p.Do("DEL", "wide")

	p.Do("DEBUG", "RELOAD")
	p.Do("OBJECT", "ENCODING", "s")
	p.Do("SMEMBERS", "s")
	p.Do("DEBUG", "DIGEST-VALUE", "s")
	// The file says version 12, as 7.4.1's: version 10 has no listpack sets.
	data, err := os.ReadFile(filepath.Join(dirOf(t, p.Keyhive()), "dump.rdb"))
	if err != nil || string(data[:9]) != "REDIS0012" {
		t.Errorf("Keyhive's file with a listpack set starts %q (%v), want REDIS0012", data[:min(len(data), 9)], err)
	}
	// Each server loads the other's file.
	reloadFrom(t, p.Keyhive(), p.Redis())
	p.Do("OBJECT", "ENCODING", "s")
	p.Do("SMEMBERS", "s")
	reloadFrom(t, p.Redis(), p.Keyhive())
	p.Do("OBJECT", "ENCODING", "s")
	p.Do("SMEMBERS", "s")
	p.Do("DEBUG", "DIGEST")
}

// TestSetHotPathAllocs checks that the common set commands allocate no more
// than PING does, in each form (intset, listpack, hashtable): compact
// rebuilds go to the scratch buffers.
func TestSetHotPathAllocs(t *testing.T) {
	srv := startKeyhive(t)
	c := dialRaw(t, "tcp", srv.Addr())
	c.do(t, "SADD", "i", "1", "2", "3")
	c.do(t, "SADD", "l", "job:1", "job:2", "job:3", "7")
	big := []string{"SADD", "h"}
	for i := range 300 {
		big = append(big, "member:"+strconv.Itoa(i))
	}
	c.do(t, big...)
	measure := func(cmds ...[]any) float64 { return c.allocsPerRound(t, 200, cmds...) }
	for _, k := range []string{"i", "l", "h"} {
		for _, cmds := range [][][]any{
			{{"SADD", k, "9", "job:9"}, {"SREM", k, "9", "job:9"}},
			{{"SISMEMBER", k, "7"}, {"SMISMEMBER", k, "job:1", "2"}, {"SCARD", k}},
			{{"SMEMBERS", k}, {"SSCAN", k, "0", "COUNT", "10"}},
			{{"SADD", k, "job:2", "2"}},
		} {
			// The connection's own cost is measured by as many PINGs; a
			// stray allocation elsewhere in the process is allowed a retry.
			pings := make([][]any, len(cmds))
			for i := range pings {
				pings[i] = []any{"PING"}
			}
			var a, b float64
			for try := 0; try < 3; try++ {
				if b, a = measure(pings...), measure(cmds...); a <= b {
					break
				}
			}
			if a > b {
				t.Errorf("%q allocates %v times per round, as many PINGs %v", cmds, a, b)
			}
		}
	}
}
