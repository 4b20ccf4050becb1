//go:build linux

// Command memory compares the memory footprint and mixed-workload throughput
// of Keyhive and redis-server.
//
//	go run ./bench/memory -keys 1000000,10000000
//
// For every key count N it starts a fresh redis-server, a fresh keyhive and a
// second fresh redis-server (the noise floor) on free ports, loads N keys
// (16-byte keys, 16-byte values) into each with pipelined MSET batches, one
// server after the other, and measures the growth of VmRSS
// (/proc/PID/status) and of INFO memory used_memory per key: one load per
// server, a deterministic figure up to the allocator, which the second
// redis-server's ratio shows. It then runs an 80% GET / 20% SET mix on
// random existing keys from many pipelining connections, alternating between
// the servers in short slices (each slice a round: the three servers in
// turn, package internal/benchstat) so that machine noise hits all alike, and
// reports ops/s as the median of the per-slice ratios plus Keyhive's GC
// statistics from INFO memory.
//
//	go run ./bench/memory -collections 1000000
//
// measures large collections instead (see collections.go): one hash, set and
// sorted set of N elements each, RSS growth per element.
//
// Numbers from a shared machine are only meaningful as keyhive/redis ratios.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/keyhive/keyhive/internal/benchstat"
	"github.com/keyhive/keyhive/internal/difftest"
)

var (
	flagKeys      = flag.String("keys", "1000000,10000000", "comma-separated key counts to load")
	flagKeyhive   = flag.String("keyhive", "", "keyhive binary (default: go build ./cmd/keyhive into a temp dir)")
	flagRedis     = flag.String("redis", "redis-server", "redis-server binary")
	flagDuration  = flag.Duration("duration", 20*time.Second, "mixed-workload time per server")
	flagSlice     = flag.Duration("slice", 5*time.Second, "mixed workload alternates servers every slice")
	flagWarmup    = flag.Duration("warmup", time.Second, "unmeasured mixed workload per server before the measured slices")
	flagConns     = flag.Int("conns", 50, "connections for the mixed workload")
	flagDepth     = flag.Int("depth", 16, "pipeline depth of the mixed workload")
	flagGetPct    = flag.Int("get-pct", 80, "percentage of GETs in the mixed workload (rest are SETs)")
	flagLoadConns = flag.Int("load-conns", 8, "connections used to load keys")
	flagBatch     = flag.Int("batch", 100, "keys per MSET command while loading")
	flagLoadDepth = flag.Int("load-depth", 8, "MSET commands in flight per loading connection")
	flagLoadCmd   = flag.String("load-cmd", "mset", "load with mset or set")
	flagSettle    = flag.Duration("settle", 2*time.Second, "pause before reading RSS after a load")
	flagTimeout   = flag.Duration("timeout", 120*time.Second, "I/O timeout for any single pipelined batch")

	flagCollections = flag.Int("collections", 0, "instead of keys: load one hash, set and sorted set of this many elements and report memory per element")
	flagKinds       = flag.String("kinds", "", "collections and matrix modes: comma-separated kinds to measure (default all)")
	flagJSON        = flag.Int("json", 0, "instead of keys: JSON documents, this many of 1 KB for memory, then one field's cost from 1 KB to 1 MB (json.go)")
	flagRounds      = flag.Int("rounds", 5, "JSON mode: rounds of the timed part")
	flagMatrix      = flag.Bool("matrix", false, "instead of keys: memory per key and element of each type at each size class and of the seeds' data sets (shapes.go; -kinds picks cells, types, classes or \"seeds\")")
	flagMatrixScale = flag.Float64("matrix-scale", 1, "matrix mode: multiply each cell's key count by this")
	flagSeedOps     = flag.Int("seed-ops", 20000, "matrix mode: requests of each seed workload run after its Prepare")
	flagNoiseFloor  = flag.Bool("noise-floor", true, "matrix mode: also load a second redis-server (the noise floor)")
	flagZScores     = flag.String("zset-scores", "random", "sorted-set scores in the collections mode: random or asc (ascending, like timestamps)")
)

const valueLen = 16

