package crashtest

import (
	"os"
	"syscall"
)

// ownGroup starts the server as any process: Keyhive forks no children.
func ownGroup() *syscall.SysProcAttr { return nil }

// killServer terminates the server at once (TerminateProcess), as SIGKILL.
func killServer(p *os.Process) { p.Kill() }
