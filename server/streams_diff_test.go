package server_test

// Differential tests of the stream commands against redis-server.

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// autoID compares replies holding IDs made from each server's clock: equal
// once every "<ms>-<seq>" is masked.
func autoID(r, k difftest.Reply) error {
	re := regexp.MustCompile(`1[0-9]{12}-[0-9]+`)
	if a, b := re.ReplaceAll(r.Raw, []byte("ID")), re.ReplaceAll(k.Raw, []byte("ID")); string(a) != string(b) {
		return fmt.Errorf("redis %q, keyhive %q", r.Raw, k.Raw)
	}
	return nil
}

func TestStreamAddRange(t *testing.T) {
	p := difftest.Start(t)
	p.Do("XADD", "s", "1-1", "a", "1", "b", "2")
	p.Do("XADD", "s", "1-2", "a", "3", "b", "4")
	p.Do("XADD", "s", "2", "c", "5")
	p.Do("XADD", "s", "2-*", "a", "x")
	p.Do("XADD", "s", "5-*", "a", "x", "b", "y")
	p.Do("XADD", "s", "5-*", "a", "x")
	p.Do("XADD", "s", "4-*", "a", "x")
	p.Do("XADD", "s", "5-2", "a", "x")
	p.Do("XADD", "s", "5-3", "a")
	p.Do("XADD", "s", "5-3")
	p.Do("XADD", "s", "0-0", "a", "b")
	p.Do("XADD", "new", "0-0", "a", "b")
	p.Do("XADD", "new", "0-*", "a", "b")
	p.Do("XADD", "new2", "0", "a", "b")
	p.Do("XADD", "s", "x", "a", "b")
	p.Do("XADD", "s", "1-x", "a", "b")
	p.Do("XADD", "s", "-", "a", "b")
	p.Do("XADD", "s", "+", "a", "b")
	p.Do("XADD", "s", "*-1", "a", "b")
	p.Do("XADD", "s", "6-", "a", "b")
	p.Do("XADD", "s", "-6", "a", "b")
	p.Do("XADD", "s", " 7-1", "a", "b")
	p.Do("XADD", "s", "+8-1", "a", "b")
	p.Do("XADD", "s", "9-+1", "a", "b")
	p.Do("XADD", "s", "10-1\x00zz", "a", "b")
	p.Do("XADD", "s", "018-1", "a", "b")
	p.Do("XLEN", "s")
	p.Do("XLEN", "nokey")
	p.Do("XRANGE", "s", "-", "+")
	p.Do("XREVRANGE", "s", "+", "-")
	p.Do("XRANGE", "s", "1", "2")
	p.Do("XRANGE", "s", "(1-1", "(5")
	p.Do("XRANGE", "s", "1-2", "1-2")
	p.Do("XRANGE", "s", "5", "1")
	p.Do("XREVRANGE", "s", "5", "1", "COUNT", 2)
	p.Do("XREVRANGE", "s", "(5-1", "(1-1")
	p.Do("XRANGE", "s", "-", "+", "COUNT", 2)
	p.Do("XRANGE", "s", "-", "+", "COUNT", 0)
	p.Do("XRANGE", "s", "-", "+", "COUNT", -3)
	p.Do("XRANGE", "s", "-", "+", "COUNT", "x")
	p.Do("XRANGE", "s", "-", "+", "COUNT")
	p.Do("XRANGE", "s", "-", "+", "LIMIT", 1)
	p.Do("XRANGE", "nokey", "-", "+", "COUNT", 0)
	p.Do("XRANGE", "nokey", "x", "+")
	p.Do("XRANGE", "s", "(", "+")
	p.Do("XRANGE", "s", "(-", "+")
	p.Do("XRANGE", "s", "-", "(+")
	p.Do("XRANGE", "s", "(18446744073709551615-18446744073709551615", "+")
	p.Do("XRANGE", "s", "-", "(0-0")
	p.Do("XRANGE", "s", "(0", "+", "COUNT", 1)
	p.Do("XRANGE", "s", "18446744073709551615", "+")
	p.Do("XRANGE", "s", "18446744073709551616", "+")
	p.Do("XRANGE", "s", "-1", "+")
	p.Do("SET", "str", "x")
	for _, c := range [][]any{
		{"XADD", "str", "*", "a", "b"}, {"XLEN", "str"}, {"XRANGE", "str", "-", "+"}, {"XREVRANGE", "str", "+", "-"},
		{"XDEL", "str", "1-1"}, {"XTRIM", "str", "MAXLEN", 1}, {"XSETID", "str", "1-1"},
		{"XREAD", "STREAMS", "str", "0"}, {"XGROUP", "CREATE", "str", "g", "$"}, {"XINFO", "STREAM", "str"},
		{"XACK", "str", "g", "1-1"}, {"XPENDING", "str", "g"}, {"XCLAIM", "str", "g", "c", 0, "1-1"},
		{"XAUTOCLAIM", "str", "g", "c", 0, "0"}, {"XREADGROUP", "GROUP", "g", "c", "STREAMS", "str", ">"},
	} {
		p.Do(c...)
	}
	p.Do("TYPE", "s")
	p.Do("OBJECT", "ENCODING", "s")
	p.Do("COPY", "s", "s2")
	p.Do("XADD", "s2", "9-9", "only", "copy")
	p.Do("XRANGE", "s", "9", "+")
	p.Do("XRANGE", "s2", "9", "+")
	p.Do("RENAME", "s2", "s3")
	p.Do("XLEN", "s3")
	p.Do("DEL", "s3")
	p.Do("EXISTS", "s3")
	p.Do("XADD", "bin", "1-1", "f\x00\xff", "v\r\n\x00", "", "")
	p.Do("XRANGE", "bin", "-", "+")
	p.Proto(3)
	p.Do("XRANGE", "s", "-", "+", "COUNT", 2)
	p.Do("XRANGE", "s", "-", "+", "COUNT", 0)
}

