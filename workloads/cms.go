package workloads

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// CMS is seed 004, the content graph: the key builder with a prefix,
// protected keys without TTL (entity hashes, semantic names, associations,
// parent/children, the word, type and status indexes) beside evictable ones
// with TTLs (page, template and query caches, sessions, CSRF tokens, rate
// keys, locks, temporary results), a task queue consumed with BLPOP, and
// SCAN by the document's patterns.
var CMS = Workload{
	Name:     "cms",
	Seed:     "004",
	Scenario: cmsScenario,
	Prepare: func(ctx context.Context, rdb *redis.Client) error {
		c := newCMS(rdb, rand.New(rand.NewPCG(4, 4)))
		for i := range cmsBenchEntities {
			if _, err := c.create(ctx, "snippet", cmsTitle(i), ""); err != nil {
				return err
			}
		}
		return rdb.Del(ctx, c.keys.queue("indexing")).Err()
	},
	Op: func(ctx context.Context, rdb *redis.Client, rng *rand.Rand) error {
		c := newCMS(rdb, rng)
		switch r := rng.IntN(100); {
		case r < 70: // a page view, mostly from the page cache
			_, err := c.renderPage(ctx, fmt.Sprintf("/p/%d", rng.IntN(500)), "de_DE", "corporate.berlin",
				fmt.Sprintf("$%s", cmsTitle(rng.IntN(cmsBenchEntities))))
			return err
		case r < 90:
			_, err := c.search(ctx, cmsWords[rng.IntN(len(cmsWords))], cmsWords[rng.IntN(len(cmsWords))])
			return err
		default:
			_, err := c.login(ctx, fmt.Sprintf("10.0.%d.%d", rng.IntN(256), rng.IntN(256)))
			return err
		}
	},
}

const cmsBenchEntities = 2000

const (
	cmsPageTTL     = 300 * time.Second
	cmsTemplateTTL = 900 * time.Second
	cmsSessionTTL  = 86400 * time.Second
	cmsCSRFTTL     = 3600 * time.Second
	cmsRateTTL     = 900 * time.Second
	cmsLockTTL     = 30 * time.Second
	cmsTempTTL     = 600 * time.Second
)

var cmsWords = []string{"modern", "welcome", "hero", "banner", "berlin", "team", "contact", "news"}

func cmsTitle(i int) string {
	return fmt.Sprintf("%s %s %d", cmsWords[i%len(cmsWords)], cmsWords[i/len(cmsWords)%len(cmsWords)], i)
}

// cmsKeys is RedisKeyBuilder.
type cmsKeys struct{ prefix string }

func (k cmsKeys) build(key string) string          { return k.prefix + key }
func (k cmsKeys) entity(typ, id string) string     { return k.build("entity:" + typ + ":" + id) }
func (k cmsKeys) semantic(typ, name string) string { return k.build("semantic:" + typ + ":" + name) }
func (k cmsKeys) association(path string) string   { return k.build("assoc:" + path) }
func (k cmsKeys) children(parent string) string    { return k.build("children:" + parent) }
func (k cmsKeys) parent(child string) string       { return k.build("parent:" + child) }
func (k cmsKeys) wordIndex(word string) string     { return k.build("word:" + strings.ToLower(word)) }
func (k cmsKeys) entityWords(id string) string     { return k.build("entity_words:" + id) }
func (k cmsKeys) typeIndex(typ string) string      { return k.build("type_index:" + typ) }
func (k cmsKeys) statusIndex(status string) string { return k.build("status_index:" + status) }
func (k cmsKeys) templateCache(name, theme string) string {
	return k.build("template:cache:" + name + ":" + theme)
}
func (k cmsKeys) queryCache(hash string) string      { return k.build("query:cache:" + hash) }
func (k cmsKeys) session(id string) string           { return k.build("session:" + id) }
func (k cmsKeys) csrf(token string) string           { return k.build("csrf:" + token) }
func (k cmsKeys) rateLimit(action, id string) string { return k.build("rate:" + action + ":" + id) }
func (k cmsKeys) lock(resource string) string        { return k.build("lock:" + resource) }
func (k cmsKeys) queue(name string) string           { return k.build("queue:" + name) }
func (k cmsKeys) temp(op, id string) string          { return k.build("temp:" + op + ":" + id) }
func (k cmsKeys) pageCache(path, locale, theme string) string {
	return k.build("page:cache:" + strings.ReplaceAll(path, "/", "_") + ":" + locale + ":" + theme)
}

