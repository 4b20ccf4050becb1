package workloads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// IPX is seed 003, the image proxy: project and API-key configs cached
// aside with a __NOT_FOUND__ sentinel (10 s) and 60 s entries, active
// invalidation, per-day then per-minute sliding-window rate limits run by a
// Lua script the way @upstash/ratelimit does (EVALSHA, EVAL on NOSCRIPT),
// and SET NX EX 30 write throttling raced by many clients.
var IPX = Workload{
	Name:     "ipx",
	Seed:     "003",
	Scenario: ipxScenario,
	Prepare:  func(context.Context, *redis.Client) error { return nil },
	Op: func(ctx context.Context, rdb *redis.Client, rng *rand.Rand) error {
		// One image request: both configs (cached after the first miss),
		// the two rate limits and the usage throttles.
		_, err := newIPX(rdb).serve(ctx, fmt.Sprintf("pk_%d", rng.IntN(ipxBenchKeys)), time.Now().UnixMilli())
		return err
	},
}

const (
	ipxBenchKeys   = 1000
	ipxCacheTTL    = 60 * time.Second
	ipxNegativeTTL = 10 * time.Second
	ipxNotFound    = "__NOT_FOUND__"
	ipxThrottleTTL = 30 * time.Second
	ipxMinute      = int64(time.Minute / time.Millisecond)
	ipxDay         = int64(24 * time.Hour / time.Millisecond)
)

// ipxSlidingWindow is a sliding-window limiter in the manner of
// @upstash/ratelimit's slidingWindow: the current fixed window's counter
// plus the previous window's, weighted by how much of it still overlaps the
// sliding window. It consumes a token only when one is left and returns the
// tokens remaining, -1 when the limit is reached.
var ipxSlidingWindow = redis.NewScript(`
local current, previous = KEYS[1], KEYS[2]
local limit = tonumber(ARGV[1])
local now, window = tonumber(ARGV[2]), tonumber(ARGV[3])

local inCurrent = tonumber(redis.call("GET", current) or "0")
local inPrevious = tonumber(redis.call("GET", previous) or "0")
local overlap = 1 - (now % window) / window
local used = inCurrent + math.floor(inPrevious * overlap)
if used >= limit then
  return -1
end
local count = redis.call("INCR", current)
if count == 1 then
  -- kept for two windows: the next one weighs it as its previous window
  redis.call("PEXPIRE", current, window * 2 + 1000)
end
return limit - used - 1
`)

// ipxProject and ipxAPIKey are the cached configs (CachedApiKeyConfig keeps
// the secret encrypted and dates as ISO 8601 strings).
type ipxProject struct {
	ID, Slug, TeamID string
	AllowedReferers  []string
}

type ipxAPIKey struct {
	ID, ProjectID, EncryptedSecretKey string
	AllowedSources                    []string
	ExpiresAt, RevokedAt              *string
	RateLimitPerMinute                int
	RateLimitPerDay                   int
}

// ipx is one serverless instance of the proxy; the "database" is a fixed
// function of the key: pk_<n> exists unless n%10 == 9, revoked if n%10 == 8.
type ipx struct {
	rdb     *redis.Client
	revoked map[string]bool
}

func newIPX(rdb *redis.Client) *ipx { return &ipx{rdb: rdb} }

func (x *ipx) dbAPIKey(pk string) (*ipxAPIKey, bool) {
	var n int
	if _, err := fmt.Sscanf(pk, "pk_%d", &n); err != nil || n%10 == 9 {
		return nil, false
	}
	k := &ipxAPIKey{ID: fmt.Sprintf("apikey-%d", n), ProjectID: fmt.Sprintf("project-%d", n%5),
		EncryptedSecretKey: fmt.Sprintf("enc:v1:%x", n*7919), AllowedSources: []string{"images.example.com"},
		RateLimitPerMinute: 60, RateLimitPerDay: 10000}
	if n%10 == 8 || x.revoked[pk] {
		at := "2024-01-01T00:00:00.000Z"
		k.RevokedAt = &at
	}
	if n%3 == 0 {
		k.RateLimitPerMinute, k.RateLimitPerDay = 5, 12 // a small plan: both limits are reached
	}
	return k, true
}

