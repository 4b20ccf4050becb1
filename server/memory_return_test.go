//go:build linux

package server_test

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/scripting"
)

// Memory the server must give back (issue 21): the script cache's, and the
// buffers and stacks of connections that closed. Both run cmd/keyhive as its
// own process, so that its RSS is not the test's.

func infoMemory(p *pipe) string {
	p.send("INFO", "memory")
	return p.flush()[0]
}

// scriptInfoFields are Redis 7.0's script fields of INFO memory, in its order.
var scriptInfoFields = []string{
	"used_memory_lua", "used_memory_vm_eval", "used_memory_lua_human",
	"used_memory_scripts_eval", "number_of_cached_scripts", "number_of_functions",
	"number_of_libraries", "used_memory_vm_functions", "used_memory_vm_total",
	"used_memory_vm_total_human", "used_memory_functions", "used_memory_scripts",
	"used_memory_scripts_human",
}

// checkScriptInfo checks the script fields' presence, order and sums.
func checkScriptInfo(t *testing.T, info string, scripts int64) {
	t.Helper()
	at := -1
	for _, name := range scriptInfoFields {
		i := strings.Index(info, "\r\n"+name+":")
		if i < 0 || i < at {
			t.Fatalf("INFO memory: %s missing or out of Redis's order", name)
		}
		at = i
	}
	if n := infoInt(t, info, "number_of_cached_scripts"); n != scripts {
		t.Errorf("number_of_cached_scripts %d, want %d", n, scripts)
	}
	vmEval, vmFn := infoInt(t, info, "used_memory_vm_eval"), infoInt(t, info, "used_memory_vm_functions")
	if lua := infoInt(t, info, "used_memory_lua"); lua != vmEval {
		t.Errorf("used_memory_lua %d != used_memory_vm_eval %d", lua, vmEval)
	}
	if total := infoInt(t, info, "used_memory_vm_total"); total != vmEval+vmFn {
		t.Errorf("used_memory_vm_total %d != %d + %d", total, vmEval, vmFn)
	}
	eval, fns := infoInt(t, info, "used_memory_scripts_eval"), infoInt(t, info, "used_memory_functions")
	if total := infoInt(t, info, "used_memory_scripts"); total != eval+fns {
		t.Errorf("used_memory_scripts %d != %d + %d", total, eval, fns)
	}
	// Each script's body, SHA1 and entry: "return N" costs Redis 136 bytes.
	if scripts == 0 && eval != 0 || eval < scripts*64 || eval > scripts*1024 {
		t.Errorf("used_memory_scripts_eval %d for %d scripts", eval, scripts)
	}
}

// TestScriptInfoFields: INFO memory has Redis's script fields in its order,
// and counts scripts, functions and libraries as it does.
func TestScriptInfoFields(t *testing.T) {
	p := difftest.StartIsolated(t)
	compare := func() {
		t.Helper()
		r, k := p.DoDifferent("INFO memory values differ; the script fields are compared", "INFO", "memory")
		var rnames, knames []string
		for _, line := range strings.Split(r.Str, "\r\n") {
			if name, _, _ := strings.Cut(line, ":"); slices.Contains(scriptInfoFields, name) {
				rnames = append(rnames, name)
			}
		}
		for _, line := range strings.Split(k.Str, "\r\n") {
			if name, _, _ := strings.Cut(line, ":"); slices.Contains(scriptInfoFields, name) {
				knames = append(knames, name)
			}
		}
		if !slices.Equal(rnames, knames) {
			t.Errorf("script fields: redis %v, keyhive %v", rnames, knames)
		}
		for _, name := range []string{"number_of_cached_scripts", "number_of_functions", "number_of_libraries"} {
			if rv, kv := infoField(r.Str, name), infoField(k.Str, name); rv != kv {
				t.Errorf("%s: redis %s, keyhive %s", name, rv, kv)
			}
		}
	}
	compare()
	p.Do("EVAL", "return 1", 0)
	p.Do("EVAL", "return 2", 0)
	p.Do("SCRIPT", "LOAD", "return 1")
	p.Do("SCRIPT", "LOAD", "return 3")
	p.DoDifferent("gopher-lua words parse errors differently from Lua 5.1", "SCRIPT", "LOAD", "syntax error (")
	p.Do("FUNCTION", "LOAD", "#!lua name=lib1\nredis.register_function('f1', function() return 1 end)\n"+
		"redis.register_function('f2', function() return 2 end)")
	p.Do("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function('f3', function() return 3 end)")
	compare()
	p.Do("FUNCTION", "DELETE", "lib2")
	compare()
	p.Do("SCRIPT", "FLUSH")
	p.Do("FUNCTION", "FLUSH")
	compare()
}

