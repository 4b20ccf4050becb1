package scripting_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/keyhive/keyhive/resp"
	"github.com/keyhive/keyhive/scripting"
)

// FuzzRestoreFunctions feeds FUNCTION RESTORE arbitrary payloads, as is and
// with a valid footer so the parser behind the checksum is reached.
func FuzzRestoreFunctions(f *testing.F) {
	e := scripting.NewEngine()
	if _, err := e.LoadLibrary([]byte("#!lua name=lib\nredis.register_function('f', function() return 'aaaaaaaaaaaaaaaaaaaaaaaaaaaa' end)"), false); err != nil {
		f.Fatal(err)
	}
	dump := e.DumpFunctions()
	f.Add(dump[:len(dump)-10])
	f.Add([]byte{245, 0xC3, 5, 20, 1, 'a', 'b', 0xE0, 0xFF, 1})
	f.Add([]byte{245, 0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, body []byte) {
		e := scripting.NewEngine()
		for _, payload := range [][]byte{body, withFooter(body)} {
			if err := e.RestoreFunctions(payload, scripting.RestoreFlush); err == nil {
				// What restored must dump and restore again identically.
				again := scripting.NewEngine()
				if err := again.RestoreFunctions(e.DumpFunctions(), scripting.RestoreFlush); err != nil {
					t.Fatalf("re-restoring a dump: %v", err)
				}
				if !bytes.Equal(again.DumpFunctions(), e.DumpFunctions()) {
					t.Fatal("dump differs after a round trip")
				}
			}
		}
	})
}

// FuzzScript compiles and runs arbitrary bodies: any outcome but a panic or
// a run that outlives Kill is fine.
func FuzzScript(f *testing.F) {
	for _, seed := range []string{
		"return 1",
		"return {1, 'a', {ok='x'}, {err='y'}, {map={a=1}}, {set={b=true}}, {double=1.5}}",
		"return cjson.encode(cjson.decode('[1,{\"a\":null}]'))",
		"return cmsgpack.unpack(cmsgpack.pack({1, 2, {a='b'}}))",
		"return struct.unpack('>i2', struct.pack('>i2', -3))",
		"return bit.tohex(bit.bxor(1, 3))",
		"return string.format('%5.2f %s %q', 1.5, 2, 'x') .. 0.1",
		"local t = setmetatable({}, {__index = function(t, k) return k end}) return t[1]",
		"return redis.call('set', KEYS[1], ARGV[1])",
		"redis.setresp(3) return redis.pcall('get')",
		"while true do end",
		"#!lua flags=no-writes\nreturn 1",
		"x = 1",
		"return loadstring('return 1 .. 2')()",
		"::top:: goto top",
		"local redis = {call = tostring} KEYS = nil return redis.call(1)",
		"function redis.call() end",
		"local function f(n) if n > 0 then return f(n - 1) end return tonumber(ARGV[1]) end return f(100)",
	} {
		f.Add(seed)
	}
	e := scripting.NewEngine()
	f.Fuzz(func(t *testing.T, body string) {
		sha, err := e.LoadScript([]byte(body))
		if err != nil {
			return
		}
		s, _ := e.Script(sha)
		for _, proto := range []int{2, 3} {
			w := &resp.Writer{Proto: proto}
			start := time.Now()
			stop := time.AfterFunc(50*time.Millisecond, func() { e.Kill() })
			e.Run(s, [][]byte{[]byte("k")}, [][]byte{[]byte("v")}, &okHost{}, w)
			stop.Stop()
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("run took %v", d)
			}
			if len(w.B) == 0 {
				t.Fatal("no reply")
			}
		}
		e.FlushScripts()
	})
}

// FuzzDecode feeds cjson.decode and cmsgpack.unpack arbitrary bytes, the
// parsers of outside data scripts use (Redis's CVEs live here): any error is
// fine, a panic or a run past the time limit is not. What decodes must encode
// again.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`[1,2.5,"x",{"a":null,"b":[true,false]}]`, `{"nested":[[[[[]]]]]}`, `"\u00e9\ud83d\ude00"`, `1e400`, `[`,
		"\x93\x01\x02\xa1a", "\x81\xa1k\xc0", "\xdc\xff\xff", "\xc4\x05ab", "\xcb\x3f\xf0\x00\x00\x00\x00\x00\x00",
	} {
		f.Add([]byte(seed))
	}
	e := scripting.NewEngine()
	var shas []string
	for _, body := range []string{
		"return cjson.encode(cjson.decode(ARGV[1]))",
		"return cmsgpack.pack(cmsgpack.unpack(ARGV[1]))",
		"return {cmsgpack.unpack_limit(ARGV[1], 3)}",
	} {
		sha, err := e.LoadScript([]byte(body))
		if err != nil {
			f.Fatal(err)
		}
		shas = append(shas, sha)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, sha := range shas {
			s, _ := e.Script(sha)
			w := &resp.Writer{Proto: 2}
			start := time.Now()
			stop := time.AfterFunc(200*time.Millisecond, func() { e.Kill() })
			e.Run(s, nil, [][]byte{data}, &okHost{}, w)
			stop.Stop()
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("run took %v", d)
			}
			if len(w.B) == 0 {
				t.Fatal("no reply")
			}
		}
	})
}
