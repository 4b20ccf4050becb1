// Package workloads drives Keyhive with the data layers of the five seed
// applications (/work/shared/seeds), each written with go-redis v9 the way its
// document describes: key names, commands, options, TTLs, pipelines and Lua
// scripts.
//
// Every workload has two modes. Its Scenario is deterministic (fixed random
// seed, a logical clock for the timestamps it stores) and records every reply
// it gets, so running it against redis-server and against Keyhive and
// comparing the two transcripts and final data sets (Compare, Dump) checks
// that the application sees the same store. Its Mix (Prepare, Op, Background)
// is the application's realistic request mix for cmd/keyhive-bench.
package workloads

import (
	"context"
	"math/rand/v2"

	"github.com/redis/go-redis/v9"
)

// Workload is one seed application's data layer.
type Workload struct {
	Name string // "dns"
	Seed string // the seed document's number, "000"

	// Scenario is the correctness run: the same calls in the same order on
	// any server, every reply recorded through env's clients.
	Scenario func(ctx context.Context, env *Env) error

	// Prepare loads the data the benchmark mix reads, once per server.
	Prepare func(ctx context.Context, rdb *redis.Client) error
	// Op is one application request of the benchmark mix; a client
	// goroutine calls it in a loop with its own rng.
	Op func(ctx context.Context, rdb *redis.Client, rng *rand.Rand) error
	// Background, when set, runs beside the mix until ctx ends (the dns
	// sweeper); its commands are not counted.
	Background func(ctx context.Context, rdb *redis.Client)
}

// All is the five workloads in seed order.
var All = []Workload{DNS, QuickLink, WaitingRoom, IPX, CMS}