// cms is the content server's Redis layer.
type cms struct {
	rdb  *redis.Client
	rng  *rand.Rand
	keys cmsKeys
}

func newCMS(rdb *redis.Client, rng *rand.Rand) *cms {
	return &cms{rdb: rdb, rng: rng, keys: cmsKeys{prefix: "reed:"}}
}

func (c *cms) uuid() string {
	return fmt.Sprintf("%08x-%04x-4%03x-a%03x-%012x", c.rng.Uint32(), c.rng.IntN(1<<16), c.rng.IntN(1<<12), c.rng.IntN(1<<12), c.rng.Int64N(1<<48))
}

// create stores an entity with its semantic name, its place in the tree, its
// indexes, and queues its indexing task.
func (c *cms) create(ctx context.Context, typ, title, parent string) (string, error) {
	id := c.uuid()
	words := strings.Fields(strings.ToLower(title))
	_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, c.keys.entity(typ, id), "type", typ, "title", title, "status", "draft", "body", "<p>"+title+"</p>")
		p.Set(ctx, c.keys.semantic(typ, "$"+strings.ReplaceAll(title, " ", "_")), id, 0)
		p.SAdd(ctx, c.keys.typeIndex(typ), id)
		p.SAdd(ctx, c.keys.statusIndex("draft"), id)
		if parent != "" {
			p.SAdd(ctx, c.keys.children(parent), id)
			p.Set(ctx, c.keys.parent(id), parent, 0)
		}
		for _, w := range words {
			p.SAdd(ctx, c.keys.wordIndex(w), c.keys.entity(typ, id))
			p.SAdd(ctx, c.keys.entityWords(id), w)
		}
		p.RPush(ctx, c.keys.queue("indexing"), typ+":"+id)
		return nil
	})
	return id, err
}

// publish moves an entity between status indexes under its lock.
func (c *cms) publish(ctx context.Context, typ, id string) (bool, error) {
	lock := c.keys.lock(typ + ":" + id)
	ok, err := c.rdb.SetNX(ctx, lock, "1", cmsLockTTL).Result()
	if err != nil || !ok {
		return false, err
	}
	_, err = c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, c.keys.entity(typ, id), "status", "published")
		p.SMove(ctx, c.keys.statusIndex("draft"), c.keys.statusIndex("published"), id)
		p.Del(ctx, lock)
		return nil
	})
	return true, err
}

// retitle rewrites an entity's words in the index.
func (c *cms) retitle(ctx context.Context, typ, id, title string) error {
	old, err := c.rdb.SMembers(ctx, c.keys.entityWords(id)).Result()
	if err != nil {
		return err
	}
	_, err = c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, w := range sorted(old) { // set order is the server's own

			p.SRem(ctx, c.keys.wordIndex(w), c.keys.entity(typ, id))
		}
		p.Del(ctx, c.keys.entityWords(id))
		p.HSet(ctx, c.keys.entity(typ, id), "title", title)
		for _, w := range strings.Fields(strings.ToLower(title)) {
			p.SAdd(ctx, c.keys.wordIndex(w), c.keys.entity(typ, id))
			p.SAdd(ctx, c.keys.entityWords(id), w)
		}
		return nil
	})
	return err
}

// remove deletes an entity and every reference to it.
func (c *cms) remove(ctx context.Context, typ, id string) error {
	words, err := c.rdb.SMembers(ctx, c.keys.entityWords(id)).Result()
	if err != nil {
		return err
	}
	parent, err := c.rdb.Get(ctx, c.keys.parent(id)).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	_, err = c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, c.keys.entity(typ, id), c.keys.entityWords(id), c.keys.parent(id), c.keys.children(id))
		for _, w := range sorted(words) { // set order is the server's own
			p.SRem(ctx, c.keys.wordIndex(w), c.keys.entity(typ, id))
		}
		if parent != "" {
			p.SRem(ctx, c.keys.children(parent), id)
		}
		p.SRem(ctx, c.keys.typeIndex(typ), id)
		p.SRem(ctx, c.keys.statusIndex("draft"), id)
		p.SRem(ctx, c.keys.statusIndex("published"), id)
		return nil
	})
	return err
}

