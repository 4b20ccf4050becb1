package logging

import (
	"strings"
	"testing"
)

// TestSyslogRefused: syslog-enabled yes fails to start on Windows, saying why.
func TestSyslogRefused(t *testing.T) {
	_, err := New(Options{Syslog: true, SyslogIdent: "x", SyslogFacility: "user"})
	if err == nil || !strings.Contains(err.Error(), "not supported on Windows") {
		t.Errorf("New with syslog on Windows: %v", err)
	}
}
