package server_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// Helpers for the Redis 7.2-8.x commands: proto74 switches a Start74 pair's
// protocol (HELLO's version differs by design), and docCase checks Keyhive's
// raw reply against one a redis.io page documents, for the 8.x commands no
// oracle here runs.

// proto74 switches both sides of a pair to RESP version v.
func proto74(p *difftest.Pair, v int) {
	p.Redis().Do("HELLO", v)
	p.Keyhive().Do("HELLO", v)
}

// docCase sends args to Keyhive alone and requires the raw reply want.
func docCase(t *testing.T, p *difftest.Pair, want string, args ...any) {
	t.Helper()
	if got := p.Keyhive().Do(args...).Raw; string(got) != want {
		t.Errorf("%v: got %q, want %q", args, got, want)
	}
}

// skipOnRedisTarget skips a test of documented 8.x replies when the harness
// checks itself against a second redis-server, which lacks those commands.
func skipOnRedisTarget(t *testing.T) {
	if os.Getenv("KEYHIVE_DIFF_TARGET") == "redis" {
		t.Skip("documented Redis 8.x replies; the oracle is 7.x")
	}
}

// newerInterface names the commands both servers have whose COMMAND
// interface (arity, arguments) is a newer Redis's than 7.0.15's: the
// command-table tests leave them out and TestNewerCommandInterfaces
// compares them with redis-server 7.4.1 (7.2's changes) or checks the
// arguments the redis.io pages add (8.x's).
var newerInterface = map[string]bool{
	"zrank": true, "zrevrank": true, // 7.2: WITHSCORE
}

// newerArgs are the tokens the 8.x pages add to a command 7.4.1 has, with the
// page: COMMAND DOCS must list them, and otherwise equal 7.4.1's.
var newerArgs = map[string][]string{}

var displayText = regexp.MustCompile(`display_text=\$"[^"]*"0 `)

// TestNewerCommandInterfaces: COMMAND INFO of the commands whose interface
// changed after 7.0 equals redis-server 7.4.1's (8.x changes leave INFO
// alone), and COMMAND DOCS lists their arguments as 7.4.1 does or, for the
// 8.x additions, with the documented tokens.
func TestNewerCommandInterfaces(t *testing.T) {
	p := difftest.Start74(t)
	for _, proto := range []int{2, 3} {
		proto74(p, proto)
		for name := range newerInterface {
			p.Do("COMMAND", "INFO", name)
			r := docEntries(p.Redis().Do("COMMAND", "DOCS", name))[name]
			k := docEntries(p.Keyhive().Do("COMMAND", "DOCS", name))[name]
			// 7.2 added display_text to every argument; Keyhive's DOCS are 7.0's.
			ra := displayText.ReplaceAllString(argsCanon(r["arguments"]), "")
			ka := argsCanon(k["arguments"])
			if extra, ok := newerArgs[name]; ok {
				for _, tok := range extra {
					if !strings.Contains(ka, `token=$"`+tok+`"`) {
						t.Errorf("RESP%d %s: no %s argument in %s", proto, name, tok, ka)
					}
				}
				continue
			}
			if ra != ka {
				t.Errorf("RESP%d %s arguments:\nkeyhive %s\nredis   %s", proto, name, ka, ra)
			}
		}
	}
}
