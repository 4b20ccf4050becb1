package server_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// Protocol edge cases sent as raw bytes to redis-server and Keyhive, whose
// replies (and whether they close the connection) must be identical.

func TestInlineCommands(t *testing.T) {
	p := difftest.Start(t)
	for _, line := range []string{
		"PING\r\n",
		"PING\n",
		"ping hello\r\n",
		"   PING   \r\n",
		"\tPING\t\r\n",
		"\v\fPING\r\n",
		"PING\va\r\n", // \v separates nothing inside a word
		"ECHO \"hello world\"\r\n",
		"ECHO \"\"\r\n",
		"ECHO ''\r\n",
		"ECHO \"\\x41\\x4a\\x7e\"\r\n",
		"ECHO \"\\x4\"\r\n",
		"ECHO \"\\xZZ\"\r\n",
		"ECHO \"\\x\"\r\n",
		"ECHO \"a\\nb\\rc\\td\\be\\af\\\\g\\\"h\\qi\"\r\n",
		"ECHO 'a\\'b'\r\n",
		"ECHO 'a\\nb\\\\ c'\r\n",
		"ECHO 'it\"s'\r\n",
		"ECHO \"it's\"\r\n",
		"ECHO a\"b c\"\r\n",
		"ECHO ab'c d'\r\n",
		"ECHO a\"\"\r\n",
		"ECHO \"a\" \"b\"\r\n",
		"ECHO \"a\"\t\r\n",
		"ECHO a\rb\n",
		"ECHO a\r\r\n",
		"ECHO \"a\r\"\r\n",
		"SET k \"va lue\"\r\n",
		"GET k\r\n",
		"get K\r\n",
		"ECHO \xff\xfe\r\n",
		"NOSUCH \"a b\" c\r\n",
		"PING a b\r\n",
	} {
		p.Raw([]byte(line))
	}
	// Empty lines are skipped without a reply.
	p.Raw([]byte("\r\n\n   \r\n\t\nPING\r\n"))
	p.SendRaw([]byte("\n"))
	p.Raw([]byte("PING x\r\n"))
	// Two inline commands and a multibulk one in one write.
	p.SendRaw([]byte("ECHO one\r\nECHO \"two\"\n*2\r\n$4\r\nECHO\r\n$5\r\nthree\r\n"))
	p.Read()
	p.Read()
	p.Read()

	// Unbalanced quotes: an error, then the connection closes.
	for _, line := range []string{
		"ECHO \"abc\r\n",
		"ECHO 'abc\r\n",
		"ECHO \"abc\"def\r\n",
		"ECHO 'abc'def\r\n",
		"ECHO \"abc\\\"\r\n",
		"ECHO \"a\\\r\n",
		"ECHO 'abc\\'\r\n",
		"ECHO a\"b\r\n",
		"ECHO 'a\\nb\\\\'\r\n", // \' is an escaped quote
	} {
		p.RawExpectClose([]byte(line))
	}
	// Commands before the bad line in the same write still run.
	p.SendRaw([]byte("SET q 1\r\nECHO \"x\r\nSET q 2\r\n"))
	p.Read()
	p.RawExpectClose(nil)
	p.Do("GET", "q")
}

func TestProtocolMultibulkEdgeCases(t *testing.T) {
	p := difftest.Start(t)
	p.Raw([]byte("*0\r\nPING\r\n"))
	p.Raw([]byte("*-1\r\nPING\r\n"))
	p.Raw([]byte("*-3000000000\r\nPING\r\n"))
	p.Raw([]byte("*1\r\n$0\r\n\r\n"))
	p.Raw([]byte("*2\r\n$4\r\nECHO\r\n$0\r\n\r\n"))
	p.Raw([]byte("*2\r\n$4\r\necho\r\n$5\r\na\r\nb\n\r\n"))
	// The two bytes after a bulk are not checked, as in Redis.
	p.SendRaw([]byte("*1\r\n$4\r\nPINGXY*1\r\n$4\r\nPING\r\n"))
	p.Read()
	p.Read()
	// A line needs only one byte after the '\r'.
	p.Raw([]byte("*1\rX$4\rYPING\r\n"))
	// A bulk header alone is an inline command.
	p.SendRaw([]byte("$3\r\nfoo\r\n"))
	p.Read()
	p.Read()
	// A partial command waits for the rest.
	p.SendRaw([]byte("*2\r\n$4\r\nECHO\r\n$5\r\nhel"))
	p.NoReply(30 * time.Millisecond)
	p.Raw([]byte("lo\r\n"))
	p.SendRaw([]byte("*1\r\nx"))
	p.NoReply(30 * time.Millisecond)
	p.RawExpectClose([]byte("yz\r\n"))
}

