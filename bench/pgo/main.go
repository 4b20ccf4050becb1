// Command pgo writes cmd/keyhive/default.pgo, the CPU profile `go build`
// uses for profile-guided optimization of the keyhive binary: it profiles an
// in-process Keyhive, configured as cmd/keyhive runs it, while
// redis-benchmark sends the common commands unpipelined and pipelined and the
// EVALSHA scripts of bench/evalsha.sh, and then under the five seed
// workloads' request mixes (package workloads; their go-redis clients run in
// this process too, which PGO ignores for keyhive). Run it from the
// repository root after changes to the command path (about three minutes):
//
//	go run ./bench/pgo
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/server"
	"github.com/keyhive/keyhive/workloads"
	"github.com/redis/go-redis/v9"
)

func main() {
	out := flag.String("out", "cmd/keyhive/default.pgo", "profile to write")
	requests := flag.Int("n", 200000, "requests per test and pipeline depth")
	mix := flag.Duration("mix", 5*time.Second, "time under each workload's request mix")
	flag.Parse()
	if err := run(*out, *requests, *mix); err != nil {
		fmt.Fprintln(os.Stderr, "pgo:", err)
		os.Exit(1)
	}
}

func run(out string, requests int, mix time.Duration) error {
	cfg, err := config.FromArgs([]string{"--port", "0", "--save", ""}) // a free port
	if err != nil {
		return err
	}
	// As cmd/keyhive sets them.
	runtime.GOMAXPROCS(server.Threads(cfg))
	debug.SetGCPercent(25)
	srv, err := server.New(cfg)
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		return err
	}
	defer srv.Close()
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	defer pprof.StopCPUProfile()
	_, p, err := net.SplitHostPort(srv.Addr())
	if err != nil {
		return err
	}
	n := strconv.Itoa(requests)
	for _, pipeline := range []string{"1", "16"} {
		err := bench(p, "-t", "set,get,incr,mset,lpush,lpop,sadd,hset,zadd,lrange_100", "-P", pipeline, "-n", n, "-r", "1000000", "-d", "16")
		if err != nil {
			return err
		}
	}
	for _, test := range []string{"EVALSHA_ENQUEUE", "EVALSHA_RATELIMIT"} {
		args, err := evalshaArgs(p, test)
		if err != nil {
			return err
		}
		if err := bench(p, append(args, "-n", strconv.Itoa(requests/4))...); err != nil {
			return err
		}
	}
	for _, w := range workloads.All {
		if err := runMix(srv.Addr(), w, mix); err != nil {
			return fmt.Errorf("%s: %v", w.Name, err)
		}
	}
	return nil
}

// runMix runs w's request mix from 50 clients for d, as cmd/keyhive-bench
// does at maximum throughput.
func runMix(addr string, w workloads.Workload, d time.Duration) error {
	rdb := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 50})
	defer rdb.Close()
	if err := rdb.FlushAll(context.Background()).Err(); err != nil {
		return err
	}
	if err := w.Prepare(context.Background(), rdb); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if w.Background != nil {
		go w.Background(ctx, rdb)
	}
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 1))
			for ctx.Err() == nil {
				w.Op(ctx, rdb, rng) // errors at the deadline are expected
			}
		}()
	}
	wg.Wait()
	return nil
}

// evalshaArgs loads the script of test into the server and returns the
// redis-benchmark arguments that run it, from bench/evalsha.sh.
func evalshaArgs(port, test string) ([]string, error) {
	script := "root=$PWD; source bench/evalsha.sh; "
	load, err := exec.Command("bash", "-c", script+"redis-cli -p "+port+" -x SCRIPT LOAD <\"$(evalsha_script "+test+")\"").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("loading %s: %v: %s", test, err, load)
	}
	args, err := exec.Command("bash", "-c", script+"evalsha_args "+test+" 1000000").Output()
	if err != nil {
		return nil, fmt.Errorf("arguments of %s: %v", test, err)
	}
	return strings.Split(strings.TrimSpace(string(args)), "\n"), nil
}

func bench(port string, args ...string) error {
	cmd := exec.Command("redis-benchmark", append([]string{"-p", port, "-c", "50", "-q"}, args...)...)
	cmd.Stderr = os.Stderr
	return cmd.Run()
}
