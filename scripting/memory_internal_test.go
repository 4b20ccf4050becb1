package scripting

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/keyhive/keyhive/resp"
)

type okHost struct{}

func (okHost) Call(args [][]byte, resp3 bool, dst []byte) []byte { return append(dst, "+OK\r\n"...) }

// bulkHost answers with a bulk string, which a script gets without
// allocating.
type bulkHost struct{}

func (bulkHost) Call(args [][]byte, resp3 bool, dst []byte) []byte {
	return append(dst, "$5\r\nvalue\r\n"...)
}

func heapAlloc() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestLuaStateBytes checks luaStateBytes against what a state holds.
func TestLuaStateBytes(t *testing.T) {
	e := NewEngine()
	before := heapAlloc()
	states := make([]*luaState, 10)
	for i := range states {
		states[i] = newLuaState(e, i%2 == 1)
	}
	per := (heapAlloc() - before) / int64(len(states))
	runtime.KeepAlive(states)
	t.Logf("a Lua state holds %d bytes; luaStateBytes %d", per, luaStateBytes)
	if per < luaStateBytes/2 || per > luaStateBytes*2 {
		t.Errorf("a Lua state holds %d bytes, luaStateBytes says %d", per, luaStateBytes)
	}
}

// TestScriptHeapBytes: a cached one-line script costs a few hundred bytes
// of heap, and the accounting follows what is held.
func TestScriptHeapBytes(t *testing.T) {
	e := NewEngine()
	w := &resp.Writer{Proto: 2}
	run := func(body string) {
		sha, err := e.LoadScript([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		s, _ := e.Script(sha)
		w.B = w.B[:0]
		e.Run(s, nil, nil, okHost{}, w)
	}
	run("return 'warm'")
	before := heapAlloc()
	const n = 20000
	for i := range n {
		run("return " + strconv.Itoa(i))
	}
	per := (heapAlloc() - before) / n
	m := e.MemoryStats()
	t.Logf("%d B of heap per script; scripts_eval %d (%d per script), vm_eval %d", per, m.ScriptBytes, m.ScriptBytes/int64(m.Scripts), m.EvalVM)
	if per > 1024 {
		t.Errorf("a cached script holds %d bytes of heap", per)
	}
}

// TestCompiledCacheKeepsHotScripts: a flood of one-off scripts past the
// compiled budget evicts them, not a script run in between; an evicted
// script runs again, compiled from its text.
func TestCompiledCacheKeepsHotScripts(t *testing.T) {
	e := NewEngine()
	w := &resp.Writer{Proto: 2}
	run := func(s *Script) string {
		w.B = w.B[:0]
		e.Run(s, nil, nil, okHost{}, w)
		return string(w.B)
	}
	load := func(body string) *Script {
		sha, err := e.LoadScript([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		s, _ := e.Script(sha)
		return s
	}
	hot := load("local n = 0 for i = 1, 3 do n = n + i end return n")
	run(hot)
	hotProto := hot.proto
	first := load("return 'first'")
	run(first)
	const n = 30000 // about 25 MB compiled: three times the budget
	for i := range n {
		run(load("return " + strconv.Itoa(i)))
		if i%100 == 0 {
			if got := run(hot); got != ":6\r\n" {
				t.Fatalf("hot script: %q", got)
			}
		}
	}
	if hot.proto != hotProto {
		t.Error("the hot script was compiled again")
	}
	if first.proto != nil {
		t.Error("a script run once long ago is still compiled")
	}
	if got := run(first); got != "$5\r\nfirst\r\n" {
		t.Errorf("evicted script: %q", got)
	}
	var sum int64
	for _, s := range e.compiled.ring {
		sum += s.compiledBytes
	}
	if sum != e.compiled.bytes || sum > compiledBudget || len(e.compiled.ring) < 1000 {
		t.Errorf("compiled: %d scripts, %d bytes counted, %d summed, budget %d", len(e.compiled.ring), e.compiled.bytes, sum, compiledBudget)
	}
	m := e.MemoryStats()
	if m.Scripts != n+2 || m.ScriptBytes < int64(n)*scriptEntryBytes || m.EvalVM != e.compiled.bytes+luaStateBytes {
		t.Errorf("MemoryStats %+v", m)
	}
	e.FlushScripts()
	if m := e.MemoryStats(); m.Scripts != 0 || m.ScriptBytes != 0 || m.EvalVM != 0 {
		t.Errorf("MemoryStats after FlushScripts %+v", m)
	}
}

// TestFunctionMemoryStats: the libraries' counts and bytes.
func TestFunctionMemoryStats(t *testing.T) {
	e := NewEngine()
	code := "#!lua name=lib\nredis.register_function('f1', function() return 1 end)\n" +
		"redis.register_function{function_name='f2', callback=function() return 2 end, description='two'}"
	if _, err := e.LoadLibrary([]byte(code), false); err != nil {
		t.Fatal(err)
	}
	m := e.MemoryStats()
	if m.Functions != 2 || m.Libraries != 1 || m.FunctionVM <= luaStateBytes || m.FunctionBytes < int64(len(code)) {
		t.Errorf("MemoryStats %+v", m)
	}
	e.FlushFunctions()
	if m := e.MemoryStats(); m != (MemoryStats{}) {
		t.Errorf("MemoryStats after FlushFunctions %+v", m)
	}
}

// TestRunKeptScriptDoesNotAllocate: running a script kept compiled
// allocates nothing and does not compile it again.
func TestRunKeptScriptDoesNotAllocate(t *testing.T) {
	e := NewEngine()
	w := &resp.Writer{Proto: 2}
	keys := [][]byte{[]byte("key")}
	for _, body := range []string{"return 1", "return redis.call('get', KEYS[1])"} {
		sha, err := e.LoadScript([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		s, _ := e.Script(sha)
		e.Run(s, keys, nil, bulkHost{}, w)
		proto := s.proto
		if n := testing.AllocsPerRun(200, func() {
			w.B = w.B[:0]
			e.Run(s, keys, nil, bulkHost{}, w)
		}); n != 0 {
			t.Errorf("%s: %.1f allocations per run", body, n)
		}
		if s.proto != proto {
			t.Errorf("%s: compiled again", body)
		}
	}
}