func TestProtocolErrors(t *testing.T) {
	p := difftest.Start(t)
	for _, data := range []string{
		"*abc\r\n",
		"*3000000000\r\n",
		"*2147483648\r\n",
		"*+1\r\n",
		"*01\r\n",
		"* 1\r\n",
		"*1 \r\n",
		"*\r\n",
		"*1\r\n$abc\r\n",
		"*1\r\n$-1\r\n",
		"*1\r\n$-5\r\n",
		"*1\r\n$+3\r\n",
		"*1\r\n$\r\n",
		"*1\r\n$03\r\n",
		"*1\r\n$9223372036854775808\r\n",
		"*1\r\n$536870913\r\n",
		"*1\r\nx\r\n",
		"*1\r\n:1\r\n",
		"*2\r\n$4\r\nECHO\r\n+foo\r\n",
		"*2\r\n$3\r\nfoo\r\n*1\r\n",
		"*1\r\n\r\n",
	} {
		p.RawExpectClose([]byte(data))
	}
	// Replies to the commands before the error are sent first.
	p.SendRaw([]byte("PING\r\nSET e 1\r\n*abc\r\nSET e 2\r\n"))
	p.Read()
	p.Read()
	p.RawExpectClose(nil)
	p.Do("GET", "e")

	// Over 64 KB without a line end.
	p.RawExpectClose(bytes.Repeat([]byte("a"), 70000))
	p.RawExpectClose(append([]byte("*"), bytes.Repeat([]byte("1"), 70000)...))
	p.RawExpectClose(append([]byte("*1\r\n$"), bytes.Repeat([]byte("1"), 70000)...))
	p.RawExpectClose(append([]byte("*1\r\n"), bytes.Repeat([]byte("x"), 70000)...))
	// Just under the limit is accepted (an unknown command).
	p.Raw(append(bytes.Repeat([]byte("a"), 60000), "\r\n"...))

	// Under CLIENT REPLY OFF the error text is dropped too. Intended
	// difference: redis then waits to close the connection after a reply that
	// never comes (it stays open, ignoring input); Keyhive closes it.
	p.SendRaw([]byte("CLIENT REPLY OFF\r\nPING\r\n*abc\r\nPING\r\n"))
	if err := p.Redis().Conn().Idle(100 * time.Millisecond); err != nil {
		t.Errorf("redis after a protocol error under CLIENT REPLY OFF: %v", err)
	}
	if err := p.Keyhive().Conn().WaitClosed(); err != nil {
		t.Errorf("keyhive after a protocol error under CLIENT REPLY OFF: %v", err)
	}
	p.Reconnect()
}

func TestProtocolUnauthenticatedLimits(t *testing.T) {
	p := startWithPassword(t)
	args := func(n int) []byte {
		cmd := []any{"MGET"}
		for i := 1; i < n; i++ {
			cmd = append(cmd, fmt.Sprint("k", i))
		}
		return difftest.EncodeCommand(cmd...)
	}
	p.Raw(args(10)) // NOAUTH
	p.RawExpectClose(args(11))
	p.RawExpectClose([]byte("*11\r\n"))
	p.RawExpectClose([]byte("*1000\r\n"))
	big := strings.Repeat("v", 16385)
	p.Raw(difftest.EncodeCommand("ECHO", big[:16384])) // NOAUTH
	p.RawExpectClose(difftest.EncodeCommand("ECHO", big))
	p.RawExpectClose([]byte("*2\r\n$4\r\nECHO\r\n$16385\r\n"))
	// An inline command is not limited.
	p.Raw([]byte("ECHO " + big + "\r\n"))
	// After AUTH in the same write, the limits no longer apply.
	p.SendRaw(append([]byte("AUTH secret\r\n"), args(11)...))
	p.Read()
	p.Read()
	p.Raw(difftest.EncodeCommand("ECHO", big))
	p.Do("SET", "k", big)
	p.Do("STRLEN", "k")
}

