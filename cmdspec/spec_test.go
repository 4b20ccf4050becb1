package cmdspec

import (
	"slices"
	"strings"
	"testing"
)

func forEachSpec(fn func(s *Spec)) {
	for _, s := range Commands() {
		fn(s)
		for _, sub := range s.Subcommands {
			fn(sub)
		}
	}
}

// TestGrammarsRoundTrip: every command's arguments and key specs, parsed
// and written again, give the text they were written in.
func TestGrammarsRoundTrip(t *testing.T) {
	n := 0
	forEachSpec(func(s *Spec) {
		n++
		if got := FormatArgs(s.Arguments()); got != s.Args {
			t.Errorf("%s arguments:\n got %s\nwant %s", s.FullName, got, s.Args)
		}
		for i, ks := range s.KeySpecs() {
			if got := ks.String(); got != s.Keys[i] {
				t.Errorf("%s key spec %d: got %q, want %q", s.FullName, i, got, s.Keys[i])
			}
		}
		for _, a := range s.Arguments() {
			if a.Type == "key" && (a.KeySpecIndex < 0 || a.KeySpecIndex >= len(s.Keys)) {
				t.Errorf("%s: argument %s names key spec %d of %d", s.FullName, a.Name, a.KeySpecIndex, len(s.Keys))
			}
		}
	})
	if n < 300 {
		t.Errorf("only %d specs", n)
	}
}