func (x *ipx) dbProject(id string) (*ipxProject, bool) {
	var n int
	if _, err := fmt.Sscanf(id, "project-%d", &n); err != nil {
		return nil, false
	}
	return &ipxProject{ID: id, Slug: fmt.Sprintf("blog-%d", n), TeamID: "acme", AllowedReferers: []string{"acme.example"}}, true
}

// cached is the cache-aside read shared by every config lookup.
func cached[T any](ctx context.Context, rdb *redis.Client, key string, load func() (*T, bool)) (*T, error) {
	v, err := rdb.Get(ctx, key).Result()
	switch {
	case err == nil && v == ipxNotFound:
		return nil, nil
	case err == nil:
		var t T
		return &t, json.Unmarshal([]byte(v), &t)
	case !errors.Is(err, redis.Nil):
		return nil, err
	}
	t, ok := load()
	if !ok {
		return nil, rdb.Set(ctx, key, ipxNotFound, ipxNegativeTTL).Err()
	}
	b, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	return t, rdb.Set(ctx, key, b, ipxCacheTTL).Err()
}

func (x *ipx) apiKeyConfig(ctx context.Context, pk string) (*ipxAPIKey, error) {
	return cached(ctx, x.rdb, "cache:apikey:pk:"+pk, func() (*ipxAPIKey, bool) { return x.dbAPIKey(pk) })
}

func (x *ipx) projectByID(ctx context.Context, id string) (*ipxProject, error) {
	return cached(ctx, x.rdb, "cache:project:id:"+id, func() (*ipxProject, bool) { return x.dbProject(id) })
}

func (x *ipx) projectBySlug(ctx context.Context, slug string) (*ipxProject, error) {
	return cached(ctx, x.rdb, "cache:project:slug:"+slug, func() (*ipxProject, bool) {
		var n int
		if _, err := fmt.Sscanf(slug, "blog-%d", &n); err != nil || n >= 5 {
			return nil, false
		}
		return x.dbProject(fmt.Sprintf("project-%d", n))
	})
}

func (x *ipx) projectByTeamSlug(ctx context.Context, team, slug string) (*ipxProject, error) {
	return cached(ctx, x.rdb, "cache:project:team-slug:"+team+"/"+slug, func() (*ipxProject, bool) {
		if team != "acme" {
			return nil, false
		}
		var n int
		fmt.Sscanf(slug, "blog-%d", &n)
		return x.dbProject(fmt.Sprintf("project-%d", n))
	})
}

// invalidateProject deletes every cache entry of a project.
func (x *ipx) invalidateProject(ctx context.Context, slug, id string) error {
	return x.rdb.Del(ctx, "cache:project:slug:"+slug, "cache:project:id:"+id, "cache:project:team-slug:acme/"+slug).Err()
}

func (x *ipx) invalidateAPIKey(ctx context.Context, pk string) error {
	return x.rdb.Del(ctx, "cache:apikey:pk:"+pk).Err()
}

// limit is slidingWindow.limit(identifier) for one layer.
func (x *ipx) limit(ctx context.Context, prefix, id string, limit int, now, window int64) (int64, error) {
	bucket := now / window
	keys := []string{fmt.Sprintf("%s:%s:%d", prefix, id, bucket), fmt.Sprintf("%s:%s:%d", prefix, id, bucket-1)}
	return ipxSlidingWindow.Run(ctx, x.rdb, keys, limit, now, window).Int64()
}

// checkRateLimit checks the day first, then the minute (so a day rejection
// spends no minute token).
func (x *ipx) checkRateLimit(ctx context.Context, pk string, perMinute, perDay int, now int64) (string, error) {
	if left, err := x.limit(ctx, "ratelimit:ipx:day", pk, perDay, now, ipxDay); err != nil || left < 0 {
		return "day", err
	}
	if left, err := x.limit(ctx, "ratelimit:ipx:minute", pk, perMinute, now, ipxMinute); err != nil || left < 0 {
		return "minute", err
	}
	return "", nil
}

// throttle is SET NX EX 30: true for the one caller that should write.
func (x *ipx) throttle(ctx context.Context, key string) (bool, error) {
	return x.rdb.SetNX(ctx, key, "1", ipxThrottleTTL).Result()
}

