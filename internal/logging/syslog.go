//go:build !windows

package logging

import (
	"fmt"
	"log/syslog"
)

var facilities = map[string]syslog.Priority{
	"user": syslog.LOG_USER, "local0": syslog.LOG_LOCAL0, "local1": syslog.LOG_LOCAL1,
	"local2": syslog.LOG_LOCAL2, "local3": syslog.LOG_LOCAL3, "local4": syslog.LOG_LOCAL4,
	"local5": syslog.LOG_LOCAL5, "local6": syslog.LOG_LOCAL6, "local7": syslog.LOG_LOCAL7,
}

// dialSyslog connects to the local syslog daemon (tests replace it).
var dialSyslog = func(p syslog.Priority, ident string) (*syslog.Writer, error) {
	return syslog.New(p, ident)
}

// openSyslog connects to the syslog daemon with facility and ident.
func openSyslog(facility, ident string) (syslogWriter, error) {
	fac, ok := facilities[facility]
	if !ok {
		return nil, fmt.Errorf("invalid syslog-facility %q", facility)
	}
	w, err := dialSyslog(fac|syslog.LOG_NOTICE, ident)
	if err != nil {
		return nil, errSyslogUnreachable{err}
	}
	return w, nil
}
