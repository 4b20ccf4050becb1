//go:build linux

// Command keyhive-bench runs the seed applications' request mixes (package
// workloads) against redis-server and Keyhive alternately in one run and
// reports each server's throughput and latency and their ratio:
//
//	go run ./cmd/keyhive-bench -clients 50 -duration 5s -rounds 3 -out docs/benchmarks.md
//
// For every workload and round it runs the mix from -clients concurrent
// clients for -duration (closed loop: maximum throughput) against redis and
// keyhive, first one then the other in turn, each on a freshly flushed and
// prepared data set. Then it runs the
// mix on each server at half of redis-server's median maximum throughput
// (open loop: requests are due on a fixed schedule; a request sent late
// because an earlier one was slow counts its latency from its due time),
// which is where the p99 and p99.9 are compared (-rate-rounds alternating
// rounds, medians). Every run is preceded by an unmeasured
// warm-up of the same mix.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/workloads"
)

var (
	flagWorkloads = flag.String("workloads", "dns,quicklink,waitingroom,ipx,cms", "comma-separated workloads")
	flagClients   = flag.Int("clients", 50, "concurrent clients")
	flagDuration  = flag.Duration("duration", 5*time.Second, "length of each measured run")
	flagWarmup    = flag.Duration("warmup", time.Second, "unmeasured run before each measured one (connections, caches, the server's first allocations)")
	flagRounds    = flag.Int("rounds", 3, "alternating redis/keyhive rounds at maximum throughput")
	flagRateShare = flag.Float64("rate", 0.5, "share of redis-server's maximum throughput for the rate-limited runs")
	flagRateRound = flag.Int("rate-rounds", 3, "alternating redis/keyhive rounds at the limited rate (latency: medians over them)")
	flagKeyhive   = flag.String("keyhive", "", "keyhive binary (default: go build ./cmd/keyhive into a temp dir)")
	flagOut       = flag.String("out", "", "also write the ratio table to this markdown file")
	flagStalls    = flag.Duration("stalls", 3*time.Second, "how long to measure the machine's stalls before the runs (see stalls.go)")
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "keyhive-bench:", err)
		os.Exit(1)
	}
}

// server is one server under test.
type server struct {
	name string
	addr string
}

// result is one measured run.
type result struct {
	ops, errs      int
	elapsed        time.Duration
	p50, p99, p999 time.Duration
	cpu            time.Duration // the server process's CPU time during the run
	firstErr       error
}

func (r result) rate() float64 { return float64(r.ops) / r.elapsed.Seconds() }

// cpuPerOp is the server's CPU time per request, in microseconds: unlike
// throughput it hardly depends on what else the machine is running.
func (r result) cpuPerOp() float64 {
	return float64(r.cpu) / float64(time.Microsecond) / float64(r.ops)
}

// row is one workload's summary line.
type row struct {
	name                 string
	redisMax, keyhiveMax []result
	target               float64
	redisAt, keyhiveAt   []result
}

