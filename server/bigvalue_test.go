package server_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestBigValueMemory: under maxmemory and noeviction, a 512 MB value
// counts once in used_memory while it exists, and deleting it lowers
// used_memory at once (the next write succeeds) and gives the memory back
// to the OS within seconds. Issue 21: the value counted twice (a Go-heap
// copy built by SETRANGE) and, after DEL, until a forced collection two
// minutes later, refusing every write with OOM meanwhile. The same holds
// for a big value sent as an argument and read back: the client's read and
// reply buffers are given back after the command.
func TestBigValueMemory(t *testing.T) {
	slowTest(t, "fills a server process with big values")
	// A process of its own: its RSS is the server's, whatever the test
	// binary's instrumentation (the race detector's shadow memory stays).
	addr, pid := startKeyhiveBinary(t, "--maxmemory", "800mb", "--maxmemory-policy", "noeviction")
	c := dial(t, addr)
	vmRSS := func() int64 { return statusKB(t, pid, "VmRSS") << 10 }
	const size = 512 << 20
	base := usedMemory(t, c)
	rss0 := vmRSS()

	// SETRANGE far out: one mapping, counted once, pages untouched.
	if r := do(t, c, "SETRANGE", "big", size-1, "x"); r.Int != size {
		t.Fatalf("SETRANGE = %v", r)
	}
	checkNear(t, "used_memory after SETRANGE", usedMemory(t, c)-base, size)
	// deleteBig deletes the value: used_memory is back at once, and the
	// next write is not refused.
	deleteBig := func() {
		t.Helper()
		if r := do(t, c, "DEL", "big"); r.Int != 1 {
			t.Fatalf("DEL = %v", r)
		}
		if used := usedMemory(t, c); used > base+16<<20 {
			t.Fatalf("used_memory %d right after DEL, %d before the value", used, base)
		}
		if r := do(t, c, "SET", "k", "v"); r.Str != "OK" {
			t.Fatalf("SET after DEL = %v", r)
		}
	}
	deleteBig()

	// A 512 MB argument, written into every page, then read back: the read
	// buffer and the reply buffer must not stay counted.
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(60 * time.Second))
	br := bufio.NewReader(nc)
	sendBigSet(t, nc, "big", size)
	if line := readLine(t, br); line != "+OK" {
		t.Fatalf("SET big = %q", line)
	}
	checkNear(t, "used_memory after SET of a big argument", usedMemory(t, c)-base, size)
	if rss := vmRSS(); rss < rss0+size*9/10 {
		t.Fatalf("VmRSS %d after writing 512 MB, %d before: the test does not touch the pages", rss, rss0)
	}
	fmt.Fprintf(nc, "GET big\r\n")
	if line := readLine(t, br); line != "$"+strconv.Itoa(size) {
		t.Fatalf("GET big = %q", line)
	}
	if _, err := io.CopyN(io.Discard, br, size+2); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(nc, "INFO memory\r\n")
	if used := infoUsed(t, br); used-base > size*105/100 {
		t.Fatalf("used_memory %d after GET of the big value, %d more than before it existed", used, used-base)
	}
	deleteBig()
	deadline := time.Now().Add(10 * time.Second)
	for rss := vmRSS(); rss > rss0+64<<20; rss = vmRSS() {
		if time.Now().After(deadline) {
			t.Fatalf("VmRSS %d 10 s after DEL, %d before the value", rss, rss0)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestBigValueMemoryVsRedis: the same commands, replies compared with
// redis-server's under the same maxmemory; on both, used_memory falls back
// when the value is deleted.
func TestBigValueMemoryVsRedis(t *testing.T) {
	p := difftest.StartIsolated(t, "--maxmemory", "800mb", "--maxmemory-policy", "noeviction")
	p.SetTimeout(30 * time.Second)
	before := [2]int64{usedMemoryOf(t, p.Redis()), usedMemoryOf(t, p.Keyhive())}
	p.Do("SETRANGE", "big", 512<<20-1, "x")
	p.Do("APPEND", "big", "yz")
	p.Do("STRLEN", "big")
	p.Do("GETRANGE", "big", 512<<20-2, -1)
	p.Do("SETBIT", "big", 8*(512<<20-4), 1)
	p.Do("GETRANGE", "big", 512<<20-4, -1)
	p.Do("DEL", "big")
	p.Do("SET", "k", "v")
	for i, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
		if used := usedMemoryOf(t, c); used > before[i]+16<<20 {
			t.Errorf("%s: used_memory %d after DEL, %d before the value", []string{"redis", "keyhive"}[i], used, before[i])
		}
	}
}

func usedMemoryOf(t *testing.T, c *difftest.Client) int64 {
	t.Helper()
	return parseUsed(t, c.Do("INFO", "memory").Str)
}

// sendBigSet writes SET key <n bytes of 'v'> from a small buffer.
func sendBigSet(t *testing.T, w io.Writer, key string, n int) {
	t.Helper()
	fmt.Fprintf(w, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n", len(key), key, n)
	chunk := []byte(strings.Repeat("v", 1<<20))
	for left := n; left > 0; left -= len(chunk) {
		if _, err := w.Write(chunk[:min(left, len(chunk))]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Write([]byte("\r\n")); err != nil {
		t.Fatal(err)
	}
}

func readLine(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimRight(line, "\r\n")
}

// infoUsed reads an INFO reply (a bulk string) and returns used_memory.
func infoUsed(t *testing.T, br *bufio.Reader) int64 {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimPrefix(readLine(t, br), "$"))
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, n+2)
	if _, err := io.ReadFull(br, b); err != nil {
		t.Fatal(err)
	}
	return parseUsed(t, string(b))
}

func usedMemory(t *testing.T, c *difftest.Conn) int64 {
	t.Helper()
	return parseUsed(t, do(t, c, "INFO", "memory").Str)
}

func parseUsed(t *testing.T, info string) int64 {
	t.Helper()
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("INFO has no used_memory")
	return 0
}

// checkNear fails unless got is within 5% of want.
func checkNear(t *testing.T, what string, got, want int64) {
	t.Helper()
	if got < want*95/100 || got > want*105/100 {
		t.Fatalf("%s: %d, want %d within 5%%", what, got, want)
	}
}
