// Command pubsub compares PUBLISH throughput of Keyhive and redis-server in
// one run: for each subscriber count and pipeline depth, publishers send N
// messages to one channel and the time runs until every subscriber has read
// every message. Each round measures Keyhive, redis-server and a second
// redis-server (the noise floor) in turn, and the table reports the median
// of the per-round ratios with their range (package internal/benchstat).
//
//	go run ./bench/pubsub                      # 1 and 50 subscribers, pipelines 1 and 16
//	go run ./bench/pubsub -subs 1,10,50 -n 500000 -rounds 5
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/keyhive/keyhive/internal/benchstat"
)

var (
	rounds    = flag.Int("rounds", 3, "rounds, each measuring keyhive, redis-server and a second redis-server in turn")
	n         = flag.Int("n", 200000, "messages published per run")
	subsList  = flag.String("subs", "1,50", "subscriber counts")
	pipelines = flag.String("pipelines", "1,16", "pipeline depths of the publishers")
	clients   = flag.Int("clients", 8, "publisher connections")
	size      = flag.Int("size", 16, "message size in bytes")
	redisBin  = flag.String("redis", "redis-server", "redis-server binary")
	khBin     = flag.String("keyhive", "", "keyhive binary (default: build ./cmd/keyhive)")
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "pubsub:", err)
		os.Exit(1)
	}
}

type server struct {
	name string
	addr string
	cmd  *exec.Cmd
}

func run() error {
	tmp, err := os.MkdirTemp("", "keyhive-pubsub")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := *khBin
	if bin == "" {
		bin = filepath.Join(tmp, "keyhive")
		build := exec.Command("go", "build", "-o", bin, "./cmd/keyhive")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("building keyhive (run from the repository root): %w", err)
		}
	}
	servers := map[string]*server{}
	for _, name := range []string{benchstat.Redis, benchstat.Keyhive, benchstat.Redis2} {
		b := *redisBin
		if name == benchstat.Keyhive {
			b = bin
		}
		srv := &server{name: name}
		if err := start(srv, b); err != nil {
			return err
		}
		defer srv.cmd.Process.Kill()
		servers[name] = srv
	}
	subs, err := ints(*subsList)
	if err != nil {
		return err
	}
	pipes, err := ints(*pipelines)
	if err != nil {
		return err
	}
	table := benchstat.New([]string{"subscribers", "pipeline"}, []string{"msg/s"})
	for r := 1; r <= *rounds; r++ {
		for _, s := range subs {
			for _, p := range pipes {
				for _, name := range benchstat.Order(r) {
					rate, err := measure(servers[name].addr, s, p)
					if err != nil {
						return fmt.Errorf("%s: %w", name, err)
					}
					fmt.Fprintf(os.Stderr, "round %d subs %d pipeline %d %s: %.0f msg/s\n", r, s, p, name, rate)
					table.Add([]string{strconv.Itoa(s), strconv.Itoa(p)}, r, name, rate)
				}
			}
		}
	}
	fmt.Printf("PUBLISH of %d-byte messages from %d connections, %d per run; %d rounds\n\n", *size, *clients, *n, *rounds)
	table.Markdown(os.Stdout, benchstat.Options{Values: true})
	return nil
}

func start(s *server, bin string) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s.cmd = exec.Command(bin, "--port", strconv.Itoa(port), "--save", "", "--appendonly", "no",
		"--client-output-buffer-limit", "pubsub 0 0 0")
	if err := s.cmd.Start(); err != nil {
		return err
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", s.addr); err == nil {
			c.Close()
			return nil
		}
	}
	return fmt.Errorf("%s did not start", s.name)
}

// measure publishes n messages from the publisher connections to subs
// subscribers and returns messages per second, counted until the last
// subscriber has read the last message.
func measure(addr string, subs, pipe int) (float64, error) {
	msg := bytes.Repeat([]byte("m"), *size)
	frame := fmt.Sprintf("*3\r\n$7\r\nmessage\r\n$5\r\nbench\r\n$%d\r\n%s\r\n", len(msg), msg)
	cmd := fmt.Sprintf("*3\r\n$7\r\nPUBLISH\r\n$5\r\nbench\r\n$%d\r\n%s\r\n", len(msg), msg)
	per := *n / *clients
	want := int64(per * *clients * len(frame))

	var wg sync.WaitGroup
	errs := make(chan error, subs+*clients)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range subs {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return 0, err
		}
		conns = append(conns, c)
		confirm := "*3\r\n$9\r\nsubscribe\r\n$5\r\nbench\r\n:1\r\n"
		if _, err := io.WriteString(c, "SUBSCRIBE bench\r\n"); err != nil {
			return 0, err
		}
		if _, err := io.ReadFull(c, make([]byte, len(confirm))); err != nil {
			return 0, err
		}
		wg.Go(func() {
			if got, err := io.CopyN(io.Discard, c, want); err != nil {
				errs <- fmt.Errorf("subscriber read %d of %d bytes: %w", got, want, err)
			}
		})
	}
	begin := time.Now()
	for range *clients {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return 0, err
		}
		conns = append(conns, c)
		wg.Go(func() {
			batch := []byte(strings.Repeat(cmd, pipe))
			r := bufio.NewReader(c)
			for sent := 0; sent < per; sent += pipe {
				k := min(pipe, per-sent)
				if _, err := c.Write(batch[:k*len(cmd)]); err != nil {
					errs <- err
					return
				}
				for range k {
					line, err := r.ReadSlice('\n')
					if err != nil || line[0] != ':' {
						errs <- fmt.Errorf("PUBLISH replied %q: %v", line, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(begin)
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	if len(all) > 0 {
		return 0, errors.Join(all...)
	}
	return float64(per**clients) / elapsed.Seconds(), nil
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
