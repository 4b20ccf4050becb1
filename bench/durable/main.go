// Command durable measures what durable replies cost (min-replicas-to-ack):
// a Keyhive master with 1 and then 2 Keyhive replicas on loopback, 50
// connections each writing SET of a fresh key and waiting for its reply.
// Each round measures, back to back in an order that alternates:
//
//   - plain: min-replicas-to-ack 0, SET (asynchronous replication);
//   - durable: min-replicas-to-ack R (every replica), SET;
//   - set+wait: min-replicas-to-ack 0, SET and WAIT R 0 sent together (what
//     an application does for the same guarantee without the mode);
//   - plain again: the noise floor (plain against plain in the same round).
//
// and the table gives, per replica count, the median of the per-round
// ratios with their range (package internal/benchstat's rule: a ratio is
// only taken within a round) for throughput and for the 99th percentile
// of the write's latency.
//
//	go run ./bench/durable                  # 5 rounds of 3 s per mode
//	go run ./bench/durable -rounds 3 -seconds 2 -replicas 1
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/keyhive/keyhive/internal/benchstat"
	"github.com/keyhive/keyhive/internal/difftest"
)

var (
	rounds   = flag.Int("rounds", 5, "rounds, each measuring every mode")
	seconds  = flag.Float64("seconds", 3, "seconds each mode writes per round")
	clients  = flag.Int("clients", 50, "writing connections")
	size     = flag.Int("size", 16, "value size in bytes")
	replicas = flag.String("replicas", "1,2", "replica counts")
	khBin    = flag.String("keyhive", "", "keyhive binary (default: build ./cmd/keyhive)")
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "durable:", err)
		os.Exit(1)
	}
}

const (
	plain   = "plain"
	durable = "durable"
	setWait = "set+wait"
	plain2  = "plain again"
)

// order alternates the modes' places from round to round: the run after
// another can be slower whichever mode it is.
func order(round int) []string {
	if round%2 == 1 {
		return []string{plain, durable, setWait, plain2}
	}
	return []string{plain2, setWait, durable, plain}
}

type result struct{ opsPerSec, p99ms float64 }

func run() error {
	tmp, err := os.MkdirTemp("", "keyhive-durable")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := *khBin
	if bin == "" {
		bin = filepath.Join(tmp, "keyhive")
		build := exec.Command("go", "build", "-o", bin, "./cmd/keyhive")
		build.Stdout, build.Stderr = os.Stdout, os.Stderr
		if err := build.Run(); err != nil {
			return err
		}
	}
	counts, err := ints(*replicas)
	if err != nil {
		return err
	}
	fmt.Printf("Durable replies' cost: %d connections writing SET of fresh %d-byte values, %d rounds of %.0f s per mode\n\n",
		*clients, *size, *rounds, *seconds)
	fmt.Println("| replicas | durable/plain ops/s | durable/set+wait ops/s | noise floor ops/s | durable/plain p99 | durable/set+wait p99 | noise floor p99 | plain ops/s, p99 ms | durable | set+wait |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range counts {
		if err := measureReplicas(bin, r); err != nil {
			return err
		}
	}
	return nil
}

