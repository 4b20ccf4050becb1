package workloads

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Env is what a Scenario runs against: one server, clients that record every
// reply in a transcript of their own, and notes for what is compared as a
// summary (a SCAN iteration's keys, the winners of a race).
type Env struct {
	Addr string

	mu          sync.Mutex
	transcripts map[string][]Record
	order       []string
	clients     []io.Closer
}

// Record is one command and its reply as the application saw it.
type Record struct {
	Line  string        // "hget dns:a.:1:1 soft_expiry: 1704067260"
	TTL   time.Duration // a TTL/PTTL reply, compared within timing tolerance
	isTTL bool
}

// NewEnv returns an Env on the server at addr.
func NewEnv(addr string) *Env {
	return &Env{Addr: addr, transcripts: map[string][]Record{}}
}

// Client returns a new client whose commands are recorded under name;
// clients given the same name share a transcript, so give concurrent ones
// their own. opts may adjust the options (OnConnect, Protocol).
func (e *Env) Client(name string, opts ...func(*redis.Options)) *redis.Client {
	rdb := e.Unrecorded(opts...)
	rdb.AddHook(recorder{env: e, name: name})
	return rdb
}

// ClusterClient returns a new go-redis cluster client, on the Redis Cluster
// that the Env's server is a node of, whose commands are recorded under
// name as Client's are.
func (e *Env) ClusterClient(name string) *redis.ClusterClient {
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{e.Addr}, DisableIdentity: true})
	rdb.AddHook(recorder{env: e, name: name})
	e.mu.Lock()
	e.clients = append(e.clients, rdb)
	e.mu.Unlock()
	return rdb
}

// Unrecorded returns a new client whose replies are not compared, for
// concurrent parts whose interleaving is not deterministic (they Note a
// summary instead) and for the Dump.
func (e *Env) Unrecorded(opts ...func(*redis.Options)) *redis.Client {
	o := &redis.Options{Addr: e.Addr, DisableIdentity: true}
	for _, f := range opts {
		f(o)
	}
	rdb := redis.NewClient(o)
	e.mu.Lock()
	e.clients = append(e.clients, rdb)
	e.mu.Unlock()
	return rdb
}

// Note records a line in the named transcript.
func (e *Env) Note(transcript, format string, args ...any) {
	e.add(transcript, Record{Line: fmt.Sprintf(format, args...)})
}

// Close closes every client the Env made.
func (e *Env) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, c := range e.clients {
		c.Close()
	}
}

func (e *Env) add(name string, r Record) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.transcripts[name]; !ok {
		e.order = append(e.order, name)
	}
	e.transcripts[name] = append(e.transcripts[name], r)
}

// Transcripts returns the recorded transcripts by client name.
func (e *Env) Transcripts() map[string][]Record {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.transcripts
}

// recorder is the go-redis hook that appends every command's reply.
type recorder struct {
	env  *Env
	name string
}

func (recorder) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r recorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		r.record(cmd)
		return err
	}
}

func (r recorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			r.record(cmd)
		}
		return err
	}
}

// unorderedReplies are commands whose reply order is the server's internal
// order, which Redis does not define: their elements are compared sorted.
var unorderedReplies = map[string]bool{
	"smembers": true, "sinter": true, "sunion": true, "sdiff": true, "keys": true,
	"hkeys": true, "hvals": true,
}

func (r recorder) record(cmd redis.Cmder) {
	switch subcommand(cmd) {
	case "hello", "client setinfo":
		return // the handshake names the server
	case "client id", "client tracking":
		return // ids count the server's earlier connections; the caller notes the outcome
	}
	switch cmd.Name() {
	case "scan", "sscan", "hscan", "zscan":
		// Cursors and batches are the server's own; scanAll notes the
		// iteration's sorted result instead.
		return
	}
	rec := Record{Line: cmd.String()}
	switch c := cmd.(type) {
	case *redis.DurationCmd:
		if c.Err() == nil && c.Val() > 0 {
			rec = Record{Line: argsString(cmd) + ": <ttl>", TTL: c.Val(), isTTL: true}
		}
	case *redis.StringSliceCmd:
		if unorderedReplies[cmd.Name()] && c.Err() == nil {
			rec.Line = fmt.Sprintf("%s: %v (sorted)", argsString(cmd), sorted(c.Val()))
		}
	}
	r.env.add(r.name, rec)
}

// subcommand is the lower-case command name with its subcommand if it has
// one ("client id").
func subcommand(cmd redis.Cmder) string {
	args := cmd.Args()
	if cmd.Name() == "client" && len(args) > 1 {
		return "client " + strings.ToLower(fmt.Sprint(args[1]))
	}
	return cmd.Name()
}

func argsString(cmd redis.Cmder) string {
	parts := make([]string, len(cmd.Args()))
	for i, a := range cmd.Args() {
		parts[i] = fmt.Sprint(a)
	}
	return strings.Join(parts, " ")
}

