package daemon

import (
	"net"
	"os"

	"github.com/keyhive/keyhive/internal/logging"
)

// supervisor is who started the process and wants to hear that it is ready.
type supervisor struct {
	mode   string // "no", "upstart" or "systemd"
	socket string // systemd's notify socket
	lg     *logging.Logger
	notes  []note // what resolving the directive found, to log
}

type note struct {
	level logging.Level
	text  string
}

// supervise resolves the supervised directive as Redis does: a supervisor
// asked for but not found is a warning, and the process runs unsupervised.
// It logs nothing yet: a daemonizing process resolves it before detaching,
// and only the daemon logs what was found (start).
func supervise(mode string) *supervisor {
	s := &supervisor{mode: "no"}
	if mode == "auto" {
		switch {
		case os.Getenv("UPSTART_JOB") != "":
			s.note(logging.Verbose, "Upstart supervision detected.")
			mode = "upstart"
		case os.Getenv("NOTIFY_SOCKET") != "":
			s.note(logging.Verbose, "Systemd supervision detected.")
			mode = "systemd"
		}
	}
	switch mode {
	case "upstart":
		if os.Getenv("UPSTART_JOB") == "" {
			s.note(logging.Warning, "upstart supervision requested, but UPSTART_JOB not found!")
			break
		}
		s.note(logging.Notice, "supervised by upstart, will stop to signal readiness.")
		s.mode = mode
	case "systemd":
		s.socket = os.Getenv("NOTIFY_SOCKET")
		if s.socket == "" {
			s.note(logging.Warning, "systemd supervision requested or auto-detected, but NOTIFY_SOCKET environment variable is not set!")
			break
		}
		s.note(logging.Notice, "Supervised by systemd. Please make sure you set appropriate values for TimeoutStartSec and TimeoutStopSec in your service unit.")
		s.mode = mode
	}
	return s
}

func (s *supervisor) note(level logging.Level, text string) {
	s.notes = append(s.notes, note{level, text})
}

// start logs what supervise found; later messages go to lg too.
func (s *supervisor) start(lg *logging.Logger) {
	s.lg = lg
	for _, n := range s.notes {
		lg.Logf(n.level, "%s", n.text)
	}
}

// ready tells the supervisor the server accepts connections.
func (s *supervisor) ready() {
	switch s.mode {
	case "upstart":
		stopForUpstart()
		os.Unsetenv("UPSTART_JOB")
	case "systemd":
		s.notify("STATUS=Ready to accept connections\nREADY=1\n")
	}
}

// stopping tells systemd the server is shutting down.
func (s *supervisor) stopping() {
	if s.mode == "systemd" {
		s.notify("STOPPING=1\n")
	}
}

// resumed tells systemd the server runs on after an aborted shutdown.
func (s *supervisor) resumed() {
	if s.mode == "systemd" {
		s.notify("STATUS=Shutdown aborted\nREADY=1\n")
	}
}

// notify sends one datagram to systemd's socket (sd_notify's protocol; a
// leading @ names an abstract socket, which Go's unix addresses understand).
func (s *supervisor) notify(state string) {
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: s.socket, Net: "unixgram"})
	if err != nil {
		s.lg.Logf(logging.Warning, "Can't connect to systemd socket %s: %v", s.socket, err)
		return
	}
	defer c.Close()
	if _, err := c.Write([]byte(state)); err != nil {
		s.lg.Logf(logging.Warning, "Can't send notification to systemd: %v", err)
	}
}
