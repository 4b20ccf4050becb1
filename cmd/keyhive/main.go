// Command keyhive runs a Keyhive server. It takes redis-server's command line:
//
//	keyhive [config-file] [--directive value ...]
package main

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"

	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/internal/version"
	"github.com/keyhive/keyhive/server"
)

func main() {
	if len(os.Args) == 2 {
		switch os.Args[1] {
		case "-v", "--version":
			fmt.Printf("Keyhive server (reports redis_version %s) go=%s\n", version.Redis, runtime.Version())
			return
		case "-h", "--help":
			fmt.Println("Usage: keyhive [/path/to/redis.conf] [--directive value ...]")
			fmt.Println("Example: keyhive --port 6380 --save \"\"")
			return
		}
	}
	cfg, err := config.FromArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Commands execute on io-threads event loops (default 1, like Redis's
	// main thread), each a goroutine that keeps its thread busy, and one
	// more thread runs everything else (timers, the AOF, blocked clients):
	// on a shared machine the clients keep the other cores, and idle cores
	// would only spin looking for work. GOMAXPROCS overrides.
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(server.Threads(cfg))
	}
	// The Go heap holds only large collections (pointer-free slabs) and
	// buffers, and commands do not allocate, so collections are cheap: a heap
	// target of 1.25x live instead of 2x cut a 1M-field hash from 118 to 79
	// bytes per field (RSS). GOGC overrides.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(25)
	}
	srv, err := server.New(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := srv.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "Keyhive %s ready to accept connections on %s\n", version.Redis, srv.Addr())
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	select {
	case sig := <-signals:
		fmt.Fprintf(os.Stderr, "Received %v, shutting down\n", sig)
		if err := srv.Shutdown(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	case <-srv.Done():
	}
}
