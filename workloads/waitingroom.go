package workloads

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

//go:embed seed002/*.lua
var seed002 embed.FS

// WaitingRoomScripts is seed 002's four Lua scripts verbatim, by name
// (enqueue, dequeue, heartbeat, cleanup): the one copy in the repository.
var WaitingRoomScripts = func() map[string]string {
	scripts := map[string]string{}
	entries, _ := seed002.ReadDir("seed002")
	for _, e := range entries {
		b, _ := seed002.ReadFile("seed002/" + e.Name())
		scripts[strings.TrimSuffix(e.Name(), ".lua")] = string(b)
	}
	return scripts
}()

// WaitingRoom is seed 002, the waiting-room queue: the queue's meta hash,
// priority lists, positions sorted set, position and session hashes with
// TTLs, the active-session set, heartbeat sorted set, sliding-window rate
// limit, revocations, token bucket, IP map and hourly stats, with the
// document's four Lua scripts loaded by SCRIPT LOAD and run by EVALSHA.
var WaitingRoom = Workload{
	Name:     "waitingroom",
	Seed:     "002",
	Scenario: waitingRoomScenario,
	Prepare: func(ctx context.Context, rdb *redis.Client) error {
		wrBenchSeq.Store(0)
		benchRooms.reset()
		_, err := newWaitingRoom(ctx, rdb, "bench", 1_000_000)
		return err
	},
	Op: func(ctx context.Context, rdb *redis.Client, rng *rand.Rand) error {
		w := benchRooms.get(ctx, rdb)
		now := time.Now()
		n := int(wrBenchSeq.Load())
		switch r := rng.IntN(100); {
		case r < 20 || n == 0:
			i := int(wrBenchSeq.Add(1))
			_, _, err := w.enqueue(ctx, wrPositionID(i), wrIP(rng.IntN(1_000_000)), rng.IntN(4), now)
			return err
		case r < 70:
			_, err := w.heartbeat(ctx, wrPositionID(1+rng.IntN(n)), now)
			return err
		default:
			_, err := w.status(ctx, wrPositionID(1+rng.IntN(n)))
			return err
		}
	},
	Background: func(ctx context.Context, rdb *redis.Client) {
		w := benchRooms.get(ctx, rdb)
		tick := time.NewTicker(10 * time.Millisecond) // admission at a steady 100 users/s
		defer tick.Stop()
		for i := 0; ctx.Err() == nil; i++ {
			<-tick.C
			w.admit(ctx, 1, fmt.Sprintf("sess-%d", i), time.Now())
		}
	},
}

// wrBenchSeq numbers the benchmark's positions across clients and runs.
var wrBenchSeq atomic.Int64

// benchRooms keeps one loaded waitingRoom (script SHAs) per server client.
var benchRooms = roomCache{rooms: map[*redis.Client]*waitingRoom{}}

type roomCache struct {
	mu    sync.Mutex
	rooms map[*redis.Client]*waitingRoom
}

func (c *roomCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.rooms)
}

func (c *roomCache) get(ctx context.Context, rdb *redis.Client) *waitingRoom {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w := c.rooms[rdb]; w != nil {
		return w
	}
	w, err := newWaitingRoom(ctx, rdb, "bench", 1_000_000)
	if err != nil {
		return &waitingRoom{rdb: rdb} // its calls fail and are counted as errors
	}
	c.rooms[rdb] = w
	return w
}

const (
	wrPositionTTL = 1800 * time.Second
	wrSessionTTL  = 3600 * time.Second
	wrRateWindow  = time.Minute
	wrRateLimit   = 5 // enqueues per IP per window
	wrMaxTokens   = 1000
)

// waitingRoom is the service's data layer for one queue.
type waitingRoom struct {
	rdb *redis.Client
	id  string
	sha map[string]string
}

// newWaitingRoom loads the scripts and creates the queue's meta hash and
// token bucket.
func newWaitingRoom(ctx context.Context, rdb *redis.Client, id string, maxQueue int) (*waitingRoom, error) {
	w := &waitingRoom{rdb: rdb, id: id, sha: map[string]string{}}
	for _, name := range []string{"enqueue", "dequeue", "heartbeat", "cleanup"} {
		sha, err := rdb.ScriptLoad(ctx, WaitingRoomScripts[name]).Result()
		if err != nil {
			return nil, err
		}
		w.sha[name] = sha
	}
	now := int64(1704067200)
	if err := rdb.HSet(ctx, w.meta(), "name", "Concert Ticket Sale", "target_url", "https://example.com/checkout",
		"max_active", 1000, "max_queue_size", maxQueue, "admission_rate", 10, "status", "active",
		"created_at", now, "updated_at", now).Err(); err != nil {
		return nil, err
	}
	if err := rdb.Set(ctx, "admission:"+id+":tokens", wrMaxTokens, 0).Err(); err != nil {
		return nil, err
	}
	return w, rdb.Set(ctx, "admission:"+id+":last_update", now, 0).Err()
}

