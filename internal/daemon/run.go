package daemon

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/internal/logging"
	"github.com/keyhive/keyhive/internal/version"
	"github.com/keyhive/keyhive/server"
)

// defaultPidFile is where a daemon without a pidfile directive writes its
// pid, Redis's path.
const defaultPidFile = "/var/run/redis.pid"

// Run runs a server from cfg until it is shut down and returns the process's
// exit code.
func Run(cfg *config.Config) int {
	level, err := logging.ParseLevel(cfg.LogLevel())
	if err == nil {
		var lg *logging.Logger
		lg, err = logging.New(logging.Options{
			File: cfg.LogFile(), Level: level, Syslog: cfg.SyslogEnabled(),
			SyslogIdent: cfg.SyslogIdent(), SyslogFacility: cfg.SyslogFacility(),
		})
		if err == nil {
			defer lg.Close()
			return run(cfg, lg)
		}
	}
	fmt.Fprintln(os.Stderr, err)
	return 1
}

func run(cfg *config.Config, lg *logging.Logger) int {
	cfg.OnChange("loglevel", func() {
		if level, err := logging.ParseLevel(cfg.LogLevel()); err == nil {
			lg.SetLevel(level)
		}
	})
	if _, _, replica := cfg.ReplicaOf(); replica {
		lg.SetRole('S') // as Redis, which reads replicaof before its first line
	}
	sup := supervise(cfg.Supervised())
	background := cfg.Daemonize() && sup.mode == "no"
	var parent *reporter
	if background {
		var err error
		if parent, err = detach(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	lg.Logf(logging.Notice, "oO0OoO0OoO0Oo Keyhive is starting oO0OoO0OoO0Oo")
	lg.Logf(logging.Notice, "Keyhive version=%s, redis_version=%s, commit=%s, modified=%d, pid=%d, just started",
		version.Keyhive, version.Redis, version.GitSHA1(), boolInt(version.GitDirty()), os.Getpid())
	lg.Logf(logging.Notice, "Configuration loaded")
	if !cfg.Persistent() {
		lg.Logf(logging.Notice, "No config file, dir, save points or appendonly yes given: the data set is kept in memory only, nothing is loaded from or saved to %s unless a client asks", cfg.Dir())
	}
	sup.start(lg)
	pidFile := cfg.PidFile()
	if pidFile == "" && background {
		pidFile = defaultPidFile
	}
	if pidFile != "" {
		// As Redis: a pid file that cannot be written is a warning.
		if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
			lg.Logf(logging.Warning, "Failed to write PID file: %v", err)
		}
	}
	// fail logs why the server cannot run and tells a waiting parent.
	fail := func(err error) int {
		// A file that cannot be loaded says why in the lines Redis logs.
		var lines interface{ LogLines() []string }
		if errors.As(err, &lines) {
			for _, l := range lines.LogLines() {
				lg.Logf(logging.Warning, "%s", l)
			}
		} else {
			lg.Logf(logging.Warning, "%v", err)
		}
		if pidFile != "" {
			os.Remove(pidFile)
		}
		parent.report(err)
		return 1
	}

	// Caught from here on, a signal during loading shuts down once loaded.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	signal.Ignore(syscall.SIGHUP) // as Redis: a closed terminal does not stop it
	srv, err := server.New(cfg, server.WithLogger(lg.Std(logging.Notice)), server.WithSupervised(sup.mode))
	if err != nil {
		return fail(err)
	}
	if err := srv.Start(); err != nil {
		return fail(err)
	}
	// Listening on a unix socket only shows port 0, as in Redis.
	port := "0"
	if _, p, err := net.SplitHostPort(srv.Addr()); err == nil {
		port = p
	}
	mode := "standalone"
	if cfg.ClusterEnabled() {
		mode = "cluster"
	}
	if showBanner(cfg) {
		// Tools that start servers wait for "PID: <pid>" in the log, as
		// Redis's logo shows it.
		lg.Logf(logging.Notice, "Keyhive %s (Redis %s compatible), 64 bit, %s mode, Port: %s, PID: %d",
			version.Keyhive, version.Redis, mode, port, os.Getpid())
	} else {
		lg.Logf(logging.Notice, "Running mode=%s, port=%s.", mode, port)
	}
	lg.Logf(logging.Notice, "Server initialized")
	lg.Logf(logging.Notice, "Ready to accept connections tcp")
	parent.report(nil)
	sup.ready()

	var shutdown chan error // a signal's shutdown under way, nil when none
	for stopped := false; !stopped; {
		select {
		case sig := <-signals:
			if shutdown != nil {
				// A second Ctrl-C while the first waits (for replicas, a
				// save) means now, as in Redis: not a clean shutdown.
				if sig == syscall.SIGINT {
					lg.Logf(logging.Warning, "You insist... exiting now.")
					if pidFile != "" {
						os.Remove(pidFile)
					}
					return 1
				}
				continue
			}
			name, flags := "SIGTERM", cfg.ShutdownOnSigterm()
			if sig == syscall.SIGINT {
				name, flags = "SIGINT", cfg.ShutdownOnSigint()
			}
			lg.Logf(logging.Warning, "Received %s scheduling shutdown...", name)
			sup.stopping()
			result := make(chan error, 1)
			shutdown = result
			go func() { result <- srv.Shutdown(flags) }()
			continue
		case err := <-shutdown:
			shutdown = nil
			// SHUTDOWN ABORT, or a shutdown that would lose data (the
			// server logged why): go on serving, as Redis.
			if err != nil {
				sup.resumed()
				continue
			}
		case <-srv.Done():
			sup.stopping()
			srv.Close() // waits for SHUTDOWN's close to finish
		}
		stopped = true
	}
	if pidFile != "" {
		lg.Logf(logging.Notice, "Removing the pid file.")
		os.Remove(pidFile)
	}
	lg.Logf(logging.Warning, "Keyhive is now ready to exit, bye bye...")
	return 0
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// showBanner reports whether the start-up banner replaces the one-line
// "Running mode" notice: always-show-logo, or a log on a terminal, as Redis
// shows its logo.
func showBanner(cfg *config.Config) bool {
	if cfg.AlwaysShowLogo() {
		return true
	}
	if cfg.SyslogEnabled() || cfg.LogFile() != "" {
		return false
	}
	st, err := os.Stdout.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