func run() error {
	var selected []workloads.Workload
	for _, name := range strings.Split(*flagWorkloads, ",") {
		i := slices.IndexFunc(workloads.All, func(w workloads.Workload) bool { return w.Name == name })
		if i < 0 {
			return fmt.Errorf("unknown workload %q", name)
		}
		selected = append(selected, workloads.All[i])
	}
	floor := measureStalls(*flagStalls)
	logf("machine stalls: %.1f gaps > %v per second and CPU (%.2f%% of the time), longest %v", floor.perSecond, stallGap, 100*floor.share, floor.longest)
	bin := *flagKeyhive
	if bin == "" {
		tmp, err := os.MkdirTemp("", "keyhive-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		if bin, err = difftest.BuildKeyhive(tmp); err != nil {
			return err
		}
	}
	redisAddr, stopRedis, err := difftest.StartRedis()
	if err != nil {
		return err
	}
	defer stopRedis()
	keyhiveAddr, stopKeyhive, err := difftest.StartProcess(bin)
	if err != nil {
		return err
	}
	defer stopKeyhive()
	servers := []server{{"redis", redisAddr}, {"keyhive", keyhiveAddr}}

	var rows []row
	for _, w := range selected {
		r := row{name: w.Name}
		for round := range *flagRounds {
			for _, s := range inTurn(servers, round) {
				res, err := measure(s, w, 0)
				if err != nil {
					return err
				}
				logf("%s round %d %s: %.0f ops/s p50 %v p99 %v p99.9 %v cpu %.1f us/op errors %d", w.Name, round+1, s.name, res.rate(), res.p50, res.p99, res.p999, res.cpuPerOp(), res.errs)
				if s.name == "redis" {
					r.redisMax = append(r.redisMax, res)
				} else {
					r.keyhiveMax = append(r.keyhiveMax, res)
				}
			}
		}
		r.target = medianRate(r.redisMax) * *flagRateShare
		for round := range *flagRateRound {
			for _, s := range inTurn(servers, round) {
				res, err := measure(s, w, r.target)
				if err != nil {
					return err
				}
				logf("%s round %d at %.0f ops/s %s: %.0f ops/s p50 %v p99 %v p99.9 %v errors %d", w.Name, round+1, r.target, s.name, res.rate(), res.p50, res.p99, res.p999, res.errs)
				if s.name == "redis" {
					r.redisAt = append(r.redisAt, res)
				} else {
					r.keyhiveAt = append(r.keyhiveAt, res)
				}
			}
		}
		rows = append(rows, r)
	}
	table := render(rows)
	fmt.Print(table)
	if *flagOut != "" {
		return writeReport(*flagOut, table, floor)
	}
	return nil
}

// measure runs w's mix on s for the configured time from the configured
// number of clients: as fast as possible when rate is 0, else rate requests
// per second in total on a fixed schedule.
func measure(s server, w workloads.Workload, rate float64) (result, error) {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: s.addr, PoolSize: *flagClients + 2, DisableIdentity: true})
	defer rdb.Close()
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		return result{}, fmt.Errorf("%s: FLUSHALL: %w", s.name, err)
	}
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		return result{}, fmt.Errorf("%s: SCRIPT FLUSH: %w", s.name, err)
	}
	if err := w.Prepare(ctx, rdb); err != nil {
		return result{}, fmt.Errorf("%s: %s prepare: %w", s.name, w.Name, err)
	}
	pid, err := serverPID(ctx, rdb)
	if err != nil {
		return result{}, fmt.Errorf("%s: %w", s.name, err)
	}
	runCtx, cancel := context.WithTimeout(ctx, *flagWarmup+*flagDuration)
	defer cancel()
	if w.Background != nil {
		bg := redis.NewClient(&redis.Options{Addr: s.addr, DisableIdentity: true})
		defer bg.Close()
		done := make(chan struct{})
		go func() { w.Background(runCtx, bg); close(done) }()
		defer func() { <-done }()
	}

	var interval time.Duration // per client
	if rate > 0 {
		interval = time.Duration(float64(*flagClients) / rate * float64(time.Second))
	}
	latencies := make([][]time.Duration, *flagClients)
	errs := make([]int, *flagClients)
	var firstErr error
	var errOnce sync.Once
	start := time.Now()
	measureFrom := start.Add(*flagWarmup)
	type cpuReading struct {
		t   time.Duration
		err error
	}
	cpuBefore := make(chan cpuReading, 1)
	time.AfterFunc(*flagWarmup, func() {
		t, err := processCPU(pid)
		cpuBefore <- cpuReading{t, err}
	})
	var wg sync.WaitGroup
	for c := range *flagClients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(c), 7))
			next := start.Add(time.Duration(c) * interval / time.Duration(*flagClients))
			for runCtx.Err() == nil {
				sent := time.Now()
				if interval > 0 {
					// Behind schedule (a slow earlier request), the latency
					// counts from the due time; on time, from when the
					// client's sleep ended, so the timer's own lateness (up
					// to 1 ms in Go's netpoller) is not charged to the server.
					if wait := time.Until(next); wait > 0 {
						time.Sleep(wait)
						sent = time.Now()
					} else {
						sent = next
					}
					next = next.Add(interval)
				}
				// The request's own context is not the run's: a request
				// cut short by the run's end would count as an error.
				err := w.Op(ctx, rdb, rng)
				if sent.Before(measureFrom) {
					continue
				}
				latencies[c] = append(latencies[c], time.Since(sent))
				if err != nil && !errors.Is(err, redis.Nil) {
					errs[c]++
					errOnce.Do(func() { firstErr = err })
				}
			}
		})
	}
	wg.Wait()
	before := <-cpuBefore
	if before.err != nil {
		return result{}, before.err
	}
	res := result{elapsed: time.Since(measureFrom), firstErr: firstErr}
	cpuAfter, err := processCPU(pid)
	if err != nil {
		return result{}, err
	}
	res.cpu = cpuAfter - before.t
	all := slices.Concat(latencies...)
	slices.Sort(all)
	res.ops = len(all)
	for _, e := range errs {
		res.errs += e
	}
	if res.ops > 0 {
		at := func(q float64) time.Duration { return all[min(len(all)-1, int(q*float64(len(all))))] }
		res.p50, res.p99, res.p999 = at(0.50), at(0.99), at(0.999)
	}
	if res.errs > 0 {
		logf("%s %s: %d errors, first: %v", w.Name, s.name, res.errs, res.firstErr)
	}
	return res, nil
}

