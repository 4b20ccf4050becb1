package daemon

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
)

// childEnv tells the re-executed process it is the daemon, and which file
// descriptor reaches its parent.
const childEnv = "KEYHIVE_DAEMON_REPORT_FD"

// reporter is the daemon's end of the pipe to its waiting parent; nil in a
// process that was not detached, where report does nothing.
type reporter struct{ f *os.File }

// report tells the parent the daemon is up (nil) or why it could not start;
// only the first report counts.
func (r *reporter) report(err error) {
	if r == nil || r.f == nil {
		return
	}
	msg := "ok"
	if err != nil {
		msg = err.Error()
	}
	r.f.WriteString(msg)
	r.f.Close()
	r.f = nil
}

// detach returns in the daemon, the process this one starts detached; this
// one (the parent) exits once the daemon reports.
func detach() (*reporter, error) {
	if fd := os.Getenv(childEnv); fd != "" {
		os.Unsetenv(childEnv)
		n, err := strconv.Atoi(fd)
		if err != nil {
			return nil, fmt.Errorf("bad %s %q", childEnv, fd)
		}
		return &reporter{os.NewFile(uintptr(n), "report")}, nil
	}
	attr, err := detachedAttr()
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("daemonize: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("daemonize: %w", err)
	}
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Env = append(os.Environ(), childEnv+"=3") // ExtraFiles[0] is fd 3
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = attr
	// Standard files stay unset: the child gets /dev/null, as Redis's
	// daemonize redirects them (so a daemon with logfile "" logs nowhere).
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("daemonize: %w", err)
	}
	w.Close()
	msg, _ := io.ReadAll(r) // until the daemon reports or exits
	switch {
	case string(msg) == "ok":
		os.Exit(0)
	case len(msg) > 0:
		fmt.Fprintln(os.Stderr, string(msg))
	default:
		fmt.Fprintln(os.Stderr, "daemonize: the daemon exited during startup (see its logfile)")
	}
	os.Exit(1)
	return nil, nil
}
