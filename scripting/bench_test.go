package scripting_test

import (
	"os"
	"testing"

	"github.com/keyhive/keyhive/resp"
	"github.com/keyhive/keyhive/scripting"
)

// A run reuses the engine's Lua state and the compiled proto (FACTS.md: a
// fresh state costs about 120 us).
func BenchmarkRun(b *testing.B) {
	for _, bench := range []struct{ name, body string }{
		{"return1", "return 1"},
		{"call", "return redis.call('get', KEYS[1])"},
		{"concat", "local s = '' for i = 1, 10 do s = s .. i .. ',' end return s"},
	} {
		b.Run(bench.name, func(b *testing.B) {
			e := scripting.NewEngine()
			sha, err := e.LoadScript([]byte(bench.body))
			if err != nil {
				b.Fatal(err)
			}
			s, _ := e.Script(sha)
			host := replyHost("$5\r\nvalue\r\n")
			keys := [][]byte{[]byte("key")}
			w := &resp.Writer{Proto: 2}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				w.B = w.B[:0]
				e.Run(s, keys, nil, host, w)
			}
		})
	}
}

// BenchmarkLoadScript is what a script not kept compiled pays when run:
// compiling it from its text (memory.go), here seed 002's enqueue script.
func BenchmarkLoadScript(b *testing.B) {
	body, err := os.ReadFile("../workloads/seed002/enqueue.lua")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		e := scripting.NewEngine()
		if _, err := e.LoadScript(body); err != nil {
			b.Fatal(err)
		}
	}
}
