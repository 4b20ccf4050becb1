package family

import (
	"github.com/keyhive/keyhive/command"
)

// Arguments of rewritten commands. Shared: consumers must not modify argv.
var (
	argDEL       = []byte("DEL")
	argUNLINK    = []byte("UNLINK")
	argSET       = []byte("SET")
	argPXAT      = []byte("PXAT")
	argKEEPTTL   = []byte("KEEPTTL")
	argPEXPIREAT = []byte("PEXPIREAT")
	argPERSIST   = []byte("PERSIST")
)

// propagateDel makes the command propagate as the deletion of key: UNLINK
// when Redis would have freed it lazily (lazy is the lazyfree-lazy-* option
// that applies), DEL otherwise.
func propagateDel(x *command.Ctx, key []byte, lazy bool) {
	if lazy {
		x.PropagateAs(argUNLINK, key)
	} else {
		x.PropagateAs(argDEL, key)
	}
}
