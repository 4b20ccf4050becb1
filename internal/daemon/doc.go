// Package daemon is the process around a Keyhive server, as redis-server's
// main is: Run starts the server from a config and follows the process
// directives, daemonize, pidfile, logfile, loglevel, syslog-* and supervised,
// until a signal or SHUTDOWN stops it. cmd/keyhive calls Run; a program that
// embeds the server library uses package server directly and none of this.
//
// daemonize: a Go program cannot fork (the runtime's threads do not survive
// it), so Detach starts the same executable again with the same arguments,
// in a session of its own (setsid) and with standard input and output on
// /dev/null, and the parent waits until the child reports, over a pipe, that
// it accepts connections or why it could not start: the parent exits 0 once
// the daemon is up, or 1 with the child's error, where redis-server's parent
// exits at once after its fork. As in Redis, supervised (when a supervisor is
// found) turns daemonize off, and a daemon without a pidfile directive writes
// /var/run/redis.pid.
//
// supervised: systemd gets READY=1 and a STATUS= line on $NOTIFY_SOCKET once
// the server accepts connections and STOPPING=1 when it begins shutting down;
// upstart gets SIGSTOP raised once the server accepts connections ("expect
// stop"), where Redis raises it before loading its data. auto picks upstart
// when UPSTART_JOB is set, else systemd when NOTIFY_SOCKET is.
//
// Ping is the health probe of keyhive --ping (the container's HEALTHCHECK).
package daemon
