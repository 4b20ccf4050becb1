package server_test

import (
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestZAggregateCount: AGGREGATE COUNT (Redis 8.8) of ZUNION, ZINTER,
// ZUNIONSTORE and ZINTERSTORE, as https://redis.io/docs/latest/commands/zunionstore/
// (and zunion/, zinter/, zinterstore/) documents it: the inputs' scores are
// ignored, each input holding a member adds 1 to its score, or its weight
// under WEIGHTS. The first cases are go-redis v9.22.0's spec "should support
// COUNT aggregate for ZUnion and ZInter" (commands_test.go), whose replies
// they state; TestGoRedisRedis8CommandSpecs runs that spec itself.
func TestZAggregateCount(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.Start(t)
	k := p.Keyhive()
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		ws := func(ms ...string) string { return withScores(proto, ms...) }
		k.Do("ZADD", "zset1", 100, "foo", 100, "bar")
		k.Do("ZADD", "zset2", 200, "foo", 200, "bar")
		k.Do("ZADD", "zset3", 300, "foo")
		docCase(t, p, bulkArray("bar", "foo"), "ZUNION", "3", "zset1", "zset2", "zset3", "AGGREGATE", "COUNT")
		docCase(t, p, ws("bar", "2", "foo", "3"), "ZUNION", "3", "zset1", "zset2", "zset3", "AGGREGATE", "COUNT", "WITHSCORES")
		docCase(t, p, ":2\r\n", "ZUNIONSTORE", "out", "3", "zset1", "zset2", "zset3", "AGGREGATE", "COUNT")
		docCase(t, p, ws("bar", "2", "foo", "3"), "ZRANGE", "out", "0", "-1", "WITHSCORES")
		docCase(t, p, ":2\r\n", "ZUNIONSTORE", "weighted_out", "3", "zset1", "zset2", "zset3", "WEIGHTS", "10", "5", "3", "AGGREGATE", "COUNT")
		docCase(t, p, ws("bar", "15", "foo", "18"), "ZRANGE", "weighted_out", "0", "-1", "WITHSCORES")
		docCase(t, p, bulkArray("foo"), "ZINTER", "3", "zset1", "zset2", "zset3", "AGGREGATE", "COUNT")
		docCase(t, p, ws("foo", "3"), "ZINTER", "3", "zset1", "zset2", "zset3", "AGGREGATE", "COUNT", "WITHSCORES")
		docCase(t, p, ":1\r\n", "ZINTERSTORE", "inter_out", "3", "zset1", "zset2", "zset3", "WEIGHTS", "10", "5", "3", "AGGREGATE", "COUNT")
		docCase(t, p, ws("foo", "18"), "ZRANGE", "inter_out", "0", "-1", "WITHSCORES")

		// The pages' example sets, counted: membership, then weights summed
		// (a negative one subtracts); a plain set counts as an input too.
		k.Do("ZADD", "z1", 1, "one", 2, "two")
		k.Do("ZADD", "z2", 1, "one", 2, "two", 3, "three")
		docCase(t, p, ws("three", "1", "one", "2", "two", "2"), "ZUNION", "2", "z1", "z2", "AGGREGATE", "COUNT", "WITHSCORES")
		docCase(t, p, ws("three", "3", "one", "5", "two", "5"), "ZUNION", "2", "z1", "z2", "WEIGHTS", "2", "3", "AGGREGATE", "count", "WITHSCORES")
		docCase(t, p, ws("one", "-1", "two", "-1"), "ZINTER", "2", "z1", "z2", "WEIGHTS", "2", "-3", "AGGREGATE", "COUNT", "WITHSCORES")
		docCase(t, p, ":2\r\n", "ZINTERSTORE", "o2", "2", "z1", "z2", "AGGREGATE", "COUNT")
		docCase(t, p, ws("one", "2", "two", "2"), "ZRANGE", "o2", "0", "-1", "WITHSCORES")
		k.Do("SADD", "plain", "one", "four")
		docCase(t, p, ws("four", "1", "three", "1", "two", "2", "one", "3"), "ZUNION", "3", "z1", "z2", "plain", "AGGREGATE", "COUNT", "WITHSCORES")
		// Missing keys add nothing; the option's last word wins.
		docCase(t, p, ws("one", "1", "two", "1"), "ZUNION", "2", "z1", "nokey", "AGGREGATE", "MAX", "AGGREGATE", "COUNT", "WITHSCORES")
		docCase(t, p, ws("one", "1", "two", "2"), "ZUNION", "2", "z1", "nokey", "AGGREGATE", "COUNT", "AGGREGATE", "MAX", "WITHSCORES")
		docCase(t, p, "-ERR syntax error\r\n", "ZUNION", "2", "z1", "z2", "AGGREGATE", "COUNTS")
		docCase(t, p, "-ERR syntax error\r\n", "ZDIFF", "2", "z1", "z2", "AGGREGATE", "COUNT")
		k.Do("FLUSHALL")
	}
}

// TestZAggregateCountPropagation: a STORE with AGGREGATE COUNT propagates as
// sent, as its other aggregates do (the result follows from the data).
func TestZAggregateCountPropagation(t *testing.T) {
	s := startKeyhiveProp(t)
	s.collect()
	for _, step := range []propStep{
		w("ZADD a 5 x 6 y", "ZADD a 5 x 6 y"),
		w("ZUNIONSTORE d 2 a b WEIGHTS 2 1 AGGREGATE COUNT", "ZUNIONSTORE d 2 a b WEIGHTS 2 1 AGGREGATE COUNT"),
		w("ZINTERSTORE e 2 a d AGGREGATE COUNT", "ZINTERSTORE e 2 a d AGGREGATE COUNT"),
		w("ZUNION 1 a AGGREGATE COUNT"),
	} {
		reply := s.conn.do(t, step.cmd...)
		if err := matchPropagated(s.collect(), step.want, 0, 0, 0); err != nil {
			t.Errorf("%q (reply %v): %v", step.cmd, reply, err)
		}
	}
}
