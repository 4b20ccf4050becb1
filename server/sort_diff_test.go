package server_test

// Differential tests of SORT and SORT_RO against redis-server.

import (
	"fmt"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

func TestSortNumericAlpha(t *testing.T) {
	p := difftest.Start(t)
	p.Do("RPUSH", "l", "3", "1", "2", "10", "-1.5", "1e2", "0x10", " 7", "")
	p.Do("SORT", "l")
	p.Do("SORT", "l", "DESC")
	p.Do("SORT", "l", "ALPHA")
	p.Do("SORT", "l", "ALPHA", "DESC")
	p.Do("SORT_RO", "l", "desc", "alpha")
	p.Do("SORT", "l", "ASC", "DESC", "ASC")
	// Equal scores order by the element bytes, reversed by DESC.
	p.Do("RPUSH", "t", "1.0", "1", "01", "1e0", "2", "0.5")
	p.Do("SORT", "t")
	p.Do("SORT", "t", "DESC")
	p.Do("SORT", "t", "LIMIT", "1", "3")
	// Elements that are not numbers.
	p.Do("RPUSH", "bad", "1", "x", "2")
	p.Do("SORT", "bad")
	p.Do("SORT", "bad", "ALPHA")
	for _, v := range []string{"nan", "inf", "-inf", "  ", "1 ", "1abc", "0x1p3", "1_0", "+.5", "5.", "0x", "0x.8", "0x10", "2.2250738585072014e-308", "12\x00ab", "-0"} {
		p.Do("DEL", "w")
		p.Do("RPUSH", "w", v, "3")
		p.Do("SORT", "w")
	}
	p.Do("SORT", "nokey")
	p.Do("SORT", "nokey", "ALPHA", "LIMIT", "0", "5")
	p.Do("SET", "str", "x")
	p.Do("SORT", "str")
	p.Do("HSET", "h", "a", "1")
	p.Do("SORT_RO", "h")
}

func TestSortContainers(t *testing.T) {
	p := difftest.Start(t)
	p.Do("SADD", "si", "5", "3", "-2", "100", "7")
	p.Do("SORT", "si")
	p.Do("SORT", "si", "DESC", "LIMIT", "1", "2")
	p.Do("SADD", "sh", "banana", "apple", "cherry", "date", "fig")
	p.Do("SORT", "sh", "ALPHA")
	p.Do("SORT", "sh", "ALPHA", "DESC", "LIMIT", "0", "3")
	p.Do("SORT", "sh")
	p.Do("ZADD", "z", "3", "c", "1", "a", "2", "b", "2", "bb", "0", "z")
	p.Do("OBJECT", "ENCODING", "z")
	p.Do("SORT", "z", "ALPHA")
	p.Do("OBJECT", "ENCODING", "z") // SORT converts the sorted set
	p.Do("SORT", "z", "ALPHA", "DESC")
	p.Do("SORT", "z")
	p.Do("ZADD", "zn", "5", "10", "1", "30", "3", "20")
	p.Do("SORT_RO", "zn")
	p.Do("SORT_RO", "zn", "DESC")
	p.Do("OBJECT", "ENCODING", "zn")
	// Large forms.
	sargs, zargs := []any{"SADD", "bs"}, []any{"ZADD", "bz"}
	for i := 0; i < 200; i++ {
		sargs = append(sargs, fmt.Sprintf("m%03d", (i*37)%200))
		zargs = append(zargs, (i*53)%200, fmt.Sprintf("m%03d", i))
	}
	p.Do(sargs...)
	p.Do(zargs...)
	p.Do("SORT", "bs", "ALPHA", "LIMIT", "10", "5")
	p.Do("SORT", "bs", "ALPHA", "DESC", "GET", "#", "GET", "nothing_*")
	p.Do("SORT", "bz", "BY", "nosort", "LIMIT", "3", "7")
	p.Do("SORT", "bz", "BY", "nosort", "DESC", "LIMIT", "3", "7")
	p.Do("SORT", "bz", "ALPHA", "DESC", "LIMIT", "0", "4")
	p.Do("SORT", "bz", "BY", "nosort", "STORE", "bzd")
	p.Do("LRANGE", "bzd", "0", "9")
}

func TestSortLimit(t *testing.T) {
	p := difftest.Start(t)
	p.Do("RPUSH", "l", "5", "3", "9", "1", "7", "2")
	p.Do("ZADD", "z", "5", "e", "3", "c", "9", "i", "1", "a", "7", "g", "2", "b")
	for _, lim := range [][2]string{
		{"0", "0"}, {"0", "1"}, {"0", "-1"}, {"2", "3"}, {"-5", "2"}, {"-5", "-1"}, {"4", "100"},
		{"5", "1"}, {"6", "1"}, {"100", "5"}, {"2", "9223372036854775807"},
		{"9223372036854775807", "9223372036854775807"}, {"-9223372036854775808", "3"}, {"1", "-9223372036854775808"},
	} {
		p.Do("SORT", "l", "LIMIT", lim[0], lim[1])
		p.Do("SORT", "l", "LIMIT", lim[0], lim[1], "DESC")
		p.Do("SORT", "l", "BY", "nosort", "LIMIT", lim[0], lim[1])
		p.Do("SORT", "l", "BY", "nosort", "LIMIT", lim[0], lim[1], "DESC")
		p.Do("SORT", "z", "BY", "nosort", "LIMIT", lim[0], lim[1])
		p.Do("SORT", "z", "BY", "nosort", "LIMIT", lim[0], lim[1], "DESC")
		p.Do("SORT", "z", "ALPHA", "LIMIT", lim[0], lim[1])
		p.Do("SORT", "nokey", "BY", "nosort", "LIMIT", lim[0], lim[1])
	}
	p.Do("SORT", "l", "LIMIT", "1", "x")
	p.Do("SORT", "l", "LIMIT", "x", "1")
	p.Do("SORT", "l", "LIMIT", "1.5", "1")
	p.Do("SORT", "l", "LIMIT", "1")
	p.Do("SORT", "l", "LIMIT", "0", "2", "LIMIT", "1", "2")
}

func TestSortByGet(t *testing.T) {
	p := difftest.Start74(t)
	p.Do("RPUSH", "l", "a", "b", "c", "d", "e")
	p.Do("MSET", "w_a", "30", "w_b", "10", "w_c", "20", "w_e", "5")
	p.Do("HSET", "h_a", "f", "z", "n", "3")
	p.Do("HSET", "h_b", "f", "x", "n", "1")
	p.Do("HSET", "h_c", "f", "y")
	p.Do("HSET", "h_d", "f", "w", "n", "4")
	p.Do("MSET", "o_a", "A", "o_b", "B", "o_d", "D")
	p.Do("SORT", "l", "BY", "w_*")
	p.Do("SORT", "l", "BY", "w_*", "DESC")
	p.Do("SORT", "l", "BY", "w_*", "LIMIT", "1", "2")
	p.Do("SORT", "l", "BY", "h_*->f", "ALPHA")
	p.Do("SORT", "l", "BY", "h_*->f", "ALPHA", "DESC")
	p.Do("SORT", "l", "BY", "h_*->n")
	p.Do("SORT", "l", "BY", "h_*->n", "DESC", "GET", "#", "GET", "h_*->f", "GET", "o_*", "GET", "w_*")
	p.Do("SORT", "l", "BY", "w_*", "GET", "o_*")
	p.Do("SORT", "l", "ALPHA", "GET", "h_*->f", "GET", "#")
	p.Do("SORT", "l", "ALPHA", "GET", "nostar", "GET", "h_*->", "GET", "h_*->missing")
	p.Do("SORT", "l", "BY", "h_*->f")       // not numbers
	p.Do("SORT", "l", "BY", "o_*", "ALPHA") // missing sorts first
	p.Do("SORT_RO", "l", "BY", "o_*", "ALPHA", "DESC", "GET", "#")
	// BY a key of the wrong type counts as missing.
	p.Do("SORT", "l", "BY", "h_*", "ALPHA", "GET", "h_*")
	// BY without '*' keeps the container order, even with a later pattern.
	p.Do("SORT", "l", "BY", "nosort")
	p.Do("SORT", "l", "BY", "nosort", "DESC")
	p.Do("SORT", "l", "BY", "nosort", "BY", "w_*")
	p.Do("SORT", "l", "BY", "nosort", "GET", "o_*", "DESC", "LIMIT", "1", "3")
	p.Do("ZADD", "z", "1", "c", "2", "a", "3", "b")
	p.Do("SORT", "z", "BY", "nosort")
	p.Do("SORT", "z", "BY", "nosort", "DESC", "GET", "o_*", "GET", "#")
	p.Do("SORT", "z", "BY", "w_*")
	p.Do("SADD", "s", "a", "b", "c", "d")
	p.DoUnordered("SORT", "s", "BY", "nosort")
	p.DoUnordered("SORT", "s", "BY", "nosort", "GET", "#")
	p.Do("SORT", "s", "BY", "w_*")
	p.Do("SORT", "s", "BY", "h_*->f", "ALPHA", "GET", "o_*")
	p.Do("SADD", "si", "3", "1", "2")
	p.Do("SET", "w_1", "9")
	p.Do("SORT", "si", "BY", "w_*")
	p.Do("SORT", "si", "GET", "w_*", "GET", "#")
	p.Proto(3)
	p.Do("SORT", "l", "BY", "h_*->n", "GET", "#", "GET", "o_*")
	p.Do("SORT_RO", "z", "BY", "nosort", "GET", "nothere_*")
	p.Do("SORT", "nokey")
	p.Do("SORT", "l", "BY", "h_*->f")
	p.Do("SORT", "l", "STORE", "dst", "GET", "o_*")
	p.Do("LRANGE", "dst", "0", "-1")
	p.Proto(2)
	p.DoCompare(keyspaceSince70, "INFO", "keyspace")
}

func TestSortStore(t *testing.T) {
	p := difftest.Start(t)
	p.Do("RPUSH", "l", "3", "1", "2")
	p.Do("SET", "dst", "string")
	p.Do("EXPIRE", "dst", "100")
	p.Do("SORT", "l", "STORE", "dst")
	p.Do("TYPE", "dst")
	p.Do("TTL", "dst")
	p.Do("LRANGE", "dst", "0", "-1")
	p.Do("OBJECT", "ENCODING", "dst")
	p.Do("SADD", "dst2", "x")
	p.Do("SORT", "l", "DESC", "STORE", "dst2", "LIMIT", "0", "2")
	p.Do("LRANGE", "dst2", "0", "-1")
	// Missing GET values are stored as empty strings.
	p.Do("SET", "o_1", "one")
	p.Do("SORT", "l", "GET", "#", "GET", "o_*", "STORE", "dst3")
	p.Do("LRANGE", "dst3", "0", "-1")
	// An empty result deletes the destination.
	p.Do("SORT", "nokey", "STORE", "dst")
	p.Do("EXISTS", "dst")
	p.Do("SORT", "l", "LIMIT", "5", "5", "STORE", "dst2")
	p.Do("EXISTS", "dst2")
	p.Do("SORT", "nokey", "STORE", "none")
	// Storing over the source.
	p.Do("SORT", "l", "DESC", "STORE", "l")
	p.Do("LRANGE", "l", "0", "-1")
	// A set with BY nosort is sorted ALPHA when stored.
	p.Do("SADD", "s", "b", "10", "a", "9", "c")
	p.Do("SORT", "s", "BY", "nosort", "STORE", "ds")
	p.Do("LRANGE", "ds", "0", "-1")
	p.Do("SORT", "s", "BY", "nosort", "DESC", "STORE", "ds")
	p.Do("LRANGE", "ds", "0", "-1")
	// A conversion error stores nothing.
	p.Do("SORT", "s", "STORE", "ds2")
	p.Do("EXISTS", "ds2")
	// A big result.
	args := []any{"RPUSH", "big"}
	for i := 0; i < 300; i++ {
		args = append(args, (i*7919)%1000)
	}
	p.Do(args...)
	p.Do("SORT", "big", "STORE", "bigd")
	p.Do("LRANGE", "bigd", "0", "-1")
	p.Do("OBJECT", "ENCODING", "bigd")
	p.Do("SORT", "big", "DESC", "LIMIT", "10", "20")
	p.Do("SORT_RO", "l", "STORE", "x")
	p.DoCompare(keyspaceSince70, "INFO", "keyspace")
}

// Inside a script, a set sorted BY a pattern without '*' (or nosort) is
// sorted ALPHA as when stored; lists and sorted sets keep their order.
func TestSortNoSortInScript(t *testing.T) {
	p := difftest.Start(t)
	p.Do("SADD", "s", "c", "a", "b", "d", "e", "10", "9")
	p.Do("SADD", "si", "5", "3", "-2", "100", "7")
	p.Do("RPUSH", "l", "3", "1", "2")
	p.Do("ZADD", "z", "3", "a", "1", "b", "2", "c")
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		for _, key := range []string{"s", "si", "l", "z"} {
			for _, tail := range [][]any{
				{"BY", "nosort"}, {"BY", "constant"}, {"BY", "constant", "DESC"}, {"BY", "x", "ALPHA"},
				{"BY", "nosort", "LIMIT", "1", "3"}, {"BY", "x", "GET", "#"}, {"BY", "x", "GET", "nokey_*"},
			} {
				args := append([]any{"EVAL", "return redis.call('sort', KEYS[1], unpack(ARGV))", "1", key}, tail...)
				p.Do(args...)
				args[1] = "return redis.call('sort_ro', KEYS[1], unpack(ARGV))"
				p.Do(args...)
			}
		}
		p.Do("EVAL", "return redis.call('sort', KEYS[1], 'BY', 'nosort', 'STORE', KEYS[2])", "2", "s", "dst")
		p.Do("LRANGE", "dst", "0", "-1")
	}
}