// TestScriptCacheMemory: 50,000 distinct EVAL scripts cost at most 2 KB each
// of RSS (they cost 16.7 KB: gopher-lua's compiler leaves each function's
// slices at their initial capacity, 12 KB of them for code and line
// numbers), INFO reports them as Redis does, and SCRIPT FLUSH gives their
// memory back to used_memory.
func TestScriptCacheMemory(t *testing.T) {
	slowTest(t, "loads thousands of scripts into a server process")
	addr, pid := startKeyhiveBinary(t)
	p := dialPipe(t, addr)
	p.send("EVAL", "return 'warm'", "0")
	p.flush()
	time.Sleep(200 * time.Millisecond)
	info := infoMemory(p)
	checkScriptInfo(t, info, 1)
	used0, rss0 := infoInt(t, info, "used_memory"), statusKB(t, pid, "VmRSS")<<10

	const n, batch = 50000, 1000
	start := time.Now()
	for i := 0; i < n; i += batch {
		for j := i; j < i+batch; j++ {
			p.send("EVAL", "return "+strconv.Itoa(j), "0")
		}
		for k, r := range p.flush() {
			if r != strconv.Itoa(i+k) {
				t.Fatalf("EVAL return %d: %q", i+k, r)
			}
		}
	}
	elapsed := time.Since(start)
	info = infoMemory(p)
	checkScriptInfo(t, info, n+1)
	used1, rss1 := infoInt(t, info, "used_memory"), statusKB(t, pid, "VmRSS")<<10
	perScript := (rss1 - rss0) / n
	t.Logf("%d scripts in %v: RSS %d -> %d MB (%d B per script), used_memory %d -> %d MB, used_memory_scripts_eval %d",
		n, elapsed.Round(time.Millisecond), rss0>>20, rss1>>20, perScript, used0>>20, used1>>20, infoInt(t, info, "used_memory_scripts_eval"))
	if perScript > 2048 {
		t.Errorf("a cached script costs %d bytes of RSS, want at most 2048", perScript)
	}

	// EVALSHA finds them all.
	for _, i := range []int{0, n / 2, n - 1} {
		p.send("EVALSHA", scripting.SHA1Hex([]byte("return "+strconv.Itoa(i))), "0")
		if r := p.flush()[0]; r != strconv.Itoa(i) {
			t.Fatalf("EVALSHA of script %d: %q", i, r)
		}
	}

	p.send("SCRIPT", "FLUSH")
	p.flush()
	// used_memory counts what the runtime holds from the OS; the flushed
	// scripts are returned by a collection the server asks for.
	growth := max(used1-used0, 0)
	deadline := time.Now().Add(10 * time.Second)
	var used2 int64
	for {
		info = infoMemory(p)
		used2 = infoInt(t, info, "used_memory")
		if used2 <= used0+growth/10+(2<<20) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	checkScriptInfo(t, info, 0)
	t.Logf("after SCRIPT FLUSH: used_memory %d MB (before the scripts %d MB), RSS %d MB",
		used2>>20, used0>>20, statusKB(t, pid, "VmRSS")>>10)
	if used2 > used0+growth/10+(2<<20) {
		t.Errorf("SCRIPT FLUSH left used_memory at %d, before the scripts %d, with them %d", used2, used0, used1)
	}
}

// raiseOpenFiles lifts the soft limit on open files to the hard one and
// reports it; children (the server) inherit it.
func raiseOpenFiles(t *testing.T) uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			t.Fatal(err)
		}
	}
	return lim.Cur
}

// TestIdleConnectionsMemoryReturned: after 10,000 connections that sent a
// command and stayed idle close, the server's RSS is back within twice what
// it was before they connected, within 30 seconds. It stayed at 7.7 times:
// an idle server runs no collection, so the dead goroutines' stacks were not
// freed, and the runtime's scavenger keeps what the last collection's heap
// goal allows.
func TestIdleConnectionsMemoryReturned(t *testing.T) {
	slowTest(t, "opens 10,000 connections")
	const conns = 10000
	if limit := raiseOpenFiles(t); limit < conns+200 {
		t.Skipf("open files limit %d is below %d", limit, conns+200)
	}
	addr, pid := startKeyhiveBinary(t, "--maxclients", strconv.Itoa(conns+100))
	p := dialPipe(t, addr)
	p.send("PING")
	p.flush()
	time.Sleep(500 * time.Millisecond)
	rss0 := statusKB(t, pid, "VmRSS") << 10

	cs := make([]net.Conn, 0, conns)
	defer func() {
		for _, c := range cs {
			c.Close()
		}
	}()
	start := time.Now()
	ping := []byte("*1\r\n$4\r\nPING\r\n")
	for range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("connection %d: %v", len(cs), err)
		}
		cs = append(cs, c)
		if _, err := c.Write(ping); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 16)
	for i, c := range cs {
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		if n, err := c.Read(buf); err != nil || string(buf[:n]) != "+PONG\r\n" {
			t.Fatalf("connection %d: %q %v", i, buf[:n], err)
		}
	}
	p.send("INFO", "clients")
	if n := infoField(p.flush()[0], "connected_clients"); n != strconv.Itoa(conns+1) {
		t.Fatalf("connected_clients %s, want %d", n, conns+1)
	}
	rss1 := statusKB(t, pid, "VmRSS") << 10
	t.Logf("%d connections in %v: RSS %d -> %d MB", conns, time.Since(start).Round(time.Millisecond), rss0>>20, rss1>>20)
	// A goroutine stack, a 4 KiB read buffer and the client's state: about
	// 11 KB.
	if per := (rss1 - rss0) / conns; per > 16<<10 {
		t.Errorf("an idle connection costs %d bytes of RSS", per)
	}

	for _, c := range cs {
		c.Close()
	}
	cs = cs[:0]
	closed := time.Now()
	var rss2 int64
	for {
		rss2 = statusKB(t, pid, "VmRSS") << 10
		if rss2 <= 2*rss0 || time.Since(closed) > 30*time.Second {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("RSS %d MB %v after the connections closed (before them %d MB)", rss2>>20, time.Since(closed).Round(time.Millisecond), rss0>>20)
	if rss2 > 2*rss0 {
		t.Errorf("RSS %d MB 30 s after %d connections closed, before them %d MB", rss2>>20, conns, rss0>>20)
	}
}
