//go:build !difftest_redisonly

package difftest

import (
	"fmt"
	"os"
	"strconv"

	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/server"
)

const haveInProcess = true

// startInProcess is the only code that touches Keyhive's packages, so when
// they do not build, this is the one place the harness breaks. (Build with
// -tags difftest_redisonly to run the harness against two redis-servers.)
func startInProcess(directives []string) (addr string, stop func(), err error) {
	// A private --dir, as redis-server gets: SAVE and DEBUG RELOAD write
	// there, and start-up finds no stray dump.rdb.
	dir, err := os.MkdirTemp("", tempPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", nil, err
	}
	args := append([]string{"--port", "0", "--save", "", "--enable-debug-command", "yes", "--dir", dir}, directives...)
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	cfg, err := config.FromArgs(args)
	if err != nil {
		return "", nil, fmt.Errorf("config.FromArgs(%q): %w", args, err)
	}
	srv, err := server.New(cfg)
	if err != nil {
		return "", nil, fmt.Errorf("server.New: %w", err)
	}
	if err := srv.Start(); err != nil {
		return "", nil, fmt.Errorf("server.Start: %w", err)
	}
	return srv.Addr(), func() { srv.Close(); os.RemoveAll(dir) }, nil
}