func TestParseArgs(t *testing.T) {
	args, err := ParseArgs(`key:key#0 [condition:<NX|XX>] [GET] "~"=approx [GET=pattern:pattern#1]...* x:{a:integer [b:string...]}(deprecated 6.2.0)`)
	if err != nil {
		t.Fatal(err)
	}
	want := []Arg{
		{Name: "key", Type: "key", KeySpecIndex: 0},
		{Name: "condition", Type: "oneof", KeySpecIndex: -1, Optional: true, Args: []Arg{
			{Name: "nx", Type: "pure-token", Token: "NX", KeySpecIndex: -1},
			{Name: "xx", Type: "pure-token", Token: "XX", KeySpecIndex: -1}}},
		{Name: "get", Type: "pure-token", Token: "GET", KeySpecIndex: -1, Optional: true},
		{Name: "approx", Type: "pure-token", Token: "~", KeySpecIndex: -1},
		{Name: "pattern", Type: "pattern", Token: "GET", KeySpecIndex: 1, Optional: true, Multiple: true, MultipleToken: true},
		{Name: "x", Type: "block", KeySpecIndex: -1, DeprecatedSince: "6.2.0", Args: []Arg{
			{Name: "a", Type: "integer", KeySpecIndex: -1},
			{Name: "b", Type: "string", KeySpecIndex: -1, Optional: true, Multiple: true}}},
	}
	if !argsEqual(args, want) {
		t.Errorf("got %+v", args)
	}
	for _, bad := range []string{"k:key", "k:nosuch", "[a:string", "a:<b|c", `"~"`, "a:{b|c}", "=x"} {
		if _, err := ParseArgs(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func argsEqual(a, b []Arg) bool {
	return slices.EqualFunc(a, b, func(x, y Arg) bool {
		return x.Name == y.Name && x.Type == y.Type && x.KeySpecIndex == y.KeySpecIndex && x.Token == y.Token &&
			x.Optional == y.Optional && x.Multiple == y.Multiple && x.MultipleToken == y.MultipleToken &&
			x.DeprecatedSince == y.DeprecatedSince && argsEqual(x.Args, y.Args)
	})
}

func TestParseKeySpec(t *testing.T) {
	ks, err := ParseKeySpec("RW access delete; keyword STREAMS -2; keynum 0 1 2")
	if err != nil {
		t.Fatal(err)
	}
	want := KeySpec{Flags: RW | Access | Delete, BeginSearch: SearchKeyword, Keyword: "STREAMS", StartFrom: -2,
		FindKeys: FindKeynum, KeyNumIdx: 0, FirstKey: 1, KeyStep: 2}
	if ks != want {
		t.Errorf("got %+v", ks)
	}
	if ks, err := ParseKeySpec("OW update; unknown; unknown; may come anywhere; really"); err != nil || ks.Notes != "may come anywhere; really" {
		t.Errorf("notes: %+v %v", ks, err)
	}
	for _, bad := range []string{"RW; index 1", "XX; index 1; range 0 1 0", "RW; index; range 0 1 0", "RW; index 1; range 0 1", "RW; nosuch; unknown"} {
		if _, err := ParseKeySpec(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func argv(s string) [][]byte {
	var args [][]byte
	for _, f := range strings.Fields(s) {
		args = append(args, []byte(f))
	}
	return args
}

func TestGetKeys(t *testing.T) {
	for _, c := range []struct {
		cmd, line string
		want      []KeyRef
	}{
		{"get", "get k", []KeyRef{{1, RO | Access}}},
		{"mset", "mset a 1 b 2", []KeyRef{{1, OW | Update}, {3, OW | Update}}},
		{"lmove", "lmove a b left right", []KeyRef{{1, RW | Access | Delete}, {2, RW | Insert}}},
		{"set", "set k v get", []KeyRef{{1, RW | Access | Update}}},
		{"set", "set k v", []KeyRef{{1, OW | Update}}},
		{"eval", "eval s 2 a b c", []KeyRef{{3, RW | Access | Update}, {4, RW | Access | Update}}},
		{"eval", "eval s 1x a", []KeyRef{{3, 0}}}, // Redis's atoi fallback: no flags
		{"xread", "xread count 2 streams a b 0 0", []KeyRef{{4, RO | Access}, {5, RO | Access}}},
		{"sort", "sort k by x store d", []KeyRef{{1, RO | Access}, {5, OW | Update}}},
		{"zunionstore", "zunionstore d 2 a b", []KeyRef{{1, OW | Update}, {3, RO | Access}, {4, RO | Access}}},
		{"ping", "ping", nil},
	} {
		got := Lookup(c.cmd).GetKeys(argv(c.line), nil)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.line, got, c.want)
		}
	}
}

// TestLegacyRange: COMMAND INFO's first/last/step and movablekeys derive
// from the key specs as in Redis.
func TestLegacyRange(t *testing.T) {
	for _, c := range []struct {
		cmd               string
		first, last, step int
		movable           bool
	}{
		{"get", 1, 1, 1, false}, {"mset", 1, -1, 2, false}, {"lmove", 1, 2, 1, false},
		{"zunionstore", 1, 1, 1, true}, {"xread", 0, 0, 0, true}, {"sort", 1, 1, 1, true}, {"ping", 0, 0, 0, false},
	} {
		s := Lookup(c.cmd)
		first, last, step := s.LegacyRange()
		if first != c.first || last != c.last || step != c.step || s.MovableKeys() != c.movable {
			t.Errorf("%s: %d %d %d %v", c.cmd, first, last, step, s.MovableKeys())
		}
	}
}

// TestFlagNames: COMMAND INFO shows Redis's flags in its order and none of
// the hidden ones, which come after them.
func TestFlagNames(t *testing.T) {
	if FlagMayReplicate != 1<<len(shownFlagNames) {
		t.Fatalf("%d names for the shown flags", len(shownFlagNames))
	}
	f := FlagAllowBusy | FlagFast | FlagWrite | FlagMovableKeys | FlagMayReplicate | FlagAllKeys | FlagChannelPattern
	if got := strings.Join(f.Names(), " "); got != "write fast movablekeys allow_busy" {
		t.Errorf("got %q", got)
	}
}

// TestTTLEffectOn: the expiration options are found by the grammar, not
// by scanning every argument.
func TestTTLEffectOn(t *testing.T) {
	for _, c := range []struct {
		line string
		want TTLEffect
		from int
	}{
		{"set k EX", TTLRemoved, 0},
		{"set k v", TTLRemoved, 0},
		{"set k v ifeq ex", TTLRemoved, 0},
		{"set k ex ex 10", TTLGiven, 0},
		{"set k v nx get pxat 1", TTLGiven, 0},
		{"set k v keepttl", TTLKept, 0},
		{"msetex 2 a 1 b EX", TTLRemoved, 0},
		{"msetex 1 a EX EX 10", TTLGiven, 0},
		{"msetex 1 a 1 nx keepttl", TTLKept, 0},
		{"msetex x a 1 ex 10", TTLRemoved, 0},
		{"getex k", TTLKept, 0},
		{"getex k persist", TTLRemoved, 0},
		{"getex k px 10", TTLGiven, 0},
		{"setex k 10 v", TTLGiven, 0},
		{"persist k", TTLRemoved, 0},
		{"mset a 1 b 2", TTLRemoved, 0},
		{"append k v", TTLKept, 0},
		{"restore k 0 x", TTLRemoved, 0},
		{"restore k 10 x", TTLGiven, 0},
		{"rename a b", TTLOfSource, 1},
		{"copy a b replace", TTLOfSource, 1},
	} {
		args := argv(c.line)
		s := Lookup(string(args[0]))
		k := KeyRef{2, OW | Update} // where an invalid numkeys finds none
		if refs := s.GetKeys(args, nil); len(refs) > 0 {
			k = refs[len(refs)-1]
		}
		if got, from := s.TTLEffectOn(args, k); got != c.want || from != c.from {
			t.Errorf("%s: got %d from %d, want %d from %d", c.line, got, from, c.want, c.from)
		}
	}
}

// TestWritesDeclared: every write command of a data type's group declares
// the type it writes, and no other command declares one. Module types share
// the group "module"; their commands' name prefixes tell them apart.
func TestWritesDeclared(t *testing.T) {
	groups := map[string]ValueType{
		"string": TypeString, "bitmap": TypeString, "hyperloglog": TypeString, "list": TypeList,
		"set": TypeSet, "sorted-set": TypeZSet, "geo": TypeZSet, "hash": TypeHash, "stream": TypeStream,
	}
	modules := map[string]ValueType{"json": TypeJSON}
	forEachSpec(func(s *Spec) {
		want := Untyped
		if s.Flags&FlagWrite != 0 {
			want = groups[s.Group]
			if prefix, _, ok := strings.Cut(s.FullName, "."); ok && s.Group == "module" {
				want = modules[prefix]
			}
		}
		if s.Writes != want {
			t.Errorf("%s (%s) writes %d, want %d", s.FullName, s.Group, s.Writes, want)
		}
	})
}

func TestScriptMayCall(t *testing.T) {
	for _, c := range []struct {
		name, line string
		want       bool
	}{
		{"debug", "debug sleep 0", true},
		{"debug", "debug RELOAD", false},
		{"debug", "debug loadaof", false},
		{"client|list", "client list", true},
		{"client|kill", "client kill id 1", false},
		{"flushall", "flushall", false},
	} {
		if got := Lookup(c.name).ScriptMayCall(argv(c.line)); got != c.want {
			t.Errorf("%s: %v", c.line, got)
		}
	}
}