func (w *waitingRoom) meta() string { return "queue:" + w.id + ":meta" }
func (w *waitingRoom) waiting(priority int) string {
	return fmt.Sprintf("queue:%s:waiting:%d", w.id, priority)
}
func (w *waitingRoom) positions() string { return "queue:" + w.id + ":positions" }
func (w *waitingRoom) active() string    { return "queue:" + w.id + ":sessions:active" }
func (w *waitingRoom) stats(now time.Time) string {
	return "stats:" + w.id + ":hourly:" + now.UTC().Format("2006010215")
}

func wrPositionID(i int) string { return fmt.Sprintf("550e8400-e29b-41d4-a716-%012d", i) }
func wrIP(i int) string         { return fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255) }
func wrIPHash(ip string) string { return fmt.Sprintf("%012x", crc32.ChecksumIEEE([]byte(ip))) }

// allowed is the sliding-window rate limit on the IP's enqueues.
func (w *waitingRoom) allowed(ctx context.Context, ip, requestID string, now time.Time) (bool, error) {
	key := "ratelimit:" + ip + ":enqueue"
	var card *redis.IntCmd
	_, err := w.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.ZAdd(ctx, key, redis.Z{Score: float64(now.UnixMilli()), Member: requestID})
		p.ZRemRangeByScore(ctx, key, "-inf", strconv.FormatInt(now.Add(-wrRateWindow).UnixMilli(), 10))
		card = p.ZCard(ctx, key)
		p.Expire(ctx, key, wrRateWindow)
		return nil
	})
	return err == nil && card.Val() <= wrRateLimit, err
}

// enqueue runs the enqueue script; created is false when the IP already
// holds a position (returned instead).
func (w *waitingRoom) enqueue(ctx context.Context, id, ip string, priority int, now time.Time) (position string, created bool, err error) {
	ipHash := wrIPHash(ip)
	keys := []string{w.waiting(priority), w.positions(), "position:" + id, "ipmap:" + w.id + ":" + ipHash, "heartbeat:active"}
	meta := fmt.Sprintf(`{"user_agent":"Mozilla/5.0","ip":%q,"priority":%d}`, ip, priority)
	res, err := w.rdb.EvalSha(ctx, w.sha["enqueue"], keys, id, now.UnixMicro(), ipHash, int(wrPositionTTL/time.Second), meta).Slice()
	if err != nil {
		return "", false, err
	}
	if res[0].(int64) == 0 {
		return res[1].(string), false, nil
	}
	_, err = w.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.HIncrBy(ctx, w.stats(now), "total_enqueued", 1)
		p.ExpireNX(ctx, w.stats(now), 24*time.Hour)
		return nil
	})
	return id, true, err
}

// heartbeat runs the heartbeat script: 0 when the position is gone.
func (w *waitingRoom) heartbeat(ctx context.Context, id string, now time.Time) (int64, error) {
	return w.rdb.EvalSha(ctx, w.sha["heartbeat"], []string{"position:" + id, "heartbeat:active"}, id, now.Unix(), int(wrPositionTTL/time.Second)).Int64()
}

// status is the client's poll: rank, queue size and its position's status.
func (w *waitingRoom) status(ctx context.Context, id string) ([]redis.Cmder, error) {
	cmds, err := w.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRank(ctx, w.positions(), id)
		p.ZCard(ctx, w.positions())
		p.HGet(ctx, "position:"+id, "status")
		p.HGet(ctx, w.meta(), "status")
		return nil
	})
	if errors.Is(err, redis.Nil) {
		err = nil
	}
	return cmds, err
}

