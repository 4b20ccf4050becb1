package server_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestSeedWaitingRoom replays the waiting-room schema of seed 002 (lists,
// sorted sets, hashes, sets, counters, TTLs) against both servers: the
// document's own command sequences for many users, including those its four
// Lua scripts run (unrolled here until scripting exists), with replies
// compared byte for byte. It runs with the default encoding limits and with
// tiny ones, so both the compact and the large forms serve the workload.
func TestSeedWaitingRoom(t *testing.T) {
	for _, limits := range [][]string{nil, {"--zset-max-listpack-entries", "4", "--hash-max-listpack-entries", "2",
		"--set-max-intset-entries", "2", "--list-max-listpack-size", "2"}} {
		p := difftest.StartIsolated(t, limits...)
		replayWaitingRoom(p, rand.New(rand.NewPCG(2, 2)))
	}
}

func replayWaitingRoom(p *difftest.Pair, rng *rand.Rand) {
	const q = "queue:concert-tickets"
	p.Do("HSET", q+":meta", "name", "Concert Ticket Sale", "target_url", "https://example.com/checkout", "status", "active", "capacity", "100")
	p.Do("HGET", q+":meta", "status")
	p.DoUnorderedPairs("HGETALL", q+":meta")
	p.Do("SET", "admission:concert-tickets:tokens", "50")
	now := int64(1704067200)
	var waiting []string
	for i := range 120 {
		now += int64(rng.IntN(3))
		pos := fmt.Sprintf("550e8400-e29b-41d4-a716-%012d", i)
		sess := fmt.Sprintf("a1b2c3d4-e5f6-7890-%04d", i)
		prio := rng.IntN(3)
		// Enqueue script: idempotency check, list, positions zset, position
		// hash with TTL, session mapping, heartbeat.
		p.Do("GET", "session-position:"+sess)
		if prio == 2 {
			p.Do("LPUSH", fmt.Sprintf("%s:waiting:%d", q, prio), pos)
		} else {
			p.Do("RPUSH", fmt.Sprintf("%s:waiting:%d", q, prio), pos)
		}
		p.Do("ZADD", q+":positions", now*1000000+int64(i), pos)
		p.Do("HSET", "position:"+pos, "queue_id", "concert-tickets", "status", "waiting", "priority", prio, "joined_at", now)
		p.Do("EXPIRE", "position:"+pos, 1800)
		p.Do("SET", "session-position:"+sess, pos, "EX", 1800)
		p.Do("ZADD", "heartbeat:active", now, pos)
		p.Do("ZRANK", q+":positions", pos)
		p.Do("ZCARD", q+":positions")
		// Rate limit (sliding window) and hourly stats.
		rl := fmt.Sprintf("ratelimit:192.168.1.%d:enqueue", i%7)
		p.Do("ZADD", rl, now*1000, fmt.Sprintf("req-uuid-%d", i))
		p.Do("ZREMRANGEBYSCORE", rl, "-inf", (now-60)*1000)
		p.Do("ZCARD", rl)
		p.Do("EXPIRE", rl, 60)
		p.Do("HINCRBY", "stats:concert-tickets:hourly:2024010112", "total_enqueued", 1)
		waiting = append(waiting, pos)

		if i%5 == 4 {
			// Heartbeat script.
			hb := waiting[rng.IntN(len(waiting))]
			p.Do("EXISTS", "position:"+hb)
			p.Do("HSET", "position:"+hb, "last_heartbeat", now)
			p.Do("EXPIRE", "position:"+hb, 1800)
			p.Do("ZADD", "heartbeat:active", now, hb)
		}
		if i%8 == 7 {
			// Admit script: pop by priority, token bucket, session.
			for lvl := 2; lvl >= 0; lvl-- {
				key := fmt.Sprintf("%s:waiting:%d", q, lvl)
				p.Do("LLEN", key)
				p.Do("LINDEX", key, 0)
			}
			p.Do("DECR", "admission:concert-tickets:tokens")
			for lvl := 2; lvl >= 0; lvl-- {
				popped := p.Do("LPOP", fmt.Sprintf("%s:waiting:%d", q, lvl))
				if popped.Null {
					continue
				}
				p.Do("ZREM", q+":positions", popped.Str)
				p.Do("HSET", "position:"+popped.Str, "status", "admitted", "admitted_at", now)
				p.Do("SADD", q+":sessions:active", sess)
				p.Do("HSET", "session:"+sess, "queue_id", "concert-tickets", "position_id", popped.Str, "page_views", 0)
				p.Do("EXPIRE", "session:"+sess, 3600)
				p.Do("HINCRBY", "session:"+sess, "page_views", 1)
				p.DoUnorderedPairs("HGETALL", "session:"+sess)
				p.Do("HINCRBY", "stats:concert-tickets:hourly:2024010112", "total_admitted", 1)
				break
			}
			p.Do("INCR", "admission:concert-tickets:tokens")
		}
		if i%20 == 19 {
			// Cleanup script: stale heartbeats leave the queue.
			cutoff := now - 5
			stale := p.Do("ZRANGEBYSCORE", "heartbeat:active", "-inf", cutoff, "LIMIT", 0, 10)
			for _, e := range stale.Elems {
				p.Do("ZREM", "heartbeat:active", e.Str)
				p.Do("ZREM", q+":positions", e.Str)
				p.Do("HSET", "position:"+e.Str, "status", "expired")
			}
			p.Do("ZREMRANGEBYSCORE", "heartbeat:active", "-inf", cutoff-100)
			p.Do("ZCARD", "heartbeat:active")
			p.Do("SREM", q+":sessions:active", fmt.Sprintf("a1b2c3d4-e5f6-7890-%04d", i-10))
			p.Do("SCARD", q+":sessions:active")
			p.DoUnordered("SMEMBERS", q+":sessions:active")
		}
	}
	p.Do("ZRANGE", q+":positions", 0, 9)
	p.Do("ZRANGE", q+":positions", 0, -1, "WITHSCORES")
	p.Do("ZRANGEBYSCORE", "heartbeat:active", "-inf", now, "LIMIT", 0, 100)
	p.Do("HSET", "stats:concert-tickets:hourly:2024010112", "peak_queue_size", 12000)
	p.DoUnorderedPairs("HGETALL", "stats:concert-tickets:hourly:2024010112")
	for lvl := range 3 {
		p.Do("LRANGE", fmt.Sprintf("%s:waiting:%d", q, lvl), 0, -1)
	}
	p.DoApprox(1, "TTL", "position:"+waiting[0])
	p.DoApprox(1, "TTL", "ratelimit:192.168.1.3:enqueue")
	p.Do("DBSIZE")
}
