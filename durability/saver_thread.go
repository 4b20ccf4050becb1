package durability

import (
	"runtime"

	"github.com/keyhive/keyhive/config"
)

// saverThread gives a background save (BGSAVE, an AOF rewrite) a thread of
// its own while it runs, as Redis's forked child has a process, so that
// commands keep theirs: when the server runs on io-threads event loops and
// one thread for the rest (GOMAXPROCS as cmd/keyhive sets it), one more
// until release. A program that chose another GOMAXPROCS keeps it, and its
// save runs as any goroutine.
//
// On Linux the thread runs at the OS's idle priority (saver_thread_linux.go).
func saverThread(cfg *config.Config) (release func()) {
	n := max(cfg.IOThreads(), 1) + 1
	if runtime.GOMAXPROCS(0) != n {
		return func() {}
	}
	runtime.GOMAXPROCS(n + 1)
	restore := idleSaverThread()
	return func() {
		if restore != nil {
			restore()
		}
		runtime.GOMAXPROCS(n)
	}
}