func TestStreamAutoID(t *testing.T) {
	p := difftest.Start74(t)
	p.DoCompare(autoID, "XADD", "s", "*", "a", "1")
	p.DoCompare(autoID, "XADD", "s", "*", "a", "1")
	p.DoCompare(autoID, "XRANGE", "s", "-", "+")
	p.DoCompare(autoID, "XADD", "s", "NOMKSTREAM", "*", "a", "1")
	p.Do("XADD", "nokey", "NOMKSTREAM", "*", "a", "1")
	p.Do("XADD", "nokey", "NOMKSTREAM", "MAXLEN", 1, "*", "a", "1")
	p.Do("EXISTS", "nokey")
	p.Do("XADD", "m", "18446744073709551615-18446744073709551614", "a", "1")
	p.Do("XADD", "m", "*", "a", "1")
	p.Do("XADD", "m", "*", "a", "1")
	p.Do("XADD", "m", "18446744073709551615-*", "a", "1")
	p.Do("XADD", "m2", "18446744073709551615-18446744073709551615", "a", "1")
	p.Do("XADD", "m2", "18446744073709551615-*", "a", "1")
	p.Do("XADD", "m3", "5-18446744073709551615", "a", "1")
	p.Do("XADD", "m3", "5-*", "a", "1")
	p.DoCompare(autoID, "XADD", "m3", "*", "a", "1")
	p.DoCompare(autoID, "XINFO", "STREAM", "m3")
	p.Do("XADD", "m4", "5-18446744073709551615", "a", "1")
	p.DoCompare(autoID, "XADD", "m4", "*", "a", "1")
}

