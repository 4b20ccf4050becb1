package acl

import (
	"slices"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/cmdspec"
)

// testCatalog is the command table's names and categories, as the server
// gives them (rules need nothing else).
func testCatalog() *Catalog {
	var cmds []Command
	add := func(s *cmdspec.Spec) {
		cmds = append(cmds, Command{ID: len(cmds), Name: s.FullName, Categories: strings.Fields(s.ACL)})
	}
	for _, s := range cmdspec.Commands() {
		add(s)
		for _, sub := range s.Subcommands {
			add(sub)
		}
	}
	return NewCatalog(cmds)
}

// FuzzACLRules applies arbitrary ACL SETUSER rules (space separated, as a
// client sends them) to a user: no panic, and a user that took the rules
// describes itself in rules that rebuild exactly the same permissions, as
// ACL SAVE and ACL LOAD rely on.
func FuzzACLRules(f *testing.F) {
	for _, seed := range []string{
		"on >pw ~foo* %R~bar* &ch* +get +@hash -hdel +client|id",
		"(~x* +get) (%W~y* +set) resetchannels",
		"+@all -@hash +hget -client|id +select|0",
		"-@all +select|0 +select|1 +client -client|kill",
		"%RW~x %R~ ~ & allkeys ~* &* allchannels resetkeys resetchannels",
		"#" + strings.Repeat("ab", 32) + " !" + strings.Repeat("ab", 32) + " <x >x nopass resetpass",
		"( ~x ) clearselectors reset skip-sanitize-payload sanitize-payload off",
		"+@read -get +@string +config|get|x +get| -select|0 %Rx %",
		"+@fast +@keyspace -@write (allkeys allchannels allcommands) (+@pubsub &a)",
	} {
		f.Add(seed)
	}
	cat := testCatalog()
	f.Fuzz(func(t *testing.T, line string) {
		rules, open := mergeSelectorArgs(strings.Split(line, " "))
		if open >= 0 {
			return
		}
		p := newPerms(cat, false)
		for _, r := range rules {
			if p.apply(r, false) != nil {
				return
			}
		}
		p.seal()
		if !describable(p) {
			return
		}
		desc := p.describe()
		q := newPerms(cat, false)
		again, open := mergeSelectorArgs(strings.Split(desc, " "))
		if open >= 0 {
			t.Fatalf("description %q has an unclosed selector", desc)
		}
		for _, r := range again {
			if err := q.apply(r, false); err != nil {
				t.Fatalf("description %q: rule %q: %v", desc, r, err)
			}
		}
		q.seal()
		if q.describe() != desc {
			t.Fatalf("rules %q describe as %q, which describes as %q", line, desc, q.describe())
		}
		if !samePerms(p.root, q.root) || len(p.selectors) != len(q.selectors) || p.unrestricted != q.unrestricted {
			t.Fatalf("rules %q and their description %q allow different things", line, desc)
		}
		for i := range p.selectors {
			if !samePerms(p.selectors[i], q.selectors[i]) {
				t.Fatalf("selector %d of %q and of %q differ", i, line, desc)
			}
		}
	})
}

// describable reports whether the user's patterns survive Redis's rule
// syntax: a selector's rules are split as quoted arguments, so a pattern
// with a parenthesis, quote, backslash or space does not read back (in
// Redis neither).
func describable(p *Perms) bool {
	bad := func(s *selector) bool {
		for _, k := range s.keys {
			if strings.ContainsAny(k.pattern, "()'\"\\ \t\r\n\v\f") {
				return true
			}
		}
		for _, c := range s.channels {
			if strings.ContainsAny(c, "()'\"\\ \t\r\n\v\f") {
				return true
			}
		}
		return false
	}
	for _, s := range append([]*selector{p.root}, p.selectors...) {
		if bad(s) {
			return false
		}
	}
	return true
}

func samePerms(a, b *selector) bool {
	return slices.Equal(a.cmds, b.cmds) && a.allKeys == b.allKeys && a.allChannels == b.allChannels &&
		slices.Equal(a.keys, b.keys) && slices.Equal(a.channels, b.channels)
}

// FuzzACLFile parses arbitrary ACL files: no panic; a file that parses
// without errors yields only users whose rules are valid.
func FuzzACLFile(f *testing.F) {
	for _, seed := range []string{
		"user alice on >pw ~a* &c* +@read -keys\nuser default on nopass ~* &* +@all\n",
		"user sel off (~x +get) (%R~y +@hash)\r\n\n",
		"user a on +nosuch +nosuch2 ~* ~b\nalice on\nuser\nuser a off\n",
		"user a (~x +get\nuser b on  >x\n\tuser c\n# comment\n",
	} {
		f.Add(seed)
	}
	cat := testCatalog()
	f.Fuzz(func(t *testing.T, data string) {
		users, errs := parseFile(cat, "users.acl", data, false)
		if errs != "" {
			return
		}
		for name, p := range users {
			if strings.ContainsAny(name, " \n") {
				t.Fatalf("user name %q", name)
			}
			if p.root == nil {
				t.Fatalf("user %q without permissions", name)
			}
		}
	})
}