func TestSortErrors(t *testing.T) {
	p := difftest.Start(t)
	p.Do("RPUSH", "l", "1", "2")
	p.Do("SET", "str", "x")
	p.Do("SORT")
	p.Do("SORT_RO")
	p.Do("SORT", "l", "foo")
	p.Do("SORT", "l", "BY")
	p.Do("SORT", "l", "GET")
	p.Do("SORT", "l", "STORE")
	p.Do("SORT", "l", "LIMIT", "0")
	p.Do("SORT", "str", "foo")
	p.Do("SORT", "str", "LIMIT", "a", "b")
	p.Do("SORT", "str", "BY", "nosort")
	p.Do("SORT", "str", "STORE", "d")
	p.Do("EXISTS", "d")
	p.Do("SORT", "l", "ALPHA", "foo")
	p.Do("SORT_RO", "l", "STORE", "d")
	p.Do("SORT", "l", "limit", "0", "1", "alpha", "desc", "by", "nosort", "get", "#", "store", "d")
	p.Do("LRANGE", "d", "0", "-1")
	p.Do("SORT", "l", "GET", "#\x00x")
	p.Do("SORT", "l", "BY", "no\x00*")
	p.DoCompare(commandInfoCompare, "COMMAND", "INFO", "sort", "sort_ro")
	p.Proto(3)
	p.Do("SORT", "l", "foo")
	p.Do("SORT", "str")
}

// TestSortRangeErrors comes last: Redis does not clear errno before strtod, so
// after an out-of-range weight a later SORT on the same connection can fail
// until some system call resets errno; fresh connections do.
func TestSortRangeErrors(t *testing.T) {
	p := difftest.Start(t)
	for _, v := range []string{"1e400", "-1e400", "1e-400", "1e-310", "2.2250738585072011e-308"} {
		p.Do("DEL", "w")
		p.Do("RPUSH", "w", v, "3")
		p.Do("SORT", "w")
		p.Reconnect()
	}
}