// serverPID is the server's process id from INFO server.
func serverPID(ctx context.Context, rdb *redis.Client) (int, error) {
	info, err := rdb.InfoMap(ctx, "server").Result()
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(info["Server"]["process_id"])
}

// processCPU is a process's user + system CPU time from /proc/PID/stat.
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the parenthesized command name start at field 3 (state);
	// utime and stime are fields 14 and 15, in clock ticks.
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on Linux.
const clockTicks = 100

// inTurn is the servers in the order of round: the first and the second
// change places every round, since the run after another one measured
// slower whichever server it was (two redis-servers: p99 1.16-1.46x the
// first's on three of the five workloads).
func inTurn(servers []server, round int) []server {
	if round%2 == 0 {
		return servers
	}
	return []server{servers[1], servers[0]}
}

func medianRate(rs []result) float64 {
	rates := make([]float64, len(rs))
	for i, r := range rs {
		rates[i] = r.rate()
	}
	slices.Sort(rates)
	return rates[len(rates)/2]
}

func medianOf(rs []result, f func(result) time.Duration) time.Duration {
	ds := make([]time.Duration, len(rs))
	for i, r := range rs {
		ds[i] = f(r)
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f", float64(d)/float64(time.Millisecond)) }

// render is the markdown table: per workload the median maximum throughput
// of both servers, the median and range of the per-round ratios, the median
// latency percentiles at maximum throughput, and the p99 of both servers at
// the rate-limited load.
func render(rows []row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| workload | redis ops/s | keyhive ops/s | throughput ratio (keyhive/redis) | per-round range | server CPU us/request redis / keyhive | CPU ratio (redis/keyhive) | per-round range | redis p50/p99/p99.9 ms | keyhive p50/p99/p99.9 ms | load (%.0f%% of redis max) | redis p99 / p99.9 ms | keyhive p99 / p99.9 ms | p99 ratio (keyhive/redis) | p99.9 ratio | errors |\n", 100**flagRateShare)
	fmt.Fprintf(&b, "|---|---:|---:|---:|---|---:|---:|---|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		rr, kr := medianRate(r.redisMax), medianRate(r.keyhiveMax)
		ratios := make([]float64, len(r.redisMax))
		var cpuRatios, redisCPU, keyhiveCPU []float64
		errs := 0
		for i := range r.redisAt {
			errs += r.redisAt[i].errs + r.keyhiveAt[i].errs
		}
		for i := range r.redisMax {
			ratios[i] = r.keyhiveMax[i].rate() / r.redisMax[i].rate()
			redisCPU = append(redisCPU, r.redisMax[i].cpuPerOp())
			keyhiveCPU = append(keyhiveCPU, r.keyhiveMax[i].cpuPerOp())
			cpuRatios = append(cpuRatios, r.redisMax[i].cpuPerOp()/r.keyhiveMax[i].cpuPerOp())
			errs += r.redisMax[i].errs + r.keyhiveMax[i].errs
		}
		for _, xs := range [][]float64{ratios, cpuRatios, redisCPU, keyhiveCPU} {
			slices.Sort(xs)
		}
		pct := func(rs []result) string {
			return ms(medianOf(rs, func(r result) time.Duration { return r.p50 })) + " / " +
				ms(medianOf(rs, func(r result) time.Duration { return r.p99 })) + " / " +
				ms(medianOf(rs, func(r result) time.Duration { return r.p999 }))
		}
		mid := len(ratios) / 2
		p99 := func(r result) time.Duration { return r.p99 }
		p999 := func(r result) time.Duration { return r.p999 }
		rp99, rp999 := medianOf(r.redisAt, p99), medianOf(r.redisAt, p999)
		kp99, kp999 := medianOf(r.keyhiveAt, p99), medianOf(r.keyhiveAt, p999)
		fmt.Fprintf(&b, "| %s | %.0f | %.0f | **%.2f** | %.2f-%.2f | %.1f / %.1f | **%.2f** | %.2f-%.2f | %s | %s | %.0f ops/s | %s / %s | %s / %s | **%.2f** | **%.2f** | %d |\n",
			r.name, rr, kr, ratios[mid], ratios[0], ratios[len(ratios)-1],
			redisCPU[mid], keyhiveCPU[mid], cpuRatios[mid], cpuRatios[0], cpuRatios[len(cpuRatios)-1],
			pct(r.redisMax), pct(r.keyhiveMax),
			r.target, ms(rp99), ms(rp999), ms(kp99), ms(kp999), float64(kp99)/float64(rp99), float64(kp999)/float64(rp999), errs)
	}
	return b.String()
}

// writeReport writes docs/benchmarks.md: how the table was made, then the table.
func writeReport(path, table string, floor stalls) error {
	var b strings.Builder
	b.WriteString("# Workload benchmarks\n\n")
	b.WriteString("The five seed applications' request mixes (package `workloads`, see [workloads.md](workloads.md))\n")
	b.WriteString("run against redis-server and Keyhive alternately in one run by `cmd/keyhive-bench`.\n")
	b.WriteString("The machine is shared and noisy: read the ratios, not the absolute numbers.\n\n")
	fmt.Fprintf(&b, "Command: `go run ./cmd/keyhive-bench %s`  \n", strings.Join(os.Args[1:], " "))
	fmt.Fprintf(&b, "Run: %s, %d CPUs, %s, %d clients, %v per run, %d rounds at maximum throughput, %d at the limited rate.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.NumCPU(), runtime.Version(), *flagClients, *flagDuration, *flagRounds, *flagRateRound)
	fmt.Fprintf(&b, "Machine stalls before the run (%v, a thread pinned to each CPU reading the clock,\n", *flagStalls)
	fmt.Fprintf(&b, "nothing else running): %.1f gaps > %v per second and CPU, %.2f%% of the time, the\n",
		floor.perSecond, stallGap, 100*floor.share)
	fmt.Fprintf(&b, "longest %.1f ms. A request is late by such a gap whenever one hits the server or\n", float64(floor.longest)/float64(time.Millisecond))
	b.WriteString("the client while it is in flight, whichever server answers it: when that share\n")
	b.WriteString("nears 1%, no server can show a p99 under 1 ms on this machine.\n\n")
	b.WriteString(table)
	b.WriteString(`
Columns: ops/s are application requests per second (one request is one or
several commands, pipelined or scripted as the application sends them), the
median over the rounds at maximum throughput (closed loop); the ratio is the
median of the per-round ratios keyhive/redis (each from two back-to-back runs;
> 1: Keyhive faster) and the range shows their spread. Server CPU per request
is the server process's user + system time (/proc/PID/stat) over the run
divided by the requests served, the median over the rounds; its ratio
redis/keyhive (> 1: Keyhive cheaper) is the figure least disturbed by the other
processes on the machine. Latencies at maximum throughput are medians over the rounds.
The last columns are the p99 and p99.9 of each server at 50% of
redis-server's maximum throughput, the medians over -rate-rounds alternating
rounds, and their ratios (< 1: Keyhive's tail shorter) (open loop: each request is due on a fixed schedule; when a client
is behind it because an earlier request was slow, the latency counts from the
due time, so queueing behind a slow request is included; a client on schedule
counts from the end of its sleep, since Go's timers wake up to 1 ms late and
that is the load generator's delay, not the server's). Each run follows an
unmeasured warm-up of the same mix (-warmup: connections opened, the server's
first allocations made).
Both servers run as their own processes (Keyhive built from ./cmd/keyhive with
its defaults, one command-execution core like Redis's main thread); the load
generator shares the machine with them.
`)
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05 ")+format+"\n", args...)
}
