//go:build !difftest_redisonly

package difftest

import (
	"fmt"

	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/server"
)

const haveInProcess = true

// startInProcess is the only code that touches Keyhive's packages, so when
// they do not build, this is the one place the harness breaks. (Build with
// -tags difftest_redisonly to run the harness against two redis-servers.)
func startInProcess(directives []string) (addr string, stop func(), err error) {
	args := append([]string{"--port", "0", "--save", "", "--enable-debug-command", "yes"}, directives...)
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
	return srv.Addr(), func() { srv.Close() }, nil
}