var val16 = []byte("vvvvvvvvvvvvvvvv") // 16 bytes, not an integer (no int encoding)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "memory:", err)
		stopAll()
		os.Exit(1)
	}
	stopAll()
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[%s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func run() error {
	var counts []int
	for _, s := range strings.Split(*flagKeys, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return fmt.Errorf("bad -keys entry %q", s)
		}
		counts = append(counts, n)
	}
	if *flagConns < 1 || *flagDepth < 1 || *flagLoadConns < 1 || *flagBatch < 1 || *flagLoadDepth < 1 {
		return errors.New("-conns, -depth, -load-conns, -batch and -load-depth must be >= 1")
	}
	if *flagGetPct < 0 || *flagGetPct > 100 {
		return errors.New("-get-pct must be within 0..100")
	}
	if *flagLoadCmd != "mset" && *flagLoadCmd != "set" {
		return errors.New("-load-cmd must be mset or set")
	}
	if *flagSlice <= 0 || *flagSlice > *flagDuration {
		*flagSlice = *flagDuration
	}

	tmp, err := os.MkdirTemp("", "keyhive-membench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		logf("interrupted, stopping servers")
		stopAll()
		os.RemoveAll(tmp)
		os.Exit(130)
	}()

	keyhiveBin := *flagKeyhive
	if keyhiveBin == "" {
		if keyhiveBin, err = difftest.BuildKeyhive(tmp); err != nil {
			return err
		}
	}
	redisBin, err := exec.LookPath(*flagRedis)
	if err != nil {
		return err
	}

	if *flagCollections > 0 {
		return runCollections(*flagCollections, redisBin, keyhiveBin, tmp)
	}
	if *flagJSON > 0 {
		return runJSON(*flagJSON, redisBin, keyhiveBin, tmp)
	}
	if *flagMatrix {
		return runMatrix(redisBin, keyhiveBin, tmp)
	}
	if *flagVSet > 0 {
		return runVSet(*flagVSet, keyhiveBin, tmp)
	}
	if *flagEvictLoad > 0 || *flagReload > 0 {
		return runChecks(redisBin, keyhiveBin, tmp)
	}
	fmt.Printf("# Keyhive vs redis-server: memory and mixed workload\n\n")
	fmt.Printf("keys %q, values %d bytes, loaded with %s (batch %d, %d conns); mixed %d%% GET / %d%% SET, %d conns x depth %d, %v per server in %v alternating slices\n\n",
		"k:%014d", valueLen, strings.ToUpper(*flagLoadCmd), *flagBatch, *flagLoadConns,
		*flagGetPct, 100-*flagGetPct, *flagConns, *flagDepth, *flagDuration, *flagSlice)

	for _, n := range counts {
		if err := runN(n, redisBin, keyhiveBin, tmp); err != nil {
			return fmt.Errorf("N=%d: %w", n, err)
		}
	}
	return nil
}

// result holds everything measured for one server at one key count.
type result struct {
	name, version      string
	rssBefore, rssLoad int64 // bytes
	umBefore, umLoad   int64 // used_memory, -1 if absent
	loadDur            time.Duration
	dbsize             int64
	ops                int64
	opsDur             time.Duration
	errReplies         int64
	firstErr           string
	sliceRates         []float64
	peakRSS            int64
	gcBefore, gcAfter  map[string]string
}