func TestProtocolProtoMaxBulkLen(t *testing.T) {
	p := difftest.StartIsolated(t)
	p.Do("CONFIG", "SET", "proto-max-bulk-len", "1000")
	p.Do("CONFIG", "SET", "proto-max-bulk-len", "1048576")
	p.Do("CONFIG", "GET", "proto-max-bulk-len")
	p.Reconnect()
	val := strings.Repeat("x", 1048576)
	p.Do("SET", "k", val)
	p.Do("STRLEN", "k")
	p.Do("APPEND", "k", "y") // exceeds proto-max-bulk-len
	// The header alone triggers the error; sending the body too would race
	// with the server closing the connection.
	p.RawExpectClose([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048577\r\n"))
	// The limit applies from the next command of the same write on.
	p.SendRaw(append(difftest.EncodeCommand("CONFIG", "SET", "proto-max-bulk-len", "2097152"), difftest.EncodeCommand("SET", "k2", val+"y")...))
	p.Read()
	p.Read()
	p.Do("STRLEN", "k2")
}

// pipeline builds n commands, inline and multibulk, over a small key set so
// that reads, writes, type errors and arity errors all occur.
func pipeline(rng *rand.Rand, n int) []byte {
	var b []byte
	key := func() string { return fmt.Sprintf("key:%d", rng.IntN(50)) }
	for range n {
		var cmd []any
		switch rng.IntN(8) {
		case 0:
			cmd = []any{"SET", key(), fmt.Sprintf("v%d", rng.IntN(1000))}
		case 1:
			cmd = []any{"SET", key(), strings.Repeat("z", rng.IntN(3000))}
		case 2:
			cmd = []any{"GET", key()}
		case 3:
			cmd = []any{"INCR", key()} // an error when the value is not a number
		case 4:
			cmd = []any{"DEL", key(), key()}
		case 5:
			cmd = []any{"MGET", key(), key(), key()}
		case 6:
			cmd = []any{"PING"}
		case 7:
			cmd = []any{"GET"}
		}
		if rng.IntN(10) == 0 && cmd[0] != "SET" {
			parts := make([]string, len(cmd))
			for i, a := range cmd {
				parts[i] = fmt.Sprint(a)
			}
			b = append(b, strings.Join(parts, " ")+"\r\n"...)
			continue
		}
		b = append(b, difftest.EncodeCommand(cmd...)...)
	}
	return b
}

func TestPipeline10000(t *testing.T) {
	slowTest(t, "10,000 pipelined commands to both servers")
	const n = 10000
	p := difftest.Start(t)
	rng := rand.New(rand.NewPCG(1, 2))

	data := pipeline(rng, n)
	p.SendRaw(data)
	for range n {
		p.Read()
	}

	// The same kind of pipeline split at arbitrary byte boundaries.
	data = pipeline(rng, n)
	for len(data) > 0 {
		k := min(len(data), 1+rng.IntN(300))
		p.SendRaw(data[:k])
		data = data[k:]
		if rng.IntN(8) == 0 {
			time.Sleep(time.Duration(rng.IntN(200)) * time.Microsecond)
		}
	}
	for range n {
		p.Read()
	}
	p.Do("PING")
}

func TestPipelineByteByByte(t *testing.T) {
	p := difftest.Start(t)
	data := []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\nGET k\r\n*2\r\n$4\r\nECHO\r\n$0\r\n\r\nECHO \"a b\"\r\n")
	for i := range data {
		p.SendRaw(data[i : i+1])
		if i%7 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	for range 4 {
		p.Read()
	}
}

func TestRESP3Replies(t *testing.T) {
	p := difftest.Start74(t)
	p.Proto(3)
	p.Do("GET", "nokey")
	p.Do("SET", "k", "10.5")
	p.Do("INCRBYFLOAT", "k", "0.1")
	p.Do("INCRBYFLOAT", "k", "1e3")
	p.Do("MGET", "k", "nokey")
	p.Do("SET", "k", "v", "GET")
	p.Do("SET", "nx", "v", "NX", "GET")
	p.Do("EXISTS", "k")
	p.Do("INCR", "k")
	p.DoUnordered("CONFIG", "GET", "maxmemory*")
	p.DoCompare(commandInfoCompare, "COMMAND", "INFO", "get") // sets of flags and categories
	p.Do("CLIENT", "GETNAME")
	p.DoCompare(clientLinesCompare, "CLIENT", "INFO") // verbatim string
	p.Do("ECHO", "x")
	p.Do("PING")
	p.Do("NOSUCH")
	p.Raw([]byte("ECHO inline\r\n"))
	p.Proto(2)
	p.Do("GET", "nokey")
}

// TestPipelineManyClients runs 200 connections to each server at once, each
// pipelining its own commands; every reply must match redis's.
func TestPipelineManyClients(t *testing.T) {
	const clients, perClient = 200, 300
	p := difftest.Start(t)
	raddr, kaddr := p.Redis().Addr(), p.Keyhive().Addr()
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for c := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(c), 7))
			var b []byte
			for i := range perClient {
				k := fmt.Sprintf("c%d:%d", c, rng.IntN(10))
				switch i % 4 {
				case 0:
					b = append(b, difftest.EncodeCommand("SET", k, fmt.Sprint(i))...)
				case 1:
					b = append(b, difftest.EncodeCommand("INCR", k)...)
				case 2:
					b = append(b, difftest.EncodeCommand("GET", k)...)
				case 3:
					b = append(b, difftest.EncodeCommand("MGET", k, k+"x")...)
				}
			}
			rc, err := difftest.Dial(raddr)
			if err != nil {
				errs <- err
				return
			}
			defer rc.Close()
			kc, err := difftest.Dial(kaddr)
			if err != nil {
				errs <- err
				return
			}
			defer kc.Close()
			rc.Timeout, kc.Timeout = 20*time.Second, 20*time.Second
			if err := rc.SendRaw(b); err != nil {
				errs <- err
				return
			}
			if err := kc.SendRaw(b); err != nil {
				errs <- err
				return
			}
			for i := range perClient {
				r, err := rc.Read()
				if err != nil {
					errs <- fmt.Errorf("client %d: redis reply %d: %v", c, i, err)
					return
				}
				k, err := kc.Read()
				if err != nil {
					errs <- fmt.Errorf("client %d: keyhive reply %d: %v", c, i, err)
					return
				}
				if !r.Equal(k) {
					errs <- fmt.Errorf("client %d reply %d: redis %q, keyhive %q", c, i, r.Raw, k.Raw)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestProtocolBulkHeaderDoesNotAllocate checks that a client announcing a 512 MB bulk
// and sending a few bytes does not make the server allocate the announced
// size: buffers grow with what arrives.
func TestProtocolBulkHeaderDoesNotAllocate(t *testing.T) {
	srv := startKeyhive(t)

	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	var conns []net.Conn
	for i := range 4 {
		c, err := net.Dial("tcp", srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		defer c.Close()
		var msg []byte
		switch i {
		case 0:
			msg = []byte("*2\r\n$3\r\nSET\r\n$536870912\r\nabc")
		case 1:
			msg = []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$536870912\r\n" + strings.Repeat("x", 100000))
		case 2:
			msg = []byte("*2147483647\r\n$3\r\nSET\r\n")
		case 3:
			msg = []byte("*1048576\r\n")
		}
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
	}
	// Wait until the server has read everything: it answers a PING on
	// another connection after processing the others' reads.
	time.Sleep(100 * time.Millisecond)
	check := dial(t, srv.Addr())
	if r, err := check.Do("PING"); err != nil || r.Str != "PONG" {
		t.Fatalf("PING: %v %v", r, err)
	}
	after := heap()
	if after > before && after-before > 64<<20 {
		t.Errorf("heap grew by %d MB after bulk headers announcing 512 MB", (after-before)>>20)
	}
	for _, c := range conns {
		c.Close()
	}
}
