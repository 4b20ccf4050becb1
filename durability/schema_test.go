package durability

import (
	"reflect"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/namespace"
)

func TestSchemaAuxRoundTrip(t *testing.T) {
	for _, line := range []string{
		"dns PREFIX dns: MAX-KEYS 10000 EVICT lowest-hits-then-oldest",
		"meta PREFIX ql:v1:meta: PROTECTED",
		"cache PREFIX cache: MAX-MEMORY 1048576 REJECT REQUIRE-TTL DEFAULT-TTL 60 MAX-TTL 3600 TYPES string,hash",
		"w PATTERN queue:*:waiting:* TYPES zset",
	} {
		d, err := namespace.Parse(strings.Fields(line))
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		defs, err := unmarshalSchema(marshalSchema([]namespace.Def{d}))
		if err != nil || len(defs) != 1 || !reflect.DeepEqual(defs[0], d) {
			t.Errorf("%s: Marshal round trip %v %v", line, defs, err)
		}
	}
}

// FuzzUnmarshalSchema feeds the declarations' file form (the RDB aux field,
// and the config file's namespace lines are the same arguments): never a
// panic, and what it accepts reads back the same.
func FuzzUnmarshalSchema(f *testing.F) {
	f.Add([]byte("dns PREFIX dns: MAX-KEYS 10000 EVICT lowest-hits-then-oldest\n"))
	f.Add([]byte("\"a b\" PATTERN \"q:*:w:*\" TYPES zset,hash PROTECTED\nc PREFIX c: DEFAULT-TTL 60\n"))
	f.Add([]byte("x PREFIX \"\\x00\\xff\" MAX-MEMORY 1gb REJECT\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		defs, err := unmarshalSchema(b)
		if err != nil {
			return
		}
		again, err := unmarshalSchema(marshalSchema(defs))
		if err != nil || !reflect.DeepEqual(again, defs) {
			t.Fatalf("round trip of %q: %v %v", b, again, err)
		}
		tab := namespace.NewTable(defs, 1, nil)
		for i := range defs {
			tab.Match([]byte(defs[i].Prefix))
			tab.Match(b)
		}
	})
}