// renderPage serves a page from the page cache or renders it from the
// entity named semantically and the compiled template, caching both.
func (c *cms) renderPage(ctx context.Context, path, locale, theme, name string) (string, error) {
	key := c.keys.pageCache(path, locale, theme)
	if html, err := c.rdb.Get(ctx, key).Result(); !errors.Is(err, redis.Nil) {
		return html, err
	}
	id, err := c.rdb.Get(ctx, c.keys.semantic("snippet", name)).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return "", err
	}
	fields, err := c.rdb.HGetAll(ctx, c.keys.entity("snippet", id)).Result()
	if err != nil {
		return "", err
	}
	tpl, err := c.rdb.Get(ctx, c.keys.templateCache("hero-banner", theme)).Result()
	if errors.Is(err, redis.Nil) {
		tpl = "<section class=hero>{{title}}</section>"
		err = c.rdb.Set(ctx, c.keys.templateCache("hero-banner", theme), tpl, cmsTemplateTTL).Err()
	}
	if err != nil {
		return "", err
	}
	html := strings.ReplaceAll(tpl, "{{title}}", fields["title"])
	return html, c.rdb.Set(ctx, key, html, cmsPageTTL).Err()
}

// search intersects the word index sets of the query's words, caching the
// result as a query cache entry.
func (c *cms) search(ctx context.Context, words ...string) ([]string, error) {
	keys := make([]string, len(words))
	for i, w := range words {
		keys[i] = c.keys.wordIndex(w)
	}
	var hits []string
	var err error
	if len(keys) == 1 {
		hits, err = c.rdb.SMembers(ctx, keys[0]).Result()
	} else {
		hits, err = c.rdb.SInter(ctx, keys...).Result()
	}
	if err != nil {
		return nil, err
	}
	hits = sorted(hits)
	return hits, c.rdb.Set(ctx, c.keys.queryCache(fmt.Sprintf("%x", strings.Join(words, " "))), strings.Join(hits, ","), cmsTempTTL).Err()
}

// login counts the attempt in the rate window, then opens a session with a
// CSRF token; it returns the session id ("" when rate limited).
func (c *cms) login(ctx context.Context, ip string) (string, error) {
	n, err := c.rdb.Incr(ctx, c.keys.rateLimit("login", ip)).Result()
	if err != nil {
		return "", err
	}
	if n == 1 {
		if err := c.rdb.Expire(ctx, c.keys.rateLimit("login", ip), cmsRateTTL).Err(); err != nil {
			return "", err
		}
	}
	if n > 5 {
		return "", nil
	}
	session, token := fmt.Sprintf("%016x", c.rng.Uint64()), fmt.Sprintf("%016x", c.rng.Uint64())
	_, err = c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, c.keys.session(session), fmt.Sprintf(`{"user_id":"%d","csrf":"%s"}`, n, token), cmsSessionTTL)
		p.Set(ctx, c.keys.csrf(token), session, cmsCSRFTTL)
		return nil
	})
	return session, err
}

// useCSRF checks a form's token and spends it.
func (c *cms) useCSRF(ctx context.Context, session string) (bool, error) {
	v, err := c.rdb.Get(ctx, c.keys.session(session)).Result()
	if err != nil {
		return false, err
	}
	token := v[strings.Index(v, `"csrf":"`)+8 : len(v)-2]
	owner, err := c.rdb.Get(ctx, c.keys.csrf(token)).Result()
	if errors.Is(err, redis.Nil) || owner != session {
		return false, nil
	}
	return true, c.rdb.Del(ctx, c.keys.csrf(token)).Err()
}

// work is the indexing worker: it takes n tasks with BLPOP and stores each
// entity's rendered text as a temporary result.
func (c *cms) work(ctx context.Context, n int) error {
	for range n {
		task, err := c.rdb.BLPop(ctx, 5*time.Second, c.keys.queue("indexing")).Result()
		if err != nil {
			return err
		}
		typ, id, _ := strings.Cut(task[1], ":")
		title, err := c.rdb.HGet(ctx, c.keys.entity(typ, id), "title").Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
		if err := c.rdb.Set(ctx, c.keys.temp("index", id), strings.ToLower(title), cmsTempTTL).Err(); err != nil {
			return err
		}
	}
	return nil
}