// serve is the API route for one image request; it returns the HTTP status.
func (x *ipx) serve(ctx context.Context, pk string, now int64) (int, error) {
	key, err := x.apiKeyConfig(ctx, pk)
	if err != nil || key == nil {
		return 404, err
	}
	if key.RevokedAt != nil {
		return 401, nil
	}
	project, err := x.projectByID(ctx, key.ProjectID)
	if err != nil || project == nil {
		return 404, err
	}
	if reason, err := x.checkRateLimit(ctx, pk, key.RateLimitPerMinute, key.RateLimitPerDay, now); err != nil || reason != "" {
		return 429, err
	}
	if _, err := x.throttle(ctx, "usage:apikey:"+key.ID); err != nil {
		return 0, err
	}
	if _, err := x.throttle(ctx, "usage:project:"+key.ProjectID); err != nil {
		return 0, err
	}
	return 200, nil
}

// ipxScenario serves image requests over a logical clock (configs hit,
// missed and negatively cached; rate limits reached in minutes and days),
// with dashboard invalidations and key revocations between them, a reset of
// one key's counters by SCAN, and a race of 16 instances on each of a few
// throttle keys in which exactly one may win.
func ipxScenario(ctx context.Context, env *Env) error {
	x := newIPX(env.Client("proxy"))
	x.revoked = map[string]bool{}
	rng := rand.New(rand.NewPCG(3, 3))
	now := int64(1704067200000)
	for step := range 700 {
		now += int64(rng.IntN(4000))
		if step == 350 {
			now += ipxDay // the next day: the day windows slide
		}
		pk := fmt.Sprintf("pk_%d", rng.IntN(30))
		switch r := rng.IntN(100); {
		case r < 85:
			status, err := x.serve(ctx, pk, now)
			if err != nil {
				return err
			}
			env.Note("proxy", "GET /image %s: %d", pk, status)
		case r < 90:
			slug := fmt.Sprintf("blog-%d", rng.IntN(7))
			if _, err := x.projectBySlug(ctx, slug); err != nil {
				return err
			}
			if _, err := x.projectByTeamSlug(ctx, []string{"acme", "other"}[rng.IntN(2)], slug); err != nil {
				return err
			}
		case r < 94:
			n := rng.IntN(5)
			if err := x.invalidateProject(ctx, fmt.Sprintf("blog-%d", n), fmt.Sprintf("project-%d", n)); err != nil {
				return err
			}
		case r < 97:
			x.revoked[pk] = true
			if err := x.invalidateAPIKey(ctx, pk); err != nil {
				return err
			}
		default:
			keys, err := scanAll(ctx, env, x.rdb, "ratelimit:ipx:*:"+pk+":*", 100) // resetRateLimit
			if err != nil {
				return err
			}
			if len(keys) > 0 {
				if err := x.rdb.Del(ctx, keys...).Err(); err != nil {
					return err
				}
			}
		}
	}

	// Many serverless instances write-throttle at once: one winner per key.
	racers := make([]*redis.Client, 16)
	for i := range racers {
		racers[i] = env.Unrecorded()
	}
	for round := range 5 {
		key := fmt.Sprintf("usage:apikey:race-%d", round)
		var mu sync.Mutex
		var wg sync.WaitGroup
		winners, errs := 0, 0
		for _, c := range racers {
			wg.Go(func() {
				ok, err := newIPX(c).throttle(ctx, key)
				mu.Lock()
				defer mu.Unlock()
				if ok {
					winners++
				}
				if err != nil {
					errs++
				}
			})
		}
		wg.Wait()
		env.Note("race", "%s: %d winners, %d errors", key, winners, errs)
		if err := x.rdb.Get(ctx, key).Err(); err != nil {
			return err
		}
	}

	// "Every key has a TTL."
	keys, err := scanAll(ctx, nil, x.rdb, "*", 1000)
	if err != nil {
		return err
	}
	persistent := 0
	for _, k := range keys {
		if ttl, err := x.rdb.PTTL(ctx, k).Result(); err != nil || ttl < 0 {
			persistent++
		}
	}
	env.Note("proxy", "%d keys, %d without TTL", len(keys), persistent)
	return nil
}
