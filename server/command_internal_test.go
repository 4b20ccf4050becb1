package server

import (
	"fmt"
	"slices"
	"testing"

	"github.com/keyhive/keyhive/cmdspec"
)

// TestEveryCommandBound: the command table is cmdspec's, and every command
// and subcommand has a handler (a container only through its subcommands);
// bind panics on a name the spec lacks.
func TestEveryCommandBound(t *testing.T) {
	n := 0
	for _, s := range cmdspec.Commands() {
		c := table[s.Name]
		if c == nil || c.spec != s {
			t.Fatalf("%s: not in the table", s.Name)
		}
		n++
		if c.Run == nil && len(s.Subcommands) == 0 {
			t.Errorf("%s: no handler", s.Name)
		}
		for _, sub := range s.Subcommands {
			n++
			if sc := c.Sub[sub.Name]; sc == nil || sc.Run == nil {
				t.Errorf("%s: no handler", sub.FullName)
			}
		}
	}
	if n != commandCount {
		t.Errorf("%d specs, %d commands", n, commandCount)
	}
}

// TestKeyArgsNoAlloc: finding the keys of a GET or SET (to lock them)
// allocates nothing.
func TestKeyArgsNoAlloc(t *testing.T) {
	get, set := table["get"], table["set"]
	args := [][]byte{[]byte("set"), []byte("k"), []byte("v"), []byte("GET")}
	dst := make([][]byte, 0, 4)
	if n := testing.AllocsPerRun(100, func() {
		dst, _ = get.keyArgs(args[:2], dst[:0])
		dst, _ = set.keyArgs(args, dst[:0])
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
	refs := make([]cmdspec.KeyRef, 0, 4)
	if n := testing.AllocsPerRun(100, func() { refs = set.keyRefs(args, refs[:0]) }); n != 0 {
		t.Errorf("keyRefs: %v allocations", n)
	}
}

// TestLockKeysCoverIndexedKeys: a command whose keys its key specs find
// locks every argument an index-and-range spec names by position, whatever
// else the arguments hold (PFMERGE with no source once locked nothing: its
// source spec lay beyond the arguments and made the specs' answer
// unknown), or else takes every lock. (Commands with a key function read
// the arguments as their handler does: bad arguments are refused before a
// key is touched.)
func TestLockKeysCoverIndexedKeys(t *testing.T) {
	forEachCommand(func(c *Command) {
		if c.spec.KeyFunc != nil {
			return
		}
		n := max(c.Arity, -c.Arity)
		for extra := range 5 {
			args := [][]byte{[]byte(c.Name)}
			if c.spec.Parent != nil {
				args = [][]byte{[]byte(c.spec.Parent.Name), []byte(c.spec.Name)}
			}
			for len(args) < n+extra {
				args = append(args, []byte(fmt.Sprintf("k%d", len(args))))
			}
			keys, all := c.keyArgs(args, nil)
			if all {
				continue
			}
			for _, ks := range c.spec.KeySpecs() {
				if ks.Flags&cmdspec.NotKey != 0 || ks.BeginSearch != cmdspec.SearchIndex || ks.FindKeys != cmdspec.FindRange || ks.Index >= len(args) {
					continue
				}
				if !slices.ContainsFunc(keys, func(k []byte) bool { return &k[0] == &args[ks.Index][0] }) {
					t.Errorf("%s with %d arguments: argument %d (a key by its spec) not locked: %q", c.Name, len(args), ks.Index, keys)
				}
			}
		}
	})
}