func runN(n int, redisBin, keyhiveBin, tmp string) error {
	logf("=== N=%d", n)
	servers := []*server{}
	defer func() {
		for _, s := range servers {
			s.stop()
		}
	}()
	results := []*result{}
	for _, spec := range [][2]string{{benchstat.Redis, redisBin}, {benchstat.Keyhive, keyhiveBin}, {benchstat.Redis2, redisBin}} {
		s, err := startServer(spec[0], spec[1], tmp)
		if err != nil {
			return err
		}
		servers = append(servers, s)
		r, err := loadServer(s, n)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		results = append(results, r)
	}

	// Mixed workload: slices of the servers in each round's order.
	pools := make([]*pool, len(servers))
	for i, s := range servers {
		p, err := newPool(s, *flagConns, uint64(i+1))
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		defer p.close()
		pools[i] = p
		if *flagWarmup > 0 {
			if _, _, err := p.mixed(n, *flagWarmup); err != nil {
				return fmt.Errorf("%s warm-up: %w", s.name, err)
			}
		}
	}
	for i, s := range servers {
		var err error
		if results[i].gcBefore, err = s.info("memory"); err != nil {
			return err
		}
	}
	nslices := int((*flagDuration + *flagSlice - 1) / *flagSlice)
	for k := 0; k < nslices; k++ {
		d := *flagSlice
		if rest := *flagDuration - time.Duration(k)*d; rest < d {
			d = rest
		}
		for _, name := range benchstat.Order(k + 1) {
			i := slices.IndexFunc(servers, func(s *server) bool { return s.name == name })
			ops, el, err := pools[i].mixed(n, d)
			if err != nil {
				return fmt.Errorf("%s mixed: %w", name, err)
			}
			r := results[i]
			r.ops += ops
			r.opsDur += el
			r.sliceRates = append(r.sliceRates, float64(ops)/el.Seconds())
			logf("%s mixed slice %d/%d: %.0f ops/s", name, k+1, nslices, float64(ops)/el.Seconds())
		}
	}
	for i, s := range servers {
		r := results[i]
		var err error
		if r.gcAfter, err = s.info("memory"); err != nil {
			return err
		}
		r.errReplies, r.firstErr = pools[i].errors()
		if st, err := procStatus(s.pid()); err == nil {
			r.peakRSS = st["VmHWM"]
		}
	}
	printTable(n, results)
	return nil
}

func loadServer(s *server, n int) (*result, error) {
	r := &result{name: s.name}
	srv, err := s.info("server")
	if err != nil {
		return nil, err
	}
	switch {
	case srv["keyhive_version"] != "":
		r.version = "keyhive_version:" + srv["keyhive_version"]
	case srv["redis_version"] != "":
		r.version = "redis_version:" + srv["redis_version"]
	default:
		r.version = "no version in INFO"
	}
	if r.rssBefore, err = rss(s.pid()); err != nil {
		return nil, err
	}
	mem, err := s.info("memory")
	if err != nil {
		return nil, err
	}
	r.umBefore = infoInt(mem, "used_memory")

	logf("%s (%s, pid %d): loading %d keys", s.name, r.version, s.pid(), n)
	start := time.Now()
	if err := loadParallel(n, func(lo, hi int) error { return loadRange(s.addr, lo, hi) }); err != nil {
		return nil, err
	}
	r.loadDur = time.Since(start)
	logf("%s: loaded in %v (%.0f keys/s)", s.name, r.loadDur.Round(time.Millisecond), float64(n)/r.loadDur.Seconds())
	time.Sleep(*flagSettle)

	if r.rssLoad, err = rss(s.pid()); err != nil {
		return nil, err
	}
	if mem, err = s.info("memory"); err != nil {
		return nil, err
	}
	r.umLoad = infoInt(mem, "used_memory")
	v, err := s.ctl.do("DBSIZE")
	var re replyError
	switch {
	case errors.As(err, &re):
		logf("warning: %s DBSIZE: %v", s.name, err)
		r.dbsize = -1
	case err != nil:
		return nil, err
	default:
		r.dbsize = v.n
	}
	if r.dbsize >= 0 && r.dbsize != int64(n) {
		logf("WARNING: %s DBSIZE = %d, expected %d", s.name, r.dbsize, n)
	}
	return r, nil
}

// ---------------------------------------------------------------------------
// servers

type server struct {
	name string
	addr string
	cmd  *exec.Cmd
	done chan struct{}
	ctl  *client
	log  string
}

var (
	runningMu sync.Mutex
	running   = map[*server]bool{}
)

func stopAll() {
	runningMu.Lock()
	list := make([]*server, 0, len(running))
	for s := range running {
		list = append(list, s)
	}
	runningMu.Unlock()
	for _, s := range list {
		s.stop()
	}
}

