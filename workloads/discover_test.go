package workloads_test

import (
	"context"
	"flag"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keyhive/keyhive/workloads"
)

var discoverOps = flag.Int("discover.ops", 20000, "requests of each seed's mix TestDiscoverSeedMixes sends")

// TestDiscoverSeedMixes loads the five seed applications' data and request
// mixes into one Keyhive, then checks NAMESPACE DISCOVER's top prefixes at
// depths 1 to 3 against a full SCAN's counts, within the error bound it
// states.
func TestDiscoverSeedMixes(t *testing.T) {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: servers.keyhive, Protocol: 2})
	defer rdb.Close()
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	for i, w := range workloads.All {
		if err := w.Prepare(ctx, rdb); err != nil {
			t.Fatalf("%s: Prepare: %v", w.Name, err)
		}
		rng := rand.New(rand.NewPCG(41, uint64(i)))
		for range *discoverOps {
			if err := w.Op(ctx, rdb, rng); err != nil && err != redis.Nil {
				t.Fatalf("%s: %v", w.Name, err)
			}
		}
	}
	counts := [4]map[string]int64{nil, {}, {}, {}}
	total := 0
	iter := rdb.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		key := iter.Val()
		total++
		end := 0
		for d := 1; d <= 3; d++ {
			if i := strings.IndexByte(key[end:], ':'); i >= 0 {
				end += i + 1
			}
			counts[d][key[:end]]++
		}
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d keys", total)
	for d := 1; d <= 3; d++ {
		top, err := rdb.Do(ctx, "NAMESPACE", "DISCOVER", "DEPTH", d, "COUNT", 5, "BY", "keys").Slice()
		if err != nil {
			t.Fatal(err)
		}
		if len(top) == 0 {
			t.Fatalf("depth %d: nothing discovered", d)
		}
		for _, e := range top {
			f := e.([]any)
			m := map[string]any{}
			for i := 0; i+1 < len(f); i += 2 {
				m[f[i].(string)] = f[i+1]
			}
			name, keys := m["prefix"].(string), m["keys"].(int64)
			var bound int64
			errs := m["error"].([]any)
			for i := 0; i+1 < len(errs); i += 2 {
				if errs[i] == "keys" {
					bound = errs[i+1].(int64)
				}
			}
			want := counts[d][name]
			if keys-want > bound || want-keys > bound {
				t.Errorf("depth %d %q: %d keys, SCAN counts %d, beyond the bound %d", d, name, keys, want, bound)
			}
			t.Logf("depth %d %-22q keys %7d ±%-6d SCAN %7d", d, name, keys, bound, want)
		}
	}
}