// refill is the token bucket's refill from last_update at admission_rate.
func (w *waitingRoom) refill(ctx context.Context, now time.Time) error {
	last, err := w.rdb.Get(ctx, "admission:"+w.id+":last_update").Int64()
	if err != nil {
		return err
	}
	rate, err := w.rdb.HGet(ctx, w.meta(), "admission_rate").Int64()
	if err != nil {
		return err
	}
	tokens, err := w.rdb.Get(ctx, "admission:"+w.id+":tokens").Int64()
	if err != nil {
		return err
	}
	if elapsed := now.Unix() - last; elapsed > 0 {
		tokens = min(wrMaxTokens, tokens+elapsed*rate)
		if err := w.rdb.Set(ctx, "admission:"+w.id+":tokens", tokens, 0).Err(); err != nil {
			return err
		}
		return w.rdb.Set(ctx, "admission:"+w.id+":last_update", now.Unix(), 0).Err()
	}
	return nil
}

// admit admits up to n users: a token each (returned when the queue is
// empty), the dequeue script, then the session hash.
func (w *waitingRoom) admit(ctx context.Context, n int, sessionPrefix string, now time.Time) ([]string, error) {
	var admitted []string
	for i := range n {
		left, err := w.rdb.Decr(ctx, "admission:"+w.id+":tokens").Result()
		if err != nil {
			return admitted, err
		}
		if left < 0 {
			return admitted, w.rdb.Incr(ctx, "admission:"+w.id+":tokens").Err()
		}
		session := fmt.Sprintf("%s-%d", sessionPrefix, i)
		keys := []string{w.waiting(0), w.waiting(1), w.waiting(2), w.waiting(3), w.positions(), w.active()}
		position, err := w.rdb.EvalSha(ctx, w.sha["dequeue"], keys, session, now.Unix()).Text()
		if errors.Is(err, redis.Nil) {
			return admitted, w.rdb.Incr(ctx, "admission:"+w.id+":tokens").Err()
		}
		if err != nil {
			return admitted, err
		}
		_, err = w.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.HSet(ctx, "session:"+session, "queue_id", w.id, "position_id", position, "user_id", "user-"+position[len(position)-4:],
				"token", "eyJhbGciOiJSUzI1NiIs."+session, "started_at", now.Unix(), "expires_at", now.Add(wrSessionTTL).Unix(),
				"last_activity", now.Unix(), "page_views", 0, "status", "active")
			p.Expire(ctx, "session:"+session, wrSessionTTL)
			p.HIncrBy(ctx, w.stats(now), "total_admitted", 1)
			p.ExpireNX(ctx, w.stats(now), 24*time.Hour)
			return nil
		})
		if err != nil {
			return admitted, err
		}
		admitted = append(admitted, session)
	}
	return admitted, nil
}

// activity is a page view in an admitted session.
func (w *waitingRoom) activity(ctx context.Context, session string, now time.Time) error {
	_, err := w.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, "session:"+session, "last_activity", now.Unix())
		p.HIncrBy(ctx, "session:"+session, "page_views", 1)
		p.Expire(ctx, "session:"+session, wrSessionTTL)
		p.HGetAll(ctx, "session:"+session)
		return nil
	})
	return err
}

// terminate ends a session and revokes its token for the rest of its TTL.
func (w *waitingRoom) terminate(ctx context.Context, session string) error {
	token, err := w.rdb.HGet(ctx, "session:"+session, "token").Result()
	if err != nil {
		return err
	}
	ttl, err := w.rdb.TTL(ctx, "session:"+session).Result()
	if err != nil {
		return err
	}
	if err := w.rdb.SRem(ctx, w.active(), session).Err(); err != nil {
		return err
	}
	if err := w.rdb.HSet(ctx, "session:"+session, "status", "terminated").Err(); err != nil {
		return err
	}
	// The revocation lives as long as the token could: the session's TTL,
	// to the minute.
	return w.rdb.Set(ctx, "revocation:"+token, "session_terminated", ttl.Round(time.Minute)).Err()
}

// revoked is the token check at the target site.
func (w *waitingRoom) revoked(ctx context.Context, token string) (bool, error) {
	if _, err := w.rdb.Get(ctx, "revocation:"+token).Result(); err != nil && !errors.Is(err, redis.Nil) {
		return false, err
	}
	n, err := w.rdb.Exists(ctx, "revocation:"+token).Result()
	return n == 1, err
}

// cleanup runs the cleanup script for heartbeats older than cutoff, then
// trims the heartbeat set as the document's commands do.
func (w *waitingRoom) cleanup(ctx context.Context, cutoff time.Time, batch int) ([]string, error) {
	expired, err := w.rdb.EvalSha(ctx, w.sha["cleanup"], []string{"heartbeat:active", w.positions()}, cutoff.Unix(), batch).StringSlice()
	if err != nil || len(expired) == 0 {
		return expired, err
	}
	if err := w.rdb.ZRangeByScore(ctx, "heartbeat:active", &redis.ZRangeBy{Min: "-inf", Max: strconv.FormatInt(cutoff.Unix(), 10)}).Err(); err != nil {
		return expired, err
	}
	if err := w.rdb.ZRemRangeByScore(ctx, "heartbeat:active", "-inf", strconv.FormatInt(cutoff.Unix(), 10)).Err(); err != nil {
		return expired, err
	}
	return expired, w.rdb.HIncrBy(ctx, w.stats(cutoff), "total_expired", int64(len(expired))).Err()
}

