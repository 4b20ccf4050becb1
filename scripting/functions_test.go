package scripting_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc64"
	"sort"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/resp"
	"github.com/keyhive/keyhive/scripting"
)

// load is what the server will do for FUNCTION LOAD [REPLACE].
func (h *harness) engineLoad(code string, replace bool) []byte {
	w := &resp.Writer{Proto: h.proto}
	name, err := h.eng.LoadLibrary([]byte(code), replace)
	if err != nil {
		w.Error(err.Error())
	} else {
		w.BulkString(name)
	}
	return w.B
}

func (h *harness) load(code string, replace bool) {
	h.t.Helper()
	args := []any{"FUNCTION", "LOAD"}
	if replace {
		args = append(args, "REPLACE")
	}
	want := h.p.Redis().Do(append(args, code)...).Raw
	if got := h.engineLoad(code, replace); !bytes.Equal(want, got) {
		h.t.Errorf("FUNCTION LOAD %q\n redis:  %q\n engine: %q", code, want, got)
	}
}

func (h *harness) fcall(name string, keys []string, args ...string) {
	h.t.Helper()
	want := h.p.Redis().Do(cmdArgs("FCALL", name, keys, args)...).Raw
	w := &resp.Writer{Proto: h.proto}
	if f, ok := h.eng.Function(name); ok {
		h.eng.Call(f, toBytes(keys), toBytes(args), h.host, w)
	} else {
		w.Error("ERR Function not found")
	}
	if !bytes.Equal(want, w.B) {
		h.t.Errorf("FCALL %s\n redis:  %q\n engine: %q", name, want, w.B)
	}
}

func (h *harness) functionList(args ...any) {
	h.t.Helper()
	want := h.p.Redis().Do(append([]any{"FUNCTION", "LIST"}, args...)...)
	var pattern *string
	withCode := false
	for i := 0; i < len(args); i++ {
		switch strings.ToUpper(args[i].(string)) {
		case "WITHCODE":
			withCode = true
		case "LIBRARYNAME":
			p := args[i+1].(string)
			pattern = &p
			i++
		}
	}
	w := &resp.Writer{Proto: h.proto}
	h.eng.WriteFunctionList(w, pattern, withCode)
	got, err := difftest.Parse(w.B)
	if err != nil {
		h.t.Fatal(err)
	}
	// Libraries and functions come in Redis's hash order: compare as sets.
	if canonical(want) != canonical(got) {
		h.t.Errorf("FUNCTION LIST %v\n redis:  %q\n engine: %q", args, want.Raw, w.B)
	}
}

// canonical renders r with the elements of every array and set sorted;
// map pairs keep their order.
func canonical(r difftest.Reply) string {
	if r.Elems == nil {
		return string(r.Raw)
	}
	var parts []string
	if r.Kind == '%' {
		for i := 0; i+1 < len(r.Elems); i += 2 {
			parts = append(parts, canonical(r.Elems[i])+"="+canonical(r.Elems[i+1]))
		}
	} else {
		for _, e := range r.Elems {
			parts = append(parts, canonical(e))
		}
		sort.Strings(parts)
	}
	return string(r.Kind) + "[" + strings.Join(parts, ",") + "]"
}