// cmsScenario builds a content tree, publishes, retitles and deletes
// entities, renders pages and searches, logs users in, and lets a worker
// drain the indexing queue at checkpoints, once while blocked in BLPOP on
// an empty queue until a task arrives; admin scans by the document's
// patterns.
func cmsScenario(ctx context.Context, env *Env) error {
	rng := rand.New(rand.NewPCG(4, 4))
	c := newCMS(env.Client("server"), rng)
	worker := newCMS(env.Client("worker"), rng)
	admin := env.Unrecorded()
	type entity struct{ typ, id string }
	var entities []entity
	var sessions []string
	queued := 0
	for step := range 400 {
		switch r := rng.IntN(100); {
		case r < 25 || len(entities) < 3:
			typ := []string{"snippet", "page", "snippet"}[rng.IntN(3)]
			parent := ""
			if len(entities) > 0 && rng.IntN(2) == 0 {
				parent = entities[rng.IntN(len(entities))].id
			}
			id, err := c.create(ctx, typ, cmsTitle(step), parent)
			if err != nil {
				return err
			}
			entities = append(entities, entity{typ, id})
			queued++
			if err := c.rdb.Set(ctx, c.keys.association(fmt.Sprintf("content.%d.%d", step%3, step)), id, 0).Err(); err != nil {
				return err
			}
		case r < 35:
			e := entities[rng.IntN(len(entities))]
			if _, err := c.publish(ctx, e.typ, e.id); err != nil {
				return err
			}
		case r < 40:
			e := entities[rng.IntN(len(entities))]
			if err := c.retitle(ctx, e.typ, e.id, cmsTitle(rng.IntN(1000))); err != nil {
				return err
			}
		case r < 43:
			i := rng.IntN(len(entities))
			if err := c.remove(ctx, entities[i].typ, entities[i].id); err != nil {
				return err
			}
			entities = append(entities[:i], entities[i+1:]...)
		case r < 65:
			if _, err := c.renderPage(ctx, fmt.Sprintf("/p/%d", rng.IntN(20)), "de_DE", "corporate.berlin", "$"+strings.ReplaceAll(cmsTitle(rng.IntN(step+1)), " ", "_")); err != nil {
				return err
			}
		case r < 80:
			words := []string{cmsWords[rng.IntN(len(cmsWords))]}
			if rng.IntN(2) == 0 {
				words = append(words, cmsWords[rng.IntN(len(cmsWords))])
			}
			hits, err := c.search(ctx, words...)
			if err != nil {
				return err
			}
			env.Note("server", "search %v: %d hits", words, len(hits))
		case r < 90:
			s, err := c.login(ctx, fmt.Sprintf("192.168.1.%d", rng.IntN(4)))
			if err != nil {
				return err
			}
			if s != "" {
				sessions = append(sessions, s)
			}
		case len(sessions) > 0:
			ok, err := c.useCSRF(ctx, sessions[rng.IntN(len(sessions))])
			if err != nil {
				return err
			}
			env.Note("server", "csrf %v", ok)
		}
		if step%100 == 99 { // the worker drains the queue, then waits in BLPOP for one more task
			done := make(chan error, 1)
			go func() { done <- worker.work(ctx, queued+1) }()
			if err := waitBlocked(ctx, admin); err != nil {
				return err
			}
			queued = 0
			if err := c.rdb.RPush(ctx, c.keys.queue("indexing"), "page:"+c.uuid()).Err(); err != nil {
				return err
			}
			if err := <-done; err != nil {
				return err
			}
		}
	}
	for _, pattern := range []string{"entity:snippet:*", "page:cache:*", "session:*", "entity:*", "word:*"} {
		if _, err := scanAll(ctx, env, c.rdb, c.keys.prefix+pattern, 50); err != nil {
			return err
		}
	}
	return nil
}

// waitBlocked waits until a client is blocked (the worker in BLPOP).
func waitBlocked(ctx context.Context, admin *redis.Client) error {
	for {
		info, err := admin.Info(ctx, "clients").Result()
		if err != nil {
			return err
		}
		if !strings.Contains(info, "blocked_clients:0\r\n") {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}
