package logging

import "errors"

// openSyslog refuses: Windows has no syslog daemon (Go's log/syslog does
// not build there), so syslog-enabled yes is a configuration error rather
// than lines silently lost.
func openSyslog(string, string) (syslogWriter, error) {
	return nil, errors.New("syslog-enabled yes is not supported on Windows: log to a file (logfile) or standard output instead")
}