func TestFunctionLoadValidation(t *testing.T) {
	h := newHarness(t)
	for _, code := range []string{
		"return 1",
		"#!lua",
		"#!lua\nredis.register_function('f', function() end)",
		"#!lua name=\nredis.register_function('f', function() end)",
		"#!lua name=a-b\nredis.register_function('f', function() end)",
		"#!lua name=x name=y\nredis.register_function('f', function() end)",
		"#!lua name=x foo=bar\nredis.register_function('f', function() end)",
		"#!js name=x\nredis.register_function('f', function() end)",
		"#!LUA name=x\nredis.register_function('f', function() end)",
		"#!lua NAME=x\nredis.register_function('f', function() end)",
		"#!lua name=x\nreturn 1",
		"#!lua name=x\nreturn 1 +",
		"#!lua name=x\nredis.call('ping')",
		"#!lua name=x\nx = 1",
		"#!lua name=x\nreturn y",
		"#!lua name=x\nerror('boo')",
		"#!lua name=x\nlocal y = KEYS",
		"#!lua name=x\nlocal s = string.len('x')",
		"#!lua name=x\nredis.register_function()",
		"#!lua name=x\nredis.register_function('f')",
		"#!lua name=x\nredis.register_function('f', 1)",
		"#!lua name=x\nredis.register_function({}, function() end)",
		"#!lua name=x\nredis.register_function('f', function() end, 3)",
		"#!lua name=x\nredis.register_function('a-b', function() end)",
		"#!lua name=x\nredis.register_function('', function() end)",
		"#!lua name=x\nredis.register_function('f', function() end) redis.register_function('f', function() end)",
		"#!lua name=x\nredis.register_function(3)",
		"#!lua name=x\nredis.register_function{function_name='f'}",
		"#!lua name=x\nredis.register_function{callback=function() end}",
		"#!lua name=x\nredis.register_function{function_name='f', callback=function() end, foo=1}",
		"#!lua name=x\nredis.register_function{function_name={}, callback=function() end}",
		"#!lua name=x\nredis.register_function{function_name='f', callback=3}",
		"#!lua name=x\nredis.register_function{function_name='f', callback=function() end, description=3}",
		"#!lua name=x\nredis.register_function{function_name='f', callback=function() end, description={}}",
		"#!lua name=x\nredis.register_function{function_name='f', callback=function() end, flags='no-writes'}",
		"#!lua name=x\nredis.register_function{function_name='f', callback=function() end, flags={'bad'}}",
		"#!lua name=x\nredis.register_function{function_name='f', callback=function() end, flags={1}}",
		"#!lua name=x\nredis.register_function{[1]='f'}",
		"#!lua name=x\nredis.log(redis.LOG_DEBUG, 'loading') redis.register_function('f', function() end)",
		"#!lua name=x\nreturn redis.setresp",
		"#!lua name=x\nreturn redis.REDIS_VERSION .. redis.LOG_WARNING",
		"#!lua name=spin\nwhile true do end",
		"#!lua name=deep\nlocal function f() return 1 + f() end f()",
	} {
		h.load(code, false)
	}
	h.load("#!lua name=lib1\nredis.register_function('f1', function() return 1 end)", false)
	h.load("#!lua name=lib1\nredis.register_function('f2', function() return 2 end)", false)
	h.load("#!lua name=lib2\nredis.register_function('f1', function() return 2 end)", false)
	h.load("#!lua name=lib1\nredis.register_function('f2', function() return 2 end)", true)
	h.fcall("f2", nil)
	h.fcall("f1", nil)
	h.load("#!lua name=lib2\nredis.register_function('f2', function() return 2 end)", true)
	h.load("#!lua name=lib1\nreturn 1 +", true)
	h.fcall("f2", nil)
}

func TestFunctionCall(t *testing.T) {
	h := newHarness(t)
	h.p.Do("SET", "s", "x")
	h.load(`#!lua name=lib
local function helper(x) return string.len(x) .. ':' .. 1.5 end
redis.register_function('echo', function(keys, args) return {keys, args} end)
redis.register_function('help', function(keys, args) return helper(args[1]) end)
redis.register_function('fail', function() error('inner') end)
redis.register_function('callerr', function() return redis.call('incr', 's') end)
redis.register_function('nosuch', function() return redis.call('nosuch') end)
redis.register_function('glob', function() return KEYS end)
redis.register_function('setg', function() x = 1 end)
redis.register_function('rlist', function() local t = {} for k in pairs(redis) do t[#t+1] = k end table.sort(t) return t end)
redis.register_function('glist', function() local t = {} for k in pairs(_G) do t[#t+1] = k end table.sort(t) return t end)
redis.register_function('regagain', function() redis.register_function('z', function() end) end)
redis.register_function{function_name='withflags', callback=function() return 'ok' end, flags={'no-writes', 'allow-stale'}, description='desc'}
`, false)
	for _, proto := range []int{2, 3} {
		h.setProto(proto)
		h.fcall("echo", []string{"k1"}, "a1", "a2")
		h.fcall("help", nil, "abc")
		h.fcall("fail", nil)
		h.fcall("callerr", nil)
		h.fcall("nosuch", nil)
		h.fcall("glob", nil)
		h.fcall("setg", nil)
		h.fcall("rlist", nil)
		h.fcall("glist", nil)
		h.fcall("withflags", nil)
	}
	if f, ok := h.eng.Function("withflags"); !ok || f.Flags != scripting.FlagNoWrites|scripting.FlagAllowStale || *f.Description != "desc" {
		t.Errorf("withflags: %+v", f)
	}
	h.load("#!lua name=other\nredis.register_function{function_name='o1', callback=function() end, description='d1'}\nredis.register_function('o2', function() end)", false)
	h.functionList()
	h.functionList("WITHCODE")
	h.functionList("LIBRARYNAME", "oth*")
	h.functionList("LIBRARYNAME", "LIB", "WITHCODE")
	if libs, fns := h.eng.Counts(); libs != 2 || fns != 13 {
		t.Errorf("counts %d %d", libs, fns)
	}
	if err := h.eng.DeleteLibrary("nolib"); err == nil || err.Error() != "ERR Library not found" {
		t.Errorf("delete: %v", err)
	}
	if err := h.eng.DeleteLibrary("other"); err != nil {
		t.Error(err)
	}
	h.p.Redis().Do("FUNCTION", "DELETE", "other")
	h.functionList()
}

const dumpLib = `#!lua name=dumped
-- a library long enough for LZF compression to pay off: repeated text compresses
redis.register_function('d1', function(keys, args) return 'd1 d1 d1 d1 d1 d1 d1 d1' end)
redis.register_function('d2', function(keys, args) return 'd2 d2 d2 d2 d2 d2 d2 d2' end)
`

