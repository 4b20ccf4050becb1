package server

import (
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
		dst = get.keyArgs(args[:2], dst[:0])
		dst = set.keyArgs(args, dst[:0])
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
	refs := make([]cmdspec.KeyRef, 0, 4)
	if n := testing.AllocsPerRun(100, func() { refs = set.keyRefs(args, refs[:0]) }); n != 0 {
		t.Errorf("keyRefs: %v allocations", n)
	}
}