func sorted(xs []string) []string {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs
}

// ttlTolerance covers how far apart in time the two runs read a TTL: they
// run side by side, but one server may be slower (an in-process Keyhive
// under -race on a loaded machine).
const ttlTolerance = 5 * time.Second

// Compare returns the differences between a redis-server run's transcripts
// and a Keyhive run's, at most limit of them.
func Compare(redisRun, keyhiveRun map[string][]Record, limit int) []string {
	var diffs []string
	names := mapsKeys(redisRun, keyhiveRun)
	for _, name := range names {
		r, k := redisRun[name], keyhiveRun[name]
		for i := range max(len(r), len(k)) {
			if len(diffs) >= limit {
				return diffs
			}
			switch {
			case i >= len(r):
				diffs = append(diffs, fmt.Sprintf("%s #%d: only keyhive: %s", name, i, k[i].Line))
			case i >= len(k):
				diffs = append(diffs, fmt.Sprintf("%s #%d: only redis: %s", name, i, r[i].Line))
			case r[i].Line != k[i].Line:
				diffs = append(diffs, fmt.Sprintf("%s #%d:\n  redis:   %s\n  keyhive: %s", name, i, r[i].Line, k[i].Line))
			case r[i].isTTL && math.Abs(float64(r[i].TTL-k[i].TTL)) > float64(ttlTolerance):
				diffs = append(diffs, fmt.Sprintf("%s #%d: %s: redis %v, keyhive %v", name, i, r[i].Line, r[i].TTL, k[i].TTL))
			}
		}
	}
	return diffs
}

func mapsKeys(a, b map[string][]Record) []string {
	var names []string
	for n := range a {
		names = append(names, n)
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// Dump returns the whole data set as sorted lines "key type value ttl|persist",
// the value in a server-independent form (sets and hashes sorted).
func Dump(ctx context.Context, rdb *redis.Client) ([]string, error) {
	keys, err := rdb.Keys(ctx, "*").Result()
	if err != nil {
		return nil, err
	}
	slices.Sort(keys)
	lines := make([]string, 0, len(keys))
	for _, k := range keys {
		typ, err := rdb.Type(ctx, k).Result()
		if err != nil {
			return nil, err
		}
		var val any
		switch typ {
		case "string":
			val, err = rdb.Get(ctx, k).Result()
		case "hash":
			val, err = rdb.HGetAll(ctx, k).Result() // fmt prints maps sorted
		case "list":
			val, err = rdb.LRange(ctx, k, 0, -1).Result()
		case "set":
			var m []string
			m, err = rdb.SMembers(ctx, k).Result()
			val = sorted(m)
		case "zset":
			val, err = rdb.ZRangeWithScores(ctx, k, 0, -1).Result()
		default:
			err = fmt.Errorf("key %q: unexpected type %q", k, typ)
		}
		if err != nil && err != redis.Nil {
			return nil, err
		}
		ttl, err := rdb.PTTL(ctx, k).Result()
		if err != nil {
			return nil, err
		}
		expiry := "persist"
		if ttl >= 0 {
			expiry = "ttl"
		}
		lines = append(lines, fmt.Sprintf("%q %s %q %s", k, typ, fmt.Sprint(val), expiry))
	}
	return lines, nil
}

// scanAll iterates SCAN MATCH pattern COUNT count to the end, as the
// applications' admin paths do, on every master of a cluster client, and
// notes the sorted keys it found.
func scanAll(ctx context.Context, env *Env, rdb redis.Cmdable, pattern string, count int64) ([]string, error) {
	var keys []string
	if cluster, ok := rdb.(*redis.ClusterClient); ok {
		var mu sync.Mutex
		err := cluster.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			nodeKeys, err := scanAll(ctx, nil, node, pattern, count)
			mu.Lock()
			keys = append(keys, nodeKeys...)
			mu.Unlock()
			return err
		})
		if err != nil {
			return nil, err
		}
	} else {
		var cursor uint64
		for {
			batch, next, err := rdb.Scan(ctx, cursor, pattern, count).Result()
			if err != nil {
				return nil, err
			}
			keys = append(keys, batch...)
			if cursor = next; cursor == 0 {
				break
			}
		}
	}
	keys = sorted(keys)
	keys = slices.Compact(keys) // SCAN may return a key twice
	if env != nil {
		env.Note("scans", "scan %s: %v", pattern, keys)
	}
	return keys, nil
}

// DumpCluster is Dump of a whole cluster: every master's lines, sorted.
func DumpCluster(ctx context.Context, rdb *redis.ClusterClient) ([]string, error) {
	var lines []string
	var mu sync.Mutex
	err := rdb.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		nodeLines, err := Dump(ctx, node)
		mu.Lock()
		lines = append(lines, nodeLines...)
		mu.Unlock()
		return err
	})
	slices.Sort(lines)
	return lines, err
}