func TestStreamTrim(t *testing.T) {
	p := difftest.Start(t)
	for i := 1; i <= 350; i++ {
		p.Do("XADD", "s", fmt.Sprintf("%d-1", i), "f", i, "g", "v")
	}
	p.Do("XINFO", "STREAM", "s")
	p.Do("XTRIM", "s", "MAXLEN", "~", 280)
	p.Do("XTRIM", "s", "MAXLEN", "~", 120)
	p.Do("XLEN", "s")
	p.Do("XTRIM", "s", "MAXLEN", "=", 195)
	p.Do("XTRIM", "s", "MAXLEN", 190)
	p.Do("XINFO", "STREAM", "s")
	p.Do("XTRIM", "s", "MINID", "250")
	p.Do("XTRIM", "s", "MINID", "~", "310")
	p.Do("XTRIM", "s", "MINID", "=", "305-1")
	p.Do("XINFO", "STREAM", "s")
	p.Do("XTRIM", "s", "MAXLEN", "~", 0, "LIMIT", 10)
	p.Do("XTRIM", "s", "MAXLEN", "~", 0, "LIMIT", 100)
	p.Do("XTRIM", "s", "MAXLEN", 0, "LIMIT", 10)
	p.Do("XTRIM", "s", "MAXLEN", -1)
	p.Do("XTRIM", "s", "MAXLEN", "x")
	p.Do("XTRIM", "s", "MINID", "x")
	p.Do("XTRIM", "s", "MINID", "5-*")
	p.Do("XTRIM", "s", "MAXLEN", 1, "MINID", 1)
	p.Do("XTRIM", "s", "LIMIT", 1)
	p.Do("XTRIM", "s", "LIMIT", 0, "MAXLEN", 1000)
	p.Do("XTRIM", "s", "MAXLEN", "~", 1, "LIMIT", -1)
	p.Do("XTRIM", "s", "FOO", 1)
	p.Do("XTRIM", "s", "MAXLEN")
	p.Do("XTRIM", "nokey", "MAXLEN", 0)
	p.Do("XTRIM", "nokey", "FOO")
	p.Do("XADD", "s", "MAXLEN", 2, "400-1", "a", "b")
	p.Do("XADD", "s", "MAXLEN", "~", 2, "401-1", "a", "b")
	p.Do("XADD", "s", "MINID", 401, "402-1", "a", "b")
	p.Do("XADD", "s", "MAXLEN", 2, "LIMIT", 5, "403-1", "a", "b")
	p.Do("XADD", "s", "MAXLEN", "~", 2, "LIMIT", 5, "403-1", "a", "b")
	p.Do("XADD", "s", "MAXLEN", 2, "MAXLEN", 3, "404-1", "a", "b")
	p.Do("XADD", "s", "LIMIT", 5, "404-1", "a", "b")
	p.Do("XADD", "s", "MAXLEN", 0, "405-1", "a", "b")
	p.Do("XINFO", "STREAM", "s")
	p.Do("XADD", "s", "MAXLEN")
	p.Do("XADD", "s", "MAXLEN", "a", "b")
	p.Do("XADD", "s", "a", "b", "c")
	p.Do("XINFO", "STREAM", "s", "FULL")
	// Nodes split by size (stream-node-max-bytes) as well as by count.
	big := make([]byte, 900)
	for i := range big {
		big[i] = 'x'
	}
	for i := 1; i <= 30; i++ {
		p.Do("XADD", "b", fmt.Sprintf("%d-0", i), "field", big[:i*30], "n", i)
	}
	p.Do("XINFO", "STREAM", "b")
	p.Do("XTRIM", "b", "MAXLEN", "~", 10)
	p.Do("XLEN", "b")
	for i := 1; i <= 300; i++ {
		p.Do("XADD", "ints", fmt.Sprintf("%d-%d", i*1000, i), "f", i*100000, "other", -i)
	}
	p.Do("XINFO", "STREAM", "ints")
	p.Do("XTRIM", "ints", "MAXLEN", "~", 150)
	p.Do("XLEN", "ints")
}

func TestStreamDelSetID(t *testing.T) {
	p := difftest.Start74(t)
	for i := 1; i <= 5; i++ {
		p.Do("XADD", "s", fmt.Sprintf("%d-0", i), "f", i)
	}
	p.Do("XDEL", "s", "1-0", "3-0", "3-0", "9-0")
	p.Do("XDEL", "s", "x")
	p.Do("XDEL", "s", "2-0", "x")
	p.Do("XDEL", "nokey", "x")
	p.Do("XINFO", "STREAM", "s")
	p.Do("XRANGE", "s", "-", "+")
	p.Do("XREVRANGE", "s", "+", "-")
	p.Do("XDEL", "s", "2-0", "4-0", "5-0")
	p.Do("XINFO", "STREAM", "s")
	p.Do("XLEN", "s")
	p.Do("EXISTS", "s")
	p.Do("XADD", "s", "5-0", "f", "v")
	p.Do("XADD", "s", "6-0", "f", "v")
	p.Do("XSETID", "s", "5-0")
	p.Do("XSETID", "s", "7-0")
	p.Do("XSETID", "s", "8-0", "ENTRIESADDED", 1)
	p.Do("XSETID", "s", "8-0", "ENTRIESADDED", -1)
	p.Do("XSETID", "s", "8-0", "ENTRIESADDED", 20, "MAXDELETEDID", "9-0")
	p.Do("XSETID", "s", "8-0", "ENTRIESADDED", 20, "MAXDELETEDID", "4-0")
	p.Do("XSETID", "s", "8-0", "MAXDELETEDID", "1-0")
	p.Do("XSETID", "s", "8-0", "FOO", "1")
	p.Do("XSETID", "s", "8-0", "ENTRIESADDED")
	p.Do("XSETID", "s", "+")
	p.Do("XSETID", "s", "x")
	p.Do("XSETID", "nokey", "1-1")
	p.Do("XINFO", "STREAM", "s")
	p.Do("XADD", "s", "8-0", "f", "v")
	p.Do("XADD", "s", "8-1", "f", "v")
	p.Do("XDEL", "s", "8-1", "6-0")
	p.Do("XSETID", "s", "8-0")
	p.Do("XINFO", "STREAM", "s")
}

