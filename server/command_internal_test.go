package server

import (
	"strings"
	"testing"
)

// TestTipsNameCommands: the tips table names only commands in the command
// table (TestCommandTips compares the tips themselves with Redis's).
func TestTipsNameCommands(t *testing.T) {
	for name := range commandTips {
		parent, sub, isSub := strings.Cut(name, "|")
		c := table[parent]
		if c != nil && isSub {
			c = c.Sub[sub]
		}
		if c == nil {
			t.Errorf("tips for %s, which is not a command", name)
		}
	}
}
