// Command keyhive-crash is the crash harness of issue 21 (package
// internal/crashtest): it kills a server with SIGKILL under a mixed write load,
// restarts it and checks that no acknowledged write was lost.
//
//	go run ./cmd/keyhive-crash -server both -trials 10 -duration 3s
//
// It prints a table per server and mode and exits with status 1 when a mode
// breaks the promise: an acknowledged write lost under appendfsync always,
// a torn value, a partly applied MULTI or EVAL, a failed restart, or under
// everysec a loss window beyond crashtest.MaxEverysecWindow.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/keyhive/keyhive/internal/crashtest"
)

var (
	flagServer   = flag.String("server", "keyhive", "keyhive, redis or both")
	flagBin      = flag.String("bin", "", "keyhive binary (default: go build ./cmd/keyhive into the work directory)")
	flagRedisBin = flag.String("redis-bin", "redis-server", "redis-server binary")
	flagTrials   = flag.Int("trials", 10, "kills per mode")
	flagDuration = flag.Duration("duration", 3*time.Second, "longest load of a trial before the kill")
	flagConns    = flag.Int("conns", 12, "writing connections")
	flagSeed     = flag.Int64("seed", 0, "seed of the operations and kill moments (0: from the clock)")
	flagFsync    = flag.String("fsync", "always,everysec", "appendfsync values")
	flagIO       = flag.String("io-threads", "1,2", "io-threads values")
	flagKill     = flag.String("kill", strings.Join(crashtest.KillKinds, ","), "kill kinds: "+strings.Join(crashtest.KillKinds, ", "))
	flagBallast  = flag.Int("ballast", 32, "MB loaded before the rewrite and save modes' first trial, so that a rewrite takes a while")
	flagDir      = flag.String("dir", "", "work directory (default: a new temporary one, removed when all modes pass)")
)

func main() {
	flag.Parse()
	bad, err := run()
	if err != nil {
		fmt.Fprintln(os.Stderr, "keyhive-crash:", err)
		os.Exit(2)
	}
	if bad {
		os.Exit(1)
	}
}

func run() (bool, error) {
	seed := *flagSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	var ios []int
	for _, s := range strings.Split(*flagIO, ",") {
		n, err := strconv.Atoi(s)
		if err != nil {
			return false, fmt.Errorf("-io-threads: %v", err)
		}
		ios = append(ios, n)
	}
	modes := crashtest.Modes(strings.Split(*flagFsync, ","), ios, strings.Split(*flagKill, ","))
	dir := *flagDir
	if dir == "" {
		d, err := os.MkdirTemp("", "keyhive-crash-")
		if err != nil {
			return false, err
		}
		dir = d
	}
	fmt.Printf("seed %d, work directory %s\n", seed, dir)
	var servers [][2]string
	if *flagServer == "keyhive" || *flagServer == "both" {
		bin := *flagBin
		if bin == "" {
			b, err := crashtest.BuildKeyhive(dir)
			if err != nil {
				return false, err
			}
			bin = b
		}
		servers = append(servers, [2]string{"keyhive", bin})
	}
	if *flagServer == "redis" || *flagServer == "both" {
		bin, err := exec.LookPath(*flagRedisBin)
		if err != nil {
			return false, err
		}
		servers = append(servers, [2]string{"redis", bin})
	}
	if len(servers) == 0 {
		return false, fmt.Errorf("-server %q: keyhive, redis or both", *flagServer)
	}
	var all []*crashtest.Result
	for _, s := range servers {
		results, err := crashtest.Run(crashtest.Config{
			Server: s[0], Binary: s[1], Modes: modes, Trials: *flagTrials, Duration: *flagDuration,
			Conns: *flagConns, Seed: seed, Ballast: *flagBallast, Dir: dir, Log: os.Stderr, Modules: s[0] == "keyhive",
		})
		all = append(all, results...)
		if err != nil {
			crashtest.Report(os.Stdout, all)
			return true, err
		}
	}
	crashtest.Report(os.Stdout, all)
	bad := crashtest.AnyBad(all)
	if !bad && *flagDir == "" {
		os.RemoveAll(dir)
	}
	return bad, nil
}
