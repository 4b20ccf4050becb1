package command

import (
	"bytes"
	"strconv"

	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/strnum"
)

// Error texts clients match on, as Redis writes them.
const (
	ErrSyntax      = "ERR syntax error"
	ErrNotInt      = "ERR value is not an integer or out of range"
	ErrNotFloat    = "ERR value is not a valid float"
	ErrWrongType   = "WRONGTYPE Operation against a key holding the wrong kind of value"
	ErrNoSuchKey   = "ERR no such key"
	ErrOverflow    = "ERR increment or decrement would overflow"
	ErrDBIndex     = "ERR DB index is out of range"
	ErrSameObject  = "ERR source and destination objects are the same"
	ErrStringLimit = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
)

// ErrArity is the error of a command given a wrong number of arguments.
func ErrArity(name string) string {
	return "ERR wrong number of arguments for '" + name + "' command"
}

// IntArgOrReply parses an integer argument, replying ErrNotInt when it is
// not one.
func (x *Ctx) IntArgOrReply(arg []byte) (int64, bool) {
	v, ok := strnum.ParseInt(arg)
	if !ok {
		x.W.Error(ErrNotInt)
	}
	return v, ok
}

// IntArg formats v as a command argument. It allocates: call it only when
// propagating.
func IntArg(v int64) []byte { return strconv.AppendInt(nil, v, 10) }

// CloneArgs copies args and their bytes, for a command that keeps them past
// its return (a blocked command).
func CloneArgs(args [][]byte) [][]byte {
	c := make([][]byte, len(args))
	for i, a := range args {
		c[i] = bytes.Clone(a)
	}
	return c
}

// WriteHelp replies to a container command's HELP subcommand: its title,
// lines, and HELP's own line.
func (x *Ctx) WriteHelp(name string, lines []string) {
	x.W.Array(len(lines) + 3) // the title, the lines, HELP and its text
	x.W.Simple(name + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
	for _, l := range lines {
		x.W.Simple(l)
	}
	x.W.Simple("HELP")
	x.W.Simple("    Print this help.")
}

// FlushMode checks the optional ASYNC|SYNC at x.Args[at] of FLUSHDB,
// FLUSHALL, SCRIPT FLUSH and FUNCTION FLUSH, replying errText when it is
// wrong.
func (x *Ctx) FlushMode(at int, errText string) bool {
	if len(x.Args) > at+1 || (len(x.Args) == at+1 && !cstr.ArgIs(x.Args[at], "async") && !cstr.ArgIs(x.Args[at], "sync")) {
		x.W.Error(errText)
		return false
	}
	return true
}
