package acl

import (
	"strings"
	"testing"

	"github.com/keyhive/keyhive/cmdspec"
)

// A catalog of a few commands, as a server would give it.
var miniCatalog = NewCatalog([]Command{
	{ID: 0, Name: "get", Categories: []string{"@read", "@string", "@fast"}},
	{ID: 1, Name: "set", Categories: []string{"@write", "@string", "@slow"}},
	{ID: 2, Name: "publish", Categories: []string{"@pubsub", "@fast"}, Channels: Publish},
	{ID: 3, Name: "psubscribe", Categories: []string{"@pubsub", "@slow"}, Channels: Subscribe | Pattern},
	{ID: 4, Name: "auth", Categories: []string{"@fast", "@connection"}, NoAuth: true},
	{ID: 5, Name: "config", Categories: []string{"@slow"}},
	{ID: 6, Name: "config|get", Categories: []string{"@admin", "@slow", "@dangerous"}},
	{ID: 7, Name: "select", Categories: []string{"@fast", "@connection"}},
})

func permsOf(t *testing.T, rules string) *Perms {
	t.Helper()
	u := New(miniCatalog, func() bool { return false })
	if err := u.Set("u", strings.Fields(rules)); err != nil {
		t.Fatal(err)
	}
	return u.User("u").Perms()
}

var (
	readKey  = cmdspec.RO | cmdspec.Access
	writeKey = cmdspec.RW | cmdspec.Update
)

// TestCheck: the verdict and the argument it concerns for commands, first
// arguments, key patterns with read/write rights, channels, and the most
// relevant denial of several selectors.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		rules   string
		id      int
		args    string
		keys    []cmdspec.KeyRef
		verdict Verdict
		object  string
	}{
		{"on +get ~k*", 0, "get k1", []cmdspec.KeyRef{{Pos: 1, Flags: readKey}}, OK, ""},
		{"on +get ~k*", 0, "get x", []cmdspec.KeyRef{{Pos: 1, Flags: readKey}}, DeniedKey, "x"},
		{"on +get ~k*", 1, "set k v", []cmdspec.KeyRef{{Pos: 1, Flags: writeKey}}, DeniedCommand, ""},
		{"on +@string %R~k*", 1, "set k v", []cmdspec.KeyRef{{Pos: 1, Flags: writeKey}}, DeniedKey, "k"},
		{"on +@string %W~k*", 1, "set k v", []cmdspec.KeyRef{{Pos: 1, Flags: writeKey}}, OK, ""},
		{"on -@all", 4, "auth p", nil, OK, ""},
		{"on +config", 6, "config get x", nil, OK, ""},
		{"on +config -config|get", 6, "config get x", nil, DeniedCommand, ""},
		{"on +select|0", 7, "select 0", nil, OK, ""},
		{"on +select|0", 7, "select 1", nil, DeniedCommand, ""},
		{"on +publish resetchannels &news.*", 2, "publish news.a m", nil, OK, ""},
		{"on +publish resetchannels &news.*", 2, "publish other m", nil, DeniedChannel, "other"},
		{"on +psubscribe resetchannels &news.*", 3, "psubscribe news.*", nil, OK, ""},
		{"on +psubscribe resetchannels &news.*", 3, "psubscribe news.a", nil, DeniedChannel, "news.a"},
		{"on +get ~a (+set ~b) (+get ~c)", 0, "get c", []cmdspec.KeyRef{{Pos: 1, Flags: readKey}}, OK, ""},
		{"on +get ~a (+set ~b)", 0, "get b", []cmdspec.KeyRef{{Pos: 1, Flags: readKey}}, DeniedKey, "b"},
	} {
		p := permsOf(t, tc.rules)
		args := make([][]byte, 0, 4)
		for _, a := range strings.Fields(tc.args) {
			args = append(args, []byte(a))
		}
		v, obj := p.Check(tc.id, args, tc.keys)
		if v != tc.verdict || string(obj) != tc.object {
			t.Errorf("%q: %s: got %d %q, want %d %q", tc.rules, tc.args, v, obj, tc.verdict, tc.object)
		}
	}
}

// TestCheckDoesNotAllocate: a restricted user's check allocates nothing.
func TestCheckDoesNotAllocate(t *testing.T) {
	p := permsOf(t, "on %R~r:* ~w:* resetchannels &n:* +@all -set")
	args := [][]byte{[]byte("get"), []byte("r:1")}
	keys := []cmdspec.KeyRef{{Pos: 1, Flags: readKey}}
	pub := [][]byte{[]byte("publish"), []byte("n:1"), []byte("m")}
	if n := testing.AllocsPerRun(100, func() {
		if v, _ := p.Check(0, args, keys); v != OK {
			t.Fatal(v)
		}
		if v, _ := p.Check(2, pub, nil); v != OK {
			t.Fatal(v)
		}
	}); n > 0 {
		t.Errorf("%.1f allocations per check", n)
	}
}

// TestDescribe: a user reads back as the rules ACL LIST shows, in Redis
// 7.2's order.
func TestDescribe(t *testing.T) {
	p := permsOf(t, "on nopass %R~r* ~w* &c +@all -@string +get -config|get +select|0 (~x +set)")
	want := "on nopass sanitize-payload %R~r* ~w* resetchannels &c +@all -@string +get -config|get +select|0 (~x resetchannels -@all +set)"
	if got := p.describe(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
