package daemon

import (
	"strings"
	"testing"
)

// TestDaemonizeRefused: daemonize yes says why it cannot run on Windows.
func TestDaemonizeRefused(t *testing.T) {
	if _, err := detachedAttr(); err == nil || !strings.Contains(err.Error(), "not supported on Windows") {
		t.Errorf("detachedAttr: %v", err)
	}
}
