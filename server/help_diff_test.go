package server_test

import (
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestHelpTexts: every container command's HELP is Redis 7.4's, word for
// word (7.2 reworded "Prints this help." and FUNCTION's, and CLIENT's lists
// every subcommand). DEBUG and HOTKEYS are left out: Keyhive's DEBUG lists the
// subcommands it has (server_diff_test), and HOTKEYS is Redis 8.6's.
func TestHelpTexts(t *testing.T) {
	p := difftest.StartIsolated74(t, "--enable-module-command", "yes")
	for _, proto := range []int{2, 3} {
		p.Proto(proto)
		for _, cmd := range []string{"ACL", "CLIENT", "CONFIG", "COMMAND", "MEMORY", "OBJECT", "PUBSUB",
			"SCRIPT", "FUNCTION", "SLOWLOG", "XGROUP", "XINFO", "MODULE", "LATENCY"} {
			p.Do(cmd, "HELP")
			p.Do(cmd, "help")
			p.Do(cmd, "HELP", "extra")
		}
	}
}