// waitingRoomScenario runs a sale: users enqueue (some twice from one IP,
// some rate limited), poll and heartbeat; admission ticks at the queue's
// rate; admitted users browse, some sessions end with a revocation; a VIP is
// put back in front when admission fails; cleanup expires silent positions.
func waitingRoomScenario(ctx context.Context, env *Env) error {
	rdb := env.Client("service")
	rng := rand.New(rand.NewPCG(2, 2))
	w, err := newWaitingRoom(ctx, rdb, "concert-tickets", 50000)
	if err != nil {
		return err
	}
	if err := rdb.HGetAll(ctx, w.meta()).Err(); err != nil {
		return err
	}
	now := time.Unix(1704067200, 0)
	var positions, sessions []string
	for step := range 500 {
		now = now.Add(time.Duration(rng.IntN(1500)) * time.Millisecond)
		switch r := rng.IntN(100); {
		case r < 30:
			ip := wrIP(rng.IntN(60))
			ok, err := w.allowed(ctx, ip, fmt.Sprintf("req-%d", step), now)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			pos, created, err := w.enqueue(ctx, wrPositionID(step), ip, rng.IntN(4), now)
			if err != nil {
				return err
			}
			if created {
				positions = append(positions, pos)
			}
		case r < 55 && len(positions) > 0:
			if _, err := w.heartbeat(ctx, positions[rng.IntN(len(positions))], now); err != nil {
				return err
			}
		case r < 70 && len(positions) > 0:
			if _, err := w.status(ctx, positions[rng.IntN(len(positions))]); err != nil {
				return err
			}
			if err := rdb.LIndex(ctx, w.waiting(0), 0).Err(); err != nil && !errors.Is(err, redis.Nil) {
				return err
			}
			for p := range 4 {
				if err := rdb.LLen(ctx, w.waiting(p)).Err(); err != nil {
					return err
				}
			}
		case r < 80:
			if err := w.refill(ctx, now); err != nil {
				return err
			}
			admitted, err := w.admit(ctx, 1+rng.IntN(3), fmt.Sprintf("a1b2c3d4-%d", step), now)
			if err != nil {
				return err
			}
			sessions = append(sessions, admitted...)
		case r < 90 && len(sessions) > 0:
			if err := w.activity(ctx, sessions[rng.IntN(len(sessions))], now); err != nil {
				return err
			}
		case r < 94 && len(sessions) > 0:
			i := rng.IntN(len(sessions))
			if err := w.terminate(ctx, sessions[i]); err != nil {
				return err
			}
			token := "eyJhbGciOiJSUzI1NiIs." + sessions[i]
			sessions = slices.Delete(sessions, i, i+1)
			if _, err := w.revoked(ctx, token); err != nil {
				return err
			}
		case r < 96:
			// A VIP whose checkout failed goes back in front; the token is returned.
			if err := rdb.LPush(ctx, w.waiting(2), wrPositionID(10000+step)).Err(); err != nil {
				return err
			}
			if err := rdb.Incr(ctx, "admission:"+w.id+":tokens").Err(); err != nil {
				return err
			}
		default:
			expired, err := w.cleanup(ctx, now.Add(-10*time.Second), 5)
			if err != nil {
				return err
			}
			if len(expired) > 0 {
				if err := rdb.HSet(ctx, w.stats(now), "peak_queue_size", rdb.ZCard(ctx, w.positions()).Val()).Err(); err != nil {
					return err
				}
			}
		}
	}
	for _, cmd := range []redis.Cmder{
		rdb.ZRange(ctx, w.positions(), 0, 9), rdb.ZCard(ctx, "heartbeat:active"),
		rdb.SCard(ctx, w.active()), rdb.SMembers(ctx, w.active()), rdb.HGetAll(ctx, w.stats(now)),
		rdb.Get(ctx, "admission:"+w.id+":tokens"), rdb.HGet(ctx, w.meta(), "status"),
	} {
		if err := cmd.Err(); err != nil {
			return err
		}
	}
	return nil
}
