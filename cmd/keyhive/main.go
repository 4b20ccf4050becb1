// Command keyhive runs a Keyhive server. It takes redis-server's command line:
//
//	keyhive [config-file] [--directive value ...]
//	keyhive --version
//	keyhive --ping [host:port | /unix/socket]   (exit 0 when the server answers)
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/internal/daemon"
	"github.com/keyhive/keyhive/internal/version"
	"github.com/keyhive/keyhive/server"
)

func main() {
	if len(os.Args) >= 2 {
		switch os.Args[1] {
		case "-v", "--version":
			fmt.Println(version.Line())
			return
		case "-h", "--help":
			fmt.Println("Usage: keyhive [/path/to/keyhive.conf] [--directive value ...]")
			fmt.Println("       keyhive -v or --version")
			fmt.Println("       keyhive --ping [host:port | /path/to/socket]")
			fmt.Println("Example: keyhive --port 6380 --save \"\"")
			return
		case "--ping":
			addr := "127.0.0.1:6379"
			if len(os.Args) > 2 {
				addr = os.Args[2]
			}
			if err := daemon.Ping(addr, 2*time.Second); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			fmt.Println("PONG")
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
	os.Exit(daemon.Run(cfg))
}
