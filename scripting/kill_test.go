package scripting_test

import (
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/resp"
	"github.com/keyhive/keyhive/scripting"
)

// okHost answers every command with +OK and counts calls as writes.
type okHost struct{ calls atomic.Int64 }

func (h *okHost) Call(args [][]byte, resp3 bool, dst []byte) []byte {
	h.calls.Add(1)
	return append(dst, "+OK\r\n"...)
}

func (h *okHost) Wrote() bool { return h.calls.Load() > 0 }

// runAsync starts a script and returns a channel with its reply.
func runAsync(e *scripting.Engine, body string, host scripting.Host) <-chan string {
	done := make(chan string, 1)
	sha, err := e.LoadScript([]byte(body))
	if err != nil {
		done <- err.Error()
		return done
	}
	s, _ := e.Script(sha)
	go func() {
		w := &resp.Writer{Proto: 2}
		e.Run(s, nil, nil, host, w)
		done <- string(w.B)
	}()
	return done
}

func waitRunning(t *testing.T, e *scripting.Engine) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		if running, _, _ := e.Running(); running {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("script did not start")
}

func TestKill(t *testing.T) {
	p := difftest.StartIsolated(t, "--busy-reply-threshold", "50")
	body := "local i = 0\nwhile true do i = i + 1 end"
	p.Redis().Send("EVAL", body, "0")
	time.Sleep(200 * time.Millisecond)
	other := p.NewConn()
	if r := other.Redis().Do("SCRIPT", "KILL"); r.Str != "OK" {
		t.Fatalf("SCRIPT KILL: %s", r)
	}
	want := string(p.Redis().Read().Raw)

	e := scripting.NewEngine()
	if e.Kill() {
		t.Error("Kill with nothing running reported a kill")
	}
	for _, b := range []string{body, "while true do pcall(function() while true do end end) end"} {
		host := &okHost{}
		done := runAsync(e, b, host)
		waitRunning(t, e)
		if running, isFunction, wrote := e.Running(); !running || isFunction || wrote {
			t.Errorf("Running() = %v %v %v", running, isFunction, wrote)
		}
		if !e.Kill() {
			t.Fatal("Kill found nothing running")
		}
		select {
		case got := <-done:
			if b == body && got != want {
				t.Errorf("killed script\n redis:  %q\n engine: %q", want, got)
			}
			if !strings.HasPrefix(got, "-ERR Script killed by user with SCRIPT KILL...") {
				t.Errorf("killed script replied %q", got)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("script survived Kill")
		}
	}
	// The state is reused after a kill.
	if got := run(t, e, "return redis.call('set', 'k', 'v')", &okHost{}, 2); got != "+OK\r\n" {
		t.Errorf("after kill: %q", got)
	}
}

func TestWriteTracking(t *testing.T) {
	e := scripting.NewEngine()
	host := &okHost{}
	done := runAsync(e, "redis.call('set', 'k', 'v') while true do end", host)
	waitRunning(t, e)
	for i := 0; i < 1000 && host.calls.Load() == 0; i++ {
		time.Sleep(time.Millisecond)
	}
	if _, _, wrote := e.Running(); !wrote {
		t.Error("Running does not report the write")
	}
	e.Kill()
	<-done
}

// Pathological scripts must end in an error, never a crash or a huge
// allocation.
func TestResourceLimits(t *testing.T) {
	e := scripting.NewEngine()
	for _, body := range []string{
		"return string.rep('x', 1e10)",
		"return string.rep('abc', 2^32 + 2^30)", // a C int: wraps to 2^30
		"return ('x'):rep(1e9)",
		"return select('#', unpack({}, 1, 1e8))",
		"local t = {} for i = 1, 1100 do t = {t} end return cjson.encode(t)",
		"return cjson.decode(string.rep('[', 100000))",
		"return cmsgpack.unpack(string.rep('\\145', 100000))",
		"return cmsgpack.unpack(string.rep('\\1', 100000))",
		"return struct.unpack(string.rep('b', 100000), string.rep('a', 100000))",
		"return struct.pack('c2147483647', 'x')",
		"return string.format('%099999d', 1)",
		"local t = setmetatable({}, {}) getmetatable(t).__index = t return t.x",
	} {
		t.Run("", func(t *testing.T) {
			got := run(t, e, body, &okHost{}, 2)
			if !strings.HasPrefix(got, "-") {
				t.Errorf("%q: want an error, got %.100q", body, got)
			}
		})
	}
}

// Coroutines derive their kill context from the run's; ending the run must
// release them (no goroutine per coroutine left behind).
func TestCoroutinesReleased(t *testing.T) {
	e := scripting.NewEngine()
	body := "for i = 1, 200 do local co = coroutine.create(function() coroutine.yield(1) end) coroutine.resume(co) end return 1"
	run(t, e, body, &okHost{}, 2)
	before := runtime.NumGoroutine()
	for i := 0; i < 5; i++ {
		if got := run(t, e, body, &okHost{}, 2); got != ":1\r\n" {
			t.Fatalf("got %q", got)
		}
	}
	time.Sleep(50 * time.Millisecond)
	if after := runtime.NumGoroutine(); after > before+10 {
		t.Errorf("goroutines grew from %d to %d", before, after)
	}
}

// FUNCTION KILL: redis-server 7.0.15 answers the killed FCALL with this
// exact text (SCRIPT KILL's wording, the function's name and line).
func TestKillFunction(t *testing.T) {
	e := scripting.NewEngine()
	if _, err := e.LoadLibrary([]byte("#!lua name=loop\nredis.register_function('spin', function() while true do end end)"), false); err != nil {
		t.Fatal(err)
	}
	f, _ := e.Function("spin")
	done := make(chan string, 1)
	go func() {
		w := &resp.Writer{Proto: 2}
		e.Call(f, nil, nil, &okHost{}, w)
		done <- string(w.B)
	}()
	waitRunning(t, e)
	if running, isFunction, _ := e.Running(); !running || !isFunction {
		t.Errorf("Running() = %v %v", running, isFunction)
	}
	e.Kill()
	if got, want := <-done, "-ERR Script killed by user with SCRIPT KILL... script: spin, on @user_function:2.\r\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
