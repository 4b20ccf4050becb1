package namespace

import (
	"strings"
	"testing"

	"github.com/keyhive/keyhive/keyspace"
)

func mustParse(t *testing.T, line string) Def {
	t.Helper()
	d, err := Parse(strings.Fields(line))
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return d
}

func TestMatchLongestPrefixAndPatterns(t *testing.T) {
	tab := NewTable([]Def{
		mustParse(t, "dns PREFIX dns:"),
		mustParse(t, "dnsmeta PREFIX dnsmeta:"),
		mustParse(t, "queue PREFIX queue:"),
		mustParse(t, "waiting PATTERN queue:*:waiting:*"),
		mustParse(t, "link PREFIX ql:v1:link:"),
		mustParse(t, "ql PREFIX ql:"),
	}, 1, nil)
	for key, want := range map[string]string{
		"dns:example.com.:1:1":  "dns",
		"dnsmeta:hit:dns:x":     "dnsmeta",
		"dns":                   "default",
		"queue:1:waiting:2":     "waiting",
		"queue:1:active":        "queue",
		"ql:v1:link:abc":        "link",
		"ql:v1:404:abc":         "ql",
		"":                      "default",
		"key:000123":            "default",
		"queue:x:waiting:":      "waiting", // a final * matches nothing too, as in Redis
		"queue::waiting:z":      "waiting",
		"ql:v1:link:":           "link",
		"DNS:upper-is-distinct": "default",
	} {
		if got := tab.Def(tab.Match([]byte(key))).Name; got != want {
			t.Errorf("%q in %s, want %s", key, got, want)
		}
	}
}

func TestParseRoundTrip(t *testing.T) {
	for _, line := range []string{
		"dns PREFIX dns: MAX-KEYS 10000 EVICT lowest-hits-then-oldest",
		"meta PREFIX ql:v1:meta: PROTECTED",
		"cache PREFIX cache: MAX-MEMORY 1048576 REJECT REQUIRE-TTL DEFAULT-TTL 60 MAX-TTL 3600 TYPES string,hash",
		"w PATTERN queue:*:waiting:* TYPES zset",
	} {
		d := mustParse(t, line)
		if got := strings.Join(d.Args(), " "); got != line {
			t.Errorf("%s\n read back as %s", line, got)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for line, want := range map[string]string{
		"x":                                   "wrong number of arguments",
		"default PREFIX a:":                   "invalid namespace name",
		"x SUFFIX a":                          "needs PREFIX or PATTERN",
		"x PATTERN *":                         "would hold every key",
		"x PREFIX a: EVICT lru":               "EVICT needs MAX-KEYS or MAX-MEMORY",
		"x PREFIX a: MAX-KEYS 1 EVICT lrx":    "unknown EVICT order",
		"x PREFIX a: MAX-KEYS -1":             "invalid MAX-KEYS",
		"x PREFIX a: TYPES str":               "unknown type",
		"x PREFIX a: MAX-TTL":                 "needs a value",
		"x PREFIX a: BOGUS":                   "unknown namespace option",
		"x PREFIX a: DEFAULT-TTL 9 MAX-TTL 5": "longer than MAX-TTL",
	} {
		_, err := Parse(strings.Fields(line))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", line, err, want)
		}
	}
}

func TestEvictionOrderHitsThenOldest(t *testing.T) {
	tab := NewTable([]Def{mustParse(t, "d PREFIX d: MAX-KEYS 3 EVICT lowest-hits-then-oldest")}, 1, nil)
	for _, k := range []string{"d:1", "d:2", "d:3", "d:4"} {
		tab.Changed(0, []byte(k), 0, 1, 0, 10, 0, keyspace.NoKey, keyspace.KeySize{Len: 3})
	}
	tab.Hit(0, []byte("d:1"), true, nil)
	if tab.Over() != 1 {
		t.Fatal("4 keys over a quota of 3 not noticed")
	}
	_, victim, ok := tab.Victim(1, nil)
	if !ok || string(victim) != "d:2" {
		t.Fatalf("victim %q, want d:2 (d:1 was hit, d:2 is the oldest of the rest)", victim)
	}
	tab.Changed(0, victim, 0, -1, 0, -10, 0, keyspace.KeySize{Len: 3}, keyspace.NoKey)
	if tab.Over() != -1 || tab.Totals(1).Keys != 3 || tab.Totals(1).Bytes != 30 {
		t.Fatalf("after the eviction: over=%d totals=%+v", tab.Over(), tab.Totals(1))
	}
}

// BenchmarkMatch matches keys against bench/keyhive-namespaces.sh's 20
// declarations: a key in one, and one in none.
func BenchmarkMatch(b *testing.B) {
	var defs []Def
	for i, p := range []string{"key:", "counter:", "dns:", "dnsmeta:", "{dnsmeta}:", "sess:", "ql:v1:link:", "ql:v1:404:",
		"ql:v1:meta:", "queue:", "cache:project:", "cache:apikey:", "ratelimit:ipx:", "usage:", "ucg:entity:",
		"search:word:", "cache:page:", "session:", "lock:"} {
		d, _ := Parse([]string{"ns" + string(rune('a'+i)), "PREFIX", p})
		defs = append(defs, d)
	}
	d, _ := Parse([]string{"waiting", "PATTERN", "queue:*:waiting:*"})
	tab := NewTable(append(defs, d), 1, nil)
	for _, key := range []string{"key:000000123456", "ql:v1:link:abc123", "other:000000123456", "queue:ev1:waiting:42"} {
		k := []byte(key)
		b.Run(key, func(b *testing.B) {
			for b.Loop() {
				tab.Match(k)
			}
		})
	}
}
