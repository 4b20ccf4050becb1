//go:build linux

// Command keyhive-bench runs the seed applications' request mixes (package
// workloads) against redis-server, Keyhive and a second redis-server (the
// noise floor) in turn in one run, and reports per workload the median of
// the per-round ratios keyhive/redis, with their range, beside the same for
// the second redis-server against the first (package internal/benchstat):
//
//	go run ./cmd/keyhive-bench -clients 50 -duration 5s -rounds 3 -out docs/benchmarks.md
//
// For every workload and round it runs the mix from -clients concurrent
// clients for -duration (closed loop: maximum throughput) against the three
// servers in the round's order (benchstat.Order), each on a freshly flushed
// and prepared data set. Then it runs the mix on each server at half of
// redis-server's median maximum throughput (open loop: requests are due on a
// fixed schedule; a request sent late because an earlier one was slow counts
// its latency from its due time), which is where the p99 and p99.9 are
// compared (-rate-rounds rounds). Every run is preceded by an unmeasured
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

	"github.com/keyhive/keyhive/internal/benchstat"
	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/workloads"
)

var (
	flagWorkloads = flag.String("workloads", "dns,quicklink,waitingroom,ipx,cms", "comma-separated workloads")
	flagClients   = flag.Int("clients", 50, "concurrent clients")
	flagDuration  = flag.Duration("duration", 5*time.Second, "length of each measured run")
	flagWarmup    = flag.Duration("warmup", time.Second, "unmeasured run before each measured one (connections, caches, the server's first allocations)")
	flagRounds    = flag.Int("rounds", 3, "rounds at maximum throughput (each: keyhive, redis-server and a second redis-server in turn)")
	flagRateShare = flag.Float64("rate", 0.5, "share of redis-server's maximum throughput for the rate-limited runs")
	flagRateRound = flag.Int("rate-rounds", 3, "rounds at the limited rate (latency ratios per round, their median)")
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
	addrs := map[string]string{}
	var err error
	for _, name := range []string{benchstat.Redis, benchstat.Keyhive, benchstat.Redis2} {
		var stop func()
		if name == benchstat.Keyhive {
			addrs[name], stop, err = difftest.StartProcess(bin)
		} else {
			addrs[name], stop, err = difftest.StartRedis()
		}
		if err != nil {
			return err
		}
		defer stop()
	}

	workload := []string{"workload"}
	maxTable := benchstat.New(workload, []string{"ops/s", "CPU us/request"})
	rateTable := benchstat.New(workload, []string{"p99 ms", "p99.9 ms"})
	var targets, errs []string
	for _, w := range selected {
		label := []string{w.Name}
		n := 0
		var redisRates []float64
		for round := 1; round <= *flagRounds; round++ {
			for _, name := range benchstat.Order(round) {
				res, err := measure(server{name, addrs[name]}, w, 0)
				if err != nil {
					return err
				}
				logf("%s round %d %s: %.0f ops/s p50 %v p99 %v p99.9 %v cpu %.1f us/op errors %d", w.Name, round, name, res.rate(), res.p50, res.p99, res.p999, res.cpuPerOp(), res.errs)
				maxTable.Add(label, round, name, res.rate(), res.cpuPerOp())
				if name == benchstat.Redis {
					redisRates = append(redisRates, res.rate())
				}
				n += res.errs
			}
		}
		target := benchstat.Summarize(redisRates).Median * *flagRateShare
		targets = append(targets, fmt.Sprintf("%s %.0f", w.Name, target))
		for round := 1; round <= *flagRateRound; round++ {
			for _, name := range benchstat.Order(round) {
				res, err := measure(server{name, addrs[name]}, w, target)
				if err != nil {
					return err
				}
				logf("%s round %d at %.0f ops/s %s: %.0f ops/s p50 %v p99 %v p99.9 %v errors %d", w.Name, round, target, name, res.rate(), res.p50, res.p99, res.p999, res.errs)
				rateTable.Add(label, round, name, ms(res.p99), ms(res.p999))
				n += res.errs
			}
		}
		errs = append(errs, fmt.Sprintf("%s %d", w.Name, n))
	}
	var b strings.Builder
	b.WriteString("At maximum throughput (closed loop):\n\n")
	maxTable.Markdown(&b, benchstat.Options{Values: true})
	fmt.Fprintf(&b, "\nAt %.0f%% of redis-server's maximum (open loop; ops/s: %s):\n\n", 100**flagRateShare, strings.Join(targets, ", "))
	rateTable.Markdown(&b, benchstat.Options{Values: true})
	fmt.Fprintf(&b, "\nError replies over all runs: %s.\n", strings.Join(errs, ", "))
	fmt.Print(b.String())
	if *flagOut != "" {
		return writeReport(*flagOut, b.String(), floor)
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

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// writeReport writes docs/benchmarks.md: how the table was made, then the table.
func writeReport(path, table string, floor stalls) error {
	var b strings.Builder
	b.WriteString("# Workload benchmarks\n\n")
	b.WriteString("The five seed applications' request mixes (package `workloads`, see [workloads.md](workloads.md))\n")
	b.WriteString("run against redis-server, Keyhive and a second redis-server in turn in one run by `cmd/keyhive-bench`.\n")
	b.WriteString("The machine is shared and noisy: read the ratios beside their noise floor, not the absolute numbers.\n\n")
	fmt.Fprintf(&b, "Command: `%s`  \n", reproduce())
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
several commands, pipelined or scripted as the application sends them);
server CPU per request is the server process's user + system time
(/proc/PID/stat) over the run divided by the requests served, the figure
least disturbed by the other processes on the machine. The redis and keyhive
columns are each server's median over the rounds. keyhive/redis is the median
of the per-round ratios (each from two back-to-back runs of the same round),
with their range; the noise floor is the same for a second redis-server
against the first, measured in the same rounds: a keyhive/redis ratio inside
that range is a tie. For ops/s > 1 means Keyhive faster; for CPU and latency,
< 1 means Keyhive cheaper or its tail shorter.

The latency table is each server's p99 and p99.9 at half of redis-server's
median maximum throughput (open loop: each request is due on a fixed
schedule; when a client is behind it because an earlier request was slow, the
latency counts from the due time, so queueing behind a slow request is
included; a client on schedule counts from the end of its sleep, since Go's
timers wake up to 1 ms late and that is the load generator's delay, not the
server's). Each run follows an unmeasured warm-up of the same mix (-warmup:
connections opened, the server's first allocations made). The servers run in
a different order every round (internal/benchstat.Order), since the run after
another one can measure slower whichever server it is.
All servers run as their own processes (Keyhive built from ./cmd/keyhive with
its defaults, one command-execution core like Redis's main thread); the load
generator shares the machine with them.
`)
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// reproduce is the command line that measures what this run did: the flags
// set, without the binary's and the report's paths (-keyhive, -out).
func reproduce() string {
	args := []string{"go run ./cmd/keyhive-bench"}
	flag.Visit(func(f *flag.Flag) {
		if f.Name != "keyhive" && f.Name != "out" {
			args = append(args, "-"+f.Name+" "+f.Value.String())
		}
	})
	return strings.Join(args, " ")
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05 ")+format+"\n", args...)
}
