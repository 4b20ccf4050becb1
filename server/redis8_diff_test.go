package server_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// The Redis 7.2-8.x command interfaces. Their helpers (docCase, which
// checks Keyhive's raw reply against one a redis.io page documents, for the
// 8.x commands no oracle here runs) are in helpers_test.go.

// newerArgs are the tokens the 8.x pages add to a command 7.4.1 has, with the
// page: COMMAND DOCS must list them, and otherwise equal 7.4.1's.
var newerArgs = map[string][]string{
	"set":   {"IFEQ", "IFNE", "IFDEQ", "IFDNE"}, // https://redis.io/docs/latest/commands/set/
	"bitop": {"DIFF", "DIFF1", "ANDOR", "ONE"},  // https://redis.io/docs/latest/commands/bitop/
	// https://redis.io/docs/latest/commands/zunionstore/ and zunion/, zinter/, zinterstore/
	"zunion": {"COUNT"}, "zinter": {"COUNT"}, "zunionstore": {"COUNT"}, "zinterstore": {"COUNT"},
	"xadd": {"KEEPREF", "DELREF", "ACKED", "IDMPAUTO", "IDMP"}, // https://redis.io/docs/latest/commands/xadd/
	// https://redis.io/docs/latest/commands/xread/ and xreadgroup/
	"xread": {"MAXCOUNT", "MAXSIZE"}, "xreadgroup": {"MAXCOUNT", "MAXSIZE", "CLAIM"},
}

var displayText = regexp.MustCompile(`display_text=\$"[^"]*"0 `)

// TestNewerCommandInterfaces: COMMAND INFO of the commands whose interface
// changed after 7.0 equals redis-server 7.4.1's (8.x changes leave INFO
// alone), and COMMAND DOCS lists their arguments as 7.4.1 does or, for the
// 8.x additions, with the documented tokens.
func TestNewerCommandInterfaces(t *testing.T) {
	p := difftest.Start74(t)
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		for name := range newerInterface {
			r, k := p.Redis().Do("COMMAND", "INFO", name).Elems[0], p.Keyhive().Do("COMMAND", "INFO", name).Elems[0]
			for i := range 8 {
				if canon(r.Elems[i], nil) != canon(k.Elems[i], nil) {
					t.Errorf("RESP%d %s field %d: keyhive %s, redis %s", proto, name, i, k.Elems[i], r.Elems[i])
				}
			}
			if rs, ks := keySpecsCanon(r.Elems[8]), keySpecsCanon(k.Elems[8]); rs != ks {
				t.Errorf("RESP%d %s key specs:\nkeyhive %s\nredis   %s", proto, name, ks, rs)
			}
			rd := docEntries(p.Redis().Do("COMMAND", "DOCS", name))[name]
			kd := docEntries(p.Keyhive().Do("COMMAND", "DOCS", name))[name]
			// 7.2 added display_text to every argument; Keyhive's DOCS are 7.0's.
			ra := displayText.ReplaceAllString(argsCanon(rd["arguments"]), "")
			ka := argsCanon(kd["arguments"])
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

// TestPropagationRedis8: what the 8.x writes propagate to the AOF and
// replicas, on Keyhive alone (no oracle has them), as Redis 8.4's code
// rewrites them: a conditional SET as sent (less GET, an expiry as PXAT),
// DELEX with a condition as DEL, MSETEX with its EX or PX as PXAT, LMOVEM as
// sent and a served BLMOVEM as the LMOVEM it did.
func TestPropagationRedis8(t *testing.T) {
	s := startKeyhiveProp(t)
	s.collect()
	steps := []propStep{
		w("SET k Hello IFNE x", "SET k Hello IFNE x"),
		w("SET k v2 IFEQ Hello GET EX 100", "SET k v2 PXAT {+100000}"),
		w("SET k v3 IFDEQ 0000000000000000"),
		w("SET k v3 IFDNE 0000000000000000 KEEPTTL GET", "SET k v3 IFDNE 0000000000000000 KEEPTTL"),
		w("DELEX k IFEQ nope"),
		w("DELEX k IFEQ v3", "DEL k"),
		w("DELEX nokey"),
		w("SET k v", "SET k v"),
		w("DELEX k", "DELEX k"),
		w("MSETEX 2 a 1 b 2 NX EX 100", "MSETEX 2 a 1 b 2 NX PXAT {+100000}"),
		w("MSETEX 1 a 1 PX 5000 XX", "MSETEX 1 a 1 PXAT {+5000} XX"),
		w("MSETEX 1 a 3 XX KEEPTTL", "MSETEX 1 a 3 XX KEEPTTL"),
		w("MSETEX 1 c 3 XX"),
		w("RPUSH l x y z", "RPUSH l x y z"),
		w("LMOVEM l m LEFT RIGHT COUNT 2 BULK", "LMOVEM l m LEFT RIGHT COUNT 2 BULK"),
		w("BLMOVEM l m LEFT RIGHT 0 COUNT 5 OBO", "LMOVEM l m LEFT RIGHT EXACTLY 1 OBO"),
		w("RPUSH l a", "RPUSH l a"),
		w("BLMOVEM l m LEFT RIGHT 0", "LMOVEM l m LEFT RIGHT"),
		w("LMOVEM nokey m LEFT RIGHT"),
		w("BITOP ONE d a b", "BITOP ONE d a b"),
	}
	for _, step := range steps {
		t0 := time.Now().UnixMilli()
		reply := s.conn.do(t, step.cmd...)
		t1 := time.Now().UnixMilli()
		if err := matchPropagated(s.collect(), step.want, 0, t0, t1); err != nil {
			t.Errorf("%q (reply %v): %v", step.cmd, reply, err)
		}
	}
}