// withFooter appends the RDB version and Redis's CRC-64 (hash/crc64's
// Jones table without its inversions), making a payload RESTORE accepts.
func withFooter(body []byte) []byte {
	p := append(append([]byte{}, body...), 10, 0)
	sum := ^crc64.Update(^uint64(0), crc64.MakeTable(0x95AC9329AC4BC9B5), p)
	return binary.LittleEndian.AppendUint64(p, sum)
}

func TestFunctionDumpRestore(t *testing.T) {
	h := newHarness(t)
	for _, code := range []string{
		dumpLib,
		"#!lua name=tiny\nredis.register_function('t', function() return 1 end)",
		"#!lua name=abcdefghijklmnop\nredis.register_function('abcdefghijklmnop', function() return 'abcdefghijklmnopabcdefghijklmnop' end)",
		"#!lua name=incompressible\nredis.register_function('q', function() return 'xyzw' end)",
	} {
		h.p.Redis().Do("FUNCTION", "FLUSH")
		h.eng.FlushFunctions()
		h.load(code, false)
		want := h.p.Redis().Do("FUNCTION", "DUMP").Str
		got := h.eng.DumpFunctions()
		if want != string(got) {
			t.Errorf("DUMP of %q\n redis:  %q\n engine: %q", code[:20], want, got)
		}
		// Redis's payload restores into the engine.
		h.eng.FlushFunctions()
		if err := h.eng.RestoreFunctions([]byte(want), scripting.RestoreAppend); err != nil {
			t.Fatalf("restore redis payload: %v", err)
		}
		if string(h.eng.DumpFunctions()) != want {
			t.Errorf("restored library dumps differently")
		}
	}
	// And the engine's payload restores into redis-server.
	h.p.Redis().Do("FUNCTION", "FLUSH")
	h.eng.FlushFunctions()
	h.engineLoad(dumpLib, false)
	h.engineLoad("#!lua name=second\nredis.register_function('s', function() return 's' end)", false)
	payload := h.eng.DumpFunctions()
	if r := h.p.Redis().Do("FUNCTION", "RESTORE", payload); r.Str != "OK" {
		t.Fatalf("redis-server refused the engine's payload: %s", r)
	}
	h.fcall("d1", nil)
	h.fcall("s", nil)

	// Policies and errors.
	restore := func(payload []byte, policy scripting.RestorePolicy, policyName string) {
		t.Helper()
		want := h.p.Redis().Do("FUNCTION", "RESTORE", payload, policyName).Raw
		w := &resp.Writer{Proto: 2}
		if err := h.eng.RestoreFunctions(payload, policy); err != nil {
			w.Error(err.Error())
		} else {
			w.OK()
		}
		if !bytes.Equal(want, w.B) {
			t.Errorf("RESTORE %s\n redis:  %q\n engine: %q", policyName, want, w.B)
		}
	}
	// Which collision Redis reports depends on its hash order: use one library.
	h.eng.DeleteLibrary("second")
	single := h.eng.DumpFunctions()
	h.engineLoad("#!lua name=second\nredis.register_function('s', function() return 's' end)", false)
	restore(single, scripting.RestoreAppend, "APPEND")
	restore(payload, scripting.RestoreReplace, "REPLACE")
	restore(payload, scripting.RestoreFlush, "FLUSH")
	bad := append([]byte{}, payload...)
	bad[3] ^= 0xff
	restore(bad, scripting.RestoreAppend, "APPEND")
	restore([]byte("short"), scripting.RestoreAppend, "APPEND")
	restore(payload[len(payload)-10:], scripting.RestoreFlush, "FLUSH")
	code := []byte("#!lua name=x\nredis.register_function('f', function() return 1 end)")
	rdbString := func(s []byte) []byte { return append([]byte{0x40 | byte(len(s)>>8), byte(len(s))}, s...) }
	for _, body := range [][]byte{
		append([]byte{245}, rdbString(code)...),
		append([]byte{246}, rdbString(code)...),
		append(append(append([]byte{246}, rdbString([]byte("lib"))...), rdbString([]byte("LUA"))...), append([]byte{0}, rdbString([]byte("redis.register_function('g', function() return 2 end)"))...)...),
		append([]byte{0}, rdbString(code)...),
		{245, 60, 'a'},
		{245, 0xC3, 3, 20, 0xff, 0xff, 0xff},
		{245, 5, 'h', 'e', 'l', 'l', 'o'},
		append(append([]byte{245}, rdbString(code)...), append([]byte{245}, rdbString(code)...)...),
		append(append([]byte{245}, rdbString(code)...), 245),
		{245, 0xC0, 5},
		{},
		append([]byte{245}, rdbString([]byte("#!lua name=y\nreturn 1"))...),
	} {
		restore(withFooter(body), scripting.RestoreFlush, "FLUSH")
	}
	h.functionList("WITHCODE")
}
