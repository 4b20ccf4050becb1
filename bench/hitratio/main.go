// Command hitratio replays key traces (package cachetrace: Zipf 0.8, 1.0
// and 1.2, and the five seed applications' access patterns) cache-aside
// against real servers, Keyhive under each eviction policy and
// redis-server under allkeys-lru and allkeys-lfu, each with maxmemory set so
// that it holds the same fraction of the trace's working set, and prints
// every policy's hit ratio.
//
//	go run ./bench/hitratio
//	go run ./bench/hitratio -keys 100000 -length 1000000 -fracs 0.1,0.25,0.5 -traces zipf-1.0,ipx
//
// Each read is a GET; a miss is followed by a SET of the key (pipelined
// -batch reads at a time, then their misses' SETs; a SET refused with OOM
// is a miss too). Each server starts fresh per trace and size: maxmemory
// is its used_memory when empty plus what fraction*working-set keys of
// -value bytes took, and every 1024 reads maxmemory is
// adjusted to hold that many keys, so every server and policy holds the
// same number of keys whatever its per-key overhead and fragmentation
// under churn; the table also shows the keys each held on average and the
// server's CPU time per request.
//
// With -seeds n every trace is made n times from different seeds and each
// cell is the mean with the [min, max] over the seeds; the last column is
// Keyhive's LRFU minus its LRU, seed by seed (the same trace for both),
// called above or below when the mean difference is more than twice its
// standard error over the seeds, noise otherwise (cachetrace.Versus):
//
//	go run ./bench/hitratio -seeds 5 -traces waitingroom,ipx
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/keyhive/keyhive/internal/cachetrace"
	"github.com/redis/go-redis/v9"
)

type server struct {
	name, bin, policy string
}

func main() {
	keys := flag.Int("keys", 100000, "about how many different keys each trace reads")
	length := flag.Int("length", 400000, "reads per trace")
	value := flag.Int("value", 1000, "value size in bytes")
	fracs := flag.String("fracs", "0.1,0.25,0.5", "cache sizes, as fractions of the working set")
	traces := flag.String("traces", strings.Join(cachetrace.Names, ","), "traces to replay")
	batch := flag.Int("batch", 16, "reads pipelined at a time")
	keyhiveBin := flag.String("keyhive", "", "keyhive binary (default: build ./cmd/keyhive)")
	redisBin := flag.String("redis", "redis-server", "redis-server binary")
	seeds := flag.Int("seeds", 1, "traces made from seeds 1..n, each cell their mean and [min, max]")
	servers := flag.String("servers", "keyhive:allkeys-lru,keyhive:allkeys-lfu,keyhive:allkeys-lrfu,redis:allkeys-lru,redis:allkeys-lfu", "server:policy pairs")
	flag.Parse()

	tmp, err := os.MkdirTemp("", "hitratio")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	if *keyhiveBin == "" {
		*keyhiveBin = filepath.Join(tmp, "keyhive")
		if out, err := exec.Command("go", "build", "-o", *keyhiveBin, "./cmd/keyhive").CombinedOutput(); err != nil {
			log.Fatalf("building keyhive: %v\n%s", err, out)
		}
	}
	var list []server
	for _, s := range strings.Split(*servers, ",") {
		name, policy, _ := strings.Cut(s, ":")
		bin := *redisBin
		if name == "keyhive" {
			bin = *keyhiveBin
		}
		list = append(list, server{name + " " + strings.TrimPrefix(policy, "allkeys-"), bin, policy})
	}
	want := map[string]bool{}
	for _, t := range strings.Split(*traces, ",") {
		want[t] = true
	}
	var sizes []float64
	for _, f := range strings.Split(*fracs, ",") {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			log.Fatalf("-fracs: %v", err)
		}
		sizes = append(sizes, v)
	}

	fmt.Printf("hit ratio %%, cache-aside replay, %d-byte values, GETs pipelined %d at a time (go run ./bench/hitratio -keys %d -length %d -seeds %d)\n\n", *value, *batch, *keys, *length, *seeds)
	lru, lrfu := serverIndex(list, "keyhive lru"), serverIndex(list, "keyhive lrfu")
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "trace\tsize\tkeys held\t"
	for _, s := range list {
		header += s.name + "\t"
	}
	header += "CPU us/req: "
	for _, s := range list {
		header += s.name + "\t"
	}
	if lru >= 0 && lrfu >= 0 {
		header += "lrfu-lru\t"
	}
	fmt.Fprintln(w, header)
	start := time.Now()
	var all [][]cachetrace.Trace // all[seed-1][trace]
	for seed := 1; seed <= *seeds; seed++ {
		all = append(all, cachetrace.All(*keys, *length, uint64(seed)))
	}
	for t, name := range cachetrace.Names {
		if !want[name] {
			continue
		}
		for _, frac := range sizes {
			hit := make([][]float64, len(list)) // hit[server][seed]
			cpu := make([][]float64, len(list))
			held := make([]int64, len(list))
			var workingSets, targets int
			for seed := range all {
				tr := all[seed][t]
				ws := tr.Distinct()
				target := int(float64(ws) * frac)
				workingSets, targets = workingSets+ws, targets+target
				for i, s := range list {
					r, err := replay(s, tr.Keys, target, *value, *batch)
					if err != nil {
						log.Fatalf("%s on %s: %v", s.name, tr.Name, err)
					}
					fmt.Fprintf(os.Stderr, "%s seed %d %.0f%% %s: hit %.2f%%, held %d, %.1f us/req\n", tr.Name, seed+1, 100*frac, s.name, 100*r.hit, r.held, r.cpuPerReq)
					hit[i] = append(hit[i], 100*r.hit)
					cpu[i] = append(cpu[i], r.cpuPerReq)
					held[i] += r.held
				}
			}
			// With several seeds, the mean working set and target.
			line := fmt.Sprintf("%s\t%.0f%% of %d\t%d\t", name, 100*frac, workingSets/len(all), targets/len(all))
			for i := range list {
				line += cachetrace.Spread(hit[i], "%.2f") + fmt.Sprintf(" (%d)\t", held[i]/int64(len(all)))
			}
			for i := range list {
				line += cachetrace.Spread(cpu[i], "%.1f") + "\t"
			}
			if lru >= 0 && lrfu >= 0 {
				line += cachetrace.Versus(hit[lrfu], hit[lru]) + "\t"
			}
			fmt.Fprintln(w, line)
		}
	}
	w.Flush()
	fmt.Printf("\n(n): keys the server held on average (maxmemory is adjusted every 1024 reads to hold the target); done in %s\n", time.Since(start).Round(time.Second))
}