func measureReplicas(bin string, r int) error {
	addr, stop, err := start(bin)
	if err != nil {
		return err
	}
	defer stop()
	for range r {
		replica, stopReplica, err := start(bin)
		if err != nil {
			return err
		}
		defer stopReplica()
		host, port, _ := net.SplitHostPort(addr)
		if _, err := do(replica, "REPLICAOF", host, port); err != nil {
			return err
		}
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		info, err := do(addr, "INFO", "replication")
		if err == nil && strings.Contains(info, "connected_slaves:"+strconv.Itoa(r)) && strings.Count(info, "state=online") == r {
			break
		}
		if time.Now().After(deadline) {
			return errors.New("the replicas did not link")
		}
	}
	byMode := map[string][]result{}
	for round := 1; round <= *rounds; round++ {
		for _, mode := range order(round) {
			ack := "0"
			if mode == durable {
				ack = strconv.Itoa(r)
			}
			if _, err := do(addr, "CONFIG", "SET", "min-replicas-to-ack", ack); err != nil {
				return err
			}
			res, err := measure(addr, mode, r, fmt.Sprintf("r%d:%d:%s:", r, round, mode))
			if err != nil {
				return fmt.Errorf("%s, %d replicas: %w", mode, r, err)
			}
			fmt.Fprintf(os.Stderr, "replicas %d round %d %s: %.0f ops/s, p99 %.3f ms\n", r, round, mode, res.opsPerSec, res.p99ms)
			byMode[mode] = append(byMode[mode], res)
		}
	}
	ratio := func(num, den string, p99 bool) string {
		var xs []float64
		for i := range byMode[num] {
			a, b := byMode[num][i], byMode[den][i]
			if p99 {
				xs = append(xs, a.p99ms/b.p99ms)
			} else {
				xs = append(xs, a.opsPerSec/b.opsPerSec)
			}
		}
		return benchstat.FormatRatio(benchstat.Summarize(xs))
	}
	median := func(mode string) string {
		var ops, p99 []float64
		for _, res := range byMode[mode] {
			ops, p99 = append(ops, res.opsPerSec), append(p99, res.p99ms)
		}
		return fmt.Sprintf("%.0f, %.2f", benchstat.Summarize(ops).Median, benchstat.Summarize(p99).Median)
	}
	fmt.Printf("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r,
		ratio(durable, plain, false), ratio(durable, setWait, false), ratio(plain2, plain, false),
		ratio(durable, plain, true), ratio(durable, setWait, true), ratio(plain2, plain, true),
		median(plain), median(durable), median(setWait))
	return nil
}

// start runs a Keyhive on a free port with a directory of its own
// (difftest's process harness); stop kills it.
func start(bin string) (addr string, stop func(), err error) {
	return difftest.StartProcess(bin, "--save", "", "--appendonly", "no", "--repl-diskless-sync-delay", "0")
}

// measure has the connections write for the mode's time and returns the
// writes per second and the 99th percentile of their latency.
func measure(addr, mode string, r int, prefix string) (result, error) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		lats  []time.Duration
		first error
	)
	value := strings.Repeat("v", *size)
	wait := fmt.Sprintf("*3\r\n$4\r\nWAIT\r\n$%d\r\n%d\r\n$1\r\n0\r\n", len(strconv.Itoa(r)), r)
	end := time.Now().Add(time.Duration(*seconds * float64(time.Second)))
	began := time.Now()
	for c := range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				mu.Lock()
				first = err
				mu.Unlock()
				return
			}
			defer conn.Close()
			br := bufio.NewReader(conn)
			var mine []time.Duration
			var req []byte
			for i := 0; time.Now().Before(end); i++ {
				key := prefix + strconv.Itoa(c) + ":" + strconv.Itoa(i)
				req = fmt.Appendf(req[:0], "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(key), key, len(value), value)
				replies := 1
				if mode == setWait {
					req = append(req, wait...)
					replies = 2
				}
				t0 := time.Now()
				if _, err := conn.Write(req); err != nil {
					mu.Lock()
					first = err
					mu.Unlock()
					return
				}
				for range replies {
					line, err := br.ReadString('\n')
					if err == nil && line[0] == '-' {
						err = errors.New(strings.TrimSpace(line))
					}
					if err != nil {
						mu.Lock()
						first = err
						mu.Unlock()
						return
					}
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lats = append(lats, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	took := time.Since(began)
	if first != nil {
		return result{}, first
	}
	if len(lats) == 0 {
		return result{}, errors.New("no write completed")
	}
	slices.Sort(lats)
	p99 := lats[len(lats)*99/100]
	return result{opsPerSec: float64(len(lats)) / took.Seconds(), p99ms: float64(p99.Microseconds()) / 1000}, nil
}

// do sends one command on a new connection and returns its reply's text;
// an error reply is an error.
func do(addr string, args ...any) (string, error) {
	c, err := difftest.Dial(addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	r, err := c.Do(args...)
	if err == nil && r.IsError() {
		err = errors.New(r.Str)
	}
	return r.Str, err
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad count %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}