// freePort returns a port that is free now, chosen below the Linux ephemeral
// range (32768+) so that client connections cannot take it before the server
// binds it.
func freePort() (int, error) {
	for i := 0; i < 200; i++ {
		port := 10000 + rand.IntN(22000)
		l, err := net.Listen("tcp", fmt.Sprintf(":%d", port))
		if err == nil {
			l.Close()
			return port, nil
		}
	}
	return 0, errors.New("no free port found")
}

// startServer starts bin on a free port, retrying on another port if the
// server exits during start-up.
func startServer(name, bin, tmp string) (*server, error) {
	var err error
	for attempt := 1; attempt <= 5; attempt++ {
		var s *server
		var exited bool
		if s, exited, err = startServerOnce(name, bin, tmp); err == nil {
			return s, nil
		}
		if !exited {
			break
		}
		logf("%v (attempt %d)", err, attempt)
	}
	return nil, err
}

func startServerOnce(name, bin, tmp string) (*server, bool, error) {
	port, err := freePort()
	if err != nil {
		return nil, false, err
	}
	s := &server{name: name, addr: fmt.Sprintf("127.0.0.1:%d", port), done: make(chan struct{})}
	s.log = filepath.Join(tmp, fmt.Sprintf("%s-%d.log", name, port))
	logFile, err := os.Create(s.log)
	if err != nil {
		return nil, false, err
	}
	defer logFile.Close()
	s.cmd = exec.Command(bin, "--port", strconv.Itoa(port), "--save", "", "--appendonly", "no")
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		return nil, false, fmt.Errorf("start %s: %w", bin, err)
	}
	runningMu.Lock()
	running[s] = true
	runningMu.Unlock()
	go func() { s.cmd.Wait(); close(s.done) }()

	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := dial(s.addr)
		if err == nil {
			v, err := c.do("PING")
			if err == nil && v.str == "PONG" {
				s.ctl = c
				return s, false, nil
			}
			c.close()
		}
		select {
		case <-s.done:
			s.stop()
			return nil, true, fmt.Errorf("%s (%s) exited during start-up on port %d; log:\n%s", name, bin, port, tail(s.log))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, false, fmt.Errorf("%s (%s) did not answer PING on %s; log:\n%s", name, bin, s.addr, tail(s.log))
		}
	}
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

func (s *server) pid() int { return s.cmd.Process.Pid }

func (s *server) stop() {
	runningMu.Lock()
	was := running[s]
	delete(running, s)
	runningMu.Unlock()
	if !was {
		return
	}
	if s.ctl != nil {
		s.ctl.close()
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
}

func (s *server) info(section string) (map[string]string, error) {
	v, err := s.ctl.do("INFO", section)
	var re replyError
	if errors.As(err, &re) {
		// INFO not (fully) implemented: every field reads as absent.
		logf("warning: %s INFO %s: %v", s.name, section, err)
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s INFO %s: %w", s.name, section, err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(v.str, "\n") {
		line = strings.TrimRight(line, "\r")
		if k, val, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") {
			m[k] = val
		}
	}
	return m, nil
}

func infoInt(m map[string]string, key string) int64 {
	v, ok := m[key]
	if !ok {
		return -1
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

func procStatus(pid int) (map[string]int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	m := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 2 && f[1] == "kB" {
			if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
				m[k] = n * 1024
			}
		}
	}
	return m, nil
}

func rss(pid int) (int64, error) {
	m, err := procStatus(pid)
	if err != nil {
		return 0, err
	}
	v, ok := m["VmRSS"]
	if !ok {
		return 0, fmt.Errorf("no VmRSS for pid %d", pid)
	}
	return v, nil
}

// ---------------------------------------------------------------------------
// RESP client: raw writer over net.Conn, allocation-free reply skipping.

type client struct {
	c        net.Conn
	r        *bufio.Reader
	buf      []byte
	nerr     int64
	firstErr string
}

func dial(addr string) (*client, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &client{c: c, r: bufio.NewReaderSize(c, 64<<10), buf: make([]byte, 0, 64<<10)}, nil
}

func (c *client) close() { c.c.Close() }

func appendArray(b []byte, n int) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

func appendBulk(b []byte, s []byte) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