func TestStreamGroups(t *testing.T) {
	p := difftest.Start(t)
	p.Do("XGROUP", "CREATE", "s", "g", "$")
	p.Do("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
	p.Do("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
	p.Do("XGROUP", "CREATE", "s", "g2", "0", "ENTRIESREAD", 0)
	p.Do("XGROUP", "CREATE", "s", "g3", "0", "ENTRIESREAD", -2)
	p.Do("XGROUP", "CREATE", "s", "g3", "0", "ENTRIESREAD", "x")
	p.Do("XGROUP", "CREATE", "s", "g3", "0", "FOO")
	p.Do("XGROUP", "CREATE", "s", "g3", "x")
	p.Do("XGROUP", "CREATE", "s", "g3")
	p.Do("XGROUP", "CREATE", "s", "g3", "0", "MKSTREAM", "ENTRIESREAD", 3, "MKSTREAM")
	p.Do("XINFO", "GROUPS", "s")
	for i := 1; i <= 5; i++ {
		p.Do("XADD", "s", fmt.Sprintf("%d-0", i), "f", i)
	}
	p.Do("XINFO", "GROUPS", "s")
	p.Do("XREADGROUP", "GROUP", "g", "alice", "COUNT", 2, "STREAMS", "s", ">")
	p.Do("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">")
	p.Do("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">")
	p.Do("XREADGROUP", "GROUP", "g2", "carol", "NOACK", "STREAMS", "s", ">")
	p.Do("XINFO", "GROUPS", "s")
	p.DoCompare(idleTimes, "XINFO", "CONSUMERS", "s", "g")
	p.Do("XPENDING", "s", "g")
	p.Do("XPENDING", "s", "g2")
	p.DoCompare(idleTimes, "XPENDING", "s", "g", "-", "+", 10)
	p.DoCompare(idleTimes, "XPENDING", "s", "g", "-", "+", 10, "bob")
	p.DoCompare(idleTimes, "XPENDING", "s", "g", "(1-0", "(5-0", 10)
	p.Do("XPENDING", "s", "g", "-", "+", 10, "nobody")
	p.Do("XPENDING", "s", "g", "IDLE", 100000, "-", "+", 10)
	p.Do("XPENDING", "s", "g", "-", "+", 0)
	p.Do("XPENDING", "s", "g", "IDLE", 1, "-", "+")
	p.Do("XPENDING", "s", "g", "-", "+")
	p.Do("XPENDING", "s", "g", "-", "+", "x")
	p.Do("XPENDING", "s", "g", "x", "+", 1)
	p.Do("XPENDING", "s", "nog")
	p.Do("XPENDING", "nokey", "g")
	p.Do("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0")
	p.Do("XREADGROUP", "GROUP", "g", "alice", "COUNT", 1, "STREAMS", "s", "1-0")
	p.Do("XREADGROUP", "GROUP", "g", "newbie", "STREAMS", "s", "0")
	p.Do("XDEL", "s", "4-0")
	p.Do("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", "0")
	p.Do("XACK", "s", "g", "1-0", "1-0", "3-0", "9-0")
	p.Do("XACK", "s", "g", "x")
	p.Do("XACK", "s", "nog", "1-0")
	p.Do("XACK", "nokey", "g", "1-0")
	p.Do("XPENDING", "s", "g")
	p.Do("XINFO", "GROUPS", "s")
	p.DoCompare(idleTimes, "XINFO", "CONSUMERS", "s", "g")
	p.Do("XINFO", "CONSUMERS", "s", "nog")
	p.Do("XINFO", "CONSUMERS", "nokey", "g")
	p.Do("XGROUP", "CREATECONSUMER", "s", "g", "dave")
	p.Do("XGROUP", "CREATECONSUMER", "s", "g", "dave")
	p.Do("XGROUP", "CREATECONSUMER", "s", "nog", "dave")
	p.Do("XGROUP", "DELCONSUMER", "s", "g", "bob")
	p.Do("XGROUP", "DELCONSUMER", "s", "g", "bob")
	p.Do("XGROUP", "DELCONSUMER", "s", "nog", "bob")
	p.Do("XPENDING", "s", "g")
	p.Do("XGROUP", "SETID", "s", "g", "0")
	p.Do("XGROUP", "SETID", "s", "g", "$", "ENTRIESREAD", 2)
	p.Do("XGROUP", "SETID", "s", "g", "-")
	p.Do("XGROUP", "SETID", "s", "g", "x")
	p.Do("XGROUP", "SETID", "s", "g", "0", "FOO", 1)
	p.Do("XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", -5)
	p.Do("XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD")
	p.Do("XGROUP", "SETID", "s", "nog", "0")
	p.Do("XGROUP", "SETID", "nokey", "g", "0")
	p.Do("XINFO", "GROUPS", "s")
	p.Do("XGROUP", "DESTROY", "s", "g2")
	p.Do("XGROUP", "DESTROY", "s", "g2")
	p.Do("XGROUP", "DESTROY", "nokey", "g2")
	p.Do("XGROUP", "HELP", "x")
	p.Do("XGROUP", "FOO", "s", "g")
	p.Do("XGROUP", "FOO")
	p.Do("XGROUP")
	p.Do("XINFO", "FOO", "s")
	p.Do("XINFO", "STREAM")
	p.Do("XINFO", "STREAM", "nokey")
	p.Do("XINFO", "STREAM", "s", "FULL", "COUNT")
	p.Do("XINFO", "STREAM", "s", "FOO")
	p.Do("XINFO", "STREAM", "s", "FULL", "COUNT", "x")
	p.Do("XINFO", "GROUPS", "nokey")
	p.Do("XINFO", "GROUPS", "s", "x")
	p.Proto(3)
	p.Do("XINFO", "GROUPS", "s")
	p.DoCompare(idleTimes, "XINFO", "STREAM", "s", "FULL")
	p.DoCompare(idleTimes, "XINFO", "STREAM", "s", "FULL", "COUNT", 1)
	p.DoCompare(idleTimes, "XINFO", "STREAM", "s", "FULL", "COUNT", 0)
	p.Do("XINFO", "STREAM", "s")
	p.Do("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0")
	p.Proto(2)
	p.DoCompare(idleTimes, "XINFO", "STREAM", "s", "FULL")
}

// TestStreamLag follows Redis 7.0's entries-read and lag bookkeeping
// through reads, deletions and XSETID.
func TestStreamLag(t *testing.T) {
	p := difftest.Start(t)
	p.Do("XGROUP", "CREATE", "s", "g", "0", "MKSTREAM")
	p.Do("XINFO", "GROUPS", "s")
	for i := 1; i <= 6; i++ {
		p.Do("XADD", "s", fmt.Sprintf("%d-0", i), "f", i)
	}
	p.Do("XGROUP", "CREATE", "s", "g2", "3-0")
	p.Do("XGROUP", "CREATE", "s", "g3", "$")
	p.Do("XGROUP", "CREATE", "s", "g4", "0-1")
	p.Do("XINFO", "GROUPS", "s")
	p.Do("XREADGROUP", "GROUP", "g", "c", "COUNT", 2, "STREAMS", "s", ">")
	p.Do("XINFO", "GROUPS", "s")
	p.Do("XDEL", "s", "4-0")
	p.Do("XINFO", "GROUPS", "s")
	p.Do("XREADGROUP", "GROUP", "g", "c", "COUNT", 1, "STREAMS", "s", ">")
	p.Do("XREADGROUP", "GROUP", "g2", "c", "COUNT", 1, "STREAMS", "s", ">")
	p.Do("XINFO", "GROUPS", "s")
	p.Do("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
	p.Do("XINFO", "GROUPS", "s")
	p.Do("XDEL", "s", "1-0")
	p.Do("XGROUP", "SETID", "s", "g4", "1-0")
	p.Do("XINFO", "GROUPS", "s")
	p.Do("XTRIM", "s", "MAXLEN", 0)
	p.Do("XINFO", "GROUPS", "s")
	p.Do("XINFO", "STREAM", "s")
	p.Do("XADD", "s", "10-0", "f", "v")
	p.Do("XINFO", "GROUPS", "s")
}

func TestStreamRead(t *testing.T) {
	p := difftest.Start74(t)
	p.Do("XADD", "a", "1-0", "f", "1")
	p.Do("XADD", "a", "2-0", "f", "2")
	p.Do("XADD", "b", "1-5", "g", "1")
	p.Do("XREAD", "STREAMS", "a", "b", "0", "0")
	p.Do("XREAD", "COUNT", 1, "STREAMS", "a", "b", "0", "1-5")
	p.Do("XREAD", "STREAMS", "a", "nokey", "1", "0")
	p.Do("XREAD", "STREAMS", "a", "$")
	p.Do("XREAD", "STREAMS", "nokey", "$")
	p.Do("XREAD", "COUNT", -1, "STREAMS", "a", "0")
	p.Do("XREAD", "COUNT", 0, "STREAMS", "a", "0")
	p.Do("XREAD", "BLOCK", 10, "STREAMS", "a", "$")
	p.Do("XREAD", "BLOCK", -1, "STREAMS", "a", "$")
	p.Do("XREAD", "BLOCK", "x", "STREAMS", "a", "$")
	p.Do("XREAD", "BLOCK", "1.5", "STREAMS", "a", "$")
	p.DoDifferent("7.2+ refuses a timeout past long long's range; 7.0.15 reads (TestStreamReadTimeoutRange compares with 7.4.1)", "XREAD", "BLOCK", "9223372036854775807", "STREAMS", "a", "0")
	p.Do("XREAD", "STREAMS", "a")
	p.Do("XREAD", "STREAMS", "a", "b", "0")
	p.Do("XREAD", "STREAMS")
	p.Do("XREAD", "COUNT", 1, "a", "STREAMS", "a", "0")
	p.Do("XREAD", "GROUP", "g", "c", "STREAMS", "a", "0")
	p.Do("XREAD", "NOACK", "STREAMS", "a", "0")
	p.Do("XREAD", "STREAMS", "a", ">")
	p.Do("XREAD", "STREAMS", "a", "x")
	p.Do("XREAD", "COUNT", "x", "STREAMS", "a", "0")
	p.Do("XREAD", "COUNT", 1, "BLOCK")
	p.Do("XREADGROUP", "STREAMS", "a", ">")
	p.Do("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", ">")
	p.Do("XGROUP", "CREATE", "a", "g", "0")
	p.Do("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "$")
	p.Do("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "x")
	p.Do("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "b", ">", ">")
	p.Do("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", ">", "x")
	p.Do("XREADGROUP", "GROUP", "g", "c", "COUNT", 1, "NOACK", "STREAMS", "a", ">")
	p.Do("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", ">")
	p.Do("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", ">")
	p.Do("XREADGROUP", "GROUP", "g", "c", "BLOCK", 10, "STREAMS", "a", ">")
	p.Do("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "0")
	p.Do("XDEL", "a", "2-0")
	p.Do("XREAD", "STREAMS", "a", "1-0")
	p.Do("XREAD", "STREAMS", "a", "0-0")
	p.Do("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "0")
	p.Do("COMMAND", "GETKEYS", "XREAD", "COUNT", 1, "STREAMS", "a", "b", "0", "0")
	p.Do("COMMAND", "GETKEYS", "XREADGROUP", "GROUP", "g", "c", "BLOCK", 1, "NOACK", "STREAMS", "a", ">")
	p.Do("COMMAND", "GETKEYS", "XREAD", "STREAMS", "a")
	p.Proto(3)
	p.Do("XREAD", "STREAMS", "a", "b", "0", "0")
	p.Do("XREAD", "STREAMS", "a", "$")
	p.Do("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "0")
	p.Do("MULTI")
	p.Do("XREAD", "BLOCK", 0, "STREAMS", "a", "$")
	p.Do("XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", "a", ">")
	p.Do("EXEC")
	p.Proto(2)
	p.Do("EVAL", "return redis.call('xread','block','0','streams','a','$')", 0)
	p.Do("EVAL", "return redis.call('xread','streams','a','0')", 0)
	p.Do("EVAL", "return redis.call('XREADGROUP','GROUP','g','c','block','0','streams','a','>')", 0)
	for _, c := range []string{"xadd", "xrange", "xrevrange", "xlen", "xdel", "xtrim", "xread", "xreadgroup", "xsetid", "xack", "xpending", "xclaim", "xautoclaim", "xgroup", "xinfo"} {
		p.DoCompare(commandInfoCompare, "COMMAND", "INFO", c)
	}
}

func TestStreamClaim(t *testing.T) {
	p := difftest.Start(t)
	for i := 1; i <= 6; i++ {
		p.Do("XADD", "s", fmt.Sprintf("%d-0", i), "f", i)
	}
	p.Do("XGROUP", "CREATE", "s", "g", "0")
	p.Do("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")
	p.Do("XCLAIM", "s", "g", "bob", 0, "1-0", "2-0")
	p.Do("XCLAIM", "s", "g", "bob", 0, "1-0", "JUSTID")
	p.Do("XCLAIM", "s", "g", "bob", 1000000, "3-0")
	p.Do("XCLAIM", "s", "g", "bob", 0, "3-0", "RETRYCOUNT", 7, "IDLE", 5000)
	p.DoCompare(idleTimes, "XPENDING", "s", "g", "-", "+", 10)
	p.DoCompare(idleTimes, "XPENDING", "s", "g", "IDLE", 4000, "-", "+", 10)
	p.Do("XCLAIM", "s", "g", "bob", 0, "9-0")
	p.Do("XCLAIM", "s", "g", "bob", 0, "9-0", "FORCE")
	p.Do("XCLAIM", "s", "g", "bob", 0, "6-0", "FORCE", "JUSTID")
	p.Do("XACK", "s", "g", "6-0")
	p.Do("XCLAIM", "s", "g", "carol", 0, "6-0", "FORCE", "TIME", 1)
	p.Do("XDEL", "s", "2-0")
	p.Do("XCLAIM", "s", "g", "carol", 0, "2-0", "1-0")
	p.Do("XCLAIM", "s", "g", "carol", 0, "1-0", "LASTID", "100-0", "JUSTID")
	p.Do("XINFO", "GROUPS", "s")
	p.Do("XCLAIM", "s", "g", "carol", "x", "1-0")
	p.Do("XCLAIM", "s", "g", "carol", -5, "1-0")
	p.Do("XCLAIM", "s", "g", "carol", 0, "1-0", "IDLE", "x")
	p.Do("XCLAIM", "s", "g", "carol", 0, "1-0", "TIME", "x")
	p.Do("XCLAIM", "s", "g", "carol", 0, "1-0", "RETRYCOUNT", "x")
	p.Do("XCLAIM", "s", "g", "carol", 0, "1-0", "LASTID", "x")
	p.Do("XCLAIM", "s", "g", "carol", 0, "1-0", "FOO")
	p.Do("XCLAIM", "s", "g", "carol", 0, "1-0", "IDLE")
	p.Do("XCLAIM", "s", "nog", "carol", 0, "1-0")
	p.Do("XCLAIM", "nokey", "g", "carol", 0, "1-0")
	p.Do("XCLAIM", "s", "g", "carol", 0, "x")
	p.DoCompare(idleTimes, "XINFO", "CONSUMERS", "s", "g")
	p.Do("XPENDING", "s", "g")

	p.Do("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0")
	p.Do("XAUTOCLAIM", "s", "g", "dave", 0, "0", "COUNT", 2)
	p.Do("XAUTOCLAIM", "s", "g", "dave", 0, "0", "COUNT", 2, "JUSTID")
	p.Do("XDEL", "s", "3-0", "5-0")
	p.Do("XAUTOCLAIM", "s", "g", "erin", 0, "0")
	p.Do("XAUTOCLAIM", "s", "g", "erin", 0, "(1-0", "COUNT", 1)
	p.Do("XAUTOCLAIM", "s", "g", "erin", 1000000, "0")
	p.Do("XAUTOCLAIM", "s", "g", "erin", 0, "0", "COUNT", 0)
	p.Do("XAUTOCLAIM", "s", "g", "erin", 0, "0", "COUNT", "x")
	p.Do("XAUTOCLAIM", "s", "g", "erin", 0, "0", "COUNT", "1152921504606846976")
	p.Do("XAUTOCLAIM", "s", "g", "erin", 0, "0", "FOO")
	p.Do("XAUTOCLAIM", "s", "g", "erin", "x", "0")
	p.Do("XAUTOCLAIM", "s", "g", "erin", 0, "x")
	p.Do("XAUTOCLAIM", "s", "g", "erin", 0, "(18446744073709551615-18446744073709551615")
	p.Do("XAUTOCLAIM", "s", "nog", "erin", 0, "0")
	p.Do("XAUTOCLAIM", "nokey", "g", "erin", 0, "0")
	p.Do("XPENDING", "s", "g")
	for i := 10; i < 40; i++ {
		p.Do("XADD", "s", fmt.Sprintf("%d-0", i), "f", i)
	}
	p.Do("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")
	p.Do("XDEL", "s", "12-0", "13-0", "20-0")
	p.Do("XAUTOCLAIM", "s", "g", "erin", 0, "0", "COUNT", 1, "JUSTID")
	p.Do("XAUTOCLAIM", "s", "g", "erin", 0, "0", "COUNT", 3, "JUSTID")
	p.Do("XAUTOCLAIM", "s", "g", "erin", 1000000, "0", "COUNT", 2, "JUSTID")
	p.Do("XAUTOCLAIM", "s", "g", "erin", 0, "15", "COUNT", 100, "JUSTID")
}

// TestStreamRandom runs random adds, deletions, trims and ranges with small
// nodes, so node boundaries (which decide what "~" trims and what XINFO
// reports) are compared with redis-server's at every step.
func TestStreamRandom(t *testing.T) {
	p := difftest.StartIsolated(t, "--stream-node-max-entries", "7", "--stream-node-max-bytes", "300")
	rng := rand.New(rand.NewPCG(7, 8))
	ms, seq := 1, 0
	values := []string{"1", "-5", "123456789012", "x", "", "0", "007", "a long value that is longer than sixty-four bytes, to take a longer listpack header"}
	for op := range 600 {
		id := func() string { return fmt.Sprintf("%d-%d", 1+rng.IntN(ms), rng.IntN(4)) }
		switch r := rng.IntN(20); {
		case r < 9:
			if rng.IntN(3) == 0 {
				ms, seq = ms+1+rng.IntN(3), 0
			} else {
				seq++
			}
			args := []any{"XADD", "s", fmt.Sprintf("%d-%d", ms, seq)}
			fields := []string{"f", "g"}
			if rng.IntN(4) == 0 {
				fields = []string{"other"}
			}
			for _, f := range fields {
				args = append(args, f, values[rng.IntN(len(values))])
			}
			p.Do(args...)
		case r < 12:
			p.Do("XDEL", "s", id(), id())
		case r < 13:
			p.Do("XTRIM", "s", "MAXLEN", []string{"~", "="}[rng.IntN(2)], rng.IntN(40))
		case r < 14:
			p.Do("XTRIM", "s", "MINID", []string{"~", "="}[rng.IntN(2)], id())
		case r < 17:
			p.Do("XRANGE", "s", id(), "+", "COUNT", rng.IntN(5))
			p.Do("XREVRANGE", "s", id(), "-", "COUNT", rng.IntN(5))
		default:
			p.Do("XINFO", "STREAM", "s")
		}
		if op%50 == 0 {
			p.Do("XRANGE", "s", "-", "+")
		}
	}
	p.Do("XINFO", "STREAM", "s", "FULL")
}

// TestXReadLastEntry: Redis 7.4's XREAD ID "+", the stream's last entry,
// against redis-server 7.4.1, in RESP2 and RESP3.
func TestXReadLastEntry(t *testing.T) {
	p := difftest.Start74(t)
	p.Do("XADD", "s", "1-1", "f", "v")
	p.Do("XADD", "s", "2-0", "f", "w", "g", "x")
	p.Do("XADD", "t", "5-5", "a", "b")
	p.Do("XGROUP", "CREATE", "empty", "g", "$", "MKSTREAM")
	p.Do("SET", "str", "x")
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		p.Do("XREAD", "STREAMS", "s", "+")
		p.Do("XREAD", "COUNT", "5", "STREAMS", "s", "t", "+", "+")
		p.Do("XREAD", "STREAMS", "s", "nokey", "+", "+")
		p.Do("XREAD", "STREAMS", "nokey", "+")
		p.Do("XREAD", "STREAMS", "empty", "+")
		p.Do("XREAD", "STREAMS", "str", "+")
		p.Do("XREAD", "BLOCK", "10", "STREAMS", "nokey", "+")
		p.Do("XREADGROUP", "GROUP", "g", "c", "STREAMS", "empty", "+")
		p.Do("MULTI")
		p.Do("XREAD", "STREAMS", "t", "+")
		p.Do("EXEC")
		p.Do("EVAL", "return redis.call('XREAD', 'STREAMS', KEYS[1], '+')", "1", "s")
	}
	p.Do("XADD", "z", "0-1", "f", "v")
	p.Do("XREAD", "STREAMS", "z", "+")
	p.Do("XDEL", "s", "2-0")
	p.Do("XREAD", "STREAMS", "s", "+")
	p.Do("XDEL", "z", "0-1")
	p.Do("XREAD", "STREAMS", "z", "+")
	// Blocked on "+": served by the next entry.
	p.Do("XADD", "b", "7-0", "f", "v")
	p.Send("XREAD", "BLOCK", "0", "STREAMS", "b", "+")
	q := p.NewConn()
	q.Do("XADD", "b", "8-0", "f", "v2")
	p.Read()
}

// TestStreamReadTimeoutRange: a BLOCK timeout whose deadline long long
// can't hold is refused before anything is read, as Redis 7.2+.
func TestStreamReadTimeoutRange(t *testing.T) {
	p := difftest.Start74(t)
	p.Do("XADD", "a", "1-0", "f", "1")
	p.Do("XREAD", "BLOCK", "9223372036854775807", "STREAMS", "a", "0")
	p.Do("XREAD", "BLOCK", "9223372036854775", "STREAMS", "a", "0")
	p.Do("XREADGROUP", "GROUP", "g", "c", "BLOCK", "9223372036854775807", "STREAMS", "a", ">")
}