func serverIndex(list []server, name string) int {
	for i, s := range list {
		if s.name == name {
			return i
		}
	}
	return -1
}

type result struct {
	hit       float64
	held      int64   // on average
	cpuPerReq float64 // server CPU microseconds per read (its SETs included)
}

// replay starts s, sizes its maxmemory to target keys and replays trace.
func replay(s server, trace []uint32, target, valueSize, batch int) (result, error) {
	port, err := freePort()
	if err != nil {
		return result{}, err
	}
	cmd := exec.Command(s.bin, "--port", strconv.Itoa(port), "--save", "", "--appendonly", "no", "--maxmemory-policy", s.policy)
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port), Protocol: 2, ReadTimeout: time.Minute})
	defer rdb.Close()
	for i := 0; rdb.Ping(ctx).Err() != nil; i++ {
		if i > 200 {
			return result{}, errors.New("server did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
	value := strings.Repeat("v", valueSize)
	name := func(k uint32) string { return "key:" + strconv.FormatUint(uint64(k), 10) }
	// Size maxmemory: the empty server's memory plus what target keys take.
	before, err := infoInt(ctx, rdb, "memory", "used_memory")
	if err != nil {
		return result{}, err
	}
	for i := 0; i < target; i += 1000 {
		p := rdb.Pipeline()
		for j := i; j < min(i+1000, target); j++ {
			p.Set(ctx, "fill:"+strconv.Itoa(j), value, 0)
		}
		if _, err := p.Exec(ctx); err != nil {
			return result{}, err
		}
	}
	used, err := infoInt(ctx, rdb, "memory", "used_memory")
	if err != nil {
		return result{}, err
	}
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		return result{}, err
	}
	empty, err := infoInt(ctx, rdb, "memory", "used_memory")
	if err != nil {
		return result{}, err
	}
	perKey, limit := (used-before)/int64(target), empty+used-before
	if err := rdb.ConfigSet(ctx, "maxmemory", strconv.FormatInt(limit, 10)).Err(); err != nil {
		return result{}, err
	}
	var heldSum, checks int64
	full := false // the server has evicted: the cache is at its size
	cpu0 := cpuTime(cmd.Process.Pid)
	hits := 0
	gets := make([]*redis.StringCmd, batch)
	for i := 0; i < len(trace); i += batch {
		if i/batch%64 == 63 {
			// Keep the number of keys held at target: fragmentation and
			// buffers change what a key costs as the keys churn. Fewer keys
			// than target raise maxmemory only once the server has evicted:
			// while it is still filling, raising it let the cache overshoot
			// and then shrink at once, a mass eviction no policy meets in
			// steady state (LRFU then drops the new keys not read yet).
			held, err := rdb.DBSize(ctx).Result()
			if err != nil {
				return result{}, err
			}
			if !full {
				evicted, err := infoInt(ctx, rdb, "stats", "evicted_keys")
				if err != nil {
					return result{}, err
				}
				full = evicted > 0
			}
			if full {
				heldSum, checks = heldSum+held, checks+1
			}
			if d := int64(target) - held; -d > int64(target)/100 || full && d > int64(target)/100 {
				limit += d * perKey
				if err := rdb.ConfigSet(ctx, "maxmemory", strconv.FormatInt(limit, 10)).Err(); err != nil {
					return result{}, err
				}
			}
			if os.Getenv("HELDLOG") != "" && (i/batch/64)%16 == 0 {
				fmt.Fprintf(os.Stderr, "held %d limit %d full %v at read %d\n", held, limit, full, i)
			}
		}
		part := trace[i:min(i+batch, len(trace))]
		p := rdb.Pipeline()
		for j, k := range part {
			gets[j] = p.Get(ctx, name(k))
		}
		if _, err := p.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
			return result{}, err
		}
		p = rdb.Pipeline()
		misses := 0
		for j, k := range part {
			if gets[j].Err() == nil {
				hits++
				continue
			}
			p.Set(ctx, name(k), value, 0)
			misses++
		}
		if misses > 0 {
			if _, err := p.Exec(ctx); err != nil && !strings.HasPrefix(err.Error(), "OOM") {
				return result{}, err
			}
		}
	}
	cpu := cpuTime(cmd.Process.Pid) - cpu0
	return result{
		hit:       float64(hits) / float64(len(trace)),
		held:      heldSum / max(checks, 1),
		cpuPerReq: float64(cpu.Microseconds()) / float64(len(trace)),
	}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func infoInt(ctx context.Context, rdb *redis.Client, section, field string) (int64, error) {
	info, err := rdb.Info(ctx, section).Result()
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), field+":"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in INFO %s", field, section)
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}