func appendBulkString(b []byte, s string) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// appendKey appends key i, "k:%014d" (16 bytes), as a bulk string.
func appendKey(b []byte, i int) []byte {
	var d [14]byte
	for j := len(d) - 1; j >= 0; j-- {
		d[j] = byte('0' + i%10)
		i /= 10
	}
	b = append(b, "$16\r\nk:"...)
	b = append(b, d[:]...)
	return append(b, '\r', '\n')
}

func (c *client) flush() error {
	c.c.SetDeadline(time.Now().Add(*flagTimeout))
	_, err := c.c.Write(c.buf)
	c.buf = c.buf[:0]
	return err
}

func parseInt(b []byte) (int64, error) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	if len(b) == 0 {
		return 0, errors.New("bad integer in reply")
	}
	var n int64
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, errors.New("bad integer in reply")
		}
		n = n*10 + int64(ch-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

func (c *client) line() ([]byte, error) {
	l, err := c.r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if len(l) < 3 || l[len(l)-2] != '\r' {
		return nil, fmt.Errorf("malformed reply line %q", l)
	}
	return l[:len(l)-2], nil
}

// skip reads and discards one reply, counting error replies.
func (c *client) skip() error {
	l, err := c.line()
	if err != nil {
		return err
	}
	switch l[0] {
	case '+', ':', '_', ',', '#', '(':
		return nil
	case '-', '!':
		c.nerr++
		if c.firstErr == "" {
			c.firstErr = string(l[1:])
		}
		return nil
	case '$', '=':
		n, err := parseInt(l[1:])
		if err != nil || n < 0 {
			return err
		}
		_, err = c.r.Discard(int(n) + 2)
		return err
	case '*', '%', '~', '>':
		n, err := parseInt(l[1:])
		if err != nil {
			return err
		}
		if l[0] == '%' {
			n *= 2
		}
		for ; n > 0; n-- {
			if err := c.skip(); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unexpected reply type %q", l[0])
}

// replyError is an error reply from the server.
type replyError string

func (e replyError) Error() string { return string(e) }

// value is a decoded reply for control commands (PING, INFO, DBSIZE).
type value struct {
	str string
	n   int64
}

func (c *client) do(args ...string) (value, error) {
	c.buf = appendArray(c.buf[:0], len(args))
	for _, a := range args {
		c.buf = appendBulkString(c.buf, a)
	}
	if err := c.flush(); err != nil {
		return value{}, err
	}
	l, err := c.line()
	if err != nil {
		return value{}, err
	}
	switch l[0] {
	case '+':
		return value{str: string(l[1:])}, nil
	case '-':
		return value{}, replyError(fmt.Sprintf("%s: %s", args[0], l[1:]))
	case ':':
		n, err := parseInt(l[1:])
		return value{n: n}, err
	case '$', '=':
		n, err := parseInt(l[1:])
		if err != nil || n < 0 {
			return value{}, err
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, b); err != nil {
			return value{}, err
		}
		if l[0] == '=' && len(b) >= 6 { // RESP3 verbatim "txt:"
			b = b[4:]
		}
		return value{str: string(bytes.TrimSuffix(b, []byte("\r\n")))}, nil
	}
	return value{}, fmt.Errorf("%s: unexpected reply %q", args[0], l)
}

// ---------------------------------------------------------------------------
// load

// loadParallel splits 0..n-1 into one range per loading connection and runs
// load on each range concurrently.
func loadParallel(n int, load func(lo, hi int) error) error {
	conns := *flagLoadConns
	var wg sync.WaitGroup
	errs := make([]error, conns)
	per := (n + conns - 1) / conns
	for i := 0; i < conns; i++ {
		lo, hi := i*per, min((i+1)*per, n)
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func(i, lo, hi int) {
			defer wg.Done()
			errs[i] = load(lo, hi)
		}(i, lo, hi)
	}
	wg.Wait()
	return errors.Join(errs...)
}

func loadRange(addr string, lo, hi int) error {
	c, err := dial(addr)
	if err != nil {
		return err
	}
	defer c.close()
	batch, depth := *flagBatch, *flagLoadDepth
	mset := *flagLoadCmd == "mset"
	for k := lo; k < hi; {
		sent := 0
		for b := 0; b < depth && k < hi; b++ {
			end := min(k+batch, hi)
			if mset {
				c.buf = appendArray(c.buf, 1+2*(end-k))
				c.buf = appendBulkString(c.buf, "MSET")
				for ; k < end; k++ {
					c.buf = appendKey(c.buf, k)
					c.buf = appendBulk(c.buf, val16)
				}
				sent++
			} else {
				for ; k < end; k++ {
					c.buf = appendArray(c.buf, 3)
					c.buf = appendBulkString(c.buf, "SET")
					c.buf = appendKey(c.buf, k)
					c.buf = appendBulk(c.buf, val16)
					sent++
				}
			}
		}
		if err := c.flush(); err != nil {
			return err
		}
		for ; sent > 0; sent-- {
			if err := c.skip(); err != nil {
				return err
			}
		}
		if c.nerr > 0 {
			return fmt.Errorf("load: error reply: %s", c.firstErr)
		}
	}
	return nil
}

// ---------------------------------------------------------------------------
// mixed workload

type pool struct {
	clients []*client
	rngs    []*rand.Rand
}

func newPool(s *server, conns int, seed uint64) (*pool, error) {
	p := &pool{}
	for i := 0; i < conns; i++ {
		c, err := dial(s.addr)
		if err != nil {
			p.close()
			return nil, err
		}
		p.clients = append(p.clients, c)
		p.rngs = append(p.rngs, rand.New(rand.NewPCG(seed, uint64(i))))
	}
	return p, nil
}

func (p *pool) close() {
	for _, c := range p.clients {
		c.close()
	}
}

func (p *pool) errors() (int64, string) {
	var n int64
	first := ""
	for _, c := range p.clients {
		n += c.nerr
		if first == "" {
			first = c.firstErr
		}
	}
	return n, first
}

// mixed runs the GET/SET mix on keys [0,n) for d and returns the op count
// and the elapsed time.
func (p *pool) mixed(n int, d time.Duration) (int64, time.Duration, error) {
	var stop atomic.Bool
	var total atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, len(p.clients))
	depth, getPct := *flagDepth, *flagGetPct
	start := time.Now()
	timer := time.AfterFunc(d, func() { stop.Store(true) })
	defer timer.Stop()
	for i, c := range p.clients {
		wg.Add(1)
		go func(i int, c *client, rng *rand.Rand) {
			defer wg.Done()
			var ops int64
			for !stop.Load() {
				for j := 0; j < depth; j++ {
					k := rng.IntN(n)
					if rng.IntN(100) < getPct {
						c.buf = append(c.buf, "*2\r\n$3\r\nGET\r\n"...)
						c.buf = appendKey(c.buf, k)
					} else {
						c.buf = append(c.buf, "*3\r\n$3\r\nSET\r\n"...)
						c.buf = appendKey(c.buf, k)
						c.buf = appendBulk(c.buf, val16)
					}
				}
				if err := c.flush(); err != nil {
					errs[i] = err
					break
				}
				for j := 0; j < depth; j++ {
					if err := c.skip(); err != nil {
						errs[i] = err
						break
					}
				}
				if errs[i] != nil {
					break
				}
				ops += int64(depth)
			}
			total.Add(ops)
		}(i, c, p.rngs[i])
	}
	wg.Wait()
	return total.Load(), time.Since(start), errors.Join(errs...)
}

// ---------------------------------------------------------------------------
// report

func printTable(n int, rs []*result) {
	fmt.Printf("## N = %d keys\n\n", n)
	for _, r := range rs {
		fmt.Printf("- %s: %s, DBSIZE %d, loaded in %v", r.name, r.version, r.dbsize, r.loadDur.Round(time.Millisecond))
		if r.errReplies > 0 {
			fmt.Printf(", %d error replies in mixed run (first: %s)", r.errReplies, r.firstErr)
		}
		fmt.Println()
	}
	fmt.Println()
	fmt.Println("| server | bytes/key (RSS) | used_memory/key | mixed ops/s | GC cycles | GC pause total | GC CPU % | load keys/s | peak RSS MiB |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	table := benchstat.New([]string{"measure"}, []string{""})
	for _, r := range rs {
		rssPerKey := float64(r.rssLoad-r.rssBefore) / float64(n)
		um := -1.0
		if r.umBefore >= 0 && r.umLoad >= 0 {
			um = float64(r.umLoad-r.umBefore) / float64(n)
		}
		ops := float64(r.ops) / r.opsDur.Seconds()
		load := float64(n) / r.loadDur.Seconds()
		peak := float64(r.peakRSS) / (1 << 20)
		cycles, pause, cpu := gcColumns(r)
		fmt.Printf("| %s | %.1f | %s | %.0f | %s | %s | %s | %.0f | %.0f |\n",
			r.name, rssPerKey, numOrNA(um, "%.1f"), ops, cycles, pause, cpu, load, peak)
		// One load per server: round 1 of the memory rows.
		table.Add([]string{"bytes/key (RSS)"}, 1, r.name, rssPerKey)
		table.Add([]string{"used_memory/key"}, 1, r.name, naIfNegative(um))
		table.Add([]string{"peak RSS MiB"}, 1, r.name, peak)
		table.Add([]string{"load keys/s"}, 1, r.name, load)
		for i, rate := range r.sliceRates {
			table.Add([]string{"mixed ops/s (per slice)"}, i+1, r.name, rate)
		}
	}
	fmt.Println()
	fmt.Println("Ratios: the memory and load rows are one load per server (deterministic up to the allocator: the noise")
	fmt.Println("floor, a second redis-server against the first, shows how far); mixed ops/s is the median of the")
	fmt.Println("per-slice ratios, each slice a round of the three servers in turn.")
	fmt.Println()
	table.Markdown(os.Stdout, benchstat.Options{Values: true})
	fmt.Println()
}

// naIfNegative is v, or NaN (missing) for the -1 of a field a server lacks.
func naIfNegative(v float64) float64 {
	if v < 0 {
		return math.NaN()
	}
	return v
}

func numOrNA(v float64, f string) string {
	if v < 0 {
		return "n/a"
	}
	return fmt.Sprintf(f, v)
}

// gcColumns formats Keyhive's GC statistics over the mixed run from the INFO
// memory fields keyhive_gc_cycles, keyhive_gc_pause_total_us and the GC and
// process CPU seconds; servers without them (redis) get "n/a".
func gcColumns(r *result) (cycles, pause, cpu string) {
	cycles, pause, cpu = "n/a", "n/a", "n/a"
	c0, c1 := infoInt(r.gcBefore, "keyhive_gc_cycles"), infoInt(r.gcAfter, "keyhive_gc_cycles")
	if c0 >= 0 && c1 >= 0 {
		cycles = strconv.FormatInt(c1-c0, 10)
	}
	p0, p1 := infoInt(r.gcBefore, "keyhive_gc_pause_total_us"), infoInt(r.gcAfter, "keyhive_gc_pause_total_us")
	if p0 >= 0 && p1 >= 0 {
		pause = fmt.Sprintf("%.1f ms", float64(p1-p0)/1000)
	}
	g0, g1 := infoFloat(r.gcBefore, "keyhive_gc_cpu_seconds"), infoFloat(r.gcAfter, "keyhive_gc_cpu_seconds")
	u0, u1 := infoFloat(r.gcBefore, "keyhive_process_cpu_seconds"), infoFloat(r.gcAfter, "keyhive_process_cpu_seconds")
	if g0 >= 0 && g1 >= 0 && u0 >= 0 && u1 > u0 {
		// The GC's share of the CPU the server used during the run.
		cpu = fmt.Sprintf("%.2f", 100*(g1-g0)/(u1-u0))
	} else if p0 >= 0 && p1 >= 0 && r.opsDur > 0 {
		// Fallback: stop-the-world time as a share of the measured time.
		cpu = fmt.Sprintf("%.2f (STW only)", float64(p1-p0)/float64(r.opsDur.Microseconds())*100)
	}
	return cycles, pause, cpu
}

// infoFloat reads a numeric INFO field, or -1 when it is missing.
func infoFloat(info map[string]string, name string) float64 {
	v, err := strconv.ParseFloat(info[name], 64)
	if err != nil {
		return -1
	}
	return v
}
