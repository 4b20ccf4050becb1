package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/scripting"
)

// TestScriptsOverMaxMemory: with used memory over maxmemory and nothing to
// evict, scripts obey allow-oom as in Redis 7.0. Scripts and functions that
// declare flags and may write are refused before they run; scripts without
// a shebang run, but their denyoom commands fail until they have called a
// write command; allow-oom and no-writes scripts run.
func TestScriptsOverMaxMemory(t *testing.T) {
	p := difftest.StartIsolated(t)
	p.Do("SET", "x", "1")
	p.Do("FUNCTION", "LOAD", "#!lua name=lib\n"+
		"redis.register_function('plain', function() return redis.call('set', 'a', '1') end)\n"+
		"redis.register_function{function_name='oomok', callback=function() return redis.call('set', 'a', '1') end, flags={'allow-oom'}}\n"+
		"redis.register_function{function_name='reader', callback=function() return redis.call('get', 'x') end, flags={'no-writes'}}")
	shebang, compat := "#!lua\nreturn redis.call('get', 'x')", "return redis.call('set', 'a', '1')"
	p.Do("SCRIPT", "LOAD", shebang)
	p.Do("SCRIPT", "LOAD", compat)
	p.Do("CONFIG", "SET", "maxmemory", "1")
	for _, cmd := range []string{"EVAL", "EVAL_RO"} {
		p.Do(cmd, "return redis.call('get', 'x')", 0)
		p.Do(cmd, "#!lua\nreturn 1", 0)
		p.Do(cmd, "#!lua flags=no-writes\nreturn redis.call('get', 'x')", 0)
		p.Do(cmd, "#!lua flags=allow-oom\nreturn redis.call('get', 'x')", 0)
	}
	// Compatibility mode: the first denyoom command fails, as an error
	// raised by redis.call or returned by redis.pcall.
	p.Do("EVAL", "return redis.call('set', 'a', '1')", 0)
	p.Do("EVAL", "return redis.pcall('set', 'a', '1')", 0)
	p.Do("EVAL", "local r = redis.pcall('incr', 'n') return {r['err'], redis.call('get', 'x')}", 0)
	p.Do("EVALSHA", scripting.SHA1Hex([]byte(compat)), 0)
	p.Do("EVALSHA", strings.Repeat("a", 40), 0) // not cached
	p.Do("EVALSHA", "abc", 0)
	// ...but not after a write command, even one that changed nothing.
	p.Do("EVAL", "redis.call('del', 'nothing') return redis.call('set', 'a', '1')", 0)
	p.Do("EVAL", "redis.call('expire', 'x', 100) return redis.call('set', 'b', '1')", 0)
	p.Do("EVAL_RO", "return redis.call('set', 'x', 1)", 0)
	// Declared flags: refused up front unless allow-oom or no-writes.
	p.Do("EVAL", "#!lua\nreturn redis.call('incr', 'n')", 0)
	p.Do("EVAL", "#!lua flags=allow-oom\nreturn redis.call('incr', 'n')", 0)
	p.Do("EVAL", "#!lua flags=allow-oom,no-writes\nreturn redis.call('get', 'n')", 0)
	p.Do("EVAL", "#!lua flags=no-writes\nreturn redis.call('incr', 'n')", 0)
	p.Do("EVAL", "#!lua badflag\nreturn 1", 0) // an invalid shebang fails as it would anyway
	p.Do("EVALSHA", scripting.SHA1Hex([]byte(shebang)), 0)
	p.Do("EVALSHA", strings.ToUpper(scripting.SHA1Hex([]byte(shebang))), 0)
	p.Do("EVALSHA_RO", scripting.SHA1Hex([]byte(shebang)), 0)
	for _, cmd := range []string{"FCALL", "FCALL_RO"} {
		p.Do(cmd, "plain", 0)
		p.Do(cmd, "oomok", 0)
		p.Do(cmd, "reader", 0)
		p.Do(cmd, "nosuch", 0)
	}
	// In a transaction EXEC is refused as a whole when a script in it would be.
	p.Do("CONFIG", "SET", "maxmemory", "0")
	p.Do("MULTI")
	p.Do("EVAL", "#!lua\nreturn redis.call('incr', 'n')", 0)
	p.Do("CONFIG", "SET", "maxmemory", "1")
	p.Do("EXEC")
	p.Do("CONFIG", "SET", "maxmemory", "0")
	p.Do("MULTI")
	p.Do("EVAL", "return redis.pcall('incr', 'n')", 0)
	p.Do("EVAL", "#!lua flags=allow-oom\nreturn redis.call('incr', 'n')", 0)
	p.Do("CONFIG", "SET", "maxmemory", "1")
	p.Do("EXEC")
	p.Do("CONFIG", "SET", "maxmemory", "0")
	p.Do("EVAL", "#!lua\nreturn redis.call('incr', 'n')", 0)
	p.Do("FCALL", "plain", 0)
	p.Do("MGET", "a", "b", "n")
	// Refusals count as rejected calls: of the script command when refused
	// up front, of the script's command when refused inside it.
	p.DoCompare(sameCallCounts("set", "incr", "eval", "eval_ro", "evalsha", "evalsha_ro", "fcall", "fcall_ro"), "INFO", "commandstats")
}

// sameCallCounts compares INFO commandstats' calls, rejected_calls and
// failed_calls of the named commands (the times differ).
func sameCallCounts(names ...string) func(r, k difftest.Reply) error {
	counts := func(info, name string) string {
		for _, line := range strings.Split(info, "\r\n") {
			if rest, ok := strings.CutPrefix(line, "cmdstat_"+name+":"); ok {
				var kept []string
				for _, field := range strings.Split(rest, ",") {
					if !strings.HasPrefix(field, "usec") {
						kept = append(kept, field)
					}
				}
				return strings.Join(kept, ",")
			}
		}
		return ""
	}
	return func(r, k difftest.Reply) error {
		for _, name := range names {
			if rc, kc := counts(r.Str, name), counts(k.Str, name); rc != kc {
				return fmt.Errorf("%s: redis %q, keyhive %q", name, rc, kc)
			}
		}
		return nil
	}
}
